"""gems-scaffold: refused input writes nothing, writes are all or nothing, and a scaffolded vendor works.

Unit tests scaffold into temporary backend and repository folders. The end-to-end tests copy the
repository to a temporary folder, scaffold vendor ``acme`` there (on the interpreter base, and on the
simulated device ``sim``), and run conformance (and perf) on it in subprocesses that import the copy's
gems; nothing is ever written into this checkout.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import yaml

from gems.scaffold import __main__ as cli
from gems.scaffold import core as sc

# Module fixtures build real runs; one xdist worker takes the whole module (--dist loadgroup).
pytestmark = pytest.mark.xdist_group("scaffold")

REPO = Path(__file__).resolve().parents[1]
TEMPLATES = REPO / "vendor_template"
REAL_BACKEND_DIR = REPO / "gems" / "runtime" / "backend"


@pytest.fixture
def area(tmp_path):
    """A backend folder with the built-in vendors, and an empty repository root."""
    backend = tmp_path / "backend"
    backend.mkdir()
    for name in sc.BUILTIN_VENDORS:
        shutil.copytree(REAL_BACKEND_DIR / f"_{name}", backend / f"_{name}",
                        ignore=shutil.ignore_patterns("__pycache__"))
    root = tmp_path / "repo"
    root.mkdir()
    return backend, root


def _opts(area, **extra):
    backend, root = area
    return {"backend_dir": backend, "root": root, "templates": TEMPLATES, **extra}


def _tree(*folders) -> set[str]:
    """Every path under the folders (hidden ones included), to show that nothing changed."""
    return {str(p) for folder in folders if folder.exists() for p in folder.rglob("*")}


def _interp(area, vendor="acme", **extra):
    return sc.scaffold(vendor, **_opts(area, base="interpreter", device_name="cpu", **extra))


# ---------------------------------------------------------------------------------------------- names


@pytest.mark.parametrize(("name", "reason"), [
    ("../x", "outside gems/runtime/backend"),
    ("/abs", "outside gems/runtime/backend"),
    ("a/b", "outside gems/runtime/backend"),
    ("..", "outside gems/runtime/backend"),
    (".hidden", "outside gems/runtime/backend"),
    ("foo-bar", "not a valid Python identifier"),
    ("1foo", "not a valid Python identifier"),
    ("foo bar", "not a valid Python identifier"),
    ("", "empty"),
    ("Acme", "lower-case"),
    ("class", "is a Python keyword"),
    ("match", "is a Python keyword"),  # a soft keyword: a module of that name is legal but confusing
])
def test_bad_names_are_refused_and_nothing_is_written(area, name, reason):
    before = _tree(*area)
    with pytest.raises(sc.ScaffoldError, match=reason):
        _interp(area, vendor=name)
    assert _tree(*area) == before


def _real_checkout_untouched(vendor):
    """Nothing of ``vendor`` in this checkout, and no staging leftovers in its backend folder."""
    return not ((REAL_BACKEND_DIR / f"_{vendor}").exists() or (REPO / "reports" / vendor).exists()
                or (REPO / "ci" / "workflows" / f"{vendor}.yml").exists()
                or any(".scaffold-" in p.name for p in REAL_BACKEND_DIR.iterdir()))


def test_cli_refuses_an_escaping_name_with_the_reason(capsys):
    assert cli.main(["--vendor", "../x", "--base", "interpreter"]) == 1
    err = capsys.readouterr().err
    assert "'../x'" in err and "outside gems/runtime/backend" in err and "Nothing was written" in err
    assert _real_checkout_untouched("x")


@pytest.mark.parametrize("builtin", sc.BUILTIN_VENDORS)
@pytest.mark.parametrize("force", [False, True])
def test_builtin_vendors_are_never_replaced(area, builtin, force):
    before = _tree(*area)
    with pytest.raises(sc.ScaffoldError, match="built into gems"):
        _interp(area, vendor=builtin, force=force)
    assert _tree(*area) == before


def test_existing_vendor_collides_without_force(area):
    _interp(area)
    init = area[0] / "_acme" / "__init__.py"
    init.write_text(init.read_text() + "# edited by the vendor\n")
    before = _tree(*area)
    with pytest.raises(sc.ScaffoldError, match="already exists.*--force"):
        _interp(area)
    assert _tree(*area) == before
    assert init.read_text().endswith("# edited by the vendor\n")


@pytest.mark.parametrize("force", [False, True])
def test_hand_made_vendor_is_not_replaced(area, force):
    hand_made = area[0] / "_foo"
    hand_made.mkdir()
    (hand_made / "__init__.py").write_text("# written by hand\n")
    before = _tree(*area)
    with pytest.raises(sc.ScaffoldError, match="already exists" if not force else "not made by gems-scaffold"):
        _interp(area, vendor="foo", force=force)
    assert _tree(*area) == before


def test_force_replaces_a_scaffolded_vendor_but_keeps_its_baseline(area):
    _interp(area)
    (area[0] / "_acme" / "ops" / "mine.py").write_text("X = 1\n")
    baseline = area[1] / "reports" / "acme" / "conformance.json"
    baseline.write_text("{}\n")
    made, written = _interp(area, force=True)
    assert not (area[0] / "_acme" / "ops" / "mine.py").exists()
    assert baseline.read_text() == "{}\n"
    assert any("kept as it is" in note for note in made.notes) and ("keep", baseline.parent) in made.paths()
    assert area[0] / "_acme" / "__init__.py" in written
    assert not [p for p in area[0].iterdir() if p.name.startswith(".")]  # no staging or set-aside leftovers


@pytest.mark.parametrize("vendor", sorted(sc.PRESETS))
def test_known_vendors_get_their_device_query_and_dispatch_key(area, vendor):
    preset = sc.PRESETS[vendor]
    made = sc.plan(vendor, **_opts(area))
    assert (made.device_name, made.query_cmd, made.dispatch_key) == (
        preset.device_name, preset.query_cmd, preset.dispatch_key)
    assert any("known facts for " + vendor in note and "checked 2026-11-22" in note for note in made.notes)
    assert any(note.startswith(f"not verified for {vendor}") for note in made.notes) == bool(preset.unverified)


def test_explicit_options_win_over_a_preset(area):
    made = sc.plan("ascend", **_opts(area, base="interpreter", device_name="cpu"))
    assert (made.device_name, made.dispatch_key) == ("cpu", "CPU")
    assert not any("known facts" in note for note in made.notes)


def test_cli_says_replaced_when_force_replaces(area, capsys, monkeypatch):
    monkeypatch.setattr(cli, "plan", lambda vendor, **kw: sc.plan(vendor, **{**kw, **_opts(area)}))
    args = ["--vendor", "acme", "--base", "interpreter", "--device-name", "cpu"]
    assert cli.main(args) == 0
    assert "gems-scaffold: created vendor 'acme'" in capsys.readouterr().out
    assert cli.main([*args, "--force"]) == 0
    out = capsys.readouterr().out
    assert "gems-scaffold: replaced vendor 'acme'" in out and "replaced" in out.splitlines()[1]


@pytest.mark.parametrize(("options", "message"), [
    ({"base": "nosuch"}, "no such vendor"),
    ({"base": "acme"}, "cannot be its own base"),
    ({"base": "../nvidia"}, "outside gems/runtime/backend"),
    ({"base": "interpreter", "dispatch_key": "Cuda"}, "not a backend dispatch key"),
    ({"base": "interpreter", "device_name": "cuda:0"}, "torch device type"),
    ({"base": "interpreter", "query_cmd": "a\nb"}, "single line"),
])
def test_bad_options_are_refused(area, options, message):
    before = _tree(*area)
    with pytest.raises(sc.ScaffoldError, match=message):
        sc.scaffold("acme", **_opts(area, **options))
    assert _tree(*area) == before


# ----------------------------------------------------------------------------- defaults and contents


def test_defaults_come_from_the_base_vendor(area):
    made = sc.plan("acme", **_opts(area))  # base nvidia
    assert (made.base, made.device_name, made.dispatch_key, made.query_cmd) == ("nvidia", "cuda", "CUDA", "nvidia-smi")
    assert any("same device query" in note for note in made.notes)


def test_a_device_of_its_own_gets_privateuse1_and_no_inherited_query(area):
    made = sc.plan("acme", **_opts(area, device_name="acme"))
    assert (made.device_name, made.dispatch_key, made.query_cmd) == ("acme", "PrivateUse1", None)
    made = sc.plan("acme", **_opts(area, device_name="acme", query_cmd="acme-smi -L", dispatch_key="PrivateUse1"))
    assert (made.dispatch_key, made.query_cmd) == ("PrivateUse1", "acme-smi -L")


def test_rendered_files(area):
    made, written = _interp(area)
    backend, root = area
    vendor_dir = backend / "_acme"
    names = {str(p.relative_to(vendor_dir)) for p in vendor_dir.rglob("*") if p.is_file()}
    assert names == {"__init__.py", "heuristics_config_utils.py", "tune_configs.yaml", "conformance_overrides.yaml",
                     "README.md", "ops/__init__.py", "ops/example.py", sc.MARKER}
    assert sorted(written) == sorted(p for _, p in made.paths())
    for path in (p for p in vendor_dir.rglob("*") if p.is_file()):
        assert "{{" not in path.read_text(), path
    namespace = {}
    exec(compile((vendor_dir / "__init__.py").read_text(), "__init__.py", "exec"), namespace)
    info = namespace["vendor_info"]
    assert (info.vendor_name, info.device_name, info.device_query_cmd, info.key) == ("acme", "cpu", None, "CPU")
    assert namespace["base_vendor"] == "interpreter"
    ops_ns = {}
    exec(compile((vendor_dir / "ops" / "__init__.py").read_text(), "ops/__init__.py", "exec"), ops_ns)
    assert ops_ns["get_specific_ops"]() == [] and ops_ns["get_unused_ops"]() == []
    heuristics = {}
    exec(compile((vendor_dir / "heuristics_config_utils.py").read_text(), "h.py", "exec"), heuristics)
    assert heuristics["HEURISTICS_CONFIGS"] == {}  # every key falls back to the base
    assert yaml.safe_load((vendor_dir / "tune_configs.yaml").read_text()) is None
    assert yaml.safe_load((vendor_dir / "conformance_overrides.yaml").read_text()) is None
    assert yaml.safe_load((vendor_dir / sc.MARKER).read_text())["base"] == "interpreter"
    assert (root / "reports" / "acme" / ".gitkeep").is_file()


def test_workflow_runs_the_vendor_pipeline(area):
    _interp(area)
    text = (area[1] / "ci" / "workflows" / "acme.yml").read_text()
    flow = yaml.safe_load(text)
    trigger = flow.get("on", flow.get(True))  # YAML 1.1 reads the key `on` as true
    assert "gems/runtime/backend/_acme/**" in trigger["pull_request"]["paths"]
    job = flow["jobs"]["gate"]
    assert "self-hosted" in job["runs-on"] and any("acme" in label for label in job["runs-on"])
    steps = " ".join(f"{step.get('run', '')} {step.get('uses', '')}" for step in job["steps"])
    steps = steps.replace('"$VENDOR"', "acme").replace("$VENDOR", "acme").replace('"$RUN_DIR"', "runs/acme")
    if "env" in flow:
        assert flow["env"].get("VENDOR", "acme") == "acme" and flow["env"].get("RUN_DIR", "runs/acme") == "runs/acme"
    assert "pytest conformance --vendor acme" in steps
    assert "gems.perf --vendor acme" in steps or "gems-perf --vendor acme" in steps
    assert "gems.gate --vendor acme --candidate runs/acme" in steps or "gems-gate --vendor acme" in steps
    assert "github-script" in steps or "gh pr comment" in steps  # the verdict goes on the pull request
    assert "{{" not in text.replace("${{", "")


# -------------------------------------------------------------------------------- dry run, atomicity


def test_dry_run_prints_the_plan_and_writes_nothing(capsys):
    assert cli.main(["--vendor", "zzscaffoldtest", "--base", "interpreter", "--device-name", "cpu", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert _real_checkout_untouched("zzscaffoldtest")
    assert "dry run" in out and "nothing written" in out
    assert "gems/runtime/backend/_zzscaffoldtest/ops/__init__.py" in out
    assert "ci/workflows/zzscaffoldtest.yml" in out and "reports/zzscaffoldtest/.gitkeep" in out
    assert "pytest conformance --vendor zzscaffoldtest --quick" in out
    assert "gems-perf --vendor zzscaffoldtest --quick" in out


@pytest.mark.parametrize(("error", "raised"), [(OSError("disk full"), sc.ScaffoldError),
                                               (KeyboardInterrupt(), KeyboardInterrupt)])
def test_failure_while_writing_leaves_nothing(area, monkeypatch, error, raised):
    before = _tree(*area)
    real_write = sc._write_text
    calls = []

    def failing_write(path, text):
        calls.append(path)
        if len(calls) == 4:
            raise error
        real_write(path, text)

    monkeypatch.setattr(sc, "_write_text", failing_write)
    with pytest.raises(raised):
        _interp(area)
    assert len(calls) == 4
    assert _tree(*area) == before  # no vendor, no staging folder, no reports/ or ci/ folders


def test_failure_while_renaming_into_place_undoes_the_earlier_targets(area, monkeypatch):
    _interp(area)  # an earlier scaffold that --force will try to replace
    (area[0] / "_acme" / "ops" / "mine.py").write_text("X = 1\n")
    before = {p: p.read_bytes() for p in map(Path, _tree(*area)) if p.is_file()}
    real_rename = Path.rename
    failed = []

    def failing_rename(self, target):
        if Path(target).name == "acme.yml" and not failed:  # the workflow goes last: the backend is in place
            failed.append(target)
            raise OSError("rename failed")
        return real_rename(self, target)

    monkeypatch.setattr(Path, "rename", failing_rename)
    with pytest.raises(sc.ScaffoldError, match="rename failed.*removed again"):
        _interp(area, force=True)
    monkeypatch.undo()
    assert failed
    after = {p: p.read_bytes() for p in map(Path, _tree(*area)) if p.is_file()}
    assert after == before  # the earlier vendor is back, byte for byte, and nothing else remains


def test_missing_template_file_is_named(area, tmp_path):
    templates = tmp_path / "templates"
    shutil.copytree(TEMPLATES, templates)
    (templates / "backend" / "ops" / "__init__.py.tmpl").unlink()
    before = _tree(*area)
    with pytest.raises(sc.ScaffoldError, match=r"template file backend/ops/__init__\.py\.tmpl is missing"):
        _interp(area, templates=templates)
    assert _tree(*area) == before


def test_the_package_ships_the_templates():
    # gems/scaffold/vendor_template links to vendor_template/, so a wheel carries the templates as package data.
    assert (Path(sc.__file__).parent / "vendor_template").resolve() == TEMPLATES.resolve()
    assert all((TEMPLATES / rel).is_file() for rel in sc.TEMPLATES)


def test_missing_template_folder_is_named(area, monkeypatch):
    monkeypatch.setattr(sc, "__file__", str(area[1] / "gems" / "scaffold" / "core.py"))
    with pytest.raises(sc.ScaffoldError, match="vendor templates are missing.*vendor_template"):
        sc.template_dir(area[1])


def test_unknown_placeholder_is_named(area, tmp_path):
    templates = tmp_path / "templates"
    shutil.copytree(TEMPLATES, templates)
    readme = templates / "backend" / "README.md.tmpl"
    readme.write_text(readme.read_text() + "{{vendro}}\n")
    with pytest.raises(sc.ScaffoldError, match=r"backend/README\.md\.tmpl: unknown placeholder\(s\) \{\{vendro\}\}"):
        _interp(area, templates=templates)


def test_github_expressions_pass_through():
    assert sc.render("${{ github.token }} {{vendor}}", {"vendor": "acme"}, "t") == "${{ github.token }} acme"


# --------------------------------------------------------------------------------------- end to end

OVERRIDE = '''"""acme's own abs (the end-to-end test's override); each call is logged to prove it ran."""

import os

import torch
import triton
import triton.language as tl

from gems.codegen.pointwise import PointwiseOp


@triton.jit
def _abs(x):
    return tl.abs(x)  # abs(-0.0) is +0.0, as ATen's (a "x <= 0: -x" form depends on how triton negates)


_abs_op = PointwiseOp("acme_abs", _abs, operands=1)


def _enter(overload, x):
    if x.dtype == torch.bool:  # what ATen raises for bool abs
        raise NotImplementedError(f"\\"{overload}\\" not implemented for 'Bool'")
    if os.environ.get("ACME_OVERRIDE_LOG"):
        with open(os.environ["ACME_OVERRIDE_LOG"], "a") as log:
            log.write(overload + "\\n")


def abs(self):
    _enter("abs", self)
    return _abs_op(self)


def abs_(self):
    _enter("abs_", self)
    return _abs_op(self, out=self, inplace=True)


def abs_out(self, *, out):
    _enter("abs.out", self)
    return _abs_op(self, out=out)
'''

OPS_INIT = '''from gems.runtime.vendor import Autograd

from . import abs as acme_abs
from . import example



def get_specific_ops():
    return [
        ("abs", acme_abs.abs, Autograd.disable),
        ("abs_", acme_abs.abs_, Autograd.disable),
        ("abs.out", acme_abs.abs_out, Autograd.disable),
        ("neg", example.neg, Autograd.disable),  # the template's example, enabled as its comments say
        ("neg_", example.neg_, Autograd.disable),
        ("neg.out", example.neg_out, Autograd.disable),
    ]


def get_unused_ops():
    return ["exp"]
'''

# the overrides (abs; neg from the template's example), one inherited from the base, the unused one, and one
# whose known failure on the base (ATen's CPU fp16 pow) the vendor inherits along its base chain
OPS = "abs,neg,exp,add,pow"
UNUSED = "exp"


def _run(args, cwd, env, timeout=600):
    proc = subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    output = f"{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    assert proc.returncode == 0, f"{' '.join(args)} exited {proc.returncode}:\n{output}"
    return proc


def _scaffolded_copy(tmp_path_factory, *options):
    """A copy of the repository (venvs and run outputs left out) with vendor acme scaffolded by
    ``gems-scaffold --vendor acme`` and ``options``; returns the copy and the environment that imports it."""
    copy = tmp_path_factory.mktemp("repo") / "gems-copy"
    shutil.copytree(REPO, copy, ignore=shutil.ignore_patterns(
        ".git", "runs", ".venv*", "__pycache__", "*.egg-info", ".ruff_cache", ".pytest_cache"))
    env = {k: v for k, v in os.environ.items() if k != "GEMS_VENDOR" and not k.startswith("PYTEST_")}
    env["PYTHONPATH"] = str(copy)
    made = _run(["-m", "gems.scaffold", "--vendor", "acme", *options], copy, env)
    assert "pytest conformance --vendor acme --quick" in made.stdout
    return copy, env


@pytest.fixture(scope="module")
def acme(tmp_path_factory):
    """A copy of the repository with vendor acme scaffolded on the interpreter, one override and one unused
    operator."""
    copy, env = _scaffolded_copy(tmp_path_factory, "--base", "interpreter", "--device-name", "cpu")
    ops_dir = copy / "gems" / "runtime" / "backend" / "_acme" / "ops"
    (ops_dir / "abs.py").write_text(OVERRIDE)
    (ops_dir / "__init__.py").write_text(OPS_INIT)
    return copy, env


def test_scaffolded_vendor_is_selected_and_inherits_its_base(acme):
    copy, env = acme
    probe = (
        "import gems, json\n"
        "from gems.runtime.backend._acme.ops import example\n"  # the template's example imports cleanly
        "b = gems.vendor()\n"
        "print(json.dumps({'name': b.name, 'chain': [m.name for m in b.chain()], 'device': b.device,\n"
        "  'key': b.dispatch_key, 'interp': b.capabilities.kernels_call_torch,\n"
        "  'heuristics': sorted(b.heuristics('pointwise')) == sorted(b.base.heuristics('pointwise')),\n"
        "  'specific': sorted(b.specific_ops()), 'unused': sorted(b.unused_ops()),\n"
        "  'example': callable(example.neg)}))\n"
    )
    found = json.loads(_run(["-c", probe], copy, {**env, "GEMS_VENDOR": "acme"}).stdout.strip().splitlines()[-1])
    assert found == {"name": "acme", "chain": ["acme", "interpreter"], "device": "cpu", "key": "CPU", "interp": True,
                     "heuristics": True, "specific": ["abs", "abs.out", "abs_", "neg", "neg.out", "neg_"],
                     # the base's own unused overload (ATen has no CPU _conv_depthwise2d) is inherited
                     "unused": sorted([UNUSED, "_conv_depthwise2d"]), "example": True}


def test_conformance_on_scaffolded_vendor(acme):
    copy, env = acme
    log = copy / "override_calls.txt"
    # GEMS_VENDOR as well as --vendor: conformance/conftest.py imports gems.ops, which selects a vendor
    # (GEMS_VENDOR, else detection) before --vendor is read, so --vendor alone names a vendor too late.
    run_env = {**env, "GEMS_VENDOR": "acme", "ACME_OVERRIDE_LOG": str(log)}
    _run(["-m", "pytest", "conformance", "--vendor", "acme", "--quick", "--ops", OPS, "-q", "-p", "no:warnings",
          "--report-dir", "runs/acme"], copy, run_env)
    report = json.loads((copy / "runs" / "acme" / "conformance.json").read_text())
    assert report["vendor"] == "acme"
    cases = report["cases"]
    assert {c["op"] for c in cases} == set(OPS.split(","))
    # The override ran: every abs case passed the execution check, and each of its overloads was
    # served by acme's function (not the base's) as often as cases expect it.
    abs_cases = [c for c in cases if c["op"] == "abs"]
    assert abs_cases and all(c["status"] == "pass" for c in abs_cases), [c for c in abs_cases if c["status"] != "pass"]
    calls = Counter(log.read_text().split())
    expected = Counter(c["overload"] for c in abs_cases if c["rule"] != "same-error")  # errors raise first
    assert set(calls) == {"abs", "abs_", "abs.out"}
    assert all(calls[o] >= n for o, n in expected.items()), (calls, expected)
    # The unused operator fell back to ATen, and the report says why.
    unused = [c for c in cases if c["op"] == UNUSED]
    assert unused and all(c["status"] == "fallback" for c in unused)
    assert all("listed in get_unused_ops() of vendor acme" in c["message"] for c in unused)
    with open(copy / "runs" / "acme" / "support_matrix.csv") as f:
        matrix = {(row["op"], row["dtype"]): row["status"] for row in csv.DictReader(f)}
    assert {s for (op, _), s in matrix.items() if op == UNUSED} == {"fallback"}
    assert "listed in get_unused_ops() of vendor acme" in (copy / "runs" / "acme" / "support_matrix.md").read_text()
    # The base's known failure is the vendor's too; everything else passed.
    inherited = [c for c in cases if c["status"] == "xfail"]
    assert [c["id"] for c in inherited] == ["pow::float16::exponent-0.5-specials"]
    others = [c for c in cases if c["op"] != UNUSED and c not in inherited]
    assert others and all(c["status"] == "pass" for c in others), [c["id"] for c in others if c["status"] != "pass"]
    assert report["summary"]["fail"] == report["summary"]["error"] == report["summary"]["xpass"] == 0


def test_perf_on_scaffolded_vendor(acme):
    copy, env = acme
    if not (copy / "gems" / "perf" / "__main__.py").is_file():
        pytest.skip("gems-perf (gems/perf/__main__.py) is not in this tree yet")
    # --ops keeps it to the operators conformance ran; GEMS_VENDOR for the reason given above.
    _run(["-m", "gems.perf", "--vendor", "acme", "--quick", "--ops", OPS], copy, {**env, "GEMS_VENDOR": "acme"})
    with open(copy / "runs" / "acme" / "perf.csv") as f:
        rows = list(csv.DictReader(f))
    assert rows and {r["vendor"] for r in rows} == {"acme"} and {r["op"] for r in rows} == set(OPS.split(","))
    assert {r["status"] for r in rows if r["op"] == UNUSED} == {"fallback"}  # ATen's kernel is not a gems speedup
    assert {r["status"] for r in rows if r["op"] != UNUSED} == {"ok"}


# Operators of four families (pointwise, blas, creation, indexing) on which the simulated device declares gaps
# (device_gaps of vendor sim): a tolerance without ATen's parity rule, gems leaning on an ATen operator the device
# lacks, and ATen's CPU-only checks standing in for the device's.
SIM_OPS = "tanh,trace,one_hot,index_select"

SIM_PROBE = f"""
import gems, json
b = gems.vendor()
gaps = {{op: b.device_gaps().get(op) for op in {SIM_OPS!r}.split(",")}}
print(json.dumps({{"chain": [m.name for m in b.chain()], "device": b.device, "key": b.dispatch_key,
                  "inherited": b.device_gaps() == b.base.device_gaps(), "gaps": gaps}}))
"""


def test_conformance_on_vendor_scaffolded_on_sim(tmp_path_factory):
    # README's out-of-tree rehearsal: vendor acme brings device type "acme" on PrivateUse1, on the simulated device.
    copy, env = _scaffolded_copy(tmp_path_factory, "--base", "sim", "--device-name", "acme",
                                 "--dispatch-key", "PrivateUse1")
    # What README says a user does first: build the simulated device's extension (cached; a failed build fails here).
    assert "ready in" in _run(["-m", "gems.simdevice"], copy, env).stdout
    env = {**env, "GEMS_VENDOR": "acme"}  # GEMS_VENDOR as well as --vendor, as in test_conformance_on_scaffolded_vendor
    found = json.loads(_run(["-c", SIM_PROBE], copy, env).stdout.strip().splitlines()[-1])
    assert (found["chain"], found["device"], found["key"], found["inherited"]) == (
        ["acme", "sim", "interpreter"], "acme", "PrivateUse1", True)
    _run(["-m", "pytest", "conformance", "--vendor", "acme", "--quick", "--ops", SIM_OPS, "-q", "-p", "no:warnings",
          "--report-dir", "runs/acme"], copy, env)
    report = json.loads((copy / "runs" / "acme" / "conformance.json").read_text())
    cases = report["cases"]
    assert report["vendor"] == "acme" and {c["op"] for c in cases} == set(SIM_OPS.split(","))
    # Every case passed or is a known failure, and each known failure is one that sim declares, with its reason:
    # the scaffolded vendor inherits its base's device gaps (one that passed would be an xpass).
    assert {c["status"] for c in cases} == {"pass", "xfail"}, [c["id"] for c in cases if c["status"] != "pass"]
    known = [c for c in cases if c["status"] == "xfail"]
    for case in known:
        gaps = found["gaps"][case["op"]]
        reason = gaps.get(f"{case['variant']}/{case['dtype']}") or gaps.get(case["variant"]) or gaps.get("*")
        assert reason and case["message"].startswith(f"known gap of device acme: {reason} ("), case
    assert {c["op"] for c in known} == set(SIM_OPS.split(","))  # each operator met a gap of sim's
    assert report["summary"]["fail"] == report["summary"]["error"] == report["summary"]["xpass"] == 0


def test_a_vendor_whose_device_is_absent_gets_a_cpu_recipe_at_scaffold_time():
    import shutil as _shutil

    from gems.scaffold.__main__ import _device_absent

    if _shutil.which("nvidia-smi"):
        pytest.skip("this machine has nvidia-smi: the nvidia device may be present")
    assert "`nvidia-smi` cannot run" in _device_absent("nvidia")
    assert _device_absent("interpreter") is None and _device_absent("sim") is None
