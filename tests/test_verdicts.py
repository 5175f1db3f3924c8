"""Verdicts that cannot be fooled: realistic bugs injected into gems implementations must fail their
conformance cases (interpreter vendor)."""

import os
from dataclasses import replace

import pytest
import torch
import triton
import triton.language as tl

import gems
from gems import ops
from gems.codegen.pointwise import PointwiseOp, Promotion
from gems.ops.pointwise.add import add_op
from gems.ops.pointwise.div import _floor_div
from gems.runtime import registration
from gems.spec import OpSpec, Sample
from gems.testing import compare
from gems.testing.cases import Case
from gems.testing.conformance import run_case


@pytest.fixture(autouse=True)
def _restore_registration():
    previous = registration.snapshot()
    yield
    registration.apply(previous, gems.vendor().dispatch_key)


def _serve(overload, fn, owner):
    gems.enable()
    table = registration.snapshot()
    table[overload] = (fn, table[overload][1], owner)
    registration.apply(table, gems.vendor().dispatch_key)


def _run(spec, variant, dtype=torch.float32):
    return run_case(spec, Case(spec.name, dtype, variant), "cpu", True, "interpreter", {}, repro="pytest ...")


# --------------------------------------------------------------------------- ATen inside the implementation


def _add_by_aten(self, other, alpha=1):
    return torch.add(self, other, alpha=alpha)  # the wrapper's guard hands this to ATen's kernel


def _add_by_aten_explicitly(self, other, alpha=1):
    with gems.aten_only():
        return torch.add(self, other, alpha=alpha)


@pytest.mark.parametrize("impl", [_add_by_aten, _add_by_aten_explicitly])
def test_an_implementation_calling_the_aten_operator_fails(impl):
    _serve("add.Tensor", impl, "add")
    result = _run(ops.get("add"), "contiguous")
    assert result.status == "fail"
    assert "computed by ATen inside the gems implementation: aten.add.Tensor" in result.message
    assert result.aten_ops.get("aten.add.Tensor") == 1


def test_an_implementation_sending_long_rows_to_aten_fails():
    real = ops.get("softmax").impls["_softmax"]

    def long_rows_to_aten(self, dim, half_to_float):
        if self.shape[dim] > 8:
            with gems.aten_only():
                return torch.ops.aten._softmax(self, dim, half_to_float)
        return real(self, dim, half_to_float)

    _serve("_softmax", long_rows_to_aten, "softmax")
    result = _run(ops.get("softmax"), "contiguous")
    assert result.status == "fail"
    assert "computed by ATen inside the gems implementation: aten._softmax.default" in result.message


def _add_tail_by_aten(self, other, alpha=1):
    """The gems kernel computes the first rows, ATen the rest (copied into the result)."""
    out = torch.empty_like(self)
    half = self.shape[0] // 2
    add_op(self[:half], other[:half], alpha, out=out[:half])
    out[half:] = torch.add(self[half:], other[half:], alpha=alpha)
    return out


def _add_with_an_aten_intermediate(self, other, alpha=1):
    """ATen scales the second operand, the gems kernel adds: ATen computed part of every value."""
    scaled = torch.mul(other, alpha)
    return add_op(self, scaled, 1)


@pytest.mark.parametrize("impl, op", [(_add_tail_by_aten, "aten.add.Tensor"),
                                      (_add_with_an_aten_intermediate, "aten.mul.Tensor")])
def test_an_implementation_computing_part_of_the_result_with_aten_fails(impl, op):
    _serve("add.Tensor", impl, "add")
    result = _run(ops.get("add"), "contiguous")
    assert result.launches >= 1  # a gems kernel ran too: launching one is not enough
    assert result.status == "fail"
    assert f"computed by ATen inside the gems implementation: {op}" in result.message


def test_aten_computing_what_only_decides_fails_unless_declared():
    def add_checking_nan_first(self, other, alpha=1):
        if torch.isnan(self).any():  # a decision: its value reaches no result
            raise gems.Fallback("NaN inputs are left to ATen")
        return add_op(self, other, alpha)

    _serve("add.Tensor", add_checking_nan_first, "add")
    result = _run(ops.get("add"), "contiguous")
    assert result.status == "fail"
    assert "aten.any.default (in add.Tensor); aten.isnan.default (in add.Tensor)" in result.message
    assert result.aten_ops.get("aten.isnan.default") == 1 and result.launches == 1
    reason = "test: NaN inputs are left to ATen"
    declared = replace(ops.get("add"), aten_decisions={"aten.isnan.default": reason, "aten.any.default": reason})
    result = _run(declared, "contiguous")
    assert result.status == "pass", result.message


def test_an_index_aten_found_and_read_back_as_an_integer_fails():
    """ATen's argmax finds the index, the host reads it as an integer, a gems kernel writes it: the
    result is all gems-written, but ATen computed it."""
    from gems.ops.creation.fill import fill_dense

    real = ops.get("argmax").impls["argmax"]

    def argmax_found_by_aten(self, dim=None, keepdim=False):
        if dim is not None:
            return real(self, dim, keepdim)
        index = int(torch.argmax(self))  # the wrapper's guard hands this to ATen's kernel
        return fill_dense(torch.empty((), dtype=torch.int64, device=self.device), index)

    _serve("argmax", argmax_found_by_aten, "argmax")
    result = _run(ops.get("argmax"), "full")
    assert result.launches >= 1 and result.max_abs_err == 0  # a gems kernel wrote the right answer
    assert result.status == "fail"
    assert "computed by ATen inside the gems implementation: aten.argmax.default (in argmax)" in result.message


def test_a_number_read_back_from_an_aten_result_marks_the_kernel():
    def add_via_host_sum(self, other, alpha=1):
        # A shortcut that ATen's sum feeds: the kernel adds a number ATen computed.
        offset = float(torch.sum(other - other))
        return add_op(add_op(self, other, alpha), offset, 1)

    _serve("add.Tensor", add_via_host_sum, "add")
    result = _run(ops.get("add"), "contiguous")
    assert result.status == "fail" and "aten.sum.default" in result.message


def test_the_interpreters_own_torch_calls_are_part_of_the_launch():
    gems.enable()
    result = _run(ops.get("tanh"), "contiguous")  # libdevice.tanh is emulated with torch.tanh
    assert result.status == "pass", result.message
    assert result.launches == 1 and "aten.tanh.default" not in result.aten_ops


def test_a_non_empty_result_needs_a_kernel_launch_unless_declared():
    def samples(dtype, device, quick):
        return [Sample("zeros", lambda: (torch.zeros(5, dtype=dtype, device=device),))]

    def zeros_kernel_free(x):
        return torch.zeros_like(x)  # right for abs(0), but no gems kernel computed it

    spec = OpSpec(name="abs", family="pointwise", impls={"abs": zeros_kernel_free}, call=torch.abs,
                  samples=samples, dtypes=(torch.float32,))
    _serve("abs", zeros_kernel_free, "abs")
    result = _run(spec, "zeros")
    assert result.status == "fail" and "no gems kernel launched" in result.message
    declared = OpSpec(name="abs", family="pointwise", impls={"abs": zeros_kernel_free}, call=torch.abs,
                      samples=samples, dtypes=(torch.float32,), no_launch={"zeros": "test: a constant result"})
    assert _run(declared, "zeros").status == "pass"


def test_a_deliberate_fallback_is_still_counted_and_reported():
    def falls_back(self, other, alpha=1):
        raise gems.Fallback("test: deliberate")

    _serve("add.Tensor", falls_back, "add")
    spec = ops.get("add")
    result = _run(replace(spec, deliberate_fallbacks={"contiguous": "ATen is faster here"}), "contiguous")
    assert result.status == "fallback" and "ATen is faster here" in result.message
    assert registration.fallback_calls["add.Tensor", "test: deliberate"] >= 1


# --------------------------------------------------------------------------- signed zeros


@triton.jit
def _abs_keeping_negative_zero(x):
    return tl.where(x < 0, -x, x)  # -0.0 < 0 is false: -0.0 stays -0.0


@triton.jit
def _floor_div_losing_zero_sign(x, y):
    return _floor_div(x, y) + 0.0  # -0.0 + 0.0 is +0.0


def test_abs_returning_negative_zero_fails():
    op = PointwiseOp("abs_keeping_negative_zero", _abs_keeping_negative_zero, operands=1)
    _serve("abs", op, "abs")
    result = _run(ops.get("abs"), "special-values")
    assert result.status == "fail" and "zeros have the other sign than ATen's" in result.message


def test_floor_division_losing_the_sign_of_a_zero_quotient_fails():
    op = PointwiseOp("floor_div_losing_zero_sign", _floor_div_losing_zero_sign, operands=2, round_scalars=False)
    _serve("floor_divide", op, "floor_divide")
    result = _run(ops.get("floor_divide"), "special-values-nonzero")
    assert result.status == "fail" and "zeros have the other sign than ATen's" in result.message
    gems.enable()
    assert _run(ops.get("floor_divide"), "special-values-nonzero").status == "pass"


def test_zero_signs_are_judged_against_aten_and_nan_positions_as_before():
    tol = compare.default_tolerance(torch.float32, "pointwise")
    aten = torch.tensor([0.0, -0.0, float("nan"), 1.0])
    oracle = aten.double()
    assert compare.compare(aten.clone(), oracle, aten, tol).passed
    flipped = torch.tensor([-0.0, -0.0, float("nan"), 1.0])
    assert not compare.compare(flipped, oracle, aten, tol).passed
    moved_nan = torch.tensor([0.0, -0.0, 1.0, float("nan")])
    assert not compare.compare(moved_nan, oracle, aten, tol).passed


def test_a_zero_rounded_from_a_tiny_exact_value_is_judged_as_a_value_not_by_its_sign():
    tol = compare.default_tolerance(torch.float16, "reduction")
    oracle = torch.tensor([1e-9, -1e-9, 0.0, 0.5], dtype=torch.float64)  # fp16 stores the first two as zeros
    aten = torch.tensor([0.0, 0.0, 0.0, 0.5], dtype=torch.float16)
    assert compare.compare(torch.tensor([-0.0, -0.0, 0.0, 0.5], dtype=torch.float16), oracle, aten, tol).passed
    exact_zero_flipped = torch.tensor([0.0, 0.0, -0.0, 0.5], dtype=torch.float16)
    assert not compare.compare(exact_zero_flipped, oracle, aten, tol).passed


def test_an_implementation_returning_a_number_aten_computed_fails():
    from gems.ops.pointwise.isclose import isclose_op

    def allclose_by_aten_all(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        return bool(isclose_op(self, other, float(rtol), float(atol), bool(equal_nan)).all())

    _serve("allclose", allclose_by_aten_all, "allclose")
    result = _run(ops.get("allclose"), "contiguous")
    assert result.status == "fail"
    assert "computed by ATen inside the gems implementation: aten.all.default" in result.message


# --------------------------------------------------------------------------- edge samples


def _statuses(spec, samples, dtypes):
    spec = replace(spec, samples=samples)
    return {(str(dtype), s.variant): _run(spec, s.variant, dtype).status
            for dtype in dtypes for s in samples(dtype, "meta", True)}


@triton.jit
def _eq_unrounded(x, y):
    return x == y


def test_rounded_scalars_round_to_an_element_and_catch_an_unrounded_comparison():
    from gems.testing.samples_edges import rounded_scalar_samples

    samples = rounded_scalar_samples(torch.eq, expects="eq.Scalar")
    for dtype in (torch.float16, torch.bfloat16, torch.float32):
        for sample in samples(dtype, "cpu", True):
            x, scalar = sample.built().args
            rounded = torch.tensor(scalar, dtype=torch.float64).to(dtype)
            assert rounded.double().item() != scalar and rounded.item() in x.tolist()
    assert samples(torch.float64, "cpu", True) == [] and samples(torch.int32, "cpu", True) == []
    gems.enable()
    dtypes = (torch.float16, torch.bfloat16, torch.float32)
    assert set(_statuses(ops.get("eq"), samples, dtypes).values()) == {"pass"}
    unrounded = PointwiseOp("eq_unrounded", _eq_unrounded, operands=2, promotion=Promotion.BOOL, round_scalars=False)
    _serve("eq.Scalar", unrounded, "eq")
    assert "fail" in _statuses(ops.get("eq"), samples, (torch.float16,)).values()


def test_subnormal_intermediates_are_subnormal_in_fp32():
    from gems.testing.samples_edges import subnormal_intermediate_samples

    smallest_normal = torch.finfo(torch.float32).smallest_normal
    (x,) = subnormal_intermediate_samples(torch.exp, inverse=torch.log)(torch.float16, "cpu", True)[0].built().args
    intermediate = torch.exp(x.double())
    assert ((intermediate < smallest_normal) & (intermediate > 0)).any()
    (sample,) = subnormal_intermediate_samples(torch.mul)(torch.bfloat16, "cpu", True)
    a, b = sample.built().args
    product = (a.float() * b.float()).abs()
    assert ((product < smallest_normal) & (product > 0)).all()
    assert subnormal_intermediate_samples(torch.mul)(torch.float16, "cpu", True) == []
    gems.enable()
    samples = subnormal_intermediate_samples(torch.mul, expects="mul.Tensor")
    assert set(_statuses(ops.get("mul"), samples, (torch.bfloat16,)).values()) == {"pass"}


def test_integer_extremes_and_exact_halves_pass_the_real_kernels():
    from gems.testing.samples_edges import (
        exact_half_samples,
        half_sums,
        half_values,
        integer_extreme_samples,
        integer_extremes,
    )

    assert integer_extremes(torch.int8) == [-128, -127, -1, 0, 1, 126, 127]
    assert all(v % 1 == 0.5 for v in half_values(torch.float16)) and 1023.5 not in half_values(torch.float16)
    a, b = half_sums(torch.float16)
    exact = torch.tensor(a, dtype=torch.float64) + torch.tensor(b, dtype=torch.float64)
    rounded = exact.to(torch.float16).double()
    assert ((rounded - exact).abs() == torch.tensor(b).abs()).all()  # every sum is a tie
    assert (rounded.abs() > exact.abs()).any() and (rounded.abs() < exact.abs()).any()  # ties go both ways
    gems.enable()
    add = ops.get("add")
    extremes = integer_extreme_samples(torch.add, operands=2, expects="add.Tensor")
    assert set(_statuses(add, extremes, (torch.int8, torch.int32)).values()) == {"pass"}
    sums = exact_half_samples(torch.add, kind="sums", expects="add.Tensor")
    assert set(_statuses(add, sums, (torch.float16, torch.bfloat16, torch.float32)).values()) == {"pass"}
    for mode in ("trunc", "floor"):
        quotients = exact_half_samples(torch.div, kind="quotients", expects="div.Tensor_mode",
                                       kwargs={"rounding_mode": mode})
        assert set(_statuses(ops.get("div"), quotients, (torch.float32, torch.int32)).values()) == {"pass"}


def test_edge_samples_are_wired_into_the_declarations():
    """The edge generators run in the conformance suite itself, not only in these tests."""
    wanted = {
        "eq": "rounded-scalar-tie-0", "lt": "rounded-scalar-above-1", "ge": "rounded-scalar-below-2",
        "add": "exact-half-sums", "mul": "subnormal-product", "exp": "subnormal-intermediate",
        "div": "exact-half-quotients-floor", "floor_divide": "exact-half-quotients",
    }
    for name, variant in wanted.items():
        variants = {s.variant for s in ops.get(name).samples(torch.bfloat16, "meta", True)}
        assert variant in variants, (name, sorted(variants))
    for name in ("add", "sub", "mul", "abs", "neg", "maximum", "minimum", "floor_divide"):
        variants = {s.variant for s in ops.get(name).samples(torch.int8, "meta", True)}
        assert {"integer-extremes", "integer-extremes-pairs"} & variants, name
    div_int = {s.variant for s in ops.get("div").samples(torch.int16, "meta", True)}
    assert {"integer-extremes-pairs-trunc", "integer-extremes-pairs-floor"} <= div_int


ORDERED_ZEROS_SCRIPT = '''
import dataclasses, torch
from gems.runtime import selection
backend = selection.current()  # the interpreter; given CUDA's zero order before any kernel is defined
backend.capabilities = dataclasses.replace(backend.capabilities, ordered_zeros=True)
import gems
gems.enable()
x, y = torch.tensor([0.0, -0.0, -0.0, 0.0]), torch.tensor([-0.0, 0.0, -0.0, 0.0])
print([torch.signbit(t).tolist() for t in (torch.maximum(x, y), torch.minimum(x, y), torch.relu(y),
                                           torch.clamp(y, min=0.0))])
print(torch.maximum(torch.tensor([0, 3], dtype=torch.uint8), torch.tensor([0, 1], dtype=torch.uint8)).tolist())
'''


def test_a_device_that_orders_zeros_gets_cudas_signs_from_max_min_relu_and_clamp():
    """CUDA's ATen takes max/min with fmaxf/fminf (+0.0 above -0.0); CPU's lets one operand win a tie.
    The kernels follow Capabilities.ordered_zeros; the GPU's conformance judges the signs there."""
    import subprocess
    import sys

    env = {**os.environ, "GEMS_VENDOR": "interpreter"}
    done = subprocess.run([sys.executable, "-c", ORDERED_ZEROS_SCRIPT], env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    signs, unsigned = done.stdout.strip().splitlines()[-2:]
    assert signs == str([[False, False, True, False], [True, True, True, False], [False] * 4, [False] * 4])
    assert unsigned == "[0, 3]"
