"""``--dist loadgroup`` for pytest 9: the hook that names each worker's tests by their ``xdist_group``.

xdist (3.8) tells the controller a test's group by appending ``@group`` to the node id it reports, and
does so by assigning ``item._nodeid``; pytest 9 keeps a node's id in ``item._id`` and ignores that
attribute, so every test reached the scheduler without its group and ``loadgroup`` distributed like
``load``: a module-scoped fixture ran again in each worker that got one of its tests, and the cases of one
operator and dtype were spread over the workers. Both conftests import this hook; it is idempotent, and
it leaves alone an id that already carries its group (pytest 8, where xdist's own assignment works).

Groups are then scheduled as xdist's loadscope schedules scopes, which by default sends the largest first:
conformance's operator-dtype groups would run before tests/, and tests that expect gems unregistered would
find the registration a conformance case leaves behind. :func:`keep_collection_order` keeps the order
``load`` had (each worker runs tests/ before conformance/), called from both conftests' pytest_configure.
"""

from __future__ import annotations

import pytest


@pytest.hookimpl(trylast=True)  # after xdist's own attempt
def pytest_collection_modifyitems(config, items):
    if not getattr(config.option, "loadgroup", False):  # set on the workers of a --dist loadgroup run
        return
    for item in items:
        marks = item.iter_markers("xdist_group")
        names = {str(m.args[0] if m.args else m.kwargs.get("name", "default")) for m in marks}
        if not names:
            continue
        suffix = "@" + "_".join(sorted(names))
        if not item.nodeid.endswith(suffix):
            from _pytest.nodeid import NodeId  # pytest 9 (pytest 8 has no such module, and needs none)

            item._id = NodeId.parse(item.nodeid + suffix)


def keep_collection_order(config) -> None:
    """Schedule groups in collection order, not largest first (see the module's docstring)."""
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False
