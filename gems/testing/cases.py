"""What a conformance case is and what it runs on: the case and its result record, listing an operator's
cases, building a case's sample under its seed (made on the CPU and moved to a device without ATen kernels),
copies of its inputs on another device or dtype (storage, offsets and strides kept), the generators it
draws from, and comparing results' layouts. The runner is :mod:`gems.testing.conformance`."""

from __future__ import annotations

import zlib
from dataclasses import asdict, dataclass, field, replace

import torch

from gems.runtime import registration, selection
from gems.spec import OpSpec, Sample
from gems.testing.samples_harness import harness_samples

STATUSES = ("pass", "fail", "error", "unsupported", "fallback", "xfail", "xpass")


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).replace("torch.", "")


@dataclass(frozen=True)
class Case:
    op: str
    dtype: torch.dtype
    variant: str

    @property
    def id(self) -> str:
        return f"{self.op}::{dtype_name(self.dtype)}::{self.variant}"

    @property
    def seed(self) -> int:
        return zlib.crc32(self.id.encode())


@dataclass
class CaseResult:
    id: str
    op: str
    dtype: str
    variant: str
    status: str
    overload: str = ""
    rule: str | None = None
    message: str = ""
    seed: int = 0
    shapes: list = field(default_factory=list)
    strides: list = field(default_factory=list)
    max_abs_err: float = 0.0
    max_rel_err: float = 0.0
    mismatch_pct: float = 0.0
    max_ulp: float = 0.0
    tolerance: dict = field(default_factory=dict)
    duration_s: float = 0.0
    repro: str = ""
    launches: int = 0  # gems kernel launches while gems served the case
    aten_ops: dict = field(default_factory=dict)  # ATen operators called inside gems implementations -> calls

    def to_json(self) -> dict:
        return asdict(self)


def list_cases(specs, dtypes=None, quick=True) -> list[Case]:
    """Every (operator, dtype, variant), found by generating samples on the meta device."""
    cases = []
    for spec in specs:
        for dtype in spec.dtypes:
            if dtypes and dtype not in dtypes:
                continue
            for sample in harness_samples(spec, dtype, "meta", quick):
                cases.append(Case(spec.name, dtype, sample.variant))
    ids = [c.id for c in cases]
    if len(set(ids)) != len(ids):
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        raise ValueError(f"sample variants are not unique within an operator: {dupes[:5]}")
    return cases


def copy_tensor(t: torch.Tensor, dtype=None, device=None) -> torch.Tensor:
    """A fresh tensor with the same values and, on the same device and dtype, the same strides."""
    if dtype is None and device is None:
        copy = torch.empty_strided(t.size(), t.stride(), dtype=t.dtype, device=t.device)
        copy.copy_(t.detach())
    else:
        copy = t.detach().to(device=device, dtype=dtype)
    return copy.requires_grad_(t.requires_grad)


def copy_args(value, device=None, dtype=None):
    """Fresh copies of the tensors in (nested) args, storage by storage: each keeps its strides and storage
    offset, and arguments that share memory still share it, so views with an offset (``a[1:]``), expanded
    and overlapping inputs reach the operator as the sample built them. device: where the copies go (by
    default where each tensor is: a device without ATen kernels gets samples made on the CPU this way);
    dtype: a function of a tensor's dtype giving its copy's (the oracle's float64), values converted."""
    storages = {}

    def copy(t):
        to_device = t.device if device is None else torch.device(device)
        to_dtype = t.dtype if dtype is None else dtype(t.dtype)
        storage = t.untyped_storage()
        if t.layout != torch.strided or t.is_conj() or t.is_neg() or storage.nbytes() % t.element_size():
            return copy_tensor(t, to_dtype, to_device)  # no storage to share as is
        key = (storage.data_ptr(), storage.nbytes(), t.dtype) if storage.nbytes() else id(t)
        if key not in storages:
            base = torch.empty(0, dtype=t.dtype, device=t.device).set_(storage)
            fresh = torch.empty_like(base, device=to_device).copy_(base)  # the same bytes, on the target device
            storages[key] = fresh.to(to_dtype).untyped_storage()  # converted there (the oracle's, on the CPU)
        copied = torch.empty(0, dtype=to_dtype, device=to_device)
        copied.set_(storages[key], t.storage_offset(), t.shape, t.stride())
        return copied.requires_grad_(t.requires_grad)

    return map_tensors(value, copy)


def build_sample(spec: OpSpec, case: Case, device: str, quick: bool) -> Sample:
    """The case's sample, made under its seed by ATen; on a device without ATen kernels, made on the CPU
    and moved."""
    seed_generators(case.seed, device)
    made_on = device if selection.current().capabilities.aten_kernels else "cpu"
    with registration.aten_only():
        sample = next(s for s in harness_samples(spec, case.dtype, made_on, quick) if s.variant == case.variant).built()
    if made_on != device:
        sample = replace(sample, args=copy_args(sample.args, device), kwargs=copy_args(sample.kwargs, device))
    return sample


def oracle_dtype(dtype):
    if dtype.is_complex:
        return torch.complex128
    return torch.float64 if dtype.is_floating_point else dtype


def map_tensors(value, fn):
    if isinstance(value, torch.Tensor):
        return fn(value)
    if isinstance(value, (tuple, list)):
        return type(value)(map_tensors(v, fn) for v in value)
    if isinstance(value, dict):
        return {k: map_tensors(v, fn) for k, v in value.items()}
    return value


def tensors_of(value) -> list:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in tensors_of(v)]
    return []


def seed_generators(seed: int, device: str) -> None:
    """torch.manual_seed for the generators a case on ``device`` draws from: the CPU's default generator and
    the device's. torch.manual_seed itself also queues a seeding of every backend not yet initialized (CUDA,
    XPU, MTIA), each recording a stack trace for its error message: about 2 ms a case, 10% of a CPU run."""
    torch.default_generator.manual_seed(seed)
    kind = torch.device(device).type
    module = getattr(torch, kind, None)  # torch.cuda, or the module a PrivateUse1 backend registers
    if kind != "cpu" and hasattr(module, "manual_seed_all"):
        module.manual_seed_all(seed)


def reseed(sample: Sample, seed: int, device: str) -> None:
    """The default generators (:func:`seed_generators`) and every generator the sample passes, seeded anew."""
    seed_generators(seed, device)
    for value in (*sample.args, *sample.kwargs.values()):
        if isinstance(value, torch.Generator):
            value.manual_seed(seed)


def generator_states(sample: Sample, device: str) -> list:
    """The states of every generator a random sample may draw from (get_state reads no device memory)."""
    generators = [torch.default_generator]
    module = getattr(torch, torch.device(device).type, None)
    if device != "cpu" and getattr(module, "default_generators", None):
        generators += list(module.default_generators)
    generators += [v for v in (*sample.args, *sample.kwargs.values()) if isinstance(v, torch.Generator)]
    return [g.get_state() for g in generators]


def layout_differs(gems_outs, aten_outs, strides: bool = True) -> str:
    """What differs between the results' shapes, dtypes and strides (strides of dims of size > 1; not
    compared with strides=False: ATen on the CPU standing in for a device got contiguous copies of views)."""
    if len(gems_outs) != len(aten_outs):
        return f"{len(gems_outs)} outputs, ATen gives {len(aten_outs)}"
    for i, (g, a) in enumerate(zip(gems_outs, aten_outs)):
        layout = [(g.shape, a.shape, "shape"), (g.dtype, a.dtype, "dtype")]
        if strides:
            layout.append(([s for s, n in zip(g.stride(), g.shape) if n > 1],
                           [s for s, n in zip(a.stride(), a.shape) if n > 1], "strides"))
        for mine, theirs, what in layout:
            if mine != theirs:
                return f"output {i}: {what} {mine} differs from ATen's {theirs}"
    return ""
