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
Within the grouped tests, a plugin may set ``config.gems_group_seconds`` ({group: expected seconds}, the
conformance suite does, gems/report/durations.py): those groups are then collected longest first, after every
other test, so that no long group starts last and runs on alone.
"""

from __future__ import annotations

import pytest


@pytest.hookimpl(trylast=True)  # after xdist's own attempt
def pytest_collection_modifyitems(config, items):
    if not getattr(config.option, "loadgroup", False):  # set on the workers of a --dist loadgroup run
        return
    for item in items:
        group = _group(item)
        if group is None:
            continue
        suffix = "@" + group
        if not item.nodeid.endswith(suffix):
            from _pytest.nodeid import NodeId  # pytest 9 (pytest 8 has no such module, and needs none)

            item._id = NodeId.parse(item.nodeid + suffix)
    seconds = getattr(config, "gems_group_seconds", None)
    if seconds:
        items[:] = longest_groups_first(items, seconds)


def _group(item) -> str | None:
    """The test's xdist group, named as xdist names it (its marks' names, sorted and joined); None without."""
    names = {str(m.args[0] if m.args else m.kwargs.get("name", "default")) for m in item.iter_markers("xdist_group")}
    return "_".join(sorted(names)) or None


def longest_groups_first(items: list, seconds: dict[str, float]) -> list:
    """The tests of groups that ``seconds`` names, longest group first and each group's tests in their order,
    after all other tests (tests/, which must run before any conformance case), which keep theirs."""
    first_seen: dict[str, int] = {}
    keyed = []
    for index, item in enumerate(items):
        group = _group(item)
        if group not in seconds:
            keyed.append(((0, 0.0, index), item))
        else:
            first_seen.setdefault(group, index)
            keyed.append(((1, -seconds[group], first_seen[group]), item))
    return [item for _, item in sorted(keyed, key=lambda pair: pair[0])]


def keep_collection_order(config) -> None:
    """Schedule groups in collection order, not largest first (see the module's docstring)."""
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False
