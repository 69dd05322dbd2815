# The published GPU reference run (workflow/presets/small-gpu.yaml, docs/reproductions/small-gpu), one seed's part or
# all of them, on one GPU machine: Snakemake makes the parts' files (`nmt seed-targets`), their kernels side by side
# under NVIDIA's MPS where the machine has it (benchmarks/mps.sh; NMT_MPS=0 leaves it off, to measure the
# difference), NMT_JOBS_PER_GPU jobs sharing the GPU: 16 under MPS (one per CPU core of the GPU machine, which feed
# it; with 16 the H200 trained 349K target tokens/s aggregate against 136K time-sliced with 12), 8 without. The plan
# starts whole seeds in order and a seed's longest trainings first (nmt.pipeline.priorities), so a call stopped by
# its time limit leaves whole seeds. Then each part is exported without models into OUTDIR/part-seedN.tgz, with the
# logs and a summary that says what the call trained and its aggregate target tokens/s (nmt.bench.run_throughput).
#
#   bash benchmarks/reference-gpu-prepare.sh                          # here, once: .gpu-carry/ (wheels, corpus,
#                                                                     # the prepared data and unk dictionaries)
#   bash benchmarks/reference-gpu.sh SEEDS OUTDIR [MINUTES]           # there, carrying .gpu-carry
#
# SEEDS: one seed (1), several (1,2) or `all` (the preset's train.seeds). MINUTES (default 8) bounds Snakemake;
# trainings stopped by it write their checkpoints, and the same command again on the same warm machine (it keeps the
# working tree) resumes them. Once a part is whole, here:
#   tar -xzf part-seedN.tgz -C docs/reproductions/small-gpu/results
# and once every seed's part is in (before that, add --partial: fewer than half the scores files are there):
#   nmt report --preset small-gpu --results docs/reproductions/small-gpu/results --data data/small-gpu \
#       --out docs/reproductions/small-gpu
set -uo pipefail
seeds=${1:?seeds: N, N,M or all}
out=$(realpath -m "${2:?outdir}")
minutes=${3:-8}
[[ "$minutes" =~ ^[1-9][0-9]*$ ]] || { echo "reference-gpu.sh: MINUTES: a whole number of minutes, got '$minutes'" >&2; exit 2; }
mkdir -p "$out"
cd "$(dirname "$0")/.."
summary="$out/summary.txt"
preset=small-gpu
started=$(date +%s)

{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null || echo "no nvidia-smi"
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda,
      torch.cuda.get_device_name() if torch.cuda.is_available() else "(no CUDA device)")'
  nproc; } >> "$summary" 2>&1

# The rules call `nmt` and Snakemake runs them: the scripts of the Python that holds torch come first on PATH.
PATH="$(dirname "$(python3 -c 'import sys; print(sys.executable)')"):$PATH"
export PATH
if ! python3 -c 'import snakemake, sacremoses, eflomal, nmt' 2>/dev/null; then
    python3 -m pip install --quiet --no-index --find-links .gpu-carry/wheels \
        eflomal 'snakemake>=8.20,<10' -e . > "$out/install.log" 2>&1 \
        || { echo "install: failed (install.log)" | tee -a "$summary"; exit 1; }
fi
# The preset's mirror is ../shared/data: the carried copy stands in for it.
if [ ! -d ../shared/data/multi30k ]; then
    mkdir -p ../shared && ln -sfn "$PWD/.gpu-carry/data" ../shared/data
fi

if [ "$seeds" = all ]; then
    seeds=$(python3 -c 'import sys; from nmt import config; from nmt.config.plan import preset_seeds
print(",".join(map(str, preset_seeds(config.load_params("params.yaml", sys.argv[1])))))' "$preset")
fi
IFS=, read -r -a seed_list <<< "$seeds"
targets=()
for seed in "${seed_list[@]}"; do
    # a seed the preset does not train stops the run here (one line from nmt, exit 2): with no targets Snakemake
    # would make the whole preset
    part_list=$(nmt seed-targets --preset "$preset" --seed "$seed" 2> "$out/seed-targets.err") \
        || { tee -a "$summary" < "$out/seed-targets.err" >&2; exit 2; }
    mapfile -t part <<< "$part_list"
    targets+=("${part[@]}")
done
[ "${#targets[@]}" -gt 0 ] || { echo "seeds $seeds: no files to make" | tee -a "$summary" >&2; exit 2; }
# The prepared data and unk dictionaries made on the CPU (reference-gpu-prepare.sh), put in place once and marked
# up to date (--touch: the copies' times say nothing of which was made first)
if [ -f .gpu-carry/run/targets.txt ] && [ ! -e "data/$preset" ]; then
    cp -a .gpu-carry/run/data .gpu-carry/run/results . \
        && mapfile -t made < .gpu-carry/run/targets.txt \
        && snakemake --touch --cores 1 --config preset="$preset" -- "${made[@]}" > "$out/touch.log" 2>&1 \
        || { echo "carried data: could not be put in place ($out/touch.log)" | tee -a "$summary"; exit 1; }
fi
mps=0
if [ "${NMT_MPS:-1}" != 0 ]; then
    mps_env=$(bash benchmarks/mps.sh start "$out/mps" 2>> "$summary")
    [ -n "$mps_env" ] && mps=1 && eval "$mps_env"
fi
jobs_per_gpu=${NMT_JOBS_PER_GPU:-$([ "$mps" = 1 ] && echo 16 || echo 8)}
echo "seeds $seeds: ${#targets[@]} files to make, $jobs_per_gpu jobs sharing the GPU, at most $minutes min" \
    | tee -a "$summary"
export NMT_JOBS_PER_GPU=$jobs_per_gpu NMT_GPU_LOCK_DIR="$out/gpu-locks"
# the trainings' totals before, so that this call's aggregate throughput is what it trained (a resumed run's
# earlier calls excluded)
python3 -m nmt.bench.run_throughput "results/$preset" > "$out/trained-before.json" 2>> "$summary"
snakemake_started=$(date +%s)
timeout --signal=TERM --kill-after=30 "$(( minutes * 60 ))" \
    snakemake --workflow-profile profiles/local --config preset="$preset" --resources gpu="$jobs_per_gpu" \
    --cores "$(nproc)" --keep-going --rerun-incomplete "${targets[@]}" > "$out/snakemake.log" 2>&1
rc=$?
snakemake_s=$(( $(date +%s) - snakemake_started ))
bash benchmarks/mps.sh stop "$out/mps" 2>> "$summary"
echo "snakemake: exit $rc after $snakemake_s s ($(( $(date +%s) - started )) s with the set-up); $(grep -c 'steps (100%) done' "$out/snakemake.log") finished" \
    | tee -a "$summary"
python3 -m nmt.bench.run_throughput "results/$preset" --since "$out/trained-before.json" --seconds "$snakemake_s" \
    2>&1 | tee -a "$summary"
grep -h "epoch .*dev ppl\|stopped\|converged" logs/"$preset"/*/train/*.log 2>/dev/null | tail -n 60 > "$out/trainings.txt"

for seed in "${seed_list[@]}"; do
    if nmt export-run --preset "$preset" --seed "$seed" --out "$out/part" >> "$summary" 2>&1; then
        tar -czf "$out/part-seed$seed.tgz" -C "$out/part" . && rm -rf "$out/part"
        echo "part-seed$seed.tgz: $(du -h "$out/part-seed$seed.tgz" | cut -f1)" | tee -a "$summary"
    else
        rm -rf "$out/part"
        echo "seed $seed's part is not whole yet: run the same command again on this machine" | tee -a "$summary"
    fi
done
tar -czf "$out/logs.tgz" logs/"$preset" 2>/dev/null || true
rm -rf "$NMT_GPU_LOCK_DIR"
