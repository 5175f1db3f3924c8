"""Launcher's direct C launch depends on triton's CudaLauncher internals (issue #17): it is taken only
for the layout it was written for (triton 3.6), and any other launcher is called as Triton calls it.
Checked without a GPU, against the installed triton's own CudaLauncher class and two stand-ins."""

import types

import pytest
from triton.backends.nvidia.driver import CudaLauncher

from gems.runtime import launch

GRID, STREAM, FUNCTION, METADATA, ARGS = (3, 2, 1), 77, "cu-function", "packed", (1234, 5)


def _compiled(run):
    return types.SimpleNamespace(run=run, function=FUNCTION, packed_metadata=METADATA)


def _launcher_object(cls, calls):
    """An instance of ``cls`` as a compiled kernel holds it, whose C ``launch`` records its arguments."""
    run = object.__new__(cls)
    run.launch = lambda *a: calls.append(("c", a))
    run.global_scratch_size = run.profile_scratch_size = 0
    run.global_scratch_align = run.profile_scratch_align = 1
    run.launch_cooperative_grid, run.launch_pdl, run.num_ctas = False, False, 1
    return run


class _ForwardingLayout:  # triton 3.6's parameters
    def __call__(self, gridX, gridY, gridZ, stream, function, *args):
        self.calls.append(("python", (gridX, gridY, gridZ, stream, function, *args)))


class _NamedLayout:  # triton 3.9's parameters (its C launch takes another layout)
    def __call__(self, gridX, gridY, gridZ, stream, function, kernel_metadata, launch_metadata, launch_enter_hook,
                 launch_exit_hook, *args):
        self.calls.append(("python", (gridX, gridY, gridZ, stream, function, kernel_metadata, launch_metadata,
                                      launch_enter_hook, launch_exit_hook, *args)))


def _stand_in(layout):
    return type("CudaLauncher", (layout,), {})  # the guard also checks the class name


def _launch_through(run):
    fn, head = launch._direct_launch(_compiled(run))
    fn(*GRID, STREAM, *head, *ARGS)


@pytest.mark.parametrize("layout, direct", [(_ForwardingLayout, True), (_NamedLayout, False)])
def test_the_direct_c_launch_only_for_the_layout_it_knows(layout, direct):
    calls = []
    run = _launcher_object(_stand_in(layout), calls)
    run.calls = calls
    _launch_through(run)
    ((path, received),) = calls
    if direct:  # what 3.6's __call__ forwards: cooperative, pdl, no scratch, then Triton's own arguments
        assert path == "c" and received == (*GRID, STREAM, FUNCTION, False, False, None, None, METADATA, None, None,
                                            None, *ARGS)
    else:  # the fallback: the launcher called as triton.runtime.jit calls kernel.run
        assert path == "python" and received == (*GRID, STREAM, FUNCTION, METADATA, None, None, None, *ARGS)


def test_a_launcher_that_needs_scratch_memory_takes_the_fallback():
    calls = []
    run = _launcher_object(_stand_in(_ForwardingLayout), calls)
    run.calls, run.global_scratch_size = calls, 128
    _launch_through(run)
    assert calls[0][0] == "python"


def test_the_installed_triton_is_launched_as_its_own_launcher_would():
    """With this triton's CudaLauncher: where the direct launch is taken, it passes the C launch exactly
    what CudaLauncher.__call__ passes; elsewhere (triton 3.9) the fallback is taken."""
    direct_calls, own_calls = [], []
    run = _launcher_object(CudaLauncher, direct_calls)
    if not launch._forwards_to_c_launch(CudaLauncher):
        fn, head = launch._direct_launch(_compiled(run))  # (not called: its __call__ needs a GPU driver)
        assert fn is run and head == (FUNCTION, METADATA, None, None, None)
        return
    _launch_through(run)
    own = _launcher_object(CudaLauncher, own_calls)
    own(*GRID, STREAM, FUNCTION, METADATA, None, None, None, *ARGS)  # as triton.runtime.jit calls kernel.run
    assert direct_calls == own_calls and direct_calls[0][0] == "c"
