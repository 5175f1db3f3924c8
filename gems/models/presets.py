"""Named model presets: a transformers configuration per size, and the workloads each is timed on.

Sizes: ``tiny`` runs on the CPU interpreter and the simulated device in seconds (CI, conformance);
``small`` is the GPU's conformance size; ``full`` is what gems-perf times on a GPU. Every size is built
from its configuration with random weights: nothing is downloaded.
"""

from __future__ import annotations

from dataclasses import dataclass, field

SIZES = ("tiny", "small", "full")


@dataclass(frozen=True)
class Workloads:
    """The shapes a model is run at. Decoders: prefill, decode (eager and CUDA graph) and a training
    step; encoders: a forward with a padding mask and a training step."""

    prefill: tuple[int, int] = (1, 2048)           # batch, tokens
    decode_batches: tuple[int, ...] = (1, 32)
    decode_prompt: int = 128                       # tokens in the cache before decoding starts
    decode_tokens: int = 64                        # tokens generated per timed loop
    train: tuple[int, int] = (4, 512)              # batch, tokens of a training step
    forward: tuple[int, int] = (8, 512)            # an encoder's forward: batch, tokens
    answers: tuple[int, int] = (2, 64)             # batch, tokens of the answers check


@dataclass(frozen=True)
class Preset:
    """A model: its ``transformers`` model type, the configuration fields per size, and its workloads."""

    name: str
    model_type: str
    about: str
    common: dict
    sizes: dict
    workloads: dict = field(default_factory=dict)  # size -> Workloads

    def config_kwargs(self, size: str) -> dict:
        return {**self.common, **self.sizes[size]}

    def workloads_for(self, size: str) -> Workloads:
        return self.workloads.get(size, Workloads())


_TINY = Workloads(prefill=(2, 16), decode_batches=(1, 2), decode_prompt=8, decode_tokens=3, train=(2, 16),
                  forward=(2, 16), answers=(2, 16))
_SMALL = Workloads(prefill=(2, 128), decode_batches=(1, 4), decode_prompt=32, decode_tokens=8, train=(2, 128),
                   forward=(4, 128), answers=(2, 128))

PRESETS = {
    "llama": Preset(
        name="llama", model_type="llama",
        about="Llama-2-7B's layer shapes (hidden 4096, MLP 11008, 32 heads) with grouped-query attention (8 "
              "key/value heads) and 4 layers; tiny and small keep the proportions",
        common={"vocab_size": 32000, "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "tie_word_embeddings": False,
                "attention_bias": False, "mlp_bias": False},
        sizes={
            "tiny": {"hidden_size": 64, "intermediate_size": 176, "num_hidden_layers": 2, "num_attention_heads": 4,
                     "num_key_value_heads": 2, "vocab_size": 256, "max_position_embeddings": 64},
            "small": {"hidden_size": 256, "intermediate_size": 688, "num_hidden_layers": 2,
                      "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 1024,
                      "max_position_embeddings": 512},
            "full": {"hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 4,
                     "num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 4096},
        },
        workloads={"tiny": _TINY, "small": _SMALL},
    ),
    "bert": Preset(
        name="bert", model_type="bert",
        about="BERT-base (12 layers, hidden 768, 12 heads, MLP 3072) as a masked language model; tiny and small "
              "keep the proportions",
        common={"vocab_size": 30522, "type_vocab_size": 2},
        sizes={
            "tiny": {"hidden_size": 64, "intermediate_size": 256, "num_hidden_layers": 2, "num_attention_heads": 4,
                     "vocab_size": 256, "max_position_embeddings": 64},
            "small": {"hidden_size": 256, "intermediate_size": 1024, "num_hidden_layers": 2,
                      "num_attention_heads": 4, "vocab_size": 1024, "max_position_embeddings": 512},
            "full": {"hidden_size": 768, "intermediate_size": 3072, "num_hidden_layers": 12,
                     "num_attention_heads": 12, "max_position_embeddings": 512},
        },
        workloads={"tiny": _TINY, "small": _SMALL},
    ),
}


def get(name: str) -> Preset:
    from gems.models.errors import ModelError

    if name not in PRESETS:
        raise ModelError(f"--model: unknown preset {name!r}; presets: {', '.join(PRESETS)} (or --model-config "
                         "FILE.json for any transformers configuration)")
    return PRESETS[name]
