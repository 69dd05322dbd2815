"""nmt.pipeline.priorities: the order Snakemake starts a preset's jobs in. A call stopped by its time limit leaves
whole seeds (seed N's jobs before seed N+1's), and within a seed the trainings its reference run measured longest
start first. Checked on the dry-run plan Snakemake prints (each job's `priority:`), not by timing."""

import re
import shutil
import subprocess

import pytest

from nmt import config as cfg
from nmt.config import plan
from nmt.pipeline import priorities
from nmt.pipeline.jobs import build_jobs

from pipelines import ROOT


def preset_config(preset: str) -> dict:
    return cfg.load_params(ROOT / "params.yaml", preset)


JOB = re.compile(r"^(?:local)?rule (?P<rule>\w+):\n(?P<body>(?:    .*\n)+)", re.M)


def dry_run_priorities(preset: str) -> list[tuple[str, dict, int]]:
    """(rule, wildcards, priority) of every job `snakemake -n` plans for all the preset's seeds' files."""
    targets = [
        f
        for seed in plan.preset_seeds(preset_config(preset))
        for f in plan.seed_part(preset_config(preset), ROOT, seed)
    ]
    done = subprocess.run(
        [
            "snakemake",
            "-n",
            "--nolock",
            "--config",
            f"preset={preset}",
            "--cores",
            "16",
            "--resources",
            "gpu=16",
            "--",
            *targets,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    jobs = []
    for match in JOB.finditer(done.stdout):
        body = match["body"]
        wildcards = (
            dict(re.findall(r"(\w+)=([^,\s]+)", re.search(r"wildcards: (.*)", body)[1])) if "wildcards:" in body else {}
        )
        priority = re.search(r"priority: (-?\d+)", body)
        jobs.append((match["rule"], wildcards, int(priority[1]) if priority else 0))
    return jobs


def seed_of(system: str) -> int:
    match = cfg.SEED_RUN.match(system)
    return int(match["seed"]) if match else 1


@pytest.mark.skipif(shutil.which("snakemake") is None, reason="needs Snakemake (the workflow extra)")
def test_the_small_gpu_plan_starts_whole_seeds_in_order_and_local_p_first_within_a_seed():
    jobs = dry_run_priorities("small-gpu")
    trainings = [(w["pair"], w["system"], p) for rule, w, p in jobs if rule == "train"]
    assert len(trainings) == 3 * 18
    by_seed = {seed: [t for t in trainings if seed_of(t[1]) == seed] for seed in (1, 2, 3)}
    for seed, runs in by_seed.items():
        assert len(runs) == 18
        local_p = [p for _, system, p in runs if system.startswith("local_p_")]
        others = [p for _, system, p in runs if not system.startswith("local_p_")]
        assert len(local_p) == 3 and min(local_p) > max(others), (seed, runs)
    # every job of seed N (trainings, translations, scores, ensembles) before every job of seed N+1
    seeded = [(seed_of(w["system"]), p) for rule, w, p in jobs if "system" in w and rule != "report"]
    for seed in (1, 2):
        assert min(p for s, p in seeded if s == seed) > max(p for s, p in seeded if s == seed + 1)
    # what every seed needs (the corpus, its preparation, the unk dictionary) before any of them: from the job
    # records, as the dry run plans none of them where the data is made already
    records = build_jobs(preset_config("small-gpu"), ROOT)
    shared = [job.priority for job in records if job.step.name in ("corpus", "prepare", "unk_dictionary")]
    assert shared and min(shared) > max(p for _, p in seeded)


def test_without_a_reference_run_every_training_of_a_seed_costs_the_same(tmp_path):
    """The demo has no published reference: its trainings keep the plan's order (equal cost), seeds still in order."""
    config = preset_config("demo")
    assert priorities.reference_costs("demo", ROOT) == {}
    jobs = build_jobs(config, ROOT)
    trainings = [job for job in jobs if job.step.name == "train"]
    assert trainings and all(job.priority > 0 for job in trainings)
    report = [job for job in jobs if job.step.name == "report"]
    assert report[0].priority == 0


def test_the_reference_costs_are_the_seconds_its_epochs_took():
    costs = priorities.reference_costs("small-gpu", ROOT)
    assert len(costs) == 18
    assert min(costs[("en-de", f"local_p_{s}_feed")] for s in ("dot", "general", "concat")) > max(
        cost for (pair, system), cost in costs.items() if not system.startswith("local_p_")
    )
