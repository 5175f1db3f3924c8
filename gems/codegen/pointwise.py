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

Scalars: a Python number operand is rounded to the common dtype first (``round_scalars=False``
keeps it at compute precision, as ATen's mul and div do). Triton passes a Python float as fp32,
so when the common dtype is float64 the float scalars travel as their 64-bit patterns and are
bit-cast back in the kernel: ``x_f64 == 0.1`` compares with the double 0.1, as ATen does.
"""

from __future__ import annotations

import enum
import hashlib
import importlib.util
import os
import struct
import sys
import tempfile
from pathlib import Path

import torch

from gems.runtime import selection
from gems.runtime.launch import Launcher, cdiv
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
    dtypes: the common dtypes the operator is defined for (default: all supported); any other
        raises NotImplementedError, as ATen's dispatch does ("bitwise_and" on float).
    round_scalars: round a Python number operand to the common dtype before computing (ATen's
        add, sub, comparisons, clamp); False keeps it at compute precision (ATen's mul and div).
    common_arg: pass the common dtype to ``body`` as a last constexpr argument, for bodies that
        must round intermediates to it (isclose on fp16 rounds after every step, as ATen does).
    """

    def __init__(self, name, body, operands, scalars=(), outputs=1, promotion=Promotion.DEFAULT,
                 promote_operands=None, dtypes=None, round_scalars=True, common_arg=False):
        self.name = name
        self.body = body
        self.num_operands = operands
        self.scalar_names = tuple(scalars)
        self.num_outputs = outputs
        self.promotions = promotion if isinstance(promotion, tuple) else (promotion,) * outputs
        self.promote_operands = tuple(range(operands)) if promote_operands is None else tuple(promote_operands)
        self.dtypes = None if dtypes is None else frozenset(dtypes)
        self.round_scalars = round_scalars
        self.common_arg = common_arg
        # ATen's promote_integer_inputs_to_float: integer operands are converted, then computed in float.
        self._int_to_float = Promotion.INT_TO_FLOAT in self.promotions
        self._launchers = {}
        self._fast_plans = {}
        self._arity = operands + len(self.scalar_names)

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
        if self._int_to_float and not (common.is_floating_point or common.is_complex):
            common = torch.get_default_dtype()
        outs = []
        for rule in self.promotions:
            if rule is Promotion.BOOL:
                outs.append(torch.bool)
            elif rule is Promotion.KEEP_FIRST:
                outs.append(operands[0].dtype)
            else:
                outs.append(common)
        return common, tuple(outs)

    # ------------------------------------------------------------------- call
    def __call__(self, *args, out=None, inplace=False):
        if self._call_fast(args, out):
            return self._fast_result
        operands = list(args[: self.num_operands])
        scalars = args[self.num_operands:]
        if len(scalars) != len(self.scalar_names):
            raise TypeError(f"{self.name}: expected scalars {self.scalar_names}, got {len(scalars)} values")
        tensors = [t for t in operands if isinstance(t, torch.Tensor)]
        device = _pick_device(tensors, out)
        common, out_dtypes = self.result_dtypes(operands)
        # A CPU 0-d tensor beside device tensors is a scalar (ATen's "cpu scalar"), as is a wrapped number.
        for i, value in enumerate(operands):
            if isinstance(value, torch.Tensor) and value.device != device:
                if value.dim() == 0 and value.is_cpu:
                    operands[i] = value.item()
                else:
                    raise RuntimeError("Expected all tensors to be on the same device, but found at least two "
                                       f"devices, {device} and {value.device}!")
        if common.is_complex or any(d not in SUPPORTED_DTYPES for d in (common, *out_dtypes)):
            raise Fallback(f"dtype {common} not handled by gems pointwise kernels")
        compute = compute_dtype(common)
        for t in operands:
            if isinstance(t, torch.Tensor) and t.dtype not in SUPPORTED_DTYPES:
                raise Fallback(f"operand dtype {t.dtype} not handled by gems pointwise kernels")
        shape = _broadcast_shape(operands)
        outs = self._prepare_outputs(out, shape, out_dtypes, operands, device, inplace)
        if self.dtypes is not None and common not in self.dtypes:
            # ATen decides, per device, whether it computes this dtype or raises (abs of bool: CUDA
            # computes it, the CPU raises NotImplementedError).
            raise Fallback(f"{self.name} is not declared for {_type_name(common)}")
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
        inputs = [t for t in operands if isinstance(t, torch.Tensor)]
        for tensor, dtype in zip(outs, out_dtypes):
            check_out(tensor, dtype, shape, device, inplace)
            check_overlap(tensor, inputs)
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
        values = [v for v in operands if not isinstance(v, torch.Tensor)]
        if values or scalars:
            # Python bools travel as ints: Triton's interpreter cannot take a bool argument.
            values = [int(v) if type(v) is bool else v for v in values]
            scalars = [int(v) if type(v) is bool else v for v in scalars]
        f64_bits = ()
        if common is torch.float64 and (values or scalars):
            f64_bits = tuple(type(v) is float for v in (*values, *scalars))
            if any(f64_bits):
                values = [float64_bits(v) if type(v) is float else v for v in values]
                scalars = [float64_bits(v) if type(v) is float else v for v in scalars]
            else:
                f64_bits = ()
        launcher = self._launcher(scalar_mask, len(sizes), contiguous, f64_bits)
        block, num_warps = pointwise_config(numel, common.itemsize)
        grid = (cdiv(numel, block),)
        stride_args = [] if contiguous else [s for layout in strides for s in layout]
        size_args = [] if contiguous else list(sizes[1:])
        launcher(grid, *tensors, *outs, *values, *scalars, numel, *size_args, *stride_args,
                 _TL_COMPUTE[common], _TL_COMPUTE[compute], use_int64, block, num_warps=num_warps)

    def _call_fast(self, args, out) -> bool:
        """The common calls, kept free of the general machinery: same-shape contiguous tensors on one
        device, Python numbers beside them, and out= (in-place) into a same-shape contiguous tensor
        that overlaps no input but exactly; below 2^31 elements. Returns False when the general path
        must run (it also raises every error).

        A plan (result dtypes, launcher) is cached per operand signature: the dtype when all operands
        are tensors of one dtype, else every tensor's dtype and every number's type, with the default
        dtype, which decides int-with-float promotion. Mixed dtypes need nothing more: the generated
        kernel casts each load to the common dtype."""
        n = self.num_operands
        if len(args) != self._arity:
            return False
        x = args[0]
        uniform = True
        if type(x) is torch.Tensor:
            if not x.is_contiguous():
                return False
            dtype, shape, device = x.dtype, x.shape, x.device
            for other in args[1:n]:
                if type(other) is torch.Tensor:
                    if other.shape != shape or not other.is_contiguous() or other.device != device:
                        return False
                    if other.dtype is not dtype:
                        uniform = False
                elif type(other) in _NUMBER_TYPES:
                    uniform = False
                else:
                    return False
        else:
            return False  # a number first (pow.Scalar): the general path
        if uniform and not self._int_to_float:
            key = dtype
        else:
            key = (torch.get_default_dtype(), *(a.dtype if type(a) is torch.Tensor else type(a) for a in args[:n]))
        plan = self._fast_plans.get(key)
        if plan is None:
            plan = self._fast_plans[key] = self._fast_plan(args[:n])
        numel = x.numel()
        if not plan or numel == 0 or numel > _INT32_LIMIT:
            return False
        out_dtypes, tl_common, tl_compute, launcher, f64, has_values, itemsize = plan
        named = args[n:]
        for value in named:
            kind = type(value)
            if kind is bool or (kind is float and f64):
                return False  # bools and float64 scalars are converted on the general path
        if out is None:
            # Without dtype=, empty_like parses fewer arguments: 1.7 us less per call (on a CPU).
            outs = [torch.empty_like(x) if d is dtype else torch.empty_like(x, dtype=d) for d in out_dtypes]
        else:
            if type(out) is not torch.Tensor or out.shape != shape or not out.is_contiguous() or out.device != device:
                return False
            if out.dtype is not out_dtypes[0] and not torch.can_cast(out_dtypes[0], out.dtype):
                return False
            begin = out.data_ptr()
            end = begin + numel * out.element_size()
            for t in args[:n]:
                if type(t) is torch.Tensor and t is not out:
                    start = t.data_ptr()
                    if start != begin and start < end and begin < start + numel * t.element_size():
                        return False  # partial overlap: the general path raises ATen's error
            outs = [out]
        if has_values:
            tensors = [a for a in args[:n] if type(a) is torch.Tensor]
            values = [(float64_bits(v) if f64 and type(v) is float else int(v) if type(v) is bool else v)
                      for v in args[:n] if type(v) is not torch.Tensor]
        else:
            tensors, values = args[:n], ()
        grid_x, block, num_warps = _flat_config(numel, itemsize)
        launcher.flat(grid_x, num_warps, *tensors, *outs, *values, *named, numel, tl_common, tl_compute, False, block)
        self._fast_result = outs[0] if len(outs) == 1 else tuple(outs)
        return True

    def _fast_plan(self, operands):
        """(output dtypes, tl common dtype, tl compute dtype, launcher, whether float scalars travel as
        bits, whether there are number operands, the common dtype's itemsize) for this operand signature,
        or None when the general path must decide."""
        operands = list(operands)
        common, out_dtypes = self.result_dtypes(operands)
        tensor_dtypes = [t.dtype for t in operands if type(t) is torch.Tensor]
        if any(d not in SUPPORTED_DTYPES for d in (common, *out_dtypes, *tensor_dtypes)):
            return None
        if self.dtypes is not None and common not in self.dtypes:
            return None  # the general path raises ATen's error
        if not _TL_COMPUTE:
            _fill_tl_compute()
        scalar_mask = tuple(type(v) is not torch.Tensor for v in operands)
        f64 = common is torch.float64
        f64_bits = tuple(type(v) is float for v in operands if type(v) is not torch.Tensor) if f64 else ()
        if not any(f64_bits):
            f64_bits = ()
        elif self.scalar_names:
            f64_bits += (False,) * len(self.scalar_names)  # named float scalars make the call take the general path
        launcher = self._launcher(scalar_mask, 1, True, f64_bits)
        return (out_dtypes, _TL_COMPUTE[common], _TL_COMPUTE[compute_dtype(common)], launcher, f64, any(scalar_mask),
                common.itemsize)

    def _launcher(self, scalar_mask, rank, contiguous, f64_bits=()):
        key = (scalar_mask, rank, contiguous, f64_bits)
        launcher = self._launchers.get(key)
        if launcher is None:
            kernel = _generate_kernel(self, scalar_mask, rank, contiguous, f64_bits)
            launcher = self._launchers[key] = Launcher(kernel)
        return launcher


# --------------------------------------------------------------------------- helpers


def pointwise_config(numel: int, itemsize: int) -> tuple[int, int]:
    """(BLOCK, num_warps) for a flat pointwise launch, from the vendor's heuristics; ``itemsize``: bytes
    per element of the data the kernel computes on (its common dtype)."""
    rules = _pointwise_rules()
    args = {"n_elements": numel, "itemsize": itemsize}
    return rules["BLOCK"](args), rules["num_warps"](args)


_NUMBER_TYPES = (int, float, bool)
_rules_cache = {}
_flat_configs = {}


def _flat_config(numel: int, itemsize: int) -> tuple[int, int, int]:
    """(programs, BLOCK, num_warps) for a flat launch, memoized: heuristics depend only on their arguments."""
    config = _flat_configs.get((numel, itemsize))
    if config is None:
        if len(_flat_configs) > 4096:
            _flat_configs.clear()
        block, num_warps = pointwise_config(numel, itemsize)
        config = _flat_configs[numel, itemsize] = (cdiv(numel, block), block, num_warps)
    return config


def _pointwise_rules():
    rules = _rules_cache.get("pointwise")
    if rules is None:
        rules = _rules_cache["pointwise"] = selection.current().heuristics("pointwise")
    return rules


def _result_type(values) -> torch.dtype:
    if len(values) == 2 and any(isinstance(v, torch.Tensor) for v in values):
        return torch.result_type(values[0], values[1])
    # ATen's ResultTypeState: dimensioned tensors, 0-d tensors and wrapped numbers are promoted
    # within their class, then a lower class counts only where it is of a higher category.
    dim = zero = wrapped = None
    for v in values:
        if isinstance(v, torch.Tensor):
            if v.dim() > 0:
                dim = v.dtype if dim is None else torch.promote_types(dim, v.dtype)
            else:
                zero = v.dtype if zero is None else torch.promote_types(zero, v.dtype)
        else:
            dtype = _number_dtype(v)
            wrapped = dtype if wrapped is None else torch.promote_types(wrapped, dtype)
    return _combine_categories(dim, _combine_categories(zero, wrapped))


def _number_dtype(value) -> torch.dtype:
    if isinstance(value, bool):
        return torch.bool
    if isinstance(value, int):
        return torch.int64
    if isinstance(value, complex):
        return torch.complex64 if torch.get_default_dtype() is torch.float32 else torch.complex128
    return torch.get_default_dtype()


def _combine_categories(higher, lower):
    """ATen's combine_categories: a lower class raises the result only to a higher category."""
    if higher is None or lower is None:
        return lower if higher is None else higher
    if higher.is_complex:
        return higher
    if lower.is_complex:
        return torch.promote_types(higher, lower)
    if higher.is_floating_point:
        return higher
    if higher is torch.bool or lower.is_floating_point:
        return torch.promote_types(higher, lower)
    return higher


def float64_bits(value: float) -> int:
    """A float's IEEE double bit pattern as a signed 64-bit integer (see the module docstring)."""
    return struct.unpack("<q", struct.pack("<d", value))[0]


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
    if out.device != device:  # unreached on the interpreter: one device
        raise RuntimeError(f"Expected out tensor to have device {device}, but got {out.device} instead")
    if not torch.can_cast(dtype, out.dtype):
        raise RuntimeError(f"result type {_type_name(dtype)} can't be cast to the desired output type "
                           f"{_type_name(out.dtype)}")
    if out.shape != shape:
        if inplace:
            raise RuntimeError(f"output with shape {list(out.shape)} doesn't match the broadcast shape "
                               f"{list(shape)}")
        out.resize_(shape)


_OVERLAP_HINT = "Please clone() the tensor before performing the operation."


def is_dense(t) -> bool:
    """ATen's is_non_overlapping_and_dense: the elements fill a block of memory exactly, in some
    order of the dimensions (size-1 dimensions aside)."""
    if t.is_contiguous():
        return True
    expected = 1
    for stride, size in sorted((st, n) for st, n in zip(t.stride(), t.shape) if n != 1):
        if stride != expected:
            return False
        expected *= size
    return True


def check_overlap(out, inputs):
    """ATen's memory-overlap checks for a written tensor: no two of its elements may share memory,
    and an input may share its memory only exactly (same start and strides), not partly. Like ATen,
    only tensors that are non-overlapping and dense are compared; other layouts are not judged."""
    if not is_dense(out):
        if any(st == 0 and n > 1 for st, n in zip(out.stride(), out.shape)):
            raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to "
                               f"a single memory location. {_OVERLAP_HINT}")
        return
    begin = out.data_ptr()
    end = begin + out.numel() * out.element_size()
    for t in inputs:
        if t is out or begin == end:
            continue
        start = t.data_ptr()
        if start >= end or start + t.numel() * t.element_size() <= begin or not is_dense(t):
            continue
        if not (start == begin and t.numel() * t.element_size() == end - begin and t.stride() == out.stride()):
            raise RuntimeError("unsupported operation: some elements of the input tensor and the written-to tensor "
                               f"refer to a single memory location. {_OVERLAP_HINT}")


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


def _generate_kernel(op: PointwiseOp, scalar_mask, rank, contiguous, f64_bits=()):
    if not _TL_COMPUTE:
        _fill_tl_compute()
    source = _kernel_source(op, scalar_mask, rank, contiguous, f64_bits)
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


def _jit_decorator(names, rank, contiguous) -> str:
    """Sizes and outer strides are not specialized: each divisibility pattern would be one more
    compilation (minutes over a test suite) for no gain; the innermost stride keeps its ==1 hint,
    which is what vectorizes the loads."""
    if contiguous:
        return "@triton.jit"
    generic = [f"size{d}" for d in range(1, rank)] + [f"stride_{n}{d}" for n in names for d in range(rank - 1)]
    return f"@triton.jit(do_not_specialize={generic!r})" if generic else "@triton.jit"


def _kernel_source(op: PointwiseOp, scalar_mask, rank, contiguous, f64_bits=()) -> str:
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
        _jit_decorator(tensor_names + out_names, rank, contiguous),
        f"def kernel({', '.join(params)}):",
        "    pid = tl.program_id(0)",
        "    if INT64:",
        "        pid = pid.to(tl.int64)",
        "    offs = pid * BLOCK + tl.arange(0, BLOCK)",
        "    mask = offs < n_elements",
    ]
    for name, is_bits in zip(value_names + list(op.scalar_names), f64_bits):
        if is_bits:  # a float64 scalar passed as its bit pattern (see the module docstring)
            lines.append(f"    {name} = tl.cast(tl.cast({name}, tl.int64), tl.float64, bitcast=True)")
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
        elif is_scalar and op.round_scalars:
            # ATen rounds a scalar operand to the common dtype before computing (fp16 == 0.1 uses half(0.1)).
            value = f"tl.cast(tl.cast({name}, COMMON), COMPUTE)"
        elif is_scalar:
            value = f"tl.cast({name}, COMPUTE)"
        else:
            # Through the common dtype, as ATen casts every input to it (a float32 0-d tensor beside a bf16
            # tensor is rounded to bf16 first); a no-op when the operand is of the common dtype.
            value = f"tl.load({name}_ptr + {offset_of[name]}, mask=mask).to(COMMON).to(COMPUTE)"
        lines.append(f"    v{i} = {value}")
    call_args = ", ".join([f"v{i}" for i in range(len(scalar_mask))] + list(op.scalar_names)
                          + (["COMMON"] if op.common_arg else []))
    if op.num_outputs == 1:
        lines.append(f"    r0 = body({call_args})")
    else:
        lines.append(f"    {', '.join(f'r{j}' for j in range(op.num_outputs))} = body({call_args})")
    for j, name in enumerate(out_names):
        # Round to the result dtype first: an out= of a wider dtype gets what ATen computes (int8 + int8
        # wraps in int8 even into an int16 out=), and an fp16 result is rounded once to fp16.
        result = f"r{j}.to(COMMON)" if op.promotions[j] in (Promotion.DEFAULT, Promotion.INT_TO_FLOAT) else f"r{j}"
        lines.append(f"    tl.store({name}_ptr + {offset_of[name]}, {result}.to({name}_ptr.dtype.element_ty), "
                     "mask=mask)")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- overload helpers


def unary_overloads(op: PointwiseOp, name: str, inplace=True, out=True) -> dict:
    """``{name: f(x), name_: f_(x), name.out: f(x, out=)}`` for a one-operand PointwiseOp."""

    def in_place(self):
        return op(self, out=self, inplace=True)

    def with_out(self, *, out):
        return op(self, out=out)

    table = {name: op}  # the op itself: one Python frame less on the per-call path
    if inplace:
        table[f"{name}_"] = in_place
    if out:
        table[f"{name}.out"] = with_out
    return table
