"""bitwise_not (in-place, out=): ~x for integers, logical not for bool."""

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import INTS_AND_BOOL
from gems.ops.pointwise.shared import pointwise_perf
from gems.spec import OpSpec


@triton.jit
def _not(x):
    if x.dtype == tl.uint8:
        r = 255 - x  # ~x, spelled so: the interpreter's ~ builds a -1 that uint8 cannot hold
    else:
        r = ~x  # on bool (int1) this is logical not
    return r


not_op = PointwiseOp("bitwise_not", _not, operands=1, dtypes=INTS_AND_BOOL)


def bitwise_not_(self):
    return not_op(self, out=self, inplace=True)


def bitwise_not_out(self, *, out):
    # A unary structured kernel in ATen: out= must be of exactly the input's dtype.
    if out.dtype != self.dtype:
        raise RuntimeError(f"Found dtype {out.dtype} but expected {self.dtype}")
    return not_op(self, out=out)


def _samples(dtype, device, quick):
    from gems.spec import Sample
    from gems.testing.samples import make_tensor, shape_for
    from gems.testing.samples_extra import unary_op_samples

    base = unary_op_samples(torch.bitwise_not, out="bitwise_not.out",
                            inplace=("bitwise_not_", torch.Tensor.bitwise_not_), exact_out=True)
    shape = shape_for(quick)
    return base(dtype, device, quick) + [
        Sample("operator", lambda: (make_tensor(shape, dtype, device),), call=lambda x: ~x),
        Sample("float-error", lambda: (make_tensor(shape, torch.float32, device),)),
    ]


SPECS = [
    OpSpec(
        name="bitwise_not", family="pointwise",
        impls={"bitwise_not": not_op, "bitwise_not_": bitwise_not_, "bitwise_not.out": bitwise_not_out},
        call=torch.bitwise_not, samples=_samples, dtypes=INTS_AND_BOOL, tolerance="exact",
        perf=pointwise_perf(1),
    ),
]
