"""_fused_adam_: one Adam step over every parameter, in one launch (gems/ops/optim/multi_tensor.py), with
lr a float or a 0-d tensor (``.tensor_lr``). gems/ops/optim/fused_adamw.py launches the same kernel with
decoupled weight decay.

Per element, in fp32 (fp64 for fp64 params), as ATen's FusedAdamMathFunctor:
    g = grad / grad_scale (stored back into grad when grad_scale is given); g = -g if maximize
    Adam: g += weight_decay * p            AdamW: p -= lr * weight_decay * p
    m = beta1 * m + (1 - beta1) * g;       v = beta2 * v + (1 - beta2) * g * g
    v_max = max(v_max, v) (amsgrad)
    p -= lr / (1 - beta1^step) * m / (sqrt(v or v_max) / sqrt(1 - beta2^step) + eps)
with each tensor's step read from its (device) state_steps tensor and the bias corrections in fp64. A
found_inf of exactly 1 skips the whole step (GradScaler's overflow), with no host synchronisation.
fp32 and fp64 divide and take square roots with IEEE rounding, as ATen; fp16 and bf16 parameters, whose results
are rounded to 8 or 11 bits of mantissa, use the GPU's approximate fp32 division and square root (2 ulp of fp32 at
most): those roundings decide the stored value only at a 16-bit rounding boundary, and they cut the step's time
(``_FAST_DTYPES``).

ATen's checks come first: lists of one length, every tensor of one dtype, device and dense layout with
its row's sizes and strides (RuntimeError), grad_scale and found_inf in float32.
"""

import operator

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

from gems.codegen.pointwise import float64_bits
from gems.dtypes import FLOATS
from gems.ops.optim import multi_tensor as mt
from gems.ops.pointwise.shared import fdiv
from gems.runtime.launch import Launcher
from gems.runtime.registration import Fallback
from gems.spec import OpSpec, lazy, lazy_perf

WIDTH = 7  # row words: numel, param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq (or 0), step
_STEP_DTYPES = {torch.float32, torch.float64}  # step counts the kernel reads on the device
_DEVICE, _DTYPE = operator.attrgetter("device"), operator.attrgetter("dtype")
# Parameter dtypes computed with approximate fp32 division and square root (see the module docstring).
_FAST_DTYPES = {torch.float16, torch.bfloat16}
# Warps per program: twice the other multi-tensor kernels' (more loads in flight around the longer arithmetic). On
# an H200, bf16 AdamW over the llama preset's 971M parameters: 3.40 ms with 8 warps, 3.93 ms with 4, ATen's fused
# step 5.02 ms (IEEE division and square root with 4 warps: 4.89 ms); over BERT-base's 109M: 0.977 / 0.992 / 1.004.
_NUM_WARPS = 8


@triton.jit
def _sqrt(x):
    if x.dtype == tl.float32:
        r = tl.sqrt_rn(x)
    else:
        r = tl.sqrt(x)
    return r


@triton.jit
def _adam_tile(p_ptr, g_ptr, m_ptr, v_ptr, vmax_ptr, offs, mask, gscale, b1, one_minus_b1, b2, one_minus_b2, wd,
               lr_wd, step_size, bc2_sqrt, eps, DTYPE: tl.constexpr, COMPUTE: tl.constexpr, ADAMW: tl.constexpr,
               AMSGRAD: tl.constexpr, MAXIMIZE: tl.constexpr, HAS_WD: tl.constexpr, HAS_GRAD_SCALE: tl.constexpr,
               FAST: tl.constexpr):
    p = tl.load(p_ptr + offs, mask=mask).to(COMPUTE)
    g = tl.load(g_ptr + offs, mask=mask).to(COMPUTE)
    m = tl.load(m_ptr + offs, mask=mask).to(COMPUTE)
    v = tl.load(v_ptr + offs, mask=mask).to(COMPUTE)
    if HAS_GRAD_SCALE:
        g = fdiv(g, gscale)
        tl.store(g_ptr + offs, g.to(DTYPE), mask=mask)
    if MAXIMIZE:
        g = g * -1.0
    if HAS_WD:
        if ADAMW:
            p = p - lr_wd * p
        else:
            g = g + p * wd
    m = b1 * m + one_minus_b1 * g
    v = b2 * v + one_minus_b2 * g * g
    if AMSGRAD:
        vmax = tl.load(vmax_ptr + offs, mask=mask).to(COMPUTE)
        vmax = tl.where(vmax < v, v, vmax)  # std::max(vmax, v)
        tl.store(vmax_ptr + offs, vmax.to(DTYPE), mask=mask)
        second = vmax
    else:
        second = v
    if FAST:
        p = p - step_size * m / (tl.sqrt(second) / bc2_sqrt + eps)
    else:
        p = p - fdiv(step_size * m, fdiv(_sqrt(second), bc2_sqrt) + eps)
    tl.store(p_ptr + offs, p.to(DTYPE), mask=mask)
    tl.store(m_ptr + offs, m.to(DTYPE), mask=mask)
    tl.store(v_ptr + offs, v.to(DTYPE), mask=mask)


# float64 bits as int64 parameters whatever their value (foreach_kernels.py foreach_kernel says why: lr=0.0 at a
# warm-up's first step, recorded as int32, would have replayed every later lr's low half)
@triton.jit(do_not_specialize=["lr_bits", "beta1_bits", "beta2_bits", "wd_bits", "eps_bits"])
def _adam_kernel(table_ptr, lr_ptr, grad_scale_ptr, found_inf_ptr, n_rows, lr_bits: tl.int64, beta1_bits: tl.int64,
                 beta2_bits: tl.int64, wd_bits: tl.int64, eps_bits: tl.int64, DTYPE: tl.constexpr,
                 STEP_DTYPE: tl.constexpr, COMPUTE: tl.constexpr, ADAMW: tl.constexpr,
                 AMSGRAD: tl.constexpr, MAXIMIZE: tl.constexpr, HAS_WD: tl.constexpr, LR_TENSOR: tl.constexpr,
                 HAS_GRAD_SCALE: tl.constexpr, HAS_FOUND_INF: tl.constexpr, ALIGNED: tl.constexpr,
                 FAST: tl.constexpr, STEPS: tl.constexpr, CHUNK_SIZE: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    row_ptr, start, numel = mt.program_row(table_ptr, n_rows, 7, STEPS, CHUNK_SIZE)
    end = tl.minimum(start + CHUNK_SIZE, numel)
    if HAS_FOUND_INF:
        end = tl.where(tl.load(found_inf_ptr) == 1.0, start, end)  # skip the step: no tile runs
    p_ptr = mt.typed(row_ptr, 1, DTYPE, ALIGNED)
    g_ptr = mt.typed(row_ptr, 2, DTYPE, ALIGNED)
    m_ptr = mt.typed(row_ptr, 3, DTYPE, ALIGNED)
    v_ptr = mt.typed(row_ptr, 4, DTYPE, ALIGNED)
    vmax_ptr = mt.typed(row_ptr, 5, DTYPE, ALIGNED)
    step = tl.load(mt.typed(row_ptr, 6, STEP_DTYPE, False)).to(tl.float64)
    beta1, beta2 = mt.f64_bits(beta1_bits), mt.f64_bits(beta2_bits)
    lr = tl.load(lr_ptr).to(tl.float64) if LR_TENSOR else mt.f64_bits(lr_bits)
    wd = mt.f64_bits(wd_bits)
    step_size = (lr / (1.0 - libdevice.pow(beta1, step))).to(COMPUTE)
    bc2_sqrt = tl.sqrt(1.0 - libdevice.pow(beta2, step)).to(COMPUTE)
    gscale = tl.load(grad_scale_ptr).to(COMPUTE) if HAS_GRAD_SCALE else 1.0
    b1, one_minus_b1 = beta1.to(COMPUTE), (1.0 - beta1).to(COMPUTE)
    b2, one_minus_b2 = beta2.to(COMPUTE), (1.0 - beta2).to(COMPUTE)
    eps, lr_wd = mt.f64_bits(eps_bits).to(COMPUTE), (lr * wd).to(COMPUTE)
    wd = wd.to(COMPUTE)
    offs = tl.arange(0, BLOCK_SIZE)
    full_end = start + (end - start) // BLOCK_SIZE * BLOCK_SIZE
    for base in range(start, full_end, BLOCK_SIZE):
        _adam_tile(p_ptr + base, g_ptr + base, m_ptr + base, v_ptr + base, vmax_ptr + base, offs, None, gscale, b1,
                   one_minus_b1, b2, one_minus_b2, wd, lr_wd, step_size, bc2_sqrt, eps, DTYPE, COMPUTE, ADAMW,
                   AMSGRAD, MAXIMIZE, HAS_WD, HAS_GRAD_SCALE, FAST)
    if full_end < end:
        idx = full_end + offs
        _adam_tile(p_ptr, g_ptr, m_ptr, v_ptr, vmax_ptr, idx, idx < end, gscale, b1, one_minus_b1, b2,
                   one_minus_b2, wd, lr_wd, step_size, bc2_sqrt, eps, DTYPE, COMPUTE, ADAMW, AMSGRAD, MAXIMIZE,
                   HAS_WD, HAS_GRAD_SCALE, FAST)


mt.mark(_adam_kernel)
_launch = Launcher(_adam_kernel)


def adam_step(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr, beta1, beta2, weight_decay,
              eps, amsgrad, maximize, grad_scale, found_inf, adamw):
    """Checks, then one launch (shared by _fused_adam_ and _fused_adamw_)."""
    if len(params) == 0:
        return
    lists = [params, grads, exp_avgs, exp_avg_sqs] + ([max_exp_avg_sqs] if amsgrad else [])
    mt.check_lengths(params, grads=grads, exp_avgs=exp_avgs, exp_avg_sqs=exp_avg_sqs, state_steps=state_steps,
                  **({"max_exp_avg_sqs": max_exp_avg_sqs} if amsgrad else {}))
    if params[0].dtype not in FLOATS:
        raise Fallback(f"params of dtype {params[0].dtype}: ATen's fused kernels are for floating types")
    lr = mt.device_scalars(params, lr, grad_scale, found_inf)
    names = "params, grads, exp_avgs, exp_avg_sqs, and max_exp_avg_sqs" if amsgrad else \
        "params, grads, exp_avgs, and exp_avg_sqs"
    # Row words: numel, p, g, m, v, vmax (0 without amsgrad), the step count's address. Contiguous lists of one
    # dtype and equal shapes (every optimizer's): checked and written in one C++ loop of the native layer.
    uniform = mt.uniform_table(lists, () if amsgrad else [0] * len(params), [state_steps], flat_flag=False)
    if uniform is None:
        mt.check_fused_lists(lists, names)
    device, dtype = params[0].device, params[0].dtype
    if set(map(_DEVICE, state_steps)) != {device} or not set(map(_DTYPE, state_steps)) <= _STEP_DTYPES:
        raise Fallback("state_steps off the params' device or not floating: ATen reads them")
    if uniform is not None:
        content, programs, n_rows, aligned = uniform
        table = mt.upload_bytes(content, device) if n_rows else None
    else:
        rows, numels, addresses = [], [], []
        for i, p in enumerate(params):
            if p.numel() == 0:
                continue
            row = [t[i].data_ptr() for t in lists] + ([] if amsgrad else [0]) + [state_steps[i].data_ptr()]
            rows.append(row)
            numels.append(p.numel())
            addresses += row[:5 if amsgrad else 4]
        n_rows, aligned = len(rows), mt.aligned(addresses)
        table, programs = mt.table(rows, numels, device) if rows else (None, 0)
    if not n_rows:
        return
    lr_tensor = isinstance(lr, torch.Tensor)
    _launch((programs,), table, lr if lr_tensor else table, table if grad_scale is None else grad_scale,
            table if found_inf is None else found_inf, n_rows,
            float64_bits(0.0) if lr_tensor else mt.scalar_word(lr, "lr"), mt.scalar_word(beta1, "beta1"),
            mt.scalar_word(beta2, "beta2"), float64_bits(float(weight_decay)), mt.scalar_word(eps, "eps"),
            mt.TL_DTYPES[dtype], mt.TL_DTYPES[state_steps[0].dtype],
            tl.float64 if dtype == torch.float64 else tl.float32, adamw, amsgrad, maximize, weight_decay != 0,
            lr_tensor, grad_scale is not None, found_inf is not None, aligned, dtype in _FAST_DTYPES,
            mt.steps_for(n_rows), mt.CHUNK, mt.BLOCK, num_warps=_NUM_WARPS)


def fused_adam_(self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, *, lr, beta1, beta2,
                weight_decay, eps, amsgrad, maximize, grad_scale=None, found_inf=None):
    adam_step(self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr, beta1, beta2, weight_decay, eps,
              amsgrad, maximize, grad_scale, found_inf, adamw=False)


# What reaches the kernel only as float64 bits (list plans read them per call; weight_decay != 0 is a constexpr).
PER_CALL_SCALARS = ("lr", "beta1", "beta2", "eps")
fused_adam_.per_call_scalars = PER_CALL_SCALARS


SPECS = [
    OpSpec(name="fused_adam", family="optim",
           impls={"_fused_adam_": fused_adam_, "_fused_adam_.tensor_lr": fused_adam_},
           call=torch._fused_adam_, samples=lazy("gems.testing.samples_optim", "FusedAdamSamples", adamw=False),
           dtypes=FLOATS, no_launch={"empty-tensors": "every parameter is empty"},
           perf=lazy_perf("gems.testing.samples_optim", "step_perf", "adam_fused", shapes="optim")),
]
