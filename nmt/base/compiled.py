"""Small C libraries compiled on this machine at first use: where they are kept and what compiles them.

The fast engine's kernels (nmt.engine.native), eflomal's seeding library (nmt.base.eflomal_runner) and the MKL library for
AMD processors (nmt.engine.mkl_on_amd) are compiled by the system's C compiler (CC, else cc/gcc/clang: the one Python's
packages and eflomal's build use) into the cache directory (NMT_CACHE_DIR, else $XDG_CACHE_HOME/nmt or ~/.cache/nmt).
This module imports nothing heavy (no torch), so that it can run before torch is loaded.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
from pathlib import Path


def cache_dir() -> Path:
    if os.environ.get("NMT_CACHE_DIR"):
        return Path(os.environ["NMT_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "nmt"


def compiler() -> str | None:
    for name in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if name and shutil.which(name.split()[0]):
            return name
    return None


def compiler_version(cc: str) -> str:
    return subprocess.run([*cc.split(), "--version"], capture_output=True, text=True).stdout


def processor() -> str:
    """What -march=native compiles for: the CPU's model and feature flags."""
    try:
        text = Path("/proc/cpuinfo").read_text()
        lines = [ln for ln in text.splitlines() if ln.startswith(("model name", "flags", "Features"))]
        return "\n".join(sorted(set(lines)))
    except OSError:
        return platform.processor() + platform.machine()


def cached_library(kind: str, key_parts: list[str], build) -> Path:
    """The library `kind` for these key parts (source, flags, compiler, processor: whatever decides its code), built
    by build(target) into cache_dir()/kind/KEY/ when it is not there yet; jobs started together wait on one lock
    while one of them builds it."""
    return cached_file(kind, key_parts, f"{kind}.so", build)


def cached_file(kind: str, key_parts: list[str], name: str, make) -> Path:
    """cache_dir()/kind/KEY/name for these key parts, made by make(target) when it is not there yet (a library, a
    measurement); jobs started together wait on one lock while one of them makes it."""
    key = hashlib.sha256("\0".join(key_parts).encode()).hexdigest()[:16]
    directory = cache_dir() / kind / key
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / name
    if not target.exists():
        with open(directory / "build.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not target.exists():
                make(target)
    return target


def compile_to(cc: str, arguments: list[str], target: Path) -> subprocess.CompletedProcess:
    """Run the compiler with `arguments` + "-o" into a temporary file beside `target`, moved there on success (a
    killed build never leaves a half-written library under the final name)."""
    with tempfile.NamedTemporaryFile(dir=target.parent, suffix=".so", delete=False) as tmp:
        partial = Path(tmp.name)
    done = subprocess.run([*cc.split(), *arguments, "-o", str(partial)], capture_output=True, text=True)
    if done.returncode == 0:
        partial.replace(target)
    else:
        partial.unlink(missing_ok=True)
    return done
