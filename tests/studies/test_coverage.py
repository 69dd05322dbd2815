"""The verdicts' statistical promise, shown by simulation (tests/coverage_simulation.py; docs/statistics.md, "What the
simulation shows"): the 95% interval's coverage and Holm's family-wise error. Every cell of a study is seeded on its
own, so a cell computed here is exactly that cell of docs/statistics.md's tables; the tests recompute the hardest
cells, `python benchmarks/coverage-study.py --check` every cell (minutes)."""

import numpy as np
import pytest

from coverage_simulation import (
    MIN_ODD_COVERAGE,
    OVER_COVERED,
    TOLERANCE,
    coverage,
    familywise_error,
    odd_coverage,
    percent,
)
from documented import documented_cells

pytestmark = pytest.mark.slow  # a minute of simulation: left out of the fast tier


def test_the_two_level_interval_covers_95_percent_where_seeds_dominate_at_3_seeds():
    covered, width = coverage(3, 4.0)  # three seeds, the seeds four times the test set's variance
    assert 0.95 - TOLERANCE <= covered <= OVER_COVERED.get((3, 4.0), 0.95 + TOLERANCE)
    assert percent(covered) == documented_cells("coverage-table", "3")[3]
    assert f"{width:.2f}" == documented_cells("width-table", "3")[3]


def test_a_system_that_varies_25_times_more_than_its_pool_is_covered_as_the_others_are():
    its, others = odd_coverage(3, 1.0, 25.0)
    assert its >= MIN_ODD_COVERAGE and others >= MIN_ODD_COVERAGE
    row = next(cells for cells in documented_cells("odd-system-table") if cells[:3] == ["3", "1", "25x"])
    assert row[3:] == [percent(its), percent(others)]


def test_holm_keeps_the_familywise_error_at_5_percent_where_seeds_dominate_and_with_an_odd_system():
    alike = familywise_error(3, 4.0, replicates=500)
    odd = familywise_error(3, 1.0, replicates=500, odd=25.0)
    assert alike <= 0.05 and odd <= 0.05
    assert percent(alike) == documented_cells("familywise-table", "3")[3]
    assert percent(odd) == documented_cells("odd-familywise-table", "3")[3]


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
