"""Fixtures shared by the tests/ modules."""

from __future__ import annotations

import fcntl
import json
import os

import pytest

from gems.testing.xdist_groups import (
    keep_collection_order,
    pytest_collection_modifyitems,  # noqa: F401  (--dist loadgroup)
)


def pytest_configure(config):
    keep_collection_order(config)


@pytest.fixture(scope="session")
def once_per_run(tmp_path_factory):
    """``once_per_run(name, make)``: ``make(directory)`` runs once per pytest run and its result (JSON) is
    returned to every caller, in any xdist worker: the first to ask runs it, the others wait and read it.

    For fixtures that build real runs in a subprocess (a conformance or a perf run) which their tests only
    read (they copy a run before editing it). xdist's groups keep such a module on one worker only while
    the group reaches the scheduler (gems/testing/xdist_groups.py restores that under pytest 9; without it
    a module-scoped fixture ran once in each worker that got one of its tests): this holds either way."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # this run's directory, shared by its workers

    def get(name: str, make):
        directory, result = root / name, root / f"{name}.json"
        with open(root / f"{name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if result.is_file():
                return json.loads(result.read_text())
            directory.mkdir(exist_ok=True)
            value = make(directory)
            result.write_text(json.dumps(value))
            return value

    return get


@pytest.fixture
def gems_enabled():
    """gems registered for the test (every declared operator), with no native plans and counts from zero; the
    registration before the test is restored after it."""
    import gems
    from gems import native
    from gems.runtime import registration

    previous = registration.snapshot()
    gems.enable()
    native.invalidate()
    gems.reset_counts()
    yield
    registration.apply(previous, gems.vendor().dispatch_key)
