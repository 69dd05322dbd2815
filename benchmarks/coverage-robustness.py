"""What docs/statistics.md says of the claims' interval beyond tests/studies/test_coverage.py's tables.

1. Coverage of the 95% interval when the systems of a pool vary unlike each other between seeds: each system's seed
   variance is the ratio times e^N(0, spread), so that the prior the pool fits has less to go on (the test's
   systems vary alike, the moderation's model); and of one odd system's comparisons without the test before pooling
   (what the test's odd-system table improves on).
2. The fiducial interval without moderation (each system's own seed variance, NO_PRIOR): coverage at 3 seeds.
3. The alternative we did not choose: Welch-Satterthwaite's t with the same two parts (the shared sentence variance,
   each system's own seed variance, no moderation), whose plug-in degrees of freedom make its far tails too light:
   Holm's family-wise error over the test's ledger-sized family with no true difference.

Run from the repository root: `python benchmarks/coverage-robustness.py` (a few minutes).
"""

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from scipy import stats  # noqa: E402

from nmt.report.claims import claim_p_values  # noqa: E402
from nmt.scoring.difference import NO_PRIOR, SystemPart, estimate  # noqa: E402
from nmt.scoring.significance import holm  # noqa: E402

import coverage_simulation as study  # noqa: E402  (the simulation's own functions)


def coverage(n_runs: int, ratio: float, spread: float, pool: int, replicates: int = 1000, seed: int = 0) -> float:
    rng = np.random.default_rng([seed, n_runs, int(ratio * 100), pool, int(spread * 10)])
    counts = study.resample_counts(rng)
    covered = 0
    for _ in range(replicates):
        runs = study.simulate_runs(rng, pool, n_runs, 0.0, levels=[0.5] + [0.0] * (pool - 1))
        seed_var = ratio * np.exp(rng.normal(0.0, spread, pool))
        runs = runs + rng.normal(0.0, 1.0, (pool, n_runs, 1)) * np.sqrt(seed_var)[:, None, None]
        low, high = estimate(study.Pool(runs, counts, [0, 1]).parts([0, 1], [1, -1])).interval
        covered += low <= 0.5 <= high
    return covered / replicates


def odd_coverage_untested(n_runs: int, ratio: float, odd: float, replicates: int = 2000, seed: int = 0) -> float:
    """Coverage of the odd system's comparisons (tests/studies/test_coverage.py's odd_coverage) without the mixture's
    protection: every system taken as one of its pool (nmt.scoring.difference's pool weights all 1)."""
    rng = np.random.default_rng([seed, n_runs, int(ratio * 100), int(odd * 10), 17])
    counts = study.resample_counts(rng)
    covered = 0
    for _ in range(replicates):
        runs = study.simulate_runs(rng, study.POOL, n_runs, ratio, levels=[0.5] + [0.0] * (study.POOL - 1), odd=odd)
        difference = estimate(study.Pool(runs, counts, [0, 1]).parts([0, 1], [1, -1]))
        low, high = replace(difference, pool_weights=()).interval
        covered += low <= 0.5 <= high
    return covered / replicates


def coverage_unmoderated(n_runs: int, ratio: float, replicates: int = 1000, seed: int = 0) -> float:
    rng = np.random.default_rng([seed, n_runs, int(ratio * 100), 13])
    counts = study.resample_counts(rng)
    covered = 0
    for _ in range(replicates):
        runs = study.simulate_runs(rng, 2, n_runs, ratio, levels=[0.5, 0.0])
        parts = [
            SystemPart(full=p.full, resampled=p.resampled, prior=NO_PRIOR)
            for p in study.Pool(runs, counts, [0, 1]).parts([0, 1], [1, -1])
        ]
        low, high = estimate(parts).interval
        covered += low <= 0.5 <= high
    return covered / replicates


def satterthwaite_p(parts: list[SystemPart]) -> tuple[float, float]:
    """(p_for, p_against) of "A beats B" by Welch-Satterthwaite's t, each twice a one-sided tail as the claims take
    them: variance A + sum s^2 / n (A: the shared sentence variance, as nmt.scoring.difference takes it out of the bootstrap;
    s^2: each system's own seed variance), degrees of freedom (A + S)^2 / sum((s^2 / n)^2 / (n - 1)) with A known."""
    diff = estimate(parts)  # for delta and the shared sentence variance
    seed_parts = [float(np.var(p.full, ddof=1)) / p.n_runs for p in parts]
    variance = diff.shared + sum(seed_parts)
    df = variance**2 / sum(v * v / (p.n_runs - 1) for v, p in zip(seed_parts, parts))
    t = diff.delta / np.sqrt(variance)
    return min(1.0, float(2 * stats.t.sf(t, df))), min(1.0, float(2 * stats.t.cdf(t, df)))


def satterthwaite_familywise_error(n_runs: int, ratio: float, replicates: int = 500, seed: int = 0) -> float:
    rng = np.random.default_rng([seed, n_runs, int(ratio * 100), 11])
    claims = study.family(rng)
    counts = study.resample_counts(rng)
    wrong = 0
    for _ in range(replicates):
        runs = study.simulate_runs(rng, study.FAMILY_SYSTEMS, n_runs, ratio)
        pool = study.Pool(runs, counts, list(range(study.FAMILY_SYSTEMS)))
        p_values = []
        for claim in claims:
            comparisons = []
            for a, b in claim["pairs"]:
                signs = ([1] if len(a) == 1 else [1, -1]) + ([-1] if len(b) == 1 else [-1, 1])
                comparisons.append(satterthwaite_p(pool.parts(list(a) + list(b), signs)))
            p_values.append(min(claim_p_values(comparisons)))
        wrong += min(holm(p_values)) <= 0.05
    return wrong / replicates


def main() -> None:
    print("| spread | pool | seeds | ratio 1 | ratio 4 |")
    print("| --: | --: | --: | --: | --: |")
    for spread in (1.0, 2.0):
        for pool in (8, 4):
            for n_runs in (3, 5):
                cells = " | ".join(f"{100 * coverage(n_runs, r, spread, pool):.1f}%" for r in (1.0, 4.0))
                print(f"| {spread:g} | {pool} | {n_runs} | {cells} |")
    print()
    print("Without the test before pooling: coverage of the odd system's comparisons (2,000 runs per cell)")
    print("| seeds | ratio | " + " | ".join(f"{odd:g}x" for odd in study.ODD_FACTORS) + " |")
    print("| --: | --: |" + " --: |" * len(study.ODD_FACTORS))
    for n_runs in study.ODD_SEEDS:
        for ratio in study.ODD_RATIOS:
            cells = " | ".join(f"{100 * odd_coverage_untested(n_runs, ratio, odd):.1f}%" for odd in study.ODD_FACTORS)
            print(f"| {n_runs} | {ratio:g} | {cells} |")
    print()
    print(
        "Without moderation, coverage at 3 seeds (1,000 runs per cell): "
        + ", ".join(f"ratio {r:g} {100 * coverage_unmoderated(3, r):.1f}%" for r in study.RATIOS)
    )
    print()
    print("Welch-Satterthwaite, Holm's family-wise error with no true difference (500 ledgers per cell)")
    print("| seeds | " + " | ".join(f"ratio {r:g}" for r in study.RATIOS) + " |")
    print("|" + " --: |" * (len(study.RATIOS) + 1))
    for n_runs in (3, 5):
        cells = " | ".join(f"{100 * satterthwaite_familywise_error(n_runs, r):.1f}%" for r in study.RATIOS)
        print(f"| {n_runs} | {cells} |")


if __name__ == "__main__":
    main()
