"""How sure a difference between systems is, over training runs (seeds) and test sentences, and how large a
difference a run can detect.
Details: docs/internals/scoring.md."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Sequence

import numpy as np
from scipy import optimize, special, stats

from .significance import percentile_interval, tail_p_value

ALPHA = 0.05  # the two-sided level of every comparison (its 95% interval)
POWER = 0.80  # the power at which the smallest detectable difference is given
MAX_SEEDS = 1000  # seeds_needed looks no further: a difference that needs more is beyond this test set
NORMAL_DF = 1e4  # above this many degrees of freedom the seed variance counts as known
MIXTURE_FLOOR = 1e-6  # a combination of pool and own variances less probable than this is left out of the pivot


# -- the seed variance: each system's, moderated by its pool's ------------------------------------------------------
# A system's seed variance is its pool's moderated one with a probability that falls with the evidence that it
# varies more (ODD_EVIDENCE: below it, linearly in the upper-tail probability of its variance under the pool's prior),
# and its own (unmoderated, on its own degrees of freedom) with the rest, never less than OWN_SHARE: the pivot is the
# mixture of the two. Its protection grows smoothly with the evidence, with no test whose misses borrow the pool's
# variance, and the own share keeps every p-value within reach of the system's own at the small levels Holm's
# adjustment reads (docs/statistics.md, "A system that varies more than its pool"; the figures chosen by simulation).
ODD_EVIDENCE = 0.15
OWN_SHARE = 0.02


def _log_ratio_sf(ratio: float, df: float, prior_df: float) -> float:
    """log P(s^2 / s0^2 > ratio) when s^2 (on ``df`` degrees of freedom) is drawn around a variance from the scaled
    inverse chi-square on ``prior_df`` around s0^2: F(df, prior_df) (chi-square on df over df when prior_df is inf)."""
    if math.isinf(prior_df) or prior_df >= NORMAL_DF:
        return float(stats.chi2.logsf(ratio * df, df))
    return float(stats.f.logsf(ratio, df, prior_df))


@dataclass(frozen=True)
class SeedPrior:
    """What the other systems of one pool (a table's test set and quantity) say about one system's seed variance:
    ``df`` (d0; inf when they are as alike as chance allows) around ``var`` (s0^2), fitted to ``systems`` variances
    on ``pool_df`` degrees of freedom in all."""

    df: float
    var: float
    systems: int
    pool_df: float

    @property
    def usable(self) -> bool:
        return self.systems >= 2 and self.df > 0 and self.var > 0

    def pool_weight(self, variance: float, df: float) -> float:
        """The share of the pool's moderated variance in a system's whose own is ``variance`` on ``df`` degrees of
        freedom: 1 - OWN_SHARE while the variance's upper tail under the prior is at least ODD_EVIDENCE, falling to 0
        with it below; 0 without a pool to borrow from."""
        if not self.usable or df <= 0:
            return 0.0
        if variance <= 0:
            return 1.0 - OWN_SHARE
        tail = math.exp(_log_ratio_sf(variance / self.var, df, self.df))
        return (1.0 - OWN_SHARE) * min(1.0, tail / ODD_EVIDENCE)

    def moderate(self, variance: float, df: float) -> tuple[float, float]:
        """(moderated variance, its degrees of freedom) of a system's seed variance on ``df`` degrees of freedom, as
        one of the pool's; its own without a pool."""
        if not self.usable:
            return variance, df
        if math.isinf(self.df):
            return self.var, self.pool_df
        return (self.df * self.var + df * variance) / (self.df + df), min(self.df + df, self.pool_df)


NO_PRIOR = SeedPrior(df=0.0, var=0.0, systems=0, pool_df=0.0)


@dataclass(frozen=True)
class SeedPool:
    """The seed variances of one pool's systems (``variances``: {system: variance}, each on ``df`` degrees of
    freedom). Each system's prior is fitted to the others' (:meth:`prior_for`), so that its own variance is counted
    once, in the mixture's weight and in the moderation."""

    variances: dict
    df: float

    @cached_property
    def _priors(self) -> dict:
        """Each system's prior, fitted to the others' variances, each weighed by its pool weight (from a first,
        unweighted fit to the others'): a system that varies more neither borrows the pool's
        variance nor widens the prior the others borrow from (limma's robust fit protects hypervariable genes the
        like way: Phipson et al. 2016)."""
        names = list(self.variances)

        def others(system, weights=None):
            rest = [name for name in names if name != system]
            return fit_prior(
                [self.variances[n] for n in rest], self.df, None if weights is None else [weights[n] for n in rest]
            )

        first = {name: others(name).pool_weight(self.variances[name], self.df) for name in names}
        return {name: others(name, first) for name in names}

    @cached_property
    def prior(self) -> SeedPrior:
        """The prior fitted to every system of the pool (for a system not in it)."""
        return fit_prior(list(self.variances.values()), self.df)

    def prior_for(self, system) -> SeedPrior:
        """``system``'s prior: fitted to the pool's other systems (all of the pool for a system not in it)."""
        return self._priors.get(system, self.prior)

    def weight(self, system) -> float:
        """``system``'s share of its pool's moderated variance (:meth:`SeedPrior.pool_weight`)."""
        return self.prior_for(system).pool_weight(self.variances[system], self.df)


def fit_pool(variances: dict, df: float) -> SeedPool:
    """The pool of ``variances`` ({system: its variance between seeds}, each on ``df`` degrees of freedom)."""
    return SeedPool(variances=dict(variances), df=float(df))


def fit_prior(variances: Sequence[float], df: float, weights: Sequence[float] | None = None) -> SeedPrior:
    """Smyth's (2004) method of moments on log variances (limma's ``fitFDist``, every variance on ``df`` degrees of
    freedom): log s^2 - digamma(df/2) + log(df/2) has mean log s0^2 - digamma(d0/2) + log(d0/2) and variance
    trigamma(df/2) + trigamma(d0/2). ``weights``: each variance's share in the moments (its probability of being of
    the pool: a system that varies more counts less), default all 1. Fewer than two variances (or a zero one, or
    less than two systems' weight): no prior."""
    values = np.asarray([v for v in variances], dtype=np.float64)
    w = np.ones(len(values)) if weights is None else np.asarray(weights, dtype=np.float64)
    if len(values) < 2 or df <= 0 or np.any(values <= 0) or w.sum() < 2:
        return NO_PRIOR
    e = np.log(values) - special.digamma(df / 2) + math.log(df / 2)
    mean = float(np.dot(w, e) / w.sum())
    spread = float(np.dot(w, (e - mean) ** 2) / (w.sum() - np.dot(w, w) / w.sum()))  # unbiased for weights
    excess = spread - float(special.polygamma(1, df / 2))
    systems = int(round(float(w.sum())))
    pool_df = df * systems
    if excess <= 0:
        return SeedPrior(df=math.inf, var=float(math.exp(mean)), systems=systems, pool_df=pool_df)
    d0 = 2 * _trigamma_inverse(excess)
    s0 = math.exp(mean + special.digamma(d0 / 2) - math.log(d0 / 2))
    return SeedPrior(df=d0, var=s0, systems=systems, pool_df=pool_df)


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
    run_noise, seed_vars, seed_dfs, own_vars, weights, runs = [], [], [], [], [], []
    for part in parts:
        n = part.n_runs
        resampled = np.asarray(part.resampled, dtype=np.float64)
        # each run's departure from the mean of the runs on the same resamples: its own sentence noise, of which the
        # mean carries 1/n; its variance over the resamples is (n - 1)/n of one run's, hence / (n - 1)
        noise = float(np.var(resampled - resampled.mean(axis=0), axis=1, ddof=1).mean()) / (n - 1)
        observed = float(np.var(np.asarray(part.full, dtype=np.float64), ddof=1))
        variance, df = part.prior.moderate(observed, n - 1)
        floor = n * noise  # one run's variance is never below its own sentence noise
        run_noise.append(noise)
        seed_vars.append(max(variance, floor))
        seed_dfs.append(df)
        own_vars.append(max(observed, floor))
        weights.append(part.prior.pool_weight(observed, n - 1))
        runs.append(n)
    shared = max(0.0, float(np.var(total, ddof=1)) - sum(run_noise))
    return TwoLevel(
        delta=delta,
        shared=shared,
        seed_vars=tuple(seed_vars),
        runs=tuple(runs),
        seed_dfs=tuple(seed_dfs),
        own=tuple(w == 0.0 for w in weights),
        own_vars=tuple(own_vars),
        pool_weights=tuple(weights),
    )


@dataclass(frozen=True)
class TwoLevel:
    """A difference over seeds and sentences: ``delta``, ``shared`` (A: the sentence variance all runs share),
    ``seed_vars`` (each system's variance of one run between seeds, moderated by its pool's), ``runs`` and
    ``seed_dfs`` (their degrees of freedom), ``own`` (for each system, whether its variance is its own estimate
    whatever the pool says: a system without a pool; default: none), ``own_vars`` (each system's own, unmoderated
    variance, on runs - 1 degrees of freedom) and ``pool_weights`` (its share of the pool's variance, the rest its
    own: the pivot is the mixture over which systems take which; default: every one the pool's)."""

    delta: float
    shared: float
    seed_vars: tuple[float, ...]
    runs: tuple[int, ...]
    seed_dfs: tuple[float, ...]
    own: tuple[bool, ...] = ()
    own_vars: tuple[float, ...] = ()
    pool_weights: tuple[float, ...] = ()
    method = "two-level"

    @property
    def _alone(self) -> tuple[bool, ...]:
        return self.own or (False,) * len(self.seed_vars)

    @property
    def _weights(self) -> tuple[float, ...]:
        return self.pool_weights or (1.0,) * len(self.seed_vars)

    @property
    def outlying(self) -> tuple[bool, ...]:
        """For each system with a pool, whether it takes more of its own variance than of its pool's."""
        return tuple(not alone and w < 0.5 for alone, w in zip(self._alone, self._weights))

    def _patterns(self) -> list[tuple[float, tuple[bool, ...]]]:
        """[(probability, which systems take their own variance)]: every combination the pool weights leave open,
        those below MIXTURE_FLOOR dropped (their share cannot move a p-value Holm reads)."""
        patterns = [(1.0, ())]
        for alone, w in zip(self._alone, self._weights):
            options = [(1.0, True)] if alone else [(w, False), (1.0 - w, True)]
            patterns = [(p * q, pattern + (o,)) for p, pattern in patterns for q, o in options if p * q > MIXTURE_FLOOR]
        total = sum(p for p, _ in patterns)
        return [(p / total, pattern) for p, pattern in patterns]

    def _groups(self, own: tuple[bool, ...], n_runs: int | None = None) -> list[tuple[float, float]]:
        """The seed part as independent pieces [(variance of the mean, degrees of freedom)] when the systems ``own``
        says take their own variance: the systems that borrow from a pool share its prior, hence one piece (on the
        fewest of their degrees of freedom: Hsu); a system with its own variance is a piece of its own. ``n_runs``:
        projected to every system trained that often (its degrees of freedom growing by the runs added)."""
        own_vars = self.own_vars or self.seed_vars
        pooled, groups = [0.0, math.inf], []
        for pooled_var, own_var, n, df, alone in zip(self.seed_vars, own_vars, self.runs, self.seed_dfs, own):
            variance, df = (own_var, n - 1) if alone and self.own_vars else (pooled_var, df)
            runs, df = (n, df) if n_runs is None else (n_runs, max(df - (n - 1) + (n_runs - 1), 1.0))
            if alone:
                groups.append((variance / runs, df))
            else:
                pooled = [pooled[0] + variance / runs, min(pooled[1], df)]
        return groups + ([tuple(pooled)] if pooled[0] > 0 or not groups else [])

    def _pivot(self, n_runs: int | None = None) -> "_Mixture":
        if n_runs is None:
            return self._measured_pivot
        return self._mixture(n_runs)

    @cached_property
    def _measured_pivot(self) -> "_Mixture":
        return self._mixture(None)

    def _mixture(self, n_runs: int | None) -> "_Mixture":
        return _Mixture([(p, _Pivot(self.shared, self._groups(own, n_runs))) for p, own in self._patterns()])

    @property
    def seed(self) -> float:
        """The seed part of the variance: each system's pool and own variance weighed by its pool weight."""
        own_vars = self.own_vars or self.seed_vars
        return sum(
            (o if alone else w * v + (1 - w) * o) / n
            for v, o, w, n, alone in zip(self.seed_vars, own_vars, self._weights, self.runs, self._alone)
        )

    @property
    def df(self) -> float:
        return min(self.seed_dfs)

    @property
    def variance(self) -> float:
        return self.shared + self.seed

    @property
    def interval(self) -> tuple[float, float]:
        half = self._pivot().quantile(1 - ALPHA / 2)  # the pivot is symmetric about 0
        return self.delta - half, self.delta + half

    def p_value(self, threshold: float, side: str) -> float:
        """Two-sided-equivalent p-value that the difference lies above (``side='above'``) or below (``'below'``)
        ``threshold``: twice the fiducial probability of the other side, capped at 1; at most 0.05 exactly when the
        95% interval lies wholly on that side."""
        pivot = self._pivot()
        beyond = self.delta - threshold if side == "above" else threshold - self.delta
        return min(1.0, 2.0 * pivot.sf(beyond))

    def min_detectable(self, n_runs: int | None = None) -> float:
        """The smallest distance from the threshold that a two-sided 5% test detects with 80% power: at this run's
        variance, or (``n_runs``) with every system trained with that many seeds (its pool's degrees of freedom
        growing alike)."""
        pivot = self._pivot(n_runs)
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

    def seeds_needed_range(self, effect: float, low: float = 0.10, high: float = 0.90) -> tuple[int, int | None] | None:
        """How uncertain :meth:`seeds_needed` is: the seeds needed were the seed variance at the ``low`` and ``high``
        percentiles of its chi-square confidence distribution on its degrees of freedom (the true variance
        df s^2 / U, U chi-square on df, with every system's variance scaled alike): (fewest, most), the most None
        where it exceeds MAX_SEEDS. None where :meth:`seeds_needed` is None."""
        needed = self.seeds_needed(effect)
        if needed is None:
            return None
        if self.df >= NORMAL_DF:
            return needed, needed

        def at(quantile: float) -> int | None:
            scale = self.df / float(stats.chi2.ppf(quantile, self.df))
            return replace(
                self,
                seed_vars=tuple(v * scale for v in self.seed_vars),
                own_vars=tuple(v * scale for v in self.own_vars),
            ).seeds_needed(effect)

        return at(1 - low), at(1 - high)  # the low percentile of the variance is the high one of U


@dataclass(frozen=True)
class SentenceLevel:
    """A difference of single runs: the paired sentence bootstrap's ``samples`` of it (sacreBLEU's resampling)."""

    delta: float
    samples: np.ndarray
    method = "sentence"
    df = math.inf
    own: tuple[bool, ...] = ()  # no seed variance is estimated
    outlying: tuple[bool, ...] = ()

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

    def seeds_needed_assuming(self, effect: float, seed_ratio: float) -> int | None:
        """The seeds that would detect a difference ``effect`` away from the threshold with 80% power *if* one run's
        difference varied between seeds ``seed_ratio`` times as much as it varies between test sets (its variance
        over the resampled sentences): an assumption, not a measurement, since one run measures no spread between
        seeds. As :meth:`TwoLevel.seeds_needed` for that seed variance, on n - 1 degrees of freedom at n seeds (no
        pool to moderate it by: an upper figure), with this test set's variance unchanged (its part that each run
        adds alone would shrink with more seeds: an upper figure too). None where ``effect`` <= 0 or no number up to
        MAX_SEEDS would do."""
        if effect <= 0:
            return None
        variance = self.variance
        projected = TwoLevel(
            delta=self.delta, shared=variance, seed_vars=(seed_ratio * variance,), runs=(1,), seed_dfs=(0.0,)
        )
        return projected.seeds_needed(effect)


def seeds_range_text(needed_range: Sequence | None) -> str:
    """A range of seeds needed (:meth:`TwoLevel.seeds_needed_range`) in words: "10-44", "10 to over 1000" where the
    most exceeds MAX_SEEDS; "" without a range."""
    if not needed_range or needed_range[0] is None:
        return ""
    low, high = needed_range
    return f"{low}-{high}" if high is not None else f"{low} to over {MAX_SEEDS}"


# -- the generalised pivotal quantity ------------------------------------------------------------------------------
class _Mixture:
    """A mixture of pivots [(probability, _Pivot)]: the pivot when which systems vary as their pool does is itself
    uncertain (TwoLevel.pool_weights). Symmetric about 0, as each of its pivots is."""

    def __init__(self, parts: Sequence[tuple[float, "_Pivot"]]):
        self.parts = [(p, pivot) for p, pivot in parts if p > 0]
        self.degenerate = all(pivot.degenerate for _, pivot in self.parts)

    def sf(self, x: float) -> float:
        return sum(p * pivot.sf(x) for p, pivot in self.parts)

    def quantile(self, q: float) -> float:
        if len(self.parts) == 1:
            return self.parts[0][1].quantile(q)
        if self.degenerate or q == 0.5:
            return 0.0
        if q < 0.5:
            return -self.quantile(1 - q)
        low, high = 0.0, max(pivot.quantile(q) for _, pivot in self.parts)  # the mixture's lies below its largest
        return float(optimize.brentq(lambda x: self.sf(x) - (1 - q), low, high, xtol=1e-12, rtol=1e-12))


class _Pivot:
    """The distribution of Z sqrt(shared + sum_g seed_g df_g / U_g) (Z standard normal, U_g independent chi-squares
    on df_g, one for each independent piece of the seed variance ``groups`` [(seed_g, df_g)]): a scale mixture of
    normals, integrated over each log U_g on a fine grid (its density falls off exponentially on both sides, so the
    trapezoid rule is accurate to far below the p-values Holm's adjustment reads). A piece with df_g >= NORMAL_DF is
    taken as known."""

    def __init__(self, shared: float, groups: Sequence[tuple[float, float]]):
        known = shared + sum(seed for seed, df in groups if seed <= 0 or df >= NORMAL_DF)
        uncertain = [(seed, df) for seed, df in groups if seed > 0 and df < NORMAL_DF]
        # the grid per piece: 800 points for one, fewer for several, so that their product stays small
        points = 800 if len(uncertain) < 2 else max(48, int(round(10000 ** (1 / len(uncertain)))))
        squares, weights = np.array([known]), np.array([1.0])
        for seed, df in uncertain:
            log_u, piece = _log_chi2_grid(float(df), points)
            squares = (squares[:, None] + (seed * df * np.exp(-log_u))[None, :]).ravel()
            weights = (weights[:, None] * piece[None, :]).ravel()
            keep = weights > 1e-18 * weights.max()  # points that cannot move a probability Holm reads
            squares, weights = squares[keep], weights[keep]
        self.scales, self.weights = np.sqrt(squares), weights / weights.sum()
        self.degenerate = not np.any(self.scales > 0)  # no variance at all: the difference is known

    def sf(self, x: float) -> float:
        """P(pivot > x)."""
        if self.degenerate:
            return 0.0 if x >= 0 else 1.0
        return float(np.dot(self.weights, special.ndtr(-x / self.scales)))

    def quantile(self, p: float) -> float:
        if self.degenerate or p == 0.5:
            return 0.0
        if p < 0.5:  # the pivot is symmetric about 0
            return -self.quantile(1 - p)
        low, high = 0.0, float(np.dot(self.weights, self.scales))  # a bracket, doubled until it holds the quantile
        while self.sf(high) > 1 - p:
            low, high = high, 2 * high
        return float(optimize.brentq(lambda x: self.sf(x) - (1 - p), low, high, xtol=1e-12, rtol=1e-12))


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
