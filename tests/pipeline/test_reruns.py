"""Reruns by what changed (issue 60, item 1), on the finished tiny runs: after adding a system and its row to a table,
Snakemake's dry run plans that system's jobs and the report, and DVC lists that system's new stages and the report;
after changing one system's setting, each retrains that system alone (its decodings follow its model). The table
file is left as it was (its time too: the report reads it)."""

from __future__ import annotations

import json
import os
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml

from nmt.pipeline.dvc_yaml import read_stages

from pipelines import jobs_of, run

pytestmark = pytest.mark.e2e

TABLE = "workflow/tables/raffel2017_table4.yaml"  # in both runs (the DVC run makes a part of the tiny DAG)


def add_a_system(table: dict) -> None:
    table["systems"]["softmax_general"] = {"model": {"attention": "global", "score": "general"}}
    table["rows"].append({"label": "Softmax attention (general)", "system": "softmax_general", "paper": {}})


def change_a_setting(table: dict) -> None:
    table["systems"]["monotonic_eq17"]["model"]["attention_noise"] = 0.5


@contextmanager
def edited(workdir: Path, change, regenerate: bool = False):
    """The run's table file changed (and its stage files regenerated, for DVC) for the block's length."""
    path = workdir / TABLE
    text, stat = path.read_text(), path.stat()
    table = yaml.safe_load(text)
    change(table)
    try:
        path.write_text(yaml.safe_dump(table, sort_keys=False))
        if regenerate:
            run([sys.executable, "-m", "nmt.cli", "dvc-yaml"], workdir)
        yield
    finally:
        path.write_text(text)
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        if regenerate:
            run([sys.executable, "-m", "nmt.cli", "dvc-yaml"], workdir)


def planned(workdir: Path) -> set[tuple[str, str | None]]:
    """(rule, system wildcard) of every job Snakemake's dry run would run."""
    return jobs_of(run(["snakemake", "-n", "--cores", "1"], workdir, timeout=300).stdout)


@pytest.mark.pipeline("snakemake")
def test_snakemake_runs_a_new_system_s_jobs_and_the_report(tiny_runs):
    workdir = tiny_runs["snakemake"].workdir
    with edited(workdir, add_a_system):
        jobs = planned(workdir)
    assert jobs == {
        ("train", "softmax_general"),
        ("translate", "softmax_general"),
        ("evaluate", "softmax_general"),
        ("report", None),
        ("all", None),
    }, sorted(jobs, key=str)


@pytest.mark.pipeline("snakemake")
def test_snakemake_retrains_the_system_whose_setting_changed_alone(tiny_runs):
    workdir = tiny_runs["snakemake"].workdir
    with edited(workdir, change_a_setting):
        jobs = planned(workdir)
    assert {system for rule, system in jobs if rule == "train"} == {"monotonic_eq17"}
    # then its decodings (soft and hard), their scores, and the report
    assert {system for _, system in jobs} <= {"monotonic_eq17", "monotonic_eq17_soft", "monotonic_eq17_hard", None}
    assert ("report", None) in jobs


def changed_stages(workdir: Path) -> set[str]:
    status = run(["dvc", "status", "--json"], workdir).stdout
    return {key.rsplit(":", 1)[-1] for key in json.loads(status)} - {"plan"}  # the plan check runs every time


@pytest.mark.pipeline("dvc")
def test_dvc_runs_a_new_system_s_stages_and_the_report(tiny_runs):
    workdir = tiny_runs["dvc"].workdir
    before = set(read_stages(workdir))
    with edited(workdir, add_a_system, regenerate=True):
        new = set(read_stages(workdir)) - before
        changed = changed_stages(workdir)
    assert new == {
        "train.en-vi.softmax_general",
        "translate.en-vi.softmax_general.test",
        "evaluate.en-vi.softmax_general.test",
    }
    assert changed == new | {"report"}, sorted(changed)
    assert changed_stages(workdir) == set()  # as it was


@pytest.mark.pipeline("dvc")
def test_dvc_retrains_the_system_whose_setting_changed_alone(tiny_runs):
    workdir = tiny_runs["dvc"].workdir
    with edited(workdir, change_a_setting, regenerate=True):
        changed = changed_stages(workdir)
    assert changed == {"train.en-vi.monotonic_eq17", "report"}, sorted(changed)
