"""`nmt params-yaml`: params.yaml's comments written from the settings' declared help (nmt.settings.sections), so
what a setting means is said once. Only comments change; every value keeps its text."""

from __future__ import annotations

import dataclasses
import functools
import re
import textwrap
import typing

from ..base.declare import Section, fields
from ..settings.sections import Params

COLUMN = 23  # where a nested setting's comment starts on its line, unless the line is longer
WIDTH = 120
_KEY = re.compile(r"^( *)([A-Za-z_][\w-]*):(?: |$)")


@dataclasses.dataclass(frozen=True)
class _Line:
    text: str
    field: dataclasses.Field | None = None  # the declared setting whose key starts the line
    holds: type | None = None  # the section class that setting's value is, if any

    @property
    def code(self) -> str:
        return _code(self.text)


def render(text: str) -> str:
    """params.yaml's text with the comments of its declared settings written anew: a top-level key's help above it
    (and `name: help` of each key of a section written there as a flow mapping), a nested key's help on its line.
    The comment lines above a declared key and those continuing its comment are the declaration's; any other comment
    (the file's header, a recipe's reasons) is kept as it is."""
    lines = _annotate(text.splitlines())
    out: list[str] = []
    above: list[str] = []  # comment lines since the last other line: a declared key right below owns them
    continued = None  # the column of the comment just written: comment lines there continue it
    for index, line in enumerate(lines):
        if line.text.lstrip().startswith("#"):
            if line.text.index("#") != continued:
                above.append(line.text)
            continue
        continued = None
        if line.field is None:
            out += [*above, line.text]
        elif not line.text.startswith(" "):
            out += [*_block(line, _section_body(lines, index)), line.code]
        else:
            column = max(COLUMN, len(line.code) + 2)
            comment = _wrapped(_help(line.field), " " * column + "# ")
            out.append(line.code.ljust(column) + comment[0].lstrip() if comment else line.code)
            out += comment[1:]
            continued = column if comment else None
        above = []
    return "\n".join(out + above) + "\n"


def _annotate(texts: list[str]) -> list[_Line]:
    """Each line with the declared setting whose key starts it (none for a comment, a list item, a flow mapping's
    continuation, or a key inside a value no section class declares, such as a recipe)."""
    lines, enclosing, depth = [], [], 0  # enclosing: (indent, section class or None) of the keys above the line
    for text in texts:
        match = _KEY.match(text) if not depth else None
        line = _Line(text)
        if match:
            indent = len(match[1])
            while enclosing and enclosing[-1][0] >= indent:
                enclosing.pop()
            section = enclosing[-1][1] if enclosing else Params
            field = next((f for f in fields(section) if f.name == match[2]), None) if section else None
            holds = _held_section(section, field) if field else None
            line = _Line(text, field, holds)
            enclosing.append((indent, holds))
        code = line.code
        depth += code.count("{") + code.count("[") - code.count("}") - code.count("]")
        lines.append(line)
    return lines


@functools.cache
def _hints(section: type) -> dict:
    return typing.get_type_hints(section)


def _held_section(section: type, field: dataclasses.Field) -> type | None:
    hint = _hints(section)[field.name]
    return hint if isinstance(hint, type) and issubclass(hint, Section) else None


def _section_body(lines: list[_Line], index: int) -> list[_Line]:
    """The lines of the top-level key at `index`, up to the next top-level key."""
    body = []
    for line in lines[index + 1 :]:
        if line.text and not line.text.startswith((" ", "#")):
            break
        body.append(line)
    return body


def _block(line: _Line, body: list[_Line]) -> list[str]:
    """The comment above a top-level key: its help, then the keys of each section written there as a flow mapping
    (which has no room for comments of its own)."""
    block = _wrapped(_help(line.field), "# ")
    flow = []
    for held in (line, *body):
        if held.holds and held.code.split(":", 1)[1].strip().startswith("{") and held.holds not in flow:
            flow.append(held.holds)
    for section in flow:
        block += [
            part
            for inner in fields(section)
            if _help(inner)
            for part in _wrapped(f"{inner.name}: {_help(inner)}", "#   ", "#     ")
        ]
    return block


def _help(field: dataclasses.Field) -> str:
    return " ".join((field.metadata.get("help") or "").split())


def _wrapped(text: str, indent: str, subsequent: str | None = None) -> list[str]:
    """`text` as comment lines of at most WIDTH characters, each starting with `indent` (the later ones with
    `subsequent`, if given)."""
    return (
        textwrap.wrap(
            text,
            WIDTH,
            initial_indent=indent,
            subsequent_indent=subsequent or indent,
            break_long_words=False,
            break_on_hyphens=False,
        )
        if text
        else []
    )


def _code(line: str) -> str:
    """The line without its comment (a `#` at its start or after a blank, outside quotes), right-stripped."""
    quote = None
    for at, char in enumerate(line):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (at == 0 or line[at - 1] in " \t"):
            return line[:at].rstrip()
    return line.rstrip()
