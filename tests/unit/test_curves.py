"""Live curves (nmt.training.curves): without the tensorboard package a training says once that curves are off and writes
nothing else; a curves directory that cannot be created or written (a file in its place, no permission, a full disk)
turns the curves off with one warning naming it as text, never a traceback, and the rest of the training's records
go on."""

import errno
import io
import os

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from nmt.training import curves


def test_without_tensorboard_a_training_says_once_that_curves_are_off(tmp_path, monkeypatch):
    monkeypatch.setattr(curves, "Event", None)
    said = []
    live = curves.Curves(tmp_path, "base", log=said.append)
    assert len(said) == 1 and "no live curves" in said[0] and "[base]" in said[0]
    assert not live.wants_running(curves.RUNNING_EVERY)
    live.running(curves.RUNNING_EVERY, 10.0, 5)
    live.evaluation(10, 3.5)
    live.epoch(10, {"train_ppl": 4.0, "lr": 1.0, "tgt_tokens_per_s": 100.0})
    live.close()
    assert not (tmp_path / curves.CURVES_DIR).exists() and len(said) == 1


def record_everything(live):
    live.running(curves.RUNNING_EVERY, 10.0, 5)
    live.evaluation(10, 3.5, 12.0)
    live.epoch(10, {"train_ppl": 4.0, "lr": 1.0, "tgt_tokens_per_s": 100.0})
    live.close()


def test_the_event_file_holds_every_point_tensorboard_reads(tmp_path):
    said = []
    record_everything(curves.Curves(tmp_path, "base", log=said.append))
    assert said == []
    events = EventAccumulator(str(tmp_path / curves.CURVES_DIR))
    events.Reload()
    assert sorted(events.Tags()["scalars"]) == [
        "dev/bleu",
        "dev/ppl",
        "train/lr",
        "train/ppl",
        "train/running_ppl",
        "train/tgt_tokens_per_s",
    ]
    assert [(e.step, e.value) for e in events.Scalars("dev/ppl")] == [(10, 3.5)]
    assert [(e.step, e.value) for e in events.Scalars("train/running_ppl")] == [(100, pytest.approx(7.389056, 1e-6))]


def test_a_resumed_training_purges_the_events_after_its_checkpoint(tmp_path):
    first = curves.Curves(tmp_path, "base", log=print)
    for step in (10, 20, 30):
        first.evaluation(step, float(step))
    first.close()
    resumed = curves.Curves(tmp_path, "base", resume_from=20, log=print)  # the checkpoint was at update 20
    resumed.evaluation(30, 99.0)
    resumed.close()
    events = EventAccumulator(str(tmp_path / curves.CURVES_DIR))
    events.Reload()
    assert [(e.step, e.value) for e in events.Scalars("dev/ppl")] == [(10, 10.0), (20, 20.0), (30, 99.0)]


def test_a_file_where_the_curves_directory_should_be_turns_the_curves_off_with_one_warning(tmp_path):
    (tmp_path / curves.CURVES_DIR).write_text("not a directory\n")
    said = []
    live = curves.Curves(tmp_path, "base", log=said.append)
    record_everything(live)
    assert said == [
        f"[base] live curves off: {tmp_path / curves.CURVES_DIR}: a file where a directory should be; "
        "the training goes on (metrics.jsonl has every evaluation)"
    ]
    assert not live.wants_running(curves.RUNNING_EVERY)


class FailingFile(io.RawIOBase):
    """An event file on a disk that fails: the first `room` bytes are written, then every write raises `code`."""

    def __init__(self, code, room):
        self.code, self.room, self.written = code, room, 0

    def writable(self):
        return True

    def write(self, data):
        if self.written + len(data) > self.room:
            raise OSError(self.code, os.strerror(self.code))
        self.written += len(data)
        return len(data)


@pytest.mark.parametrize("code, room", [(errno.ENOSPC, 0), (errno.ENOSPC, 300), (errno.EACCES, 0), (errno.EDQUOT, 300)])
def test_a_full_or_unwritable_curves_file_turns_the_curves_off_with_one_warning_naming_it(
    tmp_path, monkeypatch, code, room
):
    opened = []

    def failing_open(path, mode):
        opened.append(path)
        if room == 0 and code == errno.EACCES:
            raise PermissionError(code, os.strerror(code), str(path))
        return FailingFile(code, room)

    monkeypatch.setattr(curves, "open", failing_open, raising=False)
    said = []
    live = curves.Curves(tmp_path, "base", log=said.append)
    for step in range(0, 2000, curves.RUNNING_EVERY):
        live.running(step, 10.0, 5)
        live.evaluation(step, 3.5)
    live.close()
    assert len(said) == 1, said
    assert said[0] == (
        f"[base] live curves off: {opened[0]}: {os.strerror(code)}; the training goes on "
        "(metrics.jsonl has every evaluation)"
    )
    assert "b'" not in said[0] and isinstance(opened[0], type(tmp_path))
