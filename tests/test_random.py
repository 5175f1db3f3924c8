"""Random operators (gems/ops/random) and their statistical verdicts (gems.testing.draws): the laws accept
ATen's own draws and refuse wrong ones, conformance fails realistic bugs (a generator that does not
advance, a draw that does not repeat under its seed, a wrong law, writes outside a view, another layout),
the Philox counter layout is cuRAND's, and the generator semantics hold. CUDA-only checks (the CUDA
generator's offset, graph capture of a dropout) skip without a GPU and run on the lead's GPU machine."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import types
from pathlib import Path

import pytest
import torch

import gems
from gems import ops
from gems.ops.random import distributions, native_dropout, philox
from gems.runtime import registration
from gems.testing import draws
from gems.testing.cases import Case
from gems.testing.conformance import run_case
from gems.testing.samples_random_integers import permutation_law
from gems.testing.samples_random_nn import dropout_law

REPO = Path(__file__).resolve().parents[1]
# The conformance verdict tests run their cases on the CPU through the interpreter vendor (as CI does); with another
# vendor selected (GEMS_VENDOR=nvidia on the GPU run) gems serves CUDA tensors only and those cases would run ATen.
INTERPRETER = pytest.mark.skipif(os.environ.get("GEMS_VENDOR", "interpreter") != "interpreter",
                                 reason="runs conformance cases on the CPU interpreter vendor")
CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device (the lead's GPU run)")
# Decided before any test enables gems (native_status() says "not started" until then): a compiler builds it.
NATIVE = pytest.mark.skipif(shutil.which(os.environ.get("CXX", "c++")) is None,
                            reason="no C++ compiler: the native layer cannot be built here")


@pytest.fixture(autouse=True)
def _restore_registration():
    previous = registration.snapshot()
    yield
    registration.apply(previous, gems.vendor().dispatch_key)


def _judge(law, *args):
    verdict = draws.Verdict()
    law(verdict, *args)
    return verdict.message()


# --------------------------------------------------------------------------- the laws


@pytest.mark.parametrize("seed", range(5))
def test_the_laws_accept_atens_own_draws(seed):
    # ATen's draws whatever an earlier test left registered (gems' interpreted draws took ~40 s a seed here).
    with gems.aten_only():
        _atens_draws_pass_the_laws(seed)


def _atens_draws_pass_the_laws(seed):
    torch.manual_seed(seed)
    n = 1 << 14
    for dtype in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        assert not _judge(draws.uniform_law, torch.empty(n, dtype=dtype).uniform_(-2, 3), -2.0, 3.0)
        assert not _judge(draws.normal_law, torch.empty(n, dtype=dtype).normal_(1.5, 0.5), 1.5, 0.5)
        assert not _judge(draws.exponential_law, torch.empty(n, dtype=dtype).exponential_(2.0), 2.0)
    p = torch.rand(n, dtype=torch.float64)
    assert not _judge(draws.bernoulli_law, torch.bernoulli(p), p)
    assert not _judge(draws.integer_law, torch.randint(-5, 9, (n,)), -5, 9)
    assert not _judge(permutation_law, torch.randperm(4096))
    x = torch.randn(n)
    out, mask = torch.native_dropout(x, 0.3, True)
    assert not _judge(dropout_law, x, out, mask, 0.3)


@pytest.mark.parametrize("law, values, params, expected", [
    (draws.uniform_law, lambda: torch.rand(8192) * 0.9, (0.0, 1.0), "KS"),
    (draws.uniform_law, lambda: torch.rand(8192) + 1, (0.0, 1.0), "outside"),
    (draws.normal_law, lambda: torch.randn(8192) * 1.2, (0.0, 1.0), "standardized"),
    (draws.normal_law, lambda: torch.randn(8192) + 0.1, (0.0, 1.0), "standardized mean"),
    (draws.exponential_law, lambda: torch.empty(8192).exponential_(1.25), (1.0,), "mean"),
    (draws.bernoulli_law, lambda: torch.bernoulli(torch.full((8192,), 0.45)), (0.5,), "mean"),
    (draws.integer_law, lambda: torch.randint(0, 9, (8192,)), (0, 8), "outside"),
    (draws.integer_law, lambda: torch.randint(0, 7, (8192,)), (0, 8), "KS"),
    (permutation_law, lambda: torch.arange(4096), (), "fixed points"),
    (permutation_law, lambda: torch.arange(4096).flip(0), (), "first half"),
])
def test_the_laws_refuse_wrong_draws(law, values, params, expected):
    torch.manual_seed(0)
    message = _judge(law, values(), *params)
    assert expected in message, message


def test_dropout_law_refuses_a_wrong_scale_and_a_wrong_zero():
    torch.manual_seed(0)
    x = torch.randn(8192)
    out, mask = torch.native_dropout(x, 0.25, True)
    assert "kept values" in _judge(dropout_law, x, out * 1.01, mask, 0.25)
    assert "dropped values" in _judge(dropout_law, x, out.abs(), mask, 0.25)  # +0.0 where x * 0 is -0.0


def test_a_case_runs_at_most_eight_tests_each_at_its_share_of_the_rate():
    verdict = draws.Verdict()
    assert [verdict.alpha() for _ in range(draws.TESTS_PER_CASE)] == [1e-6 / 8] * 8
    with pytest.raises(AssertionError):
        verdict.alpha()
    # DKW with Massart's constant: 2 exp(-2 n eps^2) = alpha.
    eps = draws.dkw_epsilon(8192, draws.ALPHA)
    assert abs(2 * torch.exp(torch.tensor(-2 * 8192 * eps**2, dtype=torch.float64)).item() - draws.ALPHA) < 1e-12


# --------------------------------------------------------------------------- conformance verdicts


def _serve(overload, fn, owner):
    gems.enable()
    table = registration.snapshot()
    table[overload] = (fn, table[overload][1], owner)
    registration.apply(table, gems.vendor().dispatch_key)


def _replace_key(monkeypatch, philox_key):
    """The draws' key function replaced, and the native layer's plans forgotten: a replay of a plan recorded
    before takes its keys from the real one."""
    from gems import native

    monkeypatch.setattr(distributions, "philox_key", philox_key)
    native.invalidate()


def _run(name, variant, dtype=torch.float32):
    return run_case(ops.get(name), Case(name, dtype, variant), "cpu", True, "interpreter", {}, repro="pytest ...")


@INTERPRETER
def test_gems_random_operators_pass_with_the_reason_statistical():
    gems.enable()
    for name, variant in (("uniform_", "contiguous"), ("native_dropout", "contiguous"), ("multinomial", "one-sample")):
        result = _run(name, variant)
        assert result.status == "pass" and result.rule == "statistical", (name, result.message)


@INTERPRETER
def test_a_generator_that_does_not_advance_fails(monkeypatch):
    gems.enable()
    _replace_key(monkeypatch, lambda device, generator: philox.PhiloxKey(5, 0))
    result = _run("uniform_", "contiguous")
    assert result.status == "fail" and "did not advance" in result.message


@INTERPRETER
def test_a_draw_that_ignores_the_seed_fails(monkeypatch):
    gems.enable()
    keys = iter(range(1, 100))

    def fresh_key(device, generator):  # advances the generator, but its key does not come from it
        with gems.aten_only():
            torch.empty(()).random_()
        return philox.PhiloxKey(next(keys), 0)

    _replace_key(monkeypatch, fresh_key)
    result = _run("uniform_", "contiguous")
    # Either check catches it, whichever runs first in this process: the warm call (same seed, other numbers)
    # or the next call (the generator it was given did not advance).
    assert result.status == "fail" and ("warm (second) call differs" in result.message
                                        or "did not advance the random generator's state" in result.message)


@INTERPRETER
def test_a_wrong_law_fails():
    def narrow(self, from_=0.0, to=1.0, *, generator=None):
        return distributions.draw(self, distributions.UNIFORM, generator, from_, from_ + (to - from_) * 0.9)

    _serve("uniform_", narrow, "uniform_")
    result = _run("uniform_", "contiguous")
    assert result.status == "fail" and "uniform" in result.message


@INTERPRETER
def test_a_draw_outside_its_view_fails():
    def everywhere(self, from_=0.0, to=1.0, *, generator=None):
        base = self.as_strided((self.untyped_storage().nbytes() // self.element_size(),), (1,), 0)
        distributions.draw(base, distributions.UNIFORM, generator, from_, to)
        return self

    _serve("uniform_", everywhere, "uniform_")
    result = _run("uniform_", "noncontiguous-strided")
    assert result.status == "fail" and "outside the view" in result.message


@INTERPRETER
def test_another_layout_than_atens_fails():
    real = ops.get("rand_like").impls["rand_like"]

    def contiguous(self, **options):
        return real(self.contiguous(), **options)

    _serve("rand_like", contiguous, "rand_like")
    result = _run("rand_like", "noncontiguous-transposed")
    assert result.status == "fail" and "strides" in result.message


@INTERPRETER
def test_a_dropout_that_ignores_p_fails():
    real = ops.get("native_dropout").impls["native_dropout"]
    _serve("native_dropout", lambda input, p, train: real(input, 0.5, train), "native_dropout")
    result = _run("native_dropout", "contiguous")
    assert result.status == "fail" and "keep ratio" in result.message


# --------------------------------------------------------------------------- Philox and the generator


def _philox_reference(seed: int, counter: tuple) -> list[int]:
    """Philox4x32-10 (Salmon et al., cuRAND's and Triton's), in Python."""
    key = [seed & 0xFFFFFFFF, (seed >> 32) & 0xFFFFFFFF]
    c = list(counter)
    for _ in range(10):
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [(p1 >> 32) ^ c[1] ^ key[0], p1 & 0xFFFFFFFF, (p0 >> 32) ^ c[3] ^ key[1], p0 & 0xFFFFFFFF]
        key = [(key[0] + 0x9E3779B9) & 0xFFFFFFFF, (key[1] + 0xBB67AE85) & 0xFFFFFFFF]
    return c


def _lane_words(seed: int, offset: int, n: int) -> list[int]:
    """Word k of Philox at counter (offset // 4, lane) for element 4 * lane + k, for the first n elements."""
    counter = offset // 4
    words = []
    for lane in range((n + 3) // 4):
        words += _philox_reference(seed, (counter & 0xFFFFFFFF, counter >> 32, lane & 0xFFFFFFFF, lane >> 32))
    return words[:n]


def _expected_uniforms(seed: int, offset: int, n: int) -> torch.Tensor:
    """Element i = the top 24 bits of its word (_lane_words) as a fraction of 2^24."""
    return torch.tensor([(word >> 8) * 2.0**-24 for word in _lane_words(seed, offset, n)], dtype=torch.float32)


def _expected_normals(seed: int, offset: int, n: int) -> torch.Tensor:
    """Box-Muller in float64 of the words' top 24 bits: elements 2i and 2i + 1 from words 2i and 2i + 1 (u0, u1)
    are sqrt(-2 ln(1 - u0)) times cos and sin of 2 pi u1."""
    u = _expected_uniforms(seed, offset, n + n % 2).double().view(-1, 2)
    radius, angle = (-2 * torch.log1p(-u[:, 0])).sqrt(), 2 * torch.pi * u[:, 1]
    return torch.stack([radius * angle.cos(), radius * angle.sin()], 1).flatten()[:n]


def test_each_value_is_a_word_of_its_lanes_philox_block_at_the_offsets_counter(monkeypatch):
    seed, offset = 0x1234_5678_9ABC_DEF0, 40
    _replace_key(monkeypatch, lambda device, generator: philox.PhiloxKey(seed, offset))
    out = distributions.draw(torch.empty(37), distributions.UNIFORM, None, 0.0, 1.0)
    assert torch.equal(out, _expected_uniforms(seed, offset, 37))


def test_fp32_normals_are_the_box_muller_values_of_their_words(monkeypatch):
    """The polynomial logarithm, cosine and sine (philox.normal_pair) give the float64 Box-Muller values of
    the same words to fp32 accuracy, over a draw large enough to cover every quarter turn and the tails."""
    seed, offset = 0x0F1E_2D3C_4B5A_6978, 12
    _replace_key(monkeypatch, lambda device, generator: philox.PhiloxKey(seed, offset))
    out = distributions.draw(torch.empty(4001), distributions.NORMAL, None, 0.0, 1.0)
    expected = _expected_normals(seed, offset, 4001)
    assert (out.double() - expected).abs().max() <= 4e-7 * expected.abs().clamp(min=1).max()
    assert expected.abs().max() > 3.5  # the tails are in the sample


@pytest.mark.parametrize("lanes_per_thread", [1, 4])
def test_exponentials_are_the_guarded_logarithms_of_their_words_at_any_lanes_per_thread(monkeypatch,
                                                                                       lanes_per_thread):
    """-ln(1 - u) / lambda of each element's word, ln(1 - u) = -2^-24 for the two top-24-bit values nearest 1
    (ATen's guard), whichever the Philox calls per thread: small programs (32-value blocks) make several of them
    and a partial last one, so a lane placed in the wrong program or element would show."""
    seed, offset, lambd, n = 0x5A5A_0F0F_1234_4321, 20, 2.5, 1203
    _replace_key(monkeypatch, lambda device, generator: philox.PhiloxKey(seed, offset))
    monkeypatch.setattr(philox, "pointwise_config", lambda numel, itemsize: (32, 1))
    monkeypatch.setattr(distributions, "EXPONENTIAL_LANES_PER_THREAD", lanes_per_thread)
    monkeypatch.setattr(distributions, "EXPONENTIAL_WIDE_FROM", 1)
    assert philox.lane_grid(n, 4, 4, lanes_per_thread)[1] > 1
    out = distributions.draw(torch.empty(n), distributions.EXPONENTIAL, None, lambd)
    top = torch.tensor([word >> 8 for word in _lane_words(seed, offset, n)], dtype=torch.float64)
    log_v = torch.where(top <= 1, -(2.0**-24), torch.log1p(-top * 2.0**-24))
    expected = -log_v / lambd
    assert (out.double() - expected).abs().max() <= 2e-7 * expected.clamp(min=1).max()


def test_a_dropout_keeps_the_elements_whose_uniform_is_below_one_minus_p(monkeypatch):
    seed, offset, p = 0x7766_5544_3322_1100, 8, 0.3
    monkeypatch.setattr(native_dropout, "philox_key", lambda device, generator: philox.PhiloxKey(seed, offset))
    x = torch.randn(999)
    out, mask = native_dropout.native_dropout(x, p, True)
    keep = _expected_uniforms(seed, offset, 999).double() < 1 - p
    assert torch.equal(mask, keep) and torch.equal(out, x * keep * (1 / (1 - p)))


def test_the_same_seed_gives_the_same_numbers_and_the_next_call_others():
    gems.enable()
    for draw in (lambda: torch.rand(1000), lambda: torch.randn(1000, dtype=torch.float64),
                 lambda: torch.native_dropout(torch.ones(1000), 0.5, True)[1], lambda: torch.randperm(500)):
        torch.manual_seed(7)
        first, second = draw(), draw()
        torch.manual_seed(7)
        assert torch.equal(draw(), first) and not torch.equal(first, second)


def test_a_generator_argument_is_drawn_from_and_the_default_one_is_left_alone():
    gems.enable()
    default = torch.default_generator.get_state()
    mine = torch.Generator().manual_seed(3)
    a = torch.rand(100, generator=mine)
    assert torch.equal(torch.default_generator.get_state(), default)
    assert torch.equal(torch.rand(100, generator=torch.Generator().manual_seed(3)), a)
    cuda_generator = types.SimpleNamespace(device=torch.device("cuda"))  # no CUDA here: its device is enough
    with pytest.raises(RuntimeError, match="Expected a 'cpu' device type for generator but found 'cuda'"):
        philox.checked_generator(torch.device("cpu"), cuda_generator)


def test_one_compiled_kernel_serves_every_seed_and_offset():
    """Seeds, offsets and the graph flag are typed, unspecialized arguments: neither Triton nor gems'
    launcher keys a kernel by their values, so a new value never compiles (not during graph capture)."""
    from gems.runtime import launch

    params = [types.SimpleNamespace(name=name, is_constexpr=False, do_not_specialize=True, annotation_type="i64")
              for name in ("seed", "offset")]
    prepare = launch._make_prepare_function(types.SimpleNamespace(params=params))
    assert prepare(1, 16)[0] == prepare(2**40 + 3, 7)[0] == ()


def _next_cpu_keys(n: int) -> list[int]:
    """The Philox keys the next n calls take from the CPU generator (one 63-bit draw each); leaves it as it was."""
    state = torch.default_generator.get_state()
    with gems.aten_only():
        keys = [torch.empty((), dtype=torch.int64).random_().item() for _ in range(n)]
    torch.default_generator.set_state(state)
    return keys


@NATIVE
def test_warm_random_calls_replay_natively_each_with_the_next_key():
    """A replayed draw takes its key from the generator as the Python path does: the i-th call gets the i-th key,
    so the numbers are those of the reference Philox at that key, and a reseeded generator repeats them."""
    from gems import native

    gems.enable()
    torch.manual_seed(3)
    torch.rand(37)  # the signature's first call: recorded
    before = native.call_counts().get("rand", 0)
    keys = _next_cpu_keys(3)
    outs = [torch.rand(37) for _ in keys]
    assert native.call_counts().get("rand", 0) == before + 3
    for key, out in zip(keys, outs):
        assert torch.equal(out, _expected_uniforms(key, 0, 37))
    for draw, overload in ((lambda: torch.native_dropout(torch.ones(999), 0.5, True)[1], "native_dropout"),
                           (lambda: torch.empty(300, dtype=torch.float64).normal_(), "normal_")):
        draw()
        before = native.call_counts().get(overload, 0)
        torch.manual_seed(8)
        first = [draw() for _ in range(3)]
        torch.manual_seed(8)
        again = [draw() for _ in range(3)]
        assert native.call_counts().get(overload, 0) == before + 6
        assert all(torch.equal(a, b) for a, b in zip(first, again)) and not torch.equal(first[0], first[1])


def test_a_call_that_moves_the_generator_otherwise_stays_in_python():
    """A plan replays only the keys the call took through philox_key: any other draw from a generator (here one
    more 63-bit draw) would be repeated by a replay, so the signature stays in Python and says why."""
    from gems.native import record

    gems.enable()
    rand = ops.get("rand").impls["rand"]

    def rand_drawing_twice(size, **options):
        with gems.aten_only():
            torch.empty((), dtype=torch.int64).random_()
        return rand(size, **options)

    _serve("rand", rand_drawing_twice, "rand")
    torch.rand(41)
    torch.rand(41)
    assert "moved a random generator other than by the Philox keys" in record.python_reasons["rand"]


@CUDA
def test_cuda_offsets_advance_by_four_per_call_and_match_the_reference():
    gems.enable()
    gen = torch.cuda.default_generators[torch.cuda.current_device()]
    torch.cuda.manual_seed(11)
    gen.set_offset(8)
    out = torch.rand(37, device="cuda")
    assert gen.get_offset() == 8 + philox.WORDS_PER_CALL
    assert torch.equal(out.cpu(), _expected_uniforms(gen.initial_seed(), 8, 37))


@CUDA
def test_warm_cuda_draws_replay_natively_each_with_the_next_offset():
    from gems import native

    gems.enable()
    gen = torch.cuda.default_generators[torch.cuda.current_device()]
    torch.cuda.manual_seed(11)
    torch.rand(37, device="cuda")  # recorded
    before = native.call_counts().get("rand", 0)
    for _ in range(3):
        start = gen.get_offset()
        out = torch.rand(37, device="cuda")
        assert gen.get_offset() == start + philox.WORDS_PER_CALL
        assert torch.equal(out.cpu(), _expected_uniforms(gen.initial_seed(), start, 37))
    assert native.call_counts().get("rand", 0) == before + 3


@CUDA
def test_cuda_graph_capture_of_a_dropout_draws_anew_on_each_replay():
    """As ATen's: each replay advances the generator by the graph's offsets and gives new masks; a replay
    gives what an eager call from the same generator state gives."""
    gems.enable()
    gen = torch.cuda.default_generators[torch.cuda.current_device()]
    x = torch.randn(1 << 16, device="cuda")
    torch.native_dropout(x, 0.5, True)  # compiles the kernel before capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out, mask = torch.native_dropout(x, 0.5, True)
    masks = []
    for _ in range(2):
        start = gen.get_offset()
        graph.replay()
        torch.cuda.synchronize()
        masks.append(mask.clone())
        assert gen.get_offset() == start + philox.WORDS_PER_CALL
        gen.set_offset(start)
        eager = torch.native_dropout(x, 0.5, True)[1]
        assert torch.equal(eager, masks[-1])
    assert not torch.equal(masks[0], masks[1])


# --------------------------------------------------------------------------- checks of values: host or device


def test_interpreted_kernels_check_values_on_the_host_and_raise_atens_error():
    gems.enable()
    with pytest.raises(RuntimeError, match="Expected p_in >= 0 && p_in <= 1 to be true"):
        torch.bernoulli(torch.tensor([0.5, 1.5]))
    with pytest.raises(RuntimeError, match="probability tensor contains either `inf`, `nan` or element < 0"):
        torch.multinomial(torch.tensor([[1.0, -1.0]]), 1)
    with pytest.raises(RuntimeError, match="invalid multinomial distribution"):
        torch.multinomial(torch.zeros(2, 3), 1)


@NATIVE
def test_calls_with_device_asserted_values_replay_natively(monkeypatch):
    """Where kernels are compiled, bernoulli's p and multinomial's weights are asserted on the device (no flag to
    fill, no read back): such calls only allocate and launch, so their warm calls replay natively."""
    from gems import native

    monkeypatch.setattr(philox, "_interpreted", [False])
    gems.enable()
    p, weights = torch.rand(4, 300, dtype=torch.float64), torch.rand(3, 20)
    weights[:, 5] = 0.0
    calls = {"bernoulli": lambda: torch.bernoulli(p),
             "bernoulli_.Tensor": lambda: torch.empty(4, 300, dtype=torch.float16).bernoulli_(p),
             "multinomial": lambda: torch.multinomial(weights, 4),
             "multinomial.out": lambda: torch.multinomial(weights, 6, True, out=torch.empty(3, 6, dtype=torch.int64))}
    for overload, call in calls.items():
        call()  # recorded
        before = native.call_counts().get(overload, 0)
        for _ in range(2):
            out = call()
            if overload.startswith("bernoulli"):
                assert set(out.unique().tolist()) == {0.0, 1.0}
            else:
                assert out.min() >= 0 and out.max() < 20 and not (out == 5).any()
        assert native.call_counts().get(overload, 0) == before + 2, native.python_reasons().get(overload)


@CUDA
def test_cuda_checks_of_values_never_synchronize_the_host():
    p = torch.rand(4096, device="cuda")
    weights = torch.rand(8, 100, device="cuda")
    gems.enable()
    for _ in range(2):  # the first calls compile and record
        torch.cuda.synchronize()
        torch.cuda.set_sync_debug_mode("error")
        try:
            draws_ = [torch.bernoulli(p), torch.empty(4096, device="cuda").bernoulli_(p),
                      torch.multinomial(weights, 5), torch.multinomial(weights, 5, replacement=True)]
        finally:
            torch.cuda.set_sync_debug_mode("default")
    assert set(draws_[0].unique().tolist()) <= {0.0, 1.0} and draws_[2].max() < 100


@CUDA
@pytest.mark.parametrize("call", ["torch.bernoulli(torch.tensor([0.5, 1.5], device='cuda'))",
                                  "torch.multinomial(torch.tensor([[1.0, -1.0]], device='cuda'), 1)"])
def test_cuda_values_out_of_range_are_a_device_side_assert(call):
    """As ATen's CUDA kernels; a device-side assert ends the process's CUDA context, so it runs in a child."""
    script = f"import torch, gems; gems.enable(); {call}; torch.cuda.synchronize()"
    child = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert child.returncode != 0
    assert "device-side assert" in child.stderr, child.stderr[-2000:]


# --------------------------------------------------------------------------- the simulated device

SIM_PROBE = r"""
import json, torch, gems
from gems import simdevice
gems.enable()
simdevice.reset_route_counts()
gems.reset_counts()
x = torch.rand(64, device="sim")
torch.randn(64, device="sim")
x.bernoulli_(0.5)
x.uniform_(-1, 1)
x.normal_()
x.exponential_()
torch.randint(0, 5, (64,), device="sim")
out = {"gems": gems.call_counts()["gems"], "routes": simdevice.cpu_route_counts(), "device": str(x.device)}
print(json.dumps(out))
"""


@pytest.mark.xdist_group("simdevice")
def test_gems_serves_random_numbers_on_the_simulated_device():
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env.update(PYTHONPATH=str(REPO), GEMS_VENDOR="sim")
    proc = subprocess.run([sys.executable, "-c", SIM_PROBE], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    assert found["device"] == "sim:0"
    for overload in ("rand", "randn", "bernoulli_.float", "uniform_", "normal_", "exponential_", "randint.low"):
        assert found["gems"].get(overload) == 1, (overload, found["gems"])
    assert found["routes"] == {}, found["routes"]  # no CPU route: gems drew every number
