"""The model and train sections as model files and checkpoints record them: their version, the one upgrade of an
older file's sections to the current version, and which settings are compared when two runs are (same training or
not).
Details: docs/internals/settings.md."""

from __future__ import annotations

from typing import Any, Mapping

from ..base.declare import fields
from .sections import ADDED, RECORDED

#: The version of the model/train sections that model files and checkpoints record (`config_version`; a file
#: without one was written at version 1, one of a later version than this is refused: nmt.models.io).
VERSION = 2
# Keys added inside a mapping-valued setting after it existed, with the value that means "as before" (each field's
# `within`): a train.plateau recorded without `patience` ended training at the first stall at the final learning
# rate, which is patience 1 (nmt.settings.schedule).
ADDED_WITHIN = {
    (name, f.name): f.metadata["within"]
    for name, cls in RECORDED.items()
    for f in fields(cls)
    if f.metadata.get("within")
}
# Keys since removed, with the value that meant what the settings now mean without them.
RETIRED = {name: dict(cls.RETIRED) for name, cls in RECORDED.items()}
# Keys never compared: `train.seeds` (which runs the workflow makes; a run's own seed is `train.seed`) and
# `train.cuda_graphs` (how updates are launched, not what they compute: equal to float rounding, like a run on another
# device), so neither retrains, re-measures or refuses a resume.
NOT_COMPARED = {("train", "seeds"), ("train", "cuda_graphs")}


def upgrade(section: str, values: Mapping[str, Any]) -> dict:
    """A `model` or `train` section as any version wrote it, at :data:`VERSION` (Section.upgraded)."""
    return RECORDED[section].upgraded(values)


def upgrade_value(section: str, key: str, value):
    """One setting as any version wrote it, at :data:`VERSION`: a mapping given the keys added inside it since."""
    return RECORDED[section].upgraded_value(key, value)


def _without_added_within(section: str, key: str, value):
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
    return {
        section: {
            k: _without_added_within(section, k, v)
            for k, v in (config.get(section) or {}).items()
            if not _at_added_default(section, k, v) and (section, k) not in NOT_COMPARED
        }
        for section in ("model", "train")
    }
