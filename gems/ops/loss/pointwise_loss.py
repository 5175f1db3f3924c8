"""What the pointwise losses (mse_loss.py, soft_margin_loss.py) share: an elementwise term of
(input, target) followed by ATen's reduction (0 none, 1 mean, 2 sum).

- none: a PointwiseOp of the term (broadcasting, strides, type promotion as ATen's TensorIterator).
- mean / sum of same-shape contiguous inputs of one dtype: one fused pass; the elements are split
  between programs by the vendor's "reduction" rules (a flat reduction), each program writes its
  partial sum and a one-program launch adds them (and divides by the count for mean). The term is
  summed in fp32 (fp64 for fp64) without rounding it to the input dtype first.
- mean / sum of anything else: the none result, then the same reduction over it (term of LOSS_NONE).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import FLOATS
from gems.ops.pointwise.shared import div_rn
from gems.ops.reduction.planning import TL_DTYPES, Layout, accumulation_dtype, config, reduce_sum
from gems.runtime.launch import Launcher, cdiv, next_power_of_2
from gems.runtime.registration import Fallback

# The LOSS constexpr of the fused kernel: which term it sums.
LOSS_NONE, LOSS_SQUARED_ERROR, LOSS_SOFT_MARGIN = 0, 1, 2

# --------------------------------------------------------------------------- kernels


@triton.jit
def squared_error(x, y):
    d = x - y
    return d * d


@triton.jit
def soft_margin(x, y):
    # ATen's formula, log1p(exp(-x y)): +inf where exp overflows, as there.
    return libdevice.log1p(libdevice.exp(-x * y))


@triton.jit
def _term(x, y, LOSS: tl.constexpr):
    if LOSS == 1:
        return squared_error(x, y)
    elif LOSS == 2:
        return soft_margin(x, y)
    else:
        return x


@triton.jit
def _loss_sum_kernel(
    x_ptr, y_ptr, partial_ptr, n_elements, per_program,
    ACC: tl.constexpr, LOSS: tl.constexpr, INT64: tl.constexpr, BLOCK: tl.constexpr,
):
    """partial[pid] = sum of the LOSS term over elements pid*per_program ... (y unused for LOSS_NONE)."""
    pid = tl.program_id(0)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        pid = pid.to(tl.int64)
    start = pid * per_program
    end = tl.minimum(start + per_program, n_elements)
    acc = tl.full([BLOCK], 0, ACC)
    for i in range(start, end, BLOCK):
        offs = i + tl.arange(0, BLOCK)
        mask = offs < end
        x = tl.load(x_ptr + offs, mask=mask, other=0).to(ACC)
        if LOSS == 0:
            y = x
        else:
            y = tl.load(y_ptr + offs, mask=mask, other=0).to(ACC)
        acc += tl.where(mask, _term(x, y, LOSS), 0.0)
    tl.store(partial_ptr + pid, reduce_sum(acc, 0))


@triton.jit
def _loss_finish_kernel(partial_ptr, out_ptr, n_partials, n_elements, MEAN: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    total = reduce_sum(tl.load(partial_ptr + offs, mask=offs < n_partials, other=0), 0)
    if MEAN:
        total = div_rn(total, (total * 0 + n_elements).to(total.dtype))  # 0 / 0: NaN for an empty input
    tl.store(out_ptr, total.to(out_ptr.dtype.element_ty))


_sum_launcher = Launcher(_loss_sum_kernel)
_finish_launcher = Launcher(_loss_finish_kernel)

# --------------------------------------------------------------------------- the loss


def _reduce(x, y, loss, mean, out_dtype):
    """The mean or sum of the LOSS term over contiguous ``x`` (and ``y``), as a 0-d tensor."""
    n_elements = x.numel()
    acc_dtype = accumulation_dtype(out_dtype)
    cfg = config("reduction", Layout(False, 1, n_elements, 1, ((0, 1, 0),)))
    block = cfg["BLOCK_K"] * cfg["BLOCK_M"]
    per_program = cdiv(cdiv(max(n_elements, 1), cfg.get("SPLITS", 1)), block) * block
    programs = cdiv(max(n_elements, 1), per_program)
    partial = torch.empty(programs, dtype=acc_dtype, device=x.device)
    out = torch.empty((), dtype=out_dtype, device=x.device)
    _sum_launcher((programs,), x, y, partial, n_elements, per_program, TL_DTYPES[acc_dtype], loss,
                  n_elements > 2**31 - 2**21, block, num_warps=cfg["num_warps"])
    _finish_launcher((1,), partial, out, programs, n_elements, mean, next_power_of_2(programs), num_warps=4)
    return out


class PointwiseLoss:
    """``loss(input, target, reduction)`` for one elementwise term (a LOSS_* code and its Triton body)."""

    def __init__(self, name, body, code):
        self.name, self.code = name, code
        self.none = PointwiseOp(name, body, operands=2, dtypes=FLOATS)

    def __call__(self, x, y, reduction):
        if reduction == 0:
            return self.none(x, y)
        if reduction not in (1, 2):
            raise Fallback(f"{self.name} with reduction {reduction} is left to ATen")
        if (x.shape == y.shape and x.dtype == y.dtype and x.dtype in FLOATS and x.device == y.device
                and x.is_contiguous() and y.is_contiguous()):
            return _reduce(x, y, self.code, reduction == 1, x.dtype)
        loss = self.none(x, y).contiguous()
        return _reduce(loss, loss, LOSS_NONE, reduction == 1, loss.dtype)
