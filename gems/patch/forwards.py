"""The replacement forwards, one per kind of gems/patch/tables.py, and the checks that decide at patch time
whether a module's configuration is one its fused kernel computes exactly.

A replacement is made once per (class, options) and set as the module's own ``forward`` (bound with
types.MethodType, so a deepcopy of the model rebinds it to the copy; ``functools.wraps`` keeps the
original's signature for transformers' introspection). At call time an input the kernel does not take
(another dtype than the weights', a device other than the vendor's) runs the original forward: the
model's own answer, never a different one.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import importlib
import inspect

import torch
import torch.nn.functional as F

from gems.dtypes import FLOATS
from gems.patch.tables import GATED_ACTIVATIONS, ROPE_TYPES, entries_by_class

MARK = "__gems_patch__"  # set on every replacement function: what unpatch recognises as its own
# True while a patched attention module runs: the module-level rotary function it calls then takes the
# fused kernel (the same function serves unpatched models of the architecture unchanged).
_ROTARY = contextvars.ContextVar("gems_patch_rotary", default=False)
# True inside every_call_fused(): the vendor's patch_fusion threshold is not consulted.
_EVERY_CALL = contextvars.ContextVar("gems_patch_every_call_fused", default=False)


def _fused():
    from gems import fused  # not at import: loading the kernels needs the vendor chosen

    return fused


def takes(x: torch.Tensor, *params) -> bool:
    """Whether the fused kernels take x with these parameters (None skipped), and pay for this call (:func:`fuses`):
    one floating dtype, the vendor's device type."""
    from gems.runtime import selection

    return (x.dtype in FLOATS and x.device.type == selection.current().device
            and all(p is None or (p.dtype == x.dtype and p.device == x.device) for p in params) and fuses(x))


def fuses(x: torch.Tensor) -> bool:
    """Whether a fused kernel runs for a call whose activation is ``x``. A call that builds no autograd graph
    (inference: no_grad, or nothing requiring grad) always fuses: it replays natively (docs/native.md, "gems' own
    operators"), cheaper than the composite it replaces at any size (H200, bf16, 4 x 1024, back to back:
    skip_layer_norm 16.7 us against 26.7 us for its add and layer_norm through gems, 20.1 us through ATen). A call
    that builds a graph still takes gems' Python path, so in training a fused kernel runs from the vendor's
    ``patch_fusion`` MIN_NUMEL elements on (a train step's silu_and_mul: 113 us fused, 67 us composite). The rule
    depends on nothing else, so a CUDA graph's warm-up makes the calls its capture will make (a capture never
    compiles a kernel)."""
    from gems.runtime import selection

    # Traced by torch.compile a fused op is its composite: nothing to decide, and reading the ContextVar or
    # the vendor's rule would break the graph (Dynamo would then run gems' kernels inside its trace).
    if torch.compiler.is_compiling() or _EVERY_CALL.get():
        return True
    if not (torch.is_grad_enabled() and x.requires_grad):
        return True
    return x.numel() >= selection.current().heuristics("patch_fusion")["MIN_NUMEL"]({"numel": x.numel()})


@contextlib.contextmanager
def every_call_fused():
    """Inside the block every call the fused kernels take runs them, whatever its size: the models' patched
    conformance cases check each fused kernel in the model at their small sizes."""
    token = _EVERY_CALL.set(True)
    try:
        yield
    finally:
        _EVERY_CALL.reset(token)


def _marked(function, original):
    functools.update_wrapper(function, original)
    setattr(function, MARK, original)
    return function


def _arguments(signature, args, kwargs) -> tuple[dict, dict]:
    """(the arguments a call passed, by name, self left out; those of its **kwargs catch-all)."""
    named = dict(signature.bind(None, *args, **kwargs).arguments)
    named.pop(next(iter(signature.parameters)))
    extra = {}
    for name, parameter in signature.parameters.items():
        if parameter.kind is inspect.Parameter.VAR_KEYWORD:
            extra = named.pop(name, {})
    return named, extra


# --------------------------------------------------------------------------- checks (patch time)


def _eps(module):
    for name in ("variance_epsilon", "eps"):
        if isinstance(getattr(module, name, None), float):
            return name
    return None


def check_rms_norm(module, options, config) -> str:
    weight = getattr(module, "weight", None)
    if not isinstance(weight, torch.nn.Parameter) or weight.dim() != 1:
        return "no 1-D weight (a norm without a learned scale): the fused norm takes one"
    if _eps(module) is None:
        return "no float epsilon attribute (variance_epsilon or eps)"
    return ""


def check_layer_norm(module) -> str:
    if not isinstance(module, torch.nn.LayerNorm) or len(module.normalized_shape) != 1:
        return f"{type(module).__name__} is not a LayerNorm over the last dim"
    return ""


def check_gated_mlp(module, options, config) -> str:
    missing = [a for a in ("gate_proj", "up_proj", "down_proj", "act_fn") if not hasattr(module, a)]
    if missing:
        return f"no {', '.join(missing)}"
    if type(module.act_fn).__name__ not in GATED_ACTIVATIONS:
        return f"activation {type(module.act_fn).__name__} has no fused gated kernel"
    return ""


@functools.cache
def rms_norm_offset(cls) -> float | None:
    """The weight offset of an RMS norm class the tables name (Gemma's 1), None for any other class."""
    entry = entries_by_class().get(cls.__name__)
    return entry.options.get("weight_offset", 0.0) if entry is not None and entry.kind == "rms_norm" else None


def check_pre_norm_block(module, options, config) -> str:
    missing = [options[k] for k in ("norm1", "attention", "norm2", "mlp") if not hasattr(module, options[k])]
    if missing:
        return f"no {', '.join(missing)}"
    norm = getattr(module, options["norm2"])
    if isinstance(norm, torch.nn.LayerNorm):
        return check_layer_norm(norm)
    if rms_norm_offset(type(norm)) is None:
        return f"{options['norm2']} is a {type(norm).__name__}, neither a LayerNorm nor an RMS norm the tables name"
    why = check_rms_norm(norm, {}, config)
    return f"{options['norm2']}: {why}" if why else ""


def check_skip_output(module, options, config) -> str:
    missing = [options[k] for k in ("dense", "dropout", "norm") if not hasattr(module, options[k])]
    return f"no {', '.join(missing)}" if missing else check_layer_norm(getattr(module, options["norm"]))


def _rope_parameters(config) -> list[dict]:
    params = getattr(config, "rope_parameters", None) or {}
    if "rope_type" in params or not all(isinstance(v, dict) for v in params.values()):
        return [params]
    return list(params.values())  # per layer type


def check_rotary(module, options, config) -> str:
    for params in _rope_parameters(config):
        rope_type = params.get("rope_type", "default")
        if rope_type not in ROPE_TYPES:
            return f"rope_type {rope_type!r} is not one the fused kernel is known to match ({', '.join(ROPE_TYPES)})"
        factor = params.get("partial_rotary_factor", getattr(config, "partial_rotary_factor", 1.0))
        if factor not in (None, 1.0):
            return f"partial_rotary_factor {factor}: the kernel rotates whole heads"
    head_dim = getattr(module, "head_dim", None)
    if not isinstance(head_dim, int) or head_dim % 2:
        return f"head_dim {head_dim!r} is not an even number"
    try:
        rotary_function(options["function"])
    except (ImportError, AttributeError) as exc:
        return f"rotary function {options['function']} not found ({exc})"
    return ""


def check_linear_cross_entropy(module, options, config) -> str:
    head = getattr(module, options["head"], None)
    if not isinstance(head, torch.nn.Linear) or head.bias is not None:
        return f"{options['head']} is not a Linear without bias"
    if getattr(config, "final_logit_softcapping", None) is not None:
        return "final_logit_softcapping: the fused loss takes plain logits"
    if not hasattr(module, options["body"]):
        return f"no {options['body']}"
    return ""


# --------------------------------------------------------------------------- forwards (call time)


@functools.cache
def rms_norm_forward(cls, weight_offset: float):
    original = cls.forward

    def forward(self, hidden_states):
        if not takes(hidden_states, self.weight):
            return original(self, hidden_states)
        return _fused().fused_rms_norm(hidden_states, self.weight, getattr(self, _eps(self)), weight_offset)

    return _marked(forward, original)


@functools.cache
def gated_mlp_forward(cls):
    original = cls.forward

    def forward(self, x):
        if not fuses(x):
            return original(self, x)
        name, kwargs = GATED_ACTIVATIONS[type(self.act_fn).__name__]
        return self.down_proj(getattr(_fused(), name)(self.gate_proj(x), self.up_proj(x), **kwargs))

    return _marked(forward, original)


def _add_norm(norm, x, residual):
    """(norm(x + residual), x + residual) in one fused kernel, or None when the kernels do not take them."""
    if isinstance(norm, torch.nn.LayerNorm):
        if not takes(x, residual, norm.weight, norm.bias):
            return None
        return _fused().skip_layer_norm(x, residual, norm.weight, norm.bias, norm.eps)
    if not takes(x, residual, norm.weight):
        return None
    return _fused().fused_add_rms_norm(x, residual, norm.weight, getattr(norm, _eps(norm)), rms_norm_offset(type(norm)))


@functools.cache
def pre_norm_block_forward(cls, norm1: str, attention: str, norm2: str, mlp: str, dropout: str | None = None):
    original = cls.forward
    signature = inspect.signature(original)

    def forward(self, *args, **kwargs):
        named, extra = _arguments(signature, args, kwargs)
        hidden = named.pop(next(iter(named)))
        attended = getattr(self, attention)(getattr(self, norm1)(hidden), **named, **extra)
        attended = attended[0] if isinstance(attended, tuple) else attended
        if dropout is not None:
            attended = getattr(self, dropout)(attended)
        fused = _add_norm(getattr(self, norm2), attended, hidden)
        if fused is None:  # the unfused tail, as the original computes it
            summed = hidden + attended
            normed = getattr(self, norm2)(summed)
        else:
            normed, summed = fused
        out = getattr(self, mlp)(normed)
        if dropout is not None:
            out = getattr(self, dropout)(out)
        return summed + out

    return _marked(forward, original)


@functools.cache
def skip_output_forward(cls, dense: str, dropout: str, norm: str):
    original = cls.forward

    def forward(self, hidden_states, input_tensor):
        hidden = getattr(self, dropout)(getattr(self, dense)(hidden_states))
        fused = _add_norm(getattr(self, norm), hidden, input_tensor)
        return getattr(self, norm)(hidden + input_tensor) if fused is None else fused[0]

    return _marked(forward, original)


@functools.cache
def rotary_attention_forward(cls):
    original = cls.forward

    def forward(self, *args, **kwargs):
        # Traced by torch.compile, a fused op is its composite anyway; the ContextVar would break the graph,
        # and Dynamo then runs the frames around it eagerly, where gems' ATen kernels would get traced.
        if torch.compiler.is_compiling():
            return original(self, *args, **kwargs)
        token = _ROTARY.set(True)
        try:
            return original(self, *args, **kwargs)
        finally:
            _ROTARY.reset(token)

    return _marked(forward, original)


def rotary_function(path: str):
    """(module, name, the function now there) for a dotted path."""
    module_name, _, name = path.rpartition(".")
    module = importlib.import_module(module_name)
    return module, name, getattr(module, name)


def _rotary_shapes(q, k, cos, sin, seq_dim) -> bool:
    """q, k of 4 dims with their sequence at seq_dim; cos, sin (batch or 1, seq, head_dim)."""
    return (q.dim() == 4 and k.dim() == 4 and cos.dim() == 3 and cos.shape == sin.shape
            and cos.shape[-1] == q.shape[-1] == k.shape[-1] and cos.shape[0] in (1, q.shape[0])
            and cos.shape[1] == q.shape[seq_dim] == k.shape[seq_dim])


def fused_rotary_function(original):
    """``apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1)`` through the fused kernel while a patched
    attention module runs (q, k: (batch, heads, seq, dim) with unsqueeze_dim 1, or (batch, seq, heads, dim)
    with 2; cos, sin: (batch, seq, dim), the two halves equal as the model's rotary module makes them)."""

    def apply_rotary_pos_emb(q, k, cos, sin, *args, **kwargs):
        unsqueeze_dim = kwargs.get("unsqueeze_dim", args[0] if args else 1)
        if torch.compiler.is_compiling() or not (
                _ROTARY.get() and unsqueeze_dim in (1, 2) and _rotary_shapes(q, k, cos, sin, 3 - unsqueeze_dim)
                and takes(q, k, cos, sin)):
            return original(q, k, cos, sin, *args, **kwargs)
        half = q.shape[-1] // 2
        rotate = _fused().apply_rotary_position_embedding
        if unsqueeze_dim == 1:  # the kernel reads (batch, seq, heads, dim): a view of the projection
            q, k = q.transpose(1, 2), k.transpose(1, 2)
        q, k = (rotate(t, cos[..., :half], sin[..., :half]) for t in (q, k))
        return (q.transpose(1, 2), k.transpose(1, 2)) if unsqueeze_dim == 1 else (q, k)

    return _marked(apply_rotary_pos_emb, original)


@functools.cache
def linear_cross_entropy_forward(cls, body: str, head: str):
    original = cls.forward
    signature = inspect.signature(original)

    def forward(self, *args, **kwargs):
        named, extra = _arguments(signature, args, kwargs)
        labels, keep = named.pop("labels", None), named.pop("logits_to_keep", 0)
        if labels is None or not torch.is_grad_enabled() or not (isinstance(keep, int) and keep == 0):
            return original(self, *args, **kwargs)
        outputs = getattr(self, body)(**named, **extra)
        return _with_fused_loss(outputs, getattr(self, head).weight, labels, extra)

    return _marked(forward, original)


def _with_fused_loss(outputs, weight, labels, extra):
    """The causal-LM output with Hugging Face's loss (labels shifted by one, mean over labels not
    ignore_index, or sum / num_items_in_batch) from the fused head, and no logits."""
    from transformers.modeling_outputs import CausalLMOutputWithPast

    hidden = outputs[0]
    ignore_index = extra.get("ignore_index", -100)
    shifted = extra.get("shift_labels")
    if shifted is None:
        shifted = F.pad(labels, (0, 1), value=ignore_index)[..., 1:]
    items = extra.get("num_items_in_batch")
    loss = _fused().linear_cross_entropy(hidden, weight, shifted.to(hidden.device).contiguous(),
                                         ignore_index=ignore_index, reduction="mean" if items is None else "sum")
    if items is not None:
        loss = loss / (items.to(loss.device) if torch.is_tensor(items) else items)
    rest = {k: v for k, v in outputs.items() if k != "last_hidden_state"}
    return CausalLMOutputWithPast(loss=loss, logits=None, **rest)
