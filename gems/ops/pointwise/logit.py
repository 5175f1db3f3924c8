"""logit(eps=None): log(z / (1 - z)) with z = x clamped to [eps, 1 - eps] when eps is given (ATen's CUDA
formula: a correctly rounded division, libdevice's log; NaN x stays NaN; fp16/bf16 results take Triton's
approximate fp32 division, shared.div_for_storage, and libdevice's fast_logf, the hardware's lg2 times ln 2:
logf (tl.log compiles to it too), some 34 instructions an element against 2, made the 2-byte forms compute
bound, 0.92-0.97x ATen at 64M on an H200; fast_logf's error, near 2^-22 absolute or relative, is far below a
16-bit ulp). The hardware's lg2 flushes an fp32 subnormal to 0, giving -inf for a bf16 subnormal x (an H200
run): z below 2^-100 is scaled by 2^64 before the division and its log shifted back, for bf16 (1.32x ATen and 78%
of the copy bandwidth at 64M on an H200, against 1.58x and 94% unscaled) and for fp16 only under an eps that
small (fp16 values are fp32 normals). Without eps, 0 and 1 give -inf
and inf and values outside [0, 1] NaN. Integers and bool give the default float dtype; fp16/bf16 are
computed in fp32, and eps is converted to fp32 for them (to fp64 for fp64). Its backward is logit_backward.
"""

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

from gems.codegen.pointwise import PointwiseOp, Promotion
from gems.ops.pointwise.shared import div_for_storage
from gems.ops.pointwise.unary_shared import alias_calls, scalar_variants, unary_spec, value_samples

NO_EPS = -1.0  # ATen's kernels take a negative eps for "none"
DOMAIN = dict(low=0.0, high=1.0, int_low=0, int_high=1)  # random inputs where logit is finite
# An eps whose 1 - eps is exact in fp32 (the compute type of every dtype but fp64), so that the clamped ends
# agree with the float64 oracle's; 1 - 1e-6 rounds in fp32, 1% away in 1 - x.
EDGE_EPS = 2.0**-20
# Below TINY, z (and so z / (1 - z)) may be an fp32 subnormal, which lg2 flushes: such z are scaled by 2^64.
TINY = tl.constexpr(2.0**-100)
SCALE = tl.constexpr(2.0**64)
LOG_SCALE = tl.constexpr(64 * 0.6931471805599453)


@triton.jit
def _fast_logit(z, COMMON: tl.constexpr):
    return libdevice.fast_logf(div_for_storage(z, 1.0 - z, COMMON))  # see the module docstring


@triton.jit
def _fast_logit_scaled(z, COMMON: tl.constexpr):
    """_fast_logit where z may be an fp32 subnormal: such z (below TINY) scaled by 2^64, the log shifted back."""
    tiny = z < TINY  # negative z too: their ratio stays negative, a NaN log
    ratio = div_for_storage(tl.where(tiny, z * SCALE, z), 1.0 - z, COMMON)
    return libdevice.fast_logf(ratio) - tl.where(tiny, LOG_SCALE, 0.0)


@triton.jit
def _logit(x, eps, COMMON: tl.constexpr):
    clamped = tl.where(x < eps, eps, tl.where(x > 1.0 - eps, 1.0 - eps, x))
    z = tl.where(eps < 0, x, clamped)
    if COMMON == tl.bfloat16:
        r = _fast_logit_scaled(z, COMMON)
    elif COMMON == tl.float16:
        # fp16 values are fp32 normals (the smallest, 2^-24, too): only an eps below TINY makes a tiny z
        if (eps >= 0) & (eps < TINY):
            r = _fast_logit_scaled(z, COMMON)
        else:
            r = _fast_logit(z, COMMON)
    else:
        r = libdevice.log(div_for_storage(z, 1.0 - z, COMMON))
    return r


logit_op = PointwiseOp("logit", _logit, operands=1, scalars=("eps",), promotion=Promotion.INT_TO_FLOAT,
                       common_arg=True)


def logit(self, eps=None):
    return logit_op(self, NO_EPS if eps is None else eps)


def logit_(self, eps=None):
    return logit_op(self, NO_EPS if eps is None else eps, out=self, inplace=True)


def logit_out(self, eps=None, *, out):
    return logit_op(self, NO_EPS if eps is None else eps, out=out)


SPECS = [
    unary_spec(
        logit_op, torch.logit, domain=DOMAIN, grad_expects=("logit", "logit_backward"),
        impls={"logit": logit, "logit_": logit_, "logit.out": logit_out},
        more=(scalar_variants(("eps", {"eps": 0.1}), ("eps-zero", {"eps": 0.0}), ("eps-above-half", {"eps": 0.7}),
                              domain=dict(low=-0.5, high=1.5), grad=True),
              value_samples([0.0, 1.0, -0.0, -0.5, 1.5, 1e-6, ("ulp-below", 1.0), ("ulp-above", 0.0)]),
              ("eps", value_samples([0.0, 1.0, EDGE_EPS, EDGE_EPS / 2, ("ulp-below", 1.0), -2.0, 2.0],
                                    kwargs={"eps": EDGE_EPS})),
              # an fp32-subnormal eps: the clamped z is one (fp16 inputs included), which lg2 would flush
              ("eps-subnormal", value_samples([0.0, 2.0**-30, 0.5, 1.0, -1.0], kwargs={"eps": 1e-40})),
              alias_calls(("special_logit", torch.special.logit, "logit"), domain=DOMAIN))),
]
