"""gems-perf --model (gems.models): presets and config files, bad requests, answers, coverage, the files written.

On the interpreter vendor with tiny configurations; speed needs a GPU (the device tool's tools/gpu_models.sh).
"""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("transformers", reason="gems[models] (transformers) is not installed")

from gems.models import answers, build, report  # noqa: E402
from gems.models.errors import ModelError  # noqa: E402
from gems.models.run import plan, run_model  # noqa: E402
from gems.runtime import registration  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def _config(tmp_path, **fields) -> str:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(fields))
    return str(path)


TINY_QWEN2 = {"model_type": "qwen2", "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1,
              "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 128, "max_position_embeddings": 64}


@pytest.mark.parametrize("request_kwargs, message", [
    ({"model": "gpt9"}, "unknown preset 'gpt9'; presets: llama, bert"),
    ({}, "give one of --model NAME and --model-config FILE.json"),
    ({"model": "llama", "config_file": "x.json"}, "give one of --model NAME and --model-config FILE.json"),
    ({"config_file": "meta-llama/Llama-2-7b-hf"}, "never downloads"),
    ({"model": "llama", "size": "huge"}, "--model-size: unknown size 'huge'"),
    ({"model": "llama", "dtype": "float8"}, "--model-dtype: unknown dtype 'float8'"),
    ({"model": "llama", "measure": "speed"}, "--model-measure speed: vendor interpreter runs kernels in Triton's CPU"),
    ({"model": "llama", "measure": "answers,latency"}, "--model-measure: unknown latency"),
    ({"model": "llama", "measure": ""}, "--model-measure: empty selection"),
    ({"model": "llama", "workloads": "decode,warp"}, "--model-workloads: unknown warp"),
])
def test_bad_requests_are_refused_before_anything_runs(request_kwargs, message):
    with pytest.raises(ModelError, match=None) as caught:
        plan(**request_kwargs)
    assert message in str(caught.value)


def test_bad_config_files_name_the_file_and_the_problem(tmp_path):
    with pytest.raises(ModelError, match="is a directory: pass its config.json"):
        plan(config_file=str(tmp_path))
    with pytest.raises(ModelError, match="no \"model_type\" field"):
        plan(config_file=_config(tmp_path, hidden_size=4))
    with pytest.raises(ModelError, match="transformers cannot build a 'no_such_arch' configuration"):
        plan(config_file=_config(tmp_path, model_type="no_such_arch"))
    with pytest.raises(ModelError, match="t5: an encoder-decoder model"):
        plan(config_file=_config(tmp_path, model_type="t5"))
    with pytest.raises(ModelError, match="vit: transformers has neither a causal-LM nor a masked-LM head"):
        plan(config_file=_config(tmp_path, model_type="vit"))
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(ModelError, match="not a readable JSON file"):
        plan(config_file=str(tmp_path / "broken.json"))


def test_presets_build_at_every_size_without_weights_from_anywhere():
    for name, kind in (("llama", build.DECODER), ("bert", build.ENCODER)):
        spec = build.from_preset(name, "tiny")
        assert spec.kind == kind and spec.config.model_type == name
    full = build.from_preset("llama", "full").config
    assert (full.hidden_size, full.intermediate_size, full.num_attention_heads, full.num_key_value_heads) == \
        (4096, 11008, 32, 8)


def test_answers_verdict_is_within_ratio_of_atens_error_plus_a_floor():
    ok = answers.Answer("logits", aten_error=0.02, gems_error=0.029, scale=4.0, floor=0.0)
    bad = answers.Answer("logits", aten_error=0.02, gems_error=0.031, scale=4.0, floor=0.0)
    nan = answers.Answer("loss", aten_error=0.0, gems_error=math.nan, scale=1.0, floor=1.0)
    noise = answers.Answer("loss", aten_error=0.0, gems_error=4e-7, scale=2.0, floor=2e-5)
    assert ok.ok() and not bad.ok() and not nan.ok() and noise.ok()


def test_a_tiny_llama_runs_answers_and_coverage_and_writes_its_files(tmp_path):
    before = registration.snapshot()
    run = run_model("llama", out=tmp_path, progress=False)
    assert registration.snapshot() == before  # the caller's registration is back (gems is not left on)
    quantities = {a["quantity"] for a in run.answers}
    assert quantities == {"logits", "loss", "gradients", "decode logits", "parameters after AdamW"}
    assert run.answers_ok(), run.answers
    assert run.compute_calls > 100 and 0 < run.gems_compute_calls <= run.compute_calls
    overloads = {r["overload"]: r for r in run.coverage}
    assert overloads["mm"]["gems"] == overloads["mm"]["calls"] and overloads["mm"]["kind"] == "compute"
    assert overloads["view"]["kind"] == "view"
    data = json.loads((tmp_path / "models.json").read_text())
    assert [(m["name"], m["dtype"]) for m in data["models"]] == [("llama-tiny", "float32")]
    page = (tmp_path / "models.md").read_text()
    assert "## llama-tiny (float32)" in page and "| logits |" in page and "compute calls" in page
    rows = (tmp_path / "models.csv").read_text().splitlines()
    assert rows[0].startswith("model,dtype,vendor,section") and any(",answers,loss," in r for r in rows)
    summary = "\n".join(report.perf_summary_lines(tmp_path))  # the models section of perf_summary.md
    assert "## Models" in summary and "| llama-tiny | float32 | ✅ |" in summary


def test_any_config_file_runs_and_a_new_run_replaces_its_entry(tmp_path):
    config = _config(tmp_path, **TINY_QWEN2)
    for _ in range(2):
        run = run_model(config_file=config, measure="answers", out=tmp_path / "out", progress=False)
    assert run.kind == build.DECODER and run.answers_ok() and not run.coverage
    data = json.loads((tmp_path / "out" / "models.json").read_text())
    assert [m["name"] for m in data["models"]] == ["qwen2"]


def test_cli_bad_request_is_one_line_exit_2_and_writes_nothing(tmp_path):
    env = {**os.environ, "GEMS_VENDOR": "interpreter"}
    out = tmp_path / "run"
    proc = subprocess.run([sys.executable, "-m", "gems.perf", "--model", "llama", "--model-measure", "speed",
                           "--out", str(out)], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1].startswith("gems-perf: error: --model-measure speed: vendor "
                                                           "interpreter")
    assert "Traceback" not in proc.stderr and not out.exists()


def test_unwritable_out_is_refused_before_the_model_is_built(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(ModelError, match="--out: cannot write to"):
        report.check_out_dir(blocker / "sub")


def test_tensor_parallel_over_two_processes_matches_one_device(tmp_path):
    run = run_model("llama", devices=2, out=tmp_path, progress=False)
    assert run.name == "llama-tiny x2" and run.answers_ok(), run.answers
    assert [a["quantity"] for a in run.answers] == ["logits: 2 devices vs one", "loss: 2 devices vs one"]


def test_tensor_parallel_refuses_what_it_cannot_split(tmp_path):
    with pytest.raises(ModelError, match="tensor parallelism covers decoders; bert-tiny is an encoder"):
        run_model("bert", devices=2, out=tmp_path, progress=False)
    with pytest.raises(ModelError, match="--model-devices: 0 is not a number of devices"):
        run_model("llama", devices=0, out=tmp_path, progress=False)
    with pytest.raises(ModelError, match=r"heads \(4\), key/value heads \(2\) .* must all divide"):
        run_model("llama", devices=3, out=tmp_path, progress=False)


def test_the_fallback_note_names_the_run_wide_fallbacks():
    from collections import Counter
    from types import SimpleNamespace

    from gems.models.run import _notes

    counts = Counter({("_to_copy", "a transfer"): 9, ("index.Tensor", "a 0-d mask"): 3})
    backend = SimpleNamespace(device="cuda", capabilities=SimpleNamespace(aten_kernels=True))
    (note,) = _notes(backend, SimpleNamespace(fallback_calls=counts))
    assert note.startswith("12 gems calls fell back to ATen over the whole run")
    assert "_to_copy: a transfer (x9)" in note and "index.Tensor: a 0-d mask (x3)" in note
    assert _notes(backend, SimpleNamespace(fallback_calls=Counter())) == []


def test_timed_runs_count_the_gems_calls_the_native_layer_replayed(gems_enabled):
    """The speed table's "replayed natively" column: each side's gems calls in the timed runs, and the share
    replayed from C++ (after the warm-up runs recorded the plan). ATen's side serves no gems call."""
    import torch

    import gems
    from gems import native
    from gems.models import speed

    x = torch.randn(64)

    def run(_):
        for _ in range(3):
            torch.add(x, 1.0)

    workload = speed.Workload("decode", 1, 3, prepare=lambda: None, run=run, units=3)
    sides = {"aten": gems.aten_only, "gems": speed.gems_context}
    replays = {}
    times = speed.time_workload(workload, "cpu", sides, rounds=2, replays=replays)
    assert replays["aten"] == [0, 0] and replays["gems"][0] == 6
    row = speed.summarize(workload, times, replays=replays)
    assert "aten_native_share" not in row and row["gems_calls"] == 6
    if native.status()["active"]:  # the warm-up's first call recorded the plan: every timed call replays
        assert row["gems_native_share"] == 1.0
    text = "\n".join(report.speed_lines({"speed": [row]}))
    assert f"{100 * row['gems_native_share']:.1f}% of 6" in text and "Replayed natively" in text
