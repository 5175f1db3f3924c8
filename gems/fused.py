"""gems.fused: fused operators (no ATen overload exists for them), as operators of gems' own library namespace.

    import gems
    y = gems.fused.fused_rms_norm(x, weight, eps=1e-6)                       # Gemma's: weight_offset=1.0
    y, s = gems.fused.fused_add_rms_norm(x, residual, weight, eps=1e-6)   # s = x + residual
    y, s = gems.fused.skip_layer_norm(x, skip, weight, bias, eps=1e-5)
    y = gems.fused.silu_and_mul(x)                  # silu(x[..., :d]) * x[..., d:]
    y = gems.fused.silu_and_mul(gate, up)           # silu(gate) * up
    y = gems.fused.gelu_and_mul(x, approximate="none")
    q = gems.fused.apply_rotary_position_embedding(q, cos, sin, interleaved=False)   # GPT-NeoX / GPT-J
    loss = gems.fused.linear_cross_entropy(hidden, lm_head_weight, labels)  # logits never materialized
    p = gems.fused.scaled_softmax_forward(scores, scale)      # softmax(scale * scores) over the last dim
    ds = gems.fused.scaled_softmax_backward(dp, p, scale)     # its input gradient (Megatron-style)

Each runs gems' Triton kernels (gems/ops/fused/), whether or not gems.enable() was called, and is
counted in gems.call_counts() as "gems.fused.<name>". All but linear_cross_entropy are torch operators,
``torch.ops.gems.<name>``, which the native layer serves like ATen overloads: after the first call of a
signature, a call that needs no autograd graph replays from C++ (docs/native.md, "gems' own operators"). All
but the scaled softmaxes bring their own
backward (a torch.autograd.Function whose backward launches gems kernels too), so they serve training;
gems.patch(model) puts them into Hugging Face models. Inputs a kernel does not handle (another device,
mixed dtypes, for the scaled softmaxes inputs that require grad) run the eager PyTorch composite,
counted as fallbacks.
"""

from gems.ops.fused.apply_rotary_position_embedding import apply_rotary_position_embedding
from gems.ops.fused.fused_add_rms_norm import fused_add_rms_norm
from gems.ops.fused.fused_rms_norm import fused_rms_norm
from gems.ops.fused.gelu_and_mul import gelu_and_mul
from gems.ops.fused.linear_cross_entropy import linear_cross_entropy
from gems.ops.fused.scaled_softmax_backward import scaled_softmax_backward
from gems.ops.fused.scaled_softmax_forward import scaled_softmax_forward
from gems.ops.fused.silu_and_mul import silu_and_mul
from gems.ops.fused.skip_layer_norm import skip_layer_norm

__all__ = ["apply_rotary_position_embedding", "fused_add_rms_norm", "fused_rms_norm", "gelu_and_mul",
           "linear_cross_entropy", "scaled_softmax_backward", "scaled_softmax_forward", "silu_and_mul",
           "skip_layer_norm"]
