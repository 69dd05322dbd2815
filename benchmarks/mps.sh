#!/usr/bin/env bash
# NVIDIA's Multi-Process Service for the jobs that share one GPU (benchmarks/reference-gpu.sh): without it, the
# processes of the small-model trainings are time-sliced on the GPU, one context at a time; with it, their kernels run
# side by side. Nothing in a training changes (same batches, schedule and stopping rule): only how the GPU interleaves
# the processes' kernels.
#
#   bash benchmarks/mps.sh start DIR     # start the daemon with its pipes and logs in DIR; prints the environment
#                                        # lines the jobs need (eval them) or one line saying why MPS is not used
#   bash benchmarks/mps.sh stop DIR      # stop it again (nothing to do where it was not started)
#
# Where the daemon is missing (no NVIDIA driver utilities, a CPU machine) or will not start (no GPU, no permission),
# `start` says so in one line on stderr, prints nothing to eval and exits 0: the run goes on time-sliced.
set -uo pipefail
action=${1:?start or stop}
dir=$(realpath -m "${2:?directory for the daemon pipes and logs}")
control=${NMT_MPS_CONTROL:-nvidia-cuda-mps-control}

case "$action" in
start)
    if ! command -v "$control" > /dev/null 2>&1; then
        echo "MPS: not used ($control not found): the GPU's jobs are time-sliced" >&2
        exit 0
    fi
    mkdir -p "$dir/pipe" "$dir/log"
    if ! CUDA_MPS_PIPE_DIRECTORY="$dir/pipe" CUDA_MPS_LOG_DIRECTORY="$dir/log" "$control" -d > "$dir/start.log" 2>&1
    then
        why=$(tr '\n' ' ' < "$dir/start.log")
        echo "MPS: not used, the daemon did not start: $why" >&2
        exit 0
    fi
    touch "$dir/started"
    echo "export CUDA_MPS_PIPE_DIRECTORY=$dir/pipe CUDA_MPS_LOG_DIRECTORY=$dir/log"
    echo "MPS: started, pipes in $dir/pipe" >&2
    ;;
stop)
    if [ -e "$dir/started" ]; then
        echo quit | CUDA_MPS_PIPE_DIRECTORY="$dir/pipe" CUDA_MPS_LOG_DIRECTORY="$dir/log" "$control" > /dev/null 2>&1
        rm -f "$dir/started"
        echo "MPS: stopped" >&2
    fi
    ;;
*)
    echo "usage: bash benchmarks/mps.sh start|stop DIR" >&2
    exit 2
    ;;
esac
