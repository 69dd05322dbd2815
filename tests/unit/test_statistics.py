"""The statistics behind the verdicts: a difference's interval over seeds and test sentences (nmt.scoring.difference) against
scipy's t and normal intervals and hand-made cases, bootstrap p-values, and Holm's adjustment. Its coverage is
tests/studies/test_coverage.py's."""

import math

import numpy as np
import pytest
from scipy import stats

from nmt.report.claims import CONTRADICTED, INCONCLUSIVE, REPRODUCED, SINGLE_RUN, adjust
from nmt.scoring import significance
from nmt.scoring.difference import (
    NO_PRIOR,
    ODD_EVIDENCE,
    OWN_SHARE,
    SystemPart,
    TwoLevel,
    _Pivot,
    estimate,
    fit_pool,
    fit_prior,
)


def test_with_a_single_run_the_interval_is_the_paired_sentence_bootstrap():
    rng = np.random.default_rng(0)
    a, b = rng.normal(30.0, 0.5, (1, 4000)), rng.normal(29.0, 0.5, (3, 4000))
    diff = estimate([SystemPart(full=np.array([30.0]), resampled=a), SystemPart(full=-np.full(3, 29.0), resampled=-b)])
    assert diff.method == "sentence"
    assert diff.interval == significance.percentile_interval(a.mean(axis=0) - b.mean(axis=0))
    assert diff.seeds_needed(1.0) is None  # the spread between seeds is not measured


def test_without_sentence_variance_it_is_the_paired_t_interval_over_seeds():
    """One system's part of a comparison (per-seed differences, say), with every resample of the sentences giving
    each run's own score: Student's t on n - 1 degrees of freedom, as scipy computes it."""
    d = np.array([1.2, 0.4, 2.0, 0.9])
    diff = estimate([SystemPart(full=d, resampled=np.repeat(d[:, None], 1000, axis=1))])
    expected = stats.t.interval(0.95, len(d) - 1, loc=d.mean(), scale=stats.sem(d))
    assert diff.method == "two-level" and diff.df == len(d) - 1
    assert diff.interval == pytest.approx(expected, rel=1e-6)
    t = d.mean() / stats.sem(d)
    assert diff.p_value(0.0, "above") == pytest.approx(2 * stats.t.sf(t, len(d) - 1), rel=1e-6)


def test_without_seed_variance_it_is_the_normal_interval_of_the_shared_sentence_variance():
    rng = np.random.default_rng(1)
    shared = rng.normal(0.0, 0.5, 20000)
    runs = 2.0 + np.repeat(shared[None, :], 3, axis=0)  # three identical runs
    diff = estimate([SystemPart(full=np.full(3, 2.0), resampled=runs)])
    assert diff.seed == pytest.approx(0, abs=1e-20) and diff.shared == pytest.approx(0.25, rel=0.05)
    assert diff.interval == pytest.approx((2.0 - 1.96 * 0.5, 2.0 + 1.96 * 0.5), rel=0.03)


def test_each_runs_own_sentence_noise_is_counted_once():
    """Runs that differ only by their own noise on the sentences: the spread of their whole-test scores and the
    bootstrap of their mean both carry it; the variance of the mean of n runs counts it once (shared + noise / n)."""
    rng = np.random.default_rng(2)
    n_runs, n_sentences, n_samples = 5, 200, 1000
    variances = []
    for _ in range(200):
        sentences = rng.normal(0.0, 1.0, (1, n_sentences)) + rng.normal(0.0, 1.0, (n_runs, n_sentences))
        indices = rng.integers(0, n_sentences, (n_samples, n_sentences))
        diff = estimate([SystemPart(full=sentences.mean(axis=1), resampled=sentences[:, indices].mean(axis=2))])
        variances.append(diff.variance)
    truth = (1.0 + 1.0 / n_runs) / n_sentences
    assert np.mean(variances) == pytest.approx(truth, rel=0.05)


def test_systems_add_their_seed_variances_and_take_the_fewest_degrees_of_freedom():
    a, b = np.array([30.0, 31.0, 29.0]), np.array([28.0, 28.5, 27.0, 28.2, 27.9])
    diff = estimate(
        [
            SystemPart(full=a, resampled=np.repeat(a[:, None], 100, axis=1)),
            SystemPart(full=-b, resampled=-np.repeat(b[:, None], 100, axis=1)),
        ]
    )
    assert diff.delta == pytest.approx(a.mean() - b.mean())
    assert diff.variance == pytest.approx(a.var(ddof=1) / 3 + b.var(ddof=1) / 5)
    assert diff.df == 2


def test_the_p_values_agree_with_the_interval():
    diff = TwoLevel(delta=1.0, shared=0.04, seed_vars=(0.3,), runs=(3,), seed_dfs=(2.0,))
    low, high = diff.interval
    assert diff.p_value(low, "above") == pytest.approx(0.05, abs=1e-9)
    assert diff.p_value(high, "below") == pytest.approx(0.05, abs=1e-9)
    assert diff.p_value(low - 0.01, "above") < 0.05 < diff.p_value(low + 0.01, "above")


def test_the_prior_pools_alike_variances_and_follows_unlike_ones():
    rng = np.random.default_rng(3)
    alike = rng.chisquare(2, 14) / 2 * 0.7  # 14 systems with one seed variance, 3 seeds each
    assert fit_prior(alike, 2).df == math.inf or fit_prior(alike, 2).df > 10
    # limma's model: variances from a scaled inverse chi-square on d0 = 4 around 1, each seen on 2 degrees of freedom
    true_vars = 4 / rng.chisquare(4, 4000)
    prior = fit_prior(true_vars * rng.chisquare(2, 4000) / 2, 2)
    assert prior.df == pytest.approx(4, rel=0.2) and prior.var == pytest.approx(1, rel=0.1)
    moderated, df = prior.moderate(5.0, 2)
    assert prior.var < moderated < 5.0 and df == pytest.approx(prior.df + 2)
    assert fit_prior([1.0], 2) is NO_PRIOR and NO_PRIOR.moderate(5.0, 2) == (5.0, 2)


def test_a_system_that_varies_more_than_its_pool_keeps_its_own_variance_and_the_others_fit_without_it():
    variances = {"a": 1.0, "b": 1.3, "c": 0.8, "d": 1.1, "e": 0.9, "odd": 12.0}
    pool = fit_pool(variances, 2)
    # its prior is the others', and under it 12 on two degrees of freedom is far in the tail: no share of the pool's
    assert pool.prior_for("odd") == fit_prior([v for k, v in variances.items() if k != "odd"], 2)
    assert pool.weight("odd") < 0.01  # its tail under the others: about 0.001
    # an alike system keeps all but OWN_SHARE of the pool's, and its prior gives the odd one almost no weight
    assert pool.weight("a") == pytest.approx(1 - OWN_SHARE)
    others = [v for k, v in variances.items() if k != "a"]
    # each of the others weighed by its own share, from a first fit to all the systems but it
    weights = [
        fit_prior([w for j, w in variances.items() if j != k], 2).pool_weight(v, 2)
        for k, v in variances.items()
        if k != "a"
    ]
    assert weights[-1] < 0.01 and pool.prior_for("a") == fit_prior(others, 2, weights)
    assert pool.prior_for("a").var < fit_prior(others, 2).var  # the odd system does not widen the others' prior
    # the weight falls linearly in the variance's upper tail below ODD_EVIDENCE: smooth, no cliff
    prior = pool.prior_for("a")
    grid = np.linspace(0.5, 20.0, 4000) * prior.var
    shares = [prior.pool_weight(v, 2) for v in grid]
    assert all(x >= y for x, y in zip(shares, shares[1:])) and shares[0] == 1 - OWN_SHARE and shares[-1] < 0.01
    assert max(abs(x - y) for x, y in zip(shares, shares[1:])) < 0.01
    # a system that varies less than its pool borrows the pool's (larger) variance: the safe side
    assert fit_pool({**variances, "quiet": 0.01}, 2).weight("quiet") == pytest.approx(1 - OWN_SHARE)


def test_an_alike_system_s_pool_weight_is_the_formula_s_under_the_pool_s_own_model():
    """Under the pool's model (every system alike), the tail probability is uniform, so the mean weight is
    (1 - OWN_SHARE) (1 - ODD_EVIDENCE / 2)."""
    rng = np.random.default_rng(11)
    weights = [fit_pool(dict(enumerate(rng.chisquare(2, 8) / 2)), 2) for _ in range(1500)]
    mean = np.mean([pool.weight(k) for pool in weights for k in pool.variances])
    assert mean == pytest.approx((1 - OWN_SHARE) * (1 - ODD_EVIDENCE / 2), abs=0.02)


def test_a_comparison_is_the_mixture_of_its_systems_pool_and_own_variances():
    """The odd system's own variance and the pool's are independent chi-squares; the alike system's is the pool's
    with its weight and its own with the rest: the pivot is the mixture of Z sqrt(A + S1 nu1 / U1 + S2 nu2 / U2)
    over those, checked against a Monte Carlo of it."""
    a = np.array([30.0, 34.0, 27.0])
    b = np.array([28.0, 28.4, 27.7])
    variances = {"a": float(a.var(ddof=1)), "b": float(b.var(ddof=1)), "c": 0.15, "d": 0.2, "e": 0.1, "f": 0.18}
    pool = fit_pool(variances, 2)
    diff = estimate(
        [
            SystemPart(full=a, resampled=np.repeat(a[:, None], 100, axis=1), prior=pool.prior_for("a")),
            SystemPart(full=-b, resampled=-np.repeat(b[:, None], 100, axis=1), prior=pool.prior_for("b")),
        ]
    )
    w = pool.weight("b")
    assert diff.pool_weights == pytest.approx((0.0, w), abs=1e-12) and diff.outlying == (True, False) and 0.5 < w < 1
    moderated, pooled_df = pool.prior_for("b").moderate(variances["b"], 2)
    assert diff.seed_vars[1] == pytest.approx(moderated) and diff.seed_dfs[1] == pooled_df
    assert diff.own_vars == pytest.approx((variances["a"], variances["b"]))
    rng = np.random.default_rng(5)
    draws = 2_000_000
    odd = variances["a"] / 3 * 2 / rng.chisquare(2, draws)
    b_pooled = moderated / 3 * pooled_df / rng.chisquare(pooled_df, draws)
    b_own = variances["b"] / 3 * 2 / rng.chisquare(2, draws)
    pieces = odd + np.where(rng.random(draws) < w, b_pooled, b_own)
    pivot = rng.standard_normal(draws) * np.sqrt(pieces)
    low, high = diff.interval
    assert np.mean(pivot > diff.delta - low) == pytest.approx(0.025, abs=0.0006)
    assert np.mean(pivot < diff.delta - high) == pytest.approx(0.025, abs=0.0006)


def test_the_pivot_of_one_piece_is_students_t_and_of_pieces_that_are_known_the_normal():
    assert _Pivot(0.0, [(2.0, 5.0)]).quantile(0.975) == pytest.approx(stats.t.ppf(0.975, 5) * math.sqrt(2.0), rel=1e-6)
    assert _Pivot(1.5, [(0.5, 1e6), (0.0, 3.0)]).quantile(0.975) == pytest.approx(
        stats.norm.ppf(0.975) * math.sqrt(2.0), rel=1e-9
    )
    # two pieces: symmetric, and between the t of the fewer degrees of freedom and the normal
    two = _Pivot(0.0, [(1.0, 2.0), (1.0, 20.0)])
    assert two.quantile(0.025) == pytest.approx(-two.quantile(0.975))
    assert stats.norm.ppf(0.975) * math.sqrt(2) < two.quantile(0.975) < stats.t.ppf(0.975, 2) * math.sqrt(2)


def test_seeds_needed_is_the_fewest_that_detect_the_difference():
    diff = TwoLevel(delta=0.3, shared=0.01, seed_vars=(0.5, 0.5), runs=(3, 3), seed_dfs=(2.0, 2.0))
    effect = 0.6
    assert diff.min_detectable() > effect
    needed = diff.seeds_needed(effect)
    assert needed is not None and needed > 3
    assert diff.min_detectable(needed) <= effect < diff.min_detectable(needed - 1)
    # the test set's own variance bounds what any number of seeds detects
    assert diff.seeds_needed(2.8 * 0.1 * 0.99) is None


def test_tail_p_values():
    samples = np.array([-1.0, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])
    assert significance.tail_p_value(samples, 0.0, "above") == pytest.approx(0.2)  # 1 of 10 at or below 0, twice
    assert significance.tail_p_value(samples, 0.0, "below") == pytest.approx(1.0)  # capped
    assert significance.tail_p_value(samples, 8.0, "below") == pytest.approx(0.2)
    assert significance.tail_p_value(samples, -5.0, "above") == 0.0


def test_holm_on_a_hand_computed_list():
    # sorted: 0.005 (x4 = 0.02), 0.01 (x3 = 0.03), 0.03 (x2 = 0.06), 0.04 (x1 = 0.04 -> 0.06, monotone)
    assert significance.holm([0.03, 0.005, 0.04, 0.01]) == pytest.approx([0.06, 0.02, 0.06, 0.03])
    assert significance.holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])  # capped at 1
    assert significance.holm([]) == []


def claim(cid: str, p_for: float, p_against: float, converged: bool | None = True, runs: int = 3) -> dict:
    """A judged claim's record as nmt.report.claims.ClaimJudge.judge makes it; with ``runs`` 1, a single-run claim's
    (no verdict: which way it points)."""
    verdict = REPRODUCED if p_for <= 0.05 else CONTRADICTED if p_against <= 0.05 else INCONCLUSIVE
    return {
        "id": cid,
        "p_for": p_for,
        "p_against": p_against,
        "verdict_raw": SINGLE_RUN if runs == 1 else verdict,
        "points": {REPRODUCED: "for", CONTRADICTED: "against", INCONCLUSIVE: "neither"}[verdict] if runs == 1 else None,
        "converged": converged,
        "n_runs": {"a": runs},
        "paper_preset": False,
        "substitute": None,
    }


def test_adjusted_verdicts_and_the_convergence_cap():
    # p-values 0, 0, 0.001, 0.03, 0.5 (the single run's is outside the family): Holm multiplies them by 5, 4, 3, 2, 1
    records = adjust(
        [
            claim("strong", 0.0, 1.0),
            claim("marginal", 0.03, 1.0),
            claim("against", 1.0, 0.001),
            claim("unconverged", 0.0, 1.0, converged=False),
            claim("single", 0.0, 1.0, runs=1),
            claim("null", 0.5, 0.5),
        ]
    )
    by_id = {r["id"]: r for r in records}
    assert by_id["marginal"]["verdict_raw"] == REPRODUCED and by_id["marginal"]["verdict_adjusted"] == INCONCLUSIVE
    assert by_id["marginal"]["p_adjusted"] == pytest.approx(0.06)
    assert by_id["against"]["verdict_adjusted"] == CONTRADICTED and by_id["against"]["p_adjusted"] == pytest.approx(
        0.003
    )
    assert by_id["null"]["verdict_adjusted"] == INCONCLUSIVE and by_id["null"]["p_adjusted"] == 0.5
    assert by_id["against"]["verdict_label"] == "not reproduced at this scale"
    assert by_id["strong"]["verdict"] == REPRODUCED and by_id["strong"]["verdict_label"] == REPRODUCED
    assert by_id["unconverged"]["verdict_adjusted"] == REPRODUCED
    assert by_id["unconverged"]["verdict"] == INCONCLUSIVE
    assert by_id["unconverged"]["verdict_label"] == "inconclusive (not converged)"
    assert by_id["single"]["verdict"] == SINGLE_RUN and by_id["single"].get("p_adjusted") is None
    assert by_id["single"]["verdict_label"] == "one run: points the paper's way"
