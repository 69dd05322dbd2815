"""A module's docstring says in a few lines what the module is for; the detail sits on its classes and functions or
in docs (docs/internals/ holds what the modules' docstrings once said)."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAX_LINES = 6


def test_module_docstrings_are_a_few_lines():
    long = {}
    for path in sorted((ROOT / "nmt").rglob("*.py")):
        docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")), clean=False) or ""
        if len(docstring.strip().splitlines()) > MAX_LINES:
            long[str(path.relative_to(ROOT))] = len(docstring.strip().splitlines())
    assert not long, f"module docstrings over {MAX_LINES} lines (move the detail onto the code or into docs): {long}"
