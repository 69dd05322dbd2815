"""A configuration merged from layers, each value remembering the layer that set it (like `git config --show-origin`).

The layers of a system's configuration, in the order they merge (nmt.config): params.yaml, the preset file, the
preset's `--preset` given on the command line, the table's recipe (its keys as params.yaml or the preset write them),
the table's own overrides of the system, and for a run of another seed the keys that seed sets. Mappings merge key by
key; any other value replaces what was there (a list too).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Callable, Mapping


class Layer:
    """The layers' names, as `nmt config --explain` shows them."""

    PARAMS = "params.yaml"
    PRESET = "preset"
    COMMAND_LINE = "command line"
    RECIPE = "recipe"
    TABLE = "table"
    SEED_RUN = "seed run"
    TASK = "task's corpus"


@dataclass(frozen=True)
class Origin:
    """Where a value was set: its layer, the file (None: the command line), the key as that file writes it, and which
    of the two files DVC reads params from holds that key ("params" or "preset"; None for the other layers, whose
    files are a stage's dependencies instead)."""

    layer: str
    file: str | None
    key: str
    params_file: str | None = None

    def __str__(self) -> str:
        where = f"{self.file}: {self.key}" if self.file else self.key
        return where if self.layer == Layer.PARAMS else f"{self.layer} ({where})"


@dataclass
class Layered:
    """A merged configuration and, for each of its leaf keys (dotted: train.lr, train.plateau.within), the layer
    that set it."""

    values: dict = field(default_factory=dict)
    origins: dict[str, Origin] = field(default_factory=dict)

    def merge(self, overlay: Mapping | None, origin_of: Callable[[str], Origin], prefix: str = "") -> Layered:
        """`overlay` merged in (a copy; nested mappings key by key), each value it sets given origin_of(dotted key)."""
        _merge(self.values, self.origins, overlay or {}, prefix, origin_of)
        return self

    def set(self, dotted: str, value, origin: Origin) -> None:
        """One value replaced (not merged), with its origin."""
        *parents, name = dotted.split(".")
        tree = self.values
        for part in parents:
            tree = tree[part]
        _forget(self.origins, dotted)
        tree[name] = copy.deepcopy(value)
        for leaf in leaf_keys(value, dotted):
            self.origins[leaf] = origin

    def explained(self) -> list[tuple[str, object, Origin | str]]:
        """(dotted key, value, origin) of every leaf, sorted by key."""
        rows = [
            (key, value, self.origins.get(key, "(origin unknown)"))
            for name, item in self.values.items()
            for key, value in leaves(item, name)
        ]
        return sorted(rows, key=lambda row: row[0])

    def copy(self) -> Layered:
        return Layered(copy.deepcopy(self.values), dict(self.origins))


def leaves(value, dotted: str):
    """(dotted key, value) of a value's leaves: itself, unless it is a non-empty mapping (DVC's params keys)."""
    if isinstance(value, Mapping) and value:
        for name, item in value.items():
            yield from leaves(item, f"{dotted}.{name}")
    else:
        yield dotted, value


def leaf_keys(value, dotted: str) -> list[str]:
    """The dotted keys of a value's leaves (see leaves)."""
    return [key for key, _ in leaves(value, dotted)]


def _forget(origins: dict, dotted: str) -> None:
    for key in [key for key in origins if key == dotted or key.startswith(dotted + ".")]:
        del origins[key]


def _merge(values: dict, origins: dict, overlay: Mapping, prefix: str, origin_of) -> None:
    for name, value in overlay.items():
        dotted = f"{prefix}{name}"
        old = values.get(name)
        if isinstance(value, Mapping) and isinstance(old, dict):
            if not old:
                origins.pop(dotted, None)  # an empty mapping was a leaf
            _merge(old, origins, value, dotted + ".", origin_of)
            if not old:  # still empty: this layer set it so
                origins[dotted] = origin_of(dotted)
            continue
        _forget(origins, dotted)
        values[name] = copy.deepcopy(dict(value) if isinstance(value, Mapping) else value)
        for leaf in leaf_keys(value, dotted):
            origins[leaf] = origin_of(leaf)
