#!/usr/bin/env bash
# What benchmarks/reference-gpu.sh needs on the GPU machine and cannot fetch there (it reaches no network), put in
# .gpu-carry/ for the device tool to carry (ignored by .gitignore, so that the runs there record a clean tree):
#   .gpu-carry/wheels   the Python packages its image lacks (Snakemake and its dependencies, sacremoses, pooch,
#                       jsonschema: wheels for its Python 3.12; eflomal as its source, built there); torch is
#                       the machine's own CUDA build
#   .gpu-carry/data     the preset's corpus from the mirror (../shared/data/multi30k); carried, never committed
#
#   bash benchmarks/reference-gpu-prepare.sh            # here, with the package registries reachable
set -euo pipefail
cd "$(dirname "$0")/.."
carry=.gpu-carry
python=${PYTHON:-python3}
rm -rf "$carry/wheels" && mkdir -p "$carry/wheels" "$carry/data"

# connection_pool (a Snakemake dependency) is published as source only: a pure-Python wheel of it first.
"$python" -m pip download --quiet --no-deps -d "$carry/src" connection_pool
"$python" -m pip wheel --quiet --no-deps -w "$carry/wheels" "$carry"/src/connection_pool-*.tar.gz
"$python" -m pip download --quiet --only-binary :all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    --find-links "$carry/wheels" -d "$carry/wheels" \
    'snakemake>=8.20,<10' 'sacremoses>=0.0.53' 'pooch>=1.7' 'jsonschema>=4.17'
"$python" -m pip download --quiet --no-deps -d "$carry/wheels" 'eflomal>=2.0,<3'  # source only
rm -rf "$carry/src"

# The image's own packages (device tool, KINDS.md) that surely satisfy these needs need not travel; the rest do, in
# case the image's versions do not fit.
for name in pyyaml regex requests urllib3 idna certifi charset_normalizer psutil jinja2 markupsafe; do
    rm -f "$carry"/wheels/"${name}"-[0-9]*.whl
done

rm -rf "$carry/data/multi30k"
cp -r ../shared/data/multi30k "$carry/data/multi30k"
du -sh "$carry/wheels" "$carry/data"
