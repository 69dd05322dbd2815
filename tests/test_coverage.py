"""The verdicts' statistical promise, shown by simulation (docs/statistics.md, "What the simulation shows").

Systems are simulated at the sentence level with a known true difference: each run's score of a sentence is the
system's level, plus the sentence's own effect (shared by every run of the system: a sentence hard for it), plus
the run's seed effect, plus the run's own noise on that sentence (a seed translating it well by chance). A run's
score is the mean over the test sentences (a linear stand-in for BLEU, whose sufficient statistics resample the same
way), and the comparison goes through the code the claims use: the same resampling of sentences for every run,
nmt.scoring.difference for the interval and p-values, nmt.report.claims for a claim's p-values, nmt.scoring.significance.holm for the
family. The study is seeded, so its table is exact, and docs/statistics.md carries it verbatim (checked here).
"""
import re
from pathlib import Path

import numpy as np
import pytest

from nmt.scoring.difference import SystemPart, estimate, fit_prior
from nmt.report.claims import claim_p_values, comparison_p_values
from nmt.scoring.significance import holm

pytestmark = pytest.mark.slow  # minutes of simulation: left out of the fast tier

DOCS = Path(__file__).resolve().parents[1] / "docs" / "statistics.md"
SEEDS = (3, 5, 10)
RATIOS = (0.0, 1.0, 4.0)     # variance of one run's difference between seeds : its variance between test sets
SENTENCES = 400             # the demo's test sets; Multi30k's have 1,000
RESAMPLES = 1000
REPLICATES = 2000
OWN_SHARE = 0.5              # of a sentence's variance, the part that is the run's own (the rest: the system's)
POOL = 8                     # systems of a table on one test set, whose seed variances moderate each other's
TOLERANCE = 0.015


def simulate_runs(rng, n_systems: int, n_runs: int, ratio: float, levels=None) -> np.ndarray:
    """[n_systems, n_runs, SENTENCES] sentence scores, scaled so that one run's mean over the sentences has variance
    1 between test sets (half of it the sentences' effect on the system, half the run's own noise) and ``ratio``
    between seeds."""
    sentence_var = SENTENCES  # so that the mean of SENTENCES has variance 1
    levels = np.zeros(n_systems) if levels is None else np.asarray(levels, dtype=np.float64)
    system = rng.normal(0.0, np.sqrt((1 - OWN_SHARE) * sentence_var), (n_systems, 1, SENTENCES))
    seed = rng.normal(0.0, np.sqrt(ratio), (n_systems, n_runs, 1))
    own = rng.normal(0.0, np.sqrt(OWN_SHARE * sentence_var), (n_systems, n_runs, SENTENCES))
    return levels[:, None, None] + system + seed + own


class Pool:
    """The systems of one table on one test set (``runs`` [pool, n_runs, SENTENCES]) as the claims see them: each
    run's score of the whole set and of every resample of the sentences (the same resamples for all), and the prior
    their seed variances give each other."""

    def __init__(self, runs: np.ndarray, indices: np.ndarray, compared: list[int]):
        self.scores = runs.mean(axis=2)  # [pool, n_runs]
        # the mean of each resample of the sentences, as the counts of each sentence in it (the same as averaging
        # runs[:, :, indices], in one matrix product)
        n_samples = len(indices)
        counts = np.bincount((np.arange(n_samples)[:, None] * SENTENCES + indices).ravel(),
                             minlength=n_samples * SENTENCES).reshape(n_samples, SENTENCES) / SENTENCES
        self.resampled = {system: runs[system] @ counts.T for system in compared}
        self.prior = fit_prior(np.var(self.scores, axis=1, ddof=1), runs.shape[1] - 1)

    def parts(self, systems: list[int], signs: list[float]) -> list[SystemPart]:
        return [SystemPart(full=sign * self.scores[system], resampled=sign * self.resampled[system], prior=self.prior)
                for system, sign in zip(systems, signs)]


def coverage(n_runs: int, ratio: float, replicates: int = REPLICATES, seed: int = 0) -> float:
    rng = np.random.default_rng([seed, n_runs, int(ratio * 100)])
    true_delta, covered = 0.5, 0
    for _ in range(replicates):
        runs = simulate_runs(rng, POOL, n_runs, ratio, levels=[true_delta] + [0.0] * (POOL - 1))
        indices = rng.integers(0, SENTENCES, size=(RESAMPLES, SENTENCES))
        low, high = estimate(Pool(runs, indices, [0, 1]).parts([0, 1], [1, -1])).interval
        covered += low <= true_delta <= high
    return covered / replicates


# A family shaped like the ledger: 12 systems trained with the same seeds, 30 claims among them, none true: 24
# pairwise (some systems in several), 4 "best of 4", 2 comparing one gain with another.
FAMILY_SYSTEMS = 12


def family(rng) -> list[dict]:
    claims = []
    for _ in range(24):
        a, b = rng.choice(FAMILY_SYSTEMS, 2, replace=False)
        claims.append({"kind": "better", "pairs": [((a,), (b,))]})
    for _ in range(4):
        best, *others = rng.choice(FAMILY_SYSTEMS, 4, replace=False)
        claims.append({"kind": "best", "pairs": [((best,), (other,)) for other in others]})
    for _ in range(2):
        a, b, c, d = rng.choice(FAMILY_SYSTEMS, 4, replace=False)
        claims.append({"kind": "better", "pairs": [((a, b), (c, d))]})  # gain a - b against gain c - d
    return claims


def familywise_error(n_runs: int, ratio: float, replicates: int, seed: int = 0) -> float:
    rng = np.random.default_rng([seed, n_runs, int(ratio * 100), 7])
    claims = family(rng)
    wrong = 0
    for _ in range(replicates):
        runs = simulate_runs(rng, FAMILY_SYSTEMS, n_runs, ratio)
        indices = rng.integers(0, SENTENCES, size=(RESAMPLES, SENTENCES))
        pool = Pool(runs, indices, list(range(FAMILY_SYSTEMS)))
        p_values = []
        for claim in claims:
            comparisons = []
            for a, b in claim["pairs"]:
                signs = ([1] if len(a) == 1 else [1, -1]) + ([-1] if len(b) == 1 else [-1, 1])
                diff = estimate(pool.parts(list(a) + list(b), signs))
                comparisons.append(comparison_p_values("better", "higher", diff, None))
            p_values.append(min(claim_p_values(comparisons)))
        wrong += min(holm(p_values)) <= 0.05
    return wrong / replicates


def coverage_table() -> str:
    header = "| seeds | " + " | ".join(f"ratio {r:g}" for r in RATIOS) + " |"
    lines = [header, "|" + " --: |" * (len(RATIOS) + 1)]
    for n in SEEDS:
        lines.append(f"| {n} | " + " | ".join(f"{100 * coverage(n, r):.1f}%" for r in RATIOS) + " |")
    return "\n".join(lines)


def documented_table(marker: str) -> str:
    text = DOCS.read_text(encoding="utf-8")
    match = re.search(rf"<!-- {marker} -->\n(.*?)\n<!-- /{marker} -->", text, re.S)
    assert match, f"docs/statistics.md has no <!-- {marker} --> table"
    return match.group(1).strip()


def test_the_two_level_interval_covers_95_percent_at_3_5_and_10_seeds():
    table = coverage_table()
    values = [float(v) for v in re.findall(r"([\d.]+)%", table)]
    assert len(values) == len(SEEDS) * len(RATIOS)
    assert all(abs(v - 95.0) <= 100 * TOLERANCE for v in values), table
    assert table == documented_table("coverage-table"), \
        "docs/statistics.md's table is not this test's output:\n" + table


def test_holm_keeps_the_familywise_error_of_a_ledger_sized_family_at_5_percent():
    rates = {(n, ratio): familywise_error(n, ratio, replicates=500) for n in (3, 5) for ratio in (0.0, 1.0, 4.0)}
    table = "\n".join(["| seeds | " + " | ".join(f"ratio {r:g}" for r in RATIOS) + " |", "|" + " --: |" * 4]
                      + [f"| {n} | " + " | ".join(f"{100 * rates[(n, r)]:.1f}%" for r in RATIOS) + " |"
                         for n in (3, 5)])
    assert all(rate <= 0.05 for rate in rates.values()), table
    assert table == documented_table("familywise-table"), \
        "docs/statistics.md's table is not this test's output:\n" + table


def test_the_old_bootstrap_over_three_seeds_under_covers():
    """What the seed bootstrap did (draw 3 runs of 3 with replacement, scaled by sqrt(n / (n - 1))): its interval
    ends at about 1.22 times the runs' own extremes, and covers about 80% when seeds dominate."""
    rng = np.random.default_rng(5)
    covered, replicates = 0, 2000
    for _ in range(replicates):
        runs = rng.normal(0.0, 1.0, 3)
        draws = rng.integers(0, 3, size=(4000, 3))
        means = runs.mean() + np.sqrt(1.5) * (runs[draws].mean(axis=1) - runs.mean())
        low, high = np.percentile(means, [2.5, 97.5])
        covered += low <= 0.0 <= high
    assert covered / replicates == pytest.approx(0.80, abs=0.04)
