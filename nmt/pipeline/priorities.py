"""The order a scheduler starts a preset's jobs in: whole seeds in order, the longest trainings of a seed first.
Details: docs/internals/pipeline.md."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Iterable

from .. import config as cfg
from ..base import layout
from ..base.errors import UserError
from ..config.plan import preset_seeds, seed_of
from ..records.metrics import read_epochs

SEED_SPAN = 1000  # more than the trainings of one seed: the cost ranks of a seed never reach the next seed's
SHARED_STEPS = ("corpus", "prepare", "unk_dictionary", "align_training_data")
LAST_STEPS = ("report", "bench_attention", "bench_monotonic")


def reference_costs(preset: str, root: str | Path) -> dict[tuple[str, str], float]:
    """{(task, system): seconds its training's epochs took} in the preset's reference run, where there is one."""
    costs = {}
    pattern = layout.path(layout.REFERENCE_METRICS, preset=preset, pair="*", system="*")
    for path in sorted(Path(root).glob(pattern)):
        try:
            records = read_epochs(path)
        except UserError:
            continue  # an unreadable record orders nothing; the report says what is wrong with it
        seconds = sum(r["elapsed_s"] for r in records if isinstance(r.get("elapsed_s"), (int, float)))
        if seconds > 0:
            costs[(path.parent.parent.parent.name, path.parent.name)] = seconds
    return costs


def _base_system(run: str) -> str:
    match = cfg.SEED_RUN.match(run)
    return match["system"] if match else run


def prioritised(jobs: Iterable, config: dict, root: str | Path) -> list:
    """The jobs (nmt.pipeline.jobs.Job) with their priority set (module docstring)."""
    jobs = list(jobs)
    seeds = preset_seeds(config)
    measured = reference_costs(config["preset"], root)
    default = sum(measured.values()) / len(measured) if measured else 0.0

    def cost(job) -> float:
        fields = dict(job.fields)
        return measured.get((fields["pair"], _base_system(fields["system"])), default)

    trainings = [job for job in jobs if job.step.name == "train"]
    rank = {}
    for seed in seeds:
        of_seed = [job for job in trainings if seed_of(dict(job.fields)["system"], seeds) == seed]
        # the cheapest rank 1, the dearest len(of_seed); ties keep the plan's order
        for position, job in enumerate(sorted(of_seed, key=cost), start=1):
            rank[job.name] = position

    def priority(job) -> int:
        if job.step.name in SHARED_STEPS:
            return SEED_SPAN * (len(seeds) + 1)
        if job.step.name in LAST_STEPS:
            return 0
        system = dict(job.fields).get("system")
        later = len(seeds) - 1 - seeds.index(seed_of(system, seeds)) if system else 0
        return SEED_SPAN * (later + 1) + rank.get(job.name, 0)

    return [dataclasses.replace(job, priority=priority(job)) for job in jobs]
