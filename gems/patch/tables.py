"""Which module class of which architecture gets which fused operator: data, one table per architecture.

An entry names a module class (by its transformers class name) and the kind of patch it takes
(gems/patch/forwards.py has one replacement forward per kind); its options name the attributes the
replacement reads. Kinds:

    rms_norm       an RMSNorm module -> gems.fused.fused_rms_norm (weight_offset 1: Gemma's 1 + w)
    gated_mlp      act_fn(gate_proj(x)) * up_proj(x) -> silu_and_mul / gelu_and_mul (gate, up)
    pre_norm_block a block "h = x + attn(norm1(x)); out = h + mlp(norm2(h))": the residual add and norm2
                   become one fused_add_rms_norm (RMS) or skip_layer_norm (LayerNorm) each way
    skip_output    "LayerNorm(dropout(dense(h)) + input)" (BERT's attention and MLP outputs) -> skip_layer_norm
    rotary         an attention module whose rotary embedding is the module-level function named in its
                   options -> gems.fused.apply_rotary_position_embedding for queries and keys
    linear_cross_entropy  a causal LM given labels while autograd records -> gems.fused.linear_cross_entropy
                   (the head's logits never materialized; the output's logits are None)

Architectures are keyed by ``config.model_type``. A module of a class no table names is left as it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Entry:
    cls: str            # the module's class name, e.g. "LlamaRMSNorm"
    kind: str           # one of KINDS
    options: dict = field(default_factory=dict)


KINDS = ("rms_norm", "gated_mlp", "pre_norm_block", "skip_output", "rotary", "linear_cross_entropy")

# Rotary scalings that change only the frequencies (and a scale folded into cos and sin) of the model's own
# rotary module: the fused kernel takes the cos and sin it computes. Any other type is left unpatched.
ROPE_TYPES = ("default", "linear", "dynamic", "yarn", "longrope", "llama3")

# Activations a gated MLP's act_fn may be (class names) -> (fused operator, its keyword arguments).
GATED_ACTIVATIONS = {
    "SiLUActivation": ("silu_and_mul", {}),
    "SiLU": ("silu_and_mul", {}),
    "GELUActivation": ("gelu_and_mul", {"approximate": "none"}),
    "GELUTanh": ("gelu_and_mul", {"approximate": "tanh"}),
    "NewGELUActivation": ("gelu_and_mul", {"approximate": "tanh"}),
}


def _decoder(prefix: str, module: str, weight_offset: float = 0.0) -> list[Entry]:
    """The Llama-style decoder families (Llama, Mistral, Qwen2, Gemma): the same module layout."""
    return [
        Entry(f"{prefix}RMSNorm", "rms_norm", {"weight_offset": weight_offset}),
        Entry(f"{prefix}MLP", "gated_mlp"),
        Entry(f"{prefix}DecoderLayer", "pre_norm_block",
              {"norm1": "input_layernorm", "attention": "self_attn", "norm2": "post_attention_layernorm",
               "mlp": "mlp"}),
        Entry(f"{prefix}Attention", "rotary",
              {"function": f"transformers.models.{module}.modeling_{module}.apply_rotary_pos_emb"}),
        Entry(f"{prefix}ForCausalLM", "linear_cross_entropy", {"body": "model", "head": "lm_head"}),
    ]


ARCHITECTURES = {
    "llama": _decoder("Llama", "llama"),
    "mistral": _decoder("Mistral", "mistral"),
    "qwen2": _decoder("Qwen2", "qwen2"),
    "gemma": _decoder("Gemma", "gemma", weight_offset=1.0),  # Gemma's RMSNorm scales by (1 + w)
    "bert": [
        Entry("BertSelfOutput", "skip_output", {"dense": "dense", "dropout": "dropout", "norm": "LayerNorm"}),
        Entry("BertOutput", "skip_output", {"dense": "dense", "dropout": "dropout", "norm": "LayerNorm"}),
    ],
    "vit": [
        Entry("ViTLayer", "pre_norm_block",
              {"norm1": "layernorm_before", "attention": "attention", "norm2": "layernorm_after", "mlp": "mlp",
               "dropout": "dropout"}),
    ],
}

# What the tables leave on purpose, said in a patch's report when the model has such modules.
NOT_FUSED = {
    "BertIntermediate": "dense + GELU: no fused kernel pays here (gems serves addmm and gelu when enabled)",
    "ViTMLP": "dense + GELU + dense: no fused kernel pays here (gems serves addmm and gelu when enabled)",
    "BertForMaskedLM": "the masked-LM head has a bias and a transform: linear_cross_entropy takes a bias-free head",
}


def entries_by_class() -> dict[str, Entry]:
    """Every table's entries by class name (an unknown architecture's modules are matched against all)."""
    return {entry.cls: entry for entries in ARCHITECTURES.values() for entry in entries}
