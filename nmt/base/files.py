"""One reader per file format: every text, YAML, JSON and JSON Lines file a command reads is decoded and checked
here, at the boundary, so that a malformed file is one line (exit status 2 through `nmt`'s main) that names the file,
the line or key, and the problem, never a traceback deep inside the command that uses it.
Details: docs/internals/base.md."""

from __future__ import annotations

import functools
import json
import math
import os
import stat
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from .errors import InputError, UserError, first_line

_BOM = b"\xef\xbb\xbf"
#: The longest a violation's text is quoted (a schema's message may repr a whole huge value).
MESSAGE_LIMIT = 200

Schema = dict | jsonschema.protocols.Validator | str | Path | None


def _read_bytes(path: str | Path, what: str, error: type[UserError]) -> bytes:
    try:
        with open(path, "rb") as handle:
            mode = os.fstat(handle.fileno()).st_mode
            if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):  # /dev/zero, a terminal, a disk: no end, or not a file's
                raise error(f"{path}: is a device, not {what}")
            return handle.read()
    except FileNotFoundError:
        raise error(f"{path}: no such file") from None
    except IsADirectoryError:
        raise error(f"{path}: is a directory, not {what}") from None
    except OSError as err:
        raise error(f"{path}: cannot read {what} ({err.strerror or err})") from None


def decode_utf8(data: bytes, path: str | Path, error: type[UserError] = InputError) -> str:
    """``data`` (the bytes of the file at ``path``) as text; a leading byte order mark is dropped. An invalid byte
    is one ``error`` naming its line, column and byte offset."""
    start = len(_BOM) if data.startswith(_BOM) else 0
    try:
        return data[start:].decode("utf-8")
    except UnicodeDecodeError as err:
        offset = start + err.start
        line = data.count(b"\n", 0, offset) + 1
        line_start = data.rfind(b"\n", 0, offset) + 1
        column = len(data[max(line_start, start) : offset].decode("utf-8", errors="replace")) + 1
        raise error(
            f"{path}:{line}: invalid UTF-8 (byte 0x{data[offset]:02x} at column {column}, byte offset "
            f"{offset}; not a UTF-8 text file?)"
        ) from None


def read_text(path: str | Path, what: str = "the file", *, error: type[UserError] = InputError) -> str:
    """The file at ``path`` as UTF-8 text (see the module doc); ``what`` names it in messages ("a preset")."""
    return decode_utf8(_read_bytes(path, what, error), path, error)


# -- YAML ---------------------------------------------------------------------------------------------------------
class DuplicateKeyError(yaml.constructor.ConstructorError):
    """A mapping that gives a key twice: YAML says keys are unique, PyYAML silently keeps the last value."""


class UniqueKeyLoader(yaml.SafeLoader):
    """yaml.SafeLoader that refuses a key given twice in one mapping (a merge key ``<<`` may still be overridden)."""


def _construct_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue
        key = loader.construct_object(key_node, deep=deep)
        try:
            first = seen.get(key)
        except TypeError:  # an unhashable key: construct_mapping says so
            continue
        if first is not None:
            raise DuplicateKeyError(None, None, f"duplicate key {key!r} (first on line {first})", key_node.start_mark)
        seen[key] = key_node.start_mark.line + 1
    return loader.construct_mapping(node, deep=deep)


UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def yaml_error_line(path: str | Path, err: yaml.YAMLError, text: str | None = None) -> str:
    """A YAML parser's error as one line: the file, the line and column (1-based) and the parser's reason (a
    character YAML does not allow, e.g. NUL, is found by its position in ``text``)."""
    mark = getattr(err, "problem_mark", None)
    problem = getattr(err, "problem", None) or first_line(err)
    context = getattr(err, "context", None)
    where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark is not None else str(path)
    if isinstance(err, yaml.reader.ReaderError) and text is not None:
        line = text.count("\n", 0, err.position) + 1
        column = err.position - (text.rfind("\n", 0, err.position) + 1) + 1
        code = err.character if isinstance(err.character, int) else ord(str(err.character)[:1] or "\0")
        return f"{path}:{line}:{column}: invalid YAML: character U+{code:04X} is not allowed (a binary file?)"
    if isinstance(err, DuplicateKeyError):
        return f"{where}: {problem}"
    return f"{where}: invalid YAML: {problem}" + (f" ({context})" if context else "")


def parse_yaml(
    text: str,
    path: str | Path,
    what: str = "the file",
    *,
    allow_empty: bool = False,
    schema: Schema = None,
    error: type[UserError] = InputError,
) -> Any:
    """``text`` (the content of ``path``) as YAML, by the rules of :func:`read_yaml`."""
    try:
        data = yaml.load(text, Loader=UniqueKeyLoader)
    except yaml.YAMLError as err:
        raise error(yaml_error_line(path, err, text)) from None
    except RecursionError:
        raise error(f"{path}: {what} is nested too deeply") from None
    except (ValueError, OverflowError) as err:  # a value its constructor refuses: 2024-13-01, a 5000-digit int
        raise error(f"{path}: invalid YAML: {first_line(err)}") from None
    if data is None and not allow_empty:
        raise error(
            f"{path}: {what} is empty"
            + (" (0 bytes)" if not text else " (no value in it: only blanks, comments or null)")
        )
    return checked(data, path, schema, error)


def read_yaml(
    path: str | Path,
    what: str = "the file",
    *,
    allow_empty: bool = False,
    schema: Schema = None,
    error: type[UserError] = InputError,
) -> Any:
    """The YAML file at ``path`` (see the module doc); None for an empty one when ``allow_empty``."""
    return parse_yaml(
        read_text(path, what, error=error), path, what, allow_empty=allow_empty, schema=schema, error=error
    )


# -- JSON ---------------------------------------------------------------------------------------------------------
_TOP_NAMES = {dict: "an object", list: "an array"}


def _type_name(value: Any) -> str:
    return {
        dict: "an object",
        list: "an array",
        str: "a string",
        bool: "a boolean",
        type(None): "null",
        int: "a number",
        float: "a number",
    }.get(type(value), type(value).__name__)


def parse_json(
    text: str,
    where: str,
    what: str = "the file",
    *,
    schema: Schema = None,
    top: type | None = dict,
    error: type[UserError] = InputError,
    line: int | None = None,
) -> Any:
    """``text`` as one JSON document; ``where`` is the file (``line``: the line of a JSON Lines file it is)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        at = f"{where}:{line}:{err.colno}" if line is not None else f"{where}:{err.lineno}:{err.colno}"
        raise error(f"{at}: invalid JSON: {err.msg}") from None
    except RecursionError:
        raise error(f"{where}{'' if line is None else f':{line}'}: {what} is nested too deeply") from None
    except ValueError as err:  # a number json cannot convert (more than 4300 digits)
        raise error(f"{where}{'' if line is None else f':{line}'}: invalid JSON: {first_line(err)}") from None
    prefix = where if line is None else f"{where}:{line}"
    if top is not None and not isinstance(data, top):
        expected = _TOP_NAMES.get(top, top.__name__)
        raise error(f"{prefix}: {what} must be {expected} at the top level, not {_type_name(data)}")
    return checked(data, prefix, schema, error)


def read_json(
    path: str | Path,
    what: str = "the file",
    *,
    schema: Schema = None,
    top: type | None = dict,
    error: type[UserError] = InputError,
) -> Any:
    """The JSON file at ``path`` (see the module doc)."""
    return parse_json(read_text(path, what, error=error), str(path), what, schema=schema, top=top, error=error)


def read_jsonl(
    path: str | Path,
    what: str = "the file",
    *,
    schema: Schema = None,
    allow_empty: bool = False,
    error: type[UserError] = InputError,
) -> list[dict]:
    """The records of the JSON Lines file at ``path``: one JSON object per line, blank lines skipped; each checked
    against ``schema``. Lines are split on ``\\n`` only (``\\r\\n`` too), as JSON text escapes every other line
    break."""
    text = read_text(path, what, error=error)
    records = []
    for number, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        records.append(
            parse_json(raw, str(path), f"each line of {what}", schema=schema, top=dict, error=error, line=number)
        )
    if not records and not allow_empty:
        raise error(f"{path}: {what} is empty" + (" (0 bytes)" if not text else " (no JSON line in it)"))
    return records


# -- schemas ------------------------------------------------------------------------------------------------------
def _finite_number(checker, value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _whole_integer(checker, value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


#: JSON Schema (draft 2020-12) with numbers as a setting or a result means them: a "number" is finite (YAML's .nan
#: and .inf, JSON's NaN and Infinity are not numbers of anything the project reads) and an "integer" is written as one
#: (2.0 is not a layer count; JSON Schema itself counts it an integer)
StrictValidator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine_many(
        {"number": _finite_number, "integer": _whole_integer}
    ),
)


def strict_validator(schema: dict) -> jsonschema.protocols.Validator:
    """A validator of ``schema`` by StrictValidator's types (what every schema the project reads is checked with)."""
    return StrictValidator(schema)


@functools.lru_cache(maxsize=None)
def _validator_of_file(path: str) -> jsonschema.protocols.Validator:
    return strict_validator(read_yaml(path, "a schema", error=UserError))


def validator(schema: Schema) -> jsonschema.protocols.Validator | None:
    """A jsonschema validator of ``schema`` (a dict, a validator, or the path of a YAML schema file, read once)."""
    if schema is None or isinstance(schema, jsonschema.protocols.Validator):
        return schema
    if isinstance(schema, (str, Path)):
        return _validator_of_file(str(Path(schema).resolve()))
    return strict_validator(schema)


def key_path(path) -> str:
    """figures[2].lines[1].label: where in a file's data a value is (list positions from 1)."""
    out = ""
    for part in path:
        out += f"[{part + 1}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def violation(data: Any, schema: Schema) -> str | None:
    """'KEY.PATH: message' of the violation of ``schema`` that jsonschema finds most relevant (into anyOf's
    branches, the deepest), or None when ``data`` is valid."""
    check = validator(schema)
    if check is None:
        return None
    err = jsonschema.exceptions.best_match(check.iter_errors(data))
    if err is None:
        return None
    where = key_path(err.absolute_path)
    message = first_line(error_message(err), MESSAGE_LIMIT)
    return f"{where}: {message}" if where else message


def error_message(err: jsonschema.exceptions.ValidationError) -> str:
    """jsonschema's message, said plainly where StrictValidator's types refused a number JSON Schema would take."""
    value, wanted = err.instance, err.validator_value if err.validator == "type" else None
    wanted = {wanted} if isinstance(wanted, str) else set(wanted or ())
    if isinstance(value, float) and not math.isfinite(value) and wanted & {"number", "integer"}:
        return f"{value} is not a finite number"
    if isinstance(value, float) and value.is_integer() and "integer" in wanted:
        return f"{value} is not an integer (write {int(value)})"
    return err.message


def checked(data: Any, where: str | Path, schema: Schema, error: type[UserError] = InputError) -> Any:
    """``data`` when it is valid against ``schema``; else one ``error``: 'WHERE: KEY.PATH: problem'."""
    try:
        problem = violation(data, schema)
    except RecursionError:
        raise error(f"{where}: nested too deeply") from None
    if problem:
        raise error(f"{where}: {problem}")
    return data
