"""gems' own approximations of special functions (bessel_shared.py: i0, i0e, i1, i1e; digamma.py; gelu's 16-bit
erfc) against float64 references on a dense grid, in fp32 and fp64 (gelu: every fp16 and bf16 value that it
maps to a normal number): conformance's samples are a few hundred random values, these cover both series of
each function and the switch between them. digamma's reference is
mpmath's (torch's float64 digamma computes pi / tan(pi x) and is off by up to ~10% next to its poles, where
gems reduces x exactly; mpmath comes with torch, through sympy)."""

import mpmath
import pytest
import torch

from gems.ops.pointwise.digamma import digamma_op
from gems.ops.pointwise.gelu import gelu_ops
from gems.ops.pointwise.i0 import i0_op
from gems.ops.pointwise.special_i0e import special_i0e_op
from gems.ops.pointwise.special_i1 import special_i1_op
from gems.ops.pointwise.special_i1e import special_i1e_op
from gems.runtime import registration

# (op, torch's function, grid): the grids cross every branch (series, switch points 10 and 20, asymptotic).
FUNCTIONS = {
    "i0": (i0_op, torch.special.i0, (-40.0, 40.0)),
    "i0e": (special_i0e_op, torch.special.i0e, (-60.0, 60.0)),
    "i1": (special_i1_op, torch.special.i1, (-40.0, 40.0)),
    "i1e": (special_i1e_op, torch.special.i1e, (-60.0, 60.0)),
    "digamma": (digamma_op, lambda x: x.clone().apply_(lambda v: float(mpmath.digamma(v))), (-30.0, 30.0)),
}
# Relative error bounds: fp32 a few ulp (conformance's rtol is 1.3e-6), fp64 near its rounding.
RELATIVE = {torch.float32: 1e-6, torch.float64: 1e-13}
# digamma crosses zero near 1.4616 and between the negative poles: an absolute floor there.
ABSOLUTE = {torch.float32: 1e-6, torch.float64: 1e-13}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_matches_float64_reference_on_a_dense_grid(name, dtype):
    op, reference, (low, high) = FUNCTIONS[name]
    x = torch.linspace(low, high, 6001, dtype=torch.float64).to(dtype)
    x = x[x != x.round()] if name == "digamma" else x  # digamma's poles at the non-positive integers
    with registration.aten_only():
        want = reference(x.double())
    got = op(x).double()
    finite = want.isfinite() & (want.abs() < torch.finfo(dtype).max)
    error = (got - want).abs()[finite]
    bound = RELATIVE[dtype] * want.abs()[finite] + (ABSOLUTE[dtype] if name == "digamma" else 0.0)
    worst = (error / bound).argmax()
    assert (error <= bound).all(), (f"{name} {dtype}: x = {x[finite][worst].item()}, got {got[finite][worst].item()}, "
                                    f"want {want[finite][worst].item()}")


def test_i0_stays_finite_past_exp_overflow():
    """ATen's exp(x) * chebyshev overflows fp32 from x = 88.7; I0 itself only from about 91.9."""
    x = torch.tensor([89.0, 90.0, 91.5, 92.5], dtype=torch.float32)
    got = i0_op(x)
    assert got[:3].isfinite().all() and got[3].isinf()


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_16bit_gelu_is_within_one_ulp_of_its_float64_value_into_the_negative_tail(dtype):
    """_gelu_none_16bit's erfc is relative, so x Phi(x) keeps its digits where ATen's 1 + erf cancels (x < -4)."""
    bits = torch.arange(-(2**15), 2**15, dtype=torch.int32).to(torch.int16)
    x = bits.view(dtype)
    x = x[x.isfinite() & (x.abs() <= 12)]  # on the GPU exp2 flushes Phi(x) below 2^-126 to 0, from x = -13
    with registration.aten_only():
        want = x.double() * 0.5 * torch.special.erfc(-x.double() / 2**0.5)
    got = gelu_ops["none"](x).double()
    tiny = torch.finfo(dtype).smallest_normal
    normal = want.abs() >= tiny
    ulp = torch.exp2(torch.floor(torch.log2(want.abs()[normal]))) * torch.finfo(dtype).eps
    assert ((got[normal] - want[normal]).abs() <= ulp).all()
    assert (x[normal] < -4).any()  # the tail is in the sample
