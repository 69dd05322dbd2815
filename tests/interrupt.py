"""Run a command and interrupt it as a user or a machine would, once it has done some of its work.

    python tests/interrupt.py SIGNAL STEPS COMMAND...

The command runs in a session of its own; once its output says that STEPS of its steps are done (Snakemake's
"N of M steps" lines), SIGNAL goes to its whole process group: SIGINT is Ctrl-C in a terminal, SIGKILL a killed
run and its jobs (a lost node). Exits 0 once the command has ended, however it ended, and says how; 1 when the
command ended before the point of interruption (then nothing was tested)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys

STEP = re.compile(r"^(\d+) of (\d+) steps")


def main(argv: list[str]) -> int:
    sig, steps, command = getattr(signal, argv[0]), int(argv[1]), argv[2:]
    # Ctrl-C reaches a command run in a terminal, whose SIGINT and SIGQUIT are at their defaults; a test runner
    # started in the background by a non-interactive shell (nohup ... &) passes them on ignored, and the command
    # would never see the SIGINT sent below.
    for ignored in (signal.SIGINT, signal.SIGQUIT):
        signal.signal(ignored, signal.SIG_DFL)
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
    )
    sent = False
    for line in process.stdout:
        sys.stdout.write(line)
        match = STEP.match(line.strip())
        if not sent and match and int(match[1]) >= steps:
            os.killpg(process.pid, sig)
            sent = True
            print(f"interrupt.py: {sig.name} sent after {match[1]} of {match[2]} steps", flush=True)
    process.wait()
    if not sent:
        print(f"interrupt.py: the command ended (exit {process.returncode}) before {steps} steps", flush=True)
        return 1
    if sig == signal.SIGKILL:  # the jobs of the killed group may outlive the pipe: wait until none is left
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    print(f"interrupt.py: the command ended with exit {process.returncode}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
