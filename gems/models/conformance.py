"""Model cases of the conformance suite: each preset at its tiny size (quick mode) or small size (full mode),
in float32 and bfloat16, judged like an operator case and listed in the support matrix as ``model_<preset>``.

A model case passes when gems' answers are within ATen's own error (:mod:`gems.models.answers`) AND gems
served every compute call the model dispatched (forward, backward, a decode step, an AdamW step): the proof
that gems, not ATen, computed the model. On a device with no ATen kernels (the simulated one) an unserved call
raises at once, naming the overload.
"""

from __future__ import annotations

import contextlib
import time

import torch

from gems.models import answers, build, presets
from gems.testing.conformance import Case, CaseResult, dtype_name

PREFIX = "model_"
DTYPES = (torch.float32, torch.bfloat16)


def names() -> list[str]:
    return [f"{PREFIX}{name}" for name in presets.PRESETS]


def list_cases(wanted=None, dtypes=None, quick: bool = True) -> list[Case]:
    """The model cases among ``wanted`` names (all when None), in ``dtypes`` (all of DTYPES when None)."""
    size = "tiny" if quick else "small"
    return [Case(name, dtype, size) for name in names() if wanted is None or name in wanted
            for dtype in DTYPES if dtypes is None or dtype in dtypes]


def run_case(case: Case, backend, repro: str = "") -> CaseResult:
    import gems
    from gems.perf.runner import gems_off

    started = time.perf_counter()
    result = CaseResult(id=case.id, op=case.op, dtype=dtype_name(case.dtype), variant=case.variant, status="fail",
                        seed=case.seed, repro=repro)
    try:
        spec = build.from_preset(case.op.removeprefix(PREFIX), case.variant)
        model = build.build(spec, seed=case.seed % 2**31)
        trace = gems.trace(backend.device)
        found = answers.check(model, spec, case.dtype, backend.device, lambda: gems_off(backend.dispatch_key),
                              contextlib.nullcontext, aten_on_device=backend.capabilities.aten_kernels,
                              reference_on_device=backend.device == "cuda", trace=trace, seed=case.seed % 2**31)
        _judge(result, found, trace)
    except Exception as exc:  # a crash in gems is a result, not a harness failure
        result.status, result.message = "error", f"{type(exc).__name__}: {exc}"
    result.duration_s = round(time.perf_counter() - started, 4)
    return result


def _judge(result: CaseResult, found: list, trace) -> None:
    wrong = [a for a in found if not a.ok()]
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
