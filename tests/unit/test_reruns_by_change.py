"""A training depends on its own system's settings, not on its whole table file (issue 60, item 1): adding a row or a
system to a table leaves every other job's record as it was (its inputs, settings, params and command: what
Snakemake and DVC rerun it by), and changing one system's setting changes that system's trainings alone. The runs
themselves: tests/pipeline/test_reruns.py."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from nmt import config as cfg
from nmt.pipeline.dvc_yaml import plan_stages
from nmt.pipeline.jobs import build_jobs

ROOT = Path(__file__).resolve().parents[2]
TABLE = "workflow/tables/raffel2017_table4.yaml"


def records(root: Path) -> dict:
    """Each job's record by name, as both engines read it: (inputs, settings, params, command, DVC stage)."""
    config = cfg.load_params(root / "params.yaml", "tiny")
    jobs = build_jobs(config, root)
    stages = plan_stages(config, jobs, lambda words: [])
    return {
        job.name: (job.inputs, job.keyed_inputs, job.settings, job.params, job.commands, stages[job.name])
        for job in jobs
    }


@pytest.fixture
def checkout(tmp_path) -> Path:
    shutil.copy2(ROOT / "params.yaml", tmp_path / "params.yaml")
    shutil.copytree(ROOT / "workflow", tmp_path / "workflow", ignore=shutil.ignore_patterns("dvc"))
    return tmp_path


def edit_table(root: Path, change) -> None:
    path = root / TABLE
    table = yaml.safe_load(path.read_text())
    change(table)
    path.write_text(yaml.safe_dump(table, sort_keys=False))  # its comments and layout go too: they rerun nothing


def test_a_training_reads_its_own_system_s_keys_of_its_table_file_not_the_file():
    config = cfg.load_params(ROOT / "params.yaml", "tiny")
    train = build_jobs(config, ROOT).find("train", {"pair": "en-vi", "system": "monotonic_eq16"})
    assert train.keyed_inputs == (TABLE,) and TABLE in train.inputs  # Snakemake: an `ancient` input
    stage = plan_stages(config, [train], lambda words: [])["train.en-vi.monotonic_eq16"]
    assert TABLE not in stage["deps"]
    assert {
        TABLE: [
            "systems.monotonic_eq16.model.attention",
            "systems.monotonic_eq16.model.attention_noise",
            "systems.monotonic_eq16.model.energy",
        ]
    } in stage["params"]


def test_adding_a_system_and_its_row_changes_no_other_job_but_the_report(checkout):
    before = records(checkout)

    def add(table):
        table["systems"]["softmax_general"] = {"model": {"attention": "global", "score": "general"}}
        table["rows"].append({"label": "Softmax attention (general)", "system": "softmax_general", "paper": {}})

    edit_table(checkout, add)
    after = records(checkout)
    assert set(after) - set(before) == {
        "train.en-vi.softmax_general",
        "translate.en-vi.softmax_general.test",
        "evaluate.en-vi.softmax_general.test",
    }
    changed = {name for name in before if after[name] != before[name]}
    assert changed == {"report"}  # it reads the table, and the new scores


def test_changing_one_system_s_setting_changes_its_training_alone(checkout):
    before = records(checkout)
    edit_table(checkout, lambda table: table["systems"]["monotonic_eq17"]["model"].update(attention_noise=0.5))
    after = records(checkout)
    assert set(after) == set(before)
    changed = {name for name in before if after[name] != before[name]}
    # (its decodings and everything after them rerun when its model does, and the report when its table file does:
    # their inputs change, not their records)
    assert changed == {"train.en-vi.monotonic_eq17"}
    settings = {name for name in before if after[name][2] != before[name][2]}
    assert settings == {"train.en-vi.monotonic_eq17"}
