"""gems.patch (gems/patch/): tiny transformers models patched with the fused kernels give the unpatched
model's outputs, losses and gradients; unpatch restores them exactly; what a patch leaves is listed with
the reason; ``gems-perf --model --patched`` reports the patched side. On the interpreter vendor (and, where
it runs the models, the simulated device: GEMS_VENDOR=sim)."""

import contextlib
import copy

import pytest
import torch

pytest.importorskip("transformers", reason="gems[models] (transformers) is not installed")

import gems  # noqa: E402
from gems.patch import forwards  # noqa: E402


@pytest.fixture(autouse=True)
def _gems_enabled():
    """gems registered, as the models harness runs (on the simulated device nothing else computes)."""
    from gems.runtime import registration

    previous = registration.snapshot()
    gems.enable()
    yield
    registration.apply(previous, gems.vendor().dispatch_key)


TINY = {"hidden_size": 32, "intermediate_size": 48, "num_hidden_layers": 2, "num_attention_heads": 4,
        "num_key_value_heads": 2, "vocab_size": 96, "max_position_embeddings": 32}


def _device():
    return gems.vendor().device


def _build(model_type, head="causal", **fields):
    """A tiny model on the vendor's device (made on the CPU, moved), norms given random weights so that
    their scale matters."""
    from transformers import (
        AutoConfig,
        AutoModel,
        AutoModelForCausalLM,
        AutoModelForImageClassification,
        AutoModelForMaskedLM,
    )

    auto = {"causal": AutoModelForCausalLM, "masked": AutoModelForMaskedLM, "image": AutoModelForImageClassification,
            "base": AutoModel}[head]
    config = AutoConfig.for_model(model_type, **fields)
    torch.manual_seed(0)
    model = auto.from_config(config, attn_implementation="sdpa", dtype=torch.float32)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name.lower():
                p.copy_(torch.randn_like(p) * 0.5 + (1.0 if "weight" in name else 0.0))
    return model.to(_device()).eval()


def _run(model, inputs, loss_of=None):
    """(loss, logits without labels, gradients) of one forward and backward."""
    model.zero_grad(set_to_none=True)
    out = model(**inputs)
    loss = loss_of(out) if loss_of else out.loss
    loss.backward()
    with torch.no_grad():
        plain = {k: v for k, v in inputs.items() if k != "labels"}
        logits = getattr(model(**plain), "logits", None) if loss_of is None else loss_of(model(**plain))
    grads = {n: p.grad.detach().cpu() for n, p in model.named_parameters() if p.grad is not None}
    return loss.detach().cpu(), logits.detach().cpu(), grads


def _assert_same_answers(reference, patched):
    torch.testing.assert_close(patched[0], reference[0], rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(patched[1], reference[1], rtol=1e-5, atol=1e-5)
    assert patched[2].keys() == reference[2].keys()
    for name, grad in reference[2].items():
        torch.testing.assert_close(patched[2][name], grad, rtol=1e-4, atol=1e-5, msg=name)


def _ids(vocab=TINY["vocab_size"], shape=(2, 12)):
    generator = torch.Generator().manual_seed(1)
    ids = torch.randint(0, vocab, shape, generator=generator).to(_device())
    return {"input_ids": ids, "labels": ids.clone()}


def _assert_unpatched(model):
    """gems.unpatch(model) gave every module its class's forward and its architecture's rotary function back."""
    from gems.patch.tables import ARCHITECTURES

    gems.unpatch(model)
    assert gems.patch.report_of(model) is None
    assert not [n for n, m in model.named_modules() if "forward" in m.__dict__]
    rotary = [e.options["function"] for e in ARCHITECTURES[model.config.model_type] if e.kind == "rotary"]
    assert not [path for path in rotary if hasattr(forwards.rotary_function(path)[2], forwards.MARK)]


@pytest.mark.parametrize(("model_type", "prefix", "fields"), [
    pytest.param("llama", "Llama", {}, id="llama"),
    pytest.param("qwen2", "Qwen2", {}, id="qwen2"),
    # a sliding window shorter than the sequence: the attention masks it; norms, MLP and rotary do not care
    pytest.param("mistral", "Mistral", {"sliding_window": 4, "head_dim": 8}, id="mistral"),
])
def test_a_patched_decoder_gives_the_unpatched_answers_with_every_fused_kernel(model_type, prefix, fields):
    model = _build(model_type, **TINY, **fields)
    patched = copy.deepcopy(model)
    report = gems.patch(patched)
    assert report.known and not report.left
    assert set(report.counts()) == {prefix + c for c in ("RMSNorm", "MLP", "DecoderLayer", "Attention", "ForCausalLM")}
    inputs = _ids()
    reference = _run(model, inputs)
    gems.reset_counts()
    found = _run(patched, inputs)
    _assert_same_answers(reference, found)
    calls, fallbacks = gems.call_counts()["gems"], gems.call_counts()["fallback"]
    assert not [k for k in fallbacks if k[0].startswith("gems.fused")], fallbacks
    # two forwards (one with labels, one without) through 2 layers: every fused op ran (and its backward, once)
    assert calls["gems.fused.linear_cross_entropy"] == 1 and calls["gems.fused.fused_add_rms_norm"] == 4
    assert calls["gems.fused.fused_rms_norm"] == 6 and calls["gems.fused.silu_and_mul"] == 4
    assert calls["gems.fused.apply_rotary_position_embedding"] == 8
    assert patched(**inputs).logits is None  # the fused loss never made the logits
    _assert_unpatched(patched)


def test_training_calls_under_the_vendors_fusion_threshold_run_the_modules_own_forwards(monkeypatch):
    """A call that builds an autograd graph fuses from the vendor's patch_fusion MIN_NUMEL on (nvidia: 2^22
    elements), below it the module's own forward runs, with the same answers; a call that builds none (no_grad)
    fuses at any size (it replays natively), and so does every call inside every_call_fused()."""
    from gems.runtime import selection

    rule = selection.current().heuristics("patch_fusion")
    monkeypatch.setitem(rule, "MIN_NUMEL", lambda args: 2 * 20 * TINY["hidden_size"])  # (2, 20) tokens and up
    model = _build("llama", **TINY)
    patched = copy.deepcopy(model)
    gems.patch(patched)
    norms = ("gems.fused.fused_add_rms_norm", "gems.fused.fused_rms_norm", "gems.fused.silu_and_mul",
             "gems.fused.apply_rotary_position_embedding")

    def fused_calls(tokens, grad=True, every=False):
        inputs = {k: v for k, v in _ids(shape=(2, tokens)).items() if k != "labels"}
        gems.reset_counts()
        with torch.set_grad_enabled(grad), (forwards.every_call_fused() if every else contextlib.nullcontext()):
            torch.testing.assert_close(patched(**inputs).logits, model(**inputs).logits, rtol=1e-5, atol=1e-5)
        calls = gems.call_counts()["gems"]
        return [calls.get(name, 0) > 0 for name in norms]

    assert fused_calls(12) == [False] * 4 and fused_calls(20) == [True] * 4
    assert fused_calls(12, grad=False) == [True] * 4
    assert fused_calls(12, every=True) == [True] * 4  # what the models' patched conformance cases run under
    _assert_unpatched(patched)  # the architecture's rotary function is module-level: put it back for the others


def test_a_patched_decoders_inference_calls_replay_natively_after_the_first_forward():
    """gems.fused's operators replay like ATen overloads (docs/native.md, "gems' own operators"): in a second
    forward under no_grad every fused call of the patched model is served from C++, with the first one's logits."""
    from gems import native
    from gems.runtime import registration

    model = _build("llama", **TINY)
    gems.patch(model)
    inputs = {"input_ids": _ids()["input_ids"]}
    with torch.no_grad(), forwards.every_call_fused():
        first = model(**inputs).logits
        gems.reset_counts()
        second = model(**inputs).logits
    assert torch.equal(first, second)
    replayed = {name: n for name, n in native.call_counts().items() if name.startswith("gems.fused.")}
    # per forward through 2 layers: 3 RMSNorms, 2 residual add + norms, 2 gated MLPs, queries and keys rotated
    assert replayed == {"gems.fused.fused_rms_norm": 3, "gems.fused.fused_add_rms_norm": 2,
                        "gems.fused.silu_and_mul": 2, "gems.fused.apply_rotary_position_embedding": 4}, replayed
    assert not [name for name in replayed if registration.gems_calls.cell(name)[0]]  # none took the Python path
    _assert_unpatched(model)


def test_a_patched_bert_gives_the_unpatched_answers():
    model = _build("bert", head="masked", hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                   num_attention_heads=4, vocab_size=96, max_position_embeddings=32)
    patched = copy.deepcopy(model)
    report = gems.patch(patched)
    assert report.counts() == {"BertSelfOutput": 2, "BertOutput": 2}
    assert {cls for _, cls, _ in report.left} == {"BertIntermediate", "BertForMaskedLM"}  # said why, not fused
    inputs = {**_ids(), "attention_mask": torch.ones(2, 12, dtype=torch.long, device=_device())}
    inputs["attention_mask"][1, 9:] = 0
    gems.reset_counts()
    _assert_same_answers(_run(model, inputs), _run(patched, inputs))
    assert gems.call_counts()["gems"]["gems.fused.skip_layer_norm"] == 8
    gems.unpatch(patched)


def test_a_patched_vit_fuses_each_layers_residual_add_and_layer_norm_with_its_bias():
    model = _build("vit", head="image", hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                   num_attention_heads=4, image_size=16, patch_size=8, num_labels=5)
    patched = copy.deepcopy(model)
    report = gems.patch(patched)
    assert report.known and report.counts() == {"ViTLayer": 2}
    # the MLP has no gate (dense + GELU + dense): no fused kernel takes it, left and said why
    assert {(path, cls) for path, cls, _ in report.left} == {(f"vit.layers.{i}.mlp", "ViTMLP") for i in range(2)}
    assert all(why.startswith("dense + GELU + dense") for _, _, why in report.left)
    assert "left    2 x ViTMLP" in str(report)
    generator = torch.Generator().manual_seed(1)
    inputs = {"pixel_values": torch.randn(2, 3, 16, 16, generator=generator).to(_device()),
              "labels": torch.tensor([3, 1], device=_device())}
    gems.reset_counts()
    _assert_same_answers(_run(model, inputs), _run(patched, inputs))
    assert not [k for k in gems.call_counts()["fallback"] if k[0].startswith("gems.fused")]
    assert gems.call_counts()["gems"]["gems.fused.skip_layer_norm"] == 4  # two forwards through 2 layers
    _assert_unpatched(patched)


def test_gemma_norms_scale_by_one_plus_weight_and_its_mlp_takes_the_tanh_gelu():
    model = _build("gemma", **TINY, head_dim=8)
    patched = copy.deepcopy(model)
    gems.patch(patched)
    gems.reset_counts()
    _assert_same_answers(_run(model, _ids()), _run(patched, _ids()))
    assert gems.call_counts()["gems"]["gems.fused.gelu_and_mul"] == 4
    gems.unpatch(patched)


def test_unpatch_restores_the_model_and_the_rotary_function_exactly():
    from transformers.models.llama import modeling_llama

    original = modeling_llama.apply_rotary_pos_emb
    model = _build("llama", **TINY)
    before = _run(model, _ids())
    copy_of = copy.deepcopy(model)
    gems.patch(model)
    assert modeling_llama.apply_rotary_pos_emb is not original
    _assert_unpatched(model)
    assert modeling_llama.apply_rotary_pos_emb is original
    after = _run(model, _ids())
    assert torch.equal(after[0], before[0]) and torch.equal(after[1], before[1])
    assert all(torch.equal(after[2][n], g) for n, g in before[2].items())
    assert all(torch.equal(p, q) for p, q in zip(model.state_dict().values(), copy_of.state_dict().values()))


def test_a_patched_model_under_torch_compile_gives_the_uncompiled_answers():
    """Dynamo traces the fused ops' composites (gems/ops/fused/api.py) in one graph with the rest of the model;
    backend "eager" runs that graph as traced (no C toolchain needed)."""
    model = _build("llama", **TINY)
    gems.patch(model)
    reference = _run(model, _ids())
    torch._dynamo.reset()
    try:
        model.compile(backend="eager")  # in place: the parameters keep their names
        found = _run(model, _ids())
    finally:
        torch._dynamo.reset()
    _assert_same_answers(reference, found)
    _assert_unpatched(model)


def test_a_deepcopy_of_a_patched_model_runs_its_own_modules():
    model = _build("llama", **TINY)
    gems.patch(model)
    twin = copy.deepcopy(model)
    with torch.no_grad():
        twin.model.norm.weight.zero_()  # would show in model's output if twin's forward ran model's modules
    ids = _ids()["input_ids"]
    with torch.no_grad():
        assert not torch.equal(model(input_ids=ids).logits, twin(input_ids=ids).logits)
        assert twin.model.norm.forward.__self__ is twin.model.norm
    gems.unpatch(twin)
    gems.unpatch(model)


def test_an_unknown_architecture_is_reported_module_by_module():
    from transformers import AutoConfig, AutoModelForCausalLM

    model = AutoModelForCausalLM.from_config(AutoConfig.for_model("gpt2", n_embd=32, n_layer=1, n_head=4,
                                                                  vocab_size=96))
    report = gems.patch(model)
    text = str(report)
    assert not report.known and not report.patched and "nothing patched" in text
    assert "no table for architecture 'gpt2'" in text
    assert {"GPT2Block", "GPT2Attention", "GPT2MLP"} <= {cls for _, cls, _ in report.left}
    gems.unpatch(model)


def test_configurations_the_kernels_do_not_take_are_left_listed_and_the_answers_unchanged():
    model = _build("llama", **TINY, rope_parameters={"rope_type": "proportional", "rope_theta": 10000.0},
                   attention_bias=True)
    scale = model.model.norm.weight.detach()
    del model.model.norm.weight
    model.model.norm.register_buffer("weight", scale)  # a norm without a learned scale (a fixed one)
    model.lm_head.bias = torch.nn.Parameter(torch.zeros(TINY["vocab_size"], device=_device()))
    patched = copy.deepcopy(model)
    report = gems.patch(patched)
    left = {path: why for path, _, why in report.left}
    assert left["model.layers.0.self_attn"].startswith("rope_type 'proportional' is not one")
    assert left["model.norm"].startswith("no 1-D weight") and left[""] == "lm_head is not a Linear without bias"
    assert "model.layers.0.mlp" in {path for path, _, _ in report.patched}
    _assert_same_answers(_run(model, _ids()), _run(patched, _ids()))
    gems.unpatch(patched)


def test_patch_class_patches_models_built_afterwards():
    from transformers import LlamaForCausalLM

    gems.patch_class(LlamaForCausalLM)
    try:
        model = _build("llama", **TINY)
        assert gems.patch.report_of(model) is not None and "forward" in model.model.norm.__dict__
    finally:
        gems.unpatch_class(LlamaForCausalLM)
    assert "__init__" not in LlamaForCausalLM.__dict__ or not hasattr(LlamaForCausalLM.__init__, forwards.MARK)
    assert gems.patch.report_of(_build("llama", **TINY)) is None
    gems.unpatch(model)


def test_gems_perf_patched_reports_a_third_side_and_without_the_flag_nothing_changes(tmp_path):
    from gems.models.answers import Answer
    from gems.models.run import ModelRun, run_model

    run = run_model("bert", measure="answers", out=tmp_path, progress=False, patched=True)  # the cheaper preset
    assert run.answers_ok(), run.answers
    assert all(a["patched_ok"] and a["patched_error"] is not None for a in run.answers)
    assert "BertOutput -> skip_layer_norm" in run.patched["report"] and "not measured" in run.patched["memory"]
    page = (tmp_path / "models.md").read_text()
    assert "patched gems'" in page and "Peak memory: not measured" in page
    # Without --patched, models.json's entries keep the keys they always had.
    plain = ModelRun("m", "preset", "decoder", "float32", "interpreter", "cpu").as_dict()
    assert "patched" not in plain
    assert set(Answer("loss", 0.1, 0.1, 1.0, 0.0).as_dict()) == {"quantity", "aten_error", "gems_error", "scale",
                                                                  "floor", "worst", "allowed", "ok"}
