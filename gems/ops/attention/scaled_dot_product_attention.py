"""scaled_dot_product_attention: ``torch.nn.functional.scaled_dot_product_attention`` forward and backward.

ATen marks ``scaled_dot_product_attention`` CompositeImplicitAutograd: it asks ``_fused_sdp_choice`` for a
backend per call and device and calls that backend's overload, whose derivative is its ``_backward``
overload. gems serves those backend overloads (sdpa_flash.py, sdpa_efficient.py), never the composite:
on CPU tensors (the interpreter vendor) ``_scaled_dot_product_flash_attention_for_cpu``; on CUDA the flash
path (fp16/bf16, no mask), the memory-efficient one (masks, fp32, causal with M != N) or cuDNN's. Each
sample expects the overload that ``_fused_sdp_choice`` picks for it on the device it runs on; where
ATen picks its math composite (dropout on CPU tensors, and shapes its fused kernels refuse) the composite's bmm
runs. With dropout_p > 0 the CUDA overloads draw gems' own keep mask (gems/ops/attention/dropout.py: ATen's
Philox stream is not matched, the distribution and the forward/backward consistency are); their samples
(gems/testing/samples_attention_dropout.py) are random ones, judged exactly against a float64 oracle that
regenerates the mask from the returned key, plus a keep-ratio test. Where SDPA picks no fused overload for dropout
(CPU tensors, the simulated device) those samples call the three overloads directly, ATen's answer (shapes and
dtypes) coming from their meta functions: so the interpreter runs the dropout paths too.
"""

from __future__ import annotations

import torch

from gems.ops.attention.flash import ATTENTION_DTYPES
from gems.ops.attention.sdpa_efficient import IMPLS as EFFICIENT_IMPLS
from gems.ops.attention.sdpa_flash import IMPLS as FLASH_IMPLS
from gems.runtime import selection
from gems.spec import OpSpec, PerfSpec, Sample

# SDPBackend as _fused_sdp_choice numbers it -> the overload that backend runs, per device type.
_BACKENDS = {
    ("cpu", 1): "_scaled_dot_product_flash_attention_for_cpu",
    ("cuda", 1): "_scaled_dot_product_flash_attention",
    ("cuda", 2): "_scaled_dot_product_efficient_attention",
    ("cuda", 3): "_scaled_dot_product_cudnn_attention",
    ("privateuse1", 4): "_scaled_dot_product_fused_attention_overrideable",
}


def _served(device, shapes, dtype, mask, causal, gqa, grad) -> tuple:
    """The overloads SDPA runs for these shapes on ``device``, as ATen's own choice says (probed on empty
    tensors). The simulated device registers no SDPA backend choice: ATen runs its math composite there
    (matrix products and softmax, which gems serves), measured 2026-11-22."""
    if any(0 in s for s in shapes):
        return ("add.Tensor",)  # the composite answers empty inputs itself (zeros plus sums, no backend)
    q, k, v = (torch.empty(s, dtype=dtype, device=device) for s in shapes)
    probe_mask = None if mask is None else torch.empty(mask[0], dtype=mask[1], device=device)
    choice = int(torch._fused_sdp_choice(q, k, v, probe_mask, 0.0, causal, enable_gqa=gqa))
    kind = torch.device(device).type
    if not selection.current().capabilities.aten_kernels:
        return ("bmm",)  # a device with no fused-attention choice of its own (sim): ATen's math composite
    overload = _BACKENDS.get((kind, choice))
    if overload is None:
        return ("bmm",)  # ATen's math composite: its matrix products
    return (overload, f"{overload}_backward") if grad else (overload,)


def sdpa_samples(dtype, device, quick):
    from gems.testing.samples import make_tensor

    d_small, d_big = (16, 32) if quick else (64, 128)
    m, n = (13, 24) if quick else (150, 203)
    n_cache = 300 if quick else 1030  # a decode step's KV cache: long enough for decode.py's split-KV kernel

    def mk(shape, grad=False):
        t = make_tensor(shape, dtype, device, low=-1.0, high=1.0)
        return t.requires_grad_() if grad else t

    def case(variant, b, h, hk, mq, nk, d, dv=None, causal=False, mask=None, gqa=False, scale=None, grad=False,
             layout="bhmd"):
        dv = d if dv is None else dv
        shapes = ((b, h, mq, d), (b, hk, nk, d), (b, hk, nk, dv))

        def build():
            if layout == "bmhd":  # q, k, v as (batch, seq, heads, dim) memory seen through a transpose
                q, k, v = (mk((s[0], s[2], s[1], s[3])).transpose(1, 2) for s in shapes)
                if grad:
                    q, k, v = (t.detach().requires_grad_() for t in (q, k, v))
            else:
                q, k, v = (mk(s, grad) for s in shapes)
            attn = None
            if mask is not None:
                shape, kind = mask
                if kind == torch.bool:
                    attn = torch.rand(shape, device=device) > 0.3
                    if variant.startswith("masked-row"):
                        attn[..., 1, :] = False
                else:
                    attn = make_tensor(shape, dtype, device, low=-2.0, high=2.0)
            return q, k, v, attn, 0.0, causal

        kwargs = {"enable_gqa": True} if gqa else {}
        if scale is not None:
            kwargs["scale"] = scale
        mask_probe = None if mask is None else (mask[0], mask[1] if mask[1] == torch.bool else dtype)
        expects = _served(device, shapes, dtype, mask_probe, causal, gqa, grad)
        return Sample(variant, build, kwargs, expects=expects, grad=grad, reduction_size=max(nk, d))

    cases = [
        case("contiguous", 2, 3, 3, m, n, d_small),
        case("head-dim-large", 1, 2, 2, m, n, d_big),
        case("head-dim-odd", 1, 2, 2, m, n, 24, dv=40),
        case("square", 2, 2, 2, n, n, d_small),
        case("causal-square", 2, 2, 2, n, n, d_small, causal=True),
        case("causal-short-q", 1, 2, 2, m, n, d_small, causal=True),
        case("causal-long-q", 1, 2, 2, n, m, d_small, causal=True),
        case("bool-mask", 2, 2, 2, m, n, d_small, mask=((m, n), torch.bool)),
        case("masked-row", 1, 2, 2, m, n, d_small, mask=((1, 1, m, n), torch.bool)),
        case("float-mask", 2, 2, 2, m, n, d_small, mask=((2, 1, m, n), dtype)),
        case("scale", 1, 2, 2, m, n, d_small, scale=0.3),
        case("gqa", 1, 4, 2, m, n, d_small, gqa=True),
        case("transposed", 2, 3, 3, m, n, d_small, layout="bmhd"),
        case("empty-batch", 0, 2, 2, m, n, d_small),
        case("empty-keys", 1, 2, 2, m, 0, d_small),
        case("grad", 2, 2, 2, m, n, d_small, grad=True),
        case("grad-head-dim-large", 1, 2, 2, m, n, d_big, grad=True),
        case("grad-causal", 1, 2, 2, n, n, d_small, causal=True, grad=True),
        case("grad-causal-short-q", 1, 2, 2, m, n, d_small, causal=True, grad=True),
        case("grad-float-mask", 1, 2, 2, m, n, d_small, mask=((m, n), dtype), grad=True),
        case("grad-masked-row", 1, 2, 2, m, n, d_small, mask=((1, 1, m, n), torch.bool), grad=True),
        case("grad-gqa", 1, 4, 2, m, n, d_small, gqa=True, grad=True),
        case("grad-transposed", 1, 2, 2, m, n, d_small, layout="bmhd", grad=True),
        # decode: 1-4 query rows over a KV cache (gems/ops/attention/decode.py; its "decode" alone runs unsplit
        # on the interpreter, 8 (batch, kv head) programs; "decode-causal" leaves all but one key chunk empty)
        case("decode", 2, 4, 4, 1, n_cache, d_small),
        case("decode-gqa", 2, 8, 2, 1, n_cache, d_small, gqa=True),
        case("decode-rows-gqa", 1, 4, 2, 4, n_cache, d_big, gqa=True),
        case("decode-head-dim-odd", 1, 2, 2, 1, n_cache, 24, dv=40),
        case("decode-causal", 1, 2, 2, 4, n_cache, d_small, causal=True),
        case("decode-bool-mask", 2, 4, 2, 1, n_cache, d_small, mask=((2, 1, 1, n_cache), torch.bool), gqa=True),
        case("masked-row-decode", 1, 4, 2, 2, n_cache, d_small, mask=((1, 1, 2, n_cache), torch.bool), gqa=True),
        case("decode-float-mask", 1, 4, 2, 1, n_cache, d_small, mask=((1, 4, 1, n_cache), dtype), gqa=True,
             scale=0.3),
        case("decode-transposed", 2, 4, 2, 1, n_cache, d_small, gqa=True, layout="bmhd"),
        case("grad-decode", 1, 4, 2, 1, n_cache, d_small, gqa=True, grad=True),
    ]
    errors = [
        ("error-head-dim", lambda: (mk((1, 2, m, 16)), mk((1, 2, n, 8)), mk((1, 2, n, 8)))),
        ("error-dtype", lambda: (mk((1, 2, m, 16)), mk((1, 2, n, 16)).double(), mk((1, 2, n, 16)))),
        ("error-batch", lambda: (mk((2, 2, m, 16)), mk((3, 2, n, 16)), mk((3, 2, n, 16)))),
        ("error-heads", lambda: (mk((1, 4, m, 16)), mk((1, 3, n, 16)), mk((1, 3, n, 16)))),
    ]
    cases += [Sample(v, build, expects=_served(device, ((1, 2, m, 16),) * 3, dtype, None, False, False, False))
              for v, build in errors]
    # The CPU overload itself, past SDPA's own checks: ATen's checks of its arguments.
    direct = [
        ("error-overload-3d", lambda: (mk((2, m, 16)), mk((2, n, 16)), mk((2, n, 16)), 0.0, False)),
        ("error-overload-dtype", lambda: (mk((1, 2, m, 16)), mk((1, 2, n, 16)).double(), mk((1, 2, n, 16)), 0.0,
                                          False)),
        ("error-overload-head-dim", lambda: (mk((1, 2, m, 16)), mk((1, 2, n, 8)), mk((1, 2, n, 8)), 0.0, False)),
        # what gems leaves to ATen, which then raises: dropout (the CPU kernel takes none), a mask of a dtype gems'
        # kernels don't read (float64), and one of another attention dtype than the query's (gems' own check)
        ("error-overload-dropout", lambda: (mk((1, 2, m, 16)), mk((1, 2, n, 16)), mk((1, 2, n, 16)), 0.5, False)),
        ("error-overload-mask-float64", lambda: (mk((1, 2, m, 16)), mk((1, 2, n, 16)), mk((1, 2, n, 16)), 0.0, False,
                                                 make_tensor((m, n), torch.float64, device))),
        ("error-overload-mask-dtype", lambda: (mk((1, 2, m, 16)), mk((1, 2, n, 16)), mk((1, 2, n, 16)), 0.0, False,
                                               make_tensor((m, n), other_dtype, device))),
    ]
    other_dtype = torch.float16 if dtype != torch.float16 else torch.bfloat16  # one ATen's CPU kernel refuses
    cpu = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default
    if dtype != torch.float32:  # a float32 mask, which ATen's CPU kernel takes with a half query too
        direct.append(("overload-float32-mask", lambda: (mk((1, 2, m, 16)), mk((1, 2, n, 16)), mk((1, 2, n, 16)), 0.0,
                                                         False, make_tensor((m, n), torch.float32, device))))
    cases += [Sample(v, build, call=_cpu_with_mask(cpu), expects="_scaled_dot_product_flash_attention_for_cpu",
                     reduction_size=n) for v, build in direct]
    # CUDA's fused overloads without dropout, called directly (on CPU tensors too: gems serves them on any device),
    # against SDPA's answer (shapes, dtypes and values; strides are the overload's own)
    # (empty sequences and batches too, which SDPA answers without any overload, and the backward kernels skip)
    efficient = "_scaled_dot_product_efficient_attention"
    fused = [("overload-efficient", efficient, 1, m, n), ("overload-empty-batch", efficient, 0, m, n),
             ("overload-empty-queries", efficient, 1, 0, n), ("overload-empty-keys", efficient, 1, m, 0)]
    if dtype != torch.float32:  # FlashAttention takes fp16 and bf16 only
        fused.append(("overload-flash", "_scaled_dot_product_flash_attention", 1, m, n))

    def fused_args(b, mq, nk):
        return lambda: (mk((b, 2, mq, d_small), True), mk((b, 2, nk, d_small), True), mk((b, 2, nk, d_small), True))

    cases += [Sample(variant, fused_args(b, mq, nk), call=_fused_output(overload),
                     reference=torch.nn.functional.scaled_dot_product_attention,
                     expects=(overload, f"{overload}_backward"), grad=True, reduction_size=max(nk, d_small))
              for variant, overload, b, mq, nk in fused]
    # a bias of another dtype than the query's, which SDPA refuses too (ATen's efficient kernel takes the query's only)
    cases.append(Sample("error-overload-efficient-bias-dtype",
                        lambda: (mk((1, 2, m, d_small)), mk((1, 2, n, d_small)), mk((1, 2, n, d_small)),
                                 make_tensor((m, n), other_dtype, device)),
                        call=_fused_output(efficient), reference=torch.nn.functional.scaled_dot_product_attention,
                        expects=efficient))
    from gems.testing.samples_attention_dropout import dropout_samples

    return cases + dropout_samples(dtype, device, quick)


def _fused_output(overload: str):
    """The attention output of one of CUDA's fused overloads, without dropout (the efficient one: with a bias)."""
    op = getattr(torch.ops.aten, overload)

    def call(q, k, v, bias=None):
        if overload == "_scaled_dot_product_flash_attention":
            return op(q, k, v)[0]
        return op(q, k, v, bias, True)[0]

    call.__qualname__ = f"_fused_output({overload})"
    return call


def _cpu_with_mask(overload):
    """The CPU flash overload with its keyword-only attn_mask as an optional sixth positional argument."""
    def call(q, k, v, dropout_p, is_causal, attn_mask=None):
        return overload(q, k, v, dropout_p, is_causal, attn_mask=attn_mask)

    call.__qualname__ = f"_cpu_with_mask({overload})"
    return call


def flash_path(q, k, v, attn_mask, dropout_p, is_causal):
    """(out, logsumexp) from ATen's flash-attention overload itself, whatever SDPA would pick for these inputs:
    ``aten::_scaled_dot_product_flash_attention`` (FlashAttention-2) on CUDA, the CPU flash kernel elsewhere.
    Timed on both sides (ATen's kernel, then gems' implementation of the same overload), it compares gems
    with ATen's flash path, where SDPA itself compares it with ATen's own choice (cuDNN on the H100)."""
    if q.device.type == "cuda":
        result = torch.ops.aten._scaled_dot_product_flash_attention(q, k, v, dropout_p, is_causal)
    else:
        result = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, dropout_p, is_causal,
                                                                            attn_mask=attn_mask)
    return result[0], result[1]


def attention_training(q, k, v, attn_mask, dropout_p, is_causal, grad_out, enable_gqa=False):
    """SDPA's forward and backward, (out, grad_q, grad_k, grad_v) for the upstream gradient ``grad_out``: what a
    training step spends in attention, ATen's backend choice on each side."""
    out = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal,
                                                           enable_gqa=enable_gqa)
    return (out.detach(), *torch.autograd.grad(out, (q, k, v), grad_out))


def sdpa_perf_inputs(shape, dtype, device):
    """(batch, heads, seq, head_dim[, causal[, flash[, q_len, kv_heads[, padded[, backward]]]]]) -> q (batch, heads,
    q_len (seq), head_dim), k and v (batch, kv_heads (heads), seq, head_dim). flash = 0 (or absent) times SDPA,
    ATen's default backend choice against gems (with enable_gqa where kv_heads < heads); flash = 1 times
    ``flash_path`` on both sides. padded = 1: a padding mask (batch, 1, 1, seq), bool, that hides the last quarter
    of the keys of every other sequence (an encoder's batch of uneven lengths). backward = 1 times
    :func:`attention_training`, the forward and its backward."""
    from gems.testing.samples import make_tensor

    b, h, s, d, *rest = shape
    causal, flash, m, hk, padded, backward = [*rest, *(0, 0, s, h, 0, 0)[len(rest):]]
    q = make_tensor((b, h, m, d), dtype, device, low=-1.0, high=1.0)
    k, v = (make_tensor((b, hk, s, d), dtype, device, low=-1.0, high=1.0) for _ in range(2))
    mask = None
    if padded:
        mask = torch.ones((b, 1, 1, s), dtype=torch.bool, device=device)
        mask[1::2, ..., s - s // 4:] = False
    kwargs = {"enable_gqa": True} if hk != h and not flash else {}
    if backward:
        q, k, v = (t.requires_grad_() for t in (q, k, v))
        grad_out = make_tensor((b, h, m, d), dtype, device, low=-1.0, high=1.0)
        # dK and dV sum over the queries of every head that shares them
        return Sample("perf", (q, k, v, mask, 0.0, bool(causal), grad_out), kwargs, call=attention_training,
                      reduction_size=max(s, m * (h // hk)))
    return Sample("perf", (q, k, v, mask, 0.0, bool(causal)), kwargs, call=flash_path if flash else None,
                  reduction_size=s)


def sdpa_flops(sample, result):
    """4 * b * h * M * N * d multiply-adds' flops (QK^T and PV), half of them under a causal mask; with the backward
    (attention_training) 3.5 times that: its five products (QK^T again, dP = dO V^T, dV, dQ, dK) beside the
    forward's two."""
    q, k = sample.args[0], sample.args[1]
    b, h, m, d = q.shape
    flops = 4 * b * h * m * k.shape[2] * d
    flops = flops // 2 if sample.args[5] else flops
    return flops * 7 // 2 if sample.call is attention_training else flops


def sdpa_bytes(sample, result):
    outputs = result if isinstance(result, tuple) else (result,)  # flash_path adds the logsumexp
    inputs = [t for t in (*sample.args[:4], *sample.args[6:]) if isinstance(t, torch.Tensor)]
    return sum(t.numel() * t.element_size() for t in (*inputs, *outputs))


SPECS = [
    OpSpec(
        name="scaled_dot_product_attention", family="attention",
        impls={**FLASH_IMPLS, **EFFICIENT_IMPLS},
        call=torch.nn.functional.scaled_dot_product_attention,
        samples=sdpa_samples,
        dtypes=ATTENTION_DTYPES,
        tolerance="reduction",
        known_failures={
            ("nvidia", "float16", "masked-row"): "H100, 2026-11-23: ATen's CUDA SDPA takes the cuDNN path here and "
            "hands it the bool mask as an additive float mask (where.self) with a finite fill, so a fully masked row "
            "attends to every key: ATen's and gems' row is the same (0.124 and 0.125 from the oracle's zeros, which "
            "the CPU's safe softmax gives), and the ATen-parity rule fails by the last fp16 bit of that difference "
            "(max abs err 0.36 over 36 of 416 values); bf16 and fp32 pass the same rule",
        } | {
            ("nvidia", "*", variant): "H100, 2026-11-22: for an empty batch or key sequence the sample expects the "
            "CPU composite's shortcut (add.Tensor), and on CUDA ATen answers without any overload gems serves"
            for variant in ("empty-batch", "empty-keys")
        },
        skips={("nvidia", "*", variant): "ATen has _scaled_dot_product_flash_attention_for_cpu on the CPU only: "
               "on CUDA it raises NotImplementedError before checking its arguments (H200, 2026-11-26)"
               for variant in ("error-overload-3d", "error-overload-dtype", "error-overload-head-dim",
                               "error-overload-dropout", "error-overload-mask-float64", "error-overload-mask-dtype",
                               "overload-float32-mask")},
        perf=PerfSpec(inputs=sdpa_perf_inputs, shapes="scaled_dot_product_attention", bytes=sdpa_bytes,
                      flops=sdpa_flops),
    ),
]
