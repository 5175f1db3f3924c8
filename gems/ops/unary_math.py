"""abs, neg, exp: one-operand pointwise math."""

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import PointwiseOp, Promotion, unary_overloads
from gems.spec import OpSpec
from gems.testing.perf_inputs import pointwise_perf
from gems.testing.samples import unary_samples

FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
SIGNED_INTS = (torch.int8, torch.int16, torch.int32, torch.int64)


@triton.jit
def _abs(x):
    return tl.abs(x)


@triton.jit
def _neg(x):
    return -x


@triton.jit
def _exp(x):
    return tl.exp(x)


abs_op = PointwiseOp("abs", _abs, operands=1)
neg_op = PointwiseOp("neg", _neg, operands=1)
exp_op = PointwiseOp("exp", _exp, operands=1, promotion=Promotion.INT_TO_FLOAT)

SPECS = [
    OpSpec(
        name="abs", family="pointwise", impls=unary_overloads(abs_op, "abs"), call=torch.abs,
        samples=unary_samples(out="abs.out", inplace=("abs_", torch.abs_), grad=True),
        dtypes=FLOATS + SIGNED_INTS, perf=pointwise_perf(1),
    ),
    OpSpec(
        name="neg", family="pointwise", impls=unary_overloads(neg_op, "neg"), call=torch.neg,
        samples=unary_samples(out="neg.out", inplace=("neg_", torch.neg_), grad=True),
        dtypes=FLOATS + SIGNED_INTS, perf=pointwise_perf(1),
    ),
    OpSpec(
        name="exp", family="pointwise", impls=unary_overloads(exp_op, "exp"), call=torch.exp,
        samples=unary_samples(out="exp.out", inplace=("exp_", torch.exp_), grad=True),
        dtypes=FLOATS, perf=pointwise_perf(1),
    ),
]
