"""JSON schemas (nmt/spec/schemas/NAME.schema.yaml) and the one-line message of a file that breaks one."""
from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from ..errors import ConfigError

SCHEMAS_DIR = Path(__file__).with_name("schemas")


def schema_path(name: str) -> Path:
    return SCHEMAS_DIR / f"{name}.schema.yaml"


@functools.lru_cache(maxsize=None)
def validator(name: str, definition: str | None = None) -> jsonschema.Draft202012Validator:
    """The validator of schema ``name`` (of its ``$defs`` entry ``definition`` when given), built once."""
    schema = yaml.safe_load(schema_path(name).read_text(encoding="utf-8"))
    if definition is not None:
        schema = {**schema["$defs"][definition], "$defs": schema["$defs"]}
    return jsonschema.Draft202012Validator(schema)


def key_path(path) -> str:
    """figures[2].lines[1].label: where in a file's data a value is."""
    out = ""
    for part in path:
        out += f"[{part + 1}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def yaml_error_line(path: str | Path, err: yaml.YAMLError) -> str:
    """A YAML parser's error as one line: the file, the line and column (1-based) and the parser's reason."""
    mark = getattr(err, "problem_mark", None)
    problem = getattr(err, "problem", None) or str(err).splitlines()[0]
    context = getattr(err, "context", None)
    where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark is not None else str(path)
    return f"{where}: invalid YAML: {problem}" + (f" ({context})" if context else "")


def read_checked(path: Path, name: str, what: str) -> Any:
    """The YAML file at ``path``, valid against schema ``name``; else a ValueError naming the file (and the key)."""
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except OSError as e:
        raise ConfigError(f"{path}: cannot read {what}: {e}") from e
    except yaml.YAMLError as e:
        raise ConfigError(yaml_error_line(path, e)) from None
    problem = first_violation(data, name)
    if problem:
        raise ConfigError(f"{path}: {problem}")
    return data


def first_violation(data: Any, name: str, definition: str | None = None) -> str | None:
    """'KEY.PATH: message' of the violation of the schema jsonschema finds most relevant (into anyOf's branches,
    the deepest), or None when ``data`` is valid. List positions count from 1, as the rows and figures of the
    files are numbered in messages."""
    err = jsonschema.exceptions.best_match(validator(name, definition).iter_errors(data))
    if err is None:
        return None
    where = key_path(err.absolute_path)
    return f"{where}: {err.message}" if where else err.message
