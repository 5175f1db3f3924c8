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

import torch

from gems.codegen.pointwise_checks import (
    broadcast_shape,
    check_out,
    check_overlap,
    float64_bits,
    max_offset,
    merged_layout,
    pick_device,
    result_type,
    type_name,
)
from gems.codegen.pointwise_source import SUPPORTED_DTYPES, TL_COMPUTE, Promotion, fill_tl_compute, generate_kernel
from gems.runtime import selection
from gems.runtime.launch import Launcher, cdiv
from gems.runtime.registration import Fallback

_INT32_LIMIT = 2**31 - 1


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
            common = result_type(promoted)
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
        device = pick_device(tensors, out)
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
        shape = broadcast_shape(operands)
        outs = self._prepare_outputs(out, shape, out_dtypes, operands, device, inplace)
        if self.dtypes is not None and common not in self.dtypes:
            # ATen decides, per device, whether it computes this dtype or raises (abs of bool: CUDA
            # computes it, the CPU raises NotImplementedError).
            raise Fallback(f"{self.name} is not declared for {type_name(common)}")
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
            sizes, strides = merged_layout(shape, tensors + outs)
        use_int64 = numel > _INT32_LIMIT or max_offset(sizes, strides, tensors + outs) > _INT32_LIMIT
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
                 TL_COMPUTE[common], TL_COMPUTE[compute], use_int64, block, num_warps=num_warps)

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
        if not TL_COMPUTE:
            fill_tl_compute()
        scalar_mask = tuple(type(v) is not torch.Tensor for v in operands)
        f64 = common is torch.float64
        f64_bits = tuple(type(v) is float for v in operands if type(v) is not torch.Tensor) if f64 else ()
        if not any(f64_bits):
            f64_bits = ()
        elif self.scalar_names:
            f64_bits += (False,) * len(self.scalar_names)  # named float scalars make the call take the general path
        launcher = self._launcher(scalar_mask, 1, True, f64_bits)
        return (out_dtypes, TL_COMPUTE[common], TL_COMPUTE[compute_dtype(common)], launcher, f64, any(scalar_mask),
                common.itemsize)

    def _launcher(self, scalar_mask, rank, contiguous, f64_bits=()):
        key = (scalar_mask, rank, contiguous, f64_bits)
        launcher = self._launchers.get(key)
        if launcher is None:
            kernel = generate_kernel(self, scalar_mask, rank, contiguous, f64_bits)
            launcher = self._launchers[key] = Launcher(kernel)
        return launcher


# --------------------------------------------------------------------------- launch configs


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
