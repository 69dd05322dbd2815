"""Where every file of a run lives: the one layout that the Snakemake rules, the generated dvc.yaml, training's
inputs and the report share.

Each path is a template whose fields are the Snakemake wildcards of the rules that write it ({preset}, {pair}:
the table task, {system}, {split} or {testset}), so a rule names its output with the template itself and Python
code fills it with :func:`path`. Data of a task lives under data/{preset}/{pair}; what the pipeline computes
from it under results/{preset}/{pair}; the report under reports/{preset}.
"""
from __future__ import annotations

RAW = "data/{preset}/{pair}/raw"
RAW_SIDE = RAW + "/{split}.{side}"
GOLD = RAW + "/{split}.gold"
RAW_STATS = RAW + "/stats.json"

PREPARED = "data/{preset}/{pair}/prepared"
PREPARED_SIDE = PREPARED + "/{split}.{side}"
PREPARED_TENSORS = PREPARED + "/{split}.pt"
PREP_STATS = PREPARED + "/prep.json"

RESULTS = "results/{preset}/{pair}"
MODELS = RESULTS + "/models"
MODEL_DIR = MODELS + "/{system}"
MODEL = MODEL_DIR + "/model.pt"
MODEL_INFO = MODEL_DIR + "/model.json"
CHECKPOINT = MODEL_DIR + "/checkpoint.pt"
METRICS = MODEL_DIR + "/metrics.jsonl"
METRICS_CSV = MODEL_DIR + "/metrics.csv"

TRANSLATION = RESULTS + "/translations/{system}.{testset}.txt"
POSITIONS = RESULTS + "/translations/{system}.{testset}.pos"
UNK_TRANSLATION = RESULTS + "/translations/{system}.{testset}.unk.txt"
UNK_DICTIONARY = RESULTS + "/unk/dictionary.tsv"
SCORES = RESULTS + "/scores/{system}.{testset}.json"
ATTENTION = RESULTS + "/attention/{system}.{split}.json"

ALIGNMENTS = RESULTS + "/alignments"
LINKS = ALIGNMENTS + "/{system}.{split}.links"  # a model's forced-decoding links (split `train`: guided training)
SOFT_LINKS = ALIGNMENTS + "/{system}.{split}.soft.npz"
PREDICTED_LINKS = ALIGNMENTS + "/{system}.{split}.predicted.links"
MERGED_LINKS = ALIGNMENTS + "/{system}.{split}.merged.links"
MERGED_PREDICTED_LINKS = ALIGNMENTS + "/{system}.{split}.merged.predicted.links"
ALIGNER_LINKS = ALIGNMENTS + "/aligners/{system}.{split}.links"  # a statistical aligner's

BENCHMARK = "results/{preset}/benchmarks/{name}.json"
REPORT = "reports/{preset}"
DVC_PLAN_STAMP = "results/{preset}/dvc-plan.txt"


def path(template: str, **fields: str) -> str:
    """The template with its fields filled in (a missing field is a KeyError naming it)."""
    return template.format(**fields)
