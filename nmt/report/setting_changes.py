"""Per-system settings as what differs: between the systems, and from the preset.

A report of many trainings would otherwise repeat every setting once per system. Here the settings every system
shares are listed once (with the preset's own value where theirs is another), the settings that differ become
columns of one table whose rows are the groups of systems with the same values, and the whole grid stays available
for whoever wants it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def flatten(d: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """Nested mappings as (dotted key, value) pairs, in order; an empty mapping is a value."""
    if not isinstance(d, dict):
        return [(prefix, d)] if prefix else []
    items: list[tuple[str, Any]] = []
    for k, v in d.items():
        key = f"{prefix}.{k}" if prefix else str(k)
        if isinstance(v, dict) and v:
            items.extend(flatten(v, key))
        else:
            items.append((key, v))
    return items


def settings_view(systems: dict[str, dict], preset: dict | None, fmt: Callable[[Any], str]) -> dict | None:
    """``systems`` {system: {setting: value}} (nested mappings flattened to dotted keys), ``preset`` the same
    settings of the preset itself, ``fmt`` how a value is written. None when there is no system.

    Returns ``shared`` (one row per setting every system has at one value: the value, the preset's (None where the
    preset has no such setting) and whether they differ), ``columns`` (the settings that differ between systems,
    each with the preset's value), ``groups`` (the systems that share one combination of those values, in the
    systems' order; each cell says whether it differs from the preset) and ``full`` (every system's every setting:
    the grid they were drawn from)."""
    if not systems:
        return None
    flat = {name: dict(flatten(values)) for name, values in systems.items()}
    base = dict(flatten(preset or {}))
    keys: list[str] = []
    for values in flat.values():
        keys.extend(k for k in values if k not in keys)

    def cell(key: str, values: dict) -> str:
        return fmt(values.get(key))

    def preset_differs(key: str, shown: str) -> bool:
        return key in base and fmt(base[key]) != shown

    shared, varying = [], []
    for key in keys:
        shown = {cell(key, values) for values in flat.values()}
        if len(shown) == 1:
            value = shown.pop()
            shared.append(
                {
                    "key": key,
                    "value": value,
                    "preset": fmt(base[key]) if key in base else None,
                    "differs": preset_differs(key, value),
                }
            )
        else:
            varying.append(key)
    groups: dict[tuple[str, ...], list[str]] = {}
    for name, values in flat.items():
        groups.setdefault(tuple(cell(key, values) for key in varying), []).append(name)
    return {
        "count": len(flat),
        "shared": shared,
        "columns": [{"key": key, "preset": fmt(base[key]) if key in base else None} for key in varying],
        "groups": [
            {
                "systems": names,
                "cells": [
                    {"value": value, "differs": preset_differs(key, value)} for key, value in zip(varying, combination)
                ],
            }
            for combination, names in groups.items()
        ],
        "full": {
            "columns": keys,
            "rows": [{"name": name, "cells": [cell(key, values) for key in keys]} for name, values in flat.items()],
        },
    }
