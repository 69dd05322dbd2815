"""How a setting is declared: once, as a field of a frozen dataclass (a :class:`Section`) that carries its type, its
default, its help text and its constraints (fairseq's `field(default=..., metadata={"help": ...})`, see
:func:`setting`). The JSON schema that validates params.yaml, the presets and the tables' overrides is derived from
these classes (:func:`json_schema`), and the typed objects the code reads are built from them
(:meth:`Section.from_dict`, :meth:`Section.of`)."""

from __future__ import annotations

import collections.abc
import dataclasses
import functools
import types
import typing
from types import MappingProxyType
from typing import Any, Mapping

from .errors import ConfigError

_NO_DEFAULT = dataclasses.MISSING
_NOT_ADDED = object()


def setting(
    default=_NO_DEFAULT,
    help: str = "",
    *,
    optional: bool = False,
    before=_NOT_ADDED,
    within: Mapping | None = None,
    schema: dict | None = None,
    **constraints,
) -> Any:
    """A declared setting: a dataclass field whose type is its annotation. Mutable defaults are frozen.

    help       what the setting means: the schema's description (`nmt config --schema` prints it) and params.yaml's
               comment (`nmt params-yaml` writes it)
    optional   the key may be left out of a configuration (its default then applies where it is read); the others
               are required where the section is given, and params.yaml gives each its default
    before     for a key added after version 1 of the model/train sections: the value that means what files written
               before it did (nmt.settings.recorded.upgrade)
    within     for a mapping-valued setting that gained keys: those keys and their "as before" values
    schema     the schema of a value no annotation describes (a union of shapes, a nested mapping); otherwise derived
    the rest   JSON-schema keywords for the value (minimum, exclusiveMinimum, maximum, multipleOf, minItems, pattern,
               ...)
    """
    metadata = {
        "help": help,
        "optional": optional,
        "before": before,
        "within": dict(within or {}),
        "schema": schema,
        "constraints": constraints,
    }
    if default is _NO_DEFAULT:
        return dataclasses.field(metadata=metadata)
    frozen = freeze(default)
    if isinstance(frozen, MappingProxyType):  # not hashable: dataclasses take it as a factory's
        return dataclasses.field(default_factory=lambda: frozen, metadata=metadata)
    return dataclasses.field(default=frozen, metadata=metadata)


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
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return value.as_dict()
    return value


def fields(cls) -> tuple[dataclasses.Field, ...]:
    return dataclasses.fields(cls)


def default_of(field: dataclasses.Field):
    """A field's default as plain data (None where it has none)."""
    if field.default is not _NO_DEFAULT:
        return thaw(field.default)
    if field.default_factory is not _NO_DEFAULT:
        return thaw(field.default_factory())
    return None


def added(cls) -> dict:
    """The keys added after version 1, each with the value that means "as before"."""
    return {f.name: f.metadata["before"] for f in fields(cls) if f.metadata.get("before", _NOT_ADDED) is not _NOT_ADDED}


class Section:
    """A configuration section as a frozen dataclass (subclasses are `@dataclass(frozen=True)`): SECTION names it
    in params.yaml, RETIRED lists keys since removed with the value that meant what the settings now mean without
    them."""

    SECTION = ""
    RETIRED: Mapping[str, Any] = MappingProxyType({})

    @classmethod
    def upgraded(cls, values: Mapping[str, Any]) -> dict:
        """The section as any version wrote it, at the current version: the keys added since at their "as before"
        values (inside a mapping-valued setting too: `within`), the retired ones dropped (a retired key set to
        anything but its neutral value is a ConfigError: no current setting means what it meant)."""
        upgraded = {key: value for key, value in added(cls).items() if key not in values}
        for key, value in values.items():
            if key in cls.RETIRED:
                if value != cls.RETIRED[key]:
                    raise ConfigError(
                        f"{cls.SECTION}.{key}: {value!r} is a retired setting; retrain with the current ones"
                    )
                continue
            upgraded[key] = cls.upgraded_value(key, value)
        return upgraded

    @classmethod
    def upgraded_value(cls, key: str, value):
        """One setting as any version wrote it: a mapping given the keys added inside it since (`within`)."""
        field = _field(cls, key)
        within = field.metadata.get("within") if field else None
        if not within or not isinstance(value, Mapping):
            return value
        return {**value, **{name: default for name, default in within.items() if name not in value}}

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]):
        """The section from a mapping of every required key (a resolved config's, which has every key; a recorded one
        is upgraded first), an optional key it leaves out at its declared default; a missing or unknown key is a
        ConfigError naming it."""
        values = cls.upgraded(values)
        names = [f.name for f in fields(cls)]
        missing = cls._missing(values)
        unknown = sorted(set(values) - set(names))
        if missing or unknown:
            what = "; ".join(
                part
                for part in (missing and f"no {', '.join(missing)}", unknown and f"unknown {', '.join(unknown)}")
                if part
            )
            raise ConfigError(
                f"{cls.SECTION}: {what} (a resolved config has every key of params.yaml's {cls.SECTION} section)"
            )
        return cls(**{name: freeze(values[name]) for name in names if name in values})

    @classmethod
    def missing_keys(cls, values: Mapping[str, Any]) -> list[str]:
        """The keys of the section that `values` (any version's, upgraded here) lacks and must have (an optional one
        left out takes its declared default)."""
        return cls._missing(cls.upgraded(values))

    @classmethod
    def _missing(cls, upgraded: Mapping[str, Any]) -> list[str]:
        return [f.name for f in fields(cls) if f.name not in upgraded and not f.metadata.get("optional")]

    @classmethod
    def of(cls, config: Mapping):
        """The section of a validated configuration, each key it leaves out at its declared default."""
        return cls.read(config.get(cls.SECTION) or {})

    @classmethod
    def read(cls, values: Mapping):
        """The section from a validated mapping, each key it leaves out at its declared default (nested sections
        read likewise)."""
        hints = _hints(cls)
        built = {}
        for f in fields(cls):
            if f.name not in values:
                continue
            value = values[f.name]
            nested = _section_type(hints[f.name])
            built[f.name] = nested.read(value or {}) if nested and isinstance(value, Mapping) else freeze(value)
        return cls(**built)

    def as_dict(self) -> dict:
        return {f.name: thaw(getattr(self, f.name)) for f in fields(self)}

    def replace(self, **changes):
        return dataclasses.replace(self, **{key: freeze(value) for key, value in changes.items()})


def _field(cls, name: str) -> dataclasses.Field | None:
    return next((f for f in fields(cls) if f.name == name), None)


@functools.cache
def _hints(cls) -> dict:
    """A section class's annotations, evaluated (once per class: `read` asks each time it builds one)."""
    return typing.get_type_hints(cls)


def _section_type(hint) -> type | None:
    return hint if isinstance(hint, type) and issubclass(hint, Section) else None


# -- the JSON schema, derived ----------------------------------------------------------------------------------------

_SCALARS = {bool: "boolean", int: "integer", float: "number", str: "string", type(None): "null"}


def json_schema(cls) -> dict:
    """The JSON schema (draft 2020-12) of a section class: an object that forbids unknown keys, its non-optional
    keys required, each key's schema from its annotation, its constraints and its help."""
    hints = _hints(cls)
    properties = {f.name: _field_schema(f, hints[f.name]) for f in fields(cls)}
    schema = {"type": "object", "additionalProperties": False}
    required = [f.name for f in fields(cls) if not f.metadata.get("optional")]
    if required:
        schema["required"] = required
    schema["properties"] = properties
    schema.update(thaw(getattr(cls, "EXTRA_SCHEMA", {})))
    return schema


def _field_schema(f: dataclasses.Field, hint) -> dict:
    meta = f.metadata
    schema = dict(meta["schema"]) if meta.get("schema") is not None else _type_schema(hint)
    schema.update(meta.get("constraints") or {})
    if meta.get("help"):
        schema["description"] = meta["help"]
    return schema


def _type_schema(hint) -> dict:
    nested = _section_type(hint)
    if nested:
        return json_schema(nested)
    if hint in _SCALARS:
        return {"type": _SCALARS[hint]}
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Literal:
        return {"enum": list(args)}
    if origin in (typing.Union, types.UnionType):
        parts = [_type_schema(arg) for arg in args]
        if all(set(part) == {"type"} for part in parts):  # scalars (and null): one "type" list
            return {"type": [part["type"] for part in parts]}
        if all(set(part) == {"enum"} or part == {"type": "null"} for part in parts):
            return {"enum": [v for part in parts for v in part.get("enum", [None])]}
        nullable = [part for part in parts if part != {"type": "null"}]
        if len(nullable) == 1 and set(nullable[0]) >= {"type"} and isinstance(nullable[0]["type"], str):
            return {**nullable[0], "type": [nullable[0]["type"], "null"]}
        return {"anyOf": parts}
    if origin in (tuple, list) and args:
        return {"type": "array", "items": _type_schema(args[0])}
    if origin in (collections.abc.Mapping, dict) and args:
        return {"type": "object", "additionalProperties": _type_schema(args[1])}
    if hint in (Mapping, dict) or origin in (collections.abc.Mapping, dict):
        return {"type": "object"}
    raise TypeError(f"no schema for the annotation {hint!r}: give the setting a schema=")
