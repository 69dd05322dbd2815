"""JSON schemas (nmt/config/schemas/NAME.schema.yaml) and the one-line message of a file that breaks one. The files
themselves are read by nmt.base.files (one reader per format); this module names the schemas."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import jsonschema

from ..base.errors import ConfigError
from ..base.files import key_path, read_yaml, strict_validator, violation, yaml_error_line

__all__ = ["SCHEMAS_DIR", "schema_path", "validator", "key_path", "yaml_error_line", "read_checked", "first_violation"]

SCHEMAS_DIR = Path(__file__).with_name("schemas")


def schema_path(name: str) -> Path:
    return SCHEMAS_DIR / f"{name}.schema.yaml"


@functools.lru_cache(maxsize=None)
def validator(name: str, definition: str | None = None) -> jsonschema.Draft202012Validator:
    """The validator of schema ``name`` (of its ``$defs`` entry ``definition`` when given), built once; numbers as
    nmt.base.files.StrictValidator means them (finite; an integer written as one)."""
    schema = read_yaml(schema_path(name), "a schema")
    if definition is not None:
        schema = {**schema["$defs"][definition], "$defs": schema["$defs"]}
    return strict_validator(schema)


def read_checked(path: Path, name: str, what: str) -> Any:
    """The YAML file at ``path`` (nmt.base.files.read_yaml: duplicate keys and an empty file refused), valid against
    schema ``name``; else a ConfigError naming the file (and the line, or the key)."""
    return read_yaml(path, what, schema=validator(name), error=ConfigError)


def first_violation(data: Any, name: str, definition: str | None = None) -> str | None:
    """'KEY.PATH: message' of the violation of the schema jsonschema finds most relevant (into anyOf's branches,
    the deepest), or None when ``data`` is valid. List positions count from 1, as the rows and figures of the
    files are numbered in messages."""
    return violation(data, validator(name, definition))
