"""gems' simulated accelerator: an out-of-tree (``PrivateUse1``) PyTorch device named ``sim`` whose
memory is host memory, for testing the vendor path of out-of-tree devices on a machine with no GPU.

    from gems import simdevice
    simdevice.load()                       # builds sim_device.cpp once (cached), registers "sim"
    x = torch.ones(4, device="sim")        # allocation, views and copies work
    torch.sin(x)                           # NotImplementedError naming aten::sin.out and 'sim'

``load("acme")`` gives the device another name, so that a scaffolded vendor can rehearse its own
device type ("acme") before its hardware exists. One name per process: PrivateUse1 is renamed once.

The C++ extension (sim_device.cpp, beside this file) registers an allocator, a device guard, the
PrivateUse1 hooks and the kernels tensors need to exist and move; everything else is refused.
Two things take an explicit CPU route over the same bytes (no copy), counted in :func:`cpu_route_counts`:
filling freshly made tensors (random numbers, ``fill_``, ``zero_``: data creation) and printing. Once
``gems.enable()`` registers its kernels for the device, gems serves the random operators (and what else it
registers) above the route; the route then serves only the calls gems does not: gems disabled, its
``aten_only()`` blocks (test inputs drawn on the device), and a counted ``gems.Fallback``.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import threading
import types
from collections import Counter
from pathlib import Path

import torch

DEVICE = "sim"  # the default name
SOURCE = Path(__file__).with_name("sim_device.cpp")

# In-place data-creation overloads served on CPU aliases of the device's memory: what
# torch.zeros/full/rand/randn/randint/bernoulli/empty(...).fill_ need on the device. While gems is enabled on the
# device, its own kernels are registered over these overloads (fill_, zero_ and the random ones): the route then
# serves them only where ATen runs (gems not enabled, ATen's calls inside a gems implementation, a gems
# fallback), and its count says so.
CREATION_ROUTE = (
    "fill_.Scalar", "fill_.Tensor", "zero_", "normal_", "uniform_", "random_", "random_.from", "random_.to",
    "bernoulli_.float", "exponential_",
)

_lock = threading.Lock()
_extension = None
_name = None  # the device's name in this process, once loaded
_library = None
_route_counts: Counter = Counter()


class SimDeviceBuildError(RuntimeError):
    """The C++ extension did not build; the message names the build log and the cause."""


def build_dir() -> Path:
    """The build cache: GEMS_SIMDEVICE_BUILD_DIR, else under TORCH_EXTENSIONS_DIR or ~/.cache/torch_extensions.
    One directory per torch version, so an upgrade rebuilds instead of loading a stale binary, and per Python
    environment: the compile command names the environment's torch headers, so two venvs sharing a directory
    (CI's two) rebuilt it (about a minute on 2 cores) at every switch."""
    explicit = os.environ.get("GEMS_SIMDEVICE_BUILD_DIR")
    if explicit:
        return Path(explicit)
    root = os.environ.get("TORCH_EXTENSIONS_DIR") or Path.home() / ".cache" / "torch_extensions"
    version = re.sub(r"[^0-9A-Za-z]+", "_", torch.__version__)
    environment = hashlib.sha1(sys.prefix.encode()).hexdigest()[:8]
    return Path(root) / f"gems_simdevice_torch{version}_{environment}"


def _build():
    from torch.utils import cpp_extension

    directory = build_dir()
    directory.mkdir(parents=True, exist_ok=True)
    log = directory / "build.log"
    # ninja rebuilds when the compile command changes, and the command names the source: compiling a
    # copy at a fixed place lets every checkout (CI's scratch copies too) share one build.
    staged = directory / SOURCE.name
    text = SOURCE.read_text()
    if not staged.is_file() or staged.read_text() != text:
        partial = staged.with_name(f"{staged.name}.{os.getpid()}.tmp")
        partial.write_text(text)
        partial.replace(staged)
    try:
        module = cpp_extension.load(name="gems_simdevice", sources=[str(staged)], build_directory=str(directory),
                                    extra_cflags=["-O1"], verbose=False)
    except Exception as exc:  # a compiler error, a missing compiler or ninja: all land in the log
        text = f"{type(exc).__name__}: {exc}\n"
        log.write_text(text)
        lines = text.splitlines()
        cause = next((line.strip() for line in lines if "error:" in line), lines[0][:300])
        raise SimDeviceBuildError(
            f"the simulated device's C++ extension ({SOURCE}) failed to build; build log: {log}; cause: {cause}"
        ) from exc
    return module


def _device_module(name: str):
    """``torch.<name>``: what torch and gems ask of a device module."""
    module = types.ModuleType(f"torch.{name}")
    module.is_available = lambda: True
    module.device_count = lambda: 1
    module.current_device = lambda: 0
    module.set_device = lambda index: None if int(index) == 0 else _bad_index(index)
    module.synchronize = lambda device=None: None  # every kernel has finished when its launch returns
    module.get_device_name = lambda device=None: "gems simulated device (host memory, Triton interpreter)"
    module.manual_seed_all = lambda seed: None  # random numbers come from the CPU generator
    module.manual_seed = lambda seed: None
    module._is_in_bad_fork = lambda: False
    module.is_initialized = lambda: True

    class device:  # noqa: N801 (torch's own device modules spell it so)
        def __init__(self, index):
            self.index = index

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    module.device = device
    return module


def _bad_index(index):
    raise RuntimeError(f"the simulated device has one device, index 0; got {index}")


def _route(overload: str):
    name, _, variant = overload.partition(".")
    op = getattr(getattr(torch.ops.aten, name), variant or "default")

    def kernel(self, *args, **kwargs):
        _route_counts[overload] += 1
        op(_extension.cpu_alias(self), *[_extension.cpu_alias(a) if isinstance(a, torch.Tensor) else a
                                         for a in args], **kwargs)
        return self

    return kernel


def _print_on_cpu():
    """Printing runs a dozen operators (ne, masked_select, max, ceil...): format a CPU alias instead.
    The device suffix is decided before this function, so it still says device='sim:0'."""
    from torch import _tensor_str

    original = _tensor_str._tensor_str

    def tensor_str(self, indent):
        if self.device.type == _name:
            _route_counts["print"] += 1
            self = _extension.cpu_alias(self.detach())
        return original(self, indent)

    _tensor_str._tensor_str = tensor_str


def load(name: str = DEVICE):
    """Build (first time) or load the extension and register the device as ``name``; idempotent."""
    global _extension, _library, _name
    with _lock:
        if _extension is not None:
            if name != _name:
                raise RuntimeError(f"the simulated device is already registered as {_name!r} in this process; "
                                   f"it cannot also be {name!r}")
            return _extension
        taken = torch._C._get_privateuse1_backend_name()
        if taken != "privateuseone":
            raise RuntimeError(f"PrivateUse1 is already taken by device {taken!r}; the simulated device needs it")
        extension = _build()
        torch.utils.rename_privateuse1_backend(name)
        torch._register_device_module(name, _device_module(name))
        torch.utils.generate_methods_for_privateuse1_backend(for_storage=True)
        _extension, _name = extension, name
        _library = torch.library.Library("aten", "IMPL")
        for overload in CREATION_ROUTE:
            _library.impl(overload, _route(overload), "PrivateUse1")
        _print_on_cpu()
        return extension


def cpu_route_counts() -> dict[str, int]:
    """Calls that took the explicit CPU route (data creation, printing) since the last reset."""
    return dict(_route_counts)


def reset_route_counts() -> None:
    _route_counts.clear()

