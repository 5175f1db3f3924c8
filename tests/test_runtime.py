"""Vendor selection, configs, registration, fallbacks and the launcher (interpreter vendor)."""

import os
from pathlib import Path

import pytest
import torch

import gems
from gems.runtime import configs, launch, registration, selection
from gems.runtime.vendor import Capabilities, VendorError, VendorInfoBase, known_vendors

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _restore_registration():
    previous = registration.snapshot()
    yield
    registration.apply(previous, gems.vendor().dispatch_key)


def test_builtin_vendors_are_known():
    assert {"interpreter", "nvidia"} <= set(known_vendors())


def test_unknown_vendor_lists_the_known_ones():
    with pytest.raises(VendorError) as err:
        selection.load_backend("acme_does_not_exist")
    assert "interpreter" in str(err.value) and "nvidia" in str(err.value)
    assert "gems-scaffold --vendor acme_does_not_exist" in str(err.value)


@pytest.mark.parametrize("name", ["../x", "/abs", "Foo", "1x", "class"])
def test_invalid_vendor_names_are_refused(name):
    with pytest.raises(VendorError, match="invalid vendor name"):
        selection.load_backend(name)


def _fake_backend(query_cmd):
    info = VendorInfoBase("fake", "cpu", query_cmd, "CPU")
    return selection.Backend("fake", info, Capabilities(), None, None, None)


def test_failing_device_query_names_command_and_status():
    with pytest.raises(VendorError) as err:
        selection.check_available(_fake_backend("false"))
    message = str(err.value)
    assert "`false`" in message and "exit status 1" in message and "GEMS_VENDOR" in message


def test_missing_query_program_is_reported():
    with pytest.raises(VendorError, match="not on PATH"):
        selection.check_available(_fake_backend("no-such-query-tool --list"))


def test_selection_says_why_the_vendor_was_chosen():
    name, why = selection.detect_vendor()
    assert name in selection.known_vendors() and why.startswith(("detected: `", "the default: "))
    assert selection.selected_because()  # whatever chose this process's vendor left its reason


def test_conformance_names_the_vendor_and_why_before_running():
    import subprocess
    import sys

    env = {**os.environ, "GEMS_VENDOR": "interpreter"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "conformance", "--quick", "--ops", "abs", "--co"],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    header = proc.stdout.split("collected", 1)[0]
    assert "gems conformance: vendor interpreter (the GEMS_VENDOR environment variable), device cpu, quick mode" \
        in header, proc.stdout[:2000]


def test_a_partial_conformance_run_keeps_the_whole_suites_results_and_an_empty_selection_is_refused():
    import subprocess
    import sys

    env = {**os.environ, "GEMS_VENDOR": "interpreter"}
    run = lambda *argv: subprocess.run([sys.executable, "-m", "pytest", "conformance", "--quick", "-q", *argv],  # noqa: E731
                                       cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    proc = run("--ops", "neg", "--dtypes", "float32")
    assert proc.returncode == 0 and "runs/interpreter/partial/conformance.json" in proc.stdout, proc.stdout[-2000:]
    proc = run("--ops", "")
    assert proc.returncode != 0 and "--ops: empty selection" in proc.stderr + proc.stdout


def test_vendor_is_fixed_once_chosen():
    active = gems.vendor().name
    other = "nvidia" if active != "nvidia" else "interpreter"
    with pytest.raises(VendorError, match="already active"):
        gems.select_vendor(other)


# tune_configs.yaml: tests/test_tune_configs.py


def test_broken_heuristics_module_names_the_file(tmp_path):
    path = tmp_path / "heuristics_config_utils.py"
    path.write_text("import no_such_module_here\n")
    with pytest.raises(VendorError) as err:
        configs.load_heuristics(path)
    assert str(path) in str(err.value)


def test_family_heuristics_files_join_the_vendor_table_and_a_key_defined_twice_names_both(tmp_path):
    (tmp_path / "heuristics").mkdir()
    (tmp_path / "heuristics" / "norm.py").write_text("HEURISTICS_CONFIGS = {'norm': {'BLOCK': lambda a: 8}}\n")
    (tmp_path / "heuristics_config_utils.py").write_text("HEURISTICS_CONFIGS = {'mm': {'BLOCK': lambda a: 4}}\n")
    table = configs.load_vendor_heuristics(tmp_path)
    assert table["norm"]["BLOCK"](None) == 8 and table["mm"]["BLOCK"](None) == 4
    (tmp_path / "heuristics" / "other.py").write_text("HEURISTICS_CONFIGS = {'mm': {'BLOCK': lambda a: 2}}\n")
    with pytest.raises(VendorError, match="'mm' is defined in both") as err:
        configs.load_vendor_heuristics(tmp_path)
    assert "other.py" in str(err.value) and "heuristics_config_utils.py" in str(err.value)


def test_heuristics_fall_back_along_the_base_chain():
    backend = gems.vendor()
    assert callable(backend.heuristics("pointwise")["BLOCK"])
    with pytest.raises(VendorError, match="no heuristics for key 'no_such_key'"):
        backend.heuristics("no_such_key")


# A vendor's heuristics file, and what its check at activation says: (file text, line, words).
BAD_HEURISTICS = {
    "syntax error": ("HEURISTICS_CONFIGS = {\n    'pointwise': {'BLOCK': lambda args: 1024,\n}\n", 1,
                     "syntax error: '{' was never closed"),
    "missing num_warps": ("HEURISTICS_CONFIGS = {\n    'pointwise': {'BLOCK': lambda args: 1024},\n}\n", 2,
                          "key 'pointwise' lacks num_warps: a vendor's key replaces its base's whole"),
    "non-power-of-two block": ("HEURISTICS_CONFIGS = {\n    'pointwise': {\n        'BLOCK': lambda args: 1000,\n"
                               "        'num_warps': lambda args: 4},\n}\n", 3,
                               "rule 'BLOCK' returned 1000 for args {'n_elements': 1, 'itemsize': 1}: BLOCK must be a "
                               "positive power-of-two integer"),
    "a rule that raises": ("def _block(args):\n    return 1024 if args['n_elems'] < 8 else 2048\n\n\n"
                           "HEURISTICS_CONFIGS = {'pointwise': {'BLOCK': _block, 'num_warps': lambda args: 4}}\n", 1,
                           "rule 'BLOCK' raised KeyError('n_elems') for args {'n_elements': 1, 'itemsize': 1}: a rule "
                           "must handle every call the kernels make (args n_elements, itemsize)"),
    "unknown key": ("HEURISTICS_CONFIGS = {\n    'pointwize': {'BLOCK': lambda a: 1024, 'num_warps': lambda a: 4},"
                    "\n}\n", 2, "unknown heuristics key 'pointwize' (did you mean 'pointwise'?)"),
    "unknown name": ("HEURISTICS_CONFIGS = {'pointwise': {'BLOCK': lambda a: 1024, 'num_warps': lambda a: 4,\n"
                     "                                   'num_warp': lambda a: 4}}\n", 1,
                     "key 'pointwise': unknown name 'num_warp'; its kernels read BLOCK, num_warps"),
    "rules out of order": ("HEURISTICS_CONFIGS = {'softmax': {\n    'BLOCK_K': lambda a: 2 * a['BLOCK_M'],\n"
                           "    'BLOCK_M': lambda a: 2, 'num_warps': lambda a: 4}}\n", 2,
                           "rules run in the order written, each seeing the values chosen before it: put 'BLOCK_M' "
                           "before 'BLOCK_K'"),
    "a value that is no rule": ("HEURISTICS_CONFIGS = {'pointwise': {'BLOCK': 1024, 'num_warps': lambda a: 4}}\n", 1,
                                "'BLOCK' is 1024, not a function; write it as a rule of the kernel arguments, e.g. "
                                "`lambda args: 1024`"),
}


def _interpreter_chain():
    backend = selection.load_backend("interpreter")
    return [("interpreter", *configs.read_vendor_heuristics(backend.directory))]


@pytest.mark.parametrize("case", list(BAD_HEURISTICS))
def test_a_bad_heuristics_file_is_named_with_its_line_key_and_fix(tmp_path, case):
    text, line, words = BAD_HEURISTICS[case]
    path = tmp_path / "heuristics_config_utils.py"
    path.write_text(text)
    with pytest.raises(VendorError) as err:
        configs.check_heuristics([("acme", *configs.read_vendor_heuristics(tmp_path)), *_interpreter_chain()])
    assert str(err.value).startswith(f"{path}:{line}: ") and words in str(err.value), str(err.value)


def test_family_heuristics_files_are_checked_too_and_every_key_must_resolve(tmp_path):
    (tmp_path / "heuristics").mkdir()
    path = tmp_path / "heuristics" / "reduction.py"
    path.write_text("HEURISTICS_CONFIGS = {'reduction': {'BLOCK_M': lambda a: 1, 'BLOCK_K': lambda a: 3,"
                    " 'num_warps': lambda a: 1}}\n")
    with pytest.raises(VendorError, match=r"rule 'BLOCK_K' returned 3 .*BLOCK_K must be a positive power-of") as err:
        configs.check_heuristics([("acme", *configs.read_vendor_heuristics(tmp_path)), *_interpreter_chain()])
    assert str(err.value).startswith(f"{path}:1: key 'reduction'")
    path.unlink()
    with pytest.raises(VendorError, match="no heuristics for key 'pointwise'.* in the vendors acme: define it"):
        configs.check_heuristics([("acme", *configs.read_vendor_heuristics(tmp_path))])


@pytest.mark.parametrize("vendor", ["interpreter", "nvidia", "sim"])
def test_shipped_heuristics_pass_their_check(vendor, monkeypatch):
    chain = [(b.name, *configs.read_vendor_heuristics(b.directory)) for b in selection.load_backend(vendor).chain()]
    for _, table, _ in chain:  # nvidia's rules ask the device for its SM count: an H100's, here
        for rules in table.values():
            for rule in rules.values():
                if "_sm_count" in rule.__globals__:
                    monkeypatch.setitem(rule.__globals__, "_sm_count", lambda: 132)
                if "multiprocessors" in rule.__globals__:
                    monkeypatch.setitem(rule.__globals__, "multiprocessors", lambda device: 132)
    configs.check_heuristics(chain)


def test_activation_refuses_bad_heuristics_before_any_kernel(tmp_path, monkeypatch):
    (tmp_path / "heuristics_config_utils.py").write_text(BAD_HEURISTICS["non-power-of-two block"][0])
    base = selection.load_backend("interpreter")
    info = VendorInfoBase("own", "cpu", None, "CPU")
    fake = selection.Backend("own", info, base.capabilities, tmp_path, base, None)
    monkeypatch.setattr(selection, "_current", None)
    monkeypatch.setattr(selection, "load_backend", lambda name: fake)
    with pytest.raises(VendorError, match="rule 'BLOCK' returned 1000"):
        selection.select("own")
    assert selection._current is None  # nothing was activated
    selection.select("own", explicit=False)  # listing the vendor's operators runs no rule (they may need the device)
    assert selection._current is fake


@pytest.mark.xdist_group("scaffold")
def test_the_clis_refuse_a_vendor_with_bad_heuristics(tmp_path):
    import shutil
    import subprocess
    import sys

    copy = tmp_path / "gems-copy"
    shutil.copytree(REPO / "gems", copy / "gems", ignore=shutil.ignore_patterns("__pycache__"))
    vendor = copy / "gems" / "runtime" / "backend" / "_rough"
    vendor.mkdir()
    (vendor / "__init__.py").write_text('from gems.runtime.vendor import VendorInfoBase\n\n'
                                        'base_vendor = "interpreter"\n'
                                        'vendor_info = VendorInfoBase("rough", "cpu", None, "CPU")\n')
    (vendor / "heuristics_config_utils.py").write_text(BAD_HEURISTICS["unknown key"][0])
    env = {k: v for k, v in os.environ.items() if k != "GEMS_VENDOR" and not k.startswith("PYTEST_")}
    env["PYTHONPATH"] = str(copy)
    words = f"{vendor / 'heuristics_config_utils.py'}:2: unknown heuristics key 'pointwize' (did you mean 'pointwise'?)"
    (tmp_path / "script.py").write_text("print('ran')\n")
    for argv in (["gems.perf", "--vendor", "rough", "--quick", "--ops", "add", "--out", str(tmp_path / "perf")],
                 ["gems.tracing", "--vendor", "rough", str(tmp_path / "script.py")]):
        proc = subprocess.run([sys.executable, "-m", *argv], cwd=copy, env=env, capture_output=True, text=True,
                              timeout=300)
        assert proc.returncode == 2 and words in proc.stderr and "Traceback" not in proc.stderr, proc.stderr[-2000:]


def test_use_gems_runs_the_triton_kernel_then_aten_again(monkeypatch):
    launches = []
    original_launch = launch.Launcher._launch  # every launch, by __call__ or flat, passes here

    def counting_launch(self, *args):
        launches.append(self.kernel)
        return original_launch(self, *args)

    monkeypatch.setattr(launch.Launcher, "_launch", counting_launch)
    gems.disable()
    x = torch.randn(33, 5)
    expected = torch.exp(x)  # ATen
    assert launches == []
    with gems.use_gems():
        before = registration.gems_calls["exp"]
        got = torch.exp(x)
        assert registration.gems_calls["exp"] == before + 1
        assert len(launches) == 1  # exactly one Triton kernel launch served torch.exp
    torch.testing.assert_close(got, expected)
    assert "exp" not in registration.registered_ops()
    torch.exp(x)
    assert len(launches) == 1  # ATen again: no Triton launch


def test_unhandled_input_falls_back_to_aten_and_is_counted():
    x = torch.randn(8, dtype=torch.complex64)
    with gems.use_gems(include=["exp"]):
        got = torch.exp(x)
    with gems.aten_only():
        expected = torch.exp(x)
    torch.testing.assert_close(got, expected)
    fallbacks = [(o, why) for (o, why) in registration.fallback_calls if o == "exp"]
    assert fallbacks and "complex" in fallbacks[0][1]


def test_include_exclude_and_unknown_names():
    with gems.use_gems(include=["add", "exp"], exclude=["add.out"]):
        assert set(registration.registered_ops()) == {"add.Tensor", "add_.Tensor", "add.Scalar", "add_.Scalar", "exp",
                                                      "exp_", "exp.out"}
    with pytest.raises(ValueError, match="no_such_op"):
        gems.enable(include=["no_such_op"])
    with gems.use_gems(include="exp"):  # one name as a string, not its letters
        assert set(registration.registered_ops()) == {"exp", "exp_", "exp.out"}


def test_an_unknown_gems_vendor_variable_is_named_as_such():
    import subprocess
    import sys

    env = {**os.environ, "GEMS_VENDOR": "nope"}
    for command in (["-m", "gems.perf", "--quick"], ["-m", "pytest", "conformance", "--quick", "--ops", "abs", "--co"]):
        proc = subprocess.run([sys.executable, *command], cwd=REPO, env=env, capture_output=True, text=True,
                              timeout=600)
        assert proc.returncode != 0
        text = proc.stderr + proc.stdout
        assert "the GEMS_VENDOR environment variable: unknown vendor 'nope'" in text and "--vendor:" not in text


def test_the_registry_helper_has_a_usage_line_and_clear_errors():
    import subprocess
    import sys

    for argv, status, words in ((["--help"], 0, "usage: python -m gems.gate.registry VENDOR"),
                                ([], 2, "usage:"), (["nope"], 2, "error: unknown vendor 'nope'")):
        proc = subprocess.run([sys.executable, "-m", "gems.gate.registry", *argv], cwd=REPO, capture_output=True,
                              text=True, timeout=300)
        assert proc.returncode == status and words in proc.stderr and "Traceback" not in proc.stderr


def test_vendor_overrides_replace_and_unused_ops_are_left_to_aten(monkeypatch):
    backend = gems.vendor()

    def doubled_neg(x):
        return torch.zeros_like(x) - 2 * x

    monkeypatch.setattr(type(backend), "specific_ops",
                        lambda self: {"neg": (doubled_neg, gems.Autograd.disable)})
    monkeypatch.setattr(type(backend), "unused_ops", lambda self: {"abs"})
    gems.enable()
    registered = set(gems.registered_ops())
    assert "abs" not in registered and "neg" in registered
    x = torch.ones(4)
    assert torch.equal(torch.neg(x), torch.full((4,), -2.0))


def test_wrapped_numbers_reach_aten_with_their_promotion():
    # A fallback hands ATen a number where the schema wants a tensor; promotion must not change.
    x = torch.arange(6, dtype=torch.int32).reshape(2, 3)
    with gems.use_gems(include=["add"]):
        registration._aten_only_depth += 1  # force the original kernel for this call
        try:
            result = torch.add(x, 2.5)
        finally:
            registration._aten_only_depth -= 1
    assert result.dtype == torch.float32
    torch.testing.assert_close(result, x.float() + 2.5)


@pytest.mark.parametrize("value, key", [(1, 1), (16, (True, True)), (17, (False, True)),
                                        (2**40, (True, False)), (2.0, float), (True, bool)])
def test_scalar_specialization_key(value, key):
    """What Triton specializes an integer on: the value 1, divisibility by 16, the 32/64-bit range."""
    assert launch._make_prepare_function(_kernel_with_params("n"))(value) == ((key,), (value,))


def test_launch_helpers_match_triton():
    import triton

    for n in (1, 2, 3, 1000, 1024, 1025):
        assert launch.next_power_of_2(n) == triton.next_power_of_2(n)
        assert launch.cdiv(n, 128) == triton.cdiv(n, 128)


def _kernel_with_params(*names):
    """What the launcher reads of a JITFunction: its parameters (upper case: constexpr)."""
    import types

    return types.SimpleNamespace(params=[types.SimpleNamespace(name=n, is_constexpr=n.isupper()) for n in names])


def test_prepared_launch_passes_data_pointers_and_keys_on_alignment():
    import triton.language as tl

    prepare = launch._make_prepare_function(_kernel_with_params("x_ptr", "out_ptr", "n", "COMPUTE", "BLOCK"))
    x, out = torch.zeros(8), torch.zeros(9)
    key, args = prepare(x, out, 17, tl.float32, 64)
    assert args == (x.data_ptr(), out.data_ptr(), 17, tl.float32, 64)
    assert key == (torch.float32, True, torch.float32, True, (False, True), "fp32", 64)
    misaligned_key, _ = prepare(x, out[1:], 17, tl.float32, 64)  # 4 bytes in: not 16-byte aligned
    assert misaligned_key != key


def test_a_composite_overload_under_the_backend_key_is_refused():
    with pytest.raises(ValueError, match="resolve_conj is CompositeImplicitAutograd.*Autograd.enable"):
        registration.check_autograd_placement("resolve_conj", gems.Autograd.disable)
    registration.check_autograd_placement("resolve_conj", gems.Autograd.enable)
    registration.check_autograd_placement("add.Tensor", gems.Autograd.disable)  # has an autograd kernel


def test_no_registration_cuts_autograd_off():
    """Every declared overload registers (a misplaced composite raises), and backward through composites that
    gems serves or leaves to ATen gives no 'autograd kernel was not registered' warning."""
    import warnings

    gems.enable()
    for overload, (_, autograd, _) in registration.snapshot().items():
        registration.check_autograd_placement(overload, autograd)
    x = torch.randn(5, requires_grad=True)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*autograd kernel was not registered")
        torch.isfinite(x)
        torch.isclose(x, x)
        (torch.resolve_conj(x) * torch.resolve_neg(x)).sum().backward()
    assert x.grad is not None


def test_a_named_source_commit_wins_over_the_copys_git(monkeypatch):
    """A device machine runs a copy of the tree whose .git may be older: the caller names the commit."""
    from gems.report import environment

    monkeypatch.delenv("GEMS_SOURCE_COMMIT", raising=False)
    from_git = environment.source_commit()
    assert from_git is None or len(from_git.removesuffix("+dirty")) == 10
    monkeypatch.setenv("GEMS_SOURCE_COMMIT", "0123456789")
    assert environment.source_commit() == "0123456789"
