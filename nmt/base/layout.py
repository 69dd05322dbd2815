"""Where every file of a run lives: the one layout that the Snakemake rules, the generated dvc.yaml, training's
inputs and the report share.
Details: docs/internals/base.md."""

from __future__ import annotations

from pathlib import Path

DATA_ROOT = "data/{preset}"  # what `nmt report --data` names
RESULTS_ROOT = "results/{preset}"  # what `nmt report --results` names

RAW = DATA_ROOT + "/{pair}/raw"
RAW_SIDE = RAW + "/{split}.{side}"
GOLD = RAW + "/{split}.gold"
RAW_REFERENCE = RAW + "/{split}.raw_ref"  # a test split's raw reference, for detokenised BLEU
RAW_STATS = RAW + "/stats.json"

PREPARED = DATA_ROOT + "/{pair}/prepared"
PREPARED_SIDE = PREPARED + "/{split}.{side}"
PREPARED_TENSORS = PREPARED + "/{split}.pt"
PREP_STATS = PREPARED + "/prep.json"
VOCAB = PREPARED + "/vocab.{side}"

RESULTS = RESULTS_ROOT + "/{pair}"
MODELS = RESULTS + "/models"
MODEL_DIR = MODELS + "/{system}"
MODEL = MODEL_DIR + "/model.pt"
MODEL_INFO = MODEL_DIR + "/model.json"
CHECKPOINT = MODEL_DIR + "/checkpoint.pt"
METRICS = MODEL_DIR + "/metrics.jsonl"
METRICS_CSV = MODEL_DIR + "/metrics.csv"
EVALUATIONS = MODEL_DIR + "/evaluations.jsonl"  # every dev evaluation, with train.eval_every

TRANSLATION = RESULTS + "/translations/{system}.{testset}.txt"
POSITIONS = RESULTS + "/translations/{system}.{testset}.pos"
UNK_TRANSLATION = RESULTS + "/translations/{system}.{testset}.unk.txt"
UNK_DICTIONARY = RESULTS + "/unk/dictionary.tsv"
SCORES_DIR = RESULTS + "/scores"
SCORES = SCORES_DIR + "/{system}.{testset}.json"
ATTENTION = RESULTS + "/attention/{system}.{split}.json"

ALIGNMENTS = RESULTS + "/alignments"
LINKS = ALIGNMENTS + "/{system}.{split}.links"  # a model's forced-decoding links (split `train`: guided training)
SOFT_LINKS = ALIGNMENTS + "/{system}.{split}.soft.npz"
PREDICTED_LINKS = ALIGNMENTS + "/{system}.{split}.predicted.links"
MERGED_LINKS = ALIGNMENTS + "/{system}.{split}.merged.links"
MERGED_PREDICTED_LINKS = ALIGNMENTS + "/{system}.{split}.merged.predicted.links"
ALIGNER_LINKS = ALIGNMENTS + "/aligners/{system}.{split}.links"  # a statistical aligner's

BENCHMARK = RESULTS_ROOT + "/benchmarks/{name}.json"
JOB_TIMING = RESULTS_ROOT + "/benchmarks/{pair}/{step}/{name}.tsv"  # a Snakemake job's `benchmark:` file
REPORT = "reports/{preset}"
REPORT_PAGE = REPORT + "/index.html"
REPORT_SUMMARY = REPORT + "/summary.json"
REPORT_CLAIMS = REPORT + "/claims.json"  # the claims' verdicts
# DVC's metrics: one small file per scored translation (its BLEU, chrF, perplexity) and the verdict counts, since
# `dvc metrics show` prints one row per file and one column per key of them all
REPORT_HEADLINE = REPORT + "/metrics.{pair}.{system}.{testset}.json"
REPORT_VERDICTS = REPORT + "/metrics.claims.json"
REPORT_LEARNING_CURVES = REPORT + "/{table}_learning_curves.png"  # DVC's plots (images: `dvc plots show` offline)
DVC_PLAN_STAMP = RESULTS_ROOT + "/dvc-plan.txt"

DOWNLOADS = "data/downloads"  # fetched corpus files, one directory per corpus
DOWNLOADED_CORPUS = DOWNLOADS + "/{corpus}"
# measurements a user makes and commits (`nmt bench train` / `nmt bench translate`; `nmt estimate` reads the first)
THROUGHPUT = "benchmarks/throughput-{preset}-{device}.json"
TRANSLATION_SPEED = "benchmarks/translate-{preset}-{device}.json"
# a preset's published reference run (docs/reproductions/README.md): its trainings' records, which also say what each costs
REFERENCE_RESULTS = "docs/reproductions/{preset}/results"
REFERENCE_METRICS = REFERENCE_RESULTS + "/{pair}/models/{system}/metrics.jsonl"


def path(template: str, **fields: str) -> str:
    """The template with its fields filled in (a missing field is a KeyError naming it)."""
    return template.format(**fields)


class _Unfilled(dict):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def pattern(template: str, **fields: str) -> str:
    """The template with the given fields filled in and the others left as wildcards (a rule for one task:
    ``pattern(RAW_SIDE, pair="en-de")`` is ``data/{preset}/en-de/raw/{split}.{side}``)."""
    return template.format_map(_Unfilled(fields))


def relative(root: str, template: str, **fields: str) -> str:
    """The template's path below ``root``, a template it starts with (e.g. RESULTS_ROOT), fields filled in."""
    if not template.startswith(root + "/"):
        raise ValueError(f"{template} does not lie under {root}")
    return path(template[len(root) + 1 :], **fields)


def under(directory: str | Path, root: str, template: str, **fields: str) -> Path:
    """The template's file when ``directory`` is where ``root`` lies: how a command given
    ``--results results/demo`` (RESULTS_ROOT) finds one of the files in it."""
    return Path(directory) / relative(root, template, **fields)
