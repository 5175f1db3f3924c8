"""Samples that reach the numeric edges random values miss, as generators of the shared signature
``samples(dtype, device, quick) -> list[Sample]``; wire them into a declaration with
``samples.combined(...)`` or ``more=`` (see gems.testing.samples).

- :func:`rounded_scalar_samples`: a tensor compared with (or combined with) a Python number that is
  not representable in the tensor's dtype but rounds to one of its elements: ATen rounds the number
  to the common dtype first, so rounding it, or not, changes the answer.
- :func:`subnormal_intermediate_samples`: fp16/bf16 inputs whose fp32 intermediate values are
  subnormal: a kernel that flushes them (or computes in a type without them) shows here.
- :func:`integer_extreme_samples`: the minimum and maximum of an integer dtype and their neighbours,
  every pair for two operands: wrapping, ``abs(min)``, ``min // -1`` guards.
- :func:`exact_half_samples`: values and results exactly half-way between two candidates of every
  rounding rule: ``k + 0.5`` (round half to even, floor, ceil, trunc), quotients ``x / y = k + 0.5``
  (div's rounding modes), and sums exactly half-way between two fp16/bf16/fp32 values (the rounding
  of a result to its dtype).
"""

from __future__ import annotations

import torch

from gems.spec import Sample

_LOW_PRECISION = (torch.float16, torch.bfloat16, torch.float32)  # a Python float does not fit in these
# Element values of the rounded-scalar samples: one near 1, one with a long mantissa, one negative, one large.
_SCALAR_TARGETS = (1.0, 3.14159, -2.71828, 1000.3)


def _ulp(value: float, dtype: torch.dtype) -> float:
    """The spacing of ``dtype`` just above |value| (value representable in dtype)."""
    t = torch.tensor(abs(value), dtype=dtype)
    return (torch.nextafter(t, torch.tensor(float("inf"), dtype=dtype)) - t).item()


def _in(dtype, values) -> list[float]:
    """``values`` rounded to ``dtype``, as Python floats."""
    return torch.tensor(values, dtype=torch.float64).to(dtype).double().tolist()


def rounded_scalar_samples(call, expects=None):
    """``call(x, s)`` with a Python float ``s`` that rounds to an element ``e`` of ``x`` (float dtypes but
    float64): ``s = e + ulp/4`` (rounds down to e), ``s = e - ulp/4`` (rounds up to e) and ``s = e + ulp/2``
    (a tie: rounds to the neighbour of even mantissa). ``x`` holds every e with its neighbours, so that
    ``x == s``, ``x < s``... differ at exactly those elements depending on whether s was rounded.

    For operators that round the number to the tensor's dtype, as ATen's comparisons and add do: the
    float64 oracle is given the rounded number (in float64 it would compare with the exact one)."""

    def samples(dtype, device, quick):
        if dtype not in _LOW_PRECISION:
            return []
        elements = _in(dtype, _SCALAR_TARGETS)

        def rounding_call(x, scalar):
            if x.dtype == torch.float64:  # the oracle's copy: ATen computes with the rounded number
                scalar = _in(dtype, [scalar])[0]
            return call(x, scalar)
        cases = []
        for name, fraction in (("above", 0.25), ("below", -0.25), ("tie", 0.5)):
            for i, e in enumerate(elements):
                ulp = _ulp(e, dtype)
                scalar = e + fraction * ulp

                def args(e=e, ulp=ulp, scalar=scalar):
                    x = torch.tensor([e - ulp, e, e + ulp, e + 2 * ulp, -e, 0.0], dtype=torch.float64)
                    return x.to(dtype).to(device), scalar

                cases.append(Sample(f"rounded-scalar-{name}-{i}", args, call=rounding_call, expects=expects))
        return cases

    return samples


def subnormal_intermediate_samples(call=None, inverse=None, expects=None):
    """fp16/bf16 inputs whose fp32 intermediates are subnormal (below 2^-126).

    inverse: for a one-operand operator, a float64 function from the wanted intermediate values to the
    inputs that produce them (``torch.log`` for exp: exp(x) is then fp32-subnormal); only inputs that
    survive rounding to the dtype are kept. Without it, two operands whose product (and quotient
    x / (1/y)) is fp32-subnormal: bf16 shares fp32's exponent range, so its products reach there;
    fp16's least product, 2^-48, cannot, and fp16 then has no two-operand sample.
    """

    def samples(dtype, device, quick):
        if dtype not in (torch.float16, torch.bfloat16):
            return []
        wanted = torch.tensor([2.0**-127, 2.0**-130, 3 * 2.0**-140, 2.0**-149, 1e-39, 5e-42], dtype=torch.float64)
        if inverse is not None:
            def args():
                x = inverse(torch.cat([wanted, -wanted])).to(dtype)
                return (x[torch.isfinite(x)].to(device),)

            return [Sample("subnormal-intermediate", args, call=call, expects=expects)]
        if dtype != torch.bfloat16:
            return []

        def pair():
            x = torch.tensor([2.0**-64, -(2.0**-70), 3 * 2.0**-75, 2.0**-60, 1e-20, -(2.0**-100)], dtype=torch.float64)
            y = wanted / x  # x * y is the wanted subnormal, up to the rounding of y to bf16
            return x.to(dtype).to(device), y.to(dtype).to(device)

        return [Sample("subnormal-product", pair, call=call, expects=expects)]

    return samples


def integer_extremes(dtype: torch.dtype) -> list[int]:
    info = torch.iinfo(dtype)
    return sorted({info.min, info.min + 1, -1 if info.min < 0 else 0, 0, 1, info.max - 1, info.max})


def integer_extreme_samples(call=None, operands=1, expects=None, nonzero_rhs=False):
    """``call(x)`` or ``call(x, y)`` over every value (pair) of :func:`integer_extremes` (integer dtypes).
    nonzero_rhs: drop divisors 0, and -1 beside the minimum (the quotient overflows: x86 traps)."""

    def samples(dtype, device, quick):
        if dtype.is_floating_point or dtype.is_complex or dtype == torch.bool:
            return []
        values = integer_extremes(dtype)
        if operands == 1:
            return [Sample("integer-extremes", lambda: (torch.tensor(values, dtype=dtype, device=device),),
                           call=call, expects=expects)]
        low = torch.iinfo(dtype).min
        pairs = [(a, b) for a in values for b in values
                 if not (nonzero_rhs and (b == 0 or (a == low and b == -1 and low < 0)))]

        def args():
            x, y = zip(*pairs)
            return torch.tensor(x, dtype=dtype, device=device), torch.tensor(y, dtype=dtype, device=device)

        return [Sample("integer-extremes-pairs", args, call=call, expects=expects)]

    return samples


def half_values(dtype: torch.dtype) -> list[float]:
    """``k + 0.5`` for k in -5..4 and at the top of the dtype's integer range, where representable."""
    if not dtype.is_floating_point:
        return []
    mantissa = {torch.float16: 10, torch.bfloat16: 7, torch.float32: 23, torch.float64: 52}[dtype]
    top = 2.0 ** (mantissa - 1)  # below 2^mantissa every k + 0.5 is representable
    candidates = [k + 0.5 for k in range(-5, 5)] + [top - 0.5, top + 0.5, -(top - 0.5), -(top + 1.5)]
    return [v for v in candidates if _in(dtype, [v])[0] == v]


def half_quotients(dtype: torch.dtype) -> tuple[list, list]:
    """(x, y) with x / y exactly k + 0.5, every sign combination (floats and integers alike)."""
    xs, ys = [], []
    for x, y in ((5, 2), (1, 2), (7, 2), (3, 2), (9, 6), (15, 10)):
        for sx, sy in ((1, 1), (-1, 1), (1, -1), (-1, -1)):
            xs.append(sx * x)
            ys.append(sy * y)
    if dtype == torch.uint8:
        keep = [i for i in range(len(xs)) if xs[i] > 0 and ys[i] > 0]
        xs, ys = [xs[i] for i in keep], [ys[i] for i in keep]
    return xs, ys


def half_sums(dtype: torch.dtype) -> tuple[list, list]:
    """(a, b) whose exact sum lies half-way between two neighbours in ``dtype`` (fp16, bf16, fp32):
    round-to-nearest-even picks the even one, once up and once down, for both signs."""
    if dtype not in _LOW_PRECISION:
        return [], []
    a_values, b_values = [], []
    for base in _in(dtype, [1.0, 1.5, 3.0, 100.0]):
        ulp = _ulp(base, dtype)
        for a in (base, base + ulp):  # an even then an odd last mantissa bit: the tie rounds down, then up
            for sign in (1.0, -1.0):
                a_values.append(sign * a)
                b_values.append(sign * ulp / 2)
    return _in(dtype, a_values), _in(dtype, b_values)


def exact_half_samples(call=None, kind="values", expects=None, kwargs=None):
    """Exact halves for every rounding rule.

    kind "values": ``call(x)`` over :func:`half_values` (round, floor, ceil, trunc, float -> int);
    "quotients": ``call(x, y)`` over :func:`half_quotients` (div with rounding_mode None, "trunc",
    "floor": pass it in kwargs); "sums": ``call(a, b)`` over :func:`half_sums` (the rounding of an fp32
    result to fp16/bf16, or of an fp32 sum)."""
    kwargs = dict(kwargs or {})

    def samples(dtype, device, quick):
        if kind == "values":
            values = half_values(dtype)
            if not values:
                return []
            return [Sample("exact-halves", lambda: (torch.tensor(values, dtype=dtype, device=device),), kwargs,
                           call=call, expects=expects)]
        if kind == "quotients":
            if dtype == torch.bool:
                return []
            x, y = half_quotients(dtype)
            return [Sample("exact-half-quotients", lambda: (torch.tensor(x, dtype=dtype, device=device),
                                                            torch.tensor(y, dtype=dtype, device=device)), kwargs,
                           call=call, expects=expects)]
        a, b = half_sums(dtype)
        if not a:
            return []
        return [Sample("exact-half-sums", lambda: (torch.tensor(a, dtype=dtype, device=device),
                                                   torch.tensor(b, dtype=dtype, device=device)), kwargs,
                       call=call, expects=expects)]

    return samples
