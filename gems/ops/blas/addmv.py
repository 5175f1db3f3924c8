"""addmv: beta * self + alpha * (mat @ vec) (``addmv``, ``addmv.out``, ``addmv_``) on the shared GEMV
kernel (gemm.py); self broadcast to the result, beta == 0 ignores it. An in-place self or an out= whose
elements share memory (an expanded view) is refused before any launch: which of its aliased results would
remain is undefined (ATen's CPU kernel writes them one after another)."""

from __future__ import annotations

import torch

from gems.dtypes import FLOATS
from gems.ops.blas.gemm import expand_bias, overlaps, prepare_out, product_perf, samples
from gems.ops.blas.gemv import gemv
from gems.ops.blas.mv import check_mv
from gems.runtime.registration import Fallback
from gems.spec import OpSpec

# Devices whose ATen addmv computes operands of different dtypes (CUDA's copies self into the result,
# converting it, before its gemv) where the CPU's raises RuntimeError: there gems leaves such a call to
# ATen's own kernel, which computes or refuses it as it does on that device. A per-device-type rule.
_MIXED_DTYPES_COMPUTED_ON = ("cuda",)
_MIXED_REASON = "addmv with operands of different dtypes: left to ATen, which computes it on this device type"


def _addmv(self, mat, vec, beta, alpha, out=None, inplace=False):
    if (mat.device.type in _MIXED_DTYPES_COMPUTED_ON  # unreached on the interpreter: CUDA
            and len({self.dtype, mat.dtype, vec.dtype}) > 1):
        raise Fallback(_MIXED_REASON)
    check_mv("addmv", mat, vec, self)
    shape = (mat.shape[0],)
    if inplace and tuple(self.shape) != shape:
        raise RuntimeError(f"The input tensor of shape {list(self.shape)} must have the shape {list(shape)} of "
                           f"the in-place result")
    bias = expand_bias(self.reshape(-1) if self.dim() else self, shape, "addmv")
    result = self if inplace else prepare_out(out, shape, mat)
    if torch._debug_has_internal_overlap(result) == 1:  # an expanded self or out (1: overlapping for sure)
        raise RuntimeError(f"addmv: the written-to tensor ({'self' if inplace else 'out'}, strides "
                           f"{tuple(result.stride())}) has elements that refer to a single memory location; "
                           f"clone() it before the operation")
    apart = overlaps(result, mat, vec) or (not inplace and out is not None and overlaps(result, self))
    target = torch.empty(shape, dtype=mat.dtype, device=mat.device) if apart else result
    gemv(mat, vec, target, bias, alpha, beta)
    return result if target is result else result.copy_(target)


def addmv(self, mat, vec, *, beta=1, alpha=1):
    return _addmv(self, mat, vec, beta, alpha)


def addmv_out(self, mat, vec, *, beta=1, alpha=1, out):
    return _addmv(self, mat, vec, beta, alpha, out)


def addmv_(self, mat, vec, *, beta=1, alpha=1):
    return _addmv(self, mat, vec, beta, alpha, inplace=True)


SPECS = [
    OpSpec(
        name="addmv", family="blas", impls={"addmv": addmv, "addmv.out": addmv_out, "addmv_": addmv_},
        call=torch.addmv, samples=samples("addmv_samples"), dtypes=FLOATS, tolerance="reduction",
        perf=product_perf("addmv", operand=1, shapes="mv"),
        # Raises on the CPU (gems raises the same), computed by ATen on CUDA (see _MIXED_DTYPES_COMPUTED_ON).
        deliberate_fallbacks={"error-dtype-mix": _MIXED_REASON},
    ),
]
