"""nll_loss: ``nll_loss_forward`` and ``nll_loss_backward`` (what F.nll_loss, F.cross_entropy and
their autograd reach for 1-d and 2-d inputs; ``nll_loss``, ``nll_loss_nd`` and ``cross_entropy_loss``
are composite). The kernels also serve nll_loss2d.py: every input is viewed as (N, C, S) and its
target as (N, S), with S = 1 here and H*W there.

    loss[n, s] = -weight[t] * x[n, t, s]   with t = target[n, s]; 0 where t == ignore_index
    output     = loss (none), sum(loss) (sum), sum(loss) / sum(weight[t] over kept items) (mean)
    dx[n, c, s] = -weight[t] * g[n, s] (g / total_weight for mean) where c == t, else 0

The forward splits the items between programs by the vendor's "reduction" rules (a flat reduction of
N*S elements); each program writes its partial loss and weight sums and a second, one-program launch
adds them. A target outside [0, C) other than ignore_index is never read through: the kernels mask it.
Where kernels are compiled they assert on the device that every target is in range (``debug=True``), as
ATen's CUDA kernels assert, so the call never waits for its kernels; where they are interpreted (the
interpreter, the simulated device: asserts off, philox.host_checks) each program writes a flag, which the
call reads on the host (gems.native.record.flags_clear) to raise ATen's CPU error (IndexError "Target 7 is
out of bounds."). Either way the call only allocates and launches: the native layer replays it (reading the
flags again where they are read).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from gems.dtypes import ATEN_NAMES, FLOATS
from gems.native.record import flags_clear
from gems.ops.pointwise.shared import div_rn
from gems.ops.random.philox import host_checks
from gems.ops.reduction.planning import (
    TL_DTYPES,
    Layout,
    accumulation_dtype,
    config,
    output_coords,
    program_count,
    reduce_max,
    reduce_sum,
)
from gems.runtime.launch import Launcher, cdiv, next_power_of_2, packed
from gems.runtime.registration import Fallback
from gems.spec import OpSpec, lazy

REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}

# --------------------------------------------------------------------------- kernels


@triton.jit
def _kept_targets(t_ptr, n, s, stride_tn, stride_ts, mask, n_classes, ignore_index):
    """(target, kept, bad): kept items count in the loss; bad ones are out of range (never read through)."""
    t = tl.load(t_ptr + n * stride_tn + s * stride_ts, mask=mask, other=ignore_index).to(tl.int64)
    counted = mask & (t != ignore_index)
    inside = (t >= 0) & (t < n_classes)
    kept = counted & inside
    bad = tl.where(counted & (t < 0), 1, 0) + tl.where(counted & (t >= n_classes), 1, 0)
    return tl.where(kept, t, 0), kept, bad


@triton.jit
def _check_program(bad, flags_ptr, pid, ASSERT: tl.constexpr):
    """ASSERT: assert on the device that no target of this program was out of range; else flags[pid] = 1 if
    none was, 0 otherwise (read on the host)."""
    if ASSERT:
        tl.device_assert(bad == 0, "nll_loss: a target is out of bounds [0, n_classes)")
    else:
        tl.store(flags_ptr + pid, tl.where(bad > 0, 0, 1).to(tl.int32))


@triton.jit(debug=True)
def _nll_forward_kernel(
    x_ptr, t_ptr, w_ptr, out_ptr, total_ptr, partial_ptr, flags_ptr,
    n_items, n_spatial, n_classes, ignore_index, items_per_program,
    stride_xn, stride_xc, stride_xs, stride_tn, stride_ts,
    ACC: tl.constexpr, HAS_WEIGHT: tl.constexpr, STORE_EACH: tl.constexpr, INT64: tl.constexpr,
    ASSERT: tl.constexpr, BLOCK: tl.constexpr,
):
    """Items pid*items_per_program ...: out[item] = loss (STORE_EACH, and total = 0 as ATen leaves it),
    partial[pid] = (sum loss, sum weight)."""
    pid = tl.program_id(0)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        pid = pid.to(tl.int64)
    start = pid * items_per_program
    end = tl.minimum(start + items_per_program, n_items)
    loss_acc = tl.full([BLOCK], 0, ACC)
    weight_acc = tl.full([BLOCK], 0, ACC)
    bad_acc = tl.full([BLOCK], 0, tl.int32)
    for i in range(start, end, BLOCK):
        offs = i + tl.arange(0, BLOCK)
        mask = offs < end
        n = offs // n_spatial
        s = offs % n_spatial
        t, kept, bad = _kept_targets(t_ptr, n, s, stride_tn, stride_ts, mask, n_classes, ignore_index)
        if HAS_WEIGHT:
            w = tl.load(w_ptr + t, mask=kept, other=0).to(ACC)
        else:
            w = tl.where(kept, 1.0, 0.0).to(ACC)
        x = tl.load(x_ptr + n * stride_xn + t * stride_xc + s * stride_xs, mask=kept, other=0).to(ACC)
        loss = tl.where(kept, -(x * w), 0.0)
        if STORE_EACH:
            tl.store(out_ptr + offs, loss.to(out_ptr.dtype.element_ty), mask=mask)
        loss_acc += loss
        weight_acc += w
        bad_acc += bad
    tl.store(partial_ptr + pid * 2, reduce_sum(loss_acc, 0))
    tl.store(partial_ptr + pid * 2 + 1, reduce_sum(weight_acc, 0))
    if STORE_EACH:
        if pid == 0:
            tl.store(total_ptr, tl.zeros([], ACC).to(total_ptr.dtype.element_ty))
    _check_program(reduce_max(bad_acc, 0), flags_ptr, pid, ASSERT)


@triton.jit
def _nll_finish_kernel(partial_ptr, out_ptr, total_ptr, n_partials, MEAN: tl.constexpr, BLOCK: tl.constexpr):
    """out = the loss sums' total (over the weight sums' for mean); total = the weight sums' total."""
    offs = tl.arange(0, BLOCK)
    mask = offs < n_partials
    loss = reduce_sum(tl.load(partial_ptr + offs * 2, mask=mask, other=0), 0)
    weight = reduce_sum(tl.load(partial_ptr + offs * 2 + 1, mask=mask, other=0), 0)
    if MEAN:
        loss = div_rn(loss, weight)  # 0 / 0: NaN when every item is ignored, as in ATen
    tl.store(out_ptr, loss.to(out_ptr.dtype.element_ty))
    tl.store(total_ptr, weight.to(total_ptr.dtype.element_ty))


@triton.jit(debug=True)
def _nll_backward_kernel(
    g_ptr, t_ptr, w_ptr, total_ptr, dx_ptr, flags_ptr,
    n_rows, n_inner, n_classes, ignore_index,
    stride_gn, stride_gs, stride_tn, stride_ts, stride_dn, stride_dc, stride_ds,
    ACC: tl.constexpr, HAS_WEIGHT: tl.constexpr, MEAN: tl.constexpr, PER_ITEM: tl.constexpr,
    COLS: tl.constexpr, INT64: tl.constexpr, ASSERT: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr,
):
    """dx[n, :, s] for the BLOCK_M items (n, s) of this program: zeros but at the target class."""
    pid = tl.program_id(0)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        pid = pid.to(tl.int64)
    n, s, mask_m = output_coords(pid, n_rows, n_inner, COLS, BLOCK_M)
    t, kept, bad = _kept_targets(t_ptr, n, s, stride_tn, stride_ts, mask_m, n_classes, ignore_index)
    if PER_ITEM:
        g = tl.load(g_ptr + n * stride_gn + s * stride_gs, mask=kept, other=0).to(ACC)
    else:
        g = tl.load(g_ptr).to(ACC)
    if MEAN:
        g = div_rn(g, tl.load(total_ptr).to(ACC))
    if HAS_WEIGHT:
        value = tl.load(w_ptr + t, mask=kept, other=0).to(ACC) * -g
    else:
        value = -g + tl.full([BLOCK_M], 0, ACC)
    dx_rows = dx_ptr + n * stride_dn + s * stride_ds
    for c in range(0, n_classes, BLOCK_K):
        offs_c = c + tl.arange(0, BLOCK_K)
        hit = kept[:, None] & (offs_c[None, :] == t[:, None])
        tl.store(dx_rows[:, None] + offs_c[None, :] * stride_dc, tl.where(hit, value[:, None], 0.0).to(
            dx_ptr.dtype.element_ty), mask=mask_m[:, None] & (offs_c[None, :] < n_classes))
    _check_program(reduce_max(bad, 0), flags_ptr, pid, ASSERT)


_forward_launcher = Launcher(_nll_forward_kernel)
_finish_launcher = Launcher(_nll_finish_kernel)
_backward_launcher = Launcher(_nll_backward_kernel)

# --------------------------------------------------------------------------- launchers


def check_weight(weight, x, n_classes):
    if weight is not None and (weight.dim() != 1 or weight.numel() != n_classes):
        raise RuntimeError(f"weight tensor should be defined either for all {n_classes} classes or no classes but "
                           f"got weight tensor of shape: {list(weight.shape)}")
    if x.dtype not in FLOATS:
        raise Fallback(f"nll_loss of {x.dtype} is not handled by gems")
    if weight is not None and weight.dtype != x.dtype:
        raise RuntimeError(_scalar_type_error(x, weight))
    if weight is not None and weight.device != x.device:  # unreached on the interpreter: one device
        raise Fallback("a weight on another device is left to ATen (which raises)")


def _scalar_type_error(x, other) -> str:
    """ATen's kernels read every floating operand as x's dtype: their error for one of another dtype."""
    return f"expected scalar type {ATEN_NAMES[x.dtype]} but found {ATEN_NAMES.get(other.dtype, other.dtype)}"


def check_reduction(reduction):
    if reduction not in REDUCTIONS:
        raise Fallback(f"reduction {reduction} is left to ATen")


def _check_target_dtype(target):
    if target.dtype not in (torch.int64, torch.uint8):
        raise Fallback(f"targets of {target.dtype} are left to ATen (which raises)")


def _flags(programs, x):
    """Where the kernels write their per-program flags: None where they assert on the device instead."""
    return torch.empty(programs, dtype=torch.int32, device=x.device) if host_checks() else None


def _check_targets(flags, target, n_classes, ignore_index):
    """Raise for a target out of range, once the kernels have cleared a flag for one (where they write flags)."""
    if flags is not None and not flags_clear(flags):
        # The error path only: find the first offending target, as ATen's CPU loop reports it.
        flat = target.reshape(-1).cpu()
        value = next(int(v) for v in flat.tolist() if v != ignore_index and not 0 <= v < n_classes)
        raise IndexError(f"Target {value} is out of bounds.")


def nll_forward(x, target, weight, reduction, ignore_index, view, store_each, out_shape):
    """(output, total_weight). view: (N, C, S, x strides (n, c, s), target strides (n, s)); store_each:
    the per-item losses are the output (of out_shape); otherwise the reduced loss is."""
    _check_target_dtype(target)
    weight = packed(weight)
    n, n_classes, n_spatial, x_strides, t_strides = view
    n_items = n * n_spatial
    acc_dtype = accumulation_dtype(x.dtype)
    layout = Layout(False, 1, n_items, 1, ((0, 1, 0),))
    cfg = config("reduction", layout)
    block = cfg["BLOCK_K"] * cfg["BLOCK_M"]
    per_program = cdiv(cdiv(max(n_items, 1), cfg.get("SPLITS", 1)), block) * block
    programs = cdiv(max(n_items, 1), per_program)
    out = torch.empty(out_shape if store_each else (), dtype=x.dtype, device=x.device)
    total = torch.empty((), dtype=x.dtype, device=x.device)
    partial = torch.empty((programs, 2), dtype=acc_dtype, device=x.device)
    flags = _flags(programs, x)
    w = weight if weight is not None else partial
    needs_int64 = max(n_items, abs(x_strides[0]) * n + abs(x_strides[1]) * n_classes + abs(x_strides[2]) * n_spatial,
                      abs(t_strides[0]) * n + abs(t_strides[1]) * n_spatial) > 2**31 - 2**21
    _forward_launcher((programs,), x, target, w, out, total, partial, partial if flags is None else flags, n_items,
                      n_spatial, n_classes, ignore_index, per_program, *x_strides, *t_strides, TL_DTYPES[acc_dtype],
                      weight is not None, store_each, needs_int64, flags is None, block, num_warps=cfg["num_warps"])
    if not store_each:
        _finish_launcher((1,), partial, out, total, programs, reduction == 1, next_power_of_2(programs),
                         num_warps=4)
    _check_targets(flags, target, n_classes, ignore_index)
    return out, total


def nll_backward(grad_output, x, target, weight, reduction, ignore_index, total_weight, view, g_strides):
    """dx (x's shape, contiguous). view as for nll_forward; g_strides: grad_output's (n, s) strides when it
    holds one gradient per item, else None (one scalar)."""
    _check_target_dtype(target)
    weight = packed(weight)
    if total_weight.numel() != 1:
        raise RuntimeError(f"expected total_weight to be a  single element tensor, got: {list(total_weight.shape)} "
                           f"({total_weight.numel()} elements)")
    for operand in (grad_output, total_weight):
        if operand.dtype != x.dtype:
            raise RuntimeError(_scalar_type_error(x, operand))
    n, n_classes, n_spatial, _, t_strides = view
    dx = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    if dx.numel() == 0:
        return dx
    # dx is contiguous (N, C, S): rows layout (items along N, classes contiguous) when S == 1, else the
    # cols layout (consecutive s of one n contiguous for every class).
    cols = n_spatial > 1
    layout = Layout(cols, n, n_classes, n_spatial, ((n_classes * n_spatial, n_spatial, 1),))
    cfg = config("reduction", layout)
    programs = program_count(layout, cfg["BLOCK_M"])
    flags = _flags(programs, x)
    acc = TL_DTYPES[accumulation_dtype(x.dtype)]
    _backward_launcher((programs,), grad_output, target, weight if weight is not None else dx, total_weight, dx,
                       dx if flags is None else flags,
                       n * n_spatial, n_spatial, n_classes, ignore_index, *(g_strides or (0, 0)), *t_strides,
                       n_classes * n_spatial, n_spatial, 1, acc, weight is not None, reduction == 1,
                       g_strides is not None, cols, dx.numel() > 2**31 - 2**21, flags is None, cfg["BLOCK_M"],
                       cfg["BLOCK_K"], num_warps=cfg["num_warps"])
    _check_targets(flags, target, n_classes, ignore_index)
    return dx


# --------------------------------------------------------------------------- ATen overloads


def _view(self, target):
    """(N, C, S = 1, x strides, target strides) of a 1-d or 2-d input, after ATen's shape checks."""
    if self.dim() not in (1, 2):
        raise RuntimeError("input tensor should be 1D or 2D")
    if target.dim() > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if self.dim() == 1:
        if target.dim() == 1 and target.shape[0] != 1:
            raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: {target.shape[0]}")
        if target.dim() != 0:
            raise Fallback("a 1-d input with a target of one element is left to ATen")
        return 1, self.shape[0], 1, (0, self.stride(0), 0), (0, 0)
    if target.dim() != 1 or self.shape[0] != target.shape[0]:
        if target.dim() == 0:  # ATen compares the batch sizes: target.size(0) of a 0-d target
            raise IndexError("Dimension specified as 0 but tensor has no dimensions")
        raise RuntimeError(f"size mismatch (got input: {list(self.shape)}, target: {list(target.shape)})")
    return self.shape[0], self.shape[1], 1, (self.stride(0), self.stride(1), 0), (target.stride(0), 0)


def nll_loss_forward(self, target, weight, reduction, ignore_index):
    check_reduction(reduction)
    view = _view(self, target)
    check_weight(weight, self, view[1])
    store_each = reduction == 0 and self.dim() == 2
    return nll_forward(self, target, weight, reduction, ignore_index, view, store_each, (view[0],))


def nll_loss_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight):
    check_reduction(reduction)
    view = _view(self, target)
    check_weight(weight, self, view[1])
    if reduction == 0 and self.dim() == 2:
        if grad_output.dim() != 1 or grad_output.shape[0] != view[0]:
            raise RuntimeError(f"Expected a tensor of dimension 1 and tensor.size[0] == {view[0]} but got: dimension "
                               f"{grad_output.dim()} and tensor.size[0] = {grad_output.shape[0]}")
        g_strides = (grad_output.stride(0), 0)
    else:
        if grad_output.numel() != 1:
            raise RuntimeError(f"Expected a single element grad_output tensor, but got: {list(grad_output.shape)}")
        g_strides = None
    return nll_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight, view, g_strides)


# ATen's own CUDA kernel asserts on the device for a target out of range, which leaves the process's CUDA
# context unusable (every later case of that worker failed on an H100, 2026-11-22): the conformance runner
# computes ATen's answer first, so these cases cannot run there (gems' kernels assert on the device too).
# ATen's cross_entropy with label smoothing and a weight sums the kept targets' weights by masked_fill while a
# Python dispatch mode is on (conformance's proof watches the cold call: isTensorSubclassLike) and by
# masked_select without one (the warm call): the same sum in another order, equal up to rounding.
WEIGHT_SUM_ORDER = {"cross-entropy-label-smoothing": "ATen's composite sums the kept weights by masked_fill under "
                    "the cold call's dispatch mode and by masked_select in the warm call"}
CUDA_ASSERTS = {("nvidia", "*", variant): "ATen's CUDA kernel asserts on the device for an out-of-range target "
                "and kills the process's CUDA context" for variant in (
                    "error-target-out-of-range", "error-target-negative", "error-target-out-of-range-none",
                    "error-target-out-of-range-backward")}

SPECS = [
    OpSpec(
        name="nll_loss", family="loss",
        impls={"nll_loss_forward": nll_loss_forward, "nll_loss_backward": nll_loss_backward},
        call=torch.nn.functional.nll_loss,
        samples=lazy("gems.testing.samples_loss", "nll_loss_samples", spatial=False),
        dtypes=FLOATS,
        tolerance="reduction",
        skips=CUDA_ASSERTS,
        varies_between_runs=WEIGHT_SUM_ORDER,
    ),
]
