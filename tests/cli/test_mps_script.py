"""benchmarks/mps.sh, which the GPU reference run starts so that the jobs sharing one GPU run their kernels side by
side: on a machine without NVIDIA's MPS daemon (every CI machine) it says so in one line and the run goes on; with a
daemon (a stand-in script recording how it is called) it is started with its pipes in the run's directory, and the
jobs get the environment that finds it; stopped again at the end."""

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "mps.sh"


def mps(*args: str, control: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(SCRIPT), *args],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        env={"PATH": "/usr/bin:/bin", "NMT_MPS_CONTROL": control},
    )


def stand_in(tmp_path: Path, status: int, says: str = "") -> Path:
    """A nvidia-cuda-mps-control that records its arguments, stdin and pipe directory, and exits with ``status``."""
    script = tmp_path / "mps-control"
    script.write_text(
        f'#!/bin/bash\necho "$* | $(cat 2>/dev/null </dev/stdin | tr -d "\\n") | '
        f'$CUDA_MPS_PIPE_DIRECTORY" >> {tmp_path}/calls\necho "{says}"\nexit {status}\n'
    )
    script.chmod(0o755)
    return script


def test_without_the_daemon_the_run_goes_on_time_sliced(tmp_path):
    done = mps("start", str(tmp_path / "mps"), control="no-such-mps-control")
    assert done.returncode == 0 and done.stdout == ""
    assert done.stderr == "MPS: not used (no-such-mps-control not found): the GPU's jobs are time-sliced\n"
    assert mps("stop", str(tmp_path / "mps"), control="no-such-mps-control").returncode == 0


def test_a_daemon_that_will_not_start_is_one_line_and_no_environment(tmp_path):
    control = stand_in(tmp_path, 1, says="no CUDA-capable device is detected")
    done = mps("start", str(tmp_path / "mps"), control=str(control))
    assert done.returncode == 0 and done.stdout == ""
    assert done.stderr == "MPS: not used, the daemon did not start: no CUDA-capable device is detected \n"
    assert mps("stop", str(tmp_path / "mps"), control=str(control)).stderr == ""  # nothing was started


def test_the_daemon_is_started_in_the_run_s_directory_and_stopped_again(tmp_path):
    control = stand_in(tmp_path, 0)
    run = tmp_path / "mps"
    done = mps("start", str(run), control=str(control))
    assert done.returncode == 0
    assert done.stdout == f"export CUDA_MPS_PIPE_DIRECTORY={run}/pipe CUDA_MPS_LOG_DIRECTORY={run}/log\n"
    stopped = mps("stop", str(run), control=str(control))
    assert stopped.returncode == 0 and stopped.stderr == "MPS: stopped\n"
    calls = (tmp_path / "calls").read_text().splitlines()
    assert calls[0].startswith("-d |") and calls[0].endswith(f"| {run}/pipe")
    assert calls[1] == f" | quit | {run}/pipe"  # `quit` on its standard input, to the same pipes


def test_an_unknown_action_is_refused():
    done = mps("restart", "/tmp/x", control="no-such-mps-control")
    assert done.returncode == 2 and done.stderr.startswith("usage: bash benchmarks/mps.sh start|stop DIR")
