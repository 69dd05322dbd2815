"""End to end: the tiny preset through Snakemake and through DVC, in a scratch copy of the repository."""
import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
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


def preset_config():
    from nmt import config as cfg
    return cfg.load_params(ROOT / "params.yaml", "tiny")


def systems():
    """{task: [trained systems]} of every table of the preset."""
    from nmt import config as cfg
    return {task: list(s) for task, s in cfg.collect_systems(preset_config(), ROOT).items()}


def evaluations():
    from nmt import config as cfg
    return cfg.collect_evaluations(preset_config(), ROOT)


def check_report(workdir: Path) -> dict:
    """Every measured cell of every table equals its scores file's field; returns the measured cells."""
    report = workdir / "reports/tiny"
    html = (report / "index.html").read_text()
    shown = {}
    for path in preset_config()["tables"]:
        table = yaml.safe_load((ROOT / path).read_text())
        rows = json.loads((report / f"{table['id']}.json").read_text())
        assert [r["status"] for r in rows] == ["reference" if spec["system"] is None else "measured"
                                               for spec in table["rows"]]
        for row, spec in zip(rows, table["rows"]):
            if row["status"] != "measured":
                continue
            scores = json.loads((workdir / f"results/tiny/{table['task']}/scores/"
                                           f"{row['system']}.{table['testset']}.json").read_text())
            for column in table["columns"]:
                field = {column: column, **spec.get("values_from", {})}[column]
                assert row[f"ours_{column}"] == (scores[field] if field else None), (table["id"], row["label"])
                shown[(table["id"], row["label"], column)] = row[f"ours_{column}"]
            if "ppl" in table["columns"] and row["ours_ppl"] is not None:
                assert f"{row['ours_ppl']:.2f}" in html
    # Table 6: AER of attention models and of eflomal against the tiny corpus' gold links
    for system in ("global_location_feed", "local_p_general_feed", "ensemble_attention", "eflomal_full"):
        aer = json.loads((workdir / f"results/tiny/en-de/scores/{system}.align.json").read_text())
        assert 0.0 <= aer["aer"] <= 1.0 and aer["range_checked"]
        assert (aer.get("saer") is not None) == (system != "eflomal_full")  # soft matrices: models only
    for system in ("rnnsearch", "rnnsearch_guided", "rnnsearch_tf_frozen", "rnnsearch_tf_guided", "eflomal_hmm"):
        aer = json.loads((workdir / f"results/tiny/de-en/scores/{system}.align.json").read_text())
        assert 0.0 <= aer["aer_pct"] <= 100.0 and aer["saer_hard_pct"] is not None
    frozen = json.loads((workdir / "results/tiny/en-de/models/rnnsearch_tf_frozen/model.json").read_text())
    assert frozen["trainable_parameters"] < frozen["parameters"]  # only the attention layer trained
    ensemble = json.loads((workdir / "results/tiny/en-de/scores/ensemble_attention.test.json").read_text())
    assert ensemble["ppl"] is None and ensemble["bleu_tok_unk"] is not None
    # Raffel Table 4: each monotonic system decoded greedily by its expected alignment and by the hard process;
    # the perplexity is the trained model's either way
    for energy in ("eq16", "eq17"):
        soft, hard = (json.loads((workdir / f"results/tiny/en-vi/scores/monotonic_{energy}_{mode}.test.json")
                                 .read_text()) for mode in ("soft", "hard"))
        assert soft["ppl"] == hard["ppl"] is not None and hard["bleu_tok"] is not None
    unk = json.loads((workdir / "results/tiny/en-de/scores/local_p_general_feed.test.json").read_text())["unk"]
    assert unk["unks"] == unk["from_dictionary"] + unk["copied"] > 0  # the tiny vocabulary leaves <unk>s to replace
    assert json.loads((workdir / "results/tiny/en-de/scores/base.test.json").read_text())["unk"] is None
    # the figures: learning curves (Figure 5), BLEU by length (6), attention maps with gold (7), samples (Table 5)
    for section in ("luong2015_figure5", "luong2015_figure6", "luong2015_figure7", "luong2015_table5",
                    "peter2017_figure3"):
        assert f'id="{section}"' in html
    assert "Not drawn" not in html
    for png in ("luong2015_table1_learning_curves.png", "luong2015_figure6.png", "luong2015_figure7.png",
                "peter2017_figure3.png"):
        assert (report / png).read_bytes().startswith(b"\x89PNG")
    return shown


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
    # Tables 1, 3, 4 (18 systems), Peter et al.'s 4 RNNsearch systems in both directions, Raffel's 3
    assert jobs["train"] == sum(map(len, systems().values())) == 30  # + the follow-up's TF-guided system
    # Raffel's 3 systems are decoded 5 times (greedy; the monotonic ones soft and hard), not with the default beam
    assert jobs["translate"] == jobs["evaluate"] == len(evaluations()) == 28
    assert jobs["align_training_model"] == 1  # the TF + GA system's links of the training pairs
    assert jobs["corpus_en_de"] == jobs["corpus_de_en"] == jobs["prepare_en_de"] == jobs["prepare_de_en"] == 1
    assert jobs["corpus_en_vi"] == jobs["prepare_en_vi"] == 1
    assert jobs["unk_dictionary"] == 3
    assert jobs["attention_map"] == 3 + 4  # Luong Figure 7, Peter Figure 3
    assert jobs["bench_attention"] == jobs["bench_monotonic"] == 1
    # Luong Table 6: three systems and the ensemble force-decoded on the gold-aligned split, eflomal: 5 scores.
    # Peter Table 1: 4 systems x 2 directions, merged, 2 eflomal baselines: 6 scores; eflomal on the training
    # pairs of both tasks for guided alignment.
    assert jobs["align_model"] == 4 + 8 and jobs["align_merge"] == 4
    assert jobs["align_statistical"] == 1 + 2 and jobs["align_score"] == 5 + 6 and jobs["align_training_data"] == 2


def test_snakemake_runs_the_tiny_preset_to_the_report(snakemake_run):
    workdir, _ = snakemake_run
    check_report(workdir)
    for task, trained in systems().items():
        for system in trained:
            assert (workdir / f"logs/tiny/{task}/train/{system}.log").exists()
            assert (workdir / f"results/tiny/benchmarks/{task}/train/{system}.tsv").exists()
    html = (workdir / "reports/tiny/index.html").read_text()
    assert 'id="attention-speed"' in html and 'id="monotonic-speed"' in html  # the measured figures
    for png in ("attention_speed.png", "monotonic_speedup.png", "monotonic_decoding.png"):
        assert (workdir / "reports/tiny" / png).exists()
    again = run(["snakemake", "-n", "--cores", "2"], workdir)
    assert "Nothing to be done" in again.stdout + again.stderr


def test_dvc_repro_gives_the_same_report(snakemake_run, tmp_path):
    pytest.importorskip("dvc")
    smk_dir, _ = snakemake_run
    workdir = scratch_copy(tmp_path / "dvc")
    run(["git", "init", "-q"], workdir)
    run(["dvc", "init", "-q"], workdir)
    run(["dvc", "repro", "-q"], workdir, timeout=1800)  # one stage at a time: about twice Snakemake's time
    assert check_report(workdir) == check_report(smk_dir)
    shown = run(["dvc", "metrics", "show", "--json"], workdir).stdout
    for task, system, testset in evaluations():
        assert f"results/tiny/{task}/scores/{system}.{testset}.json" in shown
    assert "bleu_tok" in shown
    assert "results/tiny/en-de/scores/eflomal_full.align.json" in shown and '"aer"' in shown
