"""The configuration's settings, declared once (nmt.settings.sections; how a setting is declared and the schema
derived: nmt.base.declare), read as typed, frozen objects (a system's: nmt.settings.system), and the one upgrade of
the sections older model files and checkpoints recorded (nmt.settings.recorded)."""

from ..base.declare import freeze, thaw
from .recorded import ADDED_WITHIN, NOT_COMPARED, RETIRED, VERSION, comparable_settings, upgrade, upgrade_value
from .sections import (
    ADDED,
    PARAMS_SCHEMA,
    ClusterSettings,
    DataSettings,
    EflomalSettings,
    ModelSettings,
    Params,
    PrepareSettings,
    TrainSettings,
    TranslateSettings,
    UnkSettings,
    VerdictSettings,
)
from .system import SystemSettings

__all__ = [
    "ADDED",
    "ADDED_WITHIN",
    "NOT_COMPARED",
    "PARAMS_SCHEMA",
    "RETIRED",
    "VERSION",
    "ClusterSettings",
    "DataSettings",
    "EflomalSettings",
    "ModelSettings",
    "Params",
    "PrepareSettings",
    "SystemSettings",
    "TrainSettings",
    "TranslateSettings",
    "UnkSettings",
    "VerdictSettings",
    "comparable_settings",
    "freeze",
    "thaw",
    "upgrade",
    "upgrade_value",
]
