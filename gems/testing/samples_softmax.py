"""Samples for the softmax family (softmax, log_softmax, safe_softmax) beyond the shared softmax-like
variants of :func:`gems.testing.samples_reduction.softmax_samples`, and the perf inputs that row-wise
operators (the softmax family, scans) share: a (rows, cols) tensor taken along its last dim.

The extra variants: a 1xN and an Nx1 tensor along each of their dims, a 3-d middle dim longer than one
block (the looped "cols" kernel), a row of one element, and +-inf beside finite values in long rows.
"""

from __future__ import annotations

import math

import torch

from gems.spec import Sample
from gems.testing.perf_inputs import tensor_bytes
from gems.testing.samples import make_tensor, shape_for
from gems.testing.samples_reduction import FULL_LONG_ROW, QUICK_LONG_ROW, softmax_samples


def row_extras(forward, backward, quick):
    """(variant, args builder, reduction size, expects, grad) of the 1xN / Nx1 / middle-dim cases for
    ``call(x, dim)`` operators; builders take (dtype, device)."""
    _, cols = shape_for(quick)
    long_row = QUICK_LONG_ROW if quick else FULL_LONG_ROW
    both = (forward, backward)
    return [
        ("1xN", lambda d, dev: (make_tensor((1, cols), d, dev), -1), cols, forward, False),
        ("1xN-dim0", lambda d, dev: (make_tensor((1, cols), d, dev), 0), 1, forward, False),
        ("Nx1", lambda d, dev: (make_tensor((cols, 1), d, dev), 0), cols, forward, False),
        ("Nx1-dim1", lambda d, dev: (make_tensor((cols, 1), d, dev), 1), 1, forward, False),
        ("long-middle-dim", lambda d, dev: (make_tensor((2, long_row, 3), d, dev), 1), long_row, forward, False),
        ("long-middle-dim-transposed",
         lambda d, dev: (make_tensor((2, 3, long_row), d, dev).transpose(1, 2), 1), long_row, forward, False),
        ("grad-long-middle-dim",
         lambda d, dev: (make_tensor((2, long_row, 3), d, dev).requires_grad_(), 1), long_row, both, True),
        ("grad-1xN", lambda d, dev: (make_tensor((1, cols), d, dev).requires_grad_(), -1), cols, both, True),
    ]


def softmax_family_samples(forward, backward, forward_op, backward_op):
    """The shared softmax-like samples and the extras above, for ``call(x, dim)``."""
    shared = softmax_samples(forward, backward, forward_op, backward_op)

    def samples(dtype, device, quick):
        cases = shared(dtype, device, quick)
        if forward == "_log_softmax":
            # ATen's log_softmax backward does not compare the shapes of grad and output (it reads past the
            # smaller one), so there is no ATen behaviour to match; gems raises softmax's RuntimeError.
            cases = [s for s in cases if s.variant != "error-backward-shape-mismatch"]
        for variant, build, size, expects, grad in row_extras(forward, backward, quick):
            cases.append(Sample(variant, lambda build=build: build(dtype, device), expects=expects,
                                reduction_size=size, grad=grad))
        cases.append(Sample("special-values-infinities", lambda: (_infinities(dtype, device), -1),
                            expects=forward, reduction_size=5))
        return cases

    return samples


def _infinities(dtype, device):
    """+inf among finite values (NaN rows), -inf among finite values (zeros), mixed signs of inf."""
    inf = math.inf
    rows = [[inf, 1.0, 2.0, -inf, 0.0], [-inf, -inf, 3.0, 1.0, -inf], [inf, inf, -inf, 0.0, 1.0],
            [-inf, -inf, -inf, -inf, 0.0]]
    if str(device) == "meta":
        return torch.empty((4, 5), dtype=dtype, device="meta")
    return torch.tensor(rows, dtype=torch.float64).to(dtype).to(device)


def safe_softmax_samples():
    """Samples for ``_safe_softmax(x, dim, dtype=None)``: the softmax variants that apply (its backward is
    softmax's) plus all -inf rows (zeros, where softmax gives NaN) and the dtype argument."""

    def samples(dtype, device, quick):
        op = torch.ops.aten._safe_softmax.default
        cases = [s for s in softmax_samples("_safe_softmax", "_softmax_backward_data", op,
                                            torch.ops.aten._softmax_backward_data.default)(dtype, device, quick)
                 if not s.variant.startswith(("backward", "error-backward", "half-to-float", "dtype-arg"))]
        for sample in cases:
            if isinstance(sample.expects, tuple):
                sample.expects = ("_safe_softmax", "_softmax_backward_data")
        rows, cols = shape_for(quick)
        narrower = {torch.float64: torch.float32, torch.float32: torch.float16}.get(dtype, dtype)
        wider = torch.float64 if dtype == torch.float32 else torch.float32
        for variant, build, size, expects, grad in row_extras("_safe_softmax", "_softmax_backward_data", quick):
            cases.append(Sample(variant, lambda build=build: build(dtype, device), expects=expects, reduction_size=size,
                                grad=grad))
        cases += [
            Sample("special-values-infinities", lambda: (_infinities(dtype, device), -1), expects="_safe_softmax",
                   reduction_size=5),
            Sample("dtype-wider", lambda: (make_tensor((rows, cols), dtype, device), -1, wider), reduction_size=cols),
            Sample("dtype-narrower", lambda: (make_tensor((rows, cols), dtype, device), -1, narrower),
                   reduction_size=cols),
        ]
        return cases

    return samples


def rows_perf_inputs():
    """inputs(shape, dtype, device) for gems-perf: ``call(x, -1)`` of a (rows, cols) tensor."""

    def inputs(shape, dtype, device):
        return Sample("perf", (make_tensor(shape, dtype, device), -1), reduction_size=shape[-1])

    return inputs


def io_bytes():
    """bytes(sample, result): the input read once and every result written once."""

    def bytes_moved(sample, result):
        outputs = result if isinstance(result, tuple) else (result,)
        return tensor_bytes(sample.args[0], *outputs)

    return bytes_moved
