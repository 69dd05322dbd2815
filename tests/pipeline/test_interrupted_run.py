"""A run stopped part way is finished by the same command: Snakemake's own locks left by a killed run are taken over
(nmt.pipeline.snakemake_locks), incomplete jobs run again (profiles/default), and the trainings they stopped resume
from their checkpoints, so the report is the one an uninterrupted run makes."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nmt.pipeline.snakemake_locks import OWNER, take_over_stale_locks

import pipelines


def test_locks_of_a_dead_run_of_this_host_are_taken_over_and_no_others(tmp_path):
    locks = tmp_path / "locks"
    locks.mkdir()
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    ).stdout.strip()
    (locks / "0.input.lock").write_text("a\n")
    assert take_over_stale_locks(tmp_path, pid=10, host="here") is None  # no owner recorded: left alone
    assert (locks / "0.input.lock").exists() and not (tmp_path / OWNER).exists()
    (tmp_path / OWNER).write_text(json.dumps({"pid": int(dead), "host": "elsewhere"}))
    assert take_over_stale_locks(tmp_path, pid=11, host="here") is None  # another host's run: left alone
    assert (locks / "0.input.lock").exists() and json.loads((tmp_path / OWNER).read_text())["host"] == "elsewhere"
    (tmp_path / OWNER).write_text(json.dumps({"pid": int(dead), "host": "here"}))
    said = take_over_stale_locks(tmp_path, pid=12, host="here")
    assert said == f"removed 1 Snakemake lock(s) left in {locks} by a run that was killed (pid {dead} on here)"
    assert not list(locks.iterdir()) and json.loads((tmp_path / OWNER).read_text())["pid"] == 12
    # a run that ends leaves no locks: the next run records itself, whoever held the directory before
    (tmp_path / OWNER).write_text(json.dumps({"pid": int(dead), "host": "elsewhere"}))
    assert take_over_stale_locks(tmp_path, pid=13, host="here") is None
    assert json.loads((tmp_path / OWNER).read_text()) == {"pid": 13, "host": "here"}


def test_a_live_run_keeps_its_locks(tmp_path):
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", "snakemake"])
    try:
        deadline = time.monotonic() + 20  # until the child has replaced its image (a fork still shows pytest's)
        while b"snakemake" not in Path(f"/proc/{live.pid}/cmdline").read_bytes() and time.monotonic() < deadline:
            time.sleep(0.01)
        (tmp_path / "locks").mkdir()
        (tmp_path / "locks" / "0.output.lock").write_text("a\n")
        (tmp_path / OWNER).write_text(json.dumps({"pid": live.pid, "host": "here"}))
        assert take_over_stale_locks(tmp_path, pid=os.getpid(), host="here") is None
        assert (tmp_path / "locks" / "0.output.lock").exists()
        assert json.loads((tmp_path / OWNER).read_text())["pid"] == live.pid  # still the live run's
    finally:
        live.kill()
        live.wait()


@pytest.mark.pipeline("interrupted")
@pytest.mark.pipeline("snakemake")
def test_ctrl_c_then_kill_9_then_the_same_command_gives_the_uninterrupted_run_s_report(tiny_runs):
    interrupted, plain = tiny_runs["interrupted"], tiny_runs["snakemake"]
    first, second, last = interrupted.results
    assert "interrupt.py: SIGINT sent after" in first.stdout, first.stdout[-2000:]
    assert "steps (100%) done" not in first.stdout, first.stdout[-2000:]  # Ctrl-C stopped it: not run to the end
    assert "interrupt.py: SIGKILL sent after" in second.stdout, second.stdout[-2000:]
    assert "by a run that was killed" in second.stdout + last.stdout + last.stderr  # the killed run's locks
    pipelines.assert_same_tables(interrupted.workdir, plain.workdir)
