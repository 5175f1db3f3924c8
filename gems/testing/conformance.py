"""Running one conformance case: gems, ATen on the same device, and the float64 oracle.

A case is (operator, dtype, variant). It passes when every output (and gradient) agrees with the
oracle by the rules of :mod:`gems.testing.compare`, and the expected ATen overload was served by a
gems kernel with no fallback. Where ATen raises for an input, gems must raise the same exception type.
An overload the vendor lists in ``get_unused_ops()`` must instead run ATen's kernel: its case is
checked the same way and reported as a fallback.

The proof is kept at kernel level (:mod:`gems.testing.proof`): a non-empty result needs a gems kernel
launch (unless the declaration's ``no_launch`` says why none is needed), and no ATen operator called
inside a gems implementation may have computed part of what it returned or wrote.

A random sample (``Sample.random``, :mod:`gems.testing.draws`) has no oracle: its outputs must have
ATen's shapes, dtypes and strides and pass the sample's statistical verdict; the cold and the warm call
run under the same seed (every generator reseeded) and must agree bit for bit, and a third call, not
reseeded, must advance a generator and, when it draws 64 values or more, give other values (unless the
law allows one value only, ``Draw.varies``: then ATen itself may skip the draw).
"""

from __future__ import annotations

import contextlib
import functools
import time

import torch

from gems.runtime import registration, selection
from gems.spec import OpSpec, Sample
from gems.testing import compare, launch_memo, proof
from gems.testing.cases import (
    Case,
    CaseResult,
    build_sample,
    copy_args,
    dtype_name,
    generator_states,
    layout_differs,
    map_tensors,
    oracle_dtype,
    reseed,
    tensors_of,
)
from gems.testing.samples import is_out_call
from gems.testing.samples_harness import HarnessError, host_dtype, numbers_changed

# A random result of fewer values may repeat by chance (a 0-d coin flip does so half the time): the next
# call must still advance a generator, but need not give other values.
_REPEATS_BELOW = 64


def _invoke(spec: OpSpec, sample: Sample, args, kwargs, out_like=None, reference=False):
    if reference and sample.reference is not None:  # ATen has no kernel for the sample's call on this device
        return sample.reference(*args, **kwargs)
    call = spec.reference if reference and spec.reference is not None else sample.call or spec.call
    if is_out_call(call):
        if out_like is None:  # the oracle computes the functional form
            return spec.call(*args, **kwargs)
        out = map_tensors(out_like, lambda t: torch.empty(0, dtype=t.dtype, device=t.device))
        return spec.call(*args, **kwargs, out=out)
    return call(*args, **kwargs)


def _run(spec, sample, args, kwargs, grad_seed, out_like=None, reference=False, watch=None):
    """Outputs (and input gradients, when the sample asks) as a flat list of tensors. reference: run the
    declaration's reference composite (an API operator's ATen result and oracle) instead of the call.
    watch: a dispatch mode (proof.AtenComputed) on during the call and the backward, not while the
    gradients' seeds are drawn."""
    watch = watch or contextlib.nullcontext()
    with watch:
        result = _invoke(spec, sample, args, kwargs, out_like, reference)
    outputs = tensors_of(result)
    if not sample.grad:
        return result, outputs
    leaves = [t for t in tensors_of(args) if t.requires_grad]
    differentiable = [o for o in outputs if o.requires_grad]
    generator = torch.Generator().manual_seed(grad_seed)
    with registration.aten_only():  # the harness's data (random numbers, conversions, moves), not the ops under test
        grad_outs = [torch.randn(o.shape, generator=generator, dtype=torch.float64).to(o.dtype).to(o.device)
                     for o in differentiable]
    with watch:
        grads = torch.autograd.grad(differentiable, leaves, grad_outs, allow_unused=True)
    return result, outputs + [g if g is not None else torch.zeros_like(x) for g, x in zip(grads, leaves)]


def expected_overloads(spec: OpSpec, sample: Sample) -> tuple[str, ...]:
    if sample.expects is None:
        return (spec.overloads[0],)
    return (sample.expects,) if isinstance(sample.expects, str) else tuple(sample.expects)


@functools.cache
def _unused_listed_by(vendor: str) -> dict[str, str]:
    """Names in get_unused_ops() of the vendor and its bases -> the vendor whose list has them."""
    listed = {}
    for member in reversed(list(selection.load_backend(vendor).chain())):  # deepest base first
        for name in member.unused_ops():
            listed.setdefault(name, member.name)
    return listed


def _unused_overloads(spec: OpSpec, expected, vendor: str) -> dict[str, str]:
    """Expected overloads the vendor leaves to ATen -> why (matched as gems.enable() matches them)."""
    listed = _unused_listed_by(vendor)
    unused = {}
    for overload in expected:
        name = next((n for n in (overload, overload.split(".")[0], spec.name) if n in listed), None)
        if name is not None:
            unused[overload] = f"listed in get_unused_ops() of vendor {listed[name]}"
    return unused


def run_case(spec: OpSpec, case: Case, device: str, quick: bool, vendor: str, overrides: dict,
             repro: str = "") -> CaseResult:
    started = time.perf_counter()
    sample = build_sample(spec, case, device, quick)
    tensors = tensors_of(sample.args)
    result = CaseResult(
        id=case.id, op=case.op, dtype=dtype_name(case.dtype), variant=case.variant, status="fail",
        overload=",".join(expected_overloads(spec, sample)), seed=case.seed, repro=repro,
        shapes=[list(t.shape) for t in tensors], strides=[list(t.stride()) for t in tensors],
    )
    try:
        with launch_memo.case() as memo:
            _check(spec, sample, case, device, vendor, overrides, result, memo)
    except Exception as exc:  # a crash in gems is a result, not a harness failure
        result.status, result.message = "error", f"{type(exc).__name__}: {exc}"
    known = spec.known_failure(vendor, case.dtype, case.variant)
    if known and result.status in ("fail", "error"):  # also where the errors differ, or gems raises
        result.status, result.message = "xfail", f"known failure: {known} ({result.message})"
    result.duration_s = round(time.perf_counter() - started, 4)
    return result


def _check(spec, sample, case, device, vendor, overrides, result, memo=None):
    expected = expected_overloads(spec, sample)
    unused = _unused_overloads(spec, expected, vendor)
    # A device where ATen has no kernels (the simulated one) has no ATen answer: ATen on the CPU, in the
    # tested dtype, stands in to say whether the call raises and what it returns, never as a reference.
    stand_in = not selection.current().capabilities.aten_kernels
    with registration.aten_only():
        aten_args = copy_args(sample.args, "cpu" if stand_in else None)
        gems_args = copy_args(sample.args)
        oracle_args = copy_args(sample.args, "cpu", oracle_dtype)
        try:
            aten_result, aten_outs = _run(spec, sample, aten_args, sample.kwargs, case.seed, reference=True)
            aten_error = None
        except Exception as exc:
            aten_error = exc
    if isinstance(aten_error, HarnessError):
        result.status, result.message = "error", f"harness: {aten_error}"
        return
    if aten_error is not None:
        try:
            _run(spec, sample, gems_args, sample.kwargs, case.seed)
        except type(aten_error):
            result.status, result.rule = ("fallback" if unused else "pass"), "same-error"
            result.message = "; ".join([*sorted(set(unused.values())), f"both raise {type(aten_error).__name__}"])
            return
        except Exception as exc:
            result.message = (f"ATen raises {type(aten_error).__name__}({aten_error}) but gems raises "
                              f"{type(exc).__name__}({exc})")
            return
        result.message = f"ATen raises {type(aten_error).__name__}({aten_error}) but gems returns a result"
        return

    if stand_in:
        aten_result = map_tensors(aten_result, lambda t: torch.empty(0, dtype=t.dtype, device=device))
    before_gems = {o: registration.gems_calls[o] for o in expected}
    before_fallback = dict(registration.fallback_calls)
    by_aten = proof.AtenComputed()
    draw = sample.random
    if draw is not None:
        reseed(sample, case.seed, device)
    with proof.recording() as record:
        _, gems_outs = _run(spec, sample, gems_args, sample.kwargs, case.seed, out_like=aten_result, watch=by_aten)
    result.launches, result.aten_ops = record.launches, dict(record.aten_ops)
    # What ATen computed outside gems (a backward's nondeterministic scatter_add on CUDA) may differ from
    # one call to the next: the warm call's is judged against the oracle like the cold call's, not bitwise.
    varies = spec.varies_between_runs.get(case.variant) or spec.varies_between_runs.get("*")
    aten_computed = [by_aten.computed(t) for t in gems_outs]
    warm_error, warm_outs = _warm_differs(spec, sample, case, device, aten_result, gems_outs,
                                          [bool(varies) or c for c in aten_computed], memo)
    if draw is not None and not warm_error:
        warm_error = _next_call_repeats(spec, sample, case, aten_result, warm_outs, device)
    oracle_note = ""
    with registration.aten_only():
        if draw is not None:  # no oracle for random numbers: the sample's statistical verdict judges them
            oracle_outs = [t.detach().cpu() for t in aten_outs]
            strides = not (stand_in or sample.reference)  # a stand-in's or a reference's strides are not a kernel's
            result.message = layout_differs(gems_outs, aten_outs, strides=strides) or draw.check(
                map_tensors(sample.args, lambda t: t.detach().cpu()), sample.kwargs,
                [t.detach().cpu() for t in gems_outs])
        try:
            if draw is None:
                _, oracle_outs = _run(spec, sample, oracle_args, sample.kwargs, case.seed, reference=True)
        except Exception as exc:
            # ATen on the CPU refuses what the device computes (abs of bool on CUDA): the device's ATen
            # result is the reference then.
            oracle_outs = [t.detach().cpu() for t in aten_outs]
            where = "on the CPU in the tested dtype" if stand_in else "on the device"
            oracle_note = f"no CPU oracle ({type(exc).__name__}): ATen {where} is the reference. "
        if stand_in:  # no ATen answer on the device: its dtypes are checked, aten-parity cannot apply
            wrong = [f"output {i}: dtype {g.dtype} differs from ATen's {a.dtype} (ATen on the CPU)"
                     for i, (g, a) in enumerate(zip(gems_outs, aten_outs)) if g.dtype != a.dtype]
            if wrong:
                result.message = wrong[0]
                return
            aten_outs = [None] * len(aten_outs)
        fallbacks = {k: v - before_fallback.get(k, 0) for k, v in registration.fallback_calls.items()
                     if k[0] in spec.overloads and v > before_fallback.get(k, 0)}
        not_run = [o for o in expected if registration.gems_calls[o] == before_gems[o]]
        tols = _judge(spec, sample, case, vendor, overrides, result, gems_outs, aten_outs, oracle_outs, fallbacks,
                      not_run, unused, record)
        for i in (i for i, computed in enumerate(aten_computed) if (computed or varies) and tols
                  and i < len(warm_outs)):
            if sample.tie_check and i == len(warm_outs) - 1:  # a set-valued output: judged by its tie check
                wrong = sample.tie_check(map_tensors(sample.args, lambda t: t.detach().cpu()), sample.kwargs,
                                         [t.detach().cpu() for t in warm_outs])
                verdict = compare.Comparison(not wrong, None if wrong else "valid-ties", message=wrong)
            else:
                verdict = compare.compare(warm_outs[i], oracle_outs[i], aten_outs[i], tols[i])
            if not verdict.passed and not warm_error:
                by = "computed by ATen" if aten_computed[i] else f"declared to vary between runs: {varies}"
                warm_error = f"output {i} of the warm (second) call ({by}): {verdict.message}"
    if warm_error and result.status == "pass":
        result.status, result.message = "fail", warm_error
    fixed = spec.fixed_numbers.get(case.variant) or spec.fixed_numbers.get("*")
    if result.status == "pass" and case.dtype == host_dtype(spec) and not (sample.tie_check or fixed):
        changed_error = _changed_numbers_differ(spec, sample, case, device, stand_in, tols, memo)
        if changed_error:
            result.status, result.message = "fail", changed_error
    result.message = oracle_note + result.message


def _warm_differs(spec, sample, case, device, aten_result, cold_outs, not_bitwise, memo=None) -> tuple[str, list]:
    """Run the case a second time on fresh copies: the warm call (the native layer's replay once the
    first call recorded its plan) must give bit-identical outputs where gems computed them (all but the
    outputs flagged in not_bitwise); a random sample draws again under the cold call's seed. Returns (what
    differs or '', the warm outputs). memo: the cold call's launches (gems/testing/launch_memo.py), which
    serve the warm call's identical launches under the interpreter."""
    with registration.aten_only():
        warm_args = copy_args(sample.args)
    if sample.random is not None:
        reseed(sample, case.seed, device)
    with memo.replay() if memo is not None else contextlib.nullcontext():
        _, warm_outs = _run(spec, sample, warm_args, sample.kwargs, case.seed, out_like=aten_result)
    for i, (cold, warm) in enumerate(zip(cold_outs, warm_outs)):
        if not_bitwise[i]:
            continue
        with registration.aten_only():  # compared on the CPU: a device may have no ATen kernels (sim)
            cold, warm = cold.detach().cpu(), warm.detach().cpu()
            same = cold.shape == warm.shape and cold.dtype == warm.dtype and bool(
                ((cold == warm) | ((cold != cold) & (warm != warm))).all())
        if not same:
            return f"output {i}: the warm (second) call differs from the cold (first) call", warm_outs
    return "", warm_outs


def _changed_numbers_differ(spec, sample, case, device, stand_in, tols, memo=None) -> str:
    """The call once more with only its Python numbers changed (samples_harness.numbers_changed), judged
    against the oracle of those numbers: a native plan that kept the first call's number, or a shortcut
    taken for one value of it, shows here. A change ATen refuses (the number was a dim or a size) and a
    result no CPU oracle computes are not judged. Returns what differs, or ''."""
    found = numbers_changed(sample)
    if found is None or sample.random is not None:
        return ""
    changed, what = found
    with registration.aten_only():
        try:
            # The CPU oracle first: a change that makes the call invalid (a dim turned into an index out of
            # range) raises there, before ATen's device kernel asserts and takes the process's device with it.
            _, oracle_outs = _run(spec, changed, copy_args(changed.args, "cpu", oracle_dtype), changed.kwargs,
                                  case.seed, reference=True)
            aten_result, aten_outs = _run(spec, changed, copy_args(changed.args, "cpu" if stand_in else None),
                                          changed.kwargs, case.seed, reference=True)
        except Exception:
            return ""
        if stand_in:
            aten_result = map_tensors(aten_result, lambda t: torch.empty(0, dtype=t.dtype, device=device))
            aten_outs = [None] * len(aten_outs)
    with memo.replay() if memo is not None else contextlib.nullcontext():
        try:
            _, outs = _run(spec, changed, copy_args(changed.args), changed.kwargs, case.seed, out_like=aten_result)
        except Exception as exc:
            return f"with its numbers changed ({what}), gems raises {type(exc).__name__}({exc}) where ATen returns"
    if len(outs) != len(oracle_outs):
        return f"with its numbers changed ({what}): {len(outs)} outputs, expected {len(oracle_outs)}"
    with registration.aten_only():
        for i, (got, want, aten, tol) in enumerate(zip(outs, oracle_outs, aten_outs, tols)):
            verdict = compare.compare(got, want, aten, tol)
            if not verdict.passed:
                return f"with its numbers changed ({what}): output {i}: {verdict.message}"
    return ""


def _next_call_repeats(spec, sample, case, aten_result, warm_outs, device) -> str:
    """A third call of a random sample, not reseeded: '' when it advanced a generator and, for 64 values
    or more, gave other values than the warm call; '' too where the law allows one value only."""
    if not any(t.numel() for t in warm_outs):
        return ""  # nothing drawn
    with registration.aten_only():
        next_args = copy_args(sample.args)
        before = generator_states(sample, device)
    _, next_outs = _run(spec, sample, next_args, sample.kwargs, case.seed, out_like=aten_result)
    if not sample.random.varies:  # one possible value: ATen itself may skip the draw (dropout with p = 1 on CUDA)
        return ""
    with registration.aten_only():
        if all(torch.equal(a, b) for a, b in zip(before, generator_states(sample, device))):
            return "the next call did not advance the random generator's state"
        if sum(t.numel() for t in next_outs) < _REPEATS_BELOW:
            return ""
        if all(torch.equal(a.detach().cpu(), b.detach().cpu()) for a, b in zip(warm_outs, next_outs)):
            return "the next call repeated the previous call's random values"
    return ""


def _judge(spec, sample, case, vendor, overrides, result, gems_outs, aten_outs, oracle_outs, fallbacks, not_run,
           unused, record):
    """Sets the result's verdict; returns the tolerance of each output ([] when the outputs don't match)."""
    if len(gems_outs) != len(oracle_outs):
        result.message = f"{len(gems_outs)} outputs, expected {len(oracle_outs)}"
        return []

    def tolerance(output):
        # The looser of the input's and the output's float dtypes: an integer input may give a float
        # result (sigmoid), and a float32 result stored into a float64 out= keeps float32 precision.
        floats = [d for d in (case.dtype, output.dtype) if d.is_floating_point and d in compare.RTOL]
        dtype = max(floats, key=compare.RTOL.get) if floats else case.dtype
        return compare.tolerance_for(spec.name, dtype, spec.tolerance, sample.reduction_size, overrides)

    tols = [tolerance(got) for got in gems_outs]
    gradients = sum(1 for t in tensors_of(sample.args) if t.requires_grad) if sample.grad else 0
    for i in range(len(tols) - gradients, len(tols)):
        tols[i] = compare.gradient_tolerance(tols[i], oracle_outs[i])
    if tols:
        tol = tols[0]
        result.tolerance = {"rtol": tol.rtol, "atol": tol.atol, **({"override": tol.reason} if tol.reason else {})}
    ties = sample.tie_check
    if sample.random is not None:  # judged by _check: result.message holds what is wrong, if anything
        tols, problem = [], result.message
        verdicts = [compare.Comparison(not problem, None if problem else "statistical", message=problem)]
    else:
        verdicts = [compare.compare(got, want, None if ties else aten, tol)
                    for got, want, aten, tol in zip(gems_outs, oracle_outs, aten_outs, tols)]
    if ties and verdicts:  # the indices: any valid order of equal values (see Sample.tie_check)
        wrong = ties(map_tensors(sample.args, lambda t: t.detach().cpu()), sample.kwargs,
                     [t.detach().cpu() for t in gems_outs])
        verdicts[-1] = compare.Comparison(not wrong, None if wrong else "valid-ties", message=wrong)
    failing = [(i, v) for i, v in enumerate(verdicts) if not v.passed]
    if failing:
        index, worst = failing[0]
        worst.message = f"output {index}: {worst.message}"
    else:
        worst = max(verdicts, key=lambda v: v.max_abs_err, default=None)
    if worst is not None:
        for key, value in worst.metrics().items():
            setattr(result, key, value)
        result.rule = worst.rule
    passed = worst is None or worst.passed
    ran_unused = sorted(set(unused) - set(not_run))  # the vendor leaves these to ATen: gems must not run them
    not_run = [o for o in not_run if o not in unused]
    deliberate = spec.deliberate_fallbacks.get(case.variant)
    known = spec.known_failure(vendor, case.dtype, case.variant)
    computed_by_aten = sorted({op for ops in record.computed_by_aten.values() for op in ops})
    undeclared = _undeclared_computations(spec, record)
    if not passed:
        result.status, result.message = ("xfail", f"known failure: {known}") if known else ("fail", worst.message)
    elif computed_by_aten:
        where = ", ".join(sorted(record.computed_by_aten))
        result.status = "xfail" if known else "fail"
        result.message = f"computed by ATen inside the gems implementation: {', '.join(computed_by_aten)} (in {where})"
    elif undeclared:
        result.status = "xfail" if known else "fail"
        result.message = (f"computed by ATen inside the gems implementation: {'; '.join(undeclared)} (an operator "
                          "that only decides is declared in aten_decisions with its reason)")
    elif deliberate:
        result.status, result.message = "fallback", f"deliberate ATen fallback: {deliberate}"
    elif ran_unused:
        result.status, result.message = "fail", f"{', '.join(ran_unused)} ran gems although {unused[ran_unused[0]]}"
    elif unused and not not_run and not fallbacks:
        result.status, result.message = "fallback", "; ".join(sorted(set(unused.values())))
    elif fallbacks and _undeclared_dtypes(spec, sample):
        # gems declares the dtypes it computes; ATen serving (or refusing) the others is by design.
        reasons = "; ".join(f"{o}: {why}" for (o, why) in fallbacks)
        undeclared = ", ".join(_undeclared_dtypes(spec, sample))
        result.status, result.message = "fallback", f"input dtype {undeclared} is not declared: ATen ran ({reasons})"
    elif not_run or fallbacks:
        reasons = "; ".join(f"{o}: {why}" for (o, why) in fallbacks) or "the gems kernel was not called"
        result.status = "xfail" if known else "fail"
        result.message = f"not executed by gems: {', '.join(not_run) or 'fallback'} ran ATen ({reasons})"
    elif record.launches == 0 and any(t.numel() for t in gems_outs) and not _no_launch_reason(spec, case):
        result.status = "xfail" if known else "fail"
        result.message = ("no gems kernel launched for a non-empty result (declare the variant in no_launch if "
                          "it needs none)")
    elif known:
        result.status, result.message = "xpass", f"declared as a known failure but passes: {known}"
    else:
        result.status = "pass"
    if result.status == "xfail" and not result.message.startswith("known failure"):  # the declaration says why
        result.message = f"known failure: {known} ({result.message})"
    return tols


def _undeclared_computations(spec, record) -> list[str]:
    """'aten.op (in overload)' for each ATen operator that computed inside a gems implementation and that
    the declaration serving the overload (the case's own, for its overloads) does not allow in its
    aten_decisions."""
    found = []
    for overload, computed in sorted(record.computed_inside.items()):
        allowed = spec.aten_decisions if overload in spec.overloads else _aten_decisions().get(overload, {})
        found += [f"{name} (in {overload})" for name in sorted(computed) if name not in allowed]
    return found


@functools.cache
def _aten_decisions() -> dict:
    """Served overload (an ATen overload or a gems API name) -> its declaration's aten_decisions."""
    from gems import ops

    return {overload: spec.aten_decisions for spec in ops.all_specs() for overload in (*spec.impls, *spec.api)}


def _no_launch_reason(spec, case) -> str | None:
    return spec.no_launch.get(case.variant) or spec.no_launch.get("*")


def _undeclared_dtypes(spec, sample) -> list[str]:
    return sorted({dtype_name(t.dtype) for t in tensors_of(sample.args) if t.dtype not in spec.dtypes})
