"""The tables docs/statistics.md carries between <!-- marker --> lines: the output of the simulation tests that check
them (tests/test_coverage.py, tests/test_gate_coverage.py)."""
import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "docs" / "statistics.md"


def documented_table(marker: str) -> str:
    text = DOCS.read_text(encoding="utf-8")
    match = re.search(rf"<!-- {marker} -->\n(.*?)\n<!-- /{marker} -->", text, re.S)
    assert match, f"docs/statistics.md has no <!-- {marker} --> table"
    return match.group(1).strip()
