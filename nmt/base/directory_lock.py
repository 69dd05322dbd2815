"""One process at a time in an output directory: a training holds its directory's lock while it runs, so that a
second one aimed at it stops at once instead of mixing its files with the first's.

The lock is an advisory lock (flock) on ``DIR/.lock``, which the kernel releases when the holding process ends,
however it ends: a lock file left by a killed process holds nothing and is simply taken over. The file records the
holder (pid, host) for the message the next process gives."""

from __future__ import annotations

import fcntl
import json
import os
import socket
from pathlib import Path

from .errors import UserError

LOCK_FILE = ".lock"


class DirectoryBusy(UserError):
    """Another process holds the directory."""


class DirectoryLock:
    """Holds ``directory``'s lock from construction until ``release()`` or the end of the process."""

    def __init__(self, directory: str | Path, what: str = "process"):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.path = self.directory / LOCK_FILE
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = self._holder()
            os.close(self._fd)
            raise DirectoryBusy(
                f"{self.directory}: another {what} is writing here ({holder}); wait for it to end "
                "or stop it, then run this again"
            ) from None
        os.ftruncate(self._fd, 0)
        os.write(self._fd, json.dumps({"pid": os.getpid(), "host": socket.gethostname()}).encode())

    def _holder(self) -> str:
        try:
            holder = json.loads(self.path.read_text(encoding="utf-8"))
            return f"pid {int(holder['pid'])} on {holder['host']}"
        except (OSError, ValueError, KeyError, TypeError):
            return "a process that has not said who it is yet"

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor releases the flock
            self._fd = None
