"""Live training curves: TensorBoard event files beside a training's metrics file (nmt.records.metrics).
Details: docs/internals/training.md."""

from __future__ import annotations

import contextlib
import itertools
import math
import os
import socket
import time
from pathlib import Path
from typing import Callable

from ..records.metrics import NAME as METRICS_NAME

CURVES_DIR = "tensorboard"  # beside the metrics file, in the model's directory
RUNNING_EVERY = 100  # updates between two points of the running train perplexity
BEST_DEV_PPL, DEV_BLEU = "hparams/best_dev_ppl", "hparams/dev_bleu"  # the HPARAMS tab's metrics

try:  # optional: the `curves` extra
    from tensorboard.compat.proto.event_pb2 import Event, SessionLog
    from tensorboard.compat.proto.summary_pb2 import Summary
    from tensorboard.summary.writer.record_writer import RecordWriter
    from torch.utils.tensorboard.summary import hparams as hparams_summaries
except ImportError:  # pragma: no cover - exercised where tensorboard is not installed
    Event = None

_FILE_NUMBER = itertools.count()  # two event files of one process in one second get different names


def available() -> bool:
    """Whether the tensorboard package is there to write the events with."""
    return Event is not None


def hparams_of(system: str, config: dict) -> dict[str, float | str]:
    """A training's hyperparameters as the HPARAMS tab lists them: `system`, and every key of the resolved config's
    `model` and `train` sections as `section.key`. Numbers stay numbers; a flag, a missing value (null) and a nested
    setting are text (true, none, {within: 0.01, ...}), so that the same key has one type in every system."""

    def shown(value) -> float | str:
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, (int, float)):
            return value
        if value is None:
            return "none"
        if isinstance(value, dict):
            return "{" + ", ".join(f"{key}: {shown(item)}" for key, item in value.items()) + "}"
        if isinstance(value, (list, tuple)):
            return "[" + ", ".join(str(shown(item)) for item in value) + "]"
        return str(value)

    out: dict[str, float | str] = {"system": system}
    for section in ("model", "train"):
        for key, value in sorted((config.get(section) or {}).items()):
            out[f"{section}.{key}"] = shown(value)
    return out


class Curves:
    """The event file of one training (no-ops without tensorboard, or once its directory failed)."""

    def __init__(self, out_dir: str | Path, system: str, resume_from: int = 0, log: Callable[[str], None] = print):
        self.system, self.log = system, log
        self.directory = Path(out_dir) / CURVES_DIR
        self.path: Path | None = None
        self.writer = None
        self.session_end = None  # the hparams session's end, written when the training ends
        if not available():
            log(
                f"[{system}] no live curves: the tensorboard package is not installed "
                f"(pip install -e '.[curves]'); {METRICS_NAME} has every evaluation"
            )
            return
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            self.path = self.directory / (
                f"events.out.tfevents.{int(time.time()):010d}.{socket.gethostname()}.{os.getpid()}.{next(_FILE_NUMBER)}"
            )
            self.writer = RecordWriter(open(self.path, "wb"))
            self._add(Event(wall_time=time.time(), file_version="brain.Event:2"))
            if resume_from:
                # a killed process's events after the update this one resumes from (its checkpoint's) are dropped
                step = resume_from + 1
                self._add(Event(wall_time=time.time(), step=step, file_version="brain.Event:2"))
                self._add(Event(wall_time=time.time(), step=step, session_log=SessionLog(status=SessionLog.START)))
            self._flush()
        except OSError as err:
            self._off(err)

    @property
    def on(self) -> bool:
        """Whether events are written (tensorboard there, and no fault of the directory so far)."""
        return self.writer is not None

    # -- writing, each fault turning the curves off -------------------------------------------------------------
    def _add(self, event) -> None:
        self.writer.write(event.SerializeToString())

    def _flush(self) -> None:
        self.writer.flush()

    def _summaries(self, step: int, summaries) -> None:
        """Add summaries at `step`, flushed at once."""
        if self.writer is None:
            return
        try:
            for summary in summaries:
                self._add(Event(wall_time=time.time(), step=int(step), summary=summary))
            self._flush()
        except OSError as err:
            self._off(err)

    def _scalars(self, step: int, values: dict[str, float]) -> None:
        """Add one point per tag at `step`, flushed at once (a few hundred bytes per call)."""
        self._summaries(
            step, [Summary(value=[Summary.Value(tag=tag, simple_value=float(value))]) for tag, value in values.items()]
        )

    def _off(self, err: OSError) -> None:
        """One warning naming the directory (or file) and the reason; no more events from this training."""
        where = err.filename if isinstance(err.filename, str) else None
        if isinstance(err, FileExistsError) or isinstance(err, NotADirectoryError):
            reason = "a file where a directory should be"
        else:
            reason = err.strerror or str(err) or type(err).__name__
        where = where or str(self.path or self.directory)
        self.log(
            f"[{self.system}] live curves off: {where}: {reason}; the training goes on "
            f"({METRICS_NAME} has every evaluation)"
        )
        writer, self.writer = self.writer, None
        if writer is not None:
            with contextlib.suppress(OSError):  # what is still buffered cannot be written either
                writer.close()

    # -- what a training records ------------------------------------------------------------------------------
    def wants_running(self, updates: int) -> bool:
        """Whether this update adds a point of the running train perplexity (the caller reads the sums for it)."""
        return self.writer is not None and updates % RUNNING_EVERY == 0

    def running(self, updates: int, loss_sum: float, tokens: int) -> None:
        """The epoch's train perplexity so far, every RUNNING_EVERY updates (the learning rate, constant within an
        epoch, is drawn per epoch)."""
        if self.wants_running(updates) and tokens:
            self._scalars(updates, {"train/running_ppl": math.exp(loss_sum / tokens)})

    def session(self, hparams: dict[str, float | str]) -> None:
        """The HPARAMS tab's record of this training: its hyperparameters (hparams_of) and which metrics to show."""
        if self.writer is None:
            return
        experiment, start, self.session_end = hparams_summaries(hparams, dict.fromkeys((BEST_DEV_PPL, DEV_BLEU), 0.0))
        self._summaries(0, [experiment, start])

    def evaluation(
        self, updates: int, dev_ppl: float, dev_bleu: float | None = None, best_dev_ppl: float | None = None
    ) -> None:
        """An evaluation's dev perplexity (and dev BLEU, with train.best_by: dev_bleu), and the lowest dev perplexity
        so far (the HPARAMS tab's)."""
        values = {"dev/ppl": dev_ppl}
        if dev_bleu is not None:
            values["dev/bleu"] = dev_bleu
        if best_dev_ppl is not None:
            values[BEST_DEV_PPL] = best_dev_ppl
        self._scalars(updates, values)

    def finished(self, updates: int, dev_bleu: float | None) -> None:
        """The training ended: its model's dev BLEU (None: it cannot translate) and the session marked done."""
        if dev_bleu is not None:
            self._scalars(updates, {DEV_BLEU: dev_bleu})
        if self.session_end is not None:
            self._summaries(updates, [self.session_end])

    def epoch(self, updates: int, record: dict) -> None:
        """An epoch's record (the metrics file's line): its train perplexity, learning rate and speed."""
        self._scalars(
            updates,
            {
                "train/ppl": record["train_ppl"],
                "train/lr": record["lr"],
                "train/tgt_tokens_per_s": record["tgt_tokens_per_s"],
            },
        )

    def close(self) -> None:
        """The event file closed; never raises (a fault here turns the curves off like any other)."""
        if self.writer is None:
            return
        try:
            self._flush()
        except OSError as err:
            self._off(err)
            return
        writer, self.writer = self.writer, None
        with contextlib.suppress(OSError):
            writer.close()
