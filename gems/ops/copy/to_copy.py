"""to_copy: _to_copy (and _to_copy.out; the module is not named _to_copy.py, as modules starting with "_" are
private): a new tensor holding ``self`` converted to ``dtype``, what ``x.to(dtype)``,
``x.float()``, ``x.half()`` and ``x.to(memory_format=...)`` run.

The result's layout is ATen's: memory_format=preserve (the default) keeps a dense input's strides and gives a
non-dense one (a slice) dense strides in the same order; contiguous_format and channels_last(_3d) are asked of
torch.empty, which refuses a channels_last of the wrong rank as ATen does. A result on another device is a
transfer (gems raises Fallback; ATen's copy between devices runs it); ``non_blocking`` changes nothing on one
device. The out= form converts into out's dtype and keeps out's strides (an out of another shape is resized).
"""

import torch

from gems.dtypes import ALL
from gems.ops.copy.shared import (
    allocate_like,
    check_dtypes,
    check_no_transfer,
    copy_perf,
    copy_samples,
    launch_copy,
)
from gems.runtime.registration import Fallback
from gems.spec import OpSpec


def _to_copy(self, *, dtype=None, layout=None, device=None, pin_memory=None, non_blocking=False,
             memory_format=None):
    if layout not in (None, torch.strided) or self.layout is not torch.strided:
        raise Fallback(f"layout {layout or self.layout} is not strided")
    if pin_memory:
        raise Fallback("pin_memory=True (pinned host memory)")
    check_no_transfer(device, self.device)
    dtype = self.dtype if dtype is None else dtype
    check_dtypes(self)
    if dtype.is_complex:
        raise Fallback(f"dtype {dtype} not handled by gems copy kernels")
    return launch_copy(allocate_like(self, dtype, memory_format), self)


def _to_copy_out(self, *, non_blocking=False, memory_format=None, out):
    # ATen converts into out's dtype and keeps out's strides; an out of another shape is resized (contiguous).
    if out.device != self.device:  # unreached on the interpreter: one device
        raise Fallback(f"a copy from {self.device} to {out.device} is a transfer: the device's own copy serves it")
    check_dtypes(self, out)
    if out.shape != self.shape:
        out.resize_(self.shape)
    return launch_copy(out, self)


SPECS = [
    OpSpec(
        name="to_copy", family="creation", impls={"_to_copy": _to_copy, "_to_copy.out": _to_copy_out},
        call=torch.ops.aten._to_copy, samples=copy_samples("to_copy_samples"), dtypes=ALL,
        perf=copy_perf("to_copy_perf"),
    ),
]
