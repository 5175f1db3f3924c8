"""_fused_sgd_: one SGD step over every parameter, in one launch (gems/ops/optim/multi_tensor.py), with lr a
float or a 0-d tensor (``.tensor_lr``). ``torch.optim.SGD(fused=True)`` dispatches it.

Per element, in fp32 (fp64 for fp64 params), as ATen's FusedSgdMathFunctor:
    g = grad / grad_scale (stored back into grad when grad_scale is given); g = -g if maximize
    g += weight_decay * p
    with momentum buffers: buf = g on the first step, else momentum * buf + (1 - dampening) * g;
                           g = g + momentum * buf (nesterov) or buf
    p -= lr * g
A found_inf of exactly 1 skips the whole step, with no host synchronisation. Without momentum the buffer
list is empty (and momentum must be 0); with it momentum must be positive (ATen's RuntimeError otherwise).
"""

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import float64_bits
from gems.dtypes import FLOATS
from gems.ops.optim import multi_tensor as mt
from gems.ops.pointwise.shared import fdiv
from gems.runtime.launch import Launcher
from gems.runtime.registration import Fallback
from gems.spec import OpSpec, lazy, lazy_perf


@triton.jit
def _sgd_tile(p_ptr, g_ptr, buf_ptr, offs, mask, gscale, wd, momentum, one_minus_dampening, lr,
              DTYPE: tl.constexpr, COMPUTE: tl.constexpr, HAS_MOMENTUM: tl.constexpr, NESTEROV: tl.constexpr,
              FIRST_STEP: tl.constexpr, MAXIMIZE: tl.constexpr, HAS_WD: tl.constexpr, HAS_GRAD_SCALE: tl.constexpr):
    p = tl.load(p_ptr + offs, mask=mask).to(COMPUTE)
    g = tl.load(g_ptr + offs, mask=mask).to(COMPUTE)
    if HAS_GRAD_SCALE:
        g = fdiv(g, gscale)
        tl.store(g_ptr + offs, g.to(DTYPE), mask=mask)
    if MAXIMIZE:
        g = g * -1.0
    if HAS_WD:
        g = g + wd * p
    if HAS_MOMENTUM:
        if FIRST_STEP:
            buf = g
        else:
            buf = momentum * tl.load(buf_ptr + offs, mask=mask).to(COMPUTE) + one_minus_dampening * g
        tl.store(buf_ptr + offs, buf.to(DTYPE), mask=mask)
        if NESTEROV:
            g = g + momentum * buf
        else:
            g = buf
    tl.store(p_ptr + offs, (p - lr * g).to(DTYPE), mask=mask)


# float64 bits as int64 parameters whatever their value (foreach_kernels.py foreach_kernel says why)
@triton.jit(do_not_specialize=["lr_bits", "wd_bits", "momentum_bits", "dampening_bits"])
def _sgd_kernel(table_ptr, lr_ptr, grad_scale_ptr, found_inf_ptr, n_rows, lr_bits: tl.int64, wd_bits: tl.int64,
                momentum_bits: tl.int64, dampening_bits: tl.int64, DTYPE: tl.constexpr, COMPUTE: tl.constexpr,
                HAS_MOMENTUM: tl.constexpr,
                NESTEROV: tl.constexpr, FIRST_STEP: tl.constexpr, MAXIMIZE: tl.constexpr, HAS_WD: tl.constexpr,
                LR_TENSOR: tl.constexpr, HAS_GRAD_SCALE: tl.constexpr, HAS_FOUND_INF: tl.constexpr,
                ALIGNED: tl.constexpr, STEPS: tl.constexpr, CHUNK_SIZE: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    """Row words: numel, param, grad, momentum buffer (or 0)."""
    row_ptr, start, numel = mt.program_row(table_ptr, n_rows, 4, STEPS, CHUNK_SIZE)
    end = tl.minimum(start + CHUNK_SIZE, numel)
    if HAS_FOUND_INF:
        end = tl.where(tl.load(found_inf_ptr) == 1.0, start, end)  # skip the step: no tile runs
    p_ptr = mt.typed(row_ptr, 1, DTYPE, ALIGNED)
    g_ptr = mt.typed(row_ptr, 2, DTYPE, ALIGNED)
    buf_ptr = mt.typed(row_ptr, 3, DTYPE, ALIGNED)
    lr = (tl.load(lr_ptr).to(tl.float64) if LR_TENSOR else mt.f64_bits(lr_bits)).to(COMPUTE)
    gscale = tl.load(grad_scale_ptr).to(COMPUTE) if HAS_GRAD_SCALE else 1.0
    wd, momentum = mt.f64_bits(wd_bits).to(COMPUTE), mt.f64_bits(momentum_bits).to(COMPUTE)
    one_minus_dampening = (1.0 - mt.f64_bits(dampening_bits)).to(COMPUTE)
    offs = tl.arange(0, BLOCK_SIZE)
    full_end = start + (end - start) // BLOCK_SIZE * BLOCK_SIZE
    for base in range(start, full_end, BLOCK_SIZE):
        _sgd_tile(p_ptr + base, g_ptr + base, buf_ptr + base, offs, None, gscale, wd, momentum, one_minus_dampening,
                  lr, DTYPE, COMPUTE, HAS_MOMENTUM, NESTEROV, FIRST_STEP, MAXIMIZE, HAS_WD, HAS_GRAD_SCALE)
    if full_end < end:
        idx = full_end + offs
        _sgd_tile(p_ptr, g_ptr, buf_ptr, idx, idx < end, gscale, wd, momentum, one_minus_dampening, lr, DTYPE,
                  COMPUTE, HAS_MOMENTUM, NESTEROV, FIRST_STEP, MAXIMIZE, HAS_WD, HAS_GRAD_SCALE)


mt.mark(_sgd_kernel)
_launch = Launcher(_sgd_kernel)


def fused_sgd_(self, grads, momentum_buffer_list, *, weight_decay, momentum, lr, dampening, nesterov, maximize,
               is_first_step, grad_scale=None, found_inf=None):
    if len(self) == 0:
        return
    has_momentum = len(momentum_buffer_list) > 0
    if has_momentum and momentum <= 0:
        raise RuntimeError("Expected momentum_buffer_list.empty() to be true, but got false.")
    mt.check_lengths(self, grads=grads, **({"momentum_buffer_list": momentum_buffer_list}
                                           if has_momentum or momentum != 0 else {}))
    if self[0].dtype not in FLOATS:
        raise Fallback(f"params of dtype {self[0].dtype}: ATen's fused kernels are for floating types")
    lr = mt.device_scalars(self, lr, grad_scale, found_inf)
    lists = [self, grads] + ([momentum_buffer_list] if has_momentum else [])
    # Row words: numel, param, grad, momentum buffer (0 without momentum). Contiguous lists of one dtype and equal
    # shapes (every optimizer's): checked and written in one C++ loop of the native layer, whose list plans then
    # replay the call with no Python (an lr schedule's new lr read per call).
    uniform = mt.uniform_table(lists, () if has_momentum else [0] * len(self), flat_flag=False)
    if uniform is None:
        mt.check_fused_lists(lists, "params, grads, and momentum_buffer_list" if has_momentum else "params and grads")
    device, dtype = self[0].device, self[0].dtype
    if uniform is not None:
        content, programs, n_rows, aligned = uniform
        table = mt.upload_bytes(content, device) if n_rows else None
    else:
        rows, numels, addresses = [], [], []
        for i, p in enumerate(self):
            if p.numel() == 0:
                continue
            row = [t[i].data_ptr() for t in lists] + ([] if has_momentum else [0])
            rows.append(row)
            numels.append(p.numel())
            addresses += row[:len(lists)]
        n_rows, aligned = len(rows), mt.aligned(addresses)
        table, programs = mt.table(rows, numels, device) if rows else (None, 0)
    if not n_rows:
        return
    lr_tensor = isinstance(lr, torch.Tensor)
    _launch((programs,), table, lr if lr_tensor else table, table if grad_scale is None else grad_scale,
            table if found_inf is None else found_inf, n_rows,
            float64_bits(0.0) if lr_tensor else mt.scalar_word(lr, "lr"), float64_bits(float(weight_decay)),
            float64_bits(float(momentum)), float64_bits(float(dampening)), mt.TL_DTYPES[dtype],
            tl.float64 if dtype == torch.float64 else tl.float32, has_momentum, bool(nesterov), bool(is_first_step),
            bool(maximize), weight_decay != 0, lr_tensor, grad_scale is not None, found_inf is not None, aligned,
            mt.steps_for(n_rows), mt.CHUNK, mt.BLOCK, num_warps=mt.NUM_WARPS)


# What reaches the kernel only as float64 bits (list plans read it per call: an lr schedule's new value).
fused_sgd_.per_call_scalars = ("lr",)

SPECS = [
    OpSpec(name="fused_sgd", family="optim",
           impls={"_fused_sgd_": fused_sgd_, "_fused_sgd_.tensor_lr": fused_sgd_},
           call=torch._fused_sgd_, samples=lazy("gems.testing.samples_optim", "fused_sgd_samples"),
           dtypes=FLOATS, no_launch={"empty-tensors": "every parameter is empty"},
           perf=lazy_perf("gems.testing.samples_optim", "step_perf", "sgd_fused", shapes="optim")),
]
