"""The report on a phone, measured in headless Chromium at 390 x 844 (tests/browser.py): a partial report of the
tiny preset (every section, most results missing: long paths, MISSING pills) is no wider than the screen, its
results tables pin at most a third of their box, and every pill stays inside its cell. The rules that make it so
are checked without a browser in tests/unit/test_report_page.py."""

import json
from pathlib import Path

from nmt.cli import main

from browser import phone_layout, phone_problems

ROOT = Path(__file__).resolve().parents[2]


def test_a_partial_report_reads_on_a_phone(tmp_path):
    scores = tmp_path / "results" / "en-de" / "scores" / "base.test.json"
    scores.parent.mkdir(parents=True)
    scores.write_text(json.dumps({"system": "base", "testset": "test", "preset": "tiny", "pair": "en-de", "ppl": 12.5}))
    assert (
        main(
            [
                "report",
                "--params",
                str(ROOT / "params.yaml"),
                "--preset",
                "tiny",
                "--results",
                str(tmp_path / "results"),
                "--data",
                str(tmp_path / "data"),
                "--out",
                str(tmp_path / "report"),
                "--partial",
            ]
        )
        == 0
    )
    page = tmp_path / "report" / "index.html"
    assert "MISSING results:</strong>" in page.read_text()
    layout = phone_layout(page)
    assert layout["viewport"] == 390 and len(layout["pinned"]) >= 10
    assert phone_problems(layout) == []
