#!/usr/bin/env bash
# What benchmarks/reference-gpu.sh needs on the GPU machine and cannot fetch or should not make there (it reaches no
# network, and its minutes are for training), put in .gpu-carry/ for the device tool to carry (ignored by .gitignore,
# so that the runs there record a clean tree):
#   .gpu-carry/wheels   the Python packages its image lacks (Snakemake and its dependencies, sacremoses, pooch,
#                       jsonschema: wheels for its Python 3.12; eflomal as a wheel built here with a Python 3.12);
#                       torch is the machine's own CUDA build
#   .gpu-carry/data     the preset's corpus from the mirror (../shared/data/multi30k); carried, never committed
#   .gpu-carry/run      the preset's prepared data and unk dictionaries, made here on the CPU by the pipeline itself
#                       (data/small-gpu, results/small-gpu/PAIR/unk): the GPU machine starts training at once
#                       instead of spending its first minute on tokenising, binarising and eflomal
#
#   bash benchmarks/reference-gpu-prepare.sh            # here, with the package registries reachable
#
# PYTHON312 names the Python 3.12 that builds the eflomal wheel (default: pyenv's 3.12 or python3.12 on PATH).
set -euo pipefail
cd "$(dirname "$0")/.."
carry=.gpu-carry
preset=small-gpu
python=${PYTHON:-python3}
python312=${PYTHON312:-$(ls -d "$HOME"/.pyenv/versions/3.12*/bin/python 2>/dev/null | tail -n 1)}
python312=${python312:-$(command -v python3.12 || true)}
[ -n "$python312" ] || { echo "reference-gpu-prepare: no Python 3.12 to build eflomal's wheel with (set PYTHON312)" >&2; exit 2; }
rm -rf "$carry/wheels" "$carry/run" && mkdir -p "$carry/wheels" "$carry/data" "$carry/run"

# connection_pool (a Snakemake dependency) is published as source only: a pure-Python wheel of it first.
"$python" -m pip download --quiet --no-deps -d "$carry/src" connection_pool
"$python" -m pip wheel --quiet --no-deps -w "$carry/wheels" "$carry"/src/connection_pool-*.tar.gz
"$python" -m pip download --quiet --only-binary :all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    --find-links "$carry/wheels" -d "$carry/wheels" \
    'snakemake>=8.20,<10' 'sacremoses>=0.0.53' 'pooch>=1.7' 'jsonschema>=4.17'
# eflomal is published as source only: built here for the GPU machine's Python (3.12), not there (52 s of its time)
"$python312" -m pip wheel --quiet --no-deps -w "$carry/wheels" 'eflomal>=2.0,<3'
rm -rf "$carry/src"

# The image's own packages (device tool, KINDS.md) that surely satisfy these needs need not travel; the rest do, in
# case the image's versions do not fit.
for name in pyyaml regex requests urllib3 idna certifi charset_normalizer psutil jinja2 markupsafe; do
    rm -f "$carry"/wheels/"${name}"-[0-9]*.whl
done

rm -rf "$carry/data/multi30k"
cp -r ../shared/data/multi30k "$carry/data/multi30k"

# The preset's data and unk dictionaries, made by the same rules the GPU machine would run
mapfile -t pairs < <("$python" -c 'import sys; from nmt import config
print("\n".join(config.load_params("params.yaml", sys.argv[1])["data"]["tasks"]))' "$preset")
made=()
for pair in "${pairs[@]}"; do
    made+=("data/$preset/$pair/prepared/prep.json" "results/$preset/$pair/unk/dictionary.tsv")
done
snakemake --cores "$(nproc)" --config preset="$preset" -- "${made[@]}" > "$carry/prepare.log" 2>&1 \
    || { echo "reference-gpu-prepare: making the data failed: $carry/prepare.log" >&2; exit 1; }
for pair in "${pairs[@]}"; do
    mkdir -p "$carry/run/data/$preset" "$carry/run/results/$preset/$pair"
    cp -a "data/$preset/$pair" "$carry/run/data/$preset/$pair"
    cp -a "results/$preset/$pair/unk" "$carry/run/results/$preset/$pair/unk"
done
printf '%s\n' "${made[@]}" > "$carry/run/targets.txt"
du -sh "$carry/wheels" "$carry/data" "$carry/run"
