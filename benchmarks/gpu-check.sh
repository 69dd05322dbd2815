#!/usr/bin/env bash
# The GPU checks, in one run on a CUDA node (issue 19): each step's log and exit status under OUTDIR, a line per
# step in OUTDIR/summary.txt, and the figures in OUTDIR/*.json.
#
#   bash benchmarks/gpu-check.sh OUTDIR [SECONDS_PER_STEP_SCALE]
#   GPU_CHECK_SKIP="bench-train-paper bench-translate-paper" bash benchmarks/gpu-check.sh OUTDIR  (steps left out)
#
# 1. tests/cli/test_cuda.py: the fast path against the eager path on CUDA (loss, gradients, attention weights; losses of
#    20 updates to 1e-5 in fp32), CUDA against the CPU, batched search against the CPU's and one sentence at a time,
#    bf16 against fp32, CUDA-graphed updates against ungraphed ones, and `nmt train --device cuda` (with and without
#    CUDA graphs) twice and after SIGKILL to the same numbers.
# 2. nmt bench train --preset paper --compare-eager: Luong et al.'s 4x1000 models (50K vocabularies, batch 128) and
#    Peter et al.'s RNNsearch, as the preset trains them (bf16, CUDA graphs where the model can have them) and by
#    the eager fp32 path, in turn.
# 3. The tiny preset end to end with profiles/local, every model job on CUDA (NMT_JOBS_PER_GPU jobs at a
#    time share the GPU); then every training log is checked for "device cuda" and counted for ", CUDA graphs".
# 4. nmt bench translate --preset paper: greedy and beam search of global (general) + feed on the GPU.
# Steps run in turn (timings are the GPU's alone); one failing does not stop the others.
set -uo pipefail
out=$(realpath -m "${1:-gpu-check}")
scale=${2:-1}
mkdir -p "$out"
cd "$(dirname "$0")/.."
summary="$out/summary.txt"
: > "$summary"

logs_saying() {  # logs_saying TEXT DIR: "N of M" training logs of the tiny run in DIR that contain TEXT
    echo "$(grep -l "$1" "$2"/logs/tiny/*/train/*.log 2>/dev/null | wc -l) of $(ls "$2"/logs/tiny/*/train/*.log 2>/dev/null | wc -l)"
}

step() {  # step NAME SECONDS COMMAND...: run COMMAND with a time limit, its output in NAME.log
    local name=$1 limit=$2 start rc
    shift 2
    if [[ " ${GPU_CHECK_SKIP:-} " == *" $name "* ]]; then echo "$name: skipped (GPU_CHECK_SKIP)" | tee -a "$summary"; return; fi
    start=$(date +%s)
    timeout --signal=TERM --kill-after=10 "$(( limit * scale ))" "$@" > "$out/$name.log" 2>&1
    rc=$?
    echo "$name: exit $rc, $(( $(date +%s) - start )) s" | tee -a "$summary"
}

{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn",
              torch.backends.cudnn.version(), torch.cuda.get_device_name(), "bf16", torch.cuda.is_bf16_supported())'
  nproc; } >> "$summary" 2>&1

# (-m 'not slow': test_cuda_graphs' slow tests compile the graphed step on the CPU, two minutes that check no GPU)
step pytest-cuda 110 python3 -m pytest -q -p no:cacheprovider -m "not slow" tests/cli/test_cuda.py \
    tests/unit/test_cuda_graphs.py tests/unit/test_devices.py

luong="base base_reverse base_reverse_dropout global_location global_location_feed local_p_general_feed
       global_dot_feed global_general_feed local_m_dot_feed local_m_general_feed local_p_dot_feed global_concat_feed
       local_m_concat_feed local_p_concat_feed global_dot_dropout_feed rnnsearch rnnsearch_guided rnnsearch_tf_frozen
       rnnsearch_tf_guided"
# shellcheck disable=SC2086
step bench-train-paper 120 nmt bench train --preset paper --device cuda --compare-eager --updates 10 --warmup 3 \
    --systems $luong --out "$out/throughput-paper-cuda.json"

export NMT_JOBS_PER_GPU=${NMT_JOBS_PER_GPU:-8} NMT_GPU_LOCK_DIR="$out/gpu-locks"
snakemake -n --quiet rules --config preset=tiny > "$out/tiny-plan.txt" 2>&1
step tiny-snakemake 150 snakemake --workflow-profile profiles/local --config preset=tiny \
    --resources gpu="$NMT_JOBS_PER_GPU" --cores "$(nproc)" --keep-going
{ echo "tiny: jobs that claimed a GPU, by command (nmt/base/devices.py claims.log):"
  cut -f4 "$NMT_GPU_LOCK_DIR/claims.log" 2>/dev/null | awk '{print "  " $2, $3}' | sort | uniq -c
  echo "tiny: training logs saying 'device cuda': $(logs_saying "device cuda" .); graphed: $(logs_saying ", CUDA graphs" .)"
  echo "tiny: trainings without a finished epoch: $(grep -L "\] epoch [0-9]*: " logs/tiny/*/train/*.log 2>/dev/null | tr '\n' ' ')"
  echo "tiny: $(ls reports/tiny/*.html 2>/dev/null | wc -l) report page(s), $(ls reports/tiny/*.csv 2>/dev/null | wc -l) table CSVs"
} | tee -a "$summary"

step bench-translate-paper 40 nmt bench translate --preset paper --device cuda --compare-eager --min-time 0.5 \
    --systems global_general_feed --out "$out/translate-paper-cuda.json"

tar -czf "$out/tiny-run.tgz" logs/tiny reports/tiny $(ls -d results/tiny/*/models/*/metrics.jsonl results/tiny/*/scores \
    2>/dev/null) 2>/dev/null || true
