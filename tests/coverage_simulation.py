"""The verdicts' statistical promise as a simulation (docs/statistics.md, "What the simulation shows").

Systems are simulated at the sentence level with a known true difference: each run's score of a sentence is the
system's level, plus the sentence's own effect (shared by every run of the system), plus the run's seed effect, plus
the run's own noise on that sentence. A run's score is the mean over the test sentences (a linear stand-in for BLEU),
and the comparison goes through the code the claims use (nmt.scoring.difference, nmt.report.claims,
nmt.scoring.significance.holm). Seeded: a study's tables are exact. The full grids are benchmarks/coverage-study.py's
(minutes; docs/statistics.md carries their tables verbatim); tests/studies/test_coverage.py runs a few cells."""

from dataclasses import replace

import numpy as np

from nmt.report.claims import claim_p_values, comparison_p_values
from nmt.scoring.difference import SystemPart, estimate, fit_pool
from nmt.scoring.significance import holm

SEEDS = (2, 3, 5, 10)
RATIOS = (0.0, 1.0, 4.0)  # variance of one run's difference between seeds : its variance between test sets
SENTENCES = 400  # the demo's test sets; Multi30k's have 1,000
RESAMPLES = 1000
REPLICATES = 2000
OWN_SHARE = 0.5  # of a sentence's variance, the part that is the run's own (the rest: the system's)
POOL = 8  # systems of a table on one test set, whose seed variances moderate each other's
TOLERANCE = 0.015


ODD_FACTORS = (4.0, 10.0, 25.0)  # one system's seed variance as a multiple of the rest of its pool's
ODD_SEEDS = (2, 3, 5)
ODD_RATIOS = (1.0, 4.0)
MIN_ODD_COVERAGE = 0.93
#: the cells whose promise is reported, not asserted: two seeds (docs/statistics.md says what falls short there)
REPORTED_ONLY_SEEDS = (2,)
#: the alike cells allowed above 95% + TOLERANCE, and how far: at three seeds the moderation itself over-covers (a
#: prior fitted to a few variances on two degrees of freedom each is often wider than the truth), and with no seed
#: variance at all the floor at each run's own sentence noise widens it further (docs/statistics.md)
OVER_COVERED = {(3, 0.0): 0.98, (3, 1.0): 0.975, (3, 4.0): 0.975}


def simulate_runs(
    rng, n_systems: int, n_runs: int, ratio: float, levels=None, odd: float = 1.0, odd_systems=(0,)
) -> np.ndarray:
    """[n_systems, n_runs, SENTENCES] sentence scores, scaled so that one run's mean over the sentences has variance
    1 between test sets (half of it the sentences' effect on the system, half the run's own noise) and ``ratio``
    between seeds (``odd`` times that for ``odd_systems``: systems that vary more between seeds than their pool)."""
    sentence_var = SENTENCES  # so that the mean of SENTENCES has variance 1
    levels = np.zeros(n_systems) if levels is None else np.asarray(levels, dtype=np.float64)
    seed_var = np.full(n_systems, ratio)
    seed_var[list(odd_systems)] *= odd
    system = rng.normal(0.0, np.sqrt((1 - OWN_SHARE) * sentence_var), (n_systems, 1, SENTENCES))
    seed = rng.normal(0.0, 1.0, (n_systems, n_runs, 1)) * np.sqrt(seed_var)[:, None, None]
    own = rng.normal(0.0, np.sqrt(OWN_SHARE * sentence_var), (n_systems, n_runs, SENTENCES))
    return levels[:, None, None] + system + seed + own


def resample_counts(rng) -> np.ndarray:
    """[RESAMPLES, SENTENCES]: each resample of the sentences as the share of it each sentence has, so that a run's
    score on every resample is one matrix product (the same as averaging runs[:, :, indices]). A study draws them
    once: every simulated test set is resampled by the same draws, as sacreBLEU's seeded resampling does."""
    indices = rng.integers(0, SENTENCES, size=(RESAMPLES, SENTENCES))
    counts = np.bincount((np.arange(RESAMPLES)[:, None] * SENTENCES + indices).ravel(), minlength=RESAMPLES * SENTENCES)
    return counts.reshape(RESAMPLES, SENTENCES) / SENTENCES


class Pool:
    """The systems of one table on one test set (``runs`` [pool, n_runs, SENTENCES]) as the claims see them: each
    run's score of the whole set and of every resample of the sentences (the same resamples for all), and the priors
    their seed variances give each other (nmt.scoring.difference.fit_pool; ``pools``: the systems of each test set,
    default all one pool)."""

    def __init__(self, runs: np.ndarray, counts: np.ndarray, compared: list[int], pools=None):
        self.scores = runs.mean(axis=2)  # [systems, n_runs]
        self.resampled = {system: runs[system] @ counts.T for system in compared}
        variances = np.var(self.scores, axis=1, ddof=1)
        self.priors = [None] * len(variances)
        for members in pools or [range(len(variances))]:  # the systems of each test set moderate each other
            pool = fit_pool({system: variances[system] for system in members}, runs.shape[1] - 1)
            for system in members:
                self.priors[system] = pool.prior_for(system)

    def parts(self, systems: list[int], signs: list[float]) -> list[SystemPart]:
        return [
            SystemPart(
                full=sign * self.scores[system], resampled=sign * self.resampled[system], prior=self.priors[system]
            )
            for system, sign in zip(systems, signs)
        ]


def covers(pool: Pool, a: int, b: int, true_delta: float) -> tuple[bool, float, float]:
    """Whether the interval of a - b covers the true difference, its width, and the width of the same interval with
    every system taken as one of its pool (the moderation alone, without the mixture's protection)."""
    difference = estimate(pool.parts([a, b], [1, -1]))
    low, high = difference.interval
    plain_low, plain_high = replace(difference, pool_weights=()).interval
    return low <= true_delta <= high, high - low, plain_high - plain_low


def coverage(n_runs: int, ratio: float, replicates: int = REPLICATES, seed: int = 0) -> tuple[float, float]:
    """Coverage of the interval of system 0 - system 1 (true difference 0.5) in a pool of systems that vary alike
    between seeds, and its mean width over that of the same interval without the mixture (:func:`covers`)."""
    rng = np.random.default_rng([seed, n_runs, int(ratio * 100)])
    counts = resample_counts(rng)
    true_delta, covered, width, width_plain = 0.5, 0, 0.0, 0.0
    for _ in range(replicates):
        runs = simulate_runs(rng, POOL, n_runs, ratio, levels=[true_delta] + [0.0] * (POOL - 1))
        hit, w, plain = covers(Pool(runs, counts, [0, 1]), 0, 1, true_delta)
        covered += hit
        width += w
        width_plain += plain
    return covered / replicates, width / width_plain


def odd_coverage(
    n_runs: int, ratio: float, odd: float, replicates: int = REPLICATES, seed: int = 0
) -> tuple[float, float]:
    """Coverage per system in a pool where system 0 varies ``odd`` times as much between seeds as the others: of
    its comparisons (0 - 1, true difference 0.5) and of the others' (1 - 2, true difference 0)."""
    rng = np.random.default_rng([seed, n_runs, int(ratio * 100), int(odd * 10), 3])
    counts = resample_counts(rng)
    hits = np.zeros(2)
    for _ in range(replicates):
        runs = simulate_runs(rng, POOL, n_runs, ratio, levels=[0.5] + [0.0] * (POOL - 1), odd=odd)
        pool = Pool(runs, counts, [0, 1, 2])
        hits += [covers(pool, 0, 1, 0.5)[0], covers(pool, 1, 2, 0.0)[0]]
    return tuple(hits / replicates)


# A family shaped like the ledger: 12 systems trained with the same seeds, scored on two test sets (a table of 8 and
# one of 4: each a pool whose seed variances moderate each other's), 30 claims among them, each within one table, none
# true: 24 pairwise (some systems in several), 4 "best of 4", 2 comparing one gain with another.
FAMILY_SYSTEMS = 12
FAMILY_POOLS = (tuple(range(8)), tuple(range(8, 12)))
ODD_LAYOUTS = {"one per pool": (0, 8), "two in one pool": (0, 1)}  # the systems that vary more than their pool


def family(rng) -> list[dict]:
    claims = []
    sizes = [len(pool) for pool in FAMILY_POOLS]
    share = np.array(sizes) / sum(sizes)

    def table():
        return np.array(FAMILY_POOLS[rng.choice(len(FAMILY_POOLS), p=share)])

    for _ in range(24):
        a, b = rng.choice(table(), 2, replace=False)
        claims.append({"kind": "better", "pairs": [((a,), (b,))]})
    for _ in range(4):
        best, *others = rng.choice(table(), 4, replace=False)
        claims.append({"kind": "best", "pairs": [((best,), (other,)) for other in others]})
    for _ in range(2):
        a, b, c, d = rng.choice(table(), 4, replace=False)
        claims.append({"kind": "better", "pairs": [((a, b), (c, d))]})  # gain a - b against gain c - d
    return claims


def familywise_error(
    n_runs: int, ratio: float, replicates: int, seed: int = 0, odd: float = 1.0, layout: str = "one per pool"
) -> float:
    """The share of simulated ledgers (no claim true) in which Holm's adjustment lets any claim through at 5%; with
    ``odd`` != 1 the systems of ``layout`` vary that many times as much between seeds as their pools."""
    key = [seed, n_runs, int(ratio * 100), 7] + ([int(odd * 10), len(layout)] if odd != 1.0 else [])
    rng = np.random.default_rng(key)
    claims = family(rng)
    counts = resample_counts(rng)
    odd_systems = ODD_LAYOUTS[layout] if odd != 1.0 else ()
    wrong = 0
    for _ in range(replicates):
        runs = simulate_runs(rng, FAMILY_SYSTEMS, n_runs, ratio, odd=odd, odd_systems=odd_systems)
        pool = Pool(runs, counts, list(range(FAMILY_SYSTEMS)), pools=FAMILY_POOLS)
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


def percent(value: float) -> str:
    return f"{100 * value:.1f}%"


def coverage_table(replicates: int = REPLICATES) -> tuple[str, str, list[float]]:
    """The coverage table and the width table (alike pools), and the coverages."""
    results = {(n, r): coverage(n, r, replicates) for n in SEEDS for r in RATIOS}
    header = "| seeds | " + " | ".join(f"ratio {r:g}" for r in RATIOS) + " |"
    rule = "|" + " --: |" * (len(RATIOS) + 1)
    cover = [header, rule] + [
        f"| {n} | " + " | ".join(percent(results[(n, r)][0]) for r in RATIOS) + " |" for n in SEEDS
    ]
    width = [header, rule] + [
        f"| {n} | " + " | ".join(f"{results[(n, r)][1]:.2f}" for r in RATIOS) + " |" for n in SEEDS
    ]
    return "\n".join(cover), "\n".join(width), [c for c, _ in results.values()]


def odd_table(replicates: int = REPLICATES) -> tuple[str, list[tuple[int, float]]]:
    """Coverage per system, the odd system first, and the coverages with their seeds."""
    lines = [
        "| seeds | ratio | odd system's seed variance | its comparisons | the others' |",
        "| --: | --: | --: | --: | --: |",
    ]
    values = []
    for n in ODD_SEEDS:
        for ratio in ODD_RATIOS:
            for odd in ODD_FACTORS:
                its, others = odd_coverage(n, ratio, odd, replicates)
                values += [(n, its), (n, others)]
                lines.append(f"| {n} | {ratio:g} | {odd:g}x | {percent(its)} | {percent(others)} |")
    return "\n".join(lines), values


FAMILY_REPLICATES = 200
FAMILY_SEEDS = (3, 5)


def familywise_table(replicates: int = FAMILY_REPLICATES) -> tuple[str, list[tuple[int, float]]]:
    """Holm's family-wise error over the ledger-shaped family with no true difference, pools that vary alike."""
    rates = {(n, ratio): familywise_error(n, ratio, replicates) for n in FAMILY_SEEDS for ratio in RATIOS}
    table = "\n".join(
        ["| seeds | " + " | ".join(f"ratio {r:g}" for r in RATIOS) + " |", "|" + " --: |" * (len(RATIOS) + 1)]
        + [f"| {n} | " + " | ".join(percent(rates[(n, r)]) for r in RATIOS) + " |" for n in FAMILY_SEEDS]
    )
    return table, [(n, rate) for (n, _), rate in rates.items()]


ODD_FAMILY_CELLS = [
    (layout, n, ratio, odd)
    for layout in ODD_LAYOUTS
    for n in FAMILY_SEEDS
    for ratio in ODD_RATIOS
    for odd in (ODD_FACTORS if layout == "one per pool" else (10.0,))
]


def odd_familywise_table(replicates: int = FAMILY_REPLICATES) -> tuple[str, list[tuple[int, float]]]:
    """The same with systems that vary more between seeds than their pools: one per pool at each factor, and two in
    one pool at 10x."""
    lines = [
        "| odd systems | seeds | ratio | their seed variance | family-wise error |",
        "| --- | --: | --: | --: | --: |",
    ]
    values = []
    for layout, n, ratio, odd in ODD_FAMILY_CELLS:
        rate = familywise_error(n, ratio, replicates, odd=odd, layout=layout)
        values.append((n, rate))
        lines.append(f"| {layout} | {n} | {ratio:g} | {odd:g}x | {percent(rate)} |")
    return "\n".join(lines), values
