"""The interpreter vendor computes what the GPU computes where numpy would not (interpreter_support.py),
so that a kernel relying on the interpreter's own semantics fails here as it would on the GPU."""

import pytest
import torch
import triton
import triton.language as tl

import gems
from gems import ops
from gems.codegen.pointwise import PointwiseOp
from gems.runtime import registration
from gems.runtime.launch import Launcher
from gems.testing.cases import Case
from gems.testing.conformance import run_case

pytestmark = pytest.mark.skipif(gems.vendor().name != "interpreter", reason="checks the interpreter vendor")


@triton.jit
def _binary_kernel(x_ptr, y_ptr, out_ptr, n, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    if OP == "minimum":
        r = tl.minimum(x, y)
    elif OP == "maximum":
        r = tl.maximum(x, y)
    elif OP == "minimum_nan":
        r = tl.minimum(x, y, propagate_nan=tl.PropagateNan.ALL)
    elif OP == "maximum_nan":
        r = tl.maximum(x, y, propagate_nan=tl.PropagateNan.ALL)
    elif OP == "div":
        r = x / y
    elif OP == "div_rn":
        r = tl.div_rn(x, y)
    elif OP == "floordiv":
        r = x // y
    elif OP == "mod":
        r = x % y
    elif OP == "shl":
        r = x << y
    else:
        r = x >> y
    tl.store(out_ptr + offs, r, mask=mask)


@triton.jit
def _unary_kernel(x_ptr, out_ptr, n, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    if OP == "sqrt":
        r = tl.sqrt(x)
    elif OP == "sqrt_rn":
        r = tl.sqrt_rn(x)
    elif OP == "max":
        r = tl.full(x.shape, 0, x.dtype) + tl.max(x, 0)
    elif OP == "clamp":
        r = tl.clamp(x, -1.0, 1.0)
    else:
        r = x.to(out_ptr.dtype.element_ty)
    tl.store(out_ptr + offs, r, mask=mask)


def _binary(op, x, y, out_dtype=None):
    out = torch.empty(x.shape, dtype=out_dtype or x.dtype)
    Launcher(_binary_kernel)((1,), x, y, out, x.numel(), op, triton.next_power_of_2(x.numel()))
    return out


def _unary(op, x, out_dtype=None):
    out = torch.empty(x.shape, dtype=out_dtype or x.dtype)
    Launcher(_unary_kernel)((1,), x, out, x.numel(), op, triton.next_power_of_2(x.numel()))
    return out


NAN = float("nan")


def test_minimum_and_maximum_drop_nan_unless_asked_to_propagate_it():
    x = torch.tensor([NAN, 1.0, NAN, -2.0])
    y = torch.tensor([3.0, NAN, NAN, 5.0])
    torch.testing.assert_close(_binary("minimum", x, y), torch.tensor([3.0, 1.0, NAN, -2.0]), equal_nan=True)
    torch.testing.assert_close(_binary("maximum", x, y), torch.tensor([3.0, 1.0, NAN, 5.0]), equal_nan=True)
    torch.testing.assert_close(_binary("minimum_nan", x, y), torch.tensor([NAN, NAN, NAN, -2.0]), equal_nan=True)
    torch.testing.assert_close(_binary("maximum_nan", x, y), torch.tensor([NAN, NAN, NAN, 5.0]), equal_nan=True)


def test_reductions_and_clamp_drop_nan_like_the_hardware():
    x = torch.tensor([1.0, NAN, 4.0, -3.0])
    assert (_unary("max", x) == 4.0).all()
    torch.testing.assert_close(_unary("clamp", torch.tensor([NAN, 2.0, -0.5])), torch.tensor([-1.0, 1.0, -0.5]))


@triton.jit
def _minimum_by_hardware_min(x, y):
    return tl.minimum(x, y)  # what ATen's minimum is not: it propagates NaN


def test_a_kernel_relying_on_interpreter_only_nan_propagation_fails():
    previous = registration.snapshot()
    try:
        gems.enable()
        table = registration.snapshot()
        table["minimum"] = (PointwiseOp("minimum_by_hardware_min", _minimum_by_hardware_min, operands=2),
                            *table["minimum"][1:])
        registration.apply(table, gems.vendor().dispatch_key)
        spec = ops.get("minimum")
        result = run_case(spec, Case("minimum", torch.float32, "special-values"), "cpu", True, "interpreter", {})
        assert result.status == "fail" and "NaN/Inf in other places" in result.message
        gems.enable()
        result = run_case(spec, Case("minimum", torch.float32, "special-values"), "cpu", True, "interpreter", {})
        assert result.status == "pass", result.message
    finally:
        registration.apply(previous, gems.vendor().dispatch_key)


def _ulps_apart(a, b):
    return (a.view(torch.int32).long() - b.view(torch.int32).long()).abs()


def test_fp32_division_and_sqrt_are_approximate_unless_rounded_explicitly():
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(4096, generator=generator) * 100
    y = torch.randn(4096, generator=generator) * 100
    exact = x / y  # ATen: IEEE division
    approximate = _binary("div", x, y)
    assert _ulps_apart(approximate, exact).max() <= 1 and (approximate != exact).any()
    assert torch.equal(_binary("div_rn", x, y), exact)
    root = x.abs()
    exact = root.double().sqrt().float()  # torch's fp32 sqrt on the CPU is not correctly rounded
    # sqrt.approx.f32's error bound is 2^-23 relative: up to 2 ulp.
    assert _ulps_apart(_unary("sqrt", root), exact).max() <= 2 and (_unary("sqrt", root) != exact).any()
    assert torch.equal(_unary("sqrt_rn", root), exact)
    # The whole range: subnormal and huge divisors, zeros, infinities and NaN keep IEEE's special results.
    tiny, huge, inf = 1e-40, 3e38, float("inf")
    x = torch.tensor([tiny, huge, 1.0, 0.0, 1.0, inf, -2.0, 0.0, -0.0])
    y = torch.tensor([2 * tiny, huge, inf, 0.0, 0.0, inf, -0.0, 4.0, 4.0])
    got, want = _binary("div", x, y), x / y
    assert torch.equal(got.isnan(), want.isnan()) and (_ulps_apart(got, want)[~want.isnan()] <= 1).all()
    assert torch.equal(torch.signbit(got), torch.signbit(want))
    specials = torch.tensor([0.0, -0.0, inf, -1.0, 1e-40])
    torch.testing.assert_close(_unary("sqrt", specials), specials.double().sqrt().float(), equal_nan=True,
                               rtol=2.4e-7, atol=0)


def test_integer_division_by_zero_is_never_zero():
    x = torch.tensor([7, -7, 0, 5], dtype=torch.int32)
    y = torch.tensor([0, 0, 0, 2], dtype=torch.int32)
    assert _binary("floordiv", x, y).tolist() == [-1, -1, -1, 2]
    assert _binary("mod", x, y).tolist() == [7, -7, 0, 1]


def test_shifts_by_the_width_or_more_are_not_zero():
    x = torch.tensor([1, 1, 3, -8, -8], dtype=torch.int32)
    amount = torch.tensor([33, 32, 1, 33, 2], dtype=torch.int32)
    assert _binary("shl", x, amount).tolist() == [2, 1, 6, -16, -32]
    assert _binary("shr", x, amount).tolist() == [0, 1, 1, -4, -2]  # arithmetic: -8 >> 1 is -4


def test_float_to_int_conversion_saturates_and_takes_nan_to_zero():
    x = torch.tensor([3e9, -3e9, NAN, float("inf"), float("-inf"), 2.7, -2.7, 300.0])
    assert _unary("cast", x, torch.int32).tolist() == [2**31 - 1, -(2**31), 0, 2**31 - 1, -(2**31), 2, -2, 300]
    assert _unary("cast", x, torch.int8).tolist() == [127, -128, 0, 127, -128, 2, -2, 127]
    assert _unary("cast", x, torch.uint8).tolist() == [255, 0, 0, 255, 0, 2, 0, 255]
    assert _unary("cast", x.double(), torch.int64).tolist()[:5] == [3000000000, -3000000000, 0, 2**63 - 1, -(2**63)]


@triton.jit
def _running_kernel(x_ptr, out_ptr, n, OP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=1)
    if OP == "cummax":
        tl.store(out_ptr + offs, tl.associative_scan(x, 0, tl.standard._elementwise_max), mask=offs < n)
    elif OP == "cummin_reverse":
        tl.store(out_ptr + offs, tl.associative_scan(x, 0, tl.standard._elementwise_min, reverse=True), mask=offs < n)
    else:
        tl.store(out_ptr, tl.reduce(x, 0, tl.standard._prod_combine))


def test_builtin_running_max_min_and_product_run_as_numpy_with_the_hardware_semantics():
    # The fast paths (one numpy call) keep what the compiled kernel computes: max/min ignore NaN, a reverse
    # scan runs from the end, integer products wrap.
    x = torch.tensor([1.0, float("nan"), 3.0, -2.0, 5.0, 0.5])
    out = torch.empty_like(x)
    Launcher(_running_kernel)((1,), x, out, 6, "cummax", 8)
    assert out.tolist() == [1.0, 1.0, 3.0, 3.0, 5.0, 5.0]
    Launcher(_running_kernel)((1,), x, out, 6, "cummin_reverse", 8)
    assert out.tolist() == [-2.0, -2.0, -2.0, -2.0, 0.5, 0.5]
    big = torch.tensor([2**40, 2**30, 3], dtype=torch.int64)
    prod = torch.empty(1, dtype=torch.int64)
    Launcher(_running_kernel)((1,), big, prod, 3, "prod", 4)
    assert prod.item() == torch.prod(big).item()  # 3 * 2**70 wrapped to int64, as ATen's


@triton.jit
def _fma_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.fma(x, x, x * 0 - 1), mask=mask)


@pytest.mark.parametrize("dtype, bits", [(torch.float32, 12), (torch.float64, 27)])
def test_fma_rounds_once(dtype, bits):
    # (1 + 2^-k)^2 - 1 = 2^(1-k) + 2^-2k: the last term is below the product's ulp, so a rounded product loses it.
    x = torch.tensor([1 + 2.0**-bits], dtype=dtype)
    out = torch.empty_like(x)
    Launcher(_fma_kernel)((1,), x, out, 1, 2)
    assert out.item() == 2.0 ** (1 - bits) + 2.0 ** (-2 * bits)
