"""The unit tier runs in this process: a test here that starts a process fails (such tests belong in tests/cli).

What a report says of the machine and the code (nmt.base.environment: the git commit, the GPU driver) comes from
commands; nmt.base.environment's own probes run once, here, before any test, and the tests read their answers."""

import subprocess

import pytest
import torch

from nmt.base import environment

_ANSWERS: dict[tuple, str | None] = {}


def _recorded(command: list[str], cwd=None) -> str | None:
    answer = _ANSWERS[(tuple(command), cwd)] = _run(command, cwd)
    return answer


_run, environment._run = environment._run, _recorded
try:
    environment.describe()
    environment.git_commit(short=True)
finally:
    environment._run = _run


def _answer(command: list[str], cwd=None) -> str | None:
    return _ANSWERS.get((tuple(command), cwd))  # a command no probe ran: as if its tool were missing


@pytest.fixture(autouse=True)
def no_processes(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a unit test started a process; it belongs in tests/cli: " + repr(args[:1])[:200])

    monkeypatch.setattr(environment, "_run", _answer)
    monkeypatch.setattr(subprocess, "Popen", refuse)


@pytest.fixture(scope="module")
def one_thread():
    """Many small ops in long loops: with other jobs on the machine, torch's threads make them 50x slower. A module
    asks for it with ``pytestmark = pytest.mark.usefixtures("one_thread")``."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
