"""Pointwise operators from one scalar Triton function.

    @triton.jit
    def _add(x, y, alpha):
        return x + y * alpha

    add = PointwiseOp("add", _add, operands=2, scalars=("alpha",))
    add(x, y, alpha=2)                 # any ranks, broadcasting, strides, scalar operands
    add(x, y, alpha=1, out=x)          # out= and in-place overloads

For each combination of (tensor or scalar operands, rank after merging dimensions, contiguity) a
kernel is generated as Python source, written once to the gems cache directory (Triton reads the
source of a kernel) and imported. Loads are upcast to the compute dtype (fp32 for fp16/bf16),
the function is applied, and stores cast to each output's dtype.

Dimensions are reordered by the output's strides and merged where every operand is contiguous
across them, so a transposed or sliced view is walked in memory order with no hidden copy, and a
contiguous tensor of any rank becomes one flat loop.
"""

from __future__ import annotations

import enum
import hashlib
import importlib.util
import os
import sys
import tempfile
from pathlib import Path

import torch
import triton

from gems.runtime import selection
from gems.runtime.launch import Launcher
from gems.runtime.registration import Fallback

CACHE_DIR = Path(os.environ.get("GEMS_CACHE_DIR", Path.home() / ".cache" / "gems")) / "pointwise"
_INT32_LIMIT = 2**31 - 1

_TL_DTYPE = {
    torch.float16: "tl.float16", torch.bfloat16: "tl.bfloat16", torch.float32: "tl.float32",
    torch.float64: "tl.float64", torch.int8: "tl.int8", torch.int16: "tl.int16", torch.int32: "tl.int32",
    torch.int64: "tl.int64", torch.uint8: "tl.uint8", torch.bool: "tl.int1",
}
SUPPORTED_DTYPES = frozenset(_TL_DTYPE)


class Promotion(enum.Enum):
    """How an output's dtype follows from the operands (ATen's rules)."""

    DEFAULT = "default"  # the promoted operand dtype: int + int -> int (add, mul, neg...)
    INT_TO_FLOAT = "int_to_float"  # integers and bool give the default float dtype (exp, sin, div)
    BOOL = "bool"  # always bool (comparisons, isnan...)
    KEEP_FIRST = "keep_first"  # the first operand's dtype (masked_fill, clamp with scalar bounds)


def compute_dtype(dtype: torch.dtype) -> torch.dtype:
    """fp16/bf16 are loaded into fp32 registers: results round once, like ATen's opmath."""
    return torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype


def _is_operand_scalar(value) -> bool:
    return not isinstance(value, torch.Tensor)


class PointwiseOp:
    """A pointwise operator: ``op(*operands, *scalars, out=None)``; see the module docstring.

    operands: how many tensor-or-number operands the function takes first.
    scalars: names of the trailing scalar parameters (alpha, min, max...), always numbers.
    outputs: how many values the function returns.
    promotion: one :class:`Promotion` per output (or one for all).
    promote_operands: indices of the operands that take part in type promotion (default: all);
        the others are loaded as they are (the condition of where, the mask of masked_fill).
    """

    def __init__(self, name, body, operands, scalars=(), outputs=1, promotion=Promotion.DEFAULT,
                 promote_operands=None):
        self.name = name
        self.body = body
        self.num_operands = operands
        self.scalar_names = tuple(scalars)
        self.num_outputs = outputs
        self.promotions = promotion if isinstance(promotion, tuple) else (promotion,) * outputs
        self.promote_operands = tuple(range(operands)) if promote_operands is None else tuple(promote_operands)
        self._launchers = {}

    # ----------------------------------------------------------------- dtypes
    def result_dtypes(self, operands) -> tuple[torch.dtype, tuple]:
        """(dtype operands are promoted to, one dtype per output)."""
        promoted = [operands[i] for i in self.promote_operands]
        first = promoted[0]
        if len(promoted) == 1 and isinstance(first, torch.Tensor):
            common = first.dtype
        elif (len(promoted) == 2 and isinstance(first, torch.Tensor) and isinstance(promoted[1], torch.Tensor)
              and first.dtype is promoted[1].dtype):
            common = first.dtype
        else:
            common = _result_type(promoted)
        outs = []
        for rule in self.promotions:
            if rule is Promotion.BOOL:
                outs.append(torch.bool)
            elif rule is Promotion.INT_TO_FLOAT and not (common.is_floating_point or common.is_complex):
                outs.append(torch.get_default_dtype())
            elif rule is Promotion.KEEP_FIRST:
                outs.append(operands[0].dtype)
            else:
                outs.append(common)
        return common, tuple(outs)

    # ------------------------------------------------------------------- call
    def __call__(self, *args, out=None, inplace=False):
        operands = list(args[: self.num_operands])
        scalars = args[self.num_operands:]
        if len(scalars) != len(self.scalar_names):
            raise TypeError(f"{self.name}: expected scalars {self.scalar_names}, got {len(scalars)} values")
        tensors = [t for t in operands if isinstance(t, torch.Tensor)]
        device = _pick_device(tensors, out)
        common, out_dtypes = self.result_dtypes(operands)
        # A CPU 0-d tensor beside device tensors is a scalar (ATen's "cpu scalar"), as is a wrapped number.
        for i, value in enumerate(operands):
            if isinstance(value, torch.Tensor) and value.dim() == 0 and value.device != device:
                operands[i] = value.item()
        if common.is_complex or any(d not in SUPPORTED_DTYPES for d in (common, *out_dtypes)):
            raise Fallback(f"dtype {common} not handled by gems pointwise kernels")
        compute = compute_dtype(common)
        for t in operands:
            if isinstance(t, torch.Tensor) and t.dtype not in SUPPORTED_DTYPES:
                raise Fallback(f"operand dtype {t.dtype} not handled by gems pointwise kernels")
        shape = _broadcast_shape(operands)
        outs = self._prepare_outputs(out, shape, out_dtypes, operands, device, inplace)
        self._launch(operands, scalars, outs, shape, common, compute)
        return outs[0] if self.num_outputs == 1 else tuple(outs)

    def _prepare_outputs(self, out, shape, out_dtypes, operands, device, inplace):
        if out is None:
            like = next((t for t in operands if isinstance(t, torch.Tensor) and t.shape == shape), None)
            if like is not None and not like.is_contiguous():
                # Keep the first full-size operand's layout, as ATen does.
                return [torch.empty_like(like, dtype=d) for d in out_dtypes]
            return [torch.empty(shape, dtype=d, device=device) for d in out_dtypes]
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        for tensor, dtype in zip(outs, out_dtypes):
            check_out(tensor, dtype, shape, device, inplace)
        return outs

    def _launch(self, operands, scalars, outs, shape, common, compute):
        numel = outs[0].numel()
        if numel == 0:
            return
        tensors = [t for t in operands if isinstance(t, torch.Tensor)]
        scalar_mask = tuple(_is_operand_scalar(v) for v in operands)
        contiguous = all(t.shape == shape and t.is_contiguous() for t in tensors) and all(
            o.is_contiguous() for o in outs)
        if contiguous:
            sizes, strides = (numel,), [(1,)] * (len(tensors) + len(outs))
        else:
            sizes, strides = _merged_layout(shape, tensors + outs)
        use_int64 = numel > _INT32_LIMIT or _max_offset(sizes, strides, tensors + outs) > _INT32_LIMIT
        launcher = self._launcher(scalar_mask, len(sizes), contiguous)
        block, num_warps = pointwise_config(numel)
        grid = (triton.cdiv(numel, block),)
        values = [v for v in operands if not isinstance(v, torch.Tensor)]
        stride_args = [] if contiguous else [s for layout in strides for s in layout]
        size_args = [] if contiguous else list(sizes[1:])
        launcher(grid, *tensors, *outs, *values, *scalars, numel, *size_args, *stride_args,
                 _TL_COMPUTE[common], _TL_COMPUTE[compute], use_int64, block, num_warps=num_warps)

    def _launcher(self, scalar_mask, rank, contiguous):
        key = (scalar_mask, rank, contiguous)
        launcher = self._launchers.get(key)
        if launcher is None:
            kernel = _generate_kernel(self, scalar_mask, rank, contiguous)
            launcher = self._launchers[key] = Launcher(kernel)
        return launcher


# --------------------------------------------------------------------------- helpers


def pointwise_config(numel: int) -> tuple[int, int]:
    """(BLOCK, num_warps) for a flat pointwise launch, from the vendor's heuristics."""
    rules = _pointwise_rules()
    args = {"n_elements": numel}
    return rules["BLOCK"](args), rules["num_warps"](args)


_rules_cache = {}


def _pointwise_rules():
    rules = _rules_cache.get("pointwise")
    if rules is None:
        rules = _rules_cache["pointwise"] = selection.current().heuristics("pointwise")
    return rules


def _result_type(values) -> torch.dtype:
    if len(values) == 1:
        v = values[0]
        return v.dtype if isinstance(v, torch.Tensor) else torch.result_type(torch.tensor(v), v)
    dtype = torch.result_type(values[0], values[1])
    for v in values[2:]:
        # Fold with a 0-d stand-in of the running result so later operands promote against it.
        dtype = torch.promote_types(dtype, torch.result_type(torch.empty((), dtype=dtype), v)) if isinstance(
            v, torch.Tensor) else torch.result_type(torch.empty((1,), dtype=dtype), v)
    return dtype


def _pick_device(tensors, out):
    for t in tensors:
        if t.dim() > 0 or not t.is_cpu:
            return t.device
    if tensors:
        return tensors[0].device
    return (out[0] if isinstance(out, (tuple, list)) else out).device


def _broadcast_shape(operands) -> torch.Size:
    shapes = [t.shape for t in operands if isinstance(t, torch.Tensor)]
    if len(shapes) == 1 or all(s == shapes[0] for s in shapes[1:]):
        return shapes[0]
    return torch.broadcast_shapes(*shapes)


def check_out(out, dtype, shape, device, inplace=False):
    """ATen's rules for an ``out=`` tensor: same device, castable dtype, resized to the result shape
    (an in-place result cannot be resized)."""
    if out.device != device:
        raise RuntimeError(f"Expected out tensor to have device {device}, but got {out.device} instead")
    if not torch.can_cast(dtype, out.dtype):
        raise RuntimeError(f"result type {_type_name(dtype)} can't be cast to the desired output type "
                           f"{_type_name(out.dtype)}")
    if out.shape != shape:
        if inplace:
            raise RuntimeError(f"output with shape {list(out.shape)} doesn't match the broadcast shape "
                               f"{list(shape)}")
        out.resize_(shape)


_TYPE_NAMES = {torch.float16: "Half", torch.bfloat16: "BFloat16", torch.float32: "Float",
               torch.float64: "Double", torch.int8: "Char", torch.int16: "Short", torch.int32: "Int",
               torch.int64: "Long", torch.uint8: "Byte", torch.bool: "Bool"}


def _type_name(dtype):
    return _TYPE_NAMES.get(dtype, str(dtype))


def _merged_layout(shape, tensors):
    """Sizes and per-tensor strides after dropping size-1 dims, ordering by the last tensor's
    strides (an output) and merging dims that are contiguous in every tensor."""
    ndim = len(shape)
    strides = [_broadcast_strides(t, shape) for t in tensors]
    dims = [d for d in range(ndim) if shape[d] != 1]
    order_key = strides[-1]
    dims.sort(key=lambda d: -order_key[d])
    sizes, merged = [], [[] for _ in tensors]
    for d in dims:
        if sizes and all(ms[-1] == s[d] * shape[d] for ms, s in zip(merged, strides)):
            sizes[-1] *= shape[d]
            for ms, s in zip(merged, strides):
                ms[-1] = s[d]
            continue
        sizes.append(shape[d])
        for ms, s in zip(merged, strides):
            ms.append(s[d])
    if not sizes:
        return (1,), [(0,) for _ in tensors]
    return tuple(sizes), [tuple(ms) for ms in merged]


def _broadcast_strides(t, shape):
    pad = len(shape) - t.dim()
    strides = [0] * pad + list(t.stride())
    return [0 if i >= pad and t.shape[i - pad] == 1 and shape[i] != 1 else s for i, s in enumerate(strides)]


def _max_offset(sizes, strides, tensors):
    return max(sum((n - 1) * abs(s) for n, s in zip(sizes, layout)) for layout in strides)


# --------------------------------------------------------------------------- code generation

_TL_COMPUTE = {}  # torch dtype -> tl dtype, filled lazily (triton.language is imported late)


def _fill_tl_compute():
    import triton.language as tl

    for dtype, name in _TL_DTYPE.items():
        _TL_COMPUTE[dtype] = getattr(tl, name.split(".")[1])


def _generate_kernel(op: PointwiseOp, scalar_mask, rank, contiguous):
    if not _TL_COMPUTE:
        _fill_tl_compute()
    source = _kernel_source(op, scalar_mask, rank, contiguous)
    digest = hashlib.sha1(source.encode()).hexdigest()[:16]
    module_name = f"gems_pointwise_{op.name}_{digest}"
    path = CACHE_DIR / f"{module_name}.py"
    if not path.exists():
        CACHE_DIR.mkdir(parents=True, exist_ok=True)
        # Write then rename: parallel test workers may generate the same kernel.
        with tempfile.NamedTemporaryFile("w", dir=CACHE_DIR, suffix=".tmp", delete=False) as handle:
            handle.write(source)
        os.replace(handle.name, path)
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module.kernel


def _kernel_source(op: PointwiseOp, scalar_mask, rank, contiguous) -> str:
    body_module, body_name = op.body.fn.__module__, op.body.fn.__name__
    tensor_names = [f"in{i}" for i, s in enumerate(scalar_mask) if not s]
    value_names = [f"in{i}" for i, s in enumerate(scalar_mask) if s]
    out_names = [f"out{j}" for j in range(op.num_outputs)]
    ptr_names = [f"{n}_ptr" for n in tensor_names + out_names]
    params = ptr_names + value_names + list(op.scalar_names) + ["n_elements"]
    if not contiguous:
        params += [f"size{d}" for d in range(1, rank)]
        params += [f"stride_{n}{d}" for n in tensor_names + out_names for d in range(rank)]
    params += ["COMMON: tl.constexpr", "COMPUTE: tl.constexpr", "INT64: tl.constexpr", "BLOCK: tl.constexpr"]
    lines = [
        "# Generated by gems.codegen.pointwise; do not edit.",
        "import triton",
        "import triton.language as tl",
        f"from {body_module} import {body_name} as body",
        "",
        "",
        "@triton.jit",
        f"def kernel({', '.join(params)}):",
        "    pid = tl.program_id(0)",
        "    if INT64:",
        "        pid = pid.to(tl.int64)",
        "    offs = pid * BLOCK + tl.arange(0, BLOCK)",
        "    mask = offs < n_elements",
    ]
    if contiguous:
        offset_of = {n: "offs" for n in tensor_names + out_names}
    else:
        # Unravel the flat index over the merged sizes, innermost (last) dim first.
        lines.append("    rem = offs")
        for d in range(rank - 1, 0, -1):
            lines.append(f"    i{d} = rem % size{d}")
            lines.append(f"    rem = rem // size{d}")
        lines.append("    i0 = rem")
        offset_of = {n: " + ".join(f"i{d} * stride_{n}{d}" for d in range(rank)) for n in tensor_names + out_names}
    for i, is_scalar in enumerate(scalar_mask):
        name = f"in{i}"
        if i not in op.promote_operands:
            value = name if is_scalar else f"tl.load({name}_ptr + {offset_of[name]}, mask=mask)"
        elif is_scalar:
            # ATen rounds a scalar operand to the common dtype before computing (fp16 == 0.1 uses half(0.1)).
            value = f"tl.cast(tl.cast({name}, COMMON), COMPUTE)"
        else:
            value = f"tl.load({name}_ptr + {offset_of[name]}, mask=mask).to(COMPUTE)"
        lines.append(f"    v{i} = {value}")
    call_args = ", ".join([f"v{i}" for i in range(len(scalar_mask))] + list(op.scalar_names))
    if op.num_outputs == 1:
        lines.append(f"    r0 = body({call_args})")
    else:
        lines.append(f"    {', '.join(f'r{j}' for j in range(op.num_outputs))} = body({call_args})")
    for j, name in enumerate(out_names):
        lines.append(f"    tl.store({name}_ptr + {offset_of[name]}, r{j}.to({name}_ptr.dtype.element_ty), mask=mask)")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- overload helpers


def unary_overloads(op: PointwiseOp, name: str, inplace=True, out=True) -> dict:
    """``{name: f(x), name_: f_(x), name.out: f(x, out=)}`` for a one-operand PointwiseOp."""

    def functional(self):
        return op(self)

    def in_place(self):
        return op(self, out=self, inplace=True)

    def with_out(self, *, out):
        return op(self, out=out)

    table = {name: functional}
    if inplace:
        table[f"{name}_"] = in_place
    if out:
        table[f"{name}.out"] = with_out
    return table
