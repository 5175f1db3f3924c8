"""where (self, out=): condition ? x : y. Pointwise, the condition loaded as it is (a uint8
condition counts as nonzero, with ATen's deprecation warning); only x and y take part in promotion."""

import warnings

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import PointwiseOp
from gems.dtypes import ALL, ATEN_NAMES
from gems.spec import OpSpec, lazy_perf


@triton.jit
def _where(condition, x, y):
    return tl.where(condition != 0, x, y)  # a uint8 condition counts as nonzero, as in ATen


where_op = PointwiseOp("where", _where, operands=3, promote_operands=(1, 2))


def _check_condition(condition):
    if condition.dtype is torch.uint8:
        warnings.warn("where received a uint8 condition tensor. This behavior is deprecated and will be removed in a "
                      "future version of PyTorch. Use a boolean condition instead.", UserWarning, stacklevel=2)
    elif condition.dtype is not torch.bool:
        raise RuntimeError("where expected condition to be a boolean tensor, but got a tensor with dtype "
                           f"{ATEN_NAMES.get(condition.dtype, condition.dtype)}")


def where(condition, self, other):
    _check_condition(condition)
    return where_op(condition, self, other)


def where_out(condition, self, other, *, out):
    _check_condition(condition)
    want = where_op.result_dtypes([condition, self, other])[1][0]
    if out.dtype != want:  # where's out= must be exactly the result dtype
        raise RuntimeError(f"Expected out type to be {ATEN_NAMES.get(want, want)} but got "
                           f"{ATEN_NAMES.get(out.dtype, out.dtype)}")
    return where_op(condition, self, other, out=out)


def _samples(dtype, device, quick):
    from gems.spec import Sample
    from gems.testing.samples import make_tensor, shape_for, special_values
    from gems.testing.samples_extra import other_device

    shape = shape_for(quick)
    rows, cols = shape
    square = (cols, cols)
    make = lambda s=shape, d=dtype: make_tensor(s, d, device)
    cond = lambda s=shape: make_tensor(s, torch.bool, device)
    other = torch.float64 if dtype != torch.float64 else torch.int32
    three = lambda c=shape, x=shape, y=shape: lambda: (cond(c), make(x), make(y))
    out = lambda c, x, y, o: torch.where(c, x, y, out=o)

    def specials():
        values = special_values(dtype, device)
        return cond(values.shape), values, values.flip(0)

    cases = [
        Sample("contiguous", three()),
        Sample("noncontiguous-transposed", lambda: (cond((cols, rows)).t(), make((cols, rows)).t(), make())),
        Sample("noncontiguous-strided", lambda: (cond((rows, 2 * cols))[:, ::2], make(),
                                                 make((rows, 2 * cols))[:, 1::2])),
        Sample("broadcast", three((rows, 1), (1, cols))),
        Sample("broadcast-condition", three(shape, (cols,), (rows, 1))),
        Sample("0d", three((), (), ())),
        Sample("0d-operands", three(shape, (), ())),
        Sample("empty", three((0, cols), (0, cols), (0, cols))),
        Sample("special-values", specials),
        Sample("scalar-other", lambda: (cond(), make()), call=lambda c, x: torch.where(c, x, 2)),
        Sample("type-promotion", lambda: (cond(), make(), make(d=other))),
        Sample("uint8-condition", lambda: (cond().to(torch.uint8) * 3, make(), make())),
        Sample("float-condition-error", lambda: (make(d=torch.float32), make(), make())),
        Sample("broadcast-error", three(shape, (3,))),
        Sample("out", lambda: (cond(), make(), make(), torch.empty(0, dtype=dtype, device=device)),
               expects="where.self_out", call=out),
        Sample("out-noncontiguous", lambda: (cond(), make(), make(),
                                             torch.empty((rows, 2 * cols), dtype=dtype, device=device)[:, ::2]),
               expects="where.self_out", call=out),
        Sample("out-wrong-dtype", three(),
               call=lambda c, x, y: out(c, x, y, torch.empty(0, dtype=other, device=x.device))),
        Sample("out-wrong-device", three(),
               call=lambda c, x, y: out(c, x, y, torch.empty(0, dtype=x.dtype, device=other_device(x.device)))),
        Sample("out-overlap-error", three(square, square, square), call=lambda c, x, y: out(c, x, y, x.t())),
        Sample("method", lambda: (make(), cond(), make()), call=lambda x, c, y: x.where(c, y)),
    ]
    if dtype.is_floating_point:
        cases.append(Sample("grad", lambda: (cond(), make().requires_grad_(), make().requires_grad_()), grad=True))
    return cases


SPECS = [
    OpSpec(
        name="where", family="pointwise", impls={"where.self": where, "where.self_out": where_out},
        call=torch.where, samples=_samples, dtypes=ALL,
        perf=lazy_perf("gems.testing.samples_extra", "masked_perf", shapes="pointwise"),
    ),
]
