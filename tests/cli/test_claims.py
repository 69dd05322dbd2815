"""The claims ledger: claims files, the paired bootstrap (against sacreBLEU's own command line), the verdict rule
on hand-made scores files (every outcome), Kendall's tau, and the report's Claims section and claims.json."""

import json
import math
import random
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from markupsafe import escape
from sacrebleu.significance import estimate_ci

from nmt import config as cfg
from nmt import settings
from nmt.base.errors import ConfigError, InputError
from nmt.config.claim_files import load_claims
from nmt.config.plan import collect_claims
from nmt.config.table_files import load_table
from nmt.report.claims import (
    CONTRADICTED,
    INCONCLUSIVE,
    NOT_RUN,
    REPRODUCED,
    SINGLE_RUN,
    ClaimJudge,
    adjust,
    claims_csv,
    comparison_p_values,
    kendall_tau,
    verdict_of,
)
from nmt.report.claims_view import claims_markdown
from nmt.report.inputs import ReportInputs
from nmt.report.render import render_report
from nmt.scoring import bleu, significance
from nmt.scoring.difference import SentenceLevel, TwoLevel

ROOT = Path(__file__).resolve().parents[2]
WORDS = [f"w{i}" for i in range(40)]


def sentences(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 14))) for _ in range(n)]


def corrupt(lines: list[str], rate: float, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(w if rng.random() > rate else "zz" for w in line.split()) for line in lines]


def write_lines(path: Path, lines: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


# --------------------------------------------------------------------------- the bootstrap is sacreBLEU's


def test_bootstrap_matches_the_sacrebleu_command_line(tmp_path):
    """Each system's bootstrap mean and 95% half-width, and the paired p-value, from our resamples equal what
    `sacrebleu REF -i A B --paired-bs` prints for the same files; the difference's interval comes from the same
    resamples."""
    refs = sentences(150, 1)
    a, b = corrupt(refs, 0.25, 2), corrupt(refs, 0.32, 3)
    files = [write_lines(tmp_path / name, lines) for name, lines in (("ref", refs), ("a", a), ("b", b))]
    done = subprocess.run(
        [
            str(Path(sys.executable).with_name("sacrebleu")),
            str(files[0]),
            "-i",
            str(files[1]),
            str(files[2]),
            "-m",
            "bleu",
            "--paired-bs",
            "--tokenize",
            "none",
            "-f",
            "json",
        ],
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin"},
    )
    printed = json.loads(done.stdout)
    indices = significance.resample_indices(len(refs), 1000)  # sacreBLEU's --paired-bs resamples
    resampled = {}
    for name, hyps, shown in (("a", a, printed[0]["BLEU"]), ("b", b, printed[1]["BLEU"])):
        stats = significance.bleu_statistics(hyps, refs, "none")
        assert significance.bleu_of(stats, "none") == pytest.approx(shown["score"], abs=1e-12)
        resampled[name] = significance.bleu_resamples(stats, indices, "none")
        mean, half_width = estimate_ci(resampled[name])
        assert (mean, half_width) == (pytest.approx(shown["mean"], abs=1e-9), pytest.approx(shown["ci"], abs=1e-9))
    differences = np.abs(resampled["b"] - resampled["a"])
    real = abs(printed[0]["BLEU"]["score"] - printed[1]["BLEU"]["score"])
    p_value = ((differences - differences.mean() > real).sum() + 1) / (len(differences) + 1)
    assert p_value == pytest.approx(printed[1]["BLEU"]["p_value"])
    low, high = significance.percentile_interval(resampled["a"] - resampled["b"])
    ordered = np.sort(resampled["a"] - resampled["b"])
    assert (low, high) == (ordered[25], ordered[974]) and low < high


def test_error_rate_resamples_are_corpus_rates_of_the_resampled_sentences():
    counts = np.array([[3, 2, 1, 2], [4, 4, 4, 4], [2, 3, 0, 1]], dtype=float)  # [|A|, |S|, |A∩S|, |A∩P|]
    indices = np.array([[0, 0, 2], [1, 2, 1]])
    expected = [
        1 - (1 + 2 + 1 + 2 + 0 + 1) / (3 + 2 + 3 + 2 + 2 + 3),
        1 - (4 + 4 + 0 + 1 + 4 + 4) / (4 + 4 + 2 + 3 + 4 + 4),
    ]
    assert significance.error_rate_resamples(counts, indices) == pytest.approx(expected)
    assert significance.error_rate(counts.sum(axis=0)) == pytest.approx(1 - (5 + 7) / (9 + 9))


# --------------------------------------------------------------------------- verdicts


def interval_rule(kind: str, direction: str, low: float, high: float, margin: float | None) -> str:
    """The verdict rule as the report states it, on the 95% interval [low, high] of A - B (a naive reference)."""
    if kind == "equal":
        if -margin < low and high < margin:
            return REPRODUCED
        return CONTRADICTED if low > margin or high < -margin else INCONCLUSIVE
    better_low, better_high = (low, high) if direction == "higher" else (-high, -low)
    threshold = -margin if kind == "within" else 0.0
    if better_low > threshold:
        return REPRODUCED
    return CONTRADICTED if better_high < threshold else INCONCLUSIVE


@pytest.mark.parametrize(
    "kind, direction, margin",
    [
        ("better", "higher", None),
        ("better", "lower", None),
        ("within", "higher", 1.0),
        ("within", "lower", 0.5),
        ("equal", "higher", 0.5),
    ],
)
def test_verdicts_from_p_values_are_the_interval_rule(kind, direction, margin):
    """Verdicts are read off p-values (so that they can be adjusted for many claims); for a single run's bootstrap
    and for the interval over seeds and sentences alike they equal the rule the report states on the 95% interval."""
    rng = np.random.default_rng(5)
    outcomes = set()
    for i in range(400):
        centre, spread = rng.uniform(-2.5, 2.5), rng.uniform(0.05, 1.5)
        if i % 2:
            difference = SentenceLevel(delta=centre, samples=rng.normal(centre, spread, size=1000))
        else:
            difference = TwoLevel(
                delta=centre,
                shared=spread**2 * rng.uniform(0, 1),
                seed_vars=(spread**2,),
                runs=(3,),
                seed_dfs=(rng.uniform(2, 30),),
            )
        low, high = difference.interval
        expected = interval_rule(kind, direction, low, high, margin)
        assert verdict_of(*comparison_p_values(kind, direction, difference, margin)) == expected
        outcomes.add(expected)
    assert outcomes == {REPRODUCED, CONTRADICTED, INCONCLUSIVE}


def test_kendall_tau_on_a_hand_computed_case():
    # paper 1 2 3 4 against ours 1 3 2 4: 5 concordant pairs, 1 discordant -> (5 - 1) / 6
    assert kendall_tau([1.0, 2.0, 3.0, 4.0], [1.0, 3.0, 2.0, 4.0]) == (pytest.approx(4 / 6), 4)
    assert kendall_tau([1.0, 2.0, 3.0], [3.0, 2.0, 1.0]) == (pytest.approx(-1.0), 3)
    assert kendall_tau([1.0, float("nan"), 3.0], [1.0, 2.0, float("nan")]) == (None, 1)  # rows without both values


# --------------------------------------------------------------------------- a hand-made run

TABLE = {
    "id": "toy_table",
    "title": "Toy",
    "paper": "Toy et al.",
    "task": "en-de",
    "testset": "test",
    "columns": ["bleu_tok", "bleu_tok_unk"],
    "systems": {name: {} for name in ("strong", "weak", "twin", "flipped", "untrained")},
    "rows": [
        {"label": "strong", "system": "strong", "paper": {"bleu_tok": 30.0, "bleu_tok_unk": 31.0}},
        {"label": "weak", "system": "weak", "paper": {"bleu_tok": 20.0, "bleu_tok_unk": 22.0}},
        {"label": "twin", "system": "twin", "paper": {"bleu_tok": 29.0}},
        {"label": "flipped", "system": "flipped", "paper": {"bleu_tok": 35.0}},
        {"label": "untrained", "system": "untrained", "paper": {"bleu_tok": 10.0}},
    ],
}
ALIGN_TABLE = {
    "id": "toy_align",
    "title": "Toy AER",
    "paper": "Toy et al.",
    "task": "en-de",
    "testset": "align",
    "columns": ["aer"],
    "systems": {"good": {}, "bad": {}},
    "rows": [
        {"label": "good", "system": "good", "paper": {"aer": 0.2}},
        {"label": "bad", "system": "bad", "paper": {"aer": 0.4}},
    ],
}
CLAIMS = {
    "paper": "Toy et al.",
    "claims": [
        {
            "id": "strong-beats-weak",
            "claim": "strong beats weak",
            "where": "T1",
            "table": "toy_table",
            "metric": "bleu_tok",
            "better": ["strong", "weak"],
        },
        {
            "id": "twin-beats-strong",
            "claim": "twin beats strong (the table says so; our twin is the same system)",
            "where": "T1",
            "table": "toy_table",
            "metric": "bleu_tok",
            "better": ["strong", "twin"],
        },
        {
            "id": "flipped-beats-strong",
            "claim": "a claim our run contradicts",
            "where": "T1",
            "table": "toy_table",
            "metric": "bleu_tok",
            "better": ["flipped", "strong"],
        },
        {
            "id": "untrained",
            "claim": "a system this preset does not train",
            "where": "T1",
            "table": "toy_table",
            "metric": "bleu_tok",
            "better": ["strong", "untrained"],
        },
        {
            "id": "unk-gain",
            "claim": "unk replacement helps the weak system more",
            "where": "T1",
            "table": "toy_table",
            "metric": "bleu_tok",
            "better": [{"gain": ["weak.bleu_tok_unk", "weak"]}, {"gain": ["strong.bleu_tok_unk", "strong"]}],
        },
        {
            "id": "aer-order",
            "claim": "good aligns better than bad",
            "where": "T2",
            "table": "toy_align",
            "metric": "aer",
            "better": ["good", "bad"],
        },
        {
            "id": "aer-order-not-run",
            "claim": "an unavailable table",
            "where": "T3",
            "table": "toy_align_gone",
            "metric": "aer",
            "better": ["good", "bad"],
        },
    ],
}


@pytest.fixture()
def toy_run(tmp_path):
    tables_dir = tmp_path / "tables"
    tables_dir.mkdir()
    gone = {**ALIGN_TABLE, "id": "toy_align_gone"}
    for table in (TABLE, ALIGN_TABLE, gone):
        (tables_dir / f"{table['id']}.yaml").write_text(yaml.safe_dump(table))
    tables = {t["id"]: load_table(tables_dir / f"{t['id']}.yaml") for t in (TABLE, ALIGN_TABLE, gone)}
    claims_file = tmp_path / "claims.yaml"
    claims_file.write_text(yaml.safe_dump(CLAIMS))
    results = tmp_path / "results" / "toy"
    scores_dir = results / "en-de" / "scores"
    scores_dir.mkdir(parents=True)
    refs = sentences(120, 7)
    ref = write_lines(tmp_path / "data" / "test.tgt", refs)
    translations = {"strong": corrupt(refs, 0.05, 11), "weak": corrupt(refs, 0.45, 12)}
    translations["twin"] = list(translations["strong"])
    translations["twin"][0] = "zz " + translations["twin"][0]  # one word apart: no real difference
    translations["flipped"] = corrupt(refs, 0.4, 15)  # the paper's best system, our worst
    unk = {
        "strong": corrupt(refs, 0.04, 13),
        "weak": corrupt(refs, 0.25, 14),
        "twin": translations["twin"],
        "flipped": translations["flipped"],
    }
    for system, hyps in translations.items():
        hyp = write_lines(tmp_path / "out" / f"{system}.txt", hyps)
        unk_hyp = write_lines(tmp_path / "out" / f"{system}.unk.txt", unk[system])
        stats = significance.bleu_statistics(hyps, refs, "none")
        unk_stats = significance.bleu_statistics(unk[system], refs, "none")
        (scores_dir / f"{system}.test.json").write_text(
            json.dumps(
                {
                    "system": system,
                    "testset": "test",
                    "preset": "toy",
                    "pair": "en-de",
                    "hyp": str(hyp),
                    "ref": str(ref),
                    "bleu_tok": significance.bleu_of(stats, "none"),
                    "bleu_tok_unk": significance.bleu_of(unk_stats, "none"),
                    "unk": {"hyp": str(unk_hyp)},
                }
            )
        )
    rng = np.random.default_rng(3)
    for system, hit in (("good", 0.85), ("bad", 0.45)):
        counts = []
        for _ in range(80):
            a, s = int(rng.integers(5, 12)), int(rng.integers(5, 12))
            a_s = int(rng.binomial(min(a, s), hit))
            counts.append([a, s, a_s, min(a, a_s + int(rng.integers(0, 2)))])
        totals = np.sum(counts, axis=0)
        (scores_dir / f"{system}.align.json").write_text(
            json.dumps(
                {
                    "system": system,
                    "testset": "align",
                    "aer": significance.error_rate(totals),
                    "sentence_counts": {"aer": counts},
                }
            )
        )
    judge = ClaimJudge(
        results_dir=results,
        preset="toy",
        tables_by_id=tables,
        pair_for_task={"en-de": "en-de"},
        unavailable={"toy_align_gone": "gold alignments (no align split)"},
    )
    return judge, load_claims(claims_file, tables)["claims"], tables


def test_verdicts_on_hand_made_scores_files(toy_run):
    """Every system of the toy run has one run: no claim gets a verdict, each says which way its two models differ
    (the sentence bootstrap's 95% interval on the paper's side of the threshold, the other, or across it)."""
    judge, claims, _ = toy_run
    judged = {c["id"]: judge.judge(c) for c in claims}
    assert all(r["verdict"] in (SINGLE_RUN, NOT_RUN) for r in judged.values())
    assert judged["strong-beats-weak"]["points"] == "for" and judged["strong-beats-weak"]["ci_low"] > 0
    assert judged["strong-beats-weak"]["paper_delta"] == 10.0
    assert judged["twin-beats-strong"]["points"] == "neither"
    assert judged["twin-beats-strong"]["ci_low"] <= 0 <= judged["twin-beats-strong"]["ci_high"]
    assert judged["flipped-beats-strong"]["points"] == "against"
    assert judged["flipped-beats-strong"]["paper_delta"] == 5.0 and judged["flipped-beats-strong"]["ci_high"] < 0
    assert judged["untrained"]["verdict"] == NOT_RUN and "no scores for untrained" in judged["untrained"]["reason"]
    assert judged["untrained"]["points"] is None
    gain = judged["unk-gain"]
    assert gain["paper_delta"] == pytest.approx(1.0) and gain["points"] == "for"
    assert judged["aer-order"]["points"] == "for" and judged["aer-order"]["ours_delta"] < 0
    assert judged["aer-order"]["paper_delta"] == pytest.approx(-0.2)
    gone = judged["aer-order-not-run"]
    assert gone["verdict"] == NOT_RUN and "gold alignments" in gone["reason"]
    # our difference is the whole test set's, the interval surrounds it
    strong = judged["strong-beats-weak"]
    assert strong["ci_low"] < strong["ours_delta"] < strong["ci_high"]
    # the same inputs give the same numbers (the bootstrap is seeded)
    again = {c["id"]: judge.judge(c) for c in claims}
    assert again == judged


def test_a_bleu_claim_shows_the_chrf_difference_beside_it(toy_run, tmp_path):
    """claims.json carries chrF's difference of the same two terms (each system's chrF from its scores file), with
    no interval and no part in the verdict; None where a scores file has no chrF."""
    judge, claims, _ = toy_run
    scores_dir = tmp_path / "results" / "toy" / "en-de" / "scores"
    chrf = {}
    for system in ("strong", "weak"):
        sfile = scores_dir / f"{system}.test.json"
        scores = json.loads(sfile.read_text())
        refs = (tmp_path / "data" / "test.tgt").read_text().splitlines()
        for field, hyp in (("chrf", scores["hyp"]), ("chrf_unk", scores["unk"]["hyp"])):
            chrf[system, field] = scores[field] = bleu.chrf(Path(hyp).read_text().splitlines(), refs)[0]
        sfile.write_text(json.dumps(scores))
    judged = {c["id"]: judge.judge(c) for c in claims}
    assert judged["strong-beats-weak"]["ours_delta_chrf"] == pytest.approx(
        chrf["strong", "chrf"] - chrf["weak", "chrf"]
    )
    assert judged["unk-gain"]["ours_delta_chrf"] == pytest.approx(
        (chrf["weak", "chrf_unk"] - chrf["weak", "chrf"]) - (chrf["strong", "chrf_unk"] - chrf["strong", "chrf"])
    )
    assert judged["twin-beats-strong"]["ours_delta_chrf"] is None  # twin's scores file has none
    assert judged["aer-order"]["ours_delta_chrf"] is None
    assert judged["strong-beats-weak"]["points"] == "for"


def test_a_translation_changed_after_scoring_is_an_error(toy_run):
    judge, claims, _ = toy_run
    scores = json.loads((judge.results_dir / "en-de" / "scores" / "weak.test.json").read_text())
    Path(scores["hyp"]).write_text(Path(scores["ref"]).read_text())
    with pytest.raises(InputError, match="the translation changed after it was scored"):
        judge.judge(next(c for c in claims if c["id"] == "strong-beats-weak"))


def add_seed_runs(
    judge: ClaimJudge, system: str, rates: tuple[float, ...], rng_seed: int
) -> tuple[list[float], list[str]]:
    """Seeds 2, 3, ... of a toy ``system``: its first run's scores file with other translations (corrupted at
    ``rates``); all its BLEUs and runs (the judge is not told of them)."""
    scores_dir = judge.results_dir / "en-de" / "scores"
    base = json.loads((scores_dir / f"{system}.test.json").read_text())
    refs = Path(base["ref"]).read_text().splitlines()
    bleus, runs = [base["bleu_tok"]], [system]
    for seed, rate in enumerate(rates, start=2):
        run = f"{system}_seed{seed}"
        hyps = corrupt(refs, rate, rng_seed + seed)
        hyp = write_lines(judge.results_dir.parent.parent / "out" / f"{run}.txt", hyps)
        bleus.append(significance.bleu_of(significance.bleu_statistics(hyps, refs, "none"), "none"))
        (scores_dir / f"{run}.test.json").write_text(
            json.dumps({**base, "system": run, "hyp": str(hyp), "bleu_tok": bleus[-1]})
        )
        runs.append(run)
    return bleus, runs


@pytest.fixture()
def seeded_toy_run(toy_run):
    """The toy run with three seeds of every BLEU system; the aligners keep one run each."""
    judge, claims, tables = toy_run
    for system, rates, rng_seed in (
        ("strong", (0.06, 0.07), 20),
        ("weak", (0.46, 0.47), 40),
        ("twin", (0.05, 0.06), 60),
        ("flipped", (0.41, 0.42), 80),
    ):
        judge.runs.setdefault("en-de", {})[system] = add_seed_runs(judge, system, rates, rng_seed)[1]
    return judge, claims, tables


def render_toy(judge, records, tmp_path) -> Path:
    out = tmp_path / "report"
    table_files = [tmp_path / "tables" / "toy_table.yaml"]
    render_report(
        ReportInputs(
            preset="toy",
            preset_description="",
            tables=table_files,
            results_dir=judge.results_dir,
            pair_for_task={"en-de": "en-de"},
            context={},
            claims=records,
            claim_files=["claims.yaml"],
        ),
        out,
    )
    return out


def test_report_has_the_claims_section_json_and_csv(seeded_toy_run, tmp_path):
    judge, claims, tables = seeded_toy_run
    records = adjust([judge.judge(c) for c in claims])
    out = render_toy(judge, records, tmp_path)
    html = (out / "index.html").read_text()
    assert '<section id="claims">' in html and "2 of 4 judged claims reproduced on toy" in html
    assert "1 rest on a single run and get no verdict, 2 were not run" in html
    assert 'href="#toy_table"' in html  # each claim links to its table
    assert "Kendall&#8217;s &#964;" in html
    data = json.loads((out / "claims.json").read_text())
    assert data["summary"] == {
        "claims": 7,
        "reproduced": 2,
        "contradicted": 1,
        "inconclusive": 1,
        "single_run": 1,
        "not_run": 2,
        "judged": 4,
        "family": 4,
        "not_converged": 0,
        "with_stand_in": 0,
        "checks": 0,
        "raw": {"reproduced": 2, "contradicted": 1, "inconclusive": 1, "single_run": 1, "not_run": 2},
    }
    for claim in data["claims"]:
        assert {
            "paper",
            "claim",
            "paper_delta",
            "ours_delta",
            "ci_low",
            "ci_high",
            "verdict",
            "verdict_raw",
            "verdict_adjusted",
            "p_adjusted",
            "paper_inside",
            "paper_position",
            "n_runs",
            "interval_method",
            "converged",
            "scope",
            "min_detectable",
            "seeds_needed",
            "seeds_needed_range",
            "assumed_seed_ratio",
            "power_note",
            "deciding",
            "weakest",
            "points",
        } <= set(claim)
    by_id = {c["id"]: c for c in data["claims"]}
    assert by_id["aer-order"]["verdict"] == SINGLE_RUN and by_id["aer-order"]["p_adjusted"] is None
    assert by_id["aer-order"]["verdict_label"].startswith("one run: points the paper's way")
    strong = by_id["strong-beats-weak"]
    assert strong["verdict"] == REPRODUCED and strong["paper_position"] in ("inside", "above", "below")
    assert strong["verdict_label"] == (
        f"reproduced (direction); the paper's +10.00 lies {strong['paper_position']} our interval"
    )
    assert data["checks"] == []
    assert "not reproduced at this scale" in html  # the toy preset is not the paper preset
    assert str(escape(strong["verdict_label"])) in html
    csv_lines = (out / "claims.csv").read_text().splitlines()
    assert csv_lines[0].startswith("id,paper,claim,") and len(csv_lines) == 8
    assert (out / "claims.csv").read_text() == claims_csv(records)
    ledger = (out / "claims.md").read_text()
    assert ledger == claims_markdown(data)
    assert (
        "7 claims of the papers: 4 judged (2 reproduced, 1 contradicted, 1 inconclusive; 0 of them capped by the "
        "convergence gate; Holm's adjustment over 4 of them), 1 resting on a single run (no verdict), 2 not run"
        in ledger
    )
    headings = [line for line in ledger.splitlines() if line.startswith("## ")]
    assert headings == [
        "## Reproduced (2)",
        "## Contradicted (1)",
        "## Inconclusive (1)",
        "## Single run (1)",
        "## Not run (2)",
    ]
    for claim in data["claims"]:  # every claim in its verdict's group, with its interval and label as the page's
        group = ledger.split(f"## {claim['verdict'].capitalize()} (")[1].split("\n## ")[0]
        line = next(line for line in group.splitlines() if f"**{claim['id']}**" in line)
        if claim["verdict"] != NOT_RUN:
            assert f"[{claim['ci_low']:+.2f}, {claim['ci_high']:+.2f}]" in line and claim["verdict_label"] in line
        else:
            assert claim["reason"] in line


def test_a_report_of_single_runs_judges_no_claim_and_says_so(toy_run, tmp_path):
    """The demo and tiny presets train one seed: every claim rests on single runs, none gets a verdict, the tally
    says so, and no claim is in Holm's family."""
    judge, claims, _ = toy_run
    records = adjust([judge.judge(c) for c in claims])
    out = render_toy(judge, records, tmp_path)
    html = (out / "index.html").read_text()
    assert "No claim tested on toy: 5 of its 7 claims rest on a single run" in html
    assert "no claim tested: single runs" in html and "no claim gets a verdict" in html
    data = json.loads((out / "claims.json").read_text())
    assert data["summary"]["judged"] == 0 and data["summary"]["family"] == 0 and data["summary"]["single_run"] == 5
    assert all(c["p_adjusted"] is None for c in data["claims"])
    labels = {c["id"]: c["verdict_label"] for c in data["claims"]}
    assert labels["strong-beats-weak"].startswith("one run: points the paper's way; the paper's +10.00 lies ")
    assert labels["twin-beats-strong"].startswith("one run: no direction")
    assert labels["flipped-beats-strong"].startswith("one run: points the other way")
    # what it would take: seeds projected from the assumed spread between seeds, said to be an assumption
    strong = next(c for c in data["claims"] if c["id"] == "strong-beats-weak")
    assert strong["assumed_seed_ratio"] == 1.0 and strong["seeds_needed_range"] is None
    for claim in data["claims"]:
        if claim["seeds_needed"] is not None:
            assert "an assumption, not a measurement" in claim["power_note"]
            assert f"would need about {claim['seeds_needed']} seeds" in claim["power_note"]
    ledger = (out / "claims.md").read_text()
    assert "0 judged (0 reproduced, 0 contradicted, 0 inconclusive" in ledger and "## Single run (5)" in ledger
    assert "The 5% family-wise error rate covers the judged claims' verdicts only." in ledger


def test_the_claims_ledger_keeps_one_claim_per_row():
    from nmt.report.claims_view import claims_markdown

    record = {
        "preset": "toy",
        "rule": {"alpha": 0.05, "correction": "holm", "interval": "95%", "power": "80%"},
        "summary": {
            "claims": 1,
            "reproduced": 0,
            "contradicted": 0,
            "inconclusive": 0,
            "not_run": 1,
            "not_converged": 0,
            "checks": 0,
        },
        "claims": [
            {
                "id": "x",
                "paper": "P",
                "claim": "a | b\nover two lines",
                "where": "Table 1",
                "kind": "better",
                "comparisons": [],
                "paper_delta": None,
                "ours_delta": None,
                "ci_low": None,
                "ci_high": None,
                "verdict": NOT_RUN,
                "reason": "no | run",
            }
        ],
        "checks": [],
        "trainings": [],
    }
    ledger = claims_markdown(record)
    assert "| **x**: a \\| b over two lines | Table 1 | no \\| run |" in ledger.splitlines()


# --------------------------------------------------------------------------- the claims files


def test_a_claim_naming_an_unknown_system_names_the_file_and_key(tmp_path):
    table = load_table(ROOT / "workflow/tables/luong2015_table1.yaml")
    bad = tmp_path / "claims.yaml"
    bad.write_text(
        yaml.safe_dump(
            {
                "paper": "Luong",
                "claims": [
                    {
                        "id": "ok",
                        "claim": "c",
                        "where": "T1",
                        "table": "luong2015_table1",
                        "metric": "bleu_tok",
                        "better": ["base_reverse", "base"],
                    },
                    {
                        "id": "typo",
                        "claim": "c",
                        "where": "T1",
                        "table": "luong2015_table1",
                        "metric": "bleu_tok",
                        "better": ["base_reverse", "base_revers"],
                    },
                ],
            }
        )
    )
    with pytest.raises(
        ValueError,
        match=r"claims\.yaml: claims\[2\] \(typo\): better\[2\]: unknown system "
        r"'base_revers': not a row of table luong2015_table1",
    ):
        load_claims(bad, {"luong2015_table1": table})


@pytest.mark.parametrize(
    "claim, message",
    [
        ({"better": ["base_reverse", "base"], "table": "nope"}, "table: 'nope' is not one of the preset's tables"),
        ({"better": ["base", "base_reverse"]}, "the table's paper values do not say this"),
        ({"better": ["base_reverse", "base"], "order": ["a", "b", "c"]}, "exactly one of"),
        ({"better": ["base_reverse.bleu_nope", "base"]}, "'bleu_nope' is not a scores field"),
        ({"better": ["base_reverse"]}, "better: ['base_reverse'] is too short"),
        (
            {
                "within": {
                    "values": ["base_reverse", "base"],
                    "margin": -1,
                    "margin_basis": "derived",
                    "margin_why": "w",
                }
            },
            "within.margin: -1 is less than or equal to",
        ),
        ({"within": {"values": ["base_reverse", "base"], "margin": 1}}, "'margin_basis' is a required property"),
    ],
)
def test_bad_claims_are_errors_naming_the_key(tmp_path, claim, message):
    table = load_table(ROOT / "workflow/tables/luong2015_table1.yaml")
    bad = tmp_path / "claims.yaml"
    bad.write_text(
        yaml.safe_dump(
            {
                "paper": "Luong",
                "claims": [
                    {
                        "id": "c1",
                        "claim": "c",
                        "where": "T1",
                        "table": "luong2015_table1",
                        "metric": "bleu_tok",
                        **claim,
                    }
                ],
            }
        )
    )
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]").replace("(", r"\(")):
        load_claims(bad, {"luong2015_table1": table})


def test_the_papers_claims_load_against_the_tables():
    """At least 20 claims over the three papers, each resolving to the rows of a table every preset has."""
    for preset in ("demo", "tiny", "small", "paper"):
        claims = collect_claims(cfg.load_params(ROOT / "params.yaml", preset), ROOT)
        assert len(claims) >= 20
        assert {c["paper"] for c in claims} == {"Luong et al. (2015)", "Raffel et al. (2017)", "Peter et al. (2017)"}
        kinds = {c["kind"] for c in claims}
        assert {"better", "best", "each_better", "within", "equal", "speedup"} <= kinds


def test_nmt_report_with_a_bad_claims_file_is_one_line(tmp_path):
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    params["presets_dir"] = str(ROOT / params["presets_dir"])
    params["tables"] = [str(ROOT / t) for t in params["tables"]]
    params["figures"] = [str(ROOT / f) for f in params["figures"]]
    shutil.copy(ROOT / "workflow/claims/peter2017.yaml", tmp_path / "claims.yaml")
    text = (
        (tmp_path / "claims.yaml")
        .read_text()
        .replace("better: [rnnsearch_guided, rnnsearch]", "better: [rnnsearch_guided, rnnsearch_gided]", 1)
    )
    (tmp_path / "claims.yaml").write_text(text)
    params["claims"] = [str(tmp_path / "claims.yaml")]
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "nmt.cli",
            "report",
            "--params",
            str(tmp_path / "params.yaml"),
            "--preset",
            "tiny",
            "--results",
            str(tmp_path / "results"),
            "--data",
            str(tmp_path / "data"),
            "--out",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
    )
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert (
        f"{tmp_path / 'claims.yaml'}: claims[1] (peter-guided-lowers-aer): better[2]: unknown system "
        f"'rnnsearch_gided'" in lines[0]
    )
    assert not (tmp_path / "out").exists()


def test_a_claim_id_used_in_two_files_is_an_error(tmp_path):
    config = cfg.load_params(ROOT / "params.yaml", "tiny")
    copy = tmp_path / "again.yaml"
    shutil.copy(ROOT / "workflow/claims/raffel2017.yaml", copy)
    config["claims"] = [*config["claims"], str(copy)]
    with pytest.raises(
        ConfigError,
        match="claim id 'raffel-monotonic-eq17-near-softmax' is also used in workflow/claims/raffel2017.yaml",
    ):
        collect_claims(config, ROOT)


# --------------------------------------------------------------------------- several seeds


def test_seed_runs_are_averaged_in_tables_and_their_spread_widens_the_interval(toy_run):
    judge, claims, tables = toy_run
    scores_dir = judge.results_dir / "en-de" / "scores"
    bleus, _ = add_seed_runs(judge, "strong", (0.15, 0.25), 20)  # two more runs of "strong", each worse than the first
    weak_bleus, _ = add_seed_runs(judge, "weak", (0.55, 0.6), 40)
    claim = next(c for c in claims if c["id"] == "strong-beats-weak")
    single = judge.judge(claim)
    judge.runs = {"en-de": {"strong": ["strong", "strong_seed2", "strong_seed3"]}}
    mixed = judge.judge(claim)  # one side a single run: the sentence level alone, and no verdict
    assert mixed["n_runs"] == {"strong": 3, "weak": 1} and mixed["interval_method"].startswith("sentence")
    assert mixed["verdict_raw"] == SINGLE_RUN and mixed["comparisons"][0]["verdict"] == SINGLE_RUN
    assert adjust([mixed])[0]["verdict_label"].startswith("one run: points the paper's way")
    assert mixed["verdict"] == SINGLE_RUN and mixed["p_adjusted"] is None
    # what would decide it: seeds at the assumed spread between seeds (verdicts.assumed_seed_ratio), said so
    assert mixed["assumed_seed_ratio"] == 1.0 and mixed["seeds_needed"] >= 2 and mixed["seeds_needed_range"] is None
    assert "not measured" in mixed["power_note"] and "an assumption, not a measurement" in mixed["power_note"]
    judge.runs["en-de"]["weak"] = ["weak", "weak_seed2", "weak_seed3"]
    seeded = judge.judge(claim)
    assert seeded["ours_delta"] == pytest.approx(np.mean(bleus) - np.mean(weak_bleus))
    assert seeded["n_runs"] == {"strong": 3, "weak": 3} and single["n_runs"] == {"strong": 1, "weak": 1}
    assert seeded["interval_method"].startswith("two-level") and single["interval_method"].startswith("sentence")
    assert seeded["ci_high"] - seeded["ci_low"] > single["ci_high"] - single["ci_low"]
    assert seeded["min_detectable"] > 0 and "3 seeds detect" in seeded["power_note"]
    # the table shows the runs' mean and sample standard deviation
    from nmt.report.tables import build_table

    df = build_table(tables["toy_table"], scores_dir, "en-de", "toy", runs=judge.runs["en-de"])
    row = df[df["system"] == "strong"].iloc[0]
    assert row["ours_bleu_tok"] == pytest.approx(np.mean(bleus))
    assert row["ours_bleu_tok_sd"] == pytest.approx(np.std(bleus, ddof=1)) and row["n_runs"] == 3
    df = build_table(tables["toy_table"], scores_dir, "en-de", "toy", runs={"strong": judge.runs["en-de"]["strong"]})
    assert np.isnan(df[df["system"] == "weak"].iloc[0]["ours_bleu_tok_sd"])  # one run: no spread
    (scores_dir / "strong_seed3.test.json").unlink()
    df = build_table(tables["toy_table"], scores_dir, "en-de", "toy", runs=judge.runs["en-de"])
    assert df[df["system"] == "strong"].iloc[0]["status"] == "missing"


def test_a_seed_run_is_its_system_with_another_seed_and_the_same_seed_s_parents():
    config = cfg.load_params(ROOT / "params.yaml", "tiny")
    config["train"]["seeds"] = [4, 7]
    table = cfg.load_table(ROOT / "workflow/tables/peter2017_table1.yaml")
    primary = cfg.system_config(config, table, "rnnsearch_tf_frozen")
    run = cfg.system_config(config, table, "rnnsearch_tf_frozen_seed7")
    assert primary["train"]["seed"] == 4 and run["train"]["seed"] == 7
    assert primary["train"]["init_from"] == {"system": "rnnsearch"}
    assert run["train"]["init_from"] == {"system": "rnnsearch_seed7"}
    assert settings.comparable_settings(run)["train"] == {
        **settings.comparable_settings(primary)["train"],
        "seed": 7,
        "init_from": {"system": "rnnsearch_seed7"},
    }
    with pytest.raises(ConfigError, match="5 is not one of rnnsearch's train.seeds after the first"):
        cfg.system_config(config, table, "rnnsearch_seed5")
    assert "seeds" not in settings.comparable_settings(primary)["train"]  # adding seeds retrains nothing


def test_a_table_system_may_not_be_named_like_a_seed_run(tmp_path):
    table = yaml.safe_load((ROOT / "workflow/tables/luong2015_table1.yaml").read_text())
    table["systems"]["base_seed2"] = table["systems"].pop("base")
    (tmp_path / "t.yaml").write_text(yaml.safe_dump(table))
    with pytest.raises(ValueError, match=r"t\.yaml: systems\.base_seed2: a name ending in _seedN is a seed run's"):
        load_table(tmp_path / "t.yaml")


def test_a_claim_on_a_table_the_preset_does_not_run_is_not_run(tmp_path):
    config = cfg.load_params(ROOT / "params.yaml", "tiny")
    config["tables"] = ["workflow/tables/raffel2017_table4.yaml"]
    claims = collect_claims(config, ROOT)
    luong = [c for c in claims if c["paper"] == "Luong et al. (2015)"]
    assert luong and all(c["absent"] == f"the preset does not run table {c['table']}" for c in luong)
    judge = ClaimJudge(results_dir=tmp_path, preset="tiny", tables_by_id={}, pair_for_task={})
    record = judge.judge(luong[0])
    assert record["verdict"] == NOT_RUN and record["reason"] == "the preset does not run table luong2015_table1"


def test_nmt_report_with_a_malformed_metrics_file_is_one_line_naming_its_line(tmp_path):
    models = tmp_path / "results" / "en-de" / "models" / "base"
    models.mkdir(parents=True)
    (models / "metrics.jsonl").write_text('{"epoch": 1, "lr": 1.0, "dev_ppl": 12.5}\n{"epoch": 2, "dev_ppl": \n')
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "nmt.cli",
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
            str(tmp_path / "out"),
            "--partial",
        ],
        capture_output=True,
        text=True,
    )
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert lines[0].startswith(f"nmt: error: {models / 'metrics.jsonl'}:2:25: invalid JSON: "), lines[0]


def test_what_a_claim_could_detect_is_said_in_words():
    from nmt.report.claims import claim_power

    def comparison(delta, effect, detectable, needed, method="two-level"):
        return {
            "paper_delta": delta,
            "paper_effect": effect,
            "min_detectable": detectable,
            "seeds_needed": needed,
            "method": method,
        }

    runs = {"a": 3, "b": 3}
    short = claim_power([comparison(0.6, 0.6, 1.4, 14)], runs, "better")
    assert short["seeds_needed"] == 14 and short["power_note"] == "3 seeds detect 1.4; the paper's +0.6 needs about 14"
    enough = claim_power([comparison(2.0, 2.0, 1.4, None)], runs, "better")
    assert enough["seeds_needed"] is None and enough["power_note"] == "3 seeds detect 1.4: the paper's +2 included"
    beyond = claim_power([comparison(0.1, 0.1, 1.4, None)], runs, "better")
    assert beyond["seeds_needed"] is None and "below what any number of seeds detects" in beyond["power_note"]
    at_margin = claim_power([comparison(0.02, 0.0, 0.03, None)], runs, "within")
    assert "(0 inside the margin) sits at the claim's threshold" in at_margin["power_note"]
    # the claim needs every comparison: the largest figures
    both = claim_power([comparison(0.6, 0.6, 1.4, 14), comparison(0.5, 0.5, 1.0, 9)], runs, "best")
    assert both["min_detectable"] == 1.4 and both["seeds_needed"] == 14 and both["paper_effect"] == 0.5
    single = claim_power(
        [comparison(0.6, 0.6, 1.4, 9, method="sentence")], {"a": 3, "b": 1}, "better", assumed_seed_ratio=4.0
    )
    assert single["seeds_needed"] == 9 and single["assumed_seed_ratio"] == 4.0 and single["seeds_needed_range"] is None
    assert single["power_note"] == (
        "one run: the spread between seeds is not measured (the test sentences alone detect 1.4; train.seeds: "
        "[1, 2, 3] measures it); were seeds to vary 4x as much as test sets (verdicts.assumed_seed_ratio: an "
        "assumption, not a measurement), the paper's +0.6 would need about 9 seeds"
    )
    # a single run needs seeds even where the test sentences alone would detect the paper's difference
    assert (
        claim_power([comparison(2.0, 2.0, 1.4, 3, method="sentence")], {"a": 1}, "better", None, 1.0)["seeds_needed"]
        == 3
    )
    # the range of the seeds needed: the largest low and high of the comparisons that fall short
    ranged = claim_power(
        [
            {**comparison(0.6, 0.6, 1.4, 14), "seeds_needed_range": [8, 30]},
            {**comparison(0.5, 0.5, 1.0, 9), "seeds_needed_range": [5, 40]},
        ],
        runs,
        "best",
    )
    assert ranged["seeds_needed_range"] == [8, 40] and ranged["power_note"].endswith("needs about 14 (8-40)")
    beyond = claim_power([{**comparison(0.6, 0.6, 1.4, 14), "seeds_needed_range": [8, None]}], runs, "better")
    assert beyond["power_note"].endswith("needs about 14 (8 to over 1000)")
    assert claim_power([comparison(None, None, 1.4, None)], runs, "better")["power_note"].endswith(
        "the paper gives no number to size it by"
    )


# --------------------------------------------------------------------------- the row that decided, and the size


def hand_comparison(
    a: str, p_for: float, p_against: float, low: float = -1.0, high: float = 1.0, paper: float | None = 1.0
) -> dict:
    return {
        "a": a,
        "b": "base",
        "p_for": p_for,
        "p_against": p_against,
        "ours_delta": (low + high) / 2,
        "ci_low": low,
        "ci_high": high,
        "paper_delta": paper,
        "ours_delta_chrf": None,
        "verdict": verdict_of(p_for, p_against),
        "points": None,
        "method": "two-level",
    }


def test_the_comparison_that_decided_each_verdict():
    """reproduced: the weakest for it (the largest p_for, the claim's own); inconclusive: the one that kept it from
    reproduced (the largest p_for); contradicted: the strongest against (the smallest p_against), even where an
    inconclusive comparison's p_for ties at 1 before it (the row the weakest showed beside "not reproduced")."""
    from nmt.report.claims import deciding_index

    reproduced = [hand_comparison("x", 0.001, 1.0), hand_comparison("y", 0.03, 1.0), hand_comparison("z", 0.01, 1.0)]
    assert deciding_index(reproduced, REPRODUCED) == 1
    inconclusive = [hand_comparison("x", 0.001, 1.0), hand_comparison("y", 0.4, 0.3), hand_comparison("z", 0.2, 0.9)]
    assert deciding_index(inconclusive, INCONCLUSIVE) == 1
    contradicted = [hand_comparison("x", 1.0, 0.3), hand_comparison("y", 1.0, 0.0001), hand_comparison("z", 1.0, 0.01)]
    assert deciding_index(contradicted, CONTRADICTED) == 1
    assert max(range(3), key=lambda i: (contradicted[i]["p_for"], -i)) == 0  # what `weakest` showed
    # a single run: as the way it points
    assert deciding_index(contradicted, SINGLE_RUN, "against") == 1
    assert deciding_index(reproduced, SINGLE_RUN, "for") == deciding_index(reproduced, SINGLE_RUN, "neither") == 1
    assert deciding_index([], REPRODUCED) is None


def test_a_claim_shows_the_comparison_that_decided_its_adjusted_verdict():
    """The record's difference and interval are the deciding comparison's, after Holm's adjustment and the gate: a
    raw "contradicted" made inconclusive by the adjustment shows the comparison that kept it from reproduced."""

    def record(cid: str, comparisons: list[dict], converged: bool = True) -> dict:
        p_for = max(c["p_for"] for c in comparisons)
        p_against = min(1.0, len(comparisons) * min(c["p_against"] for c in comparisons))
        return {
            "id": cid,
            "kind": "best",
            "comparisons": comparisons,
            "weakest": 0,
            "deciding": None,
            "paper_delta": None,
            "p_for": p_for,
            "p_against": p_against,
            "verdict_raw": verdict_of(p_for, p_against),
            "converged": converged,
            "n_runs": {"a": 3},
            "paper_preset": False,
            "substitute": None,
            "check": None,
        }

    against = record(
        "against", [hand_comparison("x", 1.0, 0.3, -2.06, 0.13, 1.0), hand_comparison("y", 1.0, 1e-6, -3.0, -2.0, 2.5)]
    )
    weak = record("weak", [hand_comparison("x", 1.0, 0.3, -2.0, 0.1), hand_comparison("y", 1.0, 0.015, -3.0, -0.5)])
    strong = record(
        "strong", [hand_comparison("x", 1e-6, 1.0, 0.5, 1.5, 1.0), hand_comparison("y", 1e-5, 1.0, 1.0, 2.0, 3.0)]
    )
    null = record("null", [hand_comparison("x", 0.5, 0.5)])
    adjust([against, weak, strong, null])  # weak's 0.03, third of four, times 2
    assert against["verdict"] == CONTRADICTED and against["deciding"] == 1
    assert (against["ci_low"], against["ci_high"], against["paper_delta"]) == (-3.0, -2.0, 2.5)
    assert against["paper_position"] == "above" and against["verdict_label"] == (
        "not reproduced at this scale; the paper's +2.50 lies above our interval"
    )
    assert weak["verdict_raw"] == CONTRADICTED and weak["verdict"] == INCONCLUSIVE and weak["deciding"] == 0
    assert (weak["ci_low"], weak["ci_high"]) == (-2.0, 0.1)
    assert strong["verdict"] == REPRODUCED and strong["deciding"] == 1 and strong["paper_position"] == "above"
    assert strong["verdict_label"] == "reproduced (direction); the paper's +3.00 lies above our interval"


def test_where_the_paper_s_difference_lies_relative_to_our_interval():
    from nmt.report.claims import position

    assert position(1.90, -0.1, 0.5) == "above" and position(-0.3, -0.1, 0.5) == "below"
    assert position(1.30, 0.2, 2.4) == "inside" and position(0.5, -0.1, 0.5) == "inside"  # the ends are inside
    assert position(None, 0.0, 1.0) is None and position(1.0, None, None) is None


def test_the_page_and_the_ledger_show_the_deciding_comparison_and_the_others_a_click_away(seeded_toy_run, tmp_path):
    """A claim of two comparisons whose first is inconclusive and second clearly against it: not reproduced, shown
    by the second (its interval, its paper difference), the first in the details and in the line under the table."""
    judge, claims, tables = seeded_toy_run
    spec = tmp_path / "each.yaml"
    spec.write_text(
        yaml.safe_dump(
            {
                "paper": "Toy et al.",
                "claims": [
                    {
                        "id": "each",
                        "claim": "strong beats twin and flipped beats strong",
                        "where": "T1",
                        "table": "toy_table",
                        "metric": "bleu_tok",
                        "each_better": [["strong", "twin"], ["flipped", "strong"]],
                    }
                ],
            }
        )
    )
    each = load_claims(spec, tables)["claims"][0]
    records = adjust([judge.judge(c) for c in [*claims, each]])
    record = records[-1]
    assert [c["verdict"] for c in record["comparisons"]] == [INCONCLUSIVE, CONTRADICTED]
    assert record["verdict"] == CONTRADICTED and record["deciding"] == 1 and record["weakest"] == 0
    shown = record["comparisons"][1]
    assert (record["ours_delta"], record["ci_low"], record["ci_high"]) == (
        shown["ours_delta"],
        shown["ci_low"],
        shown["ci_high"],
    )
    assert record["paper_delta"] == 5.0 and record["paper_position"] == "above"
    assert record["verdict_label"] == "not reproduced at this scale; the paper's +5.00 lies above our interval"
    out = render_toy(judge, records, tmp_path)
    html = (out / "index.html").read_text()
    row = html.split('<tr id="claim-each">')[1].split("</tr>")[0]
    assert "<code>flipped vs strong</code>" in row
    assert "1 other comparison (the one shown decided the verdict)" in row and "<li>strong vs twin: ours " in row
    assert f"[{shown['ci_low']:+.2f}, {shown['ci_high']:+.2f}]" in row and "paper &#916; above" in row
    ledger = (out / "claims.md").read_text()
    line = next(line for line in ledger.splitlines() if line.startswith("| **each**"))
    assert "| flipped vs strong |" in line and "the paper's +5.00 lies above our interval" in line
    assert "- **each**, its other comparisons: strong vs twin: ours " in ledger


# --------------------------------------------------------------------------- single runs: no verdict


def test_a_single_run_claim_is_never_judged_and_stays_outside_holm_s_family_and_the_tally():
    """Whatever its p-values, a claim resting on a single run is "single run": never reproduced or contradicted, not
    counted in Holm's m (the judged claims' adjusted p-values are those of their family alone), outside the tally."""
    from nmt.report.claims import summary
    from nmt.scoring.significance import holm

    def record(cid: str, p_for: float, p_against: float, single: bool = False) -> dict:
        raw = verdict_of(p_for, p_against)
        return {
            "id": cid,
            "kind": "better",
            "p_for": p_for,
            "p_against": p_against,
            "p_adjusted": None,
            "verdict_raw": SINGLE_RUN if single else raw,
            "points": {REPRODUCED: "for", CONTRADICTED: "against", INCONCLUSIVE: "neither"}[raw] if single else None,
            "converged": True,
            "n_runs": {"a": 1 if single else 3},
            "paper_preset": False,
            "substitute": None,
            "check": None,
            "comparisons": [],
        }

    judged = [record("a", 0.01, 1.0), record("b", 0.02, 1.0), record("c", 1.0, 0.004)]
    singles = [
        record("s1", 1e-9, 1.0, single=True),
        record("s2", 1.0, 1e-9, single=True),
        record("s3", 0.5, 0.5, single=True),
        record("s4", 1e-9, 1.0, single=True),
    ]
    records = adjust(judged + singles)
    expected = holm([0.01, 0.02, 0.004])  # m = 3: the single runs do not count
    assert [r["p_adjusted"] for r in records[:3]] == pytest.approx(expected)
    assert [r["verdict"] for r in records[:3]] == [REPRODUCED, REPRODUCED, CONTRADICTED]
    assert all(r["verdict"] == SINGLE_RUN and r["p_adjusted"] is None for r in records[3:])
    assert [r["verdict_label"] for r in records[3:]] == [
        "one run: points the paper's way",
        "one run: points the other way",
        "one run: no direction",
        "one run: points the paper's way",
    ]
    tally = summary(records)
    assert (tally["claims"], tally["judged"], tally["family"], tally["single_run"]) == (7, 3, 3, 4)
    assert (tally["reproduced"], tally["contradicted"], tally["inconclusive"]) == (2, 1, 0)
    # one not converged: a judged claim is capped and counted; a single run says so and stays a single run
    capped, single = record("d", 0.001, 1.0), record("s5", 0.001, 1.0, single=True)
    capped["converged"] = single["converged"] = False
    adjust([capped, single])
    assert capped["verdict"] == INCONCLUSIVE and single["verdict"] == SINGLE_RUN
    assert single["verdict_label"] == "one run: points the paper's way; not converged"
    assert summary([capped, single])["not_converged"] == 1


def test_a_claim_with_one_single_run_comparison_is_a_single_run_claim(seeded_toy_run, tmp_path):
    """A claim of several comparisons any of which rests on a single run is a single-run claim, however clear its
    other comparisons are."""
    judge, _, tables = seeded_toy_run
    judge.runs["en-de"].pop("flipped")  # flipped back to its one run
    spec = tmp_path / "each.yaml"
    spec.write_text(
        yaml.safe_dump(
            {
                "paper": "Toy et al.",
                "claims": [
                    {
                        "id": "each",
                        "claim": "strong beats weak and flipped beats strong",
                        "where": "T1",
                        "table": "toy_table",
                        "metric": "bleu_tok",
                        "each_better": [["strong", "weak"], ["flipped", "strong"]],
                    }
                ],
            }
        )
    )
    record = adjust([judge.judge(load_claims(spec, tables)["claims"][0])])[0]
    assert [c["method"] for c in record["comparisons"]] == ["two-level", "sentence"]
    assert record["comparisons"][0]["verdict"] == REPRODUCED and record["comparisons"][1]["verdict"] == SINGLE_RUN
    assert record["verdict"] == SINGLE_RUN and record["points"] == "against" and record["deciding"] == 1
    assert record["verdict_label"].startswith("one run: points the other way; the paper's +5.00 lies above")


# --------------------------------------------------------------------------- how sure the seeds needed are


def test_seeds_needed_range_brackets_seeds_needed_and_widens_with_fewer_seed_degrees_of_freedom():
    """The seeds needed at the 10th and 90th percentiles of the seed variance's chi-square confidence distribution:
    the variance times df / chi2.ppf(0.90, df) and df / chi2.ppf(0.10, df), every system's alike. The quantiles by
    hand: on 2 degrees of freedom chi-square is exponential, ppf(q) = -2 ln(1 - q); on 10 the printed tables' 15.987
    and 4.865."""
    from scipy import stats

    assert stats.chi2.ppf(0.90, 2) == pytest.approx(-2 * math.log(0.10)) == pytest.approx(4.6052, abs=1e-4)
    assert stats.chi2.ppf(0.10, 2) == pytest.approx(-2 * math.log(0.90)) == pytest.approx(0.2107, abs=1e-4)
    assert stats.chi2.ppf(0.90, 10) == pytest.approx(15.987, abs=1e-3)
    assert stats.chi2.ppf(0.10, 10) == pytest.approx(4.865, abs=1e-3)
    widths = []
    for df in (2.0, 4.0, 10.0, 30.0):
        diff = TwoLevel(delta=0.3, shared=0.01, seed_vars=(0.5, 0.5), runs=(3, 3), seed_dfs=(df, df))
        needed = diff.seeds_needed(0.6)
        low, high = diff.seeds_needed_range(0.6)
        assert low <= needed <= high
        for quantile, bound in ((0.90, low), (0.10, high)):
            scale = df / stats.chi2.ppf(quantile, df)
            assert bound == TwoLevel(
                delta=0.3, shared=0.01, seed_vars=(0.5 * scale, 0.5 * scale), runs=(3, 3), seed_dfs=(df, df)
            ).seeds_needed(0.6)
        widths.append(high - low)
    assert widths == sorted(widths, reverse=True) and widths[0] > widths[-1]
    # none where the seeds needed are none; the most beyond MAX_SEEDS is None
    diff = TwoLevel(delta=0.3, shared=0.01, seed_vars=(0.5, 0.5), runs=(3, 3), seed_dfs=(2.0, 2.0))
    assert diff.seeds_needed_range(2.8 * 0.1 * 0.99) is None
    far = TwoLevel(delta=0.3, shared=0.0001, seed_vars=(5.0, 5.0), runs=(3, 3), seed_dfs=(2.0, 2.0))
    assert far.seeds_needed(0.7) is not None and far.seeds_needed_range(0.7)[1] is None


def test_a_single_run_s_seeds_come_from_the_assumed_spread_between_seeds():
    """One run measures no spread between seeds: the seeds needed are projected at seed variance ratio times the
    test set's, on n - 1 degrees of freedom at n seeds; more assumed spread needs more seeds."""
    rng = np.random.default_rng(1)
    single = SentenceLevel(delta=0.5, samples=rng.normal(0.5, 0.3, 10000))
    variance = single.variance
    needed = [single.seeds_needed_assuming(0.9, ratio) for ratio in (0.0, 1.0, 4.0)]
    assert needed == sorted(needed) and needed[0] < needed[-1]
    projected = TwoLevel(delta=0.5, shared=variance, seed_vars=(4.0 * variance,), runs=(1,), seed_dfs=(0.0,))
    assert needed[2] == projected.seeds_needed(0.9)
    n = needed[2]
    assert projected.min_detectable(n) <= 0.9 < projected.min_detectable(n - 1)
    assert single.seeds_needed_assuming(0.0, 1.0) is None and single.seeds_needed(0.9) is None
