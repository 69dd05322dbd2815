"""MKL's code paths for the processor's instructions on AMD processors, for the `nmt` command.
Details: docs/internals/engine.md."""

from __future__ import annotations

import importlib.util
import os
import platform
import sys
from pathlib import Path

from ..base.compiled import cached_library, compile_to, compiler

SOURCE = "int mkl_serv_intel_cpu_true(void) { return 1; }\n"
ACTIVE = "NMT_MKL_ON_AMD_ACTIVE"  # set in the re-executed process (and inherited by its children)


def vendor() -> str:
    """The processor's vendor as Linux reports it (AuthenticAMD, GenuineIntel, ...), or ""."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("vendor_id"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


def torch_uses_mkl() -> bool:
    """Whether torch's CPU library is there to take the preloaded definition (found without importing torch)."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.origin:
        return False
    return (Path(spec.origin).parent / "lib" / "libtorch_cpu.so").exists()


def wanted(environ=os.environ) -> bool:
    """Whether the `nmt` command should re-execute itself with the library preloaded."""
    return (
        environ.get("NMT_MKL_ON_AMD", "1") != "0"
        and environ.get(ACTIVE) != "1"
        and sys.platform.startswith("linux")
        and platform.machine() in ("x86_64", "AMD64")
        and vendor() == "AuthenticAMD"
        and torch_uses_mkl()
    )


def library() -> Path | None:
    """The compiled one-line library (cached), or None where no compiler can build it."""
    cc = compiler()
    if cc is None:
        return None

    def build(target: Path) -> None:
        source = target.with_suffix(".c")
        source.write_text(SOURCE)
        done = compile_to(cc, ["-shared", "-fPIC", "-O2", str(source)], target)
        if done.returncode != 0:
            raise RuntimeError(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "compile error")

    try:  # keyed by the compiler's name only: this runs at every start of `nmt`, and one line of C compiles alike
        return cached_library("mkl_on_amd", [SOURCE, cc], build)
    except (OSError, RuntimeError):
        return None


def reexec_environment(shim: Path, environ=os.environ) -> dict[str, str]:
    """The environment of the re-executed process: the library first in LD_PRELOAD, and the ACTIVE mark."""
    preload = " ".join(part for part in (str(shim), environ.get("LD_PRELOAD", "")) if part)
    return {**environ, "LD_PRELOAD": preload, ACTIVE: "1"}


def reexec_if_useful() -> None:
    """Execute this process again (same interpreter, same arguments) with the library preloaded, where wanted and
    possible; otherwise return and let the command run as it is."""
    if not wanted():
        return
    shim = library()
    if shim is None:
        return
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], reexec_environment(shim))


def active() -> bool:
    """Whether this process runs with MKL's processor-based paths on an AMD processor (for the logs and benchmarks)."""
    return os.environ.get(ACTIVE) == "1"
