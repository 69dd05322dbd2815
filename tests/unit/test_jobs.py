"""The job records both engines read (nmt.pipeline.jobs) and their DVC serialisation (nmt.pipeline.dvc_yaml)."""

import re
from pathlib import Path

import pytest

from nmt import config as cfg
from nmt.base import layout
from nmt.config import plan
from nmt.pipeline.dvc_yaml import stage_of
from nmt.pipeline.jobs import STEPS, Jobs, build_jobs
from nmt.report.claims import ClaimJudge

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def tiny():
    config = cfg.load_params(ROOT / "params.yaml", "tiny")
    return config, build_jobs(config, ROOT)


def test_each_job_is_found_by_its_step_and_wildcards_and_writes_its_step_s_patterns_filled_in(tiny):
    _, jobs = tiny
    for job in jobs:
        assert jobs.find(job.step.name, {"preset": "tiny", **dict(job.fields)}) is job
        if job.step.outputs:
            assert job.outputs == tuple(
                layout.path(p, preset="tiny", **dict(job.fields)) for p in job.step.outputs.values()
            )
            for name, value in job.fields:  # each field matches its step's rule constraint
                assert re.fullmatch(jobs.constraints(job.step.name)[name], value)


def test_the_plan_s_trainings_and_decodings_are_the_jobs(tiny):
    config, jobs = tiny
    trained = {(task, system) for task, systems in plan.collect_systems(config, ROOT).items() for system in systems}
    assert {(dict(j.fields)["pair"], dict(j.fields)["system"]) for j in jobs.of("train")} == trained
    decoded = set(plan.collect_evaluations(config, ROOT))
    for step in ("translate", "evaluate"):
        assert {tuple(dict(j.fields)[k] for k in ("pair", "system", "testset")) for j in jobs.of(step)} == decoded


def test_two_steps_that_write_one_pattern_never_compete_for_a_file(tiny):
    """Attention maps of models and of statistical aligners are both layout.ATTENTION: each rule's wildcards match
    only its own jobs' systems; a step without jobs matches nothing."""
    _, jobs = tiny
    models, aligners = jobs.constraints("attention_map")["system"], jobs.constraints("alignment_map")["system"]
    assert jobs.of("alignment_map") and jobs.of("attention_map")
    for job in jobs.of("alignment_map"):
        system = dict(job.fields)["system"]
        assert re.fullmatch(aligners, system) and not re.fullmatch(models, system)
    assert not {j.outputs for j in jobs.of("attention_map")} & {j.outputs for j in jobs.of("alignment_map")}
    assert Jobs([]).constraints("train") == {"pair": "(?!)", "system": "(?!)"}


def test_engines_add_threads_and_the_device_option_only_where_a_step_s_commands_take_them(tiny):
    _, jobs = tiny
    train = jobs.of("train")[0]
    assert train.shell(3, " --device cpu").endswith(" --threads 3 --device cpu")
    merge = jobs.of("align_merge")[0]  # two commands, neither takes threads nor a device
    assert merge.shell(3, " --device cpu").count("nmt align symmetrize") == 2
    assert "--threads" not in merge.shell(3, " --device cpu") and "--device" not in merge.shell(3, " --device cpu")
    bench = jobs.find("bench_attention", {})
    assert bench.shell(8, " --device cpu").endswith(
        "--threads 1 --out results/tiny/benchmarks/attention.json --device cpu"
    )  # times one thread whatever the rule holds
    label = jobs.of("alignment_map")[0].shell(1, "")
    assert "--label 'eflomal" in label  # a word with spaces is quoted for the shell


def test_a_dvc_stage_is_its_job_with_one_thread_and_the_cpu_named_where_its_kind_holds_no_gpu(tiny):
    _, jobs = tiny
    stamp = "results/tiny/dvc-plan.txt"
    code = {("train",): ["nmt/training/run.py"]}
    train = jobs.of("train")[0]
    fields = dict(train.fields)
    stage = stage_of(train, stamp, lambda words: code.get(words, []))
    assert stage["cmd"] == train.shell(1, "")  # a training takes nmt's default device
    prepared = layout.path(layout.PREPARED, preset="tiny", pair=fields["pair"])
    # the tensors it reads are named by the directory its --data reads; then the code its command runs
    assert stage["deps"][0] == stamp and prepared in stage["deps"] and stage["deps"][-1] == "nmt/training/run.py"
    assert not [d for d in stage["deps"] if d.startswith(prepared + "/")]
    checkpoint = layout.path(layout.CHECKPOINT, preset="tiny", **fields)
    # its curves as CSV: read by no job, an output all the same; DVC's plots are the report's images
    assert {checkpoint: {"persist": True}} in stage["outs"] and "plots" not in stage
    assert layout.path(layout.METRICS_CSV, preset="tiny", **fields) in stage["outs"]
    evaluate = jobs.of("evaluate")[0]
    stage = stage_of(evaluate, stamp, lambda words: [])
    # the scores file is an output like any other: the report's headline files of a few keys are DVC's metrics
    assert stage["cmd"].endswith(" --threads 1 --device cpu") and "metrics" not in stage
    assert set(evaluate.outputs) <= set(stage["outs"])
    corpus = jobs.of("corpus")[0]
    assert stage_of(corpus, stamp, lambda words: [])["outs"] == [corpus.directory]


def test_the_report_reads_every_other_job_s_files_and_the_whole_configuration(tiny):
    config, jobs = tiny
    report = jobs.find("report", {})
    assert {out for job in jobs if job is not report for out in job.outputs} <= set(report.inputs)
    assert {"params.yaml", "workflow/presets/tiny.yaml", "workflow/presets/paper.yaml", *config["tables"]} <= set(
        report.inputs
    )
    assert set(STEPS) == {job.step.name for job in jobs}  # the tiny preset runs every step


@pytest.fixture(scope="module")
def demo_three_seeds():
    """The demo with three seeds: its tables have an ensemble of eight systems, decodings and statistical aligners."""
    config = cfg.load_params(ROOT / "params.yaml", "demo")
    config["train"]["seeds"] = [1, 2, 3]
    return config, build_jobs(config, ROOT)


def test_an_ensemble_and_an_aligner_run_once_per_seed_and_are_paired_with_the_systems_by_it(demo_three_seeds):
    config, jobs = demo_three_seeds
    ensembles = plan.collect_ensembles(config, ROOT)["en-de"]
    members = ensembles["ensemble_attention"]["members"]
    for seed in (2, 3):  # the same ensemble of each member's run with that seed, combined alike
        assert ensembles[f"ensemble_attention_seed{seed}"] == {
            **ensembles["ensemble_attention"],
            "members": [f"{m}_seed{seed}" for m in members],
        }
        assert plan.is_ensemble(ensembles, f"ensemble_attention_seed{seed}")
    runs = plan.collect_runs(config, ROOT)
    assert runs["en-de"]["ensemble_attention"] == [
        "ensemble_attention",
        "ensemble_attention_seed2",
        "ensemble_attention_seed3",
    ]
    assert runs["en-de"]["eflomal_full"] == ["eflomal_full", "eflomal_full_seed2", "eflomal_full_seed3"]
    assert runs["de-en"]["eflomal_hmm"] == ["eflomal_hmm", "eflomal_hmm_seed2", "eflomal_hmm_seed3"]

    def seeds(names):  # the seed each run was made with, as its name says
        return [int(m["seed"]) if (m := cfg.SEED_RUN.match(n)) else 1 for n in names]

    assert (
        seeds(runs["en-de"]["ensemble_attention"])
        == seeds(runs["en-de"][members[0]])
        == seeds(runs["en-de"]["eflomal_full"])
        == [1, 2, 3]
    )  # run N of each made with seed N
    # each seed's ensemble decodes, is scored and aligns with that seed's models
    translate = jobs.find("translate", {"pair": "en-de", "system": "ensemble_attention_seed2", "testset": "test"})
    models = [f"results/demo/en-de/models/{m}_seed2/model.pt" for m in members]
    assert translate.commands[0][3 : 3 + len(members) + 2] == (*models, "--combine", "prob")
    assert set(models) <= set(translate.inputs)
    assert (
        "--model"
        not in jobs.find(
            "evaluate", {"pair": "en-de", "system": "ensemble_attention_seed2", "testset": "test"}
        ).commands[0]
    )  # an ensemble has no perplexity
    extract = jobs.find("align_model", {"pair": "en-de", "system": "ensemble_attention_seed3", "split": "align"})
    assert [f"results/demo/en-de/models/{m}_seed3/model.pt" for m in members] == list(extract.inputs[: len(members)])
    # an aligner's first seed keeps its name and command (eflomal's default seed); seed N is its own run, seeded N
    for name, seed in (("eflomal_full", None), ("eflomal_full_seed2", 2), ("eflomal_full_seed3", 3)):
        command = jobs.find("align_statistical", {"pair": "en-de", "system": name, "split": "align"}).commands[0]
        assert (command[command.index("--seed") + 1] if "--seed" in command else None) == (seed and str(seed))
        assert command[command.index("--out") + 1] == f"results/demo/en-de/alignments/aligners/{name}.align.links"
        score = jobs.find("align_score", {"pair": "en-de", "system": name, "split": "align"}).commands[0]
        assert score[score.index("--system") + 1] == name
    # the training data's alignments stay one run, shared by every seed's trainings
    assert sorted(j.name for j in jobs.of("align_training_data")) == [
        f"align_training_data.{t}.eflomal_full" for t in ("de-en", "en-de")
    ]
    assert all("_seed" not in j.name for j in [*jobs.of("align_training_data"), *jobs.of("unk_dictionary")])
    # the convergence gate of a claim on the ensemble's row checks the trainings of every seed's ensemble
    judge = ClaimJudge(
        results_dir=ROOT / "results/demo",
        preset="demo",
        tables_by_id={},
        pair_for_task={},
        runs=runs,
        ensembles=plan.collect_ensembles(config, ROOT),
    )
    table1 = cfg.load_table(ROOT / "workflow/tables/luong2015_table1.yaml")
    gated = {
        run for member in judge._trained(table1, "ensemble_attention", "en-de") for run in judge._runs("en-de", member)
    }
    assert gated == {m for s in ("", "_seed2", "_seed3") for m in ensembles[f"ensemble_attention{s}"]["members"]}
    # a row of an ensemble or an aligner shows the mean of its runs: every run is decoded or aligned and scored
    evaluated = set(plan.collect_evaluations(config, ROOT))
    assert {
        ("en-de", f"ensemble_attention{s}", t) for s in ("", "_seed2", "_seed3") for t in ("test", "test2")
    } <= evaluated


def test_each_seed_s_part_holds_its_ensemble_decoding_and_aligner_runs(demo_three_seeds):
    config, _ = demo_three_seeds
    parts = {seed: set(plan.seed_part(config, ROOT, seed)) for seed in (1, 2, 3)}
    assert not parts[1] & parts[2] and not parts[2] & parts[3] and not parts[1] & parts[3]
    for seed, suffix in ((1, ""), (2, "_seed2"), (3, "_seed3")):
        assert {
            f"results/demo/en-de/translations/ensemble_attention{suffix}.test.txt",
            f"results/demo/en-de/scores/ensemble_attention{suffix}.test2.json",
            f"results/demo/en-de/scores/ensemble_attention{suffix}.align.json",
            f"results/demo/en-de/scores/eflomal_full{suffix}.align.json",
            f"results/demo/de-en/scores/eflomal_hmm{suffix}.align.json",
            f"results/demo/en-vi/scores/monotonic_eq16_hard{suffix}.test.json",  # a decoding's run
            f"results/demo/en-de/models/base{suffix}/metrics.jsonl",
        } <= parts[seed], seed


def test_a_lowercased_corpus_is_scored_case_insensitively():
    """small-gpu's Multi30k is lowercased when prepared: its scorings say so (nmt evaluate --lowercase, case:lc);
    the demo's synthetic pair keeps its case."""
    for preset, lowercased in (("small-gpu", True), ("demo", False)):
        config = cfg.load_params(ROOT / "params.yaml", preset)
        evaluations = build_jobs(config, ROOT).of("evaluate")
        assert evaluations and all(("--lowercase" in job.commands[0]) == lowercased for job in evaluations), preset


@pytest.mark.parametrize("preset", ["tiny", "demo"])
def test_a_one_seed_preset_has_one_run_of_everything(preset):
    config = cfg.load_params(ROOT / "params.yaml", preset)
    assert plan.preset_seeds(config) == [1] and plan.collect_runs(config, ROOT) == {}
    jobs = build_jobs(config, ROOT)
    assert not [job.name for job in jobs if "_seed" in job.name]
    assert all("--seed" not in job.commands[0] for job in jobs.of("align_statistical"))  # eflomal's default: 1
    assert {e["seed"] for e in plan.collect_alignments(config, ROOT) if e["kind"] == "aligner"} == {1}
