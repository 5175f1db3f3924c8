"""linear_cross_entropy: a language model's head and its loss, ``cross_entropy(hidden @ weight.T, labels)``,
chunked over tokens so that the (tokens, vocab) logits are never materialized, with the gradients of
hidden and weight computed in the same pass.

    hidden (..., H), weight (V, H), labels (...) int64; reduction "mean" (over labels != ignore_index,
    as F.cross_entropy) or "sum". The loss is fp32 (fp64 for fp64 inputs), as Hugging Face's causal-LM
    loss computes it from logits.float().

Per chunk of C tokens (C * V about CHUNK_LOGITS elements): logits = h_c @ W^T (gems' GEMM, in the input
dtype as ATen's lm_head gives them), then one kernel reads each row twice (max and sum of exp, then
softmax), writes the row's loss and overwrites the logits with dlogits = (softmax - onehot(label)) * scale,
scale = 1 / (valid labels) for "mean" (counted on the device first: no host synchronisation), 0 for an
ignored row; then dh_c = dlogits @ W and dW += dlogits^T @ h_c (GEMMs). A last kernel adds the rows'
losses in a fixed order. The backward only scales the saved dh, dW by the loss's gradient (in place: it
can run once). Without gradients a chunk is one GEMM and the loss kernel. Labels outside [0, V) other
than ignore_index give a NaN loss (ATen's CUDA kernel asserts; checking would cost a synchronisation).
The eager composite ``F.cross_entropy(F.linear(hidden, weight).float(), labels)`` is the reference.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
import triton
import triton.language as tl

from gems.dtypes import FLOATS
from gems.ops.blas.gemm import gemm
from gems.ops.fused.api import api_function, needs_grad
from gems.ops.normalization.rows import compute_dtype, needs_int64
from gems.runtime.launch import Launcher, cdiv, next_power_of_2
from gems.runtime.registration import Fallback
from gems.spec import OpSpec, PerfSpec, lazy

NAME = "gems.fused.linear_cross_entropy"
# Logits per chunk: 32M elements (64 MiB in bf16; Llama-2's vocabulary of 32000: 1024 tokens), so each
# GEMM is large enough to run near peak while the chunk stays a fraction of the full logits. The
# interpreter takes 4K, so that small samples run several chunks.
GPU_CHUNK_LOGITS, INTERP_CHUNK_LOGITS = 1 << 25, 1 << 12
# Loss kernel: one row per program on the GPU in blocks of 4096 (8 warps); the interpreter takes 16K
# elements per program.
GPU_BLOCK, INTERP_TILE = 4096, 1 << 14
REDUCTIONS = ("mean", "sum")


@triton.jit
def scale_kernel(labels_ptr, scale_ptr, n, ignore_index, MEAN: tl.constexpr, BLOCK: tl.constexpr):
    """scale = 1 / (labels != ignore_index) for "mean" (inf when there are none, as 0/0 gives the composite's
    NaN loss), 1 for "sum"; one program."""
    acc = tl.zeros([BLOCK], tl.int32)
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        labels = tl.load(labels_ptr + offs, mask=offs < n, other=ignore_index)
        acc += (labels != ignore_index).to(tl.int32)
    if MEAN:
        scale = 1.0 / tl.sum(acc, 0).to(scale_ptr.dtype.element_ty)
    else:
        scale = tl.full([], 1.0, scale_ptr.dtype.element_ty)
    tl.store(scale_ptr, scale)


@triton.jit
def loss_rows_kernel(
    logits_ptr, labels_ptr, scale_ptr, loss_ptr, n_rows, n_cols, stride_lm, ignore_index,
    GRAD: tl.constexpr, COMPUTE: tl.constexpr, INT64: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    """loss[m] = logsumexp(logits[m]) - logits[m, label[m]] (0 for an ignored row); with GRAD, logits[m] is
    overwritten with (softmax(logits[m]) - onehot(label[m])) * scale (0 for an ignored row)."""
    pid = tl.program_id(0)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        pid = pid.to(tl.int64)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    mask_m = rows < n_rows
    labels = tl.load(labels_ptr + rows, mask=mask_m, other=ignore_index)
    valid = labels != ignore_index
    in_range = (labels >= 0) & (labels < n_cols)
    row_ptrs = logits_ptr + rows[:, None] * stride_lm
    top = tl.full([BLOCK_M], float("-inf"), COMPUTE)
    total = tl.zeros([BLOCK_M], COMPUTE)
    picked = tl.zeros([BLOCK_M], COMPUTE)
    for start in range(0, n_cols, BLOCK_N):
        offs = start + tl.arange(0, BLOCK_N)
        mask = mask_m[:, None] & (offs < n_cols)[None, :]
        x = tl.load(row_ptrs + offs[None, :], mask=mask, other=float("-inf")).to(COMPUTE)
        new_top = tl.maximum(top, tl.max(x, 1))
        # A row of -inf so far keeps its total at 0 (exp(-inf - -inf) would be NaN).
        rescale = tl.where(new_top == float("-inf"), 0.0, tl.exp(top - new_top))
        total = total * rescale + tl.sum(tl.where(mask, tl.exp(x - new_top[:, None]), 0.0), 1)
        top = new_top
        picked += tl.sum(tl.where(offs[None, :] == labels[:, None], x, 0.0), 1)
    lse = top + tl.log(total)
    loss = tl.where(valid, tl.where(in_range, lse - picked, float("nan")), 0.0)
    tl.store(loss_ptr + rows, loss, mask=mask_m)
    if GRAD:
        scale = tl.where(valid, tl.load(scale_ptr).to(COMPUTE), 0.0)
        for start in range(0, n_cols, BLOCK_N):
            offs = start + tl.arange(0, BLOCK_N)
            mask = mask_m[:, None] & (offs < n_cols)[None, :]
            x = tl.load(row_ptrs + offs[None, :], mask=mask, other=0).to(COMPUTE)
            grad = tl.exp(x - lse[:, None]) - (offs[None, :] == labels[:, None]).to(COMPUTE)
            tl.store(row_ptrs + offs[None, :], (grad * scale[:, None]).to(logits_ptr.dtype.element_ty), mask=mask)


@triton.jit
def finish_kernel(loss_ptr, scale_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = sum(loss) * scale, added in a fixed order; one program."""
    acc = tl.zeros([BLOCK], loss_ptr.dtype.element_ty)
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(loss_ptr + offs, mask=offs < n, other=0)
    tl.store(out_ptr, tl.sum(acc, 0) * tl.load(scale_ptr))


@triton.jit
def multiply_kernel(x_ptr, factor_ptr, n, COMPUTE: tl.constexpr, INT64: tl.constexpr, BLOCK: tl.constexpr):
    """x *= factor (a 0-d tensor) in place: the backward's loss gradient. Zeros (an ignored token's row)
    stay as they are: the composite scales dlogits before its products, whose zeros come out +0."""
    pid = tl.program_id(0)
    if INT64:  # unreached on the interpreter: offsets past 2^31 elements (a tensor that large)
        pid = pid.to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(COMPUTE)
    x = tl.where(x == 0, x, x * tl.load(factor_ptr).to(COMPUTE))
    tl.store(x_ptr + offs, x.to(x_ptr.dtype.element_ty), mask=mask)


_scale = Launcher(scale_kernel)
_loss_rows = Launcher(loss_rows_kernel)
_finish = Launcher(finish_kernel)
_multiply = Launcher(multiply_kernel)


def _check(hidden, weight, labels, reduction):
    if reduction not in REDUCTIONS:
        raise ValueError(f"reduction must be one of {REDUCTIONS}, got {reduction!r}")
    if hidden.dim() == 0 or weight.dim() != 2 or weight.shape[1] != hidden.shape[-1]:
        raise ValueError(f"hidden (..., H) and weight (V, H) do not match: {list(hidden.shape)} and "
                         f"{list(weight.shape)}")
    if labels.shape != hidden.shape[:-1] or labels.dtype != torch.int64:
        raise ValueError(f"labels must be int64 of shape {list(hidden.shape[:-1])}, got {labels.dtype} "
                         f"{list(labels.shape)}")


def _chunk_rows(n_rows: int, vocab: int) -> int:
    budget = INTERP_CHUNK_LOGITS if triton.knobs.runtime.interpret else GPU_CHUNK_LOGITS
    chunks = max(1, cdiv(n_rows, max(1, budget // vocab)))
    return max(1, cdiv(n_rows, chunks))


def _loss_config(n_rows: int, vocab: int) -> tuple[int, int]:
    if triton.knobs.runtime.interpret:
        block_n = min(next_power_of_2(vocab), INTERP_TILE)
        return min(next_power_of_2(n_rows), max(1, INTERP_TILE // block_n)), block_n
    return 1, min(next_power_of_2(vocab), GPU_BLOCK)


def _one_program_block(n: int) -> int:
    return min(next_power_of_2(max(n, 1)), 4096)


def forward_and_grads(h, weight, labels, ignore_index, reduction, want_h, want_w):
    """(loss, dh or None, dW or None) for h (N, H) and labels (N,), both contiguous."""
    n_rows, vocab = h.shape[0], weight.shape[0]
    wide = torch.promote_types(h.dtype, torch.float32)
    scale = torch.empty((), dtype=wide, device=h.device)
    loss_rows = torch.empty(n_rows, dtype=wide, device=h.device)
    loss = torch.empty((), dtype=wide, device=h.device)
    dh = torch.empty_like(h) if want_h else None
    dw = torch.zeros_like(weight) if want_w and n_rows == 0 else (torch.empty_like(weight) if want_w else None)
    _scale((1,), labels, scale, n_rows, ignore_index, reduction == "mean", _one_program_block(n_rows))
    chunk = _chunk_rows(n_rows, vocab)
    logits = torch.empty((min(chunk, n_rows), vocab), dtype=h.dtype, device=h.device)
    grad = want_h or want_w
    for start in range(0, n_rows, chunk):
        stop = min(start + chunk, n_rows)
        h_c, lg = h[start:stop], logits[: stop - start]
        gemm(h_c[None], weight.t()[None], lg[None])
        block_m, block_n = _loss_config(stop - start, vocab)
        _loss_rows((cdiv(stop - start, block_m),), lg, labels[start:stop], scale, loss_rows[start:stop], stop - start,
                   vocab, lg.stride(0), ignore_index, grad, compute_dtype(h.dtype), needs_int64(lg), block_m, block_n,
                   num_warps=8 if block_n >= 2048 else 4)
        if want_h:
            gemm(lg[None], weight[None], dh[start:stop][None])
        if want_w:  # the first chunk writes dW, later ones add to it (the GEMM's bias is dW itself)
            gemm(lg.t()[None], h_c[None], dw[None], bias=dw[None] if start else None, beta=1 if start else 0)
    _finish((1,), loss_rows, scale, loss, n_rows, _one_program_block(n_rows))
    return loss, dh, dw


def multiply_(x: torch.Tensor, factor: torch.Tensor) -> torch.Tensor:
    n = x.numel()
    if n:
        block = 1 << 14 if triton.knobs.runtime.interpret else 2048
        _multiply((cdiv(n, block),), x, factor, n, compute_dtype(x.dtype), needs_int64(x), block, num_warps=8)
    return x


class _LinearCrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, hidden, weight, labels, ignore_index, reduction):
        want_h, want_w = ctx.needs_input_grad[:2]
        h = hidden.reshape(-1, hidden.shape[-1]).contiguous()
        loss, dh, dw = forward_and_grads(h, weight, labels.reshape(-1).contiguous(), ignore_index, reduction,
                                         want_h, want_w)
        ctx.grads, ctx.hidden_shape = (dh, dw), hidden.shape
        return loss

    @staticmethod
    def backward(ctx, grad_loss):
        if ctx.grads is None:
            raise RuntimeError("linear_cross_entropy's backward runs once: its gradients were computed in the "
                               "forward and are scaled in place (no retain_graph)")
        dh, dw = ctx.grads
        ctx.grads = None
        factor = grad_loss.detach()
        dh = multiply_(dh, factor).view(ctx.hidden_shape) if dh is not None else None
        dw = multiply_(dw, factor) if dw is not None else None
        return dh, dw, None, None, None


def reference(hidden, weight, labels, ignore_index=-100, reduction="mean"):
    _check(hidden, weight, labels, reduction)
    logits = F.linear(hidden, weight)
    logits = logits.to(torch.promote_types(logits.dtype, torch.float32))
    return F.cross_entropy(logits.reshape(-1, weight.shape[0]), labels.reshape(-1), ignore_index=ignore_index,
                           reduction=reduction)


def _linear_cross_entropy(hidden, weight, labels, ignore_index=-100, reduction="mean"):
    _check(hidden, weight, labels, reduction)
    if hidden.dtype not in FLOATS or weight.dtype != hidden.dtype:
        raise Fallback("the kernels take hidden and weight of one floating dtype")
    if weight.shape[0] == 0 or hidden.shape[-1] == 0:
        raise Fallback("an empty vocabulary or hidden size is left to the composite")
    if needs_grad(hidden, weight):
        return _LinearCrossEntropy.apply(hidden, weight, labels, int(ignore_index), reduction)
    h = hidden.reshape(-1, hidden.shape[-1]).contiguous()
    return forward_and_grads(h, weight, labels.reshape(-1).contiguous(), int(ignore_index), reduction, False, False)[0]


linear_cross_entropy = api_function(NAME, _linear_cross_entropy, reference, differentiable=True)

SPECS = [
    OpSpec(
        name="linear_cross_entropy", family="fused", impls={}, api={NAME: linear_cross_entropy}, reference=reference,
        call=linear_cross_entropy,
        samples=lazy("gems.testing.samples_fused", "linear_cross_entropy_samples"),
        dtypes=FLOATS,
        tolerance="reduction",
        perf=PerfSpec(inputs=lazy("gems.testing.samples_fused", "linear_cross_entropy_inputs"),
                      shapes="linear_cross_entropy",
                      bytes=lazy("gems.testing.samples_fused", "linear_cross_entropy_bytes"),
                      flops=lazy("gems.testing.samples_fused", "linear_cross_entropy_flops")),
    ),
]
