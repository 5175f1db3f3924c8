"""Samples the harness derives from every declaration, so that no family has to hand-pick them.

- **A wrong-dtype ``out=``** for each ``out=`` overload an operator declares: the sample that expects the
  overload runs again, its (first) out tensor swapped, where the overload is dispatched, for an empty one of
  a dtype its result cannot be cast to (a float result into int32, an integer one into bool; a bool result
  can go anywhere, into float32 then). ATen refuses such an out=, and gems must refuse it with the same
  exception type; where ATen accepts (a factory writes any dtype), gems must write what ATen writes. An
  operator whose ATen answer comes from a reference composite (no ATen kernel) gets none.
- **The backward under every forward keyword**: a forward keyword argument (attention's ``scale=``,
  addmm's ``alpha``) that no gradient sample passes is added to the first gradient sample.
- **A call that changes only a Python number** (:func:`numbers_changed`): the conformance runner calls it
  after the warm call, so a native plan that kept the first call's number shows.

Each derived sample is listed under one dtype (float32 where the operator declares it): the point is the
harness path, not the dtype, and the quick suite's time stays where it was.
"""

from __future__ import annotations

import math
from dataclasses import replace

import torch

from gems.spec import OpSpec, Sample
from gems.testing.proof import EagerMode, overload_name, schema_of
from gems.testing.samples import REJECT_HOST_DTYPE, is_out_call

# Forward keyword values a gradient sample may take over (tensor keywords depend on the other sample's shapes).
_PLAIN = (bool, int, float, str, type(None))


def host_dtype(spec: OpSpec) -> torch.dtype:
    """The one dtype under which an operator's derived samples and changed-number calls run."""
    return REJECT_HOST_DTYPE if REJECT_HOST_DTYPE in spec.dtypes else spec.dtypes[0]


def harness_samples(spec: OpSpec, dtype: torch.dtype, device, quick: bool) -> list[Sample]:
    """The declaration's samples, then the ones derived from them (wrong-dtype out=, backward keywords)."""
    samples = spec.samples(dtype, device, quick)
    if dtype != host_dtype(spec):
        return samples
    taken = {s.variant for s in samples}
    derived = _wrong_out_dtype_samples(spec, samples) + _grad_keyword_samples(spec, samples)
    return samples + [s for s in derived if s.variant not in taken]


def _plain(sample: Sample) -> bool:
    """A sample whose outputs an oracle judges (not an error, a tie check or a random draw)."""
    return not (sample.variant.startswith("error") or sample.tie_check or sample.random is not None)


def _out_argument(schema) -> str | None:
    return next((a.name for a in schema.arguments if a.kwarg_only and a.alias_info is not None
                 and a.alias_info.is_write), None)


def _out_overloads(spec: OpSpec) -> list[str]:
    return [o for o in spec.impls if _out_argument(schema_of(o))]


def _expected(spec: OpSpec, sample: Sample) -> tuple:
    if sample.expects is None:
        return (spec.overloads[0],)
    return (sample.expects,) if isinstance(sample.expects, str) else tuple(sample.expects)


def _wrong_out_dtype_samples(spec, samples) -> list[Sample]:
    if spec.reference is not None:  # ATen's answer comes from a composite without out= (no ATen kernel to refuse)
        return []
    overloads = _out_overloads(spec)
    derived = []
    for overload in overloads:
        source = next((s for s in samples if _plain(s) and overload in _expected(spec, s)), None)
        if source is not None:
            variant = "wrong-out-dtype" + (f"-{overload}" if len(overloads) > 1 else "")
            derived.append(replace(source, variant=variant, call=WrongOutDtype(source.call, overload, spec.call),
                                   grad=False))
    return derived


def _grad_keyword_samples(spec, samples) -> list[Sample]:
    grads = [s for s in samples if s.grad and _plain(s)]
    if not grads:
        return []
    passed = {k for s in grads for k in s.kwargs}
    # Keywords of a sample with the gradient sample's own call only: another callable's keywords (F.pad's
    # mode= beside constant_pad_nd) are not this call's.
    functional = [s for s in samples if not s.grad and _plain(s) and not is_out_call(s.call)
                  and s.call is grads[0].call
                  and not any(o.split(".")[0].endswith("_") for o in _expected(spec, s))]
    # The gradient sample's backward overloads stay expected; its forward one becomes the keyword sample's
    # (a keyword may choose another overload: round(decimals=) is round.decimals).
    forward = {o for s in samples if not s.grad for o in _expected(spec, s)}
    backward = tuple(o for o in _expected(spec, grads[0]) if o not in forward)
    derived, added = [], set()
    for source in functional:
        keywords = {k: v for k, v in source.kwargs.items() if isinstance(v, _PLAIN)}
        missing = sorted(set(keywords) - passed - added)
        if missing:
            added.update(missing)
            derived.append(replace(grads[0], variant="grad-" + "-".join(missing),
                                   kwargs={**grads[0].kwargs, **keywords}, call=KeywordsFit(grads[0].call, spec.call),
                                   expects=(*_expected(spec, source), *backward)))
    return derived


def _wrong_dtype(dtype: torch.dtype) -> torch.dtype:
    """A dtype a result of ``dtype`` cannot be cast to (bool casts to anything: float32 then)."""
    if dtype.is_floating_point or dtype.is_complex:
        return torch.int32
    return torch.float32 if dtype == torch.bool else torch.bool


class _SwapOut(EagerMode):
    """Where ``overload`` is dispatched, its first out tensor becomes an empty one of a wrong dtype."""

    def __init__(self, overload: str):
        super().__init__()
        self.overload, self.result, self.swapped = overload, None, False

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if self.swapped or overload_name(func) != self.overload:
            return func(*args, **kwargs)
        name = _out_argument(func._schema)
        outs = kwargs[name]
        first = outs[0] if isinstance(outs, (tuple, list)) else outs
        wrong = torch.empty(0, dtype=_wrong_dtype(first.dtype), device=first.device)
        kwargs[name] = type(outs)([wrong, *outs[1:]]) if isinstance(outs, (tuple, list)) else wrong
        self.swapped = True
        self.result = func(*args, **kwargs)
        return self.result


class WrongOutDtype:
    """A sample's call with a wrong-dtype out= (see the module docstring); returns what the out= overload
    returned. A sample whose call never reaches the overload is the harness's error, said as such."""

    def __init__(self, call, overload: str, spec_call):
        self.call, self.overload, self.spec_call = call, overload, spec_call

    def __call__(self, *args, **kwargs):
        with _SwapOut(self.overload) as swap:
            if is_out_call(self.call):  # the out= the conformance runner would make, made here from the result
                result = self.spec_call(*args, **kwargs)
                like = [torch.empty(0, dtype=t.dtype, device=t.device)
                        for t in (result if isinstance(result, (tuple, list)) else (result,))]
                self.spec_call(*args, **kwargs, out=like[0] if len(like) == 1 else tuple(like))
            else:
                (self.call or self.spec_call)(*args, **kwargs)
        if not swap.swapped:
            raise HarnessError(f"the sample never called {self.overload}: no out= to make wrong")
        return swap.result

    def __repr__(self):
        return f"wrong-out-dtype({self.overload})"


class KeywordsFit:
    """A gradient sample's call given another sample's keywords: a TypeError (the keyword is already given
    by position, or the call takes no such keyword) is the harness's error, never a verdict (ATen and gems
    would both raise it and the case would pass without computing)."""

    def __init__(self, call, spec_call):
        self.call, self.spec_call = call, spec_call

    def __call__(self, *args, **kwargs):
        try:
            return (self.call or self.spec_call)(*args, **kwargs)
        except TypeError as exc:
            raise HarnessError(f"the gradient sample's call does not take these keywords: {exc}") from exc

    def __repr__(self):
        return f"keywords-fit({self.call or self.spec_call})"


class HarnessError(Exception):
    """A derived sample that does not fit its operator (reported as an error, never as a verdict)."""


def numbers_changed(sample: Sample) -> tuple[Sample, str] | None:
    """The sample with every Python number among its arguments and keywords changed (an int by one, a
    float by half of itself), and what changed; None when it has none to change. bool is not a number
    here, nor is a tensor; zeros and non-finite floats are kept."""
    changes = []

    def change(value):
        # A zero often turns something off (dropout_p, a padding value, weight decay): changing it changes
        # what the call does, not only a number. Infinities and NaN stay what they are too.
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value == 0 or not math.isfinite(value):
            return value
        new = value + 1 if isinstance(value, int) else value * 1.5
        changes.append(f"{value!r} -> {new!r}")
        return new

    args = tuple(change(a) for a in sample.args)
    kwargs = {k: change(v) for k, v in sample.kwargs.items()}
    return (replace(sample, args=args, kwargs=kwargs), ", ".join(changes)) if changes else None
