"""Snakemake's working-directory locks that a killed run left behind, recognised and removed, so that the same
command run again goes on without `--unlock` typed by hand.
Details: docs/internals/pipeline.md."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

OWNER = "nmt-owner.json"


def _alive(pid: int) -> bool:
    """Whether ``pid`` is a running Snakemake (where /proc tells: a reused pid of another program is not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    try:
        return b"snakemake" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return True


def take_over_stale_locks(snakemake_dir: str | Path, pid: int | None = None, host: str | None = None) -> str | None:
    """Remove the locks in ``snakemake_dir`` (``.snakemake``) when the run that recorded itself there ran on this
    host and its process is gone; then record this run (``pid``, default: this process) as the owner. Returns a line
    saying what was removed, or None."""
    directory = Path(snakemake_dir)
    pid = os.getpid() if pid is None else pid
    host = socket.gethostname() if host is None else host
    owner_file, locks = directory / OWNER, directory / "locks"
    said = None
    try:
        owner = json.loads(owner_file.read_text(encoding="utf-8"))
        previous, previous_host = int(owner["pid"]), str(owner["host"])
    except (OSError, ValueError, KeyError, TypeError):
        previous = previous_host = None
    stale = list(locks.glob("*.lock")) if locks.is_dir() else []
    if previous is not None and previous != pid and previous_host == host and _alive(previous):
        return None  # another run of this directory is going on: Snakemake's own lock check speaks
    if stale and previous_host != host:
        return None  # locks of a run that recorded no owner, or of another host's: nothing here can tell if it lives
    if stale:
        for lock in stale:
            lock.unlink(missing_ok=True)
        said = (
            f"removed {len(stale)} Snakemake lock(s) left in {locks} by a run that was killed "
            f"(pid {previous} on {host})"
        )
    directory.mkdir(parents=True, exist_ok=True)
    tmp = owner_file.with_name(f".{OWNER}.{pid}")
    tmp.write_text(json.dumps({"pid": pid, "host": host}), encoding="utf-8")
    os.replace(tmp, owner_file)
    return said
