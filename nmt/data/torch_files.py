"""Writing torch files whole: a prepared split, a model, a checkpoint (nmt.data.prepare, nmt.models.io).

torch.save into a temporary file beside the target, moved over it once complete (nmt.base.atomic.write_atomic): a kill
or a full disk leaves the previous file as it was. A write that fails is an OSError naming the target, never torch's
RuntimeError: torch's zip writer turns the OSError of its handle (a full disk, a quota) into a RuntimeError of its
own ("unexpected pos ...", "PytorchStreamWriter failed writing file"), which says nothing of the disk.
"""
from __future__ import annotations

from pathlib import Path

import torch

from ..base.atomic import write_atomic


class _WriteErrors:
    """A file handle that remembers the OSError its write raised, for save_torch to raise instead of torch's."""

    def __init__(self, handle):
        self.handle, self.error = handle, None

    def write(self, data) -> int:
        try:
            return self.handle.write(data)
        except OSError as err:
            self.error = self.error or err
            raise

    def flush(self) -> None:
        try:
            self.handle.flush()
        except OSError as err:
            self.error = self.error or err
            raise

    def __getattr__(self, name):
        return getattr(self.handle, name)


def save_torch(obj, path: str | Path) -> None:
    """torch.save(obj) to ``path``, whole or not at all (module doc)."""
    def write(handle) -> None:
        recording = _WriteErrors(handle)
        try:
            torch.save(obj, recording)
        except RuntimeError:
            if recording.error is None:
                raise
            raise recording.error from None

    write_atomic(Path(path), write)
