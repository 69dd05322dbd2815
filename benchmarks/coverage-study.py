"""The verdicts' statistical promise over the whole grid (tests/coverage_simulation.py): the tables of
docs/statistics.md's "What the simulation shows", and whether every cell keeps the promise. The tests recompute the
hardest cells (tests/studies/test_coverage.py); this runs all of them, its cells spread over --jobs processes (about
an hour of one core in all).

    python benchmarks/coverage-study.py            # print the tables, exit 1 if a cell breaks the promise
    python benchmarks/coverage-study.py --check    # ... or if docs/statistics.md's tables differ from them
    python benchmarks/coverage-study.py --write    # write them into docs/statistics.md
"""

import argparse
import multiprocessing
import re
import sys
from pathlib import Path

from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
import coverage_simulation as study  # noqa: E402
from documented import DOCS, documented_table  # noqa: E402

CELLS = (
    [("coverage", (n, r, study.REPLICATES), {}) for n in study.SEEDS for r in study.RATIOS]
    + [
        ("odd_coverage", (n, r, f, study.REPLICATES), {})
        for n in study.ODD_SEEDS
        for r in study.ODD_RATIOS
        for f in study.ODD_FACTORS
    ]
    + [("familywise_error", (n, r, study.FAMILY_REPLICATES), {}) for n in study.FAMILY_SEEDS for r in study.RATIOS]
    + [
        ("familywise_error", (n, r, study.FAMILY_REPLICATES), {"odd": f, "layout": layout})
        for layout, n, r, f in study.ODD_FAMILY_CELLS
    ]
)


def _cell(cell):
    name, args, kwargs = cell
    with threadpool_limits(limits=1, user_api="blas"):  # small products: a second thread only waits
        return getattr(study, name)(*args, **kwargs)


def computed(jobs: int) -> None:
    """Every cell of the study computed (over ``jobs`` processes, the slowest first) and the study's functions made to
    return them, so that its table functions lay out what was computed here."""
    order = sorted(CELLS, key=lambda cell: cell[0] != "familywise_error")
    with multiprocessing.get_context("spawn").Pool(jobs) as pool:
        results = dict(zip(map(repr, order), pool.map(_cell, order, chunksize=1)))
    for name in {cell[0] for cell in CELLS}:
        original = getattr(study, name)

        def lookup(*args, _name=name, _original=original, **kwargs):
            key = repr((_name, args, kwargs))
            return results[key] if key in results else _original(*args, **kwargs)

        setattr(study, name, lookup)


def tables() -> tuple[dict[str, str], list[str]]:
    """docs/statistics.md's tables by marker, and the cells that break the promise (two seeds' are reported only)."""
    broken = []
    cover, width, values = study.coverage_table()
    cells = [(n, r) for n in study.SEEDS for r in study.RATIOS]
    for value, cell in zip(values, cells):
        if cell[0] in study.REPORTED_ONLY_SEEDS:
            continue
        if not 0.95 - study.TOLERANCE <= value <= study.OVER_COVERED.get(cell, 0.95 + study.TOLERANCE):
            broken.append(f"coverage at {cell}: {study.percent(value)}")
    odd, odd_values = study.odd_table()
    broken += [
        f"odd-system coverage {study.percent(v)} at {n} seeds"
        for n, v in odd_values
        if v < study.MIN_ODD_COVERAGE and n not in study.REPORTED_ONLY_SEEDS
    ]
    familywise, rates = study.familywise_table()
    odd_familywise, odd_rates = study.odd_familywise_table()
    broken += [
        f"family-wise error {study.percent(r)} at {n} seeds"
        for n, r in rates + odd_rates
        if r > 0.05 and n not in study.REPORTED_ONLY_SEEDS
    ]
    return {
        "coverage-table": cover,
        "width-table": width,
        "odd-system-table": odd,
        "familywise-table": familywise,
        "odd-familywise-table": odd_familywise,
    }, broken


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--check", action="store_true", help="exit 1 if docs/statistics.md's tables differ")
    action.add_argument("--write", action="store_true", help="write the tables into docs/statistics.md")
    parser.add_argument("--jobs", type=int, default=2, help="processes the cells are spread over")
    args = parser.parse_args()
    computed(args.jobs)
    made, broken = tables()
    text = DOCS.read_text(encoding="utf-8")
    stale = []
    for marker, table in made.items():
        print(f"{marker}:\n{table}\n")
        if documented_table(marker, text) != table:
            stale.append(marker)
            text = re.sub(
                rf"(<!-- {marker} -->\n).*?(\n<!-- /{marker} -->)",
                lambda m: m.group(1) + table + m.group(2),
                text,
                flags=re.S,
            )
    if args.write:
        DOCS.write_text(text, encoding="utf-8")
    for line in broken:
        print(f"the promise is broken: {line}", file=sys.stderr)
    if args.check and stale:
        print(f"docs/statistics.md's tables differ from the study: {', '.join(stale)}", file=sys.stderr)
    return 1 if broken or (args.check and stale) else 0


if __name__ == "__main__":
    sys.exit(main())
