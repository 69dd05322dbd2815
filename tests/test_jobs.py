"""The job records both engines read (nmt.pipeline.jobs) and their DVC serialisation (nmt.pipeline.dvc_yaml)."""
import re
from pathlib import Path

import pytest

from nmt import config as cfg
from nmt import layout
from nmt.pipeline import plan
from nmt.pipeline.dvc_yaml import stage_of
from nmt.pipeline.jobs import STEPS, Jobs, build_jobs

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def tiny():
    config = cfg.load_params(ROOT / "params.yaml", "tiny")
    return config, build_jobs(config, ROOT)


def test_each_job_is_found_by_its_step_and_wildcards_and_writes_its_step_s_patterns_filled_in(tiny):
    _, jobs = tiny
    for job in jobs:
        assert jobs.find(job.step.name, {"preset": "tiny", **dict(job.fields)}) is job
        if job.step.outputs:
            assert job.outputs == tuple(layout.path(p, preset="tiny", **dict(job.fields))
                                        for p in job.step.outputs.values())
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
    assert bench.shell(8, " --device cpu").endswith("--threads 1 --out results/tiny/benchmarks/attention.json"
                                                     " --device cpu")  # times one thread whatever the rule holds
    label = jobs.of("alignment_map")[0].shell(1, "")
    assert "--label 'eflomal" in label  # a word with spaces is quoted for the shell


def test_a_dvc_stage_is_its_job_with_one_thread_and_the_cpu_named_where_its_kind_holds_no_gpu(tiny):
    _, jobs = tiny
    stamp = "results/tiny/dvc-plan.txt"
    code = {("train",): ["nmt/train.py"]}
    train = jobs.of("train")[0]
    fields = dict(train.fields)
    stage = stage_of(train, stamp, lambda words: code.get(words, []))
    assert stage["cmd"] == train.shell(1, "")  # a training takes nmt's default device
    prepared = layout.path(layout.PREPARED, preset="tiny", pair=fields["pair"])
    # the tensors it reads are named by the directory its --data reads; then the code its command runs
    assert stage["deps"][0] == stamp and prepared in stage["deps"] and stage["deps"][-1] == "nmt/train.py"
    assert not [d for d in stage["deps"] if d.startswith(prepared + "/")]
    checkpoint = layout.path(layout.CHECKPOINT, preset="tiny", **fields)
    assert {checkpoint: {"persist": True}} in stage["outs"] and stage["plots"][0][
        layout.path(layout.METRICS_CSV, preset="tiny", **fields)] == {"x": "updates", "y": "dev_ppl"}
    evaluate = jobs.of("evaluate")[0]
    stage = stage_of(evaluate, stamp, lambda words: [])
    assert stage["cmd"].endswith(" --threads 1 --device cpu") and stage["metrics"] == list(evaluate.metrics)
    assert evaluate.metrics[0] not in stage["outs"]
    corpus = jobs.of("corpus")[0]
    assert stage_of(corpus, stamp, lambda words: [])["outs"] == [corpus.directory]


def test_the_report_reads_every_other_job_s_files_and_the_whole_configuration(tiny):
    config, jobs = tiny
    report = jobs.find("report", {})
    assert {out for job in jobs if job is not report for out in job.outputs} <= set(report.inputs)
    assert {"params.yaml", "workflow/presets/tiny.yaml", "workflow/presets/paper.yaml", *config["tables"]} <= set(
        report.inputs)
    assert set(STEPS) == {job.step.name for job in jobs}  # the tiny preset runs every step
