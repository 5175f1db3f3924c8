"""fmod of bf16 (fmod.py's _fmod_narrow: a truncated fp32 quotient and one fma, with a fallback to fp64 for blocks
holding an element outside its bounds) and fp16 (libdevice's fmod), bit for bit against float64's exact fmod
rounded to the dtype: ordinary values whose blocks all take the short path (quotients up to 2^20 and exact
multiples, whose zero remainders carry x's sign), and random bit patterns (every exponent, subnormals, zeros,
infinities and NaN) whose blocks mix both paths. remainder builds on it (its conformance covers it)."""

import pytest
import torch

import gems
from gems.ops.pointwise.fmod import fmod_op
from gems.runtime import registration

DEVICE = gems.vendor().device


def _operands(dtype, kind):
    torch.manual_seed(7)
    n = 1 << 13
    if kind == "random-bits":
        bits = torch.randint(-(2**15), 2**15, (2, n), dtype=torch.int32).to(torch.int16)
        return bits[0].view(dtype), bits[1].view(dtype)
    x = torch.randint(-4000, 4000, (n,)).to(dtype) * 0.25  # many exact multiples of the divisors
    y = torch.tensor([0.25, -0.5, 0.75, 3.0, -1.25, 0.1, 1e-3, -7.0], dtype=dtype)[torch.randint(0, 8, (n,))]
    x[::7] = x[::7] * 0.0 - 0.0  # signed zeros
    x[::11] = (torch.rand(n)[::11] * 2**19).to(dtype) * y[::11]  # quotients near the short path's 2^20 bound
    return x, y


def _same_bits(got, want):
    return (got.view(torch.int16) == want.view(torch.int16)) | (got.isnan() & want.isnan())


@pytest.mark.parametrize("kind", ["ordinary", "random-bits"])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_16bit_fmod_is_exact(dtype, kind):
    x, y = _operands(dtype, kind)
    with registration.aten_only():
        want_fmod = torch.fmod(x.double(), y.double()).to(dtype)
    got_fmod = fmod_op(x.to(DEVICE), y.to(DEVICE)).cpu()
    wrong = (~_same_bits(got_fmod, want_fmod)).nonzero().flatten()
    assert wrong.numel() == 0, [(x[i].item(), y[i].item(), got_fmod[i].item(), want_fmod[i].item()) for i in wrong[:5]]
    if kind == "ordinary":
        zeros = want_fmod == 0
        assert zeros.any() and (x[zeros] < 0).any()  # the sample holds zero remainders of negative x
