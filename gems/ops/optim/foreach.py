"""What the elementwise ``_foreach_*`` operators share: the host side of their kernels (foreach_kernels.py), ATen's
dtype rules, and the overload tables each operator builds from a scalar body.

An operator file gives a Triton body ``body(x, y, z, s, alpha)``: x, y, z are the row's input tiles in
the compute dtype (the first one, two or three tensor lists), s the scalar (a Scalar, the row's entry of
a ScalarList, or a 0-d tensor's value) and alpha ATen's ``alpha=``; unused ones are placeholders. The
kernel applies it to every row of a dtype group in one launch (gems/ops/optim/multi_tensor.py), walking
each row as one flat array when all its operands are dense with equal strides, and through their sizes
and strides otherwise (ATen's per-tensor "slow path": views, broadcasting).

Dtypes follow ATen's per-tensor operators: a row's result is the promoted dtype of its tensors (0-d
tensors do not promote dimensioned ones); fp16/bf16 compute in fp32 and round once, fp64 in fp64.
Python floats reach the kernel as float64 bits, and are rounded to the compute dtype there, as ATen's
``opmath_t(scalar)``. Rows of other dtypes launch apart (one launch per dtype group, as ATen's per-device
and dtype grouping). A ScalarList's values are table words, except a list of one value (a scalar argument) and,
over uniform lists, a list of at most VALUES values (the arguments of foreach_kernels.py ``values_kernel``), which
keep the table the same when the values change.

Host work per call is what the lists need: a call whose lists hold one floating dtype on one device,
contiguous tensors and equal shapes row by row (every optimizer step's) is checked, its functional results
allocated and its table written in C++ loops of the native layer (gems/native/lists.cpp); any other call, or
any call where the native layer is not built, takes the per-row Python path.
"""

from __future__ import annotations

import operator
import struct
from itertools import chain

import torch
import triton.language as tl

from gems.codegen.pointwise import float64_bits
from gems.ops.optim import multi_tensor as mt
from gems.ops.optim.foreach_kernels import VALUES
from gems.ops.optim.foreach_kernels import launch as _launch
from gems.ops.optim.foreach_kernels import launch_with_values as _launch_with_values
from gems.runtime.registration import Fallback
from gems.spec import lazy

SCALAR_ARG, SCALAR_ROW, SCALAR_TENSOR = 0, 1, 2  # where a row's scalar comes from
_DTYPE = operator.attrgetter("dtype")


# --------------------------------------------------------------------------- host side


def result_dtype(tensors) -> torch.dtype:
    """ATen's promoted dtype of floating tensors: 0-d tensors count only when no operand has dimensions."""
    first = tensors[0].dtype
    if all(t.dtype is first for t in tensors):
        return first
    dimensioned = [t.dtype for t in tensors if t.dim() > 0] or [t.dtype for t in tensors]
    common = dimensioned[0]
    for dtype in dimensioned[1:]:
        common = torch.promote_types(common, dtype)
    return common


def _row_words(inputs, out, scalar_word):
    """The row's words after numel, and whether it needs the strided walk."""
    addresses = [t.data_ptr() for t in inputs] + [out.data_ptr()]
    shape, strides = out.shape, out.stride()
    if all(t.shape == shape and t.stride() == strides for t in inputs) and (
            out.is_contiguous() or mt.dense(out)):
        return [0, *addresses, scalar_word], False
    layout = mt.merged_layout(list(shape), [t.expand(shape).stride() for t in inputs] + [strides])
    if layout is None:
        raise Fallback(f"a tensor with more than {mt.MAX_DIMS} dimensions that cannot be merged")
    sizes, strides_list = layout
    return [1, *addresses, scalar_word, *sizes, *(s for st in strides_list for s in st)], True


def apply(body, inputs, outs, *, scalar=0.0, scalars=None, scalar_tensor=None, alpha=1.0, scalar_arg=None):
    """Launch ``body`` over every row: inputs are lists of tensors (row i = their i-th tensors), outs the
    output tensors (allocated by the caller, or the first input list for in-place forms). The scalar comes
    from ``scalars`` (one per row), else a 0-d ``scalar_tensor`` on the lists' device, else ``scalar``
    (``scalar_arg``: the schema position of the Scalar or ScalarList argument it is, for the native layer's list
    plans). A ScalarList argument of one value (Adam's bias corrections: every step count alike) is passed as
    that scalar, and one of at most VALUES values as kernel arguments (foreach_kernels.py): the table then
    stays the same while the values change every step, and is not uploaded again."""
    if scalars is not None:  # the native layer keys one-value lists apart (list_plans.h one_value)
        bits = float64_bits_list(scalars)
        if scalar_arg is not None and len(set(bits)) == 1:
            scalar, scalars = scalars[0], None
        elif scalar_arg is not None and len(bits) <= VALUES and _apply_values(body, inputs, outs, bits, alpha,
                                                                             scalar_arg):
            return outs
        else:
            scalar_arg = None  # the values are table words; the scalar argument is unused
    scalar = float64_bits(float(scalar)) if scalar_arg is None else mt.scalar_word(scalar, scalar_arg)
    alpha = mt.scalar_word(alpha, "alpha")
    mode = SCALAR_ROW if scalars is not None else SCALAR_TENSOR if scalar_tensor is not None else SCALAR_ARG
    words = (float64_bits_list(scalars) if mode == SCALAR_ROW
             else [scalar_tensor.data_ptr()] * len(outs) if mode == SCALAR_TENSOR else [0] * len(outs))
    scalar_dtype = mt.TL_DTYPES[scalar_tensor.dtype] if mode == SCALAR_TENSOR else tl.float32
    device = outs[0].device
    dtype = outs[0].dtype
    # One dtype, contiguous tensors and equal shapes row by row (every optimizer step's lists): the native
    # layer writes the table in one C++ loop. Any other call, or no native layer: the per-row path.
    uniform = None if mode == SCALAR_TENSOR and scalar_tensor.dtype is not dtype else mt.uniform_table(
        [*inputs, outs], words, words_from=scalars if mode == SCALAR_ROW else scalar_tensor)
    if uniform is not None:
        content, programs, n_rows, aligned = uniform
        if n_rows:
            compute = torch.float64 if dtype is torch.float64 else torch.float32
            _launch_rows(body, (dtype,) * len(inputs), dtype, compute, mt.upload_bytes(content, device), n_rows,
                         programs, False, aligned, len(inputs) + 4, mode, scalar_dtype, scalar, alpha)
        return outs
    for (in_dtypes, out_dtype, compute), (rows, numels, has_strided, aligned) in _row_groups(
            inputs, outs, words, scalar_tensor).items():
        width = max(len(r) for r in rows) + 1
        if has_strided:
            rows = [r + [0] * (width - 1 - len(r)) for r in rows]
        table, programs = mt.table(rows, numels, device)
        _launch_rows(body, in_dtypes, out_dtype, compute, table, len(rows), programs, has_strided, aligned, width,
                     mode, scalar_dtype, scalar, alpha)
    return outs


def _apply_values(body, inputs, outs, bits, alpha, scalar_arg) -> bool:
    """``apply`` of a ScalarList of at most VALUES values (``bits``: their float64 bits) over uniform lists: a
    table of the rows' positions and the values as kernel arguments. False (nothing launched) for other lists,
    which the per-row path serves with the values in their rows."""
    uniform = mt.uniform_table([*inputs, outs], range(len(bits)), words_from=mt.POSITIONS)
    if uniform is None:
        return False
    content, programs, n_rows, aligned = uniform
    if n_rows:
        dtype = outs[0].dtype
        compute = torch.float64 if dtype is torch.float64 else torch.float32
        tl_in = [mt.TL_DTYPES[dtype]] * len(inputs) + [tl.float32] * (3 - len(inputs))
        values = mt.list_words(bits, scalar_arg) + [0] * (VALUES - len(bits))
        _launch_with_values((programs,), mt.upload_bytes(content, outs[0].device), n_rows,
                            mt.scalar_word(alpha, "alpha"), *values, body, len(inputs), *tl_in, mt.TL_DTYPES[dtype],
                            mt.TL_DTYPES[compute], aligned, len(inputs) + 4, mt.steps_for(n_rows), mt.CHUNK, mt.BLOCK,
                            num_warps=mt.NUM_WARPS)
    return True


def _launch_rows(body, in_dtypes, out_dtype, compute, table, n_rows, programs, has_strided, aligned, width, mode,
                 scalar_dtype, scalar, alpha):
    tl_in = [mt.TL_DTYPES[d] for d in in_dtypes] + [tl.float32] * (3 - len(in_dtypes))
    _launch((programs,), table, n_rows, scalar, alpha, body,
            len(in_dtypes), *tl_in, mt.TL_DTYPES[out_dtype], mt.TL_DTYPES[compute], mode, scalar_dtype, has_strided,
            aligned, width, mt.steps_for(n_rows), mt.CHUNK, mt.BLOCK, num_warps=mt.NUM_WARPS)


def _row_groups(inputs, outs, words, scalar_tensor):
    """Rows grouped by their dtypes (one launch per group), each row walked flat or through its strides."""
    groups = {}
    for i, out in enumerate(outs):
        numel = out.numel()
        if numel == 0:
            continue
        row_inputs = [tensors[i] for tensors in inputs]
        row, strided = _row_words(row_inputs, out, words[i])
        promoted = row_inputs + ([scalar_tensor] if scalar_tensor is not None else [])
        common = result_dtype(promoted) if row_inputs else out.dtype
        compute = torch.float64 if common is torch.float64 else torch.float32
        rows, numels, strided_rows = groups.setdefault((tuple(t.dtype for t in row_inputs), out.dtype, compute),
                                                       ([], [], [False]))
        rows.append(row)
        numels.append(numel)
        strided_rows[0] |= strided
    # words 1 .. n_in + 1 of a row: its inputs' and its out's addresses
    return {key: (rows, numels, strided_rows[0], mt.aligned(a for r in rows for a in r[1:2 + len(key[0])]))
            for key, (rows, numels, strided_rows) in groups.items()}


def float64_bits_list(values) -> list:
    """float64_bits of many numbers in one pack."""
    return list(struct.unpack(f"<{len(values)}q", struct.pack(f"<{len(values)}d", *map(float, values))))


# --------------------------------------------------------------------------- ATen's checks


def check_scalar(value):
    if isinstance(value, complex):
        raise Fallback("a complex scalar: ATen computes complex results")
    return value


def check_scalar_list(self, scalars) -> None:
    mt.check_nonempty(self)
    if len(scalars) != len(self):
        raise RuntimeError("Tensor list must have same number of elements as scalar list.")
    for value in scalars:
        check_scalar(value)


def check_scalar_tensor(other) -> None:
    if other.dim() != 0 or other.numel() != 1:
        raise RuntimeError(f"scalar tensor expected to be 0 dim but it has {other.dim()} dimensions and "
                           f"{other.numel()} elements.")


def _shape_of(row, inplace: bool):
    shape = row[0].shape
    if all(t.shape == shape for t in row):
        return shape
    broadcast = torch.broadcast_shapes(*(t.shape for t in row))
    if inplace and broadcast != shape:
        raise RuntimeError(f"output with shape {list(shape)} doesn't match the broadcast shape {list(broadcast)}")
    return broadcast


# --------------------------------------------------------------------------- overload tables

SCALAR, SCALAR_LIST, TENSOR, CPU_SCALARS = "Scalar", "ScalarList", "Tensor", "CpuScalars"
NO_LAUNCH = {"empty-tensors": "every tensor of the lists is empty"}


def forms(name, suffix, body, n_lists, kind=None, *, alpha=False, inputs=None, row_check=None,
          across_devices=False, functional=True, keeps_dtype=False, host_reads_cpu_scalar=False):
    """{overload: implementation} for the functional and in-place forms of one overload family, e.g.
    ``_foreach_add.List`` and ``_foreach_add_.List``. (ATen's ``_out`` forms are composites that call the
    functional form and copy its result: they run gems through it.)

    n_lists: the tensor lists the schema takes first; kind: what follows them (SCALAR, SCALAR_LIST, TENSOR
    (a 0-d tensor), CPU_SCALARS (a 1-d CPU tensor of one value per row) or None); alpha: the schema has
    ``alpha=``; inputs: the indices of the lists the kernel reads (default all); row_check(lists): a check of
    the lists' rows (lerp's dtypes); across_devices: ATen serves lists on several devices (copy) rather than
    refusing them; functional: False where ATen's functional form is a composite of the in-place one (zero);
    keeps_dtype: the functional result has self's dtype (copy), not the promoted one; host_reads_cpu_scalar: ATen's
    CUDA kernel reads a CPU 0-d tensor operand on the host (mul, div) rather than refusing it."""
    inputs = tuple(range(n_lists)) if inputs is None else inputs

    def run(args, alpha_value, inplace):
        lists = list(args[:n_lists])
        (mt.check_same_length if n_lists > 1 else mt.check_nonempty)(*lists)
        value, extra = _scalar_operand(kind, args[n_lists] if kind else None, lists[0], host_reads_cpu_scalar)
        # lists of one floating dtype on one device, contiguous, equal shapes row by row: checked in one C++ loop
        uniform = not across_devices and mt.uniform(lists)
        if not uniform:
            mt.check_lists(lists[0][0].device, lists, across_devices)
        if row_check is not None:
            row_check(lists)
        shapes = None if uniform else list(map(torch.Tensor.size, lists[0]))
        same_shapes = uniform or all(list(map(torch.Tensor.size, tensors)) == shapes for tensors in lists[1:])
        if (inplace or keeps_dtype) and not same_shapes:  # keeps_dtype: copy's result is a copy of self
            for row in zip(*lists):
                _shape_of(row, True)
        if inplace:
            outs = lists[0]
        elif uniform and (keeps_dtype or kind != TENSOR or value.dtype is lists[0][0].dtype):  # one dtype throughout
            outs = mt.empty_like_all(lists[0])
        elif keeps_dtype:
            outs = [torch.empty_like(t) for t in lists[0]]
        elif same_shapes and _one_dtype([lists[k] for k in inputs] + ([[value]] if kind == TENSOR else [])):
            outs = [torch.empty_like(t, dtype=lists[inputs[0]][0].dtype) for t in lists[0]]
        else:
            promoted = [value] if kind == TENSOR else []
            outs = [_new_out(row[0], _shape_of(row, False), result_dtype([row[k] for k in inputs] + promoted))
                    for row in zip(*lists)]
        apply(body, [lists[k] for k in inputs], outs, alpha=check_scalar(alpha_value),
              scalar_arg=n_lists if kind in (SCALAR, SCALAR_LIST) else None, **extra)
        return outs

    def new(*args, alpha=1):
        return run(args, alpha, False)

    def in_place(*args, alpha=1):
        run(args, alpha, True)

    # Scalars that reach the kernel only as float64 bits (apply): list plans read them per call, not by value
    # (a ScalarList's one value too).
    new.per_call_scalars = in_place.per_call_scalars = (n_lists, "alpha") if kind in (SCALAR, SCALAR_LIST) \
        else ("alpha",)

    dot = f".{suffix}" if suffix else ""
    return {f"{name}{dot}": new, f"{name}_{dot}": in_place} if functional else {f"{name}_{dot}": in_place}


def overloads(name, table, bodies, **options) -> dict:
    """Every form of an operator: ``table`` holds (suffix, tensor lists, scalar kind, alpha) per overload
    family (the operator's FORMS, which its samples read too), ``bodies`` the Triton body per suffix."""
    return {overload: fn for suffix, n_lists, kind, alpha in table
            for overload, fn in forms(name, suffix, bodies[suffix], n_lists, kind, alpha=alpha, **options).items()}


def _scalar_operand(kind, value, self, host_reads_cpu_scalar=False):
    """(the operand as given, apply()'s keyword for it) after ATen's checks."""
    if kind == SCALAR:
        return value, {"scalar": check_scalar(value)}
    if kind == SCALAR_LIST:
        check_scalar_list(self, value)
        return value, {"scalars": value}
    if kind == CPU_SCALARS:
        return value, {"scalars": cpu_scalars(self, value)}
    if kind == TENSOR:
        check_scalar_tensor(value)
        return value, _tensor_scalar(value, self, host_reads_cpu_scalar)
    return value, {}


def cpu_scalars(self, scalars) -> list:
    """A 1-d CPU tensor of one scalar per row, as ATen's ``.Tensor`` overloads of addcmul/addcdiv take it."""
    mt.check_nonempty(self)
    if scalars.device.type != "cpu":  # unreached on the interpreter: its tensors are on the CPU
        raise RuntimeError(f"Expected scalars to be on CPU, got {scalars.device} instead.")
    if not scalars.is_contiguous():
        raise RuntimeError("Expected scalars to be contiguous.")
    if scalars.dim() != 1:
        raise RuntimeError(f"Expected packed scalar Tensor to be of dimension 1. Got {scalars.dim()} instead.")
    if scalars.numel() != len(self):
        raise RuntimeError(f"Expected length of scalars to match input of length {len(self)} but got "
                           f"{scalars.numel()} instead.")
    if scalars.is_complex():
        raise Fallback("complex scalars: ATen computes complex results")
    return scalars.tolist()  # CPU memory: no device synchronisation


def _tensor_scalar(other, self, host_reads_cpu_scalar) -> dict:
    """A 0-d tensor operand: read in the kernel on the lists' device. A CPU one beside device lists is read here
    where ATen's CUDA kernels read it on the host: _foreach_mul and _foreach_div always, _foreach_add on its
    slow route (a scalar of another dtype than the lists'); otherwise they refuse it. On the CPU it is read here."""
    device = self[0].device
    if other.device != device:  # unreached on the interpreter: its tensors are all on the CPU
        if other.device.type != "cpu":
            raise Fallback(f"a scalar tensor on {other.device} for lists on {device}: ATen serves it")
        if device.type == "cpu" or host_reads_cpu_scalar or other.dtype != self[0].dtype:
            return {"scalar": check_scalar(other.item())}
        raise RuntimeError(f"scalar tensor expected to be on {device} but is on cpu")
    if not other.is_floating_point():
        raise Fallback(f"a scalar tensor of dtype {other.dtype}")
    return {"scalar_tensor": other}


def _one_dtype(lists) -> bool:
    return len(set(chain.from_iterable(map(_DTYPE, tensors) for tensors in lists))) == 1


def _new_out(like, shape, dtype):
    if shape == like.shape:
        return torch.empty_like(like, dtype=dtype)
    return torch.empty(shape, dtype=dtype, device=like.device)


def foreach_samples(overload_name, **fields):
    """The family's sample generator for one operator (gems/testing/samples_optim.py), made on first use."""
    return lazy("gems.testing.samples_optim", "ForeachSamples", overload_name, **fields)
