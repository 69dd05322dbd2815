"""The SLURM profile (profiles/slurm) against a real one-node SLURM cluster with two fake GPUs
(tests/cluster/local_slurm.sh): the tiny preset runs through it to the report, one training job is requeued in
the middle of its training (SIGTERM, as when SLURM pre-empts a job) and resumes from its checkpoint, and the
tables come out byte for byte as on one machine. Also: what the profile asks a cluster for at paper scale."""

import json
import re

import pytest

import required
from pipelines import ROOT, assert_same_tables, run, systems

pytestmark = pytest.mark.e2e

# Rules that run a model ask for a GPU; the rest (data, eflomal, scoring, report, benchmarks) ask for none.
GPU_RULES = {"train", "translate", "attention_map", "align_model", "align_training_model"}
RULE = re.compile(r"^rule_(\w+?)_wildcards_")


def jobs_by_rule(cluster) -> dict[str, list[dict]]:
    out = {}
    for job in cluster.jobs():
        match = RULE.match(job.get("Comment", ""))
        if match:
            out.setdefault(match.group(1), []).append(job)
    return out


@pytest.mark.pipeline("slurm")
@pytest.mark.pipeline("snakemake")
def test_the_cluster_run_gives_the_tables_of_the_run_on_one_machine(tiny_runs):
    assert_same_tables(tiny_runs["slurm"].workdir, tiny_runs["snakemake"].workdir)


@pytest.mark.pipeline("slurm")
def test_every_job_that_runs_a_model_asked_for_one_gpu_and_no_other_job_for_any(tiny_runs):
    tiny_runs["slurm"]
    by_rule = jobs_by_rule(tiny_runs.cluster)
    assert len(by_rule["train"]) == sum(map(len, systems(tiny_runs["slurm"].workdir).values()))  # requeued: same id
    for rule, jobs in by_rule.items():
        for job in jobs:
            assert job["JobState"] == "COMPLETED", job
            assert (job.get("TresPerJob") == "gres:gpu:1") == (rule in GPU_RULES), (rule, job.get("TresPerJob"))
    # the tiny preset's cluster section: 10 minutes, 2 GB per job
    assert {job["TimeLimit"] for jobs in by_rule.values() for job in jobs} == {"00:10:00"}
    assert {job["MinMemoryNode"] for jobs in by_rule.values() for job in jobs} == {"2000M"}


@pytest.mark.pipeline("slurm")
@pytest.mark.pipeline("snakemake")
def test_a_training_job_requeued_mid_training_resumes_from_its_checkpoint(tiny_runs):
    cluster_dir, local_dir = tiny_runs["slurm"].workdir, tiny_runs["snakemake"].workdir
    requeued = tiny_runs.requeued
    assert requeued, "no training job was seen running past its first epoch, so none was requeued"
    job = next(j for j in tiny_runs.cluster.jobs() if j["JobId"] == requeued["job"])
    assert job["Restarts"] == "1" and job["JobState"] == "COMPLETED"
    model = f"results/tiny/{requeued['task']}/models/{requeued['system']}"
    # the second run of the job continued from the checkpoint the first wrote when SLURM stopped it
    log = (cluster_dir / f"logs/tiny/{requeued['task']}/train/{requeued['system']}.log").read_text()
    assert "resuming from" in log, log

    # and ended where the uninterrupted run on one machine ended
    def curve(directory):
        return [
            {k: r[k] for k in ("epoch", "updates", "train_loss", "dev_loss")}
            for r in map(json.loads, (directory / model / "metrics.jsonl").read_text().splitlines())
        ]

    assert curve(cluster_dir) == curve(local_dir)


def test_a_dry_run_at_paper_scale_lists_every_job_with_what_it_asks_the_cluster_for():
    required.module("snakemake_executor_plugin_slurm")
    out = run(
        ["snakemake", "-n", "--workflow-profile", "profiles/slurm", "--config", "preset=paper"], ROOT, timeout=300
    ).stdout
    blocks = [b for b in out.split("\n\n") if re.search(r"^(local)?rule \w+:", b, re.M)]
    rules = {}
    for block in blocks:
        rule = re.search(r"^(?:local)?rule (\w+):", block, re.M).group(1)
        resources = dict(re.findall(r"(\w+)=([^,\s]+)", re.search(r"resources: (.*)", block).group(1)))
        rules.setdefault(rule, []).append(resources)
    assert len(rules["train"]) >= 20
    for rule, jobs in rules.items():
        if rule == "all":
            continue
        for resources in jobs:
            assert resources.get("gpu") == ("1" if rule in GPU_RULES else None), (rule, resources)
            assert int(resources["runtime"]) > 0 and int(resources["mem_mb"]) > 0
    # paper-scale training asks for days (48 h, resumed from its checkpoint when it needs more), decoding hours
    assert {r["runtime"] for r in rules["train"]} == {"2880"}
    assert {r["runtime"] for r in rules["translate"]} == {"480"}
