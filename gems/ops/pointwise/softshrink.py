"""softshrink(lambd=0.5): x - lambd above lambd, x + lambd below -lambd, +0.0 between, NaN kept (ATen's
CUDA formula); lambd rounded to the tensor's dtype first and checked to lie in [0, the dtype's largest
value], as ATen does. Floating dtypes only. Its backward is softshrink_backward.

Samples avoid negative inputs inside [-lambd, 0]: ATen's CPU kernel gives +0.0 there in its vectorized
loop and -0.0 in its scalar tail (which elements are in the tail depends on the CPU's vector width), so
no single answer agrees with it on every element, while its CUDA kernel gives +0.0 throughout, as gems.
Their lambd values are exact in fp16 and bf16: ATen's CPU kernel keeps lambd in fp32 for those dtypes.
"""

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import ATEN_NAMES, FLOATS
from gems.ops.pointwise.shared import pointwise_perf
from gems.spec import OpSpec


@triton.jit
def _softshrink(x, lambd, COMMON: tl.constexpr):
    lambd = lambd.to(COMMON).to(x.dtype)
    shrunk = tl.where(x > lambd, x - lambd, tl.where(x < lambd * -1.0, x + lambd, 0.0))
    return tl.where(x != x, x, shrunk)


softshrink_op = PointwiseOp("softshrink", _softshrink, operands=1, scalars=("lambd",), dtypes=FLOATS,
                            common_arg=True)


def _checked(self, lambd):
    lambd = float(lambd)
    if self.is_floating_point() and not 0 <= lambd <= torch.finfo(self.dtype).max:
        raise RuntimeError(f"lambda must be in range [0, {torch.finfo(self.dtype).max:g}] for input dtype "
                           f"{ATEN_NAMES.get(self.dtype, self.dtype)}, but found {lambd:g}")
    return lambd


def softshrink(self, lambd=0.5):
    return softshrink_op(self, _checked(self, lambd))


def softshrink_out(self, lambd=0.5, *, out):
    return softshrink_op(self, _checked(self, lambd), out=out)


# --------------------------------------------------------------------------- samples


def _samples(dtype, device, quick):
    from gems.spec import Sample
    from gems.testing.samples import REJECT_HOST_DTYPE, make_tensor, shape_for

    shape = shape_for(quick)
    rows, cols = shape

    def made(s, lambd=0.5):
        """Random values with no negative one in [-lambd, 0] (see the module docstring)."""
        t = make_tensor(s, torch.float64, "cpu")
        return torch.where(t < 0, t - lambd - 0.25, t).to(dtype).to(device)

    out = lambda x, **kw: torch.ops.aten.softshrink.out(x, **kw, out=x.new_empty(0))
    cases = [
        Sample("contiguous", lambda: (made(shape),)),
        Sample("noncontiguous-transposed", lambda: (made((cols, rows)).t(),)),
        Sample("noncontiguous-strided", lambda: (made((rows, cols * 2))[:, ::2],)),
        Sample("0d", lambda: (made(()),)),
        Sample("empty", lambda: (made((0, 5)),)),
        Sample("3d", lambda: (made((3, 5, 7)),)),
        Sample("lambd", lambda: (made(shape, 1.75),), {"lambd": 1.75}),
        Sample("lambd-zero", lambda: (made(shape, 0.0),), {"lambd": 0.0}),
        Sample("out", lambda: (made(shape),), call=out, expects="softshrink.out"),
        Sample("grad", lambda: (made(shape).requires_grad_(),), grad=True,
               expects=("softshrink", "softshrink_backward")),
        Sample("lambd-grad", lambda: (made(shape, 0.125).requires_grad_(),), {"lambd": 0.125}, grad=True,
               expects=("softshrink", "softshrink_backward")),
    ]
    if dtype.is_floating_point:
        info = torch.finfo(dtype)
        specials = [float("nan"), float("inf"), float("-inf"), 0.0, 0.25, 0.5, -0.75, 1.0, -1.0, -2.5, info.tiny,
                    info.max / 4, -info.max / 4, info.eps, 1e3, -1e3]
        cases.append(Sample("special-values", lambda: (torch.tensor(specials, dtype=dtype, device=device),)))
    if dtype == REJECT_HOST_DTYPE:
        bad = lambda d: (lambda: (make_tensor((3, 4), d, device),))
        cases += [Sample("error-int64-input", bad(torch.int64)), Sample("error-bool-input", bad(torch.bool)),
                  Sample("error-negative-lambd", bad(dtype), {"lambd": -0.5}),
                  Sample("error-lambd-overflow", bad(torch.float16), {"lambd": 1e5})]
    return cases


SPECS = [
    OpSpec(
        name="softshrink", family="pointwise", impls={"softshrink": softshrink, "softshrink.out": softshrink_out},
        call=torch.nn.functional.softshrink, samples=_samples, dtypes=FLOATS, perf=pointwise_perf(1),
    ),
]
