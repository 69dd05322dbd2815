"""A training's log lines: a time stamp, updates per second and the time left of the epoch and of the run, bounded by
the stopping rule (nmt.training.progress), from short CPU trainings through the command line."""

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from nmt.settings.schedule import Schedule
from nmt.training import progress

from training_runs import train_cmd

ROOT = Path(__file__).resolve().parents[2]
STAMP = r"(?P<stamp>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)"
SPAN = r"(?:\d+\.\ds|\d+(?:d\d\dh|h\d\dm|m\d\ds|s))"  # nmt.training.progress.duration
EPOCH_LINE = re.compile(
    STAMP + r" \[feed\] epoch (?P<epoch>\d+): lr [\d.e-]+, train ppl [\d.]+, "
    r"dev ppl [\d.]+, (?P<rate>[\d.]+) updates/s, \d+ tgt tok/s; "
    r"left: (?:run (?P<bound>at most )?" + SPAN + r" \((?P<by>[a-z_]+ \d+)\)"
    r"|none, the last epoch)$"
)
INNER_LINE = re.compile(
    STAMP + r" \[feed\] epoch (?P<epoch>\d+) at (?P<done>[\d,]+)/(?P<batches>[\d,]+) "
    r"updates: train ppl [\d.]+, (?P<rate>[\d.]+) updates/s; left: epoch "
    + SPAN
    + r", run (?P<bound>at most )?"
    + SPAN
    + r" \((?P<by>[a-z_]+ \d+)\)$"
)

# The nmt command with a progress line after every update (nmt.training.progress.EVERY_S 0), as a job's log gets one every
# few minutes; stderr is a pipe, so no progress bar is drawn.
EVERY_UPDATE = """
import sys
from nmt.engine import mkl_on_amd
mkl_on_amd.reexec_if_useful()
import nmt.training.progress
nmt.training.progress.EVERY_S = 0.0
from nmt.cli import main
sys.exit(main(sys.argv[1:]))
"""


def with_preset(root: Path, name: str, **train) -> str:
    """A preset `name` beside the workspace's `unit` one, with these train settings over it."""
    preset = yaml.safe_load((root / "presets" / "unit.yaml").read_text())
    preset["train"].update(train)
    (root / "presets" / f"{name}.yaml").write_text(yaml.safe_dump(preset))
    return name


def logged(command: list[str]) -> tuple[list[str], float, float]:
    """The command's stderr lines, and the wall-clock times before and after it ran."""
    before = time.time()
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    return result.stderr.splitlines(), before, time.time()


def stamped_within(match: re.Match, before: float, after: float) -> None:
    when = time.mktime(time.strptime(match["stamp"], "%Y-%m-%d %H:%M:%S"))
    assert int(before) <= when <= after, (match["stamp"], before, after)


def test_every_epoch_line_has_a_time_stamp_its_speed_and_the_run_s_time_left(workspace, tmp_path):  # noqa: F811
    """The fixed schedule trains exactly its 3 epochs: the time left is no bound (`run 1.2s (epochs 3)`), and the
    last epoch says so."""
    root, preset = workspace
    lines, before, after = logged(train_cmd(root, preset, tmp_path / "fixed"))
    epochs = [line for line in lines if "] epoch " in line]
    matches = [EPOCH_LINE.match(line) for line in epochs]
    assert len(epochs) == 3 and all(matches), epochs
    for number, match in enumerate(matches, 1):
        stamped_within(match, before, after)
        assert int(match["epoch"]) == number and float(match["rate"]) > 0
    assert [m["by"] for m in matches] == ["epochs 3", "epochs 3", None] and not any(m["bound"] for m in matches)
    assert epochs[-1].endswith("; left: none, the last epoch")


def test_under_the_plateau_rule_the_run_s_time_left_is_at_most_the_cap(workspace, tmp_path):  # noqa: F811
    root, _ = workspace
    preset = with_preset(root, "plateau", plateau={"within": 0.001, "halvings": 0, "patience": 5, "max_epochs": 2})
    lines, _, _ = logged(train_cmd(root, preset, tmp_path / "plateau"))
    matches = [EPOCH_LINE.match(line) for line in lines if "] epoch " in line]
    assert len(matches) == 2 and all(matches), lines
    first = matches[0]
    assert (first["bound"], first["by"]) == ("at most ", "max_epochs 2")
    assert matches[-1].string.endswith("; left: none, the last epoch")


def test_a_job_log_gets_lines_within_an_epoch_and_max_updates_caps_the_run(workspace, tmp_path):  # noqa: F811
    """Without a progress bar (stderr not a terminal) a line comes every nmt.training.progress.EVERY_S within the epoch: its
    updates so far, speed, the epoch's and the run's time left; train.max_updates, the tighter cap here, is named."""
    root, _ = workspace
    preset = with_preset(
        root, "capped", plateau={"within": 0.001, "halvings": 0, "patience": 5, "max_epochs": 20}, max_updates=60
    )
    command = train_cmd(root, preset, tmp_path / "capped")
    lines, before, after = logged([sys.executable, "-c", EVERY_UPDATE, *command[3:]])
    inner = [INNER_LINE.match(line) for line in lines if "updates: train ppl" in line]
    assert inner and all(inner), lines
    batches = int(inner[0]["batches"].replace(",", ""))
    assert [int(m["done"].replace(",", "")) for m in inner if m["epoch"] == "1"] == list(range(1, batches))
    for match in inner:
        stamped_within(match, before, after)
        assert match["bound"] == "at most " and match["by"] == "max_updates 60" and float(match["rate"]) > 0
    epochs = [EPOCH_LINE.match(line) for line in lines if "tgt tok/s" in line]
    assert all(epochs) and epochs[-1].string.endswith("left: none, the last epoch")


@pytest.mark.parametrize(
    "seconds, shown",
    [
        (0.04, "0.0s"),
        (4.26, "4.3s"),
        (12.4, "12s"),
        (249, "4m09s"),
        (5 * 3600 + 7 * 60 + 29, "5h07m"),
        (2 * 86400 + 3 * 3600, "2d03h"),
    ],
)
def test_durations_in_their_two_largest_units(seconds, shown):
    assert progress.duration(seconds) == shown


def test_the_run_s_bound_counts_every_allowed_epoch_and_max_updates_caps_it():
    plateau = Schedule(epochs=10, plateau={"within": 0.01, "halvings": 2, "patience": 2, "max_epochs": 10})
    assert progress.updates_left(plateau, 3, 40, 100, 260, 0) == progress.Bound(740, False, "max_epochs 10")
    assert progress.updates_left(plateau, 3, 40, 100, 260, 500) == progress.Bound(240, False, "max_updates 500")
    fixed = Schedule(epochs=4, halve_after=2)
    assert progress.updates_left(fixed, 4, 0, 100, 400, 0) == progress.Bound(0, True, "epochs 4")
    assert progress.updates_left(fixed, 1, 100, 100, 0, 250) == progress.Bound(250, True, "max_updates 250")


def test_the_time_left_is_the_bound_at_this_epoch_s_speed_plus_each_epoch_s_end():
    """60 of 100 updates in 30 s (0.5 s each), an epoch's end (evaluation, checkpoint) of 20 s, at most 2 more
    epochs: this epoch 40 updates (20 s); the run 240 updates (120 s) and 3 epoch ends (60 s)."""
    plateau = Schedule(epochs=3, plateau={"within": 0.01, "halvings": 2, "patience": 2, "max_epochs": 3})
    clock = iter([0.0, 100.0, 100.0])
    pace = progress.Pace(plateau, 0, clock=lambda: next(clock))
    pace.ended_epoch(20.0)
    assert pace.left(1, 60, 100, 30.0, 60) == "left: epoch 20s, run at most 3m00s (max_epochs 3)"
    assert pace.left(3, 100, 100, 50.0, 300) == "left: run at most 0.0s (max_epochs 3)"
