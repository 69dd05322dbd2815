"""The statistics behind the verdicts: a difference's interval over seeds and test sentences (nmt.scoring.difference) against
scipy's t and normal intervals and hand-made cases, bootstrap p-values, and Holm's adjustment. Its coverage is
tests/test_coverage.py's."""
import math

import numpy as np
import pytest
from scipy import stats

from nmt.scoring import significance
from nmt.scoring.difference import NO_PRIOR, SystemPart, TwoLevel, estimate, fit_prior
from nmt.report.claims import CONTRADICTED, INCONCLUSIVE, REPRODUCED, adjust


def test_with_a_single_run_the_interval_is_the_paired_sentence_bootstrap():
    rng = np.random.default_rng(0)
    a, b = rng.normal(30.0, 0.5, (1, 4000)), rng.normal(29.0, 0.5, (3, 4000))
    diff = estimate([SystemPart(full=np.array([30.0]), resampled=a),
                     SystemPart(full=-np.full(3, 29.0), resampled=-b)])
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
    n_runs, n_sentences, n_samples = 5, 400, 4000
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
    diff = estimate([SystemPart(full=a, resampled=np.repeat(a[:, None], 100, axis=1)),
                     SystemPart(full=-b, resampled=-np.repeat(b[:, None], 100, axis=1))])
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
    assert significance.tail_p_value(samples, 0.0, "above") == pytest.approx(0.2)   # 1 of 10 at or below 0, twice
    assert significance.tail_p_value(samples, 0.0, "below") == pytest.approx(1.0)   # capped
    assert significance.tail_p_value(samples, 8.0, "below") == pytest.approx(0.2)
    assert significance.tail_p_value(samples, -5.0, "above") == 0.0


def test_holm_on_a_hand_computed_list():
    # sorted: 0.005 (x4 = 0.02), 0.01 (x3 = 0.03), 0.03 (x2 = 0.06), 0.04 (x1 = 0.04 -> 0.06, monotone)
    assert significance.holm([0.03, 0.005, 0.04, 0.01]) == pytest.approx([0.06, 0.02, 0.06, 0.03])
    assert significance.holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])  # capped at 1
    assert significance.holm([]) == []


def claim(cid: str, p_for: float, p_against: float, converged: bool | None = True, runs: int = 3) -> dict:
    return {"id": cid, "p_for": p_for, "p_against": p_against, "verdict_raw": REPRODUCED if p_for <= 0.05 else
            CONTRADICTED if p_against <= 0.05 else INCONCLUSIVE, "converged": converged, "n_runs": {"a": runs},
            "paper_preset": False, "substitute": None}


def test_adjusted_verdicts_and_the_convergence_cap():
    # p-values 0, 0, 0, 0.001, 0.03, 0.5: Holm multiplies them by 6, 5, 4, 3, 2, 1
    records = adjust([claim("strong", 0.0, 1.0), claim("marginal", 0.03, 1.0), claim("against", 1.0, 0.001),
                      claim("unconverged", 0.0, 1.0, converged=False), claim("single", 0.0, 1.0, runs=1),
                      claim("null", 0.5, 0.5)])
    by_id = {r["id"]: r for r in records}
    assert by_id["marginal"]["verdict_raw"] == REPRODUCED and by_id["marginal"]["verdict_adjusted"] == INCONCLUSIVE
    assert by_id["marginal"]["p_adjusted"] == pytest.approx(0.06)
    assert by_id["against"]["verdict_adjusted"] == CONTRADICTED and by_id["against"]["p_adjusted"] == \
        pytest.approx(0.003)
    assert by_id["null"]["verdict_adjusted"] == INCONCLUSIVE and by_id["null"]["p_adjusted"] == 0.5
    assert by_id["against"]["verdict_label"] == "not reproduced at this scale"
    assert by_id["strong"]["verdict"] == REPRODUCED and by_id["strong"]["verdict_label"] == REPRODUCED
    assert by_id["unconverged"]["verdict_adjusted"] == REPRODUCED
    assert by_id["unconverged"]["verdict"] == INCONCLUSIVE
    assert by_id["unconverged"]["verdict_label"] == "inconclusive (not converged)"
    assert by_id["single"]["verdict_label"] == "reproduced; single run"
