"""What one system trains with, as typed, frozen objects: its `model` and `train` sections and the schedule they
give, read once from the resolved config (params.yaml, the preset, the table's recipe and the system's overrides:
nmt.config) and never changed after."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from .schedule import Schedule, schedule_of
from .sections import ModelSettings, TrainSettings, VerdictSettings


@dataclass(frozen=True)
class SystemSettings:
    """What one system trains with: its model, its training settings, and the schedule they give (train.epochs
    and halve_after, or dropout_schedule for a model with dropout, or the plateau rule: nmt.settings.schedule)."""

    model: ModelSettings
    train: TrainSettings
    gate: VerdictSettings = VerdictSettings()  # the convergence gate a plateau with stop: gate stops by

    @classmethod
    def from_config(cls, config: Mapping) -> SystemSettings:
        return cls(
            ModelSettings.from_dict(config["model"]),
            TrainSettings.from_dict(config["train"]),
            VerdictSettings.read(config.get("verdicts") or {}),
        )

    @property
    def schedule(self) -> Schedule:
        return schedule_of(self.train, self.model.dropout, self.gate)

    def as_dict(self) -> dict:
        """`nmt config`'s view: both sections, and the effective schedule with its rule in words."""
        return {"model": self.model.as_dict(), "train": self.train.as_dict(), "schedule": self.schedule.as_dict()}
