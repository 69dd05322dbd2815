"""A test alignment file's scores against a gold standard (`nmt align score`): AER, precision and recall, SAER of soft
alignments and of the hard links made soft, each sentence's counts for the report's bootstrap, and the papers'
percent scales."""

from __future__ import annotations

from typing import Any

from ..data.alignments import check_count, check_lengths, load_alignments, read_parallel_sentences
from ..data.text import CorpusError
from .metrics import MetricError, score, score_soft, sentence_counts, soft_sentence_counts
from .soft import hard_matrix, load_soft


def score_files(
    gold: str,
    test: str,
    *,
    meta: dict[str, Any],
    gold_format: str = "pharaoh",
    test_format: str = "pharaoh",
    gold_reverse: bool = False,
    test_reverse: bool = False,
    predicted: str | None = None,
    sure_only: bool = False,
    skip_negative: bool = False,
    soft: str | None = None,
    src: str | None = None,
    tgt: str | None = None,
    encoding: str = "utf-8",
) -> dict[str, Any]:
    """The scores record of ``test`` against ``gold`` (docs/formats.md), ``meta`` ({system, testset, preset, pair})
    first. ``predicted``: the same model's links credited to the word each step predicts (``*_predicted``);
    ``sure_only``: the test's sure links only; ``soft``: its soft alignments (SAER); ``src`` and ``tgt``: the
    texts as scored, to check that every link lies inside its sentence pair (and for the hard links' SAER). The
    lines a file skipped are in the record (``gold.skipped``, ``test.skipped``, ``predicted.skipped``)."""
    gold_file = load_alignments(gold, gold_format, reverse=gold_reverse, skip_negative=skip_negative)
    tests = [
        load_alignments(path, test_format, reverse=test_reverse, skip_negative=skip_negative)
        for path in (test, predicted)
        if path
    ]
    for f in tests:
        check_count(f.sentences, len(gold_file.sentences), f.path, f"gold sentences in {gold_file.path}", lines=f.lines)
    test_file, predicted_file = tests[0], (tests[1] if predicted else None)
    if (src is None) != (tgt is None):
        raise CorpusError(src or tgt, None, "range checks need both --src and --tgt")
    lengths = None
    if src:
        src_lines, tgt_lines = read_parallel_sentences(src, tgt, encoding=encoding)
        lengths = [len(s.split()) for s in src_lines], [len(t.split()) for t in tgt_lines]
        for f in (gold_file, *tests):
            check_lengths(f.sentences, *lengths, f.path, lines=f.lines, spell=f.spell)

    def hypotheses_of(f):
        return [a.sure for a in f.sentences] if sure_only else f.sentences

    hypotheses = hypotheses_of(test_file)
    scores = score(gold_file.sentences, hypotheses)
    scores_predicted = score(gold_file.sentences, hypotheses_of(predicted_file)) if predicted_file else None
    # each sentence's counts, which corpus AER/SAER sum: what a bootstrap over the test sentences resamples
    per_sentence = {"aer": sentence_counts(gold_file.sentences, hypotheses)}
    if predicted_file:
        per_sentence["aer_predicted"] = sentence_counts(gold_file.sentences, hypotheses_of(predicted_file))
    soft_scores = None
    if soft:
        matrices = load_soft(soft)
        check_count(matrices, len(gold_file.sentences), soft, f"gold sentences in {gold_file.path}")
        if lengths:
            for k, (matrix, n_src, n_tgt) in enumerate(zip(matrices, *lengths), start=1):
                if matrix.shape != (n_tgt, n_src):
                    raise CorpusError(
                        soft,
                        None,
                        f"sentence {k}: matrix of shape {matrix.shape}, expected "
                        f"({n_tgt}, {n_src}) (target x source words)",
                    )
        soft_scores = score_soft(gold_file.sentences, matrices)
        per_sentence["saer"] = soft_sentence_counts(gold_file.sentences, matrices)
    record = {
        **meta,
        **scores.to_dict(),
        "gold": {
            "path": gold_file.path,
            "format": gold_file.format,
            "reverse": gold_file.reverse,
            "skipped": gold_file.skipped,
        },
        "test": {
            "path": test_file.path,
            "format": test_file.format,
            "reverse": test_file.reverse,
            "skipped": test_file.skipped,
            "sure_only": sure_only,
        },
        "range_checked": lengths is not None,
    }
    if soft_scores is not None:
        record["saer"] = soft_scores.saer
        record["soft"] = {"path": soft, **soft_scores.to_dict()}
    if scores_predicted is not None:  # the same model's links with every step credited to the word it predicts
        for key in ("aer", "precision", "recall"):
            record[f"{key}_predicted"] = scores_predicted.to_dict()[key]
        record["predicted"] = {"path": predicted_file.path, "skipped": predicted_file.skipped}
    if lengths:
        # Peter et al.'s "converted to hard alignment": SAER of the hard links turned into attention-like
        # matrices (a target word's links share its mass). With plain 0/1 matrices SAER would equal AER, which
        # their table (AER 19.0, hard SAER 24.6) shows it does not.
        hard = [
            hard_matrix(links.possible if hasattr(links, "possible") else links, n_src, n_tgt, normalise=True)
            for links, n_src, n_tgt in zip(hypotheses, *lengths)
        ]
        try:
            record["saer_hard"] = score_soft(gold_file.sentences, hard).saer
            per_sentence["saer_hard"] = soft_sentence_counts(gold_file.sentences, hard)
        except MetricError:
            record["saer_hard"] = None
    # the papers' scales: Luong et al. give AER as a fraction, Peter et al. in percent
    for key in ("aer", "saer", "saer_hard", "aer_predicted"):
        if record.get(key) is not None:
            record[f"{key}_pct"] = 100 * record[key]
    record["sentence_counts"] = {key: [list(row) for row in rows] for key, rows in per_sentence.items()}
    return record


def skipped_lines(record: dict[str, Any]) -> list[str]:
    """The lines the gold, test and predicted files skipped, as a scores record keeps them."""
    return [line for key in ("gold", "test", "predicted") for line in (record.get(key) or {}).get("skipped", [])]
