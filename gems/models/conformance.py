"""Model cases of the conformance suite: each preset at its tiny size (quick mode) or small size (full mode),
in float32 and bfloat16, judged like an operator case and listed in the support matrix as ``model_<preset>``.

A model case passes when gems' answers are within ATen's own error (:mod:`gems.models.answers`) AND gems
served every compute call the model dispatched (forward, backward, a decode step, an AdamW step): the proof
that gems, not ATen, computed the model. On a device with no ATen kernels (the simulated one) an unserved call
raises at once, naming the overload.

``model_<preset>_patched`` cases run the same check with a copy of the model under gems.patch (fused kernels
with their backward) judged by the same rule, and pass only if every fused call ran gems' kernels (no
gems.fused fallback to its composite). They are in the full suite (the GPU's ``small`` size); quick mode runs
them only when named (--ops): CI checks gems.patch on tiny models in tests/test_patch.py, at a fraction of a
second model case's cost.
"""

from __future__ import annotations

import contextlib
import time

import torch

from gems.models import answers, build, presets
from gems.testing.cases import Case, CaseResult, dtype_name

PREFIX = "model_"
PATCHED = "_patched"
DTYPES = (torch.float32, torch.bfloat16)


def names() -> list[str]:
    return [f"{PREFIX}{name}{suffix}" for name in presets.PRESETS for suffix in ("", PATCHED)]


def list_cases(wanted=None, dtypes=None, quick: bool = True) -> list[Case]:
    """The model cases among ``wanted`` names (all when None), in ``dtypes`` (all of DTYPES when None)."""
    size = "tiny" if quick else "small"
    listed = [name for name in names() if name in wanted] if wanted is not None else \
        [name for name in names() if not (quick and name.endswith(PATCHED))]
    return [Case(name, dtype, size) for name in listed for dtype in DTYPES if dtypes is None or dtype in dtypes]


def run_case(case: Case, backend, repro: str = "") -> CaseResult:
    import gems
    from gems.models.patched import Patching
    from gems.patch.forwards import every_call_fused
    from gems.perf.runner import gems_off
    from gems.runtime import registration

    started = time.perf_counter()
    result = CaseResult(id=case.id, op=case.op, dtype=dtype_name(case.dtype), variant=case.variant, status="fail",
                        seed=case.seed, repro=repro)
    try:
        patching = Patching() if case.op.endswith(PATCHED) else None
        spec = build.from_preset(case.op.removeprefix(PREFIX).removesuffix(PATCHED), case.variant)
        model = build.build(spec, seed=case.seed % 2**31)
        trace = gems.trace(backend.device)
        before = dict(registration.fallback_calls)
        # A patched case fuses every call (gems.patch's size threshold aside): it checks each fused kernel.
        with every_call_fused() if patching is not None else contextlib.nullcontext():
            found = answers.check(model, spec, case.dtype, backend.device, lambda: gems_off(backend.dispatch_key),
                                  contextlib.nullcontext, aten_on_device=backend.capabilities.aten_kernels,
                                  reference_on_device=backend.device == "cuda", trace=trace, seed=case.seed % 2**31,
                                  patching=patching)
        _judge(result, found, trace)
        fused_fallbacks = sorted({f"{name}: {why}" for (name, why), n in registration.fallback_calls.items()
                                  if name.startswith("gems.fused.") and n > before.get((name, why), 0)})
        if patching is not None and result.status == "pass" and (fused_fallbacks or not patching.report.patched):
            result.status = "fail"
            result.message = ("the patched model ran a fused operator's composite: " + "; ".join(fused_fallbacks)
                              if fused_fallbacks else f"gems.patch patched nothing: {patching.report}")
    except Exception as exc:  # a crash in gems is a result, not a harness failure
        result.status, result.message = "error", f"{type(exc).__name__}: {exc}"
    result.duration_s = round(time.perf_counter() - started, 4)
    return result


def _judge(result: CaseResult, found: list, trace) -> None:
    wrong = [a for a in found if not a.ok()]  # the patched copy's answers too, in a patched case
    unserved = trace.unserved()
    served, compute = trace.compute_share()
    result.launches = served
    result.max_abs_err = max((a.gems_error for a in found), default=0.0)
    result.overload = ",".join(r.overload for r in unserved)
    answers_text = "; ".join(f"{a.quantity} {a.gems_error:.3g} (ATen {a.aten_error:.3g}, allowed {a.allowed:.3g})"
                             for a in (wrong or found))
    if wrong:
        result.message = f"answers outside ATen's own error: {answers_text}"
    elif unserved:
        result.message = (f"gems served {served} of {compute} compute calls; ATen computed "
                          + ", ".join(f"{r.overload} x{r.calls - r.served['gems']} ({r.verdict})" for r in unserved))
    else:
        result.status, result.rule = "pass", "model"
        result.message = f"all {compute} compute calls served by gems; {answers_text}"
