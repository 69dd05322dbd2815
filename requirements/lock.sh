#!/usr/bin/env bash
# requirements/cpu.lock: every package of the CPU install (the workflow and test extras) pinned with its hashes, for
# CPython 3.11 on x86-64 Linux (the CI machine), torch left out: it is installed first (the CPU wheel here, a GPU
# user's CUDA build there) and the lock's other pins apply to either. Made with uv (`pip install uv`):
#
#   bash requirements/lock.sh          # after changing pyproject.toml's dependencies; commit the new lock
#
# torch's own dependencies are resolved against its CPU build (no nvidia-* packages): from the PyTorch CPU index,
# or from a directory holding the CPU wheel (TORCH_CPU_WHEELS, e.g. /opt/wheels).
set -euo pipefail
cd "$(dirname "$0")/.."
source=(--index https://download.pytorch.org/whl/cpu)
[ -n "${TORCH_CPU_WHEELS:-}" ] && source=(--find-links "$TORCH_CPU_WHEELS")
uv pip compile pyproject.toml --extra workflow --extra test --generate-hashes --no-emit-package torch \
    --python-version 3.11 --python-platform x86_64-manylinux_2_28 --constraint requirements/torch-cpu.txt \
    "${source[@]}" --custom-compile-command "bash requirements/lock.sh" -o requirements/cpu.lock
