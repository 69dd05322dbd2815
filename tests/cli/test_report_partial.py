"""A run that holds fewer seed runs than its preset plans (a reference made one seed at a time, its later seeds not in
yet), reported by `nmt report --partial`: each row the mean of the runs it has, "k of n runs" on the page, in the
CSV and the JSON, the claims judged on those runs and saying so, and claims.json's run saying how much is in."""

import csv
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from nmt import config as cfg
from nmt.report.tables import build_table
from nmt.scoring import significance

ROOT = Path(__file__).resolve().parents[2]
REFS = [" ".join(random.Random(i).choice("a b c d e f g h i j k l".split()) for _ in range(12)) for i in range(120)]


def nmt(*argv: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nmt.cli", *argv], capture_output=True, text=True, cwd=cwd)


def scored(results: Path, run: str, rate: float) -> float:
    """A translation of small-gpu's en-de test set by ``run`` (every word kept with probability 1 - rate) and its
    scores file, as `nmt evaluate` writes them; its BLEU."""
    rng = random.Random(f"{run} {rate}")
    hyps = [" ".join(w for w in line.split() if rng.random() > rate) for line in REFS]
    ref, hyp = results.parent / "ref.txt", results.parent / "out" / f"{run}.txt"
    hyp.parent.mkdir(parents=True, exist_ok=True)
    ref.write_text("".join(f"{line}\n" for line in REFS))
    hyp.write_text("".join(f"{line}\n" for line in hyps))
    bleu = significance.bleu_of(significance.bleu_statistics(hyps, REFS, "none"), "none")
    scores = results / "en-de" / "scores" / f"{run}.test.json"
    scores.parent.mkdir(parents=True, exist_ok=True)
    scores.write_text(
        json.dumps(
            {
                "system": run,
                "testset": "test",
                "preset": "small-gpu",
                "pair": "en-de",
                "hyp": str(hyp),
                "ref": str(ref),
                "bleu_tok": bleu,
                "ppl": 10.0 + rate,
            }
        )
    )
    return bleu


@pytest.fixture(scope="module")
def partial_report(tmp_path_factory):
    """small-gpu's base with seeds 1 and 2 of 3, base_reverse with seed 1 alone, rendered with --partial."""
    where = tmp_path_factory.mktemp("partial")
    results = where / "results"
    bleus = {
        run: scored(results, run, rate) for run, rate in (("base", 0.5), ("base_seed2", 0.45), ("base_reverse", 0.2))
    }
    done = nmt(
        "report",
        "--params",
        str(ROOT / "params.yaml"),
        "--preset",
        "small-gpu",
        "--results",
        str(results),
        "--data",
        str(where / "data"),
        "--out",
        str(where / "report"),
        "--partial",
        cwd=where,
    )
    assert done.returncode == 0, done.stderr
    return where / "report", bleus, done.stderr


def test_each_row_is_the_mean_of_the_runs_it_has_and_says_k_of_n(partial_report):
    report, bleus, stderr = partial_report
    rows = {r["system"]: r for r in csv.DictReader((report / "luong2015_table1.csv").open())}
    assert rows["base"]["status"] == "measured" and rows["base"]["note"] == "measured: 2 of 3 runs"
    assert (rows["base"]["n_runs"], rows["base"]["n_planned"]) == ("2", "3")
    assert float(rows["base"]["ours_bleu_tok"]) == pytest.approx((bleus["base"] + bleus["base_seed2"]) / 2)
    assert rows["base_reverse"]["note"] == "measured: 1 of 3 runs" and rows["base_reverse"]["ours_bleu_tok_sd"] == ""
    assert rows["global_location"]["status"] == "missing"  # no run at all: missing, as in a complete run
    records = {r["system"]: r for r in json.loads((report / "luong2015_table1.json").read_text()) if r["system"]}
    assert (records["base"]["n_runs"], records["base"]["n_planned"]) == (2, 3)
    html = (report / "index.html").read_text()
    assert "measured: 2 of 3 runs" in html and "A partial run:" in html
    assert "3 of its 57 planned runs have scores (seeds 1, 2 of 1, 2, 3)" in html
    assert (
        "a partial run: 3 of its 57 planned runs have scores (seeds 1, 2 of 1, 2, 3); each row is the mean of "
        "the runs it has" in stderr
    )


def test_the_claims_are_judged_on_the_runs_there_are_and_the_run_says_it_is_partial(partial_report):
    report, _, _ = partial_report
    claims = json.loads((report / "claims.json").read_text())
    assert claims["run"]["partial"] == {
        "runs_in": 3,
        "runs_planned": 57,
        "seeds_in": [1, 2],
        "seeds_planned": [1, 2, 3],
        "text": "a partial run: 3 of its 57 planned runs have scores (seeds 1, 2 of 1, 2, 3)",
    }
    reverse = next(c for c in claims["claims"] if c["id"] == "luong-reverse")
    assert reverse["verdict"] != "not run" and reverse["n_runs"] == {"base": 2, "base_reverse": 1}
    assert reverse["n_planned"] == {"base": 3, "base_reverse": 3}
    assert reverse["verdict"] == "single run" and reverse["p_adjusted"] is None  # base_reverse's one run: no verdict
    assert reverse["verdict_label"].startswith("one run: ") and reverse["verdict_label"].endswith("; 1 of 3 runs")
    assert "the seed runs not in yet measure it" in reverse["power_note"]
    assert reverse["interval_method"].startswith("sentence bootstrap")  # one side a single run
    line = next(r for r in csv.DictReader((report / "claims.csv").open()) if r["id"] == "luong-reverse")
    assert line["n_planned"] == "base=3 base_reverse=3"


def test_without_partial_a_row_missing_a_seed_run_is_missing_and_says_how_many_are_in(partial_report, tmp_path):
    report, _, _ = partial_report
    table = cfg.load_table(ROOT / "workflow/tables/luong2015_table1.yaml")
    scores = report.parent / "results" / "en-de" / "scores"
    df = build_table(table, scores, "en-de", "small-gpu", runs={"base": ["base", "base_seed2", "base_seed3"]})
    row = df[df["system"] == "base"].iloc[0]
    assert row["status"] == "missing" and row["n_runs"] == 0 and row["n_planned"] == 3
    assert row["note"] == (
        "MISSING results: no base_seed3.test.json (2 of 3 runs scored: nmt report --partial shows their mean)"
    )
