"""End to end: the tiny preset through Snakemake and through DVC, in scratch copies of the repository
(the runs themselves: tests/pipelines.py, started together by tests/conftest.py)."""
import pytest

from pipelines import assert_same_tables, check_report, evaluations, run, systems

pytestmark = pytest.mark.e2e


@pytest.mark.pipeline("snakemake")
def test_dry_run_lists_one_training_job_per_system(tiny_runs):
    dry = tiny_runs["snakemake"].results[0].stdout
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
    # Luong Figure 7, Table 6's ensemble, Peter Figure 3's RNNsearch systems; eflomal's links beside them
    assert jobs["attention_map"] == 3 + 1 + 4 and jobs["alignment_map"] == 1 + 2
    assert jobs["bench_attention"] == jobs["bench_monotonic"] == 1
    # Luong Table 6: three systems and the ensemble force-decoded on the gold-aligned split, eflomal: 5 scores.
    # Peter Table 1: 4 systems x 2 directions, merged, 2 eflomal baselines: 6 scores; eflomal on the training
    # pairs of both tasks for guided alignment.
    assert jobs["align_model"] == 4 + 8 and jobs["align_merge"] == 4
    assert jobs["align_statistical"] == 1 + 2 and jobs["align_score"] == 5 + 6 and jobs["align_training_data"] == 2


@pytest.mark.pipeline("snakemake")
def test_snakemake_runs_the_tiny_preset_to_the_report(tiny_runs):
    workdir = tiny_runs["snakemake"].workdir
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


@pytest.mark.pipeline("snakemake")
@pytest.mark.pipeline("dvc")
def test_dvc_repro_gives_the_same_report(tiny_runs):
    workdir = tiny_runs["dvc"].workdir
    assert_same_tables(workdir, tiny_runs["snakemake"].workdir)
    shown = run(["dvc", "metrics", "show", "--json"], workdir).stdout
    for task, system, testset in evaluations():
        assert f"results/tiny/{task}/scores/{system}.{testset}.json" in shown
    assert "bleu_tok" in shown
    assert "results/tiny/en-de/scores/eflomal_full.align.json" in shown and '"aer"' in shown
