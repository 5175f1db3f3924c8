"""Why a call is not recorded as a plan: the exceptions the recorders (record.py, list_record.py, cuda_params.py,
autograd_record.py) raise, in a module of their own so that each imports them without importing the others."""


class NotRecordable(Exception):
    """The call did something a plan cannot express; the reason says what."""


class NotYet(NotRecordable):
    """This call cannot be a plan, but a later call of its signature may: nothing is stored (a training call recorded
    under saved-tensor hooks, whose unpacked tensors are not the call's)."""
