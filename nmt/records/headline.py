"""A report's headline numbers beside its page: each scored translation's BLEU, chrF and perplexity as its scores file
has them (layout.REPORT_HEADLINE), and the claims' verdict counts (layout.REPORT_VERDICTS), one small JSON file each.
They are DVC's metrics: `dvc metrics show` prints a row per file and a column per key of them all, so a few keys in
each keep its lines short. The full records stay in the scores files and the claims file.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Iterable, Mapping

from ..base import layout
from ..base.files import read_json
from .report_files import write_report_json
from .scores import read_scores, run_scores_path

HEADLINE_NAME = PurePosixPath(layout.REPORT_HEADLINE).name  # with its fields {pair}, {system}, {testset}
VERDICTS_NAME = PurePosixPath(layout.REPORT_VERDICTS).name
#: what a scores file gives the headline: BLEU as the papers' tables give it (tokenised), chrF, test perplexity
HEADLINE_KEYS = ("bleu_tok", "chrf", "ppl")
#: the final verdicts' counts of the claims file's summary (nmt.report.claims)
VERDICT_KEYS = ("reproduced", "contradicted", "inconclusive", "single_run", "not_run")

HEADLINE_SCHEMA = {
    "type": "object",
    "required": list(HEADLINE_KEYS),
    "additionalProperties": False,
    "properties": {key: {"type": ["number", "null"]} for key in HEADLINE_KEYS},
}
VERDICTS_SCHEMA = {
    "type": "object",
    "required": list(VERDICT_KEYS),
    "additionalProperties": False,
    "properties": {key: {"type": "integer", "minimum": 0} for key in VERDICT_KEYS},
}


def headline_path(report_dir: str | Path, pair: str, system: str, testset: str) -> Path:
    return Path(report_dir) / HEADLINE_NAME.format(pair=pair, system=system, testset=testset)


def verdicts_path(report_dir: str | Path) -> Path:
    return Path(report_dir) / VERDICTS_NAME


def headline(scores: Mapping) -> dict:
    """A scores file's headline numbers (null where it has none: an ensemble's perplexity)."""
    return {key: scores.get(key) for key in HEADLINE_KEYS}


def write_headlines(
    report_dir: str | Path,
    results_dir: str | Path,
    translations: Iterable[tuple[str, str, str]],
    summary: Mapping[str, int],
) -> None:
    """The headline of each of ``translations`` ((pair, system, testset)) whose scores file the run in
    ``results_dir`` has (a partial run lacks some), and the verdict counts of the claims file's ``summary``."""
    for pair, system, testset in translations:
        scores = run_scores_path(results_dir, pair, system, testset)
        if scores.is_file():
            write_report_json(headline_path(report_dir, pair, system, testset), headline(read_scores(scores)))
    write_report_json(verdicts_path(report_dir), {key: summary[key] for key in VERDICT_KEYS})


def read_headline(path: str | Path) -> dict:
    return read_json(path, "a headline metrics file", schema=HEADLINE_SCHEMA)


def read_verdicts(path: str | Path) -> dict:
    return read_json(path, "a verdict counts file", schema=VERDICTS_SCHEMA)
