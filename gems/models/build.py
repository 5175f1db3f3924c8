"""Models from configurations with random weights: never a download, never pretrained weights.

A configuration comes from a preset (:mod:`gems.models.presets`) or a ``config.json`` file of any
``transformers`` model. Decoder-only models get their causal-LM head, encoders their masked-LM head, so both
give a loss for the training step and the answers check.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from pathlib import Path

import torch

from gems.models import presets
from gems.models.errors import ModelError

DECODER, ENCODER = "decoder", "encoder"
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16,
          "float64": torch.float64}
TRANSFORMERS_RANGE = ">=5.0,<6"  # tested: 5.17 (the GPU machine) and 5.24 (CI)


@dataclass
class ModelSpec:
    """What to build: a name for reports, the configuration, its kind and its workloads."""

    name: str
    config: object
    kind: str
    workloads: presets.Workloads
    source: str  # "preset llama (full)" or the config file's path
    size: str = ""  # a preset's size


def transformers():
    try:
        import transformers as module
    except ImportError as exc:
        raise ModelError(f"transformers is not installed: pip install 'gems[models]' (transformers{TRANSFORMERS_RANGE})"
                         ) from exc
    return module


def dtype_of(name: str) -> torch.dtype:
    if name not in DTYPES:
        raise ModelError(f"--model-dtype: unknown dtype {name!r}; choose one of {', '.join(DTYPES)}")
    return DTYPES[name]


def from_preset(name: str, size: str = "full") -> ModelSpec:
    preset = presets.get(name)
    if size not in presets.SIZES:
        raise ModelError(f"--model-size: unknown size {size!r}; choose one of {', '.join(presets.SIZES)}")
    config = transformers().AutoConfig.for_model(preset.model_type, **preset.config_kwargs(size))
    return ModelSpec(f"{name}-{size}" if size != "full" else name, config, kind_of(config),
                     preset.workloads_for(size), f"preset {name} ({size})", size)


def from_config_file(path: str) -> ModelSpec:
    """A ``config.json`` as transformers writes it (``model_type`` plus the architecture's fields)."""
    file = Path(path)
    if not file.is_file():
        hint = ("it is a directory: pass its config.json; gems never loads the weights beside it" if file.is_dir()
                else "gems builds models from a configuration file with random weights and never downloads one: "
                     "save the configuration as JSON (config.save_pretrained(dir) writes dir/config.json)")
        raise ModelError(f"--model-config: {path} is not a file ({hint})")
    try:
        fields = json.loads(file.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ModelError(f"--model-config: {path} is not a readable JSON file: {exc}") from exc
    if not isinstance(fields, dict) or not isinstance(fields.get("model_type"), str):
        raise ModelError(f"--model-config: {path} has no \"model_type\" field; a transformers config.json names its "
                         "architecture there (e.g. \"llama\", \"bert\")")
    fields = {k: v for k, v in fields.items() if k not in ("_name_or_path", "transformers_version")}
    model_type = fields.pop("model_type")
    try:
        config = transformers().AutoConfig.for_model(model_type, **fields)
    except (ValueError, TypeError, KeyError) as exc:
        raise ModelError(f"--model-config: transformers cannot build a {model_type!r} configuration from {path}: "
                         f"{exc}") from exc
    return ModelSpec(file.stem if file.stem != "config" else model_type, config, kind_of(config),
                     presets.Workloads(), str(file))


def kind_of(config) -> str:
    """decoder (a causal-LM head) or encoder (a masked-LM head); anything else is refused with the reason."""
    from transformers.models.auto import modeling_auto

    model_type = config.model_type
    if getattr(config, "is_encoder_decoder", False):
        raise ModelError(f"{model_type}: an encoder-decoder model; gems-perf --model runs decoder-only (causal LM) "
                         "and encoder (masked LM) models")
    if model_type in modeling_auto.MODEL_FOR_MASKED_LM_MAPPING_NAMES:
        return ENCODER
    if model_type in modeling_auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
        return DECODER
    raise ModelError(f"{model_type}: transformers has neither a causal-LM nor a masked-LM head for it; gems-perf "
                     "--model runs decoder-only and encoder language models")


def build(spec: ModelSpec, seed: int = 0) -> torch.nn.Module:
    """The model on the CPU in float32, weights drawn from ``seed``, attention through
    scaled_dot_product_attention (which gems serves)."""
    auto = transformers()
    head = auto.AutoModelForCausalLM if spec.kind == DECODER else auto.AutoModelForMaskedLM
    config = copy.deepcopy(spec.config)
    torch.manual_seed(seed)
    try:
        model = head.from_config(config, attn_implementation="sdpa", dtype=torch.float32)
    except (ValueError, TypeError, RuntimeError, ImportError) as exc:
        raise ModelError(f"{spec.name}: transformers could not build the model from its configuration: {exc}"
                         ) from exc
    return model.eval()


def placed(model: torch.nn.Module, dtype: torch.dtype, device) -> torch.nn.Module:
    """A copy of ``model`` in ``dtype`` on ``device``: converted on the CPU, then moved (a transfer only), its
    tied weights tied again (moving to a device whose tensors are not the CPU's kind gives every module its own
    Parameter, which unties the output embedding from the input one, or a head's bias from its decoder's)."""
    moved = copy.deepcopy(model).to(dtype).to(device)
    if hasattr(moved, "tie_weights"):
        moved.tie_weights()
    return moved


def cache_argument(model: torch.nn.Module) -> str:
    """The forward's KV-cache keyword: ``cache`` from transformers 5.2x on, ``past_key_values`` before."""
    import inspect

    return "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"


def returned_cache(output):
    """The KV cache a forward returned, under either name."""
    return output.cache if hasattr(output, "cache") else output.past_key_values
