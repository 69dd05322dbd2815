"""Where code runs, as plain JSON-able data: the machine, the software and the commit of the code.
Details: docs/internals/base.md."""

from __future__ import annotations

import os
import platform
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any, Callable

CODE_DIR = Path(__file__).resolve().parents[1]  # the nmt package: the code whose commit is recorded
PACKAGES = {
    "torch": "torch",
    "sacrebleu": "sacrebleu",
    "sacremoses": "sacremoses",
    "eflomal": "eflomal",
    "numpy": "numpy",
    "nmt": "nmt-repro",
}  # key in `software` -> distribution name
TIMEOUT_S = 10  # for each command run (git, nvidia-smi)


def _safe(probe: Callable[[], Any]) -> Any:
    """probe(), or None when it raises anything."""
    try:
        return probe()
    except Exception:  # a description must never stop a training or a report
        return None


def _run(command: list[str], cwd: Path | None = None) -> str | None:
    """The command's stdout, or None when it is missing, fails or takes longer than TIMEOUT_S."""
    try:
        out = subprocess.run(
            command, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT_S, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout if out.returncode == 0 else None


# -- hardware ---------------------------------------------------------------------------------------------------
def cpu_model() -> str | None:
    """The CPU's model name: /proc/cpuinfo's first `model name` (Linux on x86), else platform.processor()."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                key, _, value = line.partition(":")
                if key.strip() == "model name" and value.strip():
                    return value.strip()
    except OSError:
        pass
    return platform.processor() or None


def nvidia_driver() -> str | None:
    """The NVIDIA driver's version as nvidia-smi reports it (the first GPU's: one driver serves them all)."""
    out = _run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"])
    lines = [line.strip() for line in (out or "").splitlines() if line.strip()]
    return lines[0] if lines else None


def gpus() -> list[dict]:
    """Each visible CUDA GPU (torch's numbering, CUDA_VISIBLE_DEVICES applied): name and driver; [] without CUDA."""
    import torch

    if not torch.cuda.is_available():
        return []
    driver = _safe(nvidia_driver)
    return [
        {"name": _safe(lambda index=index: torch.cuda.get_device_name(index)), "driver": driver}
        for index in range(torch.cuda.device_count())
    ]


def device_name(device: Any) -> str | None:
    """ "cpu", or a CUDA device's name (e.g. "NVIDIA H100 80GB HBM3"), or the device as torch spells it."""
    import torch

    device = torch.device(device)
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    return device.type if device.type == "cpu" else str(device)


# -- software ---------------------------------------------------------------------------------------------------
def package_version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def torch_cuda() -> str | None:
    """The CUDA version torch was built with (None: a CPU build)."""
    import torch

    return torch.version.cuda


def cudnn_version() -> int | None:
    """cuDNN's version as torch reports it (e.g. 90100), None without cuDNN."""
    import torch

    return torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None


# -- code -------------------------------------------------------------------------------------------------------
def git_commit(short: bool = False) -> str | None:
    """The commit checked out where the nmt package lives (None outside a git checkout, e.g. an installed wheel)."""
    if _run(["git", "ls-files", "--error-unmatch", "--", "__init__.py"], CODE_DIR) is None:
        return None  # not a checkout of this code (or the package inside someone else's repository, untracked)
    out = _run(["git", "rev-parse"] + (["--short"] if short else []) + ["HEAD"], CODE_DIR)
    return (out or "").strip() or None


def git_dirty(directory: Path | None = None) -> bool | None:
    """Whether the checkout holding `directory` (default: the nmt package's) has uncommitted changes to its tracked
    files (modified, staged, deleted or renamed); None where it cannot tell. Untracked files do not count: a log or a
    plot written into the checkout changes no code. Takes no lock (another git command may run meanwhile)."""
    out = _run(["git", "--no-optional-locks", "status", "--porcelain", "--untracked-files=no"], directory or CODE_DIR)
    return None if out is None else bool(out.strip())


# -- the description ------------------------------------------------------------------------------------------
def describe(device: Any = None) -> dict:
    """Where this process runs (module docstring); with `device` (a torch device or its name) also `device`."""
    commit = _safe(git_commit)
    out = {
        "hardware": {
            "cpu": _safe(cpu_model),
            "cpu_count": _safe(os.cpu_count),
            "machine": _safe(platform.machine) or None,
            "gpus": _safe(gpus),
        },
        "software": {
            "os": _safe(platform.platform) or None,
            "python": _safe(platform.python_version) or None,
            "torch": _safe(lambda: package_version("torch")),
            "cuda": _safe(torch_cuda),
            "cudnn": _safe(cudnn_version),
            **{key: _safe(lambda name=name: package_version(name)) for key, name in PACKAGES.items() if key != "torch"},
        },
        "code": {"commit": commit, "dirty": _safe(git_dirty) if commit is not None else None},
    }
    if device is not None:
        out["device"] = _safe(lambda: device_name(device))
    return out
