"""A training's pace in its log: a time stamp, updates per second, and the time left of the epoch and of the run.
Details: docs/internals/training.md."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from ..settings.schedule import Schedule

EVERY_S = 300.0  # seconds between two lines within an epoch (where no progress bar is drawn)


def stamp(now: float | None = None) -> str:
    """The local time, to the second, as a log line starts with."""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(now))


def duration(seconds: float) -> str:
    """A time span in its two largest units: 2d03h, 5h07m, 4m09s, 12s; under ten seconds to a tenth (0.4s)."""
    if seconds < 9.95:
        return f"{max(0.0, seconds):.1f}s"
    total = round(seconds)
    days, rest = divmod(total, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d{hours:02d}h"
    if hours:
        return f"{hours}h{minutes:02d}m"
    if minutes:
        return f"{minutes}m{secs:02d}s"
    return f"{secs}s"


@dataclass(frozen=True)
class Bound:
    """How many updates the run has left at most (`updates`), whether that is exact (`exact`: a fixed schedule that
    trains all its epochs) and the setting that sets it (`by`, e.g. "max_epochs 20")."""

    updates: int
    exact: bool
    by: str


def updates_left(
    schedule: Schedule, epoch: int, batches_left: int, batches_per_epoch: int, updates: int, max_updates: int
) -> Bound:
    """The bound on the updates still to come: the rest of 1-based `epoch` (`batches_left`) and `batches_per_epoch`
    for every later epoch the schedule allows, capped by train.max_updates (0: none) after `updates` done."""
    plateau = bool(schedule.plateau)
    by_epochs = batches_left + max(0, schedule.epochs - epoch) * batches_per_epoch
    epochs_by = f"{'max_epochs' if plateau else 'epochs'} {schedule.epochs}"
    if max_updates and max_updates - updates < by_epochs:
        return Bound(max(0, max_updates - updates), not plateau, f"max_updates {max_updates}")
    return Bound(by_epochs, not plateau, epochs_by)


class Pace:
    """The time left of one training, from the speed of its epoch in progress and the cost of its last epoch end."""

    def __init__(self, schedule: Schedule, max_updates: int, clock: Callable[[], float] = time.monotonic):
        self.schedule, self.max_updates, self.clock = schedule, max_updates, clock
        self.epoch_end_s = 0.0  # the last epoch's dev evaluation and checkpoint (none measured yet: 0)
        self.last_line = clock()

    def due(self) -> bool:
        """Whether a line within the epoch is due (EVERY_S seconds since the last line); counts it as written."""
        now = self.clock()
        if now - self.last_line < EVERY_S:
            return False
        self.last_line = now
        return True

    def ended_epoch(self, seconds: float) -> None:
        """An epoch's end (evaluation, records, checkpoint) took `seconds`; its line was just written."""
        self.epoch_end_s = seconds
        self.last_line = self.clock()

    def left(self, epoch: int, done: int, batches: int, elapsed: float, updates: int) -> str:
        """`left: ...` for 1-based `epoch` with `done` of its `batches` trained in `elapsed` seconds, `updates` in
        all: the epoch's time left (while it runs) and the run's."""
        per_update = elapsed / done if done else 0.0
        bound = updates_left(self.schedule, epoch, batches - done, batches, updates, self.max_updates)
        ends = (done < batches) + math.ceil(max(0, bound.updates - (batches - done)) / max(batches, 1))
        run = bound.updates * per_update + ends * self.epoch_end_s
        in_epoch = min(batches - done, bound.updates)
        epoch_part = f"epoch {duration(in_epoch * per_update)}, " if in_epoch > 0 else ""
        return f"left: {epoch_part}run {'' if bound.exact else 'at most '}{duration(run)} ({bound.by})"


def rate(updates: int, seconds: float) -> str:
    """Updates per second, as the log lines say it."""
    return f"{updates / seconds if seconds > 0 else 0.0:.1f} updates/s"
