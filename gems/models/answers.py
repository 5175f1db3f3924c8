"""Answers: how far ATen's and gems' runs of a model are from a higher-precision reference.

The same weights run three times: the reference (float64 on the CPU, or float32 on the device for sizes the
CPU cannot hold: ``reference_on_device``), ATen in the tested dtype, gems in the tested dtype. For each
quantity (the forward's logits, the loss, every parameter's gradient, a decode step's logits for decoders,
the parameters after one AdamW step) the largest absolute difference from the reference is reported for
ATen and for gems. gems passes where its difference is at most ``RATIO`` times ATen's own, plus a floor of a
few units of the dtype's rounding at the reference's scale (so that float32 runs, where both differences are
rounding noise, are not judged on the noise's ratio). On a device with no ATen kernels (the simulated one),
ATen's answer comes from the CPU in the same dtype. With ``--patched``, a fourth copy runs under gems.patch
and is judged by the same rule (its forward given labels computes the loss without logits: the logits are
then those of a forward without labels).
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import asdict, dataclass

import torch

from gems.models.build import DECODER, ModelSpec, cache_argument, placed, returned_cache

RATIO = 1.5  # the "within ATen's own error"
# Rounding floors: a few ulps of the dtype at the reference's scale.
FLOOR = {torch.float64: 1e-12, torch.float32: 1e-5, torch.float16: 4 * 2.0 ** -11, torch.bfloat16: 4 * 2.0 ** -8}
LEARNING_RATE = 1e-3
# AdamW's first step moves a parameter by lr * g / (|g| + eps): for a gradient within a few eps of zero,
# rounding noise in g (a sum order, within the gradients' own check) moves that step by a part of lr. Measured on
# an H200 (tiny llama, float32, 2026-11-26): 1.48e-5 where ATen's own run was the float32 reference itself.
ADAM_STEP_FLOOR = 0.02 * LEARNING_RATE


@dataclass
class Answer:
    quantity: str     # "logits", "loss", "gradients", "decode logits", "parameters after AdamW"
    aten_error: float
    gems_error: float
    scale: float      # the reference's largest magnitude
    floor: float      # the rounding floor at that scale
    worst: str = ""   # for gradients and parameters: the parameter with gems' largest difference
    patched_error: float | None = None  # --patched: the patched model's (gems.patch) difference
    patched_worst: str = ""

    @property
    def allowed(self) -> float:
        return RATIO * self.aten_error + self.floor

    def _within(self, error: float) -> bool:
        return math.isfinite(error) and error <= self.allowed

    def ok(self) -> bool:
        return self._within(self.gems_error) and (self.patched_error is None or self._within(self.patched_error))

    def as_dict(self) -> dict:
        found = asdict(self)
        if self.patched_error is None:  # a run without --patched writes what it always wrote
            del found["patched_error"], found["patched_worst"]
        else:
            found["patched_ok"] = self._within(self.patched_error)
        return {**found, "allowed": self.allowed, "ok": self.ok()}


def make_inputs(spec: ModelSpec, batch: int, tokens: int, seed: int = 1) -> dict:
    """Token ids (and for encoders a padding mask: the last row's final quarter is padding), on the CPU."""
    generator = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, spec.config.vocab_size, (batch, tokens), generator=generator)
    inputs = {"input_ids": ids, "labels": ids.clone()}
    if spec.kind != DECODER:
        mask = torch.ones(batch, tokens, dtype=torch.long)
        mask[-1, tokens - max(1, tokens // 4):] = 0
        inputs["attention_mask"] = mask
    return inputs


def _on(inputs: dict, device) -> dict:
    return {k: v.to(device) for k, v in inputs.items()}


def _run(model, spec: ModelSpec, inputs: dict) -> dict[str, object]:
    """Forward with labels, backward, a decode step (decoders), one AdamW step: every quantity, as the model
    left it (:func:`_to_reference_form` brings it to the CPU in float64, outside any trace)."""
    model.zero_grad(set_to_none=True)
    out = model(**inputs)
    out.loss.backward()
    logits = out.logits
    if logits is None:  # a patched model's fused loss: the logits come from a forward without labels
        with torch.no_grad():
            logits = model(**{k: v for k, v in inputs.items() if k != "labels"}).logits
    found = {"logits": logits, "loss": out.loss,
             "gradients": {n: p.grad for n, p in model.named_parameters() if p.grad is not None}}
    if spec.kind == DECODER:
        with torch.no_grad():
            prefix = model(input_ids=inputs["input_ids"], use_cache=True)
            step = model(input_ids=inputs["input_ids"][:, :1], use_cache=True,
                         **{cache_argument(model): returned_cache(prefix)})
        found["decode logits"] = step.logits
    optimizer = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE, foreach=True)
    optimizer.step()
    found["parameters after AdamW"] = dict(model.named_parameters())
    return found


def _to_reference_form(value):
    if isinstance(value, dict):
        return {k: _to_reference_form(v) for k, v in value.items()}
    return value.detach().to("cpu", torch.float64)


def _largest_difference(found, reference) -> tuple[float, str]:
    if isinstance(reference, dict):
        worst = (0.0, "")
        for name, ref in reference.items():
            err, _ = _largest_difference(found[name], ref)
            if not (err <= worst[0]):  # NaN wins too
                worst = (err, name)
        return worst
    if found.shape != reference.shape:
        return math.inf, f"shape {tuple(found.shape)} instead of {tuple(reference.shape)}"
    diff = (found - reference).abs()
    return (float(diff.max()) if diff.numel() else 0.0), ""


def _scale(reference) -> float:
    if isinstance(reference, dict):
        return max((_scale(v) for v in reference.values()), default=0.0)
    return float(reference.abs().max()) if reference.numel() else 0.0


def check(model: torch.nn.Module, spec: ModelSpec, dtype: torch.dtype, device: str, aten_context, gems_context,
          aten_on_device: bool = True, reference_on_device: bool = False, trace=None, seed: int = 1,
          batch_tokens: tuple[int, int] | None = None, patching=None) -> list[Answer]:
    """Run the reference, ATen and gems on copies of ``model`` (float32 on the CPU) and compare.

    aten_context / gems_context: context managers under which ATen's and gems' kernels serve the device.
    trace: a context manager entered around gems' run (the coverage trace), or None.
    patching: a :class:`gems.models.patched.Patching` for a patched copy under gems too, or None.
    """
    batch, tokens = batch_tokens or spec.workloads.answers
    inputs = make_inputs(spec, batch, tokens, seed)
    ref_device, ref_dtype = (device, torch.float32) if reference_on_device else ("cpu", torch.float64)
    with aten_context():
        reference = _to_reference_form(_run(placed(model, ref_dtype, ref_device), spec,
                                            _on(inputs, ref_device)))
    aten_device = device if aten_on_device else "cpu"
    with aten_context():
        aten = _to_reference_form(_run(placed(model, dtype, aten_device), spec,
                                       _on(inputs, aten_device)))
    tested = placed(model, dtype, device)
    device_inputs = _on(inputs, device)
    with gems_context(), (trace if trace is not None else contextlib.nullcontext()):
        gems = _run(tested, spec, device_inputs)
    gems = _to_reference_form(gems)
    patched = None
    if patching is not None:
        patched_model = patching.apply(placed(model, dtype, device))
        with gems_context():
            patched = _to_reference_form(_run(patched_model, spec, device_inputs))
    answers = []
    for quantity, ref in reference.items():
        aten_err, _ = _largest_difference(aten[quantity], ref)
        gems_err, worst = _largest_difference(gems[quantity], ref)
        scale = _scale(ref)
        floor = FLOOR.get(dtype, 0.0) * max(scale, 1.0)
        if quantity == "parameters after AdamW":
            floor = max(floor, ADAM_STEP_FLOOR)
        answer = Answer(quantity, aten_err, gems_err, scale, floor, worst)
        if patched is not None:
            answer.patched_error, answer.patched_worst = _largest_difference(patched[quantity], ref)
        answers.append(answer)
    return answers
