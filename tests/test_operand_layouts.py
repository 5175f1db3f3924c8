"""Every operator reads every tensor operand through its layout: a sample whose argument is replaced by a
non-contiguous view of the same values (the last dim strided by 2) gives gems' result for the contiguous
argument. Weights, biases, running statistics, class weights and offsets were read by position until
2026-11-28 (layer_norm, batch_norm, nll_loss, grouped_mm: docs/operators.md); conformance's samples make the
first operand non-contiguous far more often than the others, so this checks them all, for every operator.

Interpreter vendor, one dtype per operator (float32 where declared), the first samples that are not error
cases; random and statistical operators are left out (a draw depends on the call, not only the values)."""

import pytest
import torch

import gems
from gems.ops import all_specs
from gems.runtime import registration

SAMPLES_PER_OPERATOR = 3


def _operators():
    return [s for s in all_specs() if s.samples is not None and s.tolerance != "statistical"
            and s.family != "random"]


def _strided(t: torch.Tensor) -> torch.Tensor:
    """A view of a fresh copy of t with t's values, its last dim strided by 2."""
    wide = torch.empty((*t.shape[:-1], 2 * t.shape[-1]), dtype=t.dtype, device=t.device)
    view = wide[..., ::2]
    view.copy_(t.detach())
    return view


def _fresh(value):
    """A copy of every contiguous tensor (in-place operators write into their arguments)."""
    if isinstance(value, torch.Tensor):
        return value.detach().clone() if value.is_contiguous() else value
    if isinstance(value, (list, tuple)):
        return type(value)(_fresh(v) for v in value)
    return value


def _tensors(result):
    if isinstance(result, torch.Tensor):
        return [result.detach()]
    if isinstance(result, (list, tuple)):
        return [t for r in result for t in _tensors(r)]
    return []


def _same(a, b) -> bool:
    xs, ys = _tensors(a), _tensors(b)
    if len(xs) != len(ys):
        return False
    for x, y in zip(xs, ys):
        if x.shape != y.shape or x.dtype != y.dtype:
            return False
        if x.is_floating_point() or x.is_complex():
            if not torch.allclose(x, y, rtol=1e-5, atol=1e-6, equal_nan=True):
                return False
        elif not torch.equal(x, y):
            return False
    return True


@pytest.mark.usefixtures("gems_enabled")
@pytest.mark.parametrize("spec", _operators(), ids=lambda s: s.name)
def test_non_contiguous_operands_give_the_contiguous_result(spec):
    dtype = torch.float32 if torch.float32 in spec.dtypes else spec.dtypes[0]
    device = gems.vendor().device
    chosen = [s for s in spec.samples(dtype, device, True)
              if not s.variant.startswith("error") and s.tie_check is None][:SAMPLES_PER_OPERATOR]
    checked, wrong = 0, []
    for sample in chosen:
        with registration.aten_only():
            built = sample.built()
        call = built.call or spec.call
        slots = [(i, a) for i, a in enumerate(built.args)] + [(k, a) for k, a in built.kwargs.items() if k != "out"]
        for where, arg in slots:
            if not isinstance(arg, torch.Tensor) or arg.dim() == 0 or arg.numel() < 2 or not arg.is_contiguous():
                continue
            args, kwargs = list(built.args), dict(built.kwargs)
            try:
                expected = call(*_fresh(args), **_fresh(kwargs))
            except Exception:  # an input this call refuses (a grad sample's leaf, say): nothing to compare
                continue
            if isinstance(where, int):
                args[where] = _strided(arg)
            else:
                kwargs[where] = _strided(arg)
            try:
                got = call(*_fresh(args), **_fresh(kwargs))
            except Exception as exc:  # a layout ATen refuses too (grouped_mm's stride rule) is no finding
                with registration.aten_only():
                    try:
                        call(*_fresh(args), **_fresh(kwargs))
                    except type(exc):
                        continue
                raise
            checked += 1
            if not _same(got, expected):
                wrong.append(f"{sample.variant}: argument {where}")
    assert not wrong, f"{spec.name}: a non-contiguous operand changed the result: {wrong}"
    if not checked:
        pytest.skip(f"{spec.name}: its first samples have no tensor operand of 2 or more elements")
