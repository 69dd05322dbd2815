"""The unit tier runs in this process: a test here that starts a process fails (such tests belong in tests/cli).

What a report says of the machine and the code (nmt.base.environment: the git commit, the GPU driver) comes from
commands; they run once, here, before any test, and the tests read their answers."""

import subprocess

import pytest

from nmt.base import environment

_PROBES = [
    (["git", "ls-files", "--error-unmatch", "--", "__init__.py"], environment.CODE_DIR),
    (["git", "rev-parse", "HEAD"], environment.CODE_DIR),
    (["git", "rev-parse", "--short", "HEAD"], environment.CODE_DIR),
    (["git", "--no-optional-locks", "status", "--porcelain", "--untracked-files=no"], environment.CODE_DIR),
    (["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"], None),
]
_ANSWERS = {(tuple(command), cwd): environment._run(command, cwd) for command, cwd in _PROBES}


def _answer(command: list[str], cwd=None) -> str | None:
    return _ANSWERS.get((tuple(command), cwd))  # another command: as if its tool were missing


@pytest.fixture(autouse=True)
def no_processes(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a unit test started a process; it belongs in tests/cli: " + repr(args[:1])[:200])

    monkeypatch.setattr(environment, "_run", _answer)
    monkeypatch.setattr(subprocess, "Popen", refuse)
