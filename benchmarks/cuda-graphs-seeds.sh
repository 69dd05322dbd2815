#!/usr/bin/env bash
# Does a CUDA-graphed training end where an ungraphed one does? Graphed updates equal ungraphed ones to float
# rounding (tests/cli/test_cuda.py), but over a whole training those roundings, and the dropout masks a graph draws from
# its own generator, move the result as another seed would. This trains the tiny preset's en-de systems with
# train.cuda_graphs false and true, once per seed and precision, and prints each run's final dev perplexity: the
# two columns' means should differ by less than their seed spread.
#
#   PRECS="bf16 fp32" SEEDS="1 2 3" SYSTEMS="global_dot_feed global_general_feed" PAR=8 \
#       bash benchmarks/cuda-graphs-seeds.sh OUTDIR
#
# Lines: SYSTEM x_PRECISION_GRAPHED_SEED dev ppl P G (G: 1 when the log says the run was graphed). Needs a GPU
# (DEVICE=cpu runs it without graphs, for a dry run). Temporary presets workflow/presets/x_*.yaml are removed after.
set -uo pipefail
out=$(realpath -m "$1"); mkdir -p "$out"
cd "$(dirname "$0")/.."
trap 'rm -rf "$out/m" workflow/presets/x_*.yaml' EXIT
snakemake --cores "$(nproc)" data/tiny/en-de/prepared/prep.json --config preset=tiny > "$out/prep.log" 2>&1 \
    || { tail "$out/prep.log"; exit 1; }
PRECS="${PRECS:-bf16 fp32}" SEEDS="${SEEDS:-1 2 3}" python3 - <<'PY'
import itertools, os, yaml
base = yaml.safe_load(open("workflow/presets/tiny.yaml"))
for prec, graphs, seed in itertools.product(os.environ["PRECS"].split(), [False, True],
                                            map(int, os.environ["SEEDS"].split())):
    preset = yaml.safe_load(yaml.safe_dump(base))
    preset["train"].update(precision=prec, cuda_graphs=graphs, seed=seed)
    yaml.safe_dump(preset, open(f"workflow/presets/x_{prec}_{int(graphs)}_{seed}.yaml", "w"))
PY
export out DEVICE=${DEVICE:-cuda}
for system in ${SYSTEMS:-global_dot_feed global_general_feed local_m_general_feed}; do
  for preset in workflow/presets/x_*.yaml; do echo "$system $(basename "$preset" .yaml)"; done
done | xargs -P "${PAR:-8}" -L1 bash -c '
  nmt train --params params.yaml --preset "$1" --table workflow/tables/luong2015_table4.yaml --system "$0" \
      --data data/tiny/en-de/prepared --out "$out/m/$0-$1" --threads 1 --device "$DEVICE" > "$out/$0-$1.log" 2>&1
  echo "$0 $1 $(grep -h "] epoch" "$out/$0-$1.log" | tail -1 | grep -o "dev ppl [0-9.]*") \
$(grep -c ", CUDA graphs$" "$out/$0-$1.log")"' | sort -V | tee "$out/ppl.txt"
