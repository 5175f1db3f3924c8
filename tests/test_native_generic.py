"""Size-generic plans (gems/native/generic.py) on the interpreter vendor: loops whose sizes change every call
replay natively after their first calls, with ATen's answers, and a plan is never stretched over sizes where
the implementation would launch something else.

The interpreter vendor runs the same C++ keying, family lookup and formula evaluation as a GPU vendor; only
its launch primitive calls back into Python. "Python calls" below are calls the Python implementation
served (the first of a signature, of a size bucket or of a Triton specialization class).
"""

import os
import shutil

import pytest
import torch
import triton
import triton.language as tl

import gems
from gems import native
from gems.runtime import registration
from gems.runtime.launch import Launcher, cdiv

pytestmark = [
    pytest.mark.skipif(shutil.which(os.environ.get("CXX", "c++")) is None,
                       reason="no C++ compiler: the native layer cannot be built here"),
    # chosen at import, before the kernels below are defined: the interpreter vendor's Triton mode applies to them
    pytest.mark.skipif(gems.vendor().name != "interpreter",
                       reason="checks the interpreter vendor (CPU tensors, the Python launch primitive)"),
    pytest.mark.usefixtures("gems_enabled"),
]


def aten(fn, *args, **kwargs):
    with gems.aten_only():
        return fn(*args, **kwargs)


def python_calls(overload) -> int:
    return sum(native.python_calls().get(overload, {}).values())


def expected_python_calls(sizes) -> int:
    """The first size only shows the family; then the first size of each power-of-two bucket and Triton
    specialization class (a size divisible by 16, when the size is a kernel argument) records its plan."""
    return 1 + len({((n - 1).bit_length(), n % 16 == 0) for n in sizes})


def test_pointwise_over_a_growing_length_replays_natively():
    x0, y0 = torch.randn(400), torch.randn(400)
    sizes = range(20, 400, 7)
    for n in sizes:
        x, y = x0[:n], y0[:n]
        assert torch.equal(torch.mul(x, y), aten(torch.mul, x, y)), n
    # Python: 20, 27; 34, 48 (divisible by 16), 69, 132, 160, 258, 272.
    assert python_calls("mul.Tensor") == expected_python_calls(sizes) == 9
    assert native.generic_counts()["mul.Tensor"] == len(sizes) - python_calls("mul.Tensor")
    assert set(native.python_calls()["mul.Tensor"]) == {"the first call of its signature (recorded)"}


def test_attention_over_a_growing_kv_cache_replays_natively():
    torch.manual_seed(0)
    q = torch.randn(1, 2, 1, 16)
    k_cache, v_cache = torch.randn(1, 2, 40, 16), torch.randn(1, 2, 40, 16)
    sizes = range(5, 41)
    for n in sizes:  # a decode loop: one query against a key length that grows by one each step
        k, v = k_cache[:, :, :n], v_cache[:, :, :n]
        got = torch.nn.functional.scaled_dot_product_attention(q, k, v)
        torch.testing.assert_close(got, aten(torch.nn.functional.scaled_dot_product_attention, q, k, v),
                                   rtol=1e-5, atol=1e-5)
    overload = "_scaled_dot_product_flash_attention_for_cpu"
    assert python_calls(overload) == expected_python_calls(sizes) == 7  # 5, 6, 9, 16, 17, 32, 33
    assert native.generic_counts()[overload] == len(sizes) - python_calls(overload)


def test_an_overload_with_integer_results_replays_them():
    # CUDA's cuDNN attention overload (gems serves it on every device) returns max_q and max_k as SymInts: the
    # plan returns them, max_k = the key length, recomputed per call in a size-generic plan.
    op = torch.ops.aten._scaled_dot_product_cudnn_attention
    q = torch.randn(1, 2, 1, 16)
    k_cache, v_cache = torch.randn(1, 2, 24, 16), torch.randn(1, 2, 24, 16)
    for n in range(5, 25):
        k, v = k_cache[:, :, :n], v_cache[:, :, :n]
        out, lse, _, _, max_q, max_k, *_ = op(q, k, v, None, True)
        assert (max_q, max_k, tuple(lse.shape)) == (1, n, (1, 2, 1, 1))
        torch.testing.assert_close(out, aten(torch.nn.functional.scaled_dot_product_attention, q, k, v),
                                   rtol=1e-5, atol=1e-5)
    overload = "_scaled_dot_product_cudnn_attention"
    assert native.generic_counts()[overload] == 20 - python_calls(overload) >= 14


def test_a_growing_batch_replays_natively():
    w = torch.randn(32)
    batches = range(5, 30)
    def layer(x):
        return torch.softmax(x * w, dim=-1)

    for batch in batches:
        x = torch.randn(batch, 32)
        torch.testing.assert_close(layer(x), aten(layer, x), rtol=1e-6, atol=1e-6)
    # mul: 5, 6, 9, 17 (its element count, a kernel argument, is always divisible by 16); softmax also 16 (its
    # row count is one). The interpreter's blocks follow the next power of two of the size, as the buckets do (a
    # width of 24 would move them inside a bucket, where the plan then covers the sizes between the steps).
    for overload, python in (("mul.Tensor", 4), ("_softmax", expected_python_calls(batches))):
        assert python_calls(overload) == python and native.generic_counts()[overload] == len(batches) - python


def test_an_integer_argument_that_grows_replays_natively():
    for n in range(5, 40):  # arange(end): the end is an integer argument, the output's size follows it
        assert torch.equal(torch.arange(n), aten(torch.arange, n))
        assert torch.equal(torch.zeros(2, n), aten(torch.zeros, 2, n))  # a size list
    assert native.generic_counts().get("arange", 0) >= 25 and native.generic_counts().get("zeros", 0) >= 25


@pytest.fixture
def gpu_copy_block(monkeypatch):
    """cat with the GPU's copy block (1024 elements at every size; the interpreter's grows with the size up to
    65536); the plans recorded with it are dropped afterwards."""
    from gems.ops.shape import cat

    monkeypatch.setattr(cat, "pointwise_config", lambda numel, itemsize: (1024, 4))
    yield
    native.invalidate()


def test_a_kv_cache_append_replays_natively(gpu_copy_block):
    # A decode step appends the new key row and value row to their caches: torch.cat along dim -2 of [b, heads, L, d]
    # and [b, heads, 1, d], L growing by one. The value row is a transposed view of the projection (another stride on
    # its size-one dim): the two appends are one family, and each must be derived from its own kind's calls.
    gen = torch.Generator().manual_seed(0)
    keys, values = torch.randn(1, 2, 137, 64, generator=gen), torch.randn(1, 137, 2, 64, generator=gen)
    lengths = [*range(1, 10), *range(14, 19), *range(120, 137)]
    python = {"key": [], "value": []}
    for n in lengths:
        with gems.aten_only():
            appends = {"key": (keys[:, :, :n].contiguous(), keys[:, :, n:n + 1].contiguous()),
                       "value": (values[:, :n].transpose(1, 2).contiguous(), values[:, n:n + 1].transpose(1, 2))}
        for kind, (cache, row) in appends.items():
            before = python_calls("cat")
            joined = torch.cat([cache, row], dim=-2)
            assert torch.equal(joined, aten(torch.cat, [cache, row], dim=-2)), (kind, n)
            if python_calls("cat") != before:
                python[kind].append(n)
    # Python: the first call; 2, 3, 4 (below the smallest bucket); the first of each bucket: 5, 9, 17, 65..128 (at
    # 120), 129; 16, where 16 rows of 64 fill the 1024-element block (whole-row tiles become element tiles); 121,
    # where the first input's program count (16) changes Triton's specialization class.
    assert python == {kind: [1, 2, 3, 4, 5, 9, 16, 17, 120, 121, 129] for kind in python}
    assert native.generic_counts()["cat"] == 2 * (len(lengths) - 11)


def test_a_growing_python_int_replays_natively():
    # A decode step's positions: cache_position = arange(new tokens) + past length, a Python int (a wrapped number)
    # that grows by one each step. The kernel takes it as an integer argument, as it takes a size.
    with gems.aten_only():
        positions = torch.arange(2)
    steps = range(5, 80)
    for past in steps:
        assert torch.equal(positions + past, aten(torch.add, positions, past)), past
    assert python_calls("add.Tensor") == expected_python_calls(steps) == 9
    assert native.generic_counts()["add.Tensor"] == len(steps) - 9


def test_operators_of_a_growing_python_int_give_atens_answers():
    # A float operand's kernel takes the int as float64 bits, affine in it over a power-of-two bucket (where exact):
    # replayed or not, every call gives ATen's answer.
    gen = torch.Generator().manual_seed(0)
    x, i = torch.randn(37, generator=gen), torch.randint(-1000, 1000, (37,), generator=gen)
    calls = {"mul": lambda n: x * n, "bf16 add": lambda n: x.bfloat16() + n, "floor_divide": lambda n: i // n,
             "remainder": lambda n: i % n}
    for name, call in calls.items():
        for n in [*range(5, 70, 3), (1 << 24) + 1, (1 << 53) + 1]:
            assert torch.equal(call(n), aten(call, n)), (name, n)
    counts = native.generic_counts()
    assert all(counts.get(op, 0) >= 12 for op in ("mul.Tensor", "add.Tensor", "floor_divide", "remainder.Scalar"))


def test_generic_plans_can_be_turned_off(monkeypatch):
    monkeypatch.setenv("GEMS_NATIVE_GENERIC", "0")
    for n in range(20, 40):
        torch.neg(torch.randn(n))
    assert native.generic_counts() == {} and python_calls("neg") == 20


# ------------------------------------------------------------------ implementations that must not be stretched


@triton.jit
def _scaled_copy_kernel(x_ptr, y_ptr, n, SCALE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * SCALE, mask=offs < n)


@triton.jit
def _fill_kernel(y_ptr, n, value, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.full([BLOCK], 0.0, tl.float32) + value, mask=offs < n)


_launchers = {}


def _launch(kernel, grid, *args):
    """Made on first use: a Launcher made at import would not see the interpreter mode gems selects."""
    launcher = _launchers.get(kernel) or _launchers.setdefault(kernel, Launcher(kernel))
    launcher(grid, *args)


def _register_abs(fn):
    table = dict(registration.snapshot())
    table["abs"] = (fn, gems.Autograd.disable, "abs")
    registration.apply(table, gems.vendor().dispatch_key)


def test_a_threshold_inside_a_bucket_bounds_the_plan():
    # A (deliberately odd) implementation that doubles its input past 40 elements, inside the bucket 33..64:
    # a plan stretched across 40 would give wrong answers on one side.
    def abs_doubling_past_40(x):
        y = torch.empty_like(x)
        _launch(_scaled_copy_kernel, (cdiv(x.numel(), 16),), x, y, x.numel(), 2.0 if x.numel() > 40 else 1.0, 16)
        return y

    _register_abs(abs_doubling_past_40)
    for n in list(range(33, 65)) + list(range(34, 41)):
        x = torch.randn(n)
        assert torch.equal(torch.abs(x), x * (2.0 if n > 40 else 1.0)), n
    assert native.generic_counts().get("abs", 0) > 20
    assert native.generic_plan_counts()["abs"] >= 2  # one each side of 40, never one across it


def test_a_size_dependent_float_keeps_exact_plans():
    runs = []

    def abs_as_mean_fill(x):  # fills 1 / n: a float no size-generic plan recomputes
        runs.append(x.numel())
        y = torch.empty_like(x)
        _launch(_fill_kernel, (cdiv(x.numel(), 16),), y, x.numel(), 1.0 / x.numel(), 16)
        return y

    _register_abs(abs_as_mean_fill)
    for n in range(20, 23):
        assert torch.equal(torch.abs(torch.randn(n)), torch.full((n,), 1.0 / n)), n
    assert native.generic_counts().get("abs", 0) == 0
    assert "no size-generic plan: the launches stay those of size 22 only" in native.python_reasons()["abs"]
    tried = len(runs)  # the calls, and the dry runs of the derivations at 21 and 22, which failed
    for n in range(23, 30):
        assert torch.equal(torch.abs(torch.randn(n)), torch.full((n,), 1.0 / n)), n
    assert len(runs) == tried + 7  # the bucket 17..32 is given up: no more dry runs, one run per call


def test_a_number_no_formula_fits_keeps_exact_plans():
    def abs_quadratic_grid(x):  # n * n programs: not floor((a * n + b) / d)
        y = torch.empty_like(x)
        _launch(_fill_kernel, (x.numel() * x.numel(),), y, x.numel(), 3.0, 16)
        return y

    _register_abs(abs_quadratic_grid)
    for n in range(9, 14):
        assert torch.equal(torch.abs(torch.randn(n)), torch.full((n,), 3.0)), n
    assert native.generic_counts().get("abs", 0) == 0
    assert "launch 0 grid dim 0 is not floor((a * v + b) / d)" in native.python_reasons()["abs"]


# ------------------------------------------------------------------ reasons, global state


def test_every_call_that_leaves_the_native_path_says_why():
    x, y, out = torch.randn(8), torch.randn(8), torch.empty(8)
    torch.add(x, y, out=out)
    base = torch.randn(9)
    with pytest.raises(RuntimeError):
        torch.add(base[:8], y, out=base[1:])  # a written argument overlapping another: ATen's rules, in Python
    calls = native.python_calls()["add.out"]
    assert calls == {"the first call of its signature (recorded)": 1,
                     "a written argument shares memory with another argument (ATen's overlap rules live in Python)": 1}
    assert native.python_reasons()["add.out"].startswith("a written argument shares memory")


def test_the_tf32_setting_is_part_of_the_key():
    a, b = torch.randn(9, 14), torch.randn(14, 6)
    torch.mm(a, b)
    torch.mm(a, b)
    previous = torch.backends.cuda.matmul.allow_tf32
    try:
        torch.backends.cuda.matmul.allow_tf32 = not previous
        torch.mm(a, b)  # another setting: another signature, which fp32 products on CUDA read (dot_precision)
        torch.mm(a, b)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = previous
    torch.mm(a, b)
    assert python_calls("mm") == 2 and native.call_counts()["mm"] == 3


_W = torch.randn(12, 20, generator=torch.Generator().manual_seed(1))
_GROWING = {  # name -> call of a tensor of n rows (n grows), against ATen at every size
    "abs": lambda x: torch.abs(x),
    "exp of a transposed view": lambda x: torch.exp(x.t()),
    "sigmoid": lambda x: torch.sigmoid(x),
    "add broadcast": lambda x: x + x[:1],
    "mul scalar": lambda x: x * 3.0,
    "div": lambda x: torch.div(x, x.abs() + 1),
    "where": lambda x: torch.where(x > 0, x, -x),
    "sum rows": lambda x: torch.sum(x, dim=1),
    "sum cols": lambda x: torch.sum(x, dim=0),
    "mean": lambda x: torch.mean(x, dim=-1),
    "amax cols": lambda x: torch.amax(x, dim=0),
    "softmax": lambda x: torch.softmax(x, dim=-1),
    "log_softmax cols": lambda x: torch.log_softmax(x, dim=0),
    "cumsum": lambda x: torch.cumsum(x, dim=0),
    "argmax": lambda x: torch.argmax(x, dim=0),
    "layer_norm": lambda x: torch.nn.functional.layer_norm(x, (x.shape[1],)),
    "rms_norm": lambda x: torch.nn.functional.rms_norm(x, (x.shape[1],)),
    "mm": lambda x: x @ _W,
}


def test_many_operators_over_a_growing_size_give_atens_answers():
    # The claim of size-generic plans, checked wide: every call, replayed from a plan derived at other sizes or
    # not, gives ATen's answer.
    gen = torch.Generator().manual_seed(0)
    base = torch.randn(80, 12, generator=gen)
    with torch.no_grad():
        for name, call in _GROWING.items():
            for n in range(12, 80, 3):
                x = base[:n]
                torch.testing.assert_close(call(x), aten(call, x), rtol=1e-5, atol=1e-5,
                                           msg=lambda m, name=name, n=n: f"{name} of {n} rows: {m}")
    assert sum(native.generic_counts().values()) > 200, native.generic_counts()
