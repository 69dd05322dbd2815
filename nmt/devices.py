"""Which device a job computes on: the one it was told, else a GPU that no other `nmt` job on this machine is
using, else the CPU.

A process that computes on CUDA claims one GPU for as long as it runs, with an exclusive lock on a file named
after the physical device (its entry in CUDA_VISIBLE_DEVICES as the scheduler set it, else its index) in
NMT_GPU_LOCK_DIR (default: <tmp>/nmt-gpu-locks). Jobs started side by side on one machine (Snakemake with
--resources gpu=N, or by hand) therefore land on different GPUs, and a job finding every GPU taken waits for one.
Under SLURM with --gpus=1 each job sees only the GPU it was given, whose lock is always free. The lock goes with
the process: a killed job frees its GPU.
"""
from __future__ import annotations

import fcntl
import os
import re
import sys
import tempfile
import time
from pathlib import Path

import torch

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


def claim_gpu(count: int | None = None, *, poll_seconds: float = 10.0, log=None) -> torch.device:
    """The first of the `count` visible CUDA devices whose lock this process gets (waiting while all are taken);
    the same device on every later call in this process."""
    global _claimed
    if _claimed is not None:
        return _claimed[0]
    count = torch.cuda.device_count() if count is None else count
    directory = lock_dir()
    directory.mkdir(parents=True, exist_ok=True)
    names = [re.sub(r"[^A-Za-z0-9_.-]", "_", p) for p in physical_ids(count)]
    said = False
    while True:
        for index, name in enumerate(names):
            handle = _try_lock(directory / f"gpu-{name}.lock")
            if handle is not None:
                _claimed = (torch.device("cuda", index), handle)
                return _claimed[0]
        if not said:
            (log or _stderr)(f"all {count} GPU(s) are in use by other nmt jobs (locks in {directory}); waiting")
            said = True
        time.sleep(poll_seconds)


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
