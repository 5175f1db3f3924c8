"""The conformance suite under pytest-xdist on a GPU: a worker whose device is lost starts afresh.

A sticky device error (a device-side assert, an illegal address: ATen's own asserts on bad inputs, or a
kernel's) leaves the process's CUDA context unusable, and every later case of that worker would fail without
running (a whole run on four H200s lost 19,584 of 41,084 cases to one such assert). After each case a worker
synchronizes the device; when that raises, the worker ends itself as its next case starts, and pytest-xdist
starts a fresh worker and sends it the cases left. The case that was next is reported once as crashed (so the
run fails, as it should: something asserted) and then runs in the fresh worker.
"""

from __future__ import annotations

import os
import sys

import pytest
import torch

EXIT_STATUS = 75  # a worker that ends itself for a lost device

_lost: tuple[str, str] | None = None  # (the case after which the device was lost, the error)


def device_lost(device: str) -> str:
    """The error a synchronization of ``device`` raises ('' where it works or there is nothing to synchronize)."""
    module = getattr(torch, device, None)
    if device == "cpu" or not hasattr(module, "synchronize") or not module.is_available():
        return ""
    try:
        module.synchronize()
    except Exception as exc:  # noqa: BLE001  (whatever the device raises, the context is gone)
        return f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
    return ""


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    global _lost
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker and _lost is not None:
        case, error = _lost
        sys.stderr.write(f"gems conformance: worker {worker} lost its device after {case} ({error}); it ends "
                         "here and pytest-xdist starts a fresh one\n")
        sys.stderr.flush()
        os._exit(EXIT_STATUS)
    yield
    run = getattr(item.config, "gems_conformance", None)
    if worker and run is not None:
        error = device_lost(run.backend.device)
        if error:
            _lost = item.nodeid, error
