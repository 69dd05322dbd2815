"""nmt.engine.mkl_on_amd: when the `nmt` command re-executes itself with MKL's processor-based paths, and that the
products it then computes are torch's (to float rounding)."""

import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

from nmt.base import compiled
from nmt.engine import mkl_on_amd

import required

ROOT = Path(__file__).resolve().parents[2]
LINUX_X86 = sys.platform.startswith("linux") and platform.machine() in ("x86_64", "AMD64")


@pytest.mark.parametrize(
    "vendor, environ, expected",
    [
        ("AuthenticAMD", {}, True),
        ("GenuineIntel", {}, False),
        ("AuthenticAMD", {"NMT_MKL_ON_AMD": "0"}, False),  # turned off
        ("AuthenticAMD", {mkl_on_amd.ACTIVE: "1"}, False),  # already re-executed (or a child of such a process)
    ],
)
def test_the_command_re_executes_only_on_an_amd_processor_once(monkeypatch, vendor, environ, expected):
    if not LINUX_X86:
        pytest.skip("LD_PRELOAD on x86 Linux only: wanted() is False elsewhere")
    monkeypatch.setattr(mkl_on_amd, "vendor", lambda: vendor)
    monkeypatch.setattr(mkl_on_amd, "torch_uses_mkl", lambda: True)
    assert mkl_on_amd.wanted(environ) is expected


def test_the_re_executed_process_preloads_the_library_first_and_is_marked():
    env = mkl_on_amd.reexec_environment(Path("/c/shim.so"), {"LD_PRELOAD": "/other.so", "PATH": "/bin"})
    assert env["LD_PRELOAD"] == "/c/shim.so /other.so" and env[mkl_on_amd.ACTIVE] == "1" and env["PATH"] == "/bin"
    assert mkl_on_amd.reexec_environment(Path("/c/shim.so"), {})["LD_PRELOAD"] == "/c/shim.so"


def test_products_with_the_library_preloaded_are_torchs(tmp_path):
    """Whatever the processor (on an Intel one MKL ignores the answer), a process with the library preloaded computes
    the same products as one without, to float rounding."""
    if not LINUX_X86:
        pytest.skip("LD_PRELOAD on x86 Linux only")
    if compiled.compiler() is None:
        required.unavailable("no C compiler")
    env = {**os.environ, "NMT_CACHE_DIR": str(tmp_path)}
    shim = subprocess.run(
        [sys.executable, "-c", "from nmt.engine import mkl_on_amd; print(mkl_on_amd.library())"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert Path(shim).is_file(), shim
    script = (
        "import torch; torch.manual_seed(0); a, b = torch.randn(200, 300), torch.randn(300, 100); "
        "torch.save(a @ b, __import__('sys').argv[1])"
    )
    subprocess.run([sys.executable, "-c", script, str(tmp_path / "plain.pt")], env=env, check=True)
    subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "shim.pt")], env={**env, "LD_PRELOAD": shim}, check=True
    )
    import torch

    torch.testing.assert_close(
        torch.load(tmp_path / "shim.pt"), torch.load(tmp_path / "plain.pt"), atol=1e-4, rtol=1e-5
    )


def test_the_nmt_command_runs_re_executed_exactly_where_wanted(tmp_path):
    """The console entry (nmt.cli.main with no argv) re-executes itself once where wanted() says so, and the
    commands (nmt.cli's command modules) then run in the marked process; elsewhere it runs as it is."""
    if compiled.compiler() is None:
        required.unavailable("no C compiler")
    script = (
        "import os, sys; from nmt.cli import main; print(os.environ.get('NMT_MKL_ON_AMD_ACTIVE'), flush=True); "
        "sys.argv = ['nmt', 'systems', '--preset', 'tiny']; main()"
    )
    env = {**os.environ, "NMT_CACHE_DIR": str(tmp_path)}
    env.pop(mkl_on_amd.ACTIVE, None)
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    starts = [line for line in done.stdout.splitlines() if line in ("None", "1")]
    assert starts == (["None", "1"] if mkl_on_amd.wanted(env) else ["None"])
    assert "base" in done.stdout.splitlines()  # the command ran
