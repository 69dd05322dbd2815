"""A run made one seed at a time and published as a reference (docs/reproductions/PRESET): the files of a seed's
part, exporting parts into one directory, and `nmt compare` of a run's report against the reference's."""

import json
import math
import shutil
from pathlib import Path

import pytest

from nmt import config as cfg
from nmt.cli import main
from nmt.config import plan
from nmt.pipeline.export import export_run
from nmt.records.parts import run_files
from nmt.report.compare import DIFFERS, NO_SPREAD, ONLY_REFERENCE, WITHIN, compare, seed_band

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def small_gpu():
    return cfg.load_params(ROOT / "params.yaml", "small-gpu")


def test_the_gpu_reference_preset_trains_luong_tables_1_to_4_with_three_seeds(small_gpu):
    systems = plan.collect_systems(small_gpu, ROOT)
    assert len([s for s in systems["en-de"] if "_seed" not in s]) == 14 and len(systems["de-en"]) == 4 * 3
    assert plan.preset_seeds(small_gpu) == [1, 2, 3]
    assert small_gpu["train"]["plateau"] == {"within": 0.01, "halvings": 2, "stop": "gate", "max_epochs": 30}
    drawn = {fig["id"]: fig.get("unavailable") for _, fig in plan.collect_figures(small_gpu, ROOT)}
    assert drawn["luong2015_figure5"] is None and drawn["luong2015_figure6"] is None
    assert drawn["luong2015_table5"] is None and drawn["luong2015_figure7"]  # Multi30k has no gold alignments


def test_the_seeds_parts_split_the_run_without_overlap(small_gpu):
    parts = {seed: plan.seed_part(small_gpu, ROOT, seed) for seed in (1, 2, 3)}
    assert not set(parts[1]) & set(parts[2]) and not set(parts[2]) & set(parts[3])
    assert "results/small-gpu/en-de/models/base_seed2/metrics.jsonl" in parts[2]
    assert "results/small-gpu/en-de/scores/local_p_general_feed_seed3.test.json" in parts[3]
    # the ensemble is decoded once per seed, of that seed's runs of its members: each in its seed's part
    for seed, suffix in ((1, ""), (2, "_seed2"), (3, "_seed3")):
        assert {
            f"results/small-gpu/en-de/scores/ensemble_attention{suffix}.test2.json",
            f"results/small-gpu/en-de/translations/ensemble_attention{suffix}.test.txt",
        } <= set(parts[seed])
    # every file the report reads of a trained run or a translation is in one part
    everything = set().union(*parts.values())
    for task, name, testset in plan.collect_evaluations(small_gpu, ROOT):
        assert f"results/small-gpu/{task}/scores/{name}.{testset}.json" in everything
    for task, names in plan.collect_systems(small_gpu, ROOT).items():
        assert all(f"results/small-gpu/{task}/models/{name}/model.json" in everything for name in names)


def test_a_seed_the_preset_does_not_train_is_one_line(capsys):
    assert main(["seed-targets", "--params", str(ROOT / "params.yaml"), "--preset", "small-gpu", "--seed", "4"]) == 2
    assert capsys.readouterr().err.strip() == (
        "nmt: error: preset 'small-gpu': seed 4 is not one of train.seeds (1, 2, 3)"
    )


def fill(results: Path, files: list[str], text: str = "x") -> None:
    """The files, each saying what it is where the real ones do (export-run checks it: a scores file its preset,
    system, test set and pair, a model.json its system, preset and seed)."""
    for f in files:
        (results / f).parent.mkdir(parents=True, exist_ok=True)
        task, kind, *rest = f.split("/")
        if kind == "scores":
            system, testset = rest[0][: -len(".json")].split(".", 1)
            content = json.dumps({"system": system, "testset": testset, "preset": "small-gpu", "pair": task})
        elif rest[-1] == "model.json":
            seed = int(rest[0].rsplit("_seed", 1)[1]) if "_seed" in rest[0] else 1
            content = json.dumps({"system": rest[0], "config": {"preset": "small-gpu", "train": {"seed": seed}}})
        else:
            content = f"{text} {f}"
        (results / f).write_text(content + "\n")


def test_parts_are_exported_one_at_a_time_and_never_mixed(tmp_path, small_gpu):
    results, dest = tmp_path / "results", tmp_path / "reference"
    fill(results, run_files(small_gpu, ROOT, [2]))
    with pytest.raises(ValueError, match=r"base/model\.json: missing \(\d+ of the \d+ files to export are\)"):
        export_run(small_gpu, ROOT, results, dest)  # seed 1's part is not there yet
    assert not dest.exists()
    assert export_run(small_gpu, ROOT, results, dest, seeds=[2]) == {"copied": 96, "unchanged": 0}
    (results / "en-de/models/base_seed2/model.pt").write_bytes(b"weights")  # never exported
    assert export_run(small_gpu, ROOT, results, dest, seeds=[2]) == {"copied": 0, "unchanged": 96}
    assert not (dest / "en-de/models/base_seed2/model.pt").exists()
    fill(results, run_files(small_gpu, ROOT, [1]))
    (results / "en-de/scores/base_seed2.test.json").write_text(
        json.dumps({"preset": "small-gpu", "system": "base_seed2", "testset": "test", "pair": "en-de", "bleu_tok": 1.0})
    )
    with pytest.raises(ValueError, match=r"base_seed2\.test\.json: already there with other content"):
        export_run(small_gpu, ROOT, results, dest, seeds=[1, 2])
    assert not (dest / "en-de/models/base/model.json").exists()  # nothing of seed 1 was copied either
    assert export_run(small_gpu, ROOT, results, dest, seeds=[1, 2], replace=True) == {"copied": 96 + 1, "unchanged": 95}


def report_dir(path: Path, rows: dict[str, list[float]], claims: dict[str, tuple]) -> Path:
    """A report directory with one table (global_location and base, BLEU over seed runs) and claims."""
    path.mkdir(parents=True)
    records = []
    for system, values in rows.items():
        mean = sum(values) / len(values)
        sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1)) if len(values) > 1 else None
        records.append(
            {
                "label": system,
                "system": system,
                "status": "measured",
                "paper_bleu_tok": 10.0,
                "ours_bleu_tok": mean,
                "ours_bleu_tok_sd": sd,
                "ours_bleu_tok_bp": 1.0,
                "ours_bleu_tok_ratio": 1.0,
                "n_runs": len(values),
            }
        )
    (path / "t1.json").write_text(json.dumps(records))
    (path / "summary.json").write_text(json.dumps({"t1": {}}))
    (path / "claims.json").write_text(
        json.dumps(
            {
                "claims": [
                    {"id": cid, "verdict": verdict, "ours_delta": delta, "ci_low": low, "ci_high": high}
                    for cid, (verdict, delta, low, high) in claims.items()
                ]
            }
        )
    )
    return path


def test_seed_band_on_a_hand_computed_case():
    # pooled sd of (1.0, n=3) and (2.0, n=3): sqrt((2*1 + 2*4) / 4) = sqrt(2.5); band 2 sqrt(2.5) sqrt(2/3)
    assert seed_band(1.0, 3, 2.0, 3) == pytest.approx(2 * math.sqrt(2.5) * math.sqrt(2 / 3))
    assert seed_band(None, 1, 1.5, 3) == pytest.approx(2 * 1.5 * math.sqrt(1 + 1 / 3))  # a single run against 3
    assert seed_band(None, 1, None, 1) is None


def test_compare_flags_what_lies_beyond_the_seeds_spread(tmp_path, capsys):
    reference = report_dir(
        tmp_path / "ref",
        {"global_location": [20.0, 21.0, 22.0], "base": [10.0, 10.5, 11.0]},
        {
            "c-attention": ("reproduced", 10.5, 9.0, 12.0),
            "c-reverse": ("reproduced", 1.0, 0.2, 1.8),
            "c-other": ("inconclusive", 0.1, -0.5, 0.7),
        },
    )
    run = report_dir(
        tmp_path / "run",
        {"global_location": [21.5, 22.0, 23.0], "base": [14.0, 14.5, 15.0]},
        {"c-attention": ("reproduced", 7.0, 6.0, 8.0), "c-reverse": ("contradicted", -1.0, -2.0, -0.1)},
    )
    result = compare(run, reference)
    status = {n["system"]: n["status"] for n in result["numbers"]}
    assert status == {"global_location": WITHIN, "base": DIFFERS}  # 1.17 within 2*0.76*0.82; 4.0 beyond 0.82
    claims = {c["id"]: c for c in result["claims"]}
    assert claims["c-attention"]["status"] == DIFFERS and claims["c-attention"]["inside"] is False
    assert claims["c-reverse"]["status"] == DIFFERS and claims["c-reverse"]["run_verdict"] == "contradicted"
    assert claims["c-other"]["status"] == ONLY_REFERENCE
    assert compare(reference, reference)["counts"] == {"numbers": {WITHIN: 2}, "claims": {WITHIN: 3}}

    assert main(["compare", str(run), str(reference), "--json", str(tmp_path / "cmp.json")]) == 0
    out = capsys.readouterr().out
    assert "t1  base [bleu_tok]: run 14.50 (n=3), reference 10.50 (n=3), difference 4.00, band 0.82: differs" in out
    assert "global_location" not in out  # within the spread: shown with --all only
    assert "claim c-reverse: run contradicted (-1.00), reference reproduced [+0.20, +1.80]: differs" in out
    assert json.loads((tmp_path / "cmp.json").read_text())["counts"]["numbers"] == {WITHIN: 1, DIFFERS: 1}


def test_single_runs_cannot_be_judged_and_a_missing_report_is_one_line(tmp_path, capsys):
    one = report_dir(tmp_path / "one", {"base": [10.0]}, {})
    other = report_dir(tmp_path / "other", {"base": [12.0]}, {})
    assert [n["status"] for n in compare(one, other)["numbers"]] == [NO_SPREAD]
    shutil.rmtree(one)
    one.mkdir()
    assert main(["compare", str(one), str(other)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"nmt: error: {one}: not a rendered report (no summary.json); give the "
        "directory `nmt report --out` wrote (reports/PRESET, "
        "docs/reproductions/PRESET)"
    )


# -- `nmt compare` against the published reference, as a fresh clone has it ---------------------------------------
REFERENCE = ROOT / "docs" / "reproductions" / "small-gpu"


def one_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


@pytest.fixture(scope="module")
def tiny_report(tmp_path_factory):
    """A tiny run's report, rendered fresh from a results directory with one scores file (--partial)."""
    where = tmp_path_factory.mktemp("tiny")
    scores = where / "results" / "en-de" / "scores" / "base.test.json"
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
                str(where / "results"),
                "--data",
                str(where / "data"),
                "--out",
                str(where / "report"),
                "--partial",
            ]
        )
        == 0
    )
    return where / "report"


def test_the_shipped_reference_is_a_rendered_report_of_its_partial_run():
    """What `nmt compare` reads is in git beside the results (rendered with the command of
    docs/reproductions/README.md), and it says how much of the run is in."""
    for name in ("summary.json", "claims.json", "index.html", "luong2015_table1.json", "luong2015_table1.csv"):
        assert (REFERENCE / name).is_file(), name
    partial = json.loads((REFERENCE / "claims.json").read_text())["run"]["partial"]
    assert partial["seeds_planned"] == [1, 2, 3] and partial["runs_in"] < partial["runs_planned"]
    rows = [r for r in json.loads((REFERENCE / "luong2015_table1.json").read_text()) if r["status"] == "measured"]
    assert rows and all(r["n_runs"] < r["n_planned"] == 3 for r in rows)
    assert all(r["note"].startswith(f"measured: {r['n_runs']} of 3 runs") for r in rows)
    # its claims ledger (the README's) is what nmt report writes from its claims.json
    from nmt.report.claims_view import claims_markdown

    assert (REFERENCE / "claims.md").read_text() == claims_markdown(json.loads((REFERENCE / "claims.json").read_text()))


def test_a_tiny_run_against_the_reference_is_one_line_naming_both_presets(tiny_report, capsys):
    assert main(["compare", str(tiny_report), str(REFERENCE)]) == 2
    err = one_line(capsys)
    assert err.startswith(
        f"nmt: error: {tiny_report} and {REFERENCE} are reports of presets tiny and small-gpu: "
        "they differ in the en-de corpus (synth against multi30k)"
    )
    assert err.endswith("(--across-presets compares them anyway)")


def test_across_presets_compares_with_the_warning_first_then_that_the_reference_is_partial(tiny_report, capsys):
    assert main(["compare", str(tiny_report), str(REFERENCE), "--across-presets", "--all"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(
        f"comparing across presets (--across-presets): {tiny_report} and {REFERENCE} are "
        "reports of presets tiny and small-gpu"
    )
    partial = json.loads((REFERENCE / "claims.json").read_text())["run"]["partial"]
    assert lines[1].startswith(f"note: the run {tiny_report} is a partial run: 1 of its ")  # one scores file
    assert lines[2] == (
        f"note: the reference {REFERENCE} is {partial['text']}; its rows are the means of 1 of 3 runs; "
        "compared on the runs there are"
    )
    base = next(line for line in lines if line.startswith("luong2015_table1  Base [ppl]"))
    assert base.startswith("luong2015_table1  Base [ppl]: run 12.50 (n=1), reference ") and "(n=1 of 3)" in base


def test_a_partial_reference_against_a_full_run_compares_what_there_is_with_a_wider_band(tmp_path, capsys):
    """The reference's single run against a run's three: the band is the run's seed spread over sqrt(1/1 + 1/3)."""
    run = report_dir(tmp_path / "run", {"base": [10.0, 11.0, 12.0]}, {})
    reference = report_dir(tmp_path / "ref", {"base": [14.0]}, {})
    records = json.loads((reference / "t1.json").read_text())
    (reference / "t1.json").write_text(json.dumps([{**r, "n_planned": 3} for r in records]))
    (reference / "claims.json").write_text(
        json.dumps(
            {
                "claims": [],
                "run": {
                    "preset": "small-gpu",
                    "corpora": {},
                    "tables": {},
                    "partial": {
                        "runs_in": 1,
                        "runs_planned": 3,
                        "text": "a partial run: 1 of its 3 planned runs have scores",
                    },
                },
            }
        )
    )
    assert main(["compare", str(run), str(reference)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"note: {run / 'claims.json'} records no run")  # a hand-made report: said, first
    assert lines[1] == (
        f"note: the reference {reference} is a partial run: 1 of its 3 planned runs have scores; its "
        "rows are the means of 1 of 3 runs; compared on the runs there are"
    )
    band = 2 * 1.0 * math.sqrt(1 + 1 / 3)
    assert (
        f"t1  base [bleu_tok]: run 11.00 (n=3), reference 14.00 (n=1 of 3), difference -3.00, band {band:.2f}: "
        "differs" in lines
    )


def test_a_directory_that_is_not_a_rendered_report_is_one_line_saying_what_it_is(tmp_path, capsys):
    unrendered = tmp_path / "small-gpu"  # the reference as it was before its report was rendered
    shutil.copytree(REFERENCE / "results", unrendered / "results")
    assert main(["compare", str(REFERENCE), str(unrendered)]) == 2
    assert one_line(capsys) == (
        f"nmt: error: {unrendered}: not a rendered report (no summary.json): it holds a run's results/; render them "
        f"into it: nmt report --preset small-gpu --results {unrendered / 'results'} --data data/small-gpu --out "
        f"{unrendered} --partial"
    )
    assert main(["compare", str(unrendered / "results"), str(REFERENCE)]) == 2
    assert one_line(capsys).startswith(
        f"nmt: error: {unrendered / 'results'}: a results directory, not a report; "
        f"render it first: nmt report --preset small-gpu --results"
    )
    assert main(["compare", str(REFERENCE), str(tmp_path / "nowhere")]) == 2
    assert one_line(capsys).startswith(f"nmt: error: {tmp_path / 'nowhere'}: no such directory; give the directory")
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "summary.json").write_text("{}")
    assert main(["compare", str(tmp_path / "half"), str(REFERENCE)]) == 2
    assert one_line(capsys) == (
        f"nmt: error: {tmp_path / 'half'}: an incomplete report (no claims.json); render it again with nmt report"
    )


@pytest.mark.pipeline("reference")
def test_the_reference_preset_made_one_seed_at_a_time_renders_from_its_exported_parts(tiny_runs):
    """small-gpu at toy size on the CPU, as benchmarks/reference-gpu.sh makes it on a GPU: each seed's part by
    Snakemake, exported; the report rendered from the export alone (the run's results moved away)."""
    workdir = tiny_runs["reference"].workdir
    reference = workdir / "reference"
    assert not list(reference.rglob("*.pt"))  # no models or checkpoints
    table1 = {r["system"]: r for r in json.loads((reference / "luong2015_table1.json").read_text()) if r["system"]}
    assert all(r["status"] == "measured" and r["n_runs"] == 2 for r in table1.values())  # the ensemble's too
    claims = {c["id"]: c for c in json.loads((reference / "claims.json").read_text())["claims"]}
    reverse = claims["luong-reverse"]
    assert reverse["n_runs"] == {"base": 2, "base_reverse": 2} and reverse["verdict"] != "not run"
    assert reverse["interval_method"].startswith("two-level")
    # every judged claim says what its run could detect, and how many seeds would decide what it could not
    judged = [c for c in claims.values() if c["verdict"] != "not run" and c["kind"] != "speedup"]
    assert judged and all(c["min_detectable"] >= 0 and c["power_note"].startswith("2 seeds detect") for c in judged)
    assert all(c["seeds_needed"] is None or c["seeds_needed"] >= 2 for c in judged)
    assert claims["raffel-monotonic-eq17-near-softmax"]["verdict"] == "not run"  # not a table of this preset
    # every translation the claims read was found in the export, where the layout puts it
    assert [c["id"] for c in claims.values() if c["table"] == "luong2015_table1" and c["verdict"] == "not run"] == []
    itself = json.loads((workdir / "compare-itself.json").read_text())
    assert set(itself["counts"]["numbers"]) <= {"within", "no spread"} and itself["counts"]["numbers"]["within"]
    assert set(itself["counts"]["claims"]) == {"within"}
