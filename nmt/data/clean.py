"""Cleaning a raw training corpus (data.tasks.{task}.clean_train), as Peter et al. prepared Europarl: sentence
pairs the sentence aligner got wrong dropped, and the alignment test sentences excluded from training.

Every dropped pair is counted by reason in the task's stats.json, with the first line numbers, so that a
researcher can see what was removed and check it against the corpus.
"""
from __future__ import annotations

from .text import sentence_key

REASONS = ("empty", "ratio", "excluded")  # in the order they are checked: a pair is counted once, by the first


def clean_training_pairs(src: list[str], tgt: list[str], *, drop_empty: bool = True, max_ratio: float | None = None,
                         exclude: list[str] = ()) -> tuple[list[str], list[str], dict]:
    """(kept src, kept tgt, report): the pairs left after dropping
    - empty: a side with no words (Europarl v7 has lines left empty where the sentence aligner found no partner);
    - ratio: one side more than `max_ratio` times as many words as the other (a misaligned pair; Moses'
      clean-corpus-n.perl uses 9);
    - excluded: a side equal to one of the `exclude` sentences, compared by letters and digits
      (nmt.data.text.sentence_key), so that a tokenised test set (the RWTH gold set) matches the raw corpus.
    report: {reason: {"pairs": n, "first_lines": [1-based line numbers, at most 20]}} for each reason, and
    "kept" / "read" counts."""
    banned = {key for key in map(sentence_key, exclude) if key}
    report = {reason: {"pairs": 0, "first_lines": []} for reason in REASONS}
    kept_src, kept_tgt = [], []
    for line, (s, t) in enumerate(zip(src, tgt), start=1):
        reason = _reason(s, t, drop_empty, max_ratio, banned)
        if reason is None:
            kept_src.append(s)
            kept_tgt.append(t)
            continue
        report[reason]["pairs"] += 1
        if len(report[reason]["first_lines"]) < 20:
            report[reason]["first_lines"].append(line)
    report["read"] = len(src)
    report["kept"] = len(kept_src)
    return kept_src, kept_tgt, report


def _reason(src: str, tgt: str, drop_empty: bool, max_ratio: float | None, banned: set[str]) -> str | None:
    n_src, n_tgt = len(src.split()), len(tgt.split())
    if drop_empty and (n_src == 0 or n_tgt == 0):
        return "empty"
    if max_ratio is not None and n_src and n_tgt and max(n_src, n_tgt) > max_ratio * min(n_src, n_tgt):
        return "ratio"
    if banned and (sentence_key(src) in banned or sentence_key(tgt) in banned):
        return "excluded"
    return None
