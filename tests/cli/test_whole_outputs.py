"""Outputs replaced whole and aggregates of one run (issue 48, items 2 and 3), through the command line: a report,
a prepared directory and an export are written beside their destination and moved into place only when complete
(a failure, a kill or a wrong argument leaves the previous version byte for byte); a report whose scores files are
mostly missing is refused; export-run and compare refuse files and reports of another run, naming the odd one; a
malformed report file given to compare is one line naming the file and the key; a training with incomplete records
is listed, not dropped. Each refusal is one line on stderr, exit status 2, no traceback."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from nmt import config as cfg
from nmt.base.errors import InputError, UserError
from nmt.config import plan
from nmt.data import staging
from nmt.data.staging import staged_directory
from nmt.records.metrics import DIGEST_KEY, check_metrics, metrics_digest
from nmt.records.parts import run_files
from nmt.records.run_identity import run_identity

ROOT = Path(__file__).resolve().parents[2]
PARAMS = str(ROOT / "params.yaml")


def nmt(*argv: str, cwd: Path | None = None, wrapper: str | None = None) -> subprocess.CompletedProcess:
    """`nmt ARGV` in a fresh process (``wrapper``: Python run first, e.g. to make a write fail, then `nmt`)."""
    head = (
        ["-c", f"{wrapper}\nimport sys\nfrom nmt.cli import main\nsys.exit(main(sys.argv[1:]))"]
        if wrapper
        else ["-m", "nmt.cli"]
    )
    return subprocess.run([sys.executable, *head, *map(str, argv)], capture_output=True, text=True, cwd=cwd)


def refused(done: subprocess.CompletedProcess, expected: str) -> str:
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert lines[0].startswith("nmt: error: ") and expected in lines[0], lines[0]
    return lines[0]


def snapshot(path: Path) -> dict[str, bytes | None]:
    """Every file (its bytes) and directory (None) below ``path``, and what lies beside it (staging leftovers)."""
    tree = {
        p.relative_to(path.parent).as_posix(): (None if p.is_dir() else p.read_bytes())
        for p in sorted(path.parent.rglob("*"))
    }
    return tree


# -- the staging directory -----------------------------------------------------------------------------------------
def test_a_failure_inside_leaves_the_destination_as_it_was(tmp_path):
    dest = tmp_path / "out"
    dest.mkdir()
    (dest / "a.json").write_text("old\n")
    before = snapshot(dest)
    with pytest.raises(OSError, match="No space left"):
        with staged_directory(dest) as new:
            (new / "a.json").write_text("new\n")
            raise OSError(28, "No space left on device", str(new / "b.json"))
    assert snapshot(dest) == before


def test_the_full_disk_error_names_the_destination_not_the_staging_directory(tmp_path):
    dest = tmp_path / "out"
    with pytest.raises(OSError) as caught:
        with staged_directory(dest) as new:
            raise OSError(28, "No space left on device", str(new / "sub" / "train.pt"))
    assert caught.value.filename == str(dest / "sub" / "train.pt") and not dest.exists()


@pytest.mark.parametrize("exchange", [True, False], ids=["renameat2", "two renames"])
def test_success_replaces_own_files_drops_stale_ones_and_keeps_the_rest(tmp_path, monkeypatch, exchange):
    if not exchange:
        monkeypatch.setattr(staging, "_exchange", lambda a, b: False)
    dest = tmp_path / "report"
    (dest / "results" / "en-de").mkdir(parents=True)
    (dest / "results" / "en-de" / "base.test.json").write_text("{}\n")
    (dest / "README.md").write_text("the reference\n")
    (dest / "index.html").write_text("old page\n")
    (dest / "stale.png").write_text("a figure the new report has not\n")
    with staged_directory(dest, own=lambda entry: entry.suffix in (".html", ".png")) as new:
        (new / "index.html").write_text("new page\n")
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == [
        "report",
        "report/README.md",
        "report/index.html",
        "report/results",
        "report/results/en-de",
        "report/results/en-de/base.test.json",
    ]
    assert (dest / "index.html").read_text() == "new page\n" and (dest / "README.md").read_text() == "the reference\n"


def dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(done.stdout)


def test_what_a_killed_run_left_is_tidied_by_the_next(tmp_path):
    dest = tmp_path / "out"
    pid = dead_pid()
    leftover = staging._name(dest, staging.STAGING, pid)  # killed while writing: the destination was not touched
    leftover.mkdir()
    (leftover / "half.txt").write_text("x")
    old = staging._name(dest, staging.OLD, pid)  # killed between the two renames: the old version put back
    old.mkdir()
    (old / "a.txt").write_text("old\n")
    with staged_directory(dest) as new:
        assert (dest / "a.txt").read_text() == "old\n" and not leftover.exists()
        (new / "a.txt").write_text("new\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"] and (dest / "a.txt").read_text() == "new\n"


def test_the_current_directory_and_a_file_are_no_destination(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError, match="the current directory or one above it"):
        with staged_directory(Path(".")):
            pass
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="file: a file where a directory should be"):
        with staged_directory(tmp_path / "file"):
            pass


# -- nmt report ----------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> dict:
    """The tiny preset with no claims files (the claims read translations these tests do not make), and the scores
    files its report expects."""
    root = tmp_path_factory.mktemp("tiny")
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    params["presets_dir"] = str(ROOT / params["presets_dir"])
    params["tables"] = [str(ROOT / t) for t in params["tables"]]
    params["figures"] = [str(ROOT / f) for f in params["figures"]]
    params["claims"] = []
    (root / "params.yaml").write_text(yaml.safe_dump(params))
    config = cfg.load_params(ROOT / "params.yaml", "tiny")
    alignments = [(a["task"], a["name"], a["split"]) for a in plan.collect_alignments(config, ROOT)]
    expected = list(dict.fromkeys([*plan.collect_evaluations(config, ROOT), *alignments]))
    return {"params": root / "params.yaml", "expected": expected}


def scores(results: Path, expected: list[tuple[str, str, str]], preset: str = "tiny") -> list[Path]:
    out = []
    for n, (task, system, testset) in enumerate(expected):
        path = results / task / "scores" / f"{system}.{testset}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            json.dumps(
                {
                    "system": system,
                    "testset": testset,
                    "preset": preset,
                    "pair": task,
                    "bleu_tok": 10.0 + n,
                    "ppl": 5.0,
                    "n_sentences": 60,
                }
            )
        )
        out.append(path)
    return out


def report(tiny: dict, tmp_path: Path, results: Path, *extra: str) -> subprocess.CompletedProcess:
    return nmt(
        "report",
        "--params",
        tiny["params"],
        "--preset",
        "tiny",
        "--results",
        results,
        "--data",
        tmp_path / "data",
        "--out",
        tmp_path / "reports" / "tiny",
        *extra,
    )


def good_report(tmp_path: Path) -> Path:
    out = tmp_path / "reports" / "tiny"
    out.mkdir(parents=True)
    (out / "index.html").write_text("<p>a good report</p>\n")
    (out / "summary.json").write_text("{}\n")
    return out


def test_a_mistyped_results_directory_is_refused_and_the_report_kept(tiny, tmp_path):
    out = good_report(tmp_path)
    scores(tmp_path / "results" / "tiny", tiny["expected"])
    before = snapshot(out)
    refused(
        report(tiny, tmp_path, tmp_path / "results" / "tnyi"),
        f"{tmp_path / 'results' / 'tnyi'}: no scores files of preset tiny ({len(tiny['expected'])} expected, no "
        "such directory); a report would be all MISSING: check --results, or pass --partial",
    )
    assert snapshot(out) == before


def test_a_report_of_fewer_than_half_its_scores_is_refused_unless_partial(tiny, tmp_path):
    out = good_report(tmp_path)
    (out / "README.md").write_text("kept\n")
    (out / "notes").mkdir()
    (out / "notes" / "n.txt").write_text("kept\n")
    (out / "old_table.csv").write_text("a table the new report does not have\n")
    results = tmp_path / "results"
    scores(results, tiny["expected"][:5])
    before = snapshot(out)
    refused(
        report(tiny, tmp_path, results),
        f"{results}: 5 of the {len(tiny['expected'])} scores files of preset tiny (fewer than half; e.g. no ",
    )
    assert snapshot(out) == before
    done = report(tiny, tmp_path, results, "--partial")
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"nmt: warning: a partial report: {len(tiny['expected']) - 5} of its "
        f"{len(tiny['expected'])} scores files are missing (their rows say "
        "MISSING)"
    ]
    assert "MISSING" in (out / "index.html").read_text() and not (out / "old_table.csv").exists()
    assert (out / "README.md").read_text() == "kept\n" and (out / "notes" / "n.txt").read_text() == "kept\n"
    assert sorted(p.name for p in out.parent.iterdir()) == ["tiny"]  # no staging directory left
    assert json.loads((out / "claims.json").read_text())["run"]["preset"] == "tiny"


def test_a_report_replaces_only_the_files_a_report_made(tiny, tmp_path):
    """A report keeps a manifest of the files it wrote (.report-files.json) and replaces those alone: in a directory no
    report made, the user's own .json/.csv/.png files stay, and one the report would write over stops it before
    anything there changes (`nmt report --out benchmarks` once took the throughput files)."""
    results = tmp_path / "results"
    scores(results, tiny["expected"])
    out = tmp_path / "reports" / "tiny"
    out.mkdir(parents=True)
    own = {"throughput.json": "{}\n", "numbers.csv": "a,b\n", "plot.png": "png\n"}
    for name, text in own.items():
        (out / name).write_text(text)
    done = report(tiny, tmp_path, results)
    assert done.returncode == 0, done.stderr
    assert all((out / name).read_text() == text for name, text in own.items())
    manifest = json.loads((out / ".report-files.json").read_text())["files"]
    assert "index.html" in manifest and "claims.json" in manifest and not set(own) & set(manifest)
    again = report(tiny, tmp_path, results)  # its own files: replaced, the user's still kept
    assert again.returncode == 0 and all((out / name).read_text() == text for name, text in own.items())
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "summary.json").write_text('{"mine": 1}\n')
    before = snapshot(theirs)
    refused(
        nmt(
            "report",
            "--params",
            tiny["params"],
            "--preset",
            "tiny",
            "--results",
            results,
            "--data",
            tmp_path / "data",
            "--out",
            theirs,
        ),
        f"{theirs / 'summary.json'}: not a file a report made (no report manifest names it), and the report would "
        "write over it",
    )
    assert snapshot(theirs) == before


def test_an_output_that_names_an_input_of_the_same_command_is_refused(tmp_path):
    """`nmt evaluate --out` naming its --hyp, `nmt unk replace --out` its --src, and `nmt compare --json` inside a
    report it reads: one line, the input untouched."""
    hyp = tmp_path / "hyp.txt"
    hyp.write_text("a b c\n")
    done = nmt(
        "evaluate",
        "--hyp",
        hyp,
        "--ref",
        hyp,
        "--out",
        hyp,
        "--system",
        "x",
        "--testset",
        "test",
        "--preset-name",
        "tiny",
        "--pair",
        "en-de",
    )
    refused(done, f"--out {hyp}: is also the command's --hyp: it would be written over while it is read")
    done = nmt("unk", "replace", "--hyp", hyp, "--positions", hyp, "--src", hyp, "--dict", hyp, "--out", hyp)
    refused(done, f"--out {hyp}: is also the command's --")
    assert hyp.read_text() == "a b c\n"
    reference = ROOT / "docs/reproductions/small-gpu"
    before = (reference / "claims.json").read_bytes()
    done = nmt("compare", reference, reference, "--json", reference / "claims.json")
    refused(done, f"--json {reference / 'claims.json'}: lies in the report {reference} that compare reads")
    assert (reference / "claims.json").read_bytes() == before


def test_a_malformed_input_found_while_rendering_leaves_the_previous_report(tiny, tmp_path):
    out = good_report(tmp_path)
    files = scores(tmp_path / "results", tiny["expected"])
    files[-1].write_text('{"bleu_tok": "high"}')
    before = snapshot(out)
    refused(report(tiny, tmp_path, tmp_path / "results"), f"{files[-1]}: bleu_tok")
    assert snapshot(out) == before


def model_json(path: Path) -> None:
    """A model.json as `nmt train` writes it for a Table 1 system of the tiny preset (the fields the report reads)."""
    table, system = "workflow/tables/luong2015_table1.yaml", path.parent.name
    config = cfg.system_config(
        cfg.load_params(ROOT / "params.yaml", "tiny"), cfg.load_table(ROOT / table), system, table
    )
    path.write_text(json.dumps({"system": system, "epochs": 1, "config": config}))


def test_a_training_without_model_json_is_listed_not_dropped(tiny, tmp_path):
    results = tmp_path / "results"
    scores(results, tiny["expected"])
    models = results / "en-de" / "models"
    (models / "base").mkdir(parents=True)
    (models / "base" / "metrics.jsonl").write_text('{"epoch": 1, "lr": 0.01, "dev_ppl": 20.0}\n')
    (models / "base_reverse").mkdir()
    model_json(models / "base_reverse" / "model.json")
    done = report(tiny, tmp_path, results)
    assert done.returncode == 0, done.stderr
    warning = done.stderr.strip().splitlines()
    assert warning == [
        "nmt: warning: 2 trainings with incomplete records (listed at the top of the page): en-de/base: "
        "no model.json beside its metrics.jsonl (an unfinished or damaged training): its size, time and "
        "environment are unknown; en-de/base_reverse: no metrics.jsonl beside its model.json: no "
        "learning curve, convergence unknown"
    ]
    page = (tmp_path / "reports" / "tiny" / "index.html").read_text()
    assert "Problems with the trainings&#8217; records:</strong> 2 trainings" in page
    assert "en-de/base: no model.json beside its metrics.jsonl" in page


def test_an_empty_metrics_file_is_one_line_not_a_training_dropped(tiny, tmp_path):
    out = good_report(tmp_path)
    results = tmp_path / "results"
    scores(results, tiny["expected"])
    (results / "en-de" / "models" / "base").mkdir(parents=True)
    (results / "en-de" / "models" / "base" / "metrics.jsonl").write_text("")
    model_json(results / "en-de" / "models" / "base" / "model.json")
    before = snapshot(out)
    refused(report(tiny, tmp_path, results), str(results / "en-de" / "models" / "base" / "metrics.jsonl"))
    assert snapshot(out) == before


# -- nmt data prepare ----------------------------------------------------------------------------------------------
FAIL_WRITE = """
import errno, os
import {module} as target
real, calls = target.{function}, []
def failing(path, *args, **kwargs):
    calls.append(path)
    if len(calls) == {n}:
        {action}
    return real(path, *args, **kwargs)
target.{function} = failing
"""
FULL_DISK = "raise OSError(errno.ENOSPC, 'No space left on device', str(path))"
KILLED = "os._exit(137)"


def raw_corpus(raw: Path, words: str) -> None:
    raw.mkdir(parents=True, exist_ok=True)
    for split in ("train", "dev", "test"):
        (raw / f"{split}.src").write_text(f"{words} s1\ns2 s3\n")
        (raw / f"{split}.tgt").write_text(f"t1 {words}\nt2\n")


def prepare(tmp_path: Path, wrapper: str | None = None) -> subprocess.CompletedProcess:
    return nmt(
        "data",
        "prepare",
        "--params",
        PARAMS,
        "--task",
        "en-de",
        "--raw",
        tmp_path / "raw",
        "--out",
        tmp_path / "data" / "prepared",
        "--splits",
        "train",
        "dev",
        "test",
        wrapper=wrapper,
    )


@pytest.mark.parametrize("action", [FULL_DISK, KILLED], ids=["full disk", "killed"])
def test_prepare_stopped_after_train_src_leaves_every_earlier_file(tmp_path, action):
    raw_corpus(tmp_path / "raw", "s0")
    assert prepare(tmp_path).returncode == 0
    prepared = tmp_path / "data" / "prepared"
    (prepared / "NOTES.txt").write_text("not prepare's: kept\n")
    before = snapshot(prepared)
    raw_corpus(tmp_path / "raw", "s4 s5 s6")  # a new corpus: every prepared file would change
    done = prepare(
        tmp_path, FAIL_WRITE.format(module="nmt.data.prepare", function="write_lines_atomic", n=2, action=action)
    )
    if action == FULL_DISK:
        refused(done, f"{prepared / 'train.tgt'}: No space left on device")
        assert snapshot(prepared) == before
    else:
        assert done.returncode == 137
        assert {k: v for k, v in snapshot(prepared).items() if ".staging-" not in k} == before
    assert prepare(tmp_path).returncode == 0  # the next run tidies what the killed one left, and replaces it all
    after = snapshot(prepared)
    assert sorted(after) == sorted(before) and all(
        after[k] != before[k] for k in before if k.endswith((".src", ".tgt", ".pt", "prep.json"))
    )
    assert after["prepared/NOTES.txt"] == before["prepared/NOTES.txt"]


# -- nmt export-run ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def small_gpu() -> dict:
    return cfg.load_params(ROOT / "params.yaml", "small-gpu")


def run_files_of(config: dict, results: Path, seeds: list[int], preset: str | None = None) -> None:
    """The files of the seeds' parts, each saying what it is where the real ones do (scores files, model.json)."""
    preset = preset or config["preset"]
    for f in run_files(config, ROOT, seeds):
        path = results / f
        path.parent.mkdir(parents=True, exist_ok=True)
        parts = f.split("/")
        if parts[1] == "scores":
            system, testset = parts[2][: -len(".json")].split(".", 1)
            path.write_text(
                json.dumps({"system": system, "testset": testset, "preset": preset, "pair": parts[0], "bleu_tok": 12.5})
            )
        elif parts[-1] == "model.json":
            seed = re.search(r"_seed(\d+)$", parts[2])
            path.write_text(
                json.dumps(
                    {
                        "system": parts[2],
                        "config": {
                            "preset": preset,
                            "train": {"seed": int(seed[1]) if seed else plan.preset_seeds(config)[0]},
                        },
                    }
                )
            )
        else:
            path.write_text(f"{f}\n")


def export(tmp_path: Path, preset: str, *extra: str, wrapper: str | None = None) -> subprocess.CompletedProcess:
    return nmt(
        "export-run",
        "--params",
        PARAMS,
        "--preset",
        preset,
        "--results",
        tmp_path / "results",
        "--out",
        tmp_path / "reference" / "results",
        *extra,
        wrapper=wrapper,
    )


def test_export_refuses_another_presets_scores_file_planted_in_the_results(tmp_path, small_gpu):
    run_files_of(small_gpu, tmp_path / "results", [1, 2])
    assert export(tmp_path, "small-gpu", "--seed", "1").returncode == 0
    dest = tmp_path / "reference" / "results"
    before = snapshot(dest)
    planted = tmp_path / "results" / "en-de" / "scores" / "global_location_seed2.test.json"
    planted.write_text(
        json.dumps({"system": "global_location_seed2", "testset": "test", "preset": "tiny", "pair": "en-de"})
    )
    refused(
        export(tmp_path, "small-gpu", "--seed", "2"),
        f"{planted}: its preset is 'tiny', not 'small-gpu': another run's scores file; nothing was exported",
    )
    assert snapshot(dest) == before


@pytest.mark.parametrize("which", ["scores", "model"])
def test_export_refuses_a_file_that_does_not_say_whose_it_is(tmp_path, small_gpu, which):
    run_files_of(small_gpu, tmp_path / "results", [1])
    if which == "scores":
        path = tmp_path / "results" / "en-de" / "scores" / "base.test.json"
        path.write_text(json.dumps({"system": "base", "testset": "test", "pair": "en-de", "bleu_tok": 12.5}))
        said = f"{path}: records no preset: whose run it is cannot be told; nothing was exported"
    else:
        path = tmp_path / "results" / "en-de" / "models" / "base" / "model.json"
        path.write_text(json.dumps({"system": "base", "config": {"train": {"seed": 1}}}))
        said = f"{path}: records no config's preset: whose run it is cannot be told; nothing was exported"
    refused(export(tmp_path, "small-gpu", "--seed", "1"), said)
    assert not (tmp_path / "reference").exists()


def test_export_refuses_another_trainings_metrics_beside_a_model_json(tmp_path, small_gpu):
    """model.json records the digest of the epochs its training wrote (nmt.records.metrics): another system's
    metrics.jsonl copied beside it is refused, naming it."""
    run_files_of(small_gpu, tmp_path / "results", [1])
    models = tmp_path / "results" / "en-de" / "models"
    ours, theirs = [{"epoch": 1, "lr": 0.002, "dev_ppl": 30.0}], [{"epoch": 1, "lr": 0.002, "dev_ppl": 12.0}]
    for system, records in (("base", ours), ("global_location", theirs)):
        meta = json.loads((models / system / "model.json").read_text())
        (models / system / "model.json").write_text(json.dumps({**meta, DIGEST_KEY: metrics_digest(records)}))
        (models / system / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    assert export(tmp_path, "small-gpu", "--seed", "1").returncode == 0
    shutil.rmtree(tmp_path / "reference")
    shutil.copy(models / "global_location" / "metrics.jsonl", models / "base" / "metrics.jsonl")
    refused(
        export(tmp_path, "small-gpu", "--seed", "1"),
        f"{models / 'base' / 'metrics.jsonl'}: not the epochs the training of {models / 'base' / 'model.json'} "
        "recorded",
    )
    assert not (tmp_path / "reference").exists()


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(
            st.fixed_dictionaries(
                {
                    "epoch": st.integers(1, 30),  # (no subnormal floats: the native
                    # kernels' flush-to-zero leaves hypothesis unable to draw them)
                    "lr": st.integers(0, 1000).map(lambda n: n / 1000),
                    "dev_ppl": st.integers(1000, 10**6).map(lambda n: n / 1000),
                }
            ),
            min_size=1,
            max_size=5,
        ),
        min_size=2,
        max_size=6,
    ),
    st.randoms(),
)
def test_metrics_shuffled_between_trainings_are_refused_unless_they_are_the_same_epochs(trainings, rng):
    metas = [{DIGEST_KEY: metrics_digest(records)} for records in trainings]
    order = list(range(len(trainings)))
    rng.shuffle(order)
    for meta, taken in zip(metas, order):
        records = json.loads(json.dumps(trainings[taken]))  # as read back from metrics.jsonl
        if records == trainings[metas.index(meta)]:
            check_metrics(meta, records, Path("m.jsonl"), Path("model.json"))
        else:
            with pytest.raises(InputError, match="not the epochs the training of model.json recorded"):
                check_metrics(meta, records, Path("m.jsonl"), Path("model.json"))


def test_export_refuses_trainings_of_one_pair_on_different_data(tmp_path, small_gpu):
    """Each model.json records the fingerprint of the prepared data it trained on: two trainings of one pair on
    different data (two runs' trainings mixed in one results directory) are refused, naming both."""
    run_files_of(small_gpu, tmp_path / "results", [1])
    models = tmp_path / "results" / "en-de" / "models"
    for system, fingerprint in (("base", "aaaa"), ("base_reverse", "aaaa"), ("global_location", "bbbb")):
        meta = json.loads((models / system / "model.json").read_text())
        (models / system / "model.json").write_text(
            json.dumps({**meta, "data": {"dir": "d", "fingerprint": fingerprint}})
        )
    done = export(tmp_path, "small-gpu", "--seed", "1")
    refused(done, "trained on data bbbb, but ")
    assert "on aaaa: another run's training; nothing was exported" in done.stderr
    assert not (tmp_path / "reference").exists()


def test_export_of_another_presets_results_is_refused(tmp_path):
    demo = cfg.load_params(ROOT / "params.yaml", "demo")
    run_files_of(demo, tmp_path / "results", [1])
    done = export(tmp_path, "tiny")  # tiny's DAG is the demo's: every file is where tiny's would be
    refused(done, "its config's preset is 'demo', not 'tiny': another run's model.json; nothing was exported")
    assert not (tmp_path / "reference").exists()


def test_export_refuses_a_model_json_of_another_seed(tmp_path, small_gpu):
    run_files_of(small_gpu, tmp_path / "results", [1, 2])
    model = tmp_path / "results" / "en-de" / "models" / "base_seed2" / "model.json"
    model.write_text(json.dumps({"system": "base_seed2", "config": {"preset": "small-gpu", "train": {"seed": 1}}}))
    refused(
        export(tmp_path, "small-gpu", "--seed", "2"),
        f"{model}: its config's train.seed is 1, not 2: another run's model.json; nothing was exported",
    )
    assert not (tmp_path / "reference").exists()


def test_export_refuses_a_destination_that_holds_another_runs_part(tmp_path, small_gpu):
    dest = tmp_path / "reference" / "results"
    run_files_of(small_gpu, dest, [1], preset="small")  # seed 1's part of a run of another preset
    run_files_of(small_gpu, tmp_path / "results", [2])
    before = snapshot(dest)
    refused(
        export(tmp_path, "small-gpu", "--seed", "2"),
        "is 'small', not 'small-gpu': another run's model.json; the "
        "destination holds another run's files; nothing was exported",
    )
    assert snapshot(dest) == before


def test_an_export_that_fails_while_copying_leaves_the_destination_as_it_was(tmp_path, small_gpu):
    run_files_of(small_gpu, tmp_path / "results", [1, 2])
    assert export(tmp_path, "small-gpu", "--seed", "1").returncode == 0
    dest = tmp_path / "reference" / "results"
    before = snapshot(dest)
    done = export(
        tmp_path,
        "small-gpu",
        "--seed",
        "2",
        wrapper=FAIL_WRITE.format(module="nmt.pipeline.export", function="write_bytes_atomic", n=40, action=FULL_DISK),
    )
    line = refused(done, ": No space left on device")
    assert str(dest) in line and ".staging-" not in line
    assert snapshot(dest) == before
    assert export(tmp_path, "small-gpu", "--seed", "2").stdout.strip().endswith("96 files copied, 0 already there")


# -- nmt compare ---------------------------------------------------------------------------------------------------
def report_dir(path: Path, preset: str | None = "small-gpu", run: dict | None = None, bleu: float = 20.0) -> Path:
    path.mkdir(parents=True)
    rows = [
        {
            "label": "Base",
            "system": "base",
            "status": "measured",
            "note": "",
            "paper_bleu_tok": 10.0,
            "ours_bleu_tok": bleu,
            "ours_bleu_tok_sd": 0.5,
            "n_runs": 3,
        },
        {
            "label": "Paper only",
            "system": None,
            "status": "reference",
            "note": "",
            "paper_bleu_tok": 11.0,
            "ours_bleu_tok": None,
        },
    ]
    (path / "t1.json").write_text(json.dumps(rows))
    (path / "summary.json").write_text(json.dumps({"t1": {}}))
    claims = {"claims": [{"id": "c1", "verdict": "reproduced", "ours_delta": 1.0, "ci_low": 0.5, "ci_high": 1.5}]}
    if preset is not None:
        claims["preset"] = preset
    if run is not None:
        claims["run"] = run
    (path / "claims.json").write_text(json.dumps(claims))
    return path


MALFORMED = {
    "a table JSON holding a number": (
        "t1.json",
        lambda p: p.write_text("42\n"),
        "t1.json: a report table must be an array at the top level, not a number",
    ),
    "invalid UTF-8": (
        "claims.json",
        lambda p: p.write_bytes(p.read_bytes().replace(b"reproduced", b"r\xffproduced")),
        "claims.json:1:",
    ),
    "a claim without id": (
        "claims.json",
        lambda p: p.write_text(json.dumps({"claims": [{"verdict": "reproduced"}]})),
        "claims.json: claims[1]: 'id' is a required property",
    ),
    "claims as a string": (
        "claims.json",
        lambda p: p.write_text(json.dumps({"claims": "c1"})),
        "claims.json: claims: 'c1' is not of type 'array'",
    ),
    "a row without label": (
        "t1.json",
        lambda p: p.write_text(json.dumps([{"system": "base", "status": "measured"}])),
        "t1.json: [1]: 'label' is a required property",
    ),
    "a number written 12.3x": (
        "t1.json",
        lambda p: p.write_text(p.read_text().replace("20.0", '"12.3x"')),
        "t1.json: [1].ours_bleu_tok: '12.3x' is not of type 'number', 'null'",
    ),
    "ci_low written low": (
        "claims.json",
        lambda p: p.write_text(p.read_text().replace("0.5", '"low"')),
        "claims.json: claims[1].ci_low: 'low' is not of type 'number', 'null'",
    ),
    "a table's JSON missing": (
        "t1.json",
        lambda p: p.unlink(),
        "t1.json: missing, though",
    ),  # not its rows listed as "only in reference"
    "a number written Infinity": (
        "t1.json",
        lambda p: p.write_text(p.read_text().replace("20.0", "Infinity")),
        "t1.json: [1].ours_bleu_tok: inf is not a finite number",
    ),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_compare_of_a_malformed_report_file_is_one_line_naming_file_and_key(tmp_path, case):
    name, damage, expected = MALFORMED[case]
    run, reference = report_dir(tmp_path / "run"), report_dir(tmp_path / "reference")
    damage(reference / name)
    line = refused(nmt("compare", run, reference), expected)
    assert str(reference / name) in line


@pytest.fixture(scope="module")
def identities() -> dict[str, dict]:
    return {
        preset: run_identity(cfg.load_params(ROOT / "params.yaml", preset), ROOT)
        for preset in ("tiny", "demo", "small", "small-gpu")
    }


def test_compare_refuses_reports_of_different_presets_unless_asked(tmp_path, identities):
    run = report_dir(tmp_path / "tiny", "tiny", identities["tiny"])
    reference = report_dir(tmp_path / "demo", "demo", identities["demo"], bleu=25.0)
    refused(
        nmt("compare", run, reference),
        f"{run} and {reference} are reports of presets tiny and demo: they differ in the en-de corpus (synth "
        "against synth with other settings)",
    )
    done = nmt("compare", run, reference, "--across-presets", "--json", tmp_path / "cmp.json")
    assert done.returncode == 0 and done.stderr == ""
    first = done.stdout.splitlines()[0]
    assert first.startswith(
        f"comparing across presets (--across-presets): {run} and {reference} are reports of "
        "presets tiny and demo: they differ in the en-de corpus"
    ), first
    assert json.loads((tmp_path / "cmp.json").read_text())["note"] == first


def test_compare_of_a_small_run_against_the_small_gpu_reference_says_they_differ_in_name_only(tmp_path, identities):
    run = report_dir(tmp_path / "small", "small", identities["small"])
    reference = report_dir(tmp_path / "ref", "small-gpu", identities["small-gpu"])
    done = nmt("compare", run, reference)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == (
        "note: presets small and small-gpu differ, but the 4 tables both reports "
        "show were trained alike (the same corpora and settings)"
    )


def test_compare_refuses_one_preset_trained_otherwise_and_presets_it_cannot_tell_apart(tmp_path, identities):
    edited = json.loads(json.dumps(identities["small-gpu"]))
    edited["corpora"]["en-de"]["digest"] = "0" * 16
    edited["tables"]["luong2015_table1"] = "1" * 16
    run = report_dir(tmp_path / "run", "small-gpu", edited)
    reference = report_dir(tmp_path / "ref", "small-gpu", identities["small-gpu"])
    refused(
        nmt("compare", run, reference),
        "are reports of preset small-gpu: they differ in the en-de corpus "
        "(multi30k against multi30k with other settings); 1 of the 4 tables",
    )
    old_run, old_reference = report_dir(tmp_path / "old_tiny", "tiny"), report_dir(tmp_path / "old_demo", "demo")
    refused(
        nmt("compare", old_run, old_reference),
        "are reports of presets tiny and demo (a report without a run "
        "record: re-render it with `nmt report` to compare recipes)",
    )
    assert nmt("compare", report_dir(tmp_path / "a", "demo"), report_dir(tmp_path / "b", "demo")).returncode == 0


def test_the_run_record_describes_the_trainings_by_what_they_recorded(identities):
    """claims.json's run record is taken from the trainings' model.json where they are there, not from the preset
    alone: the published small-gpu part was trained by the rule before (stop: stalls, patience 2), so it is another
    run than the preset's (stop: gate) in the tables it trains, and the same trainings recorded with the rule before
    that (a plateau without patience: patience 1) are another again (`nmt compare` then says how they differ)."""
    from nmt.report.assemble import recorded_configs

    config = cfg.load_params(ROOT / "params.yaml", "small-gpu")
    results = ROOT / "docs/reproductions/small-gpu/results"
    recorded = recorded_configs(results, plan.collect_systems(config, ROOT))
    assert len(recorded) == 18
    published = run_identity(config, ROOT, recorded)
    trained = {"luong2015_table1", "luong2015_table3", "luong2015_table4"}  # Table 2 trains nothing
    assert published["corpora"] == identities["small-gpu"]["corpora"]
    assert {t for t in published["tables"] if published["tables"][t] != identities["small-gpu"]["tables"][t]} == trained
    earlier = {
        key: {
            **c,
            "train": {**c["train"], "plateau": {k: v for k, v in c["train"]["plateau"].items() if k != "patience"}},
        }
        for key, c in recorded.items()
    }
    differs = run_identity(config, ROOT, earlier)
    assert differs["corpora"] == published["corpora"]
    assert {t for t in differs["tables"] if differs["tables"][t] != published["tables"][t]} == trained


def test_compare_says_when_a_report_records_no_run(tmp_path, identities):
    """A claims.json without its run record (made before run records, or by hand) is compared, but the first line
    says that whether the two were trained alike is not checked, naming the file."""
    run = report_dir(tmp_path / "run", "small-gpu", identities["small-gpu"])
    reference = report_dir(tmp_path / "reference", "small-gpu")
    done = nmt("compare", run, reference)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == (
        f"note: {reference / 'claims.json'} records no run (its corpora and settings): whether the two were trained "
        "alike is not checked; render it again with `nmt report`"
    )
    both = nmt(
        "compare",
        report_dir(tmp_path / "a", "small-gpu", identities["small-gpu"]),
        report_dir(tmp_path / "b", "small-gpu", identities["small-gpu"]),
    )
    assert not both.stdout.startswith("note:")


@settings(max_examples=15, deadline=None)
@given(st.data())
def test_files_shuffled_between_the_runs_of_a_part_are_refused(tmp_path_factory, data):
    """Any two of a part's scores files or model.json swapped (another system's, another pair's, another seed's) make
    the export refuse, naming one of them, and nothing is exported."""
    from nmt.pipeline.export import export_run

    small_gpu = cfg.load_params(ROOT / "params.yaml", "small-gpu")
    tmp = tmp_path_factory.mktemp("shuffle")
    run_files_of(small_gpu, tmp / "results", [1, 2])
    kind = data.draw(st.sampled_from(["scores", "model.json"]))
    files = sorted(
        p
        for p in (tmp / "results").rglob("*")
        if p.is_file() and (p.parent.name == "scores" if kind == "scores" else p.name == "model.json")
    )
    a, b = data.draw(st.lists(st.sampled_from(files), min_size=2, max_size=2, unique=True))
    if a.read_bytes() == b.read_bytes():
        return
    text_a, text_b = a.read_text(), b.read_text()
    a.write_text(text_b), b.write_text(text_a)
    with pytest.raises(InputError, match="another run's|records no"):
        export_run(small_gpu, ROOT, tmp / "results", tmp / "reference", seeds=[1, 2])
    assert not (tmp / "reference").exists()


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_an_output_naming_any_input_of_its_command_is_refused(tmp_path_factory, data):
    from nmt.cli.options import check_outputs
    from nmt.cli.parser import build_parser

    tmp = tmp_path_factory.mktemp("io")
    commands = {
        ("translate", "--preset", "demo", "--task", "en-de", "--system", "base"): ("--src", "--models-dir"),
        ("evaluate", "--system", "x", "--testset", "t", "--preset-name", "demo", "--pair", "en-de"): (
            "--hyp",
            "--ref",
            "--raw-ref",
            "--src",
            "--positions",
            "--unk-dict",
        ),
        ("unk", "replace"): ("--hyp", "--positions", "--src", "--dict"),
    }
    command = data.draw(st.sampled_from(sorted(commands)))
    argv = list(command)
    inputs = {}
    for option in commands[command]:
        path = tmp / option.strip("-")
        path.write_text("x\n")
        inputs[option] = path
        argv += [option, str(path)]
    named = data.draw(st.sampled_from(sorted(inputs)))
    args = build_parser().parse_args(argv + ["--out", str(inputs[named])])
    with pytest.raises(UserError, match=f"is also the command's {named}"):
        check_outputs(args)
