"""How sure a difference between systems is, over training runs (seeds) and test sentences, and how large a
difference a run can detect.

A comparison's difference is a signed sum of systems' mean scores over their runs: A - B, or an unk gain against
another ((A.unk - A) - (B.unk - B)). Each system contributes its own part, computed run by run (for an unk gain the
two fields of the same run). Two sources of variance separate the difference from the techniques' true one:

- **seeds**: each system's part varies between its training runs. Three seeds estimate that variance from two
  degrees of freedom, too few for p-values small enough for Holm's adjustment to trust. So each system's seed
  variance is moderated towards what the other systems of the same table, test set and quantity show (the empirical
  Bayes method of Smyth 2004, limma's ``squeezeVar``): a prior (d0 degrees of freedom around s0^2) is fitted to
  the systems' variances, and each system's moderated variance is (d0 s0^2 + d s^2) / (d0 + d) on d0 + d degrees of
  freedom (at most the pool's own). Systems that vary alike between seeds borrow strength from each other (d0
  large); systems that do not keep nearly their own estimate (d0 small). Systems are taken as independent between
  seeds (a seed of two different models moving together would make this conservative).
- **test sentences**: the part of the sentence bootstrap's variance that all runs share (sentences hard for one
  system and easy for the other whatever the seed). The bootstrap of the mean of a system's runs also holds each
  run's own sentence noise (a seed translating a sentence well by chance), which the variance between seeds already
  counts; it is estimated from the runs' departures from their mean on the same resamples and taken out.

The difference D has variance A + S (A: the shared sentence part, known from thousands of resampled sentences; S: the
moderated seed part on nu degrees of freedom, the fewest of its systems': Hsu's conservative choice). Its interval
and p-values are those of the generalised pivotal quantity (Weerahandi 1993; a fiducial interval)
D - Z sqrt(A + S nu / U), Z standard normal, U chi-square on nu degrees of freedom: exact when either part vanishes
(the normal; Student's t on nu), never anti-conservative between, at any level, which Holm's adjustment needs
(Welch-Satterthwaite's plug-in degrees of freedom are not: a seed variance that comes out small by chance also buys
many degrees of freedom, and its far tails are too light). docs/statistics.md has the simulation that shows both
(tests/test_coverage.py).

A comparison with a single run on either side has no spread between seeds to measure: its interval is the paired
sentence bootstrap's percentile interval, as sacreBLEU's paired bootstrap reads it, and its verdict says "single run".

The smallest difference a run could detect (80% power for the two-sided 5% test) and the number of seeds a
difference needs come from the same variance, each system's per-run seed variance divided by a projected number of
seeds (:meth:`TwoLevel.min_detectable`, :meth:`TwoLevel.seeds_needed`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy import optimize, special, stats

from .significance import percentile_interval, tail_p_value

ALPHA = 0.05          # the two-sided level of every comparison (its 95% interval)
POWER = 0.80          # the power at which the smallest detectable difference is given
MAX_SEEDS = 1000      # seeds_needed looks no further: a difference that needs more is beyond this test set
NORMAL_DF = 1e4       # above this many degrees of freedom the seed variance counts as known


# -- the seed variance: each system's, moderated by its pool's ------------------------------------------------------
@dataclass(frozen=True)
class SeedPrior:
    """What the systems of one pool (a table's test set and quantity) say about seed variances: ``df`` (d0; inf when
    they are as alike as chance allows) around ``var`` (s0^2), fitted to ``systems`` variances on ``pool_df`` degrees of
    freedom in all."""
    df: float
    var: float
    systems: int
    pool_df: float

    def moderate(self, variance: float, df: float) -> tuple[float, float]:
        """(moderated variance, its degrees of freedom) of a system's seed variance on ``df`` degrees of freedom."""
        if self.systems < 2 or self.df == 0:
            return variance, df
        if math.isinf(self.df):
            return self.var, self.pool_df
        return (self.df * self.var + df * variance) / (self.df + df), min(self.df + df, self.pool_df)


NO_PRIOR = SeedPrior(df=0.0, var=0.0, systems=0, pool_df=0.0)


def fit_prior(variances: Sequence[float], df: float) -> SeedPrior:
    """Smyth's (2004) method of moments on log variances (limma's ``fitFDist``, every variance on ``df`` degrees of
    freedom): log s^2 - digamma(df/2) + log(df/2) has mean log s0^2 - digamma(d0/2) + log(d0/2) and variance
    trigamma(df/2) + trigamma(d0/2). Fewer than two variances (or a zero one): no prior."""
    values = np.asarray([v for v in variances], dtype=np.float64)
    if len(values) < 2 or df <= 0 or np.any(values <= 0):
        return NO_PRIOR
    e = np.log(values) - special.digamma(df / 2) + math.log(df / 2)
    excess = float(np.var(e, ddof=1)) - float(special.polygamma(1, df / 2))
    pool_df = df * len(values)
    if excess <= 0:
        return SeedPrior(df=math.inf, var=float(math.exp(e.mean())), systems=len(values), pool_df=pool_df)
    d0 = 2 * _trigamma_inverse(excess)
    s0 = math.exp(e.mean() + special.digamma(d0 / 2) - math.log(d0 / 2))
    return SeedPrior(df=d0, var=s0, systems=len(values), pool_df=pool_df)


def _trigamma_inverse(x: float) -> float:
    """y with trigamma(y) = x (Newton's method on 1/trigamma, as limma's trigammaInverse)."""
    if x > 1e7:
        return 1 / math.sqrt(x)
    if x < 1e-6:
        return 1 / x
    y = 0.5 + 1 / x
    for _ in range(50):
        tri = float(special.polygamma(1, y))
        step = tri * (1 - tri / x) / float(special.polygamma(2, y))
        y += step
        if -step / y < 1e-8:
            break
    return y


# -- one comparison ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SystemPart:
    """One system's part of a comparison: ``full`` [n_runs], its signed part on the whole test set for each run;
    ``resampled`` [n_runs, n_samples], the same on every resample of the test sentences (all runs of all systems on the
    same resamples); ``prior``, its pool's (:func:`fit_prior`)."""
    full: np.ndarray
    resampled: np.ndarray
    prior: SeedPrior = NO_PRIOR

    @property
    def n_runs(self) -> int:
        return len(self.full)


def estimate(parts: Sequence[SystemPart]) -> "TwoLevel | SentenceLevel":
    """The difference made of ``parts`` (the sum of each system's mean over its runs): :class:`TwoLevel` when every
    system has at least two runs, else :class:`SentenceLevel`."""
    if not parts:
        raise ValueError("a comparison needs at least one system")
    delta = float(sum(np.mean(p.full) for p in parts))
    total = np.sum([np.asarray(p.resampled, dtype=np.float64).mean(axis=0) for p in parts], axis=0)
    if min(p.n_runs for p in parts) < 2:
        return SentenceLevel(delta=delta, samples=total)
    run_noise, seed_vars, seed_dfs, runs = [], [], [], []
    for part in parts:
        n = part.n_runs
        resampled = np.asarray(part.resampled, dtype=np.float64)
        # each run's departure from the mean of the runs on the same resamples: its own sentence noise, of which the
        # mean carries 1/n; its variance over the resamples is (n - 1)/n of one run's, hence / (n - 1)
        noise = float(np.var(resampled - resampled.mean(axis=0), axis=1, ddof=1).mean()) / (n - 1)
        variance, df = part.prior.moderate(float(np.var(np.asarray(part.full, dtype=np.float64), ddof=1)), n - 1)
        run_noise.append(noise)
        seed_vars.append(max(variance, n * noise))  # one run's variance is never below its own sentence noise
        seed_dfs.append(df)
        runs.append(n)
    shared = max(0.0, float(np.var(total, ddof=1)) - sum(run_noise))
    return TwoLevel(delta=delta, shared=shared, seed_vars=tuple(seed_vars), runs=tuple(runs),
                    seed_dfs=tuple(seed_dfs))


@dataclass(frozen=True)
class TwoLevel:
    """A difference over seeds and sentences: ``delta``, ``shared`` (A: the sentence variance all runs share),
    ``seed_vars`` (each system's moderated variance of one run between seeds), ``runs`` and ``seed_dfs`` (their
    degrees of freedom)."""
    delta: float
    shared: float
    seed_vars: tuple[float, ...]
    runs: tuple[int, ...]
    seed_dfs: tuple[float, ...]
    method = "two-level"

    @property
    def seed(self) -> float:
        return sum(v / n for v, n in zip(self.seed_vars, self.runs))

    @property
    def df(self) -> float:
        return min(self.seed_dfs)

    @property
    def variance(self) -> float:
        return self.shared + self.seed

    @property
    def interval(self) -> tuple[float, float]:
        pivot = _Pivot(self.shared, self.seed, self.df)
        return self.delta - pivot.quantile(1 - ALPHA / 2), self.delta - pivot.quantile(ALPHA / 2)

    def p_value(self, threshold: float, side: str) -> float:
        """Two-sided-equivalent p-value that the difference lies above (``side='above'``) or below (``'below'``)
        ``threshold``: twice the fiducial probability of the other side, capped at 1; at most 0.05 exactly when the
        95% interval lies wholly on that side."""
        pivot = _Pivot(self.shared, self.seed, self.df)
        beyond = self.delta - threshold if side == "above" else threshold - self.delta
        return min(1.0, 2.0 * pivot.sf(beyond))

    def min_detectable(self, n_runs: int | None = None) -> float:
        """The smallest distance from the threshold that a two-sided 5% test detects with 80% power: at this run's
        variance, or (``n_runs``) with every system trained with that many seeds (its pool's degrees of freedom
        growing alike)."""
        if n_runs is None:
            pivot = _Pivot(self.shared, self.seed, self.df)
        else:
            seed = sum(v / n_runs for v in self.seed_vars)
            df = min(d - (n - 1) + (n_runs - 1) for d, n in zip(self.seed_dfs, self.runs))
            pivot = _Pivot(self.shared, seed, max(df, 1.0))
        return pivot.quantile(1 - ALPHA / 2) + pivot.quantile(POWER)

    def seeds_needed(self, effect: float) -> int | None:
        """The fewest seeds (each system trained that often) with which a difference ``effect`` away from the
        threshold is detected with 80% power; None when no number up to MAX_SEEDS does (the test set's own variance
        is too large for it)."""
        if effect <= 0 or self.min_detectable(MAX_SEEDS) > effect:
            return None
        low, high = 2, MAX_SEEDS
        while low < high:  # min_detectable falls as seeds are added
            middle = (low + high) // 2
            if self.min_detectable(middle) <= effect:
                high = middle
            else:
                low = middle + 1
        return low


@dataclass(frozen=True)
class SentenceLevel:
    """A difference of single runs: the paired sentence bootstrap's ``samples`` of it (sacreBLEU's resampling)."""
    delta: float
    samples: np.ndarray
    method = "sentence"
    df = math.inf

    @property
    def variance(self) -> float:
        return float(np.var(self.samples, ddof=1))

    @property
    def interval(self) -> tuple[float, float]:
        return percentile_interval(self.samples)

    def p_value(self, threshold: float, side: str) -> float:
        return tail_p_value(self.samples, threshold, side)

    def min_detectable(self, n_runs: int | None = None) -> float:
        """The smallest difference these models' test-set variance lets the test detect with 80% power; the variance
        between seeds is not measured, so for the techniques this is a lower bound."""
        return (stats.norm.ppf(1 - ALPHA / 2) + stats.norm.ppf(POWER)) * math.sqrt(self.variance)

    def seeds_needed(self, effect: float) -> None:
        return None  # one run: the spread between seeds is not measured


# -- the generalised pivotal quantity ------------------------------------------------------------------------------
class _Pivot:
    """The distribution of Z sqrt(shared + seed * df / U) (Z standard normal, U chi-square on ``df``): a scale mixture
    of normals, integrated over log U on a fine grid (its density falls off exponentially on both sides, so the
    trapezoid rule is accurate to far below the p-values Holm's adjustment reads)."""

    def __init__(self, shared: float, seed: float, df: float):
        if seed <= 0 or df >= NORMAL_DF:
            self.scales, self.weights = np.array([math.sqrt(shared + seed)]), np.array([1.0])
        else:
            log_u, self.weights = _log_chi2_grid(float(df))
            self.scales = np.sqrt(shared + seed * df * np.exp(-log_u))

    def sf(self, x: float) -> float:
        """P(pivot > x)."""
        if not np.any(self.scales > 0):
            return 0.0 if x >= 0 else 1.0
        return float(np.dot(self.weights, special.ndtr(-x / self.scales)))

    def quantile(self, p: float) -> float:
        if not np.any(self.scales > 0) or p == 0.5:
            return 0.0
        bound = float(self.scales.max()) * 40 + 1.0
        return float(optimize.brentq(lambda x: self.sf(x) - (1 - p), -bound, bound, xtol=1e-12, rtol=1e-12))


def _log_chi2_grid(df: float, points: int = 800) -> tuple[np.ndarray, np.ndarray]:
    """A grid over log U, U chi-square on ``df``, and each point's share of its density (trapezoid weights). The
    density of log U is proportional to exp(df s / 2 - e^s / 2): it falls as e^(df s / 2) to the left, which the
    grid follows until it is below 1e-17."""
    centre = math.log(df)
    low = centre - max(80.0 / df, 12.0 * math.sqrt(2.0 / df))
    high = centre + 12.0 * math.sqrt(2.0 / df) + 4.0
    grid = np.linspace(low, high, points)
    log_density = df / 2 * grid - np.exp(grid) / 2
    weights = np.exp(log_density - log_density.max())
    weights[[0, -1]] *= 0.5
    return grid, weights / weights.sum()
