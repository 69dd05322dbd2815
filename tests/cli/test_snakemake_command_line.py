"""Snakemake's command line as docs/presets.md shows it: targets before `--config` or after `--`; a key other than
the preset, or a misspelt preset, ends in one line naming it; a dotted key is refused by Snakemake itself."""

import subprocess
from pathlib import Path

import pytest

import required

ROOT = Path(__file__).resolve().parents[2]
TARGET = "data/tiny/en-de/prepared/prep.json"


def dry_run(*words, cwd=ROOT):
    required.module("snakemake")
    return subprocess.run(
        ["snakemake", "-n", "--cores", "1", *words], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def last_error_line(result):
    lines = result.stderr.strip().splitlines()
    assert lines, result.stdout
    return lines[-1]


def assert_one_line(result, expected):
    assert result.returncode != 0
    assert "Traceback" not in result.stdout + result.stderr and 'File "' not in result.stdout + result.stderr
    assert last_error_line(result).startswith("Error: ")
    assert expected in last_error_line(result), result.stderr


@pytest.mark.parametrize(
    "words",
    [
        [TARGET, "--config", "preset=tiny"],  # the target first
        ["--config", "preset=tiny", "--", TARGET],  # or after `--`
    ],
)
def test_a_target_with_config_plans_only_what_it_needs(words):
    result = dry_run(*words)
    assert result.returncode == 0, result.stdout + result.stderr
    planned = {line.split()[1].rstrip(":") for line in result.stdout.splitlines() if line.startswith("rule ")}
    assert planned == {"corpus_en_de", "prepare_en_de"}


@pytest.mark.parametrize(
    "setting, named",
    [
        ("lr=0.1", "lr"),  # a key of a section, without its section
        ("train={lr: 0.1}", "train"),  # a section as a dict, as Snakemake's --help suggests
    ],
)
def test_config_keys_other_than_the_preset_end_in_one_line(setting, named):
    result = dry_run("--config", "preset=tiny", setting)
    assert_one_line(result, f"may only set `preset` (got {named}); other settings go in params.yaml or a preset file")


def test_a_dotted_key_is_refused_by_snakemake_before_the_workflow_runs():
    """What docs/presets.md says about `--config train.lr=0.1`: Snakemake's parser refuses it, so the workflow never
    sees it (were Snakemake to let it through, the line above would name it and the docs should say so)."""
    result = dry_run("--config", "train.lr=0.1")
    assert result.returncode != 0
    assert "Config entry must start with a valid identifier" in result.stdout + result.stderr


def test_a_misspelt_preset_names_where_it_was_given_and_the_nearest(tmp_path):
    result = dry_run("--config", "preset=tinny")
    assert_one_line(result, "--config preset=tinny: unknown preset 'tinny' (did you mean 'tiny'?); known presets: ")
    configfile = tmp_path / "mine.yaml"
    configfile.write_text("preset: smal\n")
    result = dry_run("--configfile", str(configfile))
    assert_one_line(result, f"--configfile {configfile}: unknown preset 'smal' (did you mean 'small'?)")
