"""`nmt` through its entry, nmt.cli.main, in the test's own process (the command's parsing and error handling without
an interpreter's start per case), and the one line a user's error must be. The `nmt` fixture is registered for every
test folder by tests/conftest.py."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from nmt.cli import main


@dataclass
class Done:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def nmt(capsys, monkeypatch):
    """`nmt ARGV` run in directory d ({d} in an argument is d), as the command line runs it."""

    def run(argv: list[str], d: Path) -> Done:
        monkeypatch.chdir(d)
        capsys.readouterr()
        code = main([a.format(d=d) for a in argv])
        out, err = capsys.readouterr()
        return Done(code, out, err)

    return run


def assert_one_line(done: Done, expected: str) -> str:
    """The error line of a command that failed as a user's error does: exit status 2, one line on stderr, no
    traceback, "nmt: error: " and `expected` in it."""
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert lines[0].startswith("nmt: error: ") and expected in lines[0], lines[0]
    return lines[0]
