"""Judging random results: statistical tests with a stated false-failure rate.

A random operator's numbers differ from ATen's by nature, so its conformance case is not compared with
the float64 oracle. Its sample carries a :class:`Draw`: a function that says whether gems' outputs are a
plausible draw of the operator's distribution, given the inputs. The conformance runner adds what is
not statistical (gems.testing.conformance): results of ATen's shapes, dtypes and strides, the same
numbers again under the same seed, other numbers on the next call, and the proof that gems ran.

False-failure rate. A correct implementation fails a case with probability at most
:data:`FALSE_FAILURE_RATE` (1e-6). A case runs at most :data:`TESTS_PER_CASE` statistical tests, each
at ``ALPHA = 1e-6 / 8`` (Bonferroni: the probabilities of the tests' false failures add up to at most
1e-6); :class:`Verdict` counts them and refuses a ninth. Every bound below holds for any sample size
(no asymptotic approximation):

- distribution (Kolmogorov-Smirnov): by the Dvoretzky-Kiefer-Wolfowitz inequality with Massart's
  constant, P(sup |F_n - F| > eps) <= 2 exp(-2 n eps^2) for any F, so eps = sqrt(ln(2 / ALPHA) / (2n)).
  Rounding to the result dtype and fp32 arithmetic move each value a little: each observed value x
  stands for an unrounded draw somewhere in [x - err, x + err] (err: one ulp of the dtype plus the
  computation's error), and the test bounds the empirical CDF of the unrounded draws from both sides;
- the mean of bounded values (uniform, Bernoulli, keep ratios, category frequencies): Hoeffding,
  P(|mean - mu| >= t) <= 2 exp(-2 n t^2 / width^2), which also holds for sampling without replacement
  (randperm) and for independent values of different means (bernoulli with a tensor p);
- the mean and second moment of standard normal values: the mean is N(0, 1/n) exactly; the sum of
  squares is chi-square with n degrees of freedom, bounded by Laurent and Massart's inequalities
  P(X - n >= 2 sqrt(n x) + 2x) <= e^-x and P(n - X >= 2 sqrt(n x)) <= e^-x;
- the mean of exponential values: Chernoff's bounds for a Gamma(n) sum,
  P(mean >= mu (1 + t)) <= exp(-n (t - ln(1 + t))), P(mean <= mu (1 - t)) <= exp(-n (-t - ln(1 - t))).

Multinomial frequencies are tested per category (Hoeffding, split over the categories) rather than by
Pearson's chi-square statistic, whose chi-square law is only asymptotic and has no guaranteed accuracy
this far in its tail when expected counts are small.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from gems.testing.compare import ulp

FALSE_FAILURE_RATE = 1e-6
TESTS_PER_CASE = 8
ALPHA = FALSE_FAILURE_RATE / TESTS_PER_CASE
# The absolute error of an fp32 computation of a standard draw (Box-Muller with the GPU's approximate
# log, sqrt, sin and cos: about 5.8 x 2^-20 at the largest radius), and its relative error.
_FP32_ABS_ERR, _FP32_REL_ERR = 2.0**-14, 2.0**-18
_FP64_ABS_ERR, _FP64_REL_ERR = 2.0**-40, 2.0**-44


@dataclass(frozen=True)
class Draw:
    """How a random sample is judged (``Sample.random``).

    check(args, kwargs, outputs) -> '' when the outputs (CPU copies) are a plausible draw given the
        inputs (CPU copies of the sample's arguments), else what is wrong.
    varies: the next call must draw (advance a generator) and give other values; False where the law
        allows one value only (p = 0 or 1, std = 0), which ATen may return without drawing.
    """

    check: Callable
    varies: bool = True


class Verdict:
    """The tests of one case, at most TESTS_PER_CASE of them, each at ALPHA; exact checks are free."""

    def __init__(self):
        self.problems: list[str] = []
        self.tests = 0

    def alpha(self) -> float:
        self.tests += 1
        if self.tests > TESTS_PER_CASE:
            raise AssertionError(f"a case may run at most {TESTS_PER_CASE} statistical tests")
        return ALPHA

    def require(self, ok: bool, message: str) -> None:
        if not ok:
            self.problems.append(message)

    def message(self) -> str:
        return "; ".join(self.problems)


def dkw_epsilon(n: int, alpha: float) -> float:
    return math.sqrt(math.log(2 / alpha) / (2 * n))


def hoeffding(n: int, alpha: float, width: float = 1.0) -> float:
    """t with P(|mean of n values in an interval of ``width`` - their mean| >= t) <= alpha."""
    return width * math.sqrt(math.log(2 / alpha) / (2 * n))


def value_error(x: torch.Tensor, dtype: torch.dtype, scale) -> torch.Tensor:
    """How far each value (float64) may be from its unrounded draw: one ulp of ``dtype`` plus the error of
    computing it in fp32 (fp64 for float64) at ``scale`` (a number or a tensor: the law's spread)."""
    wide = dtype == torch.float64
    abs_err, rel_err = (_FP64_ABS_ERR, _FP64_REL_ERR) if wide else (_FP32_ABS_ERR, _FP32_REL_ERR)
    rounding = ulp(x, dtype) if dtype.is_floating_point else torch.zeros_like(x)
    return rounding + abs_err * scale + rel_err * x.abs()


def ks(verdict: Verdict, lo: torch.Tensor, hi: torch.Tensor, cdf: Callable, what: str,
       cdf_below: Callable | None = None) -> None:
    """Kolmogorov-Smirnov by DKW for values whose unrounded draws lie in [lo, hi] (float64, flat).
    cdf(t) = P(X <= t); cdf_below(t) = P(X < t), for a law with atoms (integers), else cdf."""
    n = lo.numel()
    if n == 0:
        return
    eps = dkw_epsilon(n, verdict.alpha())
    rank = torch.arange(n, dtype=torch.float64)
    above = ((rank + 1) / n - cdf(hi.sort().values)).max().item()  # more values below t than F(t) allows
    below = ((cdf_below or cdf)(lo.sort().values) - rank / n).max().item()  # fewer
    worst = max(above, below)
    verdict.require(worst <= eps, f"{what}: the values' distribution is {worst:.4f} from the law's (KS), more "
                                  f"than the bound {eps:.4f} for {n} values")


def bounded_mean(verdict: Verdict, values: torch.Tensor, expected: float, width: float, what: str,
                 slack: float = 0.0) -> None:
    """The mean of values in an interval of ``width`` is within Hoeffding's bound (plus ``slack``, how far
    rounding may have moved the mean) of ``expected``."""
    n = values.numel()
    if n == 0:
        return
    t = hoeffding(n, verdict.alpha(), width) + slack
    mean = values.double().mean().item()
    verdict.require(abs(mean - expected) <= t, f"{what}: mean {mean:.5g}, expected {expected:.5g} +- {t:.3g} "
                                              f"({n} values)")


def _solve(f: Callable, lo: float, hi: float) -> float:
    """The x in [lo, hi] where the decreasing-then-crossing f changes sign (bisection)."""
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) > 0 else (lo, mid)
    return hi


def normal_quantile(alpha: float) -> float:
    """z with P(|Z| > z) = alpha for a standard normal Z."""
    return _solve(lambda z: math.erfc(z / math.sqrt(2)) - alpha, 0.0, 40.0)


def standard_normal_moments(verdict: Verdict, z: torch.Tensor, slack: float, what: str) -> None:
    """Mean and second moment of values that should be N(0, 1), each within ``slack`` of its draw."""
    n = z.numel()
    if n == 0:
        return
    bound = normal_quantile(verdict.alpha()) / math.sqrt(n) + slack
    mean = z.mean().item()
    verdict.require(abs(mean) <= bound, f"{what}: standardized mean {mean:.4g}, expected 0 +- {bound:.3g}")
    x = math.log(2 / verdict.alpha())
    low, high = max(n - 2 * math.sqrt(n * x), 0.0) / n, (n + 2 * math.sqrt(n * x) + 2 * x) / n
    rms = z.square().mean().sqrt().item()
    verdict.require(math.sqrt(low) - slack <= rms <= math.sqrt(high) + slack,
                    f"{what}: standardized root mean square {rms:.4g}, expected 1 within "
                    f"[{math.sqrt(low) - slack:.4g}, {math.sqrt(high) + slack:.4g}]")


def exponential_mean(verdict: Verdict, x: torch.Tensor, lambd: float, slack: float, what: str) -> None:
    """The mean of Exp(lambd) values (each within ``slack`` of its draw on average) by Chernoff's bounds."""
    n = x.numel()
    if n == 0:
        return
    log_half = math.log(verdict.alpha() / 2)
    up = _solve(lambda t: -n * (t - math.log1p(t)) - log_half, 0.0, 1e6)
    down = _solve(lambda t: -n * (-t - math.log1p(-t)) - log_half, 0.0, 1.0 - 1e-15)
    mu, mean = 1.0 / lambd, x.mean().item()
    low, high = mu * (1 - down) - slack, mu * (1 + up) + slack
    verdict.require(low <= mean <= high, f"{what}: mean {mean:.5g}, expected within [{low:.5g}, {high:.5g}]")


def frequencies(verdict: Verdict, drawn: torch.Tensor, probs: torch.Tensor, what: str) -> None:
    """Each category's frequency among ``drawn`` (int64 category indices, iid with ``probs``) is within
    Hoeffding's bound of its probability; the test's alpha is split over the categories."""
    n, k = drawn.numel(), probs.numel()
    if n == 0:
        return
    t = hoeffding(n, verdict.alpha() / k)
    freq = torch.bincount(drawn.flatten(), minlength=k).double() / n
    worst = (freq - probs).abs()
    i = int(worst.argmax())
    verdict.require(worst[i].item() <= t, f"{what}: category {i} drawn with frequency {freq[i].item():.4g}, its "
                                          f"probability is {probs[i].item():.4g} +- {t:.3g} ({n} draws)")


def normal_cdf(z: torch.Tensor) -> torch.Tensor:
    return 0.5 * torch.special.erfc(-z / math.sqrt(2))


# --------------------------------------------------------------------------- laws


def _rounded(value: float, dtype: torch.dtype) -> float:
    return torch.tensor(value, dtype=torch.float64).to(dtype).double().item()


def _finite(verdict: Verdict, x: torch.Tensor, what: str) -> bool:
    bad = int((~x.isfinite()).sum())
    verdict.require(bad == 0, f"{what}: {bad} of {x.numel()} values are not finite")
    return bad == 0


def uniform_law(verdict: Verdict, values: torch.Tensor, low: float, high: float, what: str = "uniform",
                reversed_bound: bool = True) -> None:
    """U[low, high) in the values' dtype: every value in [low, high) as rounded to it, the distribution
    (KS) and the mean. reversed_bound: a value that rounds to ``high`` became ``low`` (ATen's uniform_);
    else it stays, and ``high`` itself is in range (rrelu's slopes)."""
    dtype, x = values.dtype, values.detach().double().flatten()
    if not _finite(verdict, x, what) or x.numel() == 0:
        return
    lo_c, hi_c = _rounded(low, dtype), _rounded(high, dtype)
    if lo_c == hi_c:
        verdict.require(bool((x == lo_c).all()), f"{what}: from == to = {lo_c} but other values were drawn")
        return
    outside = int(((x < lo_c) | (x > hi_c) | ((x == hi_c) & reversed_bound)).sum())
    verdict.require(outside == 0, f"{what}: {outside} of {x.numel()} values outside [{lo_c}, {hi_c})")
    width = high - low
    err = value_error(x, dtype, width)
    # With the reversed bound, a value equal to `from` may have been drawn anywhere up to `to`.
    moved = (x == lo_c) & reversed_bound
    hi = torch.where(moved, torch.full_like(x, high), x + err)
    ks(verdict, x - err, hi, lambda t: ((t - low) / width).clamp(0, 1), what)
    slack = err.mean().item() + moved.double().mean().item() * width
    bounded_mean(verdict, x, (low + high) / 2, width, what, slack)


def normal_law(verdict: Verdict, values: torch.Tensor, mean, std, what: str = "normal") -> None:
    """N(mean, std^2), mean and std numbers or tensors (float64, broadcastable): values where std is 0 are
    the mean exactly (rounded); the others, standardized, follow N(0, 1): KS, mean and second moment."""
    dtype, x = values.detach().dtype, values.detach().double()
    mean = torch.as_tensor(mean, dtype=torch.float64).expand(x.shape)
    std = torch.as_tensor(std, dtype=torch.float64).expand(x.shape)
    if not _finite(verdict, x.flatten(), what):
        return
    point = std == 0
    wrong = int((x[point] != mean[point].to(dtype).double()).sum())
    verdict.require(wrong == 0, f"{what}: {wrong} values with std 0 differ from their mean")
    x, mean, std = x[~point], mean[~point], std[~point]
    if x.numel() == 0:
        return
    z = (x - mean) / std
    q = value_error(x, dtype, std) / std
    ks(verdict, z - q, z + q, normal_cdf, what)
    standard_normal_moments(verdict, z, q.max().item(), what)


def exponential_law(verdict: Verdict, values: torch.Tensor, lambd: float, what: str = "exponential") -> None:
    """Exp(lambd): values >= 0, the distribution (KS) and the mean."""
    dtype, x = values.dtype, values.detach().double().flatten()
    if not _finite(verdict, x, what) or x.numel() == 0:
        return
    negative = int((x < 0).sum())
    verdict.require(negative == 0, f"{what}: {negative} negative values")
    err = value_error(x, dtype, 1.0 / lambd)
    ks(verdict, x - err, x + err, lambda t: 1 - torch.exp(-lambd * t.clamp_min(0)), what)
    exponential_mean(verdict, x, lambd, err.mean().item(), what)


def integer_law(verdict: Verdict, values: torch.Tensor, low: int, high: int, what: str = "integers") -> None:
    """Uniform on the integers [low, high): every value an integer in range, the distribution (KS)."""
    x = values.detach()
    if x.dtype.is_floating_point:
        if not _finite(verdict, x.double().flatten(), what):
            return
        verdict.require(bool((x == x.round()).all()), f"{what}: values that are not integers")
    wide = x.to(torch.int64).flatten()
    outside = int(((wide < low) | (wide > high - 1)).sum())
    verdict.require(outside == 0, f"{what}: {outside} of {wide.numel()} values outside [{low}, {high})")
    span = float(high - low)
    offset = wide.double() - float(low)
    ks(verdict, offset, offset, lambda t: ((t.floor() + 1) / span).clamp(0, 1), what,
       lambda t: (t.ceil() / span).clamp(0, 1))


def bernoulli_law(verdict: Verdict, values: torch.Tensor, p, what: str = "bernoulli") -> None:
    """Each value 0 or 1, 1 with probability p (a number or a float64 tensor): exactly 0 where p is 0 and
    1 where p is 1, and the count of ones within Hoeffding's bound of the sum of p."""
    x = values.detach().double()
    p = torch.as_tensor(p, dtype=torch.float64).expand(x.shape)
    verdict.require(bool(((x == 0) | (x == 1)).all()), f"{what}: values other than 0 and 1")
    wrong = int((x[p == 0] != 0).sum() + (x[p == 1] != 1).sum())
    verdict.require(wrong == 0, f"{what}: {wrong} values contradict a probability of 0 or 1")
    bounded_mean(verdict, x.flatten(), p.mean().item(), 1.0, what)
