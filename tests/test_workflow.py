"""End to end: the tiny preset through Snakemake and through DVC, in a scratch copy of the repository."""
import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "workflow/tables/luong2015_table1.yaml"
pytestmark = pytest.mark.e2e


def scratch_copy(dest: Path) -> Path:
    """The workflow files of this checkout (not its data or results) in a fresh directory."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("Snakefile", "params.yaml", "dvc.yaml"):
        shutil.copy2(ROOT / name, dest / name)
    shutil.copytree(ROOT / "workflow", dest / "workflow")
    # dvc.yaml names the package sources as dependencies of its stages.
    shutil.copytree(ROOT / "nmt", dest / "nmt", ignore=shutil.ignore_patterns("__pycache__"))
    params = yaml.safe_load((dest / "params.yaml").read_text())
    params["preset"] = "tiny"
    (dest / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    return dest


def run(cmd, cwd, timeout=900):
    result = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, f"{' '.join(cmd)} failed:\n{result.stdout[-3000:]}\n{result.stderr[-5000:]}"
    return result


def systems():
    return list(yaml.safe_load(TABLE.read_text())["systems"])


def ensembles():
    return list(yaml.safe_load(TABLE.read_text()).get("ensembles") or {})


def check_report(workdir: Path) -> dict:
    report = workdir / "reports/tiny"
    html = (report / "index.html").read_text()
    rows = json.loads((report / "luong2015_table1.json").read_text())
    measured = [r for r in rows if r["status"] == "measured"]
    assert {r["system"] for r in measured} == set(systems()) | set(ensembles())
    table = yaml.safe_load(TABLE.read_text())
    for row, spec in zip(rows, table["rows"]):
        if row["status"] != "measured":
            continue
        scores = json.loads((workdir / f"results/tiny/en-de/scores/{row['system']}.test.json").read_text())
        shown = {"ppl": "ppl", "bleu_tok": "bleu_tok", **spec.get("values_from", {})}
        assert row["ours_bleu_tok"] == scores[shown["bleu_tok"]]
        assert row["ours_ppl"] == (scores["ppl"] if shown["ppl"] else None)
        if row["system"] in ensembles():
            assert scores["ppl"] is None and scores["bleu_tok_unk"] is not None
        elif shown["ppl"]:
            assert f"{scores['ppl']:.2f}" in html
    unk = json.loads((workdir / "results/tiny/en-de/scores/local_p_general_feed.test.json").read_text())["unk"]
    assert unk["unks"] == unk["from_dictionary"] + unk["copied"] > 0  # the tiny vocabulary leaves <unk>s to replace
    assert json.loads((workdir / "results/tiny/en-de/scores/base.test.json").read_text())["unk"] is None
    return {(r["label"], r["system"]): (r["ours_ppl"], r["ours_bleu_tok"]) for r in measured}


@pytest.fixture(scope="module")
def snakemake_run(tmp_path_factory):
    pytest.importorskip("snakemake")
    workdir = scratch_copy(tmp_path_factory.mktemp("smk"))
    dry = run(["snakemake", "-n", "--cores", "2"], workdir)
    run(["snakemake", "--cores", "2"], workdir)
    return workdir, dry.stdout


def test_dry_run_lists_one_training_job_per_system(snakemake_run):
    _, dry = snakemake_run
    jobs = {line.split()[0]: int(line.split()[1]) for line in dry.splitlines()
            if len(line.split()) == 2 and line.split()[1].isdigit()}
    assert jobs["train"] == len(systems())
    assert jobs["translate"] == jobs["evaluate"] == len(systems()) + len(ensembles())
    assert jobs["unk_dictionary"] == 1
    assert jobs["bench_attention"] == 1


def test_snakemake_runs_the_tiny_preset_to_the_report(snakemake_run):
    workdir, _ = snakemake_run
    check_report(workdir)
    for system in systems():
        assert (workdir / f"logs/tiny/en-de/train/{system}.log").exists()
        assert (workdir / f"results/tiny/benchmarks/en-de/train/{system}.tsv").exists()
    assert 'id="attention-speed"' in (workdir / "reports/tiny/index.html").read_text()  # the measured figure
    assert (workdir / "reports/tiny/attention_speed.png").exists()
    again = run(["snakemake", "-n", "--cores", "2"], workdir)
    assert "Nothing to be done" in again.stdout + again.stderr


def test_dvc_repro_gives_the_same_report(snakemake_run, tmp_path):
    pytest.importorskip("dvc")
    smk_dir, _ = snakemake_run
    workdir = scratch_copy(tmp_path / "dvc")
    run(["git", "init", "-q"], workdir)
    run(["dvc", "init", "-q"], workdir)
    run(["dvc", "repro", "-q"], workdir)
    assert check_report(workdir) == check_report(smk_dir)
    shown = run(["dvc", "metrics", "show", "--json"], workdir).stdout
    for system in systems():
        assert f"results/tiny/en-de/scores/{system}.test.json" in shown
    assert "bleu_tok" in shown
