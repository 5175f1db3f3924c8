"""Is the gems result right? Checked before a case is timed: a wrong result is never a speedup.

Two steps, with the tolerance rules of :mod:`gems.testing.compare` (vendor overrides included):
1. on the device, every output agrees with ATen's within the operator's tolerance (exact for
   integers and bool; NaN where ATen has NaN) -- cheap even for 64M-element outputs;
2. otherwise the conformance comparison against a float64 oracle on CPU (tolerance or ATen-parity
   rule) decides, so a gems result that is closer to the truth than ATen's is not called wrong.

Random numbers (a sample with ``random``, gems.testing.draws) cannot agree with ATen's other draws:
their outputs must have ATen's shapes and dtypes and pass the sample's statistical verdict instead.
"""

from __future__ import annotations

import torch

from gems.runtime import registration
from gems.testing import compare
from gems.testing.cases import copy_tensor, layout_differs, map_tensors, oracle_dtype, tensors_of


def load_overrides(backend) -> dict:
    """The vendor chain's conformance_overrides.yaml entries; a vendor's own win over its base's."""
    overrides = {}
    for member in reversed(list(backend.chain())):
        overrides.update(compare.load_overrides(member.directory / "conformance_overrides.yaml"))
    return overrides


def _tolerance(spec, sample, dtype, overrides) -> compare.Tolerance:
    return compare.tolerance_for(spec.name, dtype, spec.tolerance, sample.reduction_size, overrides)


def _differs_from_aten(got: torch.Tensor, want: torch.Tensor, tol: compare.Tolerance) -> str | None:
    """Why ``got`` is not within tolerance of ATen's ``want`` (None when it is)."""
    if got.shape != want.shape:
        return f"shape {tuple(got.shape)} differs from ATen's {tuple(want.shape)}"
    if got.dtype != want.dtype:
        return f"dtype {got.dtype} differs from ATen's {want.dtype}"
    if not got.dtype.is_floating_point:
        return None if torch.equal(got, want) else "values differ from ATen's exact result"
    wide = torch.float64 if got.dtype == torch.float64 else torch.float32
    g, a = got.detach().to(wide), want.detach().to(wide)
    same = (g == a) | (g.isnan() & a.isnan())  # equal infinities and NaN pairs
    bad = ~(same | ((g - a).abs() <= tol.atol + tol.rtol * a.abs()))
    count = int(bad.sum().item())
    return f"{count} of {got.numel()} values differ from ATen's beyond rtol={tol.rtol:g} atol={tol.atol:g}" \
        if count else None


def check(spec, sample, gems_result, aten_result, overrides: dict) -> tuple[bool, str]:
    """(passed, how or why not) for the outputs of one perf sample; ``aten_result`` None: the device has
    no ATen kernels, so the float64 oracle alone decides."""
    got = tensors_of(gems_result)
    if sample.random is not None:
        return _draw_check(sample, got, aten_result)
    if sample.tie_check is not None:  # the indices may order ties in any valid way (Sample.tie_check)
        with registration.aten_only():
            wrong = sample.tie_check(map_tensors(sample.args, lambda t: t.detach().cpu()), sample.kwargs,
                                     [t.detach().cpu() for t in got])
        if wrong:
            return False, f"output {len(got) - 1}: {wrong}"
        got = got[:-1]
    if aten_result is None:
        return _oracle_check(spec, sample, got, [None] * len(got), range(len(got)), overrides)
    want = tensors_of(aten_result)
    if sample.tie_check is not None:
        want = want[:-1]
    if len(got) != len(want):
        return False, f"{len(got)} outputs, ATen gives {len(want)}"
    with registration.aten_only():
        problems = []
        for i, (g, a) in enumerate(zip(got, want)):
            if g.is_complex() or a.is_complex():
                problems.append(i)
                continue
            why = _differs_from_aten(g, a, _tolerance(spec, sample, g.dtype, overrides))
            if why:
                problems.append(i)
        if not problems:
            return True, "agrees with ATen"
    return _oracle_check(spec, sample, got, want, problems, overrides)


def _draw_check(sample, got, aten_result) -> tuple[bool, str]:
    """A random result: ATen's shapes, dtypes and strides, and the sample's statistical verdict."""
    with registration.aten_only():
        problem = layout_differs(got, tensors_of(aten_result)) if aten_result is not None else ""
        problem = problem or sample.random.check(map_tensors(sample.args, lambda t: t.detach().cpu()), sample.kwargs,
                                                 [t.detach().cpu() for t in got])
    return (False, problem) if problem else (True, "a plausible draw of its law (statistical check)")


def _oracle_check(spec, sample, got, want, indices, overrides) -> tuple[bool, str]:
    """The conformance comparison of outputs ``indices`` with the float64 oracle on CPU."""
    with registration.aten_only():
        oracle = _oracle_outputs(spec, sample)
        if sample.tie_check is not None:
            oracle = oracle[:-1]
        if len(oracle) != len(got):
            return False, f"{len(got)} outputs, the oracle gives {len(oracle)}"
        for i in indices:
            verdict = compare.compare(got[i], oracle[i], want[i], _tolerance(spec, sample, got[i].dtype, overrides))
            if not verdict.passed:
                return False, f"output {i}: {verdict.message} (float64 oracle; max abs err {verdict.max_abs_err:.3g})"
    return True, "agrees with the float64 oracle"


def _oracle_outputs(spec, sample) -> list:
    args = map_tensors(sample.args, lambda t: copy_tensor(t, oracle_dtype(t.dtype), "cpu"))
    kwargs = map_tensors(sample.kwargs, lambda t: copy_tensor(t, oracle_dtype(t.dtype), "cpu"))
    call = spec.reference if spec.reference is not None else sample.call or spec.call
    return tensors_of(call(*args, **kwargs))


def replays(spec) -> dict | None:
    """The native layer's replayed calls of ``spec``'s overloads so far (None when the layer is off)."""
    from gems import native

    if not native.status()["active"]:
        return None
    return {overload: native.calls_of(overload) for overload in spec.overloads}


def native_pct(spec, gems_before: dict, replays_before: dict | None) -> float | None:
    """The share (%) of gems' calls of ``spec`` since ``gems_before`` that the native layer replayed: below 100,
    some timed calls took the Python path (gems.native.python_reasons() says why)."""
    if replays_before is None:
        return None
    calls = sum(registration.gems_calls[o] - gems_before.get(o, 0) for o in spec.overloads)
    replayed = sum(n - replays_before[o] for o, n in replays(spec).items())
    return 100.0 * replayed / calls if calls else None
