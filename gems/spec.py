"""The one declaration per operator that conformance, perf and the support matrix all read."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

import torch

TOLERANCE_CLASSES = ("pointwise", "reduction", "exact")
FAMILIES = ("pointwise", "creation", "reduction", "normalization", "blas", "tensor", "random", "loss", "fused",
            "sort", "attention", "conv", "compaction", "optim", "indexing", "pooling")


@dataclass
class Sample:
    """One input to an operator, and how to call it.

    variant: a short name unique within the operator ("contiguous", "broadcast", "out", ...).
    args: the positional arguments, or a function of no arguments that makes them. A builder is what
        keeps listing cases and running one case cheap: only the case that runs makes its tensors
        (:meth:`built`), with its own seed.
    call: what runs (defaults to the declaration's ``call``); it gets ``*args, **kwargs``.
    expects: the ATen overload that must run through gems (defaults to the first declared one).
    reduction_size: elements combined per output value; tolerances for reductions grow with it.
    grad: also check the gradient of every floating input that requires grad.
    tie_check: for a result whose order among equal values is unspecified (unstable sort, topk): a
        function (args, kwargs, outputs) -> '' when gems' last output (the indices) is a valid answer,
        else what is wrong (args: CPU copies). The last output is then judged by it instead of by the
        oracle, and the others are compared with the oracle without the sign-of-zero check against
        ATen (equal zeros of either sign may come in either order; the function checks bits).
    random: for a result drawn at random, a ``gems.testing.draws.Draw``: a statistical verdict on gems'
        outputs given the inputs replaces the comparison with the oracle (ATen draws other numbers); the
        results must still have ATen's shapes, dtypes and strides, repeat under the same seed and change
        on the next call.
    reference: for a call that ATen has no kernel for on the device (CUDA's fused attention overloads on CPU
        tensors): a function of the same arguments that gives ATen's answer in its place (and the oracle's, for a
        sample that is not random), such as ATen's meta function of the call. Only its shapes and dtypes are
        compared with gems' results, not its strides (a meta function's strides need not be a kernel's).
    """

    variant: str
    args: tuple | Callable[[], tuple]
    kwargs: dict = field(default_factory=dict)
    call: Callable | None = None
    expects: str | None = None
    reduction_size: int = 1
    grad: bool = False
    tie_check: Callable | None = None
    random: object | None = None
    reference: Callable | None = None

    def built(self) -> Sample:
        """This sample with its arguments made (a builder is called here, once per call)."""
        return replace(self, args=tuple(self.args())) if callable(self.args) else self


def lazy(module: str, name: str, *args, **kwargs) -> Callable:
    """``module.name(*args, **kwargs)``, imported and made on first call, then called with the call's
    arguments: declarations name their sample generators without importing gems.testing, so
    registering operators loads no test code. ``samples=lazy("gems.testing.samples", "unary_samples",
    out="abs.out")``."""
    make = _made_on_first_use(module, name, args, kwargs)

    def call(*call_args, **call_kwargs):
        return make()(*call_args, **call_kwargs)

    call.__qualname__ = f"lazy({module}.{name})"
    return call


def _made_on_first_use(module, name, args, kwargs) -> Callable:
    made = []

    def make():
        if not made:
            made.append(getattr(importlib.import_module(module), name)(*args, **kwargs))
        return made[0]

    return make


def lazy_perf(module: str, name: str, *args, shapes: str, **kwargs) -> PerfSpec:
    """The :class:`PerfSpec` that ``module.name(*args, shapes=shapes, **kwargs)`` makes, imported on first
    use: declarations name their perf input builders without importing gems.testing (the shapes key is
    known at once, for perf/shapes.yaml). ``perf=lazy_perf("gems.testing.perf_inputs", "pointwise_perf",
    2, shapes="pointwise")``."""
    made = _made_on_first_use(module, name, args, {**kwargs, "shapes": shapes})

    def inputs(shape, dtype, device):
        return made().inputs(shape, dtype, device)

    def work(field_name):
        def formula(sample, result):
            fn = getattr(made(), field_name)
            return fn(sample, result) if fn else None

        return formula

    return PerfSpec(inputs=inputs, shapes=shapes, bytes=work("bytes"), flops=work("flops"))


@dataclass(frozen=True)
class PerfSpec:
    """How to benchmark an operator.

    inputs(shape, dtype, device) -> Sample; shapes come from perf/shapes.yaml under ``shapes``
    (an operator name or a family-wide key). bytes(sample, result) and flops(sample, result) give the
    work per call for GB/s and TFLOP/s.
    """

    inputs: Callable
    shapes: str
    bytes: Callable | None = None
    flops: Callable | None = None


@dataclass(frozen=True)
class OpSpec:
    """An operator: its ATen overloads and implementations, and how to test and time it.

    name: the operator's name in reports, ``--ops`` and pytest markers.
    impls: ATen overload ("add.Tensor", "add_.Tensor", "add.out") -> gems implementation.
    call: the torch-level call that samples use by default (``torch.add``).
    samples(dtype, device, quick) -> list[Sample]: conformance inputs, every variant that applies.
    deliberate_fallbacks: {variant: reason} for cases that are meant to run ATen's kernel.
    known_failures: {(vendor or "*", dtype name or "*", variant or "*"): reason}; such cases are
        expected to fail and turn red once they pass, so the record is kept true. A vendor inherits the
        entries of the vendors it is built on (its base chain, as far as they share its ATen).
    skips: the same keys, for cases that cannot run at all on a vendor (ATen itself crashes there);
        they are reported as unsupported with the reason.
    autograd_enabled: overloads of ``impls`` that bring their own backward (a torch.autograd.Function)
        and are registered with ``Autograd.enable``, under Autograd<key>, where a CompositeImplicitAutograd
        kernel would otherwise decompose them (rms_norm).
    api: a gems Python API that serves no ATen overload (``gems.fused``): {"gems.fused.name": function}.
        Its calls are counted under that name, as registered overloads are, so proof of execution works.
    reference: for an ``api`` operator, the eager PyTorch composite that computes the same thing: ATen's
        result and the float64 oracle come from it, in place of the sample's call.
    no_launch: {variant or "*": reason} for results no gems kernel needs to compute (a view, an
        in-place no-op); elsewhere a non-empty result with no kernel launch fails its case.
    varies_between_runs: {variant or "*": reason} for cases whose gems outputs may differ in their last bits
        from one call to the next (float sums in the order atomics land, as ATen's own CUDA kernel): the warm
        call is then judged against the oracle like the cold one, not bit for bit.
    composite_of: for an operator whose every ATen overload is CompositeImplicitAutograd (quantile), so that
        gems registers none: the overloads, declared by other operators, that its calls decompose into and
        that prove gems ran (its samples expect them; perf registers them).
    aten_decisions: {ATen operator ("aten.eq.Scalar"): reason} that the implementations may call to decide
        (a check that raises, a path to take); any other ATen operator that computes inside a gems
        implementation fails its case, and an allowed one still fails it where its values reach a result.
    fixed_numbers: {variant or "*": reason} for cases whose Python numbers must agree with their tensors'
        shapes (sizes ATen does not check and reads past), so that the call with only its numbers changed
        (gems.testing.samples_harness.numbers_changed) is left out for them.
    """

    name: str
    family: str
    impls: Mapping[str, Callable]
    call: Callable
    samples: Callable
    dtypes: tuple
    tolerance: str = "pointwise"
    perf: PerfSpec | None = None
    deliberate_fallbacks: Mapping[str, str] = field(default_factory=dict)
    known_failures: Mapping[tuple, str] = field(default_factory=dict)
    skips: Mapping[tuple, str] = field(default_factory=dict)
    autograd_enabled: tuple = ()
    api: Mapping[str, Callable] = field(default_factory=dict)
    reference: Callable | None = None
    no_launch: Mapping[str, str] = field(default_factory=dict)
    varies_between_runs: Mapping[str, str] = field(default_factory=dict)
    composite_of: tuple = ()
    aten_decisions: Mapping[str, str] = field(default_factory=dict)
    fixed_numbers: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self):
        problems = []
        if not self.name or not self.name.replace("_", "").isalnum():
            problems.append("name must be a non-empty identifier")
        if self.family not in FAMILIES:
            problems.append(f"family {self.family!r} is not one of {FAMILIES}")
        if not self.impls and not self.api and not self.composite_of:
            problems.append("impls is empty: declare at least one ATen overload (or a gems API in api, or the "
                            "overloads a composite operator decomposes into in composite_of)")
        if self.composite_of and (self.impls or self.api):
            problems.append("composite_of is for operators that declare no impls or api of their own")
        for overload in self.autograd_enabled:
            if overload not in self.impls:
                problems.append(f"autograd_enabled names {overload!r}, which impls does not declare")
        for name, fn in self.api.items():
            if not callable(fn) or name in self.impls:
                problems.append(f"api[{name!r}] must be a callable that is not an ATen overload")
        if self.api and not callable(self.reference):
            problems.append("an api operator needs a reference (its eager PyTorch composite)")
        for overload, fn in self.impls.items():
            if not callable(fn):
                problems.append(f"impls[{overload!r}] is not callable")
            if not _aten_overload_exists(overload):
                problems.append(f"impls names {overload!r}, which is not an ATen overload")
        if not callable(self.call) or not callable(self.samples):
            problems.append("call and samples must be callables")
        if not self.dtypes or not all(isinstance(d, torch.dtype) for d in self.dtypes):
            problems.append("dtypes must be a non-empty tuple of torch dtypes")
        if self.tolerance not in TOLERANCE_CLASSES:
            problems.append(f"tolerance {self.tolerance!r} is not one of {TOLERANCE_CLASSES}")
        for key in (*self.known_failures, *self.skips):
            if not (isinstance(key, tuple) and len(key) == 3):
                problems.append(f"known_failures/skips key {key!r} must be (vendor, dtype, variant)")
        for name, reason in self.aten_decisions.items():
            if not (name.startswith("aten.") and isinstance(reason, str) and reason):
                problems.append(f"aten_decisions[{name!r}] must name an operator (aten.<op>.<overload>) and a reason")
        if problems:
            raise ValueError(f"operator declaration {self.name!r} is incomplete: " + "; ".join(problems))

    @property
    def overloads(self) -> tuple[str, ...]:
        """The ATen overloads, then the gems API names: everything whose calls prove gems ran (for a
        composite operator, the overloads it decomposes into)."""
        return (*self.impls, *self.api) or tuple(self.composite_of)

    def known_failure(self, vendor: str, dtype: torch.dtype, variant: str) -> str | None:
        return _lookup(self.known_failures, vendor, dtype, variant)

    def skip_reason(self, vendor: str, dtype: torch.dtype, variant: str) -> str | None:
        return _lookup(self.skips, vendor, dtype, variant)


def _lookup(table, vendor, dtype, variant):
    """A declared entry keyed by ``vendor``, by a vendor it inherits expectations from (its base chain:
    :func:`gems.runtime.selection.expectation_chain`), or by "*"."""
    if table:
        from gems.runtime.selection import expectation_chain

        vendors = {"*", *expectation_chain(vendor)}
        dtype_name = str(dtype).replace("torch.", "")
        for (v, d, var), reason in table.items():
            if v in vendors and d in ("*", dtype_name) and var in ("*", variant):
                return reason
    return None


def _aten_overload_exists(overload: str) -> bool:
    name, _, variant = overload.partition(".")
    packet = getattr(torch.ops.aten, name, None)
    if packet is None:
        return False
    return (variant or "default") in packet.overloads()
