"""The statistics behind the verdicts: the two-level bootstrap of seed runs and test sentences, bootstrap p-values,
and Holm's adjustment, on synthetic scores and hand-computed cases."""
import numpy as np
import pytest

from nmt import significance
from nmt.report.claims import CONTRADICTED, INCONCLUSIVE, REPRODUCED, adjust


def synthetic_runs(levels: list[float], sentence_sd: float, n_samples: int = 4000, rng_seed: int = 0) -> np.ndarray:
    """[n_runs, n_samples]: each run's score on each resample of the sentences: the run's own level plus the
    resample's departure, shared by all runs (they are scored on the same resamples), plus a little of its own."""
    rng = np.random.default_rng(rng_seed)
    levels = np.asarray(levels, dtype=np.float64)
    n_runs = len(levels)
    shared = rng.normal(0.0, sentence_sd, size=n_samples)
    return levels[:, None] + shared[None, :] + rng.normal(0.0, sentence_sd / 10, size=(n_runs, n_samples))


def width(samples: np.ndarray) -> float:
    low, high = significance.percentile_interval(samples)
    return high - low


def test_with_one_run_the_two_level_bootstrap_is_the_sentence_bootstrap():
    runs = synthetic_runs([30.0], 0.5)
    assert np.array_equal(significance.two_level_resamples(runs, None), runs[0])


def test_when_seeds_vary_more_than_sentences_the_interval_widens_to_their_spread():
    runs = synthetic_runs([26.0, 28.0, 30.0, 32.0, 34.0], sentence_sd=0.2)  # seeds' sd 3.2, sentences' 0.2
    draws = significance.run_draws(5, runs.shape[1], seed=1)
    two_level = significance.two_level_resamples(runs, draws)
    sentence_only = runs.mean(axis=0)
    assert width(two_level) > 4 * width(sentence_only)
    # its spread is that of a mean of 5 runs: s / sqrt(5), the unbiased estimate (the plug-in one is sqrt(4/5) of it)
    expected = np.std(runs.mean(axis=1), ddof=1) / np.sqrt(5)
    assert np.std(two_level) == pytest.approx(expected, rel=0.1)


def test_runs_with_the_same_seeds_are_paired():
    """Two systems whose runs move together by seed (the same batch order, say): paired draws cancel the shared
    part, independent ones do not."""
    rng = np.random.default_rng(2)
    seed_effect = rng.normal(0.0, 2.0, size=4)
    a = 30.0 + seed_effect[:, None] + np.zeros((4, 2000))
    b = 29.0 + seed_effect[:, None] + np.zeros((4, 2000))
    draws = significance.run_draws(4, 2000, seed=3)
    paired = significance.two_level_resamples(a, draws) - significance.two_level_resamples(b, draws)
    assert np.allclose(paired, 1.0)
    independent = significance.two_level_resamples(a, draws) - significance.two_level_resamples(
        b, significance.run_draws(4, 2000, seed=4))
    assert np.std(independent) > 1.0


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
