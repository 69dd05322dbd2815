"""One system's configuration as typed, frozen objects: its `model` and `train` sections and the schedule they give,
read once from the resolved config (params.yaml, the preset, the table's recipe and the system's overrides: nmt.config)
and never changed after.

params.yaml is the one place of defaults: a resolved config has every key, so nothing here has a default of its own.
Model files and checkpoints written before a key existed lack it; :func:`upgrade` brings such a section up to the
current :data:`VERSION` in one step, giving each key added since the value that means what the file's training did
(:data:`ADDED`; a key added inside a mapping-valued setting, :data:`ADDED_WITHIN`) and dropping the keys retired
since (:data:`RETIRED`). The same tables decide which settings are compared (:func:`comparable_settings`): a key at
its "as before" value is left out, so adding a key retrains, re-measures and refuses to resume nothing.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Mapping

from .errors import ConfigError
from .schedule import Schedule, schedule_of

#: The version of the model/train sections that model files and checkpoints record (`config_version`; a file
#: without one was written at version 1, one of a later version than this is refused: nmt.models.io).
VERSION = 2
# Keys added to `model`/`train` after version 1, with the value that means "as before".
ADDED = {
    "model": {"arch": "luong", "attention_dim": 0, "target_foresight": False, "attention_noise": 0.0,
              "energy": "eq17", "energy_bias": -1.0},
    "train": {"init_from": None, "trainable": "all", "max_updates": 0, "guided_alignment": None, "batch_tokens": 0,
              "engine": "fast", "precision": "auto", "cuda_graphs": "auto", "plateau": None, "eval_every": 0,
              "keep": "last", "best_by": "dev_ppl"},
}
# Keys added inside a mapping-valued setting after it existed, with the value that means "as before" (applied where
# the setting is a mapping, never to null): a train.plateau recorded without `patience` ended training at the first
# stall at the final learning rate, which is patience 1 (nmt.schedule). The one place that says so: every reader of
# a recorded section goes through upgrade (a whole section) or upgrade_value (one setting, e.g. model.json's plateau).
ADDED_WITHIN = {("train", "plateau"): {"patience": 1}}
# Keys since removed, with the value that meant what the settings now mean without them (train.until_flat became
# train.plateau).
RETIRED = {"model": {}, "train": {"until_flat": None}}
# Keys never compared: `train.seeds` (which runs the workflow makes; a run's own seed is `train.seed`) and
# `train.cuda_graphs` (how updates are launched, not what they compute: equal to float rounding, like a run on another
# device), so neither retrains, re-measures or refuses a resume.
NOT_COMPARED = {("train", "seeds"), ("train", "cuda_graphs")}


def upgrade(section: str, values: Mapping[str, Any]) -> dict:
    """A `model` or `train` section as any version wrote it, at :data:`VERSION`: the keys added since at their "as
    before" values, the retired ones dropped (a retired key set to anything but its neutral value is a ConfigError:
    no current setting means what it meant)."""
    upgraded = {key: value for key, value in ADDED[section].items() if key not in values}
    for key, value in values.items():
        if key in RETIRED[section]:
            if value != RETIRED[section][key]:
                raise ConfigError(f"{section}.{key}: {value!r} is a retired setting; retrain with the current ones")
            continue
        upgraded[key] = upgrade_value(section, key, value)
    return upgraded


def upgrade_value(section: str, key: str, value):
    """One setting as any version wrote it, at :data:`VERSION`: a mapping given the keys added inside it since
    (:data:`ADDED_WITHIN`) at their "as before" values; any other value as it is."""
    added = ADDED_WITHIN.get((section, key))
    if not added or not isinstance(value, Mapping):
        return value
    return {**value, **{name: default for name, default in added.items() if name not in value}}


def _without_added_within(section: str, key: str, value):
    """A mapping-valued setting without the keys added inside it at their "as before" values (comparable_settings)."""
    added = ADDED_WITHIN.get((section, key))
    if not added or not isinstance(value, Mapping):
        return value
    return {name: item for name, item in value.items() if not (name in added and item == added[name])}


def _at_added_default(section: str, key: str, value) -> bool:
    if key in RETIRED[section]:
        return value == RETIRED[section][key]
    if key not in ADDED[section]:
        return False
    if key == "guided_alignment":  # off whatever its file
        return not value or not value.get("weight")
    return value == ADDED[section][key]


def comparable_settings(config: Mapping) -> dict:
    """The `model` and `train` sections of a config (any version) without the keys added later at their "as before"
    value (inside a setting too: ADDED_WITHIN), nor the NOT_COMPARED ones: two configs that train the same compare
    equal."""
    return {section: {k: _without_added_within(section, k, v) for k, v in (config.get(section) or {}).items()
                      if not _at_added_default(section, k, v) and (section, k) not in NOT_COMPARED}
            for section in ("model", "train")}


def freeze(value):
    """Nested mappings and lists as read-only mappings and tuples."""
    if isinstance(value, Mapping):
        return MappingProxyType({key: freeze(item) for key, item in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(freeze(item) for item in value)
    return value


def thaw(value):
    """freeze's inverse: plain dicts and lists (JSON, YAML, model files)."""
    if isinstance(value, Mapping):
        return {key: thaw(item) for key, item in value.items()}
    if isinstance(value, tuple):
        return [thaw(item) for item in value]
    return value


class _Section:
    """A config section as a frozen dataclass: built from a mapping that has every field (upgraded first), each
    field's nested mappings read-only."""
    SECTION = ""

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]):
        values = upgrade(cls.SECTION, values)
        names = [f.name for f in dataclasses.fields(cls)]
        missing = [name for name in names if name not in values]
        unknown = sorted(set(values) - set(names))
        if missing or unknown:
            what = "; ".join(part for part in (missing and f"no {', '.join(missing)}",
                                               unknown and f"unknown {', '.join(unknown)}") if part)
            raise ConfigError(f"{cls.SECTION}: {what} (a resolved config has every key of params.yaml's "
                              f"{cls.SECTION} section)")
        return cls(**{name: freeze(values[name]) for name in names})

    def as_dict(self) -> dict:
        return {f.name: thaw(getattr(self, f.name)) for f in dataclasses.fields(self)}

    def replace(self, **changes):
        return dataclasses.replace(self, **{key: freeze(value) for key, value in changes.items()})


@dataclass(frozen=True)
class ModelSettings(_Section):
    """params.yaml's `model` section, every key read (the comments there say what each means)."""
    SECTION = "model"
    layers: int
    hidden: int
    embed: int
    dropout: float
    reverse: bool
    attention: str
    score: str
    input_feed: bool
    max_src_len: int
    window: int
    arch: str
    attention_dim: int
    target_foresight: bool
    attention_noise: float
    energy: str
    energy_bias: float


@dataclass(frozen=True)
class TrainSettings(_Section):
    """params.yaml's `train` section, every key read (the comments there say what each means)."""
    SECTION = "train"
    seed: int
    seeds: tuple[int, ...] | None
    optimizer: str
    lr: float
    epochs: int
    halve_after: int
    dropout_schedule: Mapping | None
    batch_size: int
    batch_tokens: int
    engine: str
    precision: str
    cuda_graphs: str | bool
    clip_norm: float
    init_range: float
    checkpoint_every: int
    init_from: str | Mapping | None
    trainable: str
    max_updates: int
    eval_every: int
    keep: str
    best_by: str
    plateau: Mapping | None
    guided_alignment: Mapping | None


@dataclass(frozen=True)
class SystemSettings:
    """What one system trains with: its model, its training settings, and the schedule they give (train.epochs
    and halve_after, or dropout_schedule for a model with dropout, or the plateau rule: nmt.schedule)."""
    model: ModelSettings
    train: TrainSettings

    @classmethod
    def from_config(cls, config: Mapping) -> SystemSettings:
        return cls(ModelSettings.from_dict(config["model"]), TrainSettings.from_dict(config["train"]))

    @property
    def schedule(self) -> Schedule:
        return schedule_of(self.train.as_dict(), self.model.dropout)

    def as_dict(self) -> dict:
        """`nmt config`'s view: both sections, and the effective schedule with its rule in words."""
        return {"model": self.model.as_dict(), "train": self.train.as_dict(), "schedule": self.schedule.as_dict()}
