"""celu(alpha=1): elu(x, alpha, 1, 1 / alpha), as ATen computes it (1 / alpha in double), with its check
that alpha is not 0. ATen's celu is CompositeExplicitAutograd (it calls elu); gems serves it directly with
elu's kernel. Floating dtypes only. Its derivative is elu_backward.
"""

import torch
import triton  # noqa: F401
import triton.language as tl  # noqa: F401  (the interpreter runs a kernel only with tl in its module)

from gems.dtypes import FLOATS
from gems.ops.pointwise.elu import elu_op
from gems.ops.pointwise.shared import combined, pointwise_perf, unary_samples
from gems.ops.pointwise.unary_shared import error_calls, scalar_variants
from gems.spec import OpSpec


def _coefficients(alpha):
    alpha = float(alpha)
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return alpha, 1.0, 1.0 / alpha


def celu(self, alpha=1.0):
    return elu_op(self, *_coefficients(alpha))


def celu_(self, alpha=1.0):
    return elu_op(self, *_coefficients(alpha), out=self, inplace=True)


def celu_out(self, alpha=1.0, *, out):
    return elu_op(self, *_coefficients(alpha), out=out)


SPECS = [
    OpSpec(
        name="celu", family="pointwise", impls={"celu": celu, "celu_": celu_, "celu.out": celu_out},
        call=torch.celu,
        samples=combined(
            unary_samples(out=("celu.out", lambda x, **kw: torch.ops.aten.celu.out(x, **kw, out=x.new_empty(0))),
                          inplace=("celu_", torch.celu_), grad=True, grad_expects=("celu", "elu_backward"),
                          rejects=(torch.int64, torch.bool)),
            scalar_variants(("alpha", {"alpha": 0.3}), ("negative-alpha", {"alpha": -2.0}), grad=True),
            error_calls(("error-alpha-zero", lambda x: torch.celu(x, alpha=0.0)))),
        dtypes=FLOATS, perf=pointwise_perf(1),
    ),
]
