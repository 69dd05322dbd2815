"""Every setting declared once (nmt.settings.sections: type, default, help), the schema derived from the
declarations, a system's configuration as typed, frozen settings, and the one upgrade of older files' configs."""

import dataclasses
import json
import os
import shutil
import subprocess
import sys
import typing
from pathlib import Path

import pytest
import torch
import yaml

from nmt import config as cfg
from nmt.base import declare
from nmt.base.errors import ConfigError
from nmt.config import plan
from nmt.data.vocab import Vocab
from nmt.models.io import load_model, save_model
from nmt.models.registry import build_model
from nmt.settings import (
    ADDED,
    ADDED_WITHIN,
    VERSION,
    ModelSettings,
    Params,
    SystemSettings,
    TrainSettings,
    VerdictSettings,
    comparable_settings,
    upgrade,
    upgrade_value,
)
from nmt.settings.schedule import patience_of

ROOT = Path(__file__).resolve().parents[2]
PRESETS = sorted(p.stem for p in (ROOT / "workflow/presets").glob("*.yaml"))


def test_the_typed_sections_have_exactly_the_schema_s_keys():
    schema = cfg.schema()["properties"]
    for section, settings in (("model", ModelSettings), ("train", TrainSettings)):
        assert [f.name for f in dataclasses.fields(settings)] == list(schema[section]["properties"]), section


@pytest.mark.parametrize("preset", PRESETS)
def test_every_system_of_every_preset_reads_into_settings_and_back(preset):
    config = cfg.load_params(ROOT / "params.yaml", preset)
    for task, systems in plan.collect_systems(config, ROOT).items():
        for system, table in systems.items():
            resolved = cfg.system_config(config, cfg.load_table(ROOT / table), system, table)
            settings = SystemSettings.from_config(resolved)
            assert settings.model.as_dict() == resolved["model"] and settings.train.as_dict() == resolved["train"]
            assert settings.schedule.epochs >= 1


def test_settings_are_frozen_through_and_through():
    resolved = cfg.load_params(ROOT / "params.yaml", "paper")
    settings = SystemSettings.from_config(resolved)
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.train.lr = 2.0
    with pytest.raises(TypeError):
        settings.train.dropout_schedule["epochs"] = 3
    changed = settings.train.replace(lr=0.5)
    assert changed.lr == 0.5 and settings.train.lr == resolved["train"]["lr"]


def test_a_section_without_a_key_or_with_an_unknown_one_is_one_error_naming_it():
    train = cfg.load_params(ROOT / "params.yaml", "paper")["train"]
    with pytest.raises(ConfigError, match=r"^train: no clip_norm \("):
        TrainSettings.from_dict({k: v for k, v in train.items() if k != "clip_norm"})
    with pytest.raises(ConfigError, match=r"^train: unknown lr_decay \("):
        TrainSettings.from_dict({**train, "lr_decay": 0.5})


def test_an_older_section_is_upgraded_to_what_its_training_did_and_compares_equal():
    """A version-1 file's sections lack the keys added since: upgrade gives each the value that means what that
    training did; a retired key at its neutral value is dropped, at any other value refused."""
    current = cfg.load_params(ROOT / "params.yaml", "paper")
    older = {
        section: {k: v for k, v in current[section].items() if k not in ADDED[section]}
        for section in ("model", "train")
    }
    older["train"]["until_flat"] = None
    for section in ("model", "train"):
        upgraded = upgrade(section, older[section])
        assert set(upgraded) == set(current[section]) and all(upgraded[k] == v for k, v in ADDED[section].items())
    assert comparable_settings(older) == comparable_settings(current)
    assert SystemSettings.from_config(older) == SystemSettings.from_config(
        {"model": upgrade("model", older["model"]), "train": upgrade("train", older["train"])}
    )
    with pytest.raises(ConfigError, match="train.until_flat"):
        upgrade("train", {**older["train"], "until_flat": 2})


def test_a_plateau_recorded_before_stop_means_stop_by_stalls_and_compares_equal_to_it():
    """train.plateau.stop was added inside the setting (ADDED_WITHIN): a model.json or checkpoint written before has
    a plateau without it, which trained by stalls (patience of them in a row at the final rate; one written before
    patience existed, at the first: nmt.settings.schedule.patience_of). Read through upgrade it stops by stalls;
    compared, it equals that plateau written out (such a checkpoint resumes, a finished training is not redone) and
    differs from the presets' rule since (stop: gate)."""
    assert ADDED_WITHIN == {("train", "plateau"): {"stop": "stalls"}}
    current = cfg.load_params(ROOT / "params.yaml", "small")
    assert current["train"]["plateau"]["stop"] == "gate" and "patience" not in current["train"]["plateau"]
    published = {"within": 0.01, "halvings": 2, "patience": 2, "max_epochs": 20}  # small-gpu's seed 1
    older = {"model": current["model"], "train": {**current["train"], "plateau": published}}
    assert upgrade("train", older["train"])["plateau"] == {**published, "stop": "stalls"}
    assert upgrade_value("train", "plateau", None) is None and upgrade_value("train", "lr", 0.5) == 0.5
    settings = SystemSettings.from_config(older)
    assert settings.schedule.plateau["stop"] == "stalls" and settings.schedule.gate is None
    assert "stopped once 2 epochs in a row" in settings.schedule.describe()
    assert patience_of({k: v for k, v in published.items() if k != "patience"}) == 1
    written = {**current, "train": {**current["train"], "plateau": {**published, "stop": "stalls"}}}
    assert comparable_settings(older) == comparable_settings(written)
    assert comparable_settings(older) != comparable_settings(current)
    assert SystemSettings.from_config(current).schedule.gate == {"within": 0.02, "window": 11}


def test_a_model_file_records_its_settings_version_and_one_from_a_newer_nmt_is_refused(tmp_path):
    config = cfg.load_params(ROOT / "params.yaml", "tiny")
    src, tgt = Vocab([f"s{i}" for i in range(12)]), Vocab([f"t{i}" for i in range(13)])
    save_model(
        tmp_path / "model.pt",
        build_model(ModelSettings.from_dict(config["model"]), len(src), len(tgt)),
        src,
        tgt,
        config,
    )
    blob = torch.load(tmp_path / "model.pt", weights_only=True)
    assert blob["config_version"] == VERSION
    load_model(tmp_path / "model.pt", "cpu")
    torch.save({**blob, "config_version": VERSION + 1}, tmp_path / "newer.pt")
    with pytest.raises(ConfigError, match=r"newer.pt: written by a newer nmt .*update nmt"):
        load_model(tmp_path / "newer.pt", "cpu")


# Keys whose values are the pipeline's content (which tables, recipes and corpora), not settings with a default.
CONTENT = {"preset", "tables", "figures", "claims", "recipes", "data.tasks"}


def _check_given_at_defaults(cls, values: dict, where: str = "", declared=None) -> list[str]:
    """What `values` leaves out or gives otherwise than declared (`declared`: the section's default object, where its
    default is the enclosing field's)."""
    problems = []
    for f in declare.fields(cls):
        key = f"{where}{f.name}"
        if key in CONTENT:
            continue
        if f.name not in values:
            if not f.metadata["optional"]:
                problems.append(f"{key}: missing")
            continue
        default = declare.thaw(getattr(declared, f.name)) if declared is not None else declare.default_of(f)
        nested = typing.get_type_hints(cls)[f.name]
        if isinstance(nested, type) and issubclass(nested, declare.Section) and isinstance(values[f.name], dict):
            problems += _check_given_at_defaults(
                nested, values[f.name], f"{key}.", getattr(declared, f.name) if declared is not None else f.default
            )
        elif values[f.name] != default:
            problems.append(f"{key}: {values[f.name]!r} in params.yaml, {default!r} declared")
    return problems


def test_params_yaml_gives_every_declared_setting_its_declared_default():
    """The classes of nmt.settings.sections declare each setting's default; params.yaml (what DVC's key-level params
    and users read) gives every one of them, at that value, and nothing undeclared (the schema is derived from the
    same classes)."""
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    assert _check_given_at_defaults(Params, params) == []
    cfg.validate(params, "params.yaml")


def test_the_derived_schema_names_the_key_and_the_problem():
    config = cfg.load_params(ROOT / "params.yaml", "tiny")
    for path, value, expected in (
        (("train", "lr"), 0, r"bad config key train.lr: 0 is less than or equal to"),
        (("model", "attention"), "soft", r"bad config key model.attention: 'soft' is not one"),
        (("verdicts", "resamples"), 1020, r"verdicts.resamples: 1020 is not a multiple of 40"),
        (("train", "lr_decay"), 0.5, r"bad config key train: Additional properties"),
    ):
        broken = {**config, path[0]: {**config[path[0]], path[1]: value}}
        with pytest.raises(ConfigError, match=expected):
            cfg.validate(broken, "x")


def test_a_section_left_out_reads_at_its_declared_defaults():
    assert VerdictSettings.of({}) == VerdictSettings()
    assert VerdictSettings.of({"verdicts": {"resamples": 80}}).resamples == 80
    assert VerdictSettings().resamples == yaml.safe_load((ROOT / "params.yaml").read_text())["verdicts"]["resamples"]


NEW_KEY = """    label_smoothing: float = setting(0.0, "epsilon of label smoothing (0 = off)", minimum=0, before=0.0,
                                     optional=True)
"""


@pytest.mark.skipif(not shutil.which("git"), reason="needs git")
def test_a_new_train_key_declared_in_its_class_reaches_config_the_job_record_and_dvc(tmp_path):
    """A train key added by editing only its class (and giving it in params.yaml, where every setting's default is
    written) is validated, shown by `nmt config`, and is one of the training jobs' DVC key-level params."""
    scratch = tmp_path / "project"
    shutil.copytree(ROOT / "nmt", scratch / "nmt", ignore=shutil.ignore_patterns("__pycache__", "*.so", "build"))
    shutil.copytree(ROOT / "workflow", scratch / "workflow")
    shutil.copy(ROOT / "params.yaml", scratch / "params.yaml")
    sections = scratch / "nmt/settings/sections.py"
    text = sections.read_text()
    anchor = '    clip_norm: float = setting(5.0, "clip the gradient\'s norm to this", minimum=0)\n'
    assert anchor in text
    sections.write_text(text.replace(anchor, anchor + NEW_KEY))
    params = (scratch / "params.yaml").read_text()
    anchor = next(line for line in params.splitlines(keepends=True) if line.startswith("  clip_norm: 5.0"))
    (scratch / "params.yaml").write_text(params.replace(anchor, anchor + "  label_smoothing: 0.0\n"))
    env = {**os.environ, "PYTHONPATH": str(scratch)}
    shown = subprocess.run(
        [
            sys.executable,
            "-m",
            "nmt.cli",
            "config",
            "--params",
            "params.yaml",
            "--preset",
            "tiny",
            "--table",
            "luong2015_table1",
            "--system",
            "base",
        ],
        cwd=scratch,
        env=env,
        capture_output=True,
        text=True,
    )
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["train"]["label_smoothing"] == 0.0
    jobs = subprocess.run(
        [
            sys.executable,
            "-c",
            "import json; from nmt import config as cfg; from nmt.pipeline import "
            "jobs; c = cfg.load_params('params.yaml', 'tiny'); print(json.dumps([j.params for j in "
            "jobs.build_jobs(c, '.') if j.rule == 'train']))",
        ],
        cwd=scratch,
        env=env,
        capture_output=True,
        text=True,
    )
    assert jobs.returncode == 0, jobs.stderr
    trainings = json.loads(jobs.stdout)
    assert trainings and all("train.label_smoothing" in params for params in trainings)
    (scratch / "params.yaml").write_text(params.replace(anchor, anchor + "  label_smoothing: -1\n"))
    refused = subprocess.run(
        [sys.executable, "-m", "nmt.cli", "config", "--params", "params.yaml", "--preset", "tiny"],
        cwd=scratch,
        env=env,
        capture_output=True,
        text=True,
    )
    assert refused.returncode == 2 and "train.label_smoothing" in refused.stderr
