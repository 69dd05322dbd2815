"""The claims ledger: claims files, the paired bootstrap (against sacreBLEU's own command line), the verdict rule
on hand-made scores files (every outcome), Kendall's tau, and the report's Claims section and claims.json."""
import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from sacrebleu.significance import estimate_ci

from nmt import settings
from nmt import config as cfg
from nmt.scoring import evaluate, significance
from nmt.scoring.difference import SentenceLevel, TwoLevel
from nmt.base.errors import ConfigError, InputError
from nmt.config.plan import collect_claims
from nmt.report.claims_view import claims_markdown
from nmt.report.claims import (CONTRADICTED, INCONCLUSIVE, NOT_RUN, REPRODUCED, ClaimJudge, adjust, claims_csv,
                               comparison_p_values, kendall_tau, verdict_of)
from nmt.report.inputs import ReportInputs
from nmt.report.render import render_report
from nmt.config.claim_files import load_claims
from nmt.config.table_files import load_table

ROOT = Path(__file__).resolve().parents[1]
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
    done = subprocess.run([str(Path(sys.executable).with_name("sacrebleu")), str(files[0]), "-i", str(files[1]),
                           str(files[2]), "-m", "bleu", "--paired-bs", "--tokenize", "none", "-f", "json"],
                          capture_output=True, text=True, check=True, env={"PATH": "/usr/bin:/bin"})
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
    expected = [1 - (1 + 2 + 1 + 2 + 0 + 1) / (3 + 2 + 3 + 2 + 2 + 3),
                1 - (4 + 4 + 0 + 1 + 4 + 4) / (4 + 4 + 2 + 3 + 4 + 4)]
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


@pytest.mark.parametrize("kind, direction, margin", [("better", "higher", None), ("better", "lower", None),
                                                     ("within", "higher", 1.0), ("within", "lower", 0.5),
                                                     ("equal", "higher", 0.5)])
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
            difference = TwoLevel(delta=centre, shared=spread ** 2 * rng.uniform(0, 1), seed_vars=(spread ** 2,),
                                  runs=(3,), seed_dfs=(rng.uniform(2, 30),))
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
    "id": "toy_table", "title": "Toy", "paper": "Toy et al.", "task": "en-de", "testset": "test",
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
    "id": "toy_align", "title": "Toy AER", "paper": "Toy et al.", "task": "en-de", "testset": "align",
    "columns": ["aer"], "systems": {"good": {}, "bad": {}},
    "rows": [{"label": "good", "system": "good", "paper": {"aer": 0.2}},
             {"label": "bad", "system": "bad", "paper": {"aer": 0.4}}],
}
CLAIMS = {"paper": "Toy et al.", "claims": [
    {"id": "strong-beats-weak", "claim": "strong beats weak", "where": "T1", "table": "toy_table",
     "metric": "bleu_tok", "better": ["strong", "weak"]},
    {"id": "twin-beats-strong", "claim": "twin beats strong (the table says so; our twin is the same system)",
     "where": "T1", "table": "toy_table", "metric": "bleu_tok", "better": ["strong", "twin"]},
    {"id": "flipped-beats-strong", "claim": "a claim our run contradicts", "where": "T1", "table": "toy_table",
     "metric": "bleu_tok", "better": ["flipped", "strong"]},
    {"id": "untrained", "claim": "a system this preset does not train", "where": "T1", "table": "toy_table",
     "metric": "bleu_tok", "better": ["strong", "untrained"]},
    {"id": "unk-gain", "claim": "unk replacement helps the weak system more", "where": "T1", "table": "toy_table",
     "metric": "bleu_tok", "better": [{"gain": ["weak.bleu_tok_unk", "weak"]}, {"gain": ["strong.bleu_tok_unk",
                                                                                        "strong"]}]},
    {"id": "aer-order", "claim": "good aligns better than bad", "where": "T2", "table": "toy_align",
     "metric": "aer", "better": ["good", "bad"]},
    {"id": "aer-order-not-run", "claim": "an unavailable table", "where": "T3", "table": "toy_align_gone",
     "metric": "aer", "better": ["good", "bad"]},
]}


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
    unk = {"strong": corrupt(refs, 0.04, 13), "weak": corrupt(refs, 0.25, 14), "twin": translations["twin"],
           "flipped": translations["flipped"]}
    for system, hyps in translations.items():
        hyp = write_lines(tmp_path / "out" / f"{system}.txt", hyps)
        unk_hyp = write_lines(tmp_path / "out" / f"{system}.unk.txt", unk[system])
        stats = significance.bleu_statistics(hyps, refs, "none")
        unk_stats = significance.bleu_statistics(unk[system], refs, "none")
        (scores_dir / f"{system}.test.json").write_text(json.dumps({
            "system": system, "testset": "test", "preset": "toy", "pair": "en-de", "hyp": str(hyp), "ref": str(ref),
            "bleu_tok": significance.bleu_of(stats, "none"), "bleu_tok_unk": significance.bleu_of(unk_stats, "none"),
            "unk": {"hyp": str(unk_hyp)}}))
    rng = np.random.default_rng(3)
    for system, hit in (("good", 0.85), ("bad", 0.45)):
        counts = []
        for _ in range(80):
            a, s = int(rng.integers(5, 12)), int(rng.integers(5, 12))
            a_s = int(rng.binomial(min(a, s), hit))
            counts.append([a, s, a_s, min(a, a_s + int(rng.integers(0, 2)))])
        totals = np.sum(counts, axis=0)
        (scores_dir / f"{system}.align.json").write_text(json.dumps({
            "system": system, "testset": "align", "aer": significance.error_rate(totals),
            "sentence_counts": {"aer": counts}}))
    judge = ClaimJudge(results_dir=results, preset="toy", tables_by_id=tables, pair_for_task={"en-de": "en-de"},
                       unavailable={"toy_align_gone": "gold alignments (no align split)"})
    return judge, load_claims(claims_file, tables)["claims"], tables


def test_verdicts_on_hand_made_scores_files(toy_run):
    judge, claims, _ = toy_run
    judged = {c["id"]: judge.judge(c) for c in claims}
    assert judged["strong-beats-weak"]["verdict"] == REPRODUCED and judged["strong-beats-weak"]["ci_low"] > 0
    assert judged["strong-beats-weak"]["paper_delta"] == 10.0
    assert judged["twin-beats-strong"]["verdict"] == INCONCLUSIVE
    assert judged["twin-beats-strong"]["ci_low"] <= 0 <= judged["twin-beats-strong"]["ci_high"]
    assert judged["flipped-beats-strong"]["verdict"] == CONTRADICTED
    assert judged["flipped-beats-strong"]["paper_delta"] == 5.0 and judged["flipped-beats-strong"]["ci_high"] < 0
    assert judged["untrained"]["verdict"] == NOT_RUN and "no scores for untrained" in judged["untrained"]["reason"]
    gain = judged["unk-gain"]
    assert gain["paper_delta"] == pytest.approx(1.0) and gain["verdict"] == REPRODUCED
    assert judged["aer-order"]["verdict"] == REPRODUCED and judged["aer-order"]["ours_delta"] < 0
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
            chrf[system, field] = scores[field] = evaluate.chrf(Path(hyp).read_text().splitlines(), refs)[0]
        sfile.write_text(json.dumps(scores))
    judged = {c["id"]: judge.judge(c) for c in claims}
    assert judged["strong-beats-weak"]["ours_delta_chrf"] == pytest.approx(chrf["strong", "chrf"] - chrf["weak", "chrf"])
    assert judged["unk-gain"]["ours_delta_chrf"] == pytest.approx(
        (chrf["weak", "chrf_unk"] - chrf["weak", "chrf"]) - (chrf["strong", "chrf_unk"] - chrf["strong", "chrf"]))
    assert judged["twin-beats-strong"]["ours_delta_chrf"] is None  # twin's scores file has none
    assert judged["aer-order"]["ours_delta_chrf"] is None
    assert judged["strong-beats-weak"]["verdict"] == REPRODUCED


def test_a_translation_changed_after_scoring_is_an_error(toy_run):
    judge, claims, _ = toy_run
    scores = json.loads((judge.results_dir / "en-de" / "scores" / "weak.test.json").read_text())
    Path(scores["hyp"]).write_text(Path(scores["ref"]).read_text())
    with pytest.raises(InputError, match="the translation changed after it was scored"):
        judge.judge(next(c for c in claims if c["id"] == "strong-beats-weak"))


def test_report_has_the_claims_section_json_and_csv(toy_run, tmp_path):
    judge, claims, tables = toy_run
    records = adjust([judge.judge(c) for c in claims])
    out = tmp_path / "report"
    table_files = [tmp_path / "tables" / "toy_table.yaml"]
    index = render_report(ReportInputs(preset="toy", preset_description="", tables=table_files,
                                       results_dir=judge.results_dir, pair_for_task={"en-de": "en-de"}, context={},
                                       claims=records, claim_files=["claims.yaml"]), out)
    html = index.read_text()
    assert '<section id="claims">' in html and "3 of 7 claims reproduced on toy" in html
    assert 'href="#toy_table"' in html  # each claim links to its table
    assert "Kendall&#8217;s &#964;" in html
    data = json.loads((out / "claims.json").read_text())
    assert data["summary"] == {"claims": 7, "reproduced": 3, "contradicted": 1, "inconclusive": 1, "not_run": 2,
                               "not_converged": 0, "with_stand_in": 0, "checks": 0,
                               "raw": {"reproduced": 3, "contradicted": 1, "inconclusive": 1, "not_run": 2}}
    for claim in data["claims"]:
        assert {"paper", "claim", "paper_delta", "ours_delta", "ci_low", "ci_high", "verdict", "verdict_raw",
                "verdict_adjusted", "p_adjusted", "paper_inside", "n_runs", "interval_method", "converged",
                "scope", "min_detectable", "seeds_needed", "power_note"} <= set(claim)
    assert data["checks"] == []
    assert "not reproduced at this scale" in html  # the toy preset is not the paper preset
    csv_lines = (out / "claims.csv").read_text().splitlines()
    assert csv_lines[0].startswith("id,paper,claim,") and len(csv_lines) == 8
    assert (out / "claims.csv").read_text() == claims_csv(records)
    ledger = (out / "claims.md").read_text()
    assert ledger == claims_markdown(data)
    headings = [line for line in ledger.splitlines() if line.startswith("## ")]
    assert headings == ["## Reproduced (3)", "## Contradicted (1)", "## Inconclusive (1)", "## Not run (2)"]
    for claim in data["claims"]:  # every claim in its verdict's group, with its interval as the page shows it
        group = ledger.split(f"## {claim['verdict'].capitalize()} (")[1].split("\n## ")[0]
        line = next(line for line in group.splitlines() if f"**{claim['id']}**" in line)
        if claim["verdict"] != NOT_RUN:
            assert f"[{claim['ci_low']:+.2f}, {claim['ci_high']:+.2f}]" in line
        else:
            assert claim["reason"] in line


def test_the_claims_ledger_keeps_one_claim_per_row():
    from nmt.report.claims_view import claims_markdown
    record = {"preset": "toy", "rule": {"alpha": 0.05, "correction": "holm", "interval": "95%", "power": "80%"},
              "summary": {"claims": 1, "reproduced": 0, "contradicted": 0, "inconclusive": 0, "not_run": 1,
                          "not_converged": 0, "checks": 0},
              "claims": [{"id": "x", "paper": "P", "claim": "a | b\nover two lines", "where": "Table 1",
                          "kind": "better", "comparisons": [], "paper_delta": None, "ours_delta": None,
                          "ci_low": None, "ci_high": None, "verdict": NOT_RUN, "reason": "no | run"}],
              "checks": [], "trainings": []}
    ledger = claims_markdown(record)
    assert "| **x**: a \\| b over two lines | Table 1 | no \\| run |" in ledger.splitlines()


# --------------------------------------------------------------------------- the claims files

def test_a_claim_naming_an_unknown_system_names_the_file_and_key(tmp_path):
    table = load_table(ROOT / "workflow/tables/luong2015_table1.yaml")
    bad = tmp_path / "claims.yaml"
    bad.write_text(yaml.safe_dump({"paper": "Luong", "claims": [
        {"id": "ok", "claim": "c", "where": "T1", "table": "luong2015_table1", "metric": "bleu_tok",
         "better": ["base_reverse", "base"]},
        {"id": "typo", "claim": "c", "where": "T1", "table": "luong2015_table1", "metric": "bleu_tok",
         "better": ["base_reverse", "base_revers"]}]}))
    with pytest.raises(ValueError, match=r"claims\.yaml: claims\[2\] \(typo\): better\[2\]: unknown system "
                                         r"'base_revers': not a row of table luong2015_table1"):
        load_claims(bad, {"luong2015_table1": table})


@pytest.mark.parametrize("claim, message", [
    ({"better": ["base_reverse", "base"], "table": "nope"}, "table: 'nope' is not one of the preset's tables"),
    ({"better": ["base", "base_reverse"]}, "the table's paper values do not say this"),
    ({"better": ["base_reverse", "base"], "order": ["a", "b", "c"]}, "exactly one of"),
    ({"better": ["base_reverse.bleu_nope", "base"]}, "'bleu_nope' is not a scores field"),
    ({"better": ["base_reverse"]}, "better: ['base_reverse'] is too short"),
    ({"within": {"values": ["base_reverse", "base"], "margin": -1, "margin_basis": "derived", "margin_why": "w"}},
     "within.margin: -1 is less than or equal to"),
    ({"within": {"values": ["base_reverse", "base"], "margin": 1}}, "'margin_basis' is a required property"),
])
def test_bad_claims_are_errors_naming_the_key(tmp_path, claim, message):
    table = load_table(ROOT / "workflow/tables/luong2015_table1.yaml")
    bad = tmp_path / "claims.yaml"
    bad.write_text(yaml.safe_dump({"paper": "Luong", "claims": [
        {"id": "c1", "claim": "c", "where": "T1", "table": "luong2015_table1", "metric": "bleu_tok", **claim}]}))
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
    text = (tmp_path / "claims.yaml").read_text().replace("better: [rnnsearch_guided, rnnsearch]",
                                                          "better: [rnnsearch_guided, rnnsearch_gided]", 1)
    (tmp_path / "claims.yaml").write_text(text)
    params["claims"] = [str(tmp_path / "claims.yaml")]
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    done = subprocess.run([sys.executable, "-m", "nmt.cli", "report", "--params", str(tmp_path / "params.yaml"),
                           "--preset", "tiny", "--results", str(tmp_path / "results"), "--data", str(tmp_path / "data"),
                           "--out", str(tmp_path / "out")], capture_output=True, text=True)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert f"{tmp_path / 'claims.yaml'}: claims[1] (peter-guided-lowers-aer): better[2]: unknown system " \
           f"'rnnsearch_gided'" in lines[0]
    assert not (tmp_path / "out").exists()


def test_a_claim_id_used_in_two_files_is_an_error(tmp_path):
    config = cfg.load_params(ROOT / "params.yaml", "tiny")
    copy = tmp_path / "again.yaml"
    shutil.copy(ROOT / "workflow/claims/raffel2017.yaml", copy)
    config["claims"] = [*config["claims"], str(copy)]
    with pytest.raises(ConfigError, match="claim id 'raffel-monotonic-eq17-near-softmax' is also used in "
                                          "workflow/claims/raffel2017.yaml"):
        collect_claims(config, ROOT)


# --------------------------------------------------------------------------- several seeds

def test_seed_runs_are_averaged_in_tables_and_their_spread_widens_the_interval(toy_run):
    judge, claims, tables = toy_run
    scores_dir = judge.results_dir / "en-de" / "scores"

    def more_runs(system: str, rates: tuple[float, float], rng_seed: int) -> list[float]:
        """Seeds 2 and 3 of ``system``: its first run's scores file with other translations; all three BLEUs."""
        base = json.loads((scores_dir / f"{system}.test.json").read_text())
        refs = Path(base["ref"]).read_text().splitlines()
        bleus = [base["bleu_tok"]]
        for seed, rate in zip((2, 3), rates):
            run = f"{system}_seed{seed}"
            hyps = corrupt(refs, rate, rng_seed + seed)
            hyp = write_lines(judge.results_dir.parent.parent / "out" / f"{run}.txt", hyps)
            bleus.append(significance.bleu_of(significance.bleu_statistics(hyps, refs, "none"), "none"))
            (scores_dir / f"{run}.test.json").write_text(json.dumps({**base, "system": run, "hyp": str(hyp),
                                                                     "bleu_tok": bleus[-1]}))
        return bleus

    bleus = more_runs("strong", (0.15, 0.25), 20)  # two more runs of "strong", each worse than the first
    weak_bleus = more_runs("weak", (0.55, 0.6), 40)
    claim = next(c for c in claims if c["id"] == "strong-beats-weak")
    single = judge.judge(claim)
    judge.runs = {"en-de": {"strong": ["strong", "strong_seed2", "strong_seed3"]}}
    mixed = judge.judge(claim)  # one side a single run: the sentence level alone, and the verdict says so
    assert mixed["n_runs"] == {"strong": 3, "weak": 1} and mixed["interval_method"].startswith("sentence")
    assert "single run" in adjust([mixed])[0]["verdict_label"]
    assert mixed["seeds_needed"] is None and "not measured" in mixed["power_note"]
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
    assert settings.comparable_settings(run)["train"] == {**settings.comparable_settings(primary)["train"], "seed": 7,
                                                     "init_from": {"system": "rnnsearch_seed7"}}
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
    done = subprocess.run([sys.executable, "-m", "nmt.cli", "report", "--params", str(ROOT / "params.yaml"),
                           "--preset", "tiny", "--results", str(tmp_path / "results"), "--data", str(tmp_path / "data"),
                           "--out", str(tmp_path / "out"), "--partial"], capture_output=True, text=True)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert lines[0].startswith(f"nmt: error: {models / 'metrics.jsonl'}:2:25: invalid JSON: "), lines[0]


def test_what_a_claim_could_detect_is_said_in_words():
    from nmt.report.claims import claim_power

    def comparison(delta, effect, detectable, needed, method="two-level"):
        return {"paper_delta": delta, "paper_effect": effect, "min_detectable": detectable, "seeds_needed": needed,
                "method": method}

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
    single = claim_power([comparison(0.6, 0.6, 1.4, None, method="sentence")], {"a": 3, "b": 1}, "better")
    assert single["seeds_needed"] is None and single["power_note"].startswith("a single run on one side")
    assert claim_power([comparison(None, None, 1.4, None)], runs, "better")["power_note"].endswith(
        "the paper gives no number to size it by")
