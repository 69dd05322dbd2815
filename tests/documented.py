"""The tables docs/statistics.md carries between <!-- marker --> lines: the output of the simulation studies
(benchmarks/coverage-study.py writes and checks them; tests/studies/test_coverage.py and
tests/studies/test_gate_coverage.py recompute cells)."""

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "docs" / "statistics.md"


def documented_table(marker: str, text: str | None = None) -> str:
    text = DOCS.read_text(encoding="utf-8") if text is None else text
    match = re.search(rf"<!-- {marker} -->\n(.*?)\n<!-- /{marker} -->", text, re.S)
    assert match, f"docs/statistics.md has no <!-- {marker} --> table"
    return match.group(1).strip()


def documented_cells(marker: str, first: str | None = None):
    """The table's rows below its header as lists of cells; with ``first``, the one row whose first cell it is."""
    rows = [
        [cell.strip() for cell in line.strip().strip("|").split("|")]
        for line in documented_table(marker).splitlines()[2:]
    ]
    return rows if first is None else next(row for row in rows if row[0] == first)
