"""Which device a job computes on: the one it was told, else a GPU that no other `nmt` job on this machine is
using, else the CPU.
Details: docs/internals/base.md."""

from __future__ import annotations

import fcntl
import os
import re
import sys
import tempfile
import time
from pathlib import Path

import torch

from .errors import ConfigError

_claimed: tuple[torch.device, object] | None = None  # (device, open lock file) held by this process


def lock_dir() -> Path:
    return Path(os.environ.get("NMT_GPU_LOCK_DIR") or Path(tempfile.gettempdir()) / "nmt-gpu-locks")


def physical_ids(count: int) -> list[str]:
    """What each visible CUDA device is on the machine: its CUDA_VISIBLE_DEVICES entry (an index or a UUID),
    else its own index."""
    visible = [v.strip() for v in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if v.strip()]
    return [visible[i] if i < len(visible) else str(i) for i in range(count)]


def _try_lock(path: Path):
    handle = open(path, "a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        return None
    handle.seek(0)
    handle.truncate()
    handle.write(f"{os.getpid()}\n")
    handle.flush()
    return handle


def jobs_per_gpu() -> int:
    """NMT_JOBS_PER_GPU: how many nmt jobs may share one GPU (default 1)."""
    value = os.environ.get("NMT_JOBS_PER_GPU", "1")
    if not value.isdigit() or int(value) < 1:
        raise ConfigError(f"NMT_JOBS_PER_GPU: expected a whole number of jobs, at least 1, got {value!r}")
    return int(value)


def lock_names(count: int, slots: int = 1) -> list[tuple[int, str]]:
    """(device index, lock file name) of each of the `slots` places on each of the `count` visible devices, every
    device's first place before any device's second (jobs spread over the GPUs before they share one)."""
    names = [re.sub(r"[^A-Za-z0-9_.-]", "_", p) for p in physical_ids(count)]
    return [
        (index, f"gpu-{name}.lock" if slot == 0 else f"gpu-{name}.{slot}.lock")
        for slot in range(slots)
        for index, name in enumerate(names)
    ]


def claim_gpu(count: int | None = None, *, poll_seconds: float = 10.0, log=None) -> torch.device:
    """The first of the `count` visible CUDA devices whose lock this process gets (waiting while all are taken);
    the same device on every later call in this process."""
    global _claimed
    if _claimed is not None:
        return _claimed[0]
    count = torch.cuda.device_count() if count is None else count
    directory = lock_dir()
    directory.mkdir(parents=True, exist_ok=True)
    places = lock_names(count, jobs_per_gpu())
    said = False
    while True:
        for index, lock_name in places:
            handle = _try_lock(directory / lock_name)
            if handle is not None:
                _claimed = (torch.device("cuda", index), handle)
                _record_claim(directory, _claimed[0])
                return _claimed[0]
        if not said:
            (log or _stderr)(f"all {count} GPU(s) are in use by other nmt jobs (locks in {directory}); waiting")
            said = True
        time.sleep(poll_seconds)


def _record_claim(directory: Path, device: torch.device) -> None:
    """One line in the lock directory's claims.log: when, which process and command, which device (what a run's
    GPU jobs computed on, afterwards)."""
    line = f"{time.strftime('%Y-%m-%dT%H:%M:%S')}\t{os.getpid()}\t{device}\t{' '.join(sys.argv)}\n"
    with open(directory / "claims.log", "a", encoding="utf-8") as log:
        log.write(line)


def release_gpu() -> None:
    """Give this process' GPU back (the lock also goes when the process ends)."""
    global _claimed
    if _claimed is not None:
        _claimed[1].close()
        _claimed = None


def pick_device(name: str | None = None) -> torch.device:
    """`name` when given (cpu, cuda, cuda:1); else a free GPU when CUDA is available; else the CPU."""
    if name:
        return torch.device(name)
    if torch.cuda.is_available():
        return claim_gpu()
    return torch.device("cpu")


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def set_threads(threads: int | None) -> None:
    """Use exactly the threads the scheduler granted, so jobs side by side do not oversubscribe the CPU."""
    if threads:
        torch.set_num_threads(threads)
        try:
            torch.set_num_interop_threads(1)
        except RuntimeError:  # only settable before the first parallel work; harmless if already set
            pass
