"""`nmt align ...`: score alignments against a gold standard, merge two directions, run eflomal, extract a
model's alignments.

Their options are nmt.cli.align_parser's; this module is imported when one of them runs. Every command writes its
results with an atomic rename, prints a one-line JSON summary, and stops with ``nmt: error: path:LINE: problem`` (exit
status 2) on bad input, like the other `nmt` commands.
"""
from __future__ import annotations

import json
import sys

from .arguments import system_models


def cmd_score(args) -> None:
    from ..data.text import CorpusError, write_json_atomic
    from ..data.alignments import check_count, check_lengths, load_alignments, read_parallel_sentences
    from ..align.metrics import MetricError, score, score_soft, sentence_counts, soft_sentence_counts
    from ..align.soft import hard_matrix, load_soft

    gold = load_alignments(args.gold, args.gold_format, reverse=args.gold_reverse, skip_negative=args.skip_negative)
    tests = [load_alignments(path, args.test_format, reverse=args.test_reverse, skip_negative=args.skip_negative)
             for path in (args.test, args.test_predicted) if path]
    for f in tests:
        check_count(f.sentences, len(gold.sentences), f.path, f"gold sentences in {gold.path}", lines=f.lines)
    test, predicted = tests[0], (tests[1] if args.test_predicted else None)
    if (args.src is None) != (args.tgt is None):
        raise CorpusError(args.src or args.tgt, None, "range checks need both --src and --tgt")
    lengths = None
    if args.src:
        src, tgt = read_parallel_sentences(args.src, args.tgt, encoding=args.encoding)
        lengths = [len(s.split()) for s in src], [len(t.split()) for t in tgt]
        for f in (gold, *tests):
            check_lengths(f.sentences, *lengths, f.path, lines=f.lines, spell=f.spell)

    def hypotheses_of(f):
        return [a.sure for a in f.sentences] if args.test_sure_only else f.sentences

    hypotheses = hypotheses_of(test)
    scores = score(gold.sentences, hypotheses)
    scores_predicted = score(gold.sentences, hypotheses_of(predicted)) if predicted else None
    # each sentence's counts, which corpus AER/SAER sum: what a bootstrap over the test sentences resamples
    per_sentence = {"aer": sentence_counts(gold.sentences, hypotheses)}
    if predicted:
        per_sentence["aer_predicted"] = sentence_counts(gold.sentences, hypotheses_of(predicted))
    soft = None
    if args.soft:
        matrices = load_soft(args.soft)
        check_count(matrices, len(gold.sentences), args.soft, f"gold sentences in {gold.path}")
        if lengths:
            for k, (matrix, n_src, n_tgt) in enumerate(zip(matrices, *lengths), start=1):
                if matrix.shape != (n_tgt, n_src):
                    raise CorpusError(args.soft, None, f"sentence {k}: matrix of shape {matrix.shape}, expected "
                                                       f"({n_tgt}, {n_src}) (target x source words)")
        soft = score_soft(gold.sentences, matrices)
        per_sentence["saer"] = soft_sentence_counts(gold.sentences, matrices)
    record = {"system": args.system, "testset": args.testset, "preset": args.preset_name, "pair": args.pair,
              **scores.to_dict(),
              "gold": {"path": gold.path, "format": gold.format, "reverse": gold.reverse, "skipped": gold.skipped},
              "test": {"path": test.path, "format": test.format, "reverse": test.reverse, "skipped": test.skipped,
                       "sure_only": args.test_sure_only},
              "range_checked": lengths is not None}
    if soft is not None:
        record["saer"] = soft.saer
        record["soft"] = {"path": args.soft, **soft.to_dict()}
    if scores_predicted is not None:  # the same model's links with every step credited to the word it predicts
        for key in ("aer", "precision", "recall"):
            record[f"{key}_predicted"] = scores_predicted.to_dict()[key]
        record["predicted"] = {"path": predicted.path, "skipped": predicted.skipped}
    if lengths:
        # Peter et al.'s "converted to hard alignment": SAER of the hard links turned into attention-like
        # matrices (a target word's links share its mass). With plain 0/1 matrices SAER would equal AER, which
        # their table (AER 19.0, hard SAER 24.6) shows it does not.
        hard = [hard_matrix(links.possible if hasattr(links, "possible") else links, n_src, n_tgt, normalise=True)
                for links, n_src, n_tgt in zip(hypotheses, *lengths)]
        try:
            record["saer_hard"] = score_soft(gold.sentences, hard).saer
            per_sentence["saer_hard"] = soft_sentence_counts(gold.sentences, hard)
        except MetricError:
            record["saer_hard"] = None
    # the papers' scales: Luong et al. give AER as a fraction, Peter et al. in percent
    for key in ("aer", "saer", "saer_hard", "aer_predicted"):
        if record.get(key) is not None:
            record[f"{key}_pct"] = 100 * record[key]
    record["sentence_counts"] = {key: [list(row) for row in rows] for key, rows in per_sentence.items()}
    for line in gold.skipped + [line for f in tests for line in f.skipped]:
        print(f"nmt: warning: {line}", file=sys.stderr)
    if args.out:
        write_json_atomic(args.out, record)
    summary = {key: record[key] for key in ("aer", "precision", "recall", "sentences")}
    if soft is not None:
        summary["saer"] = soft.saer
    print(json.dumps(summary))


def cmd_symmetrize(args) -> None:
    from ..data.alignments import check_count, flip, load_alignments, write_pharaoh
    from ..align.symmetrize import symmetrize_corpus

    forward = load_alignments(args.forward, args.format)
    reverse = load_alignments(args.reverse, args.format)
    check_count(reverse.sentences, len(forward.sentences), reverse.path, f"sentences in {forward.path}",
                lines=reverse.lines)
    backward = flip(reverse.sentences) if args.flip_reverse else reverse.sentences
    merged = symmetrize_corpus([a.possible for a in forward.sentences], [a.possible for a in backward], args.method)
    write_pharaoh(args.out, merged)
    print(json.dumps({"sentences": len(merged), "links": sum(map(len, merged)), "method": args.method,
                      "out": args.out}))


def cmd_eflomal(args) -> None:
    from ..data.text import write_json_atomic
    from ..align.statistical import align_files

    info = align_files(args.src, args.tgt, args.out, encoding=args.encoding, extra_src_path=args.extra_src,
                       extra_tgt_path=args.extra_tgt, extra_encoding=args.extra_encoding, model=args.model,
                       method=args.method, seed=args.seed, samplers=args.samplers, forward_out=args.forward_out,
                       reverse_out=args.reverse_out)
    if not info["reproducible"]:
        print("nmt: warning: eflomal could not be seeded here (no C compiler or not Linux): these links are not "
              "reproducible", file=sys.stderr)
    if args.json:
        write_json_atomic(args.json, info)
    print(json.dumps(info, sort_keys=True))


def cmd_extract(args) -> None:
    from ..base.devices import set_threads
    from ..align.extract import extract_files

    set_threads(args.threads)
    paths, combine = system_models(args, "nmt align extract")
    info = extract_files(paths, args.src, args.tgt, args.out, args.soft_out, combine=combine,
                         batch_size=args.batch_size, device=args.device, predicted_out=args.predicted_out)
    print(json.dumps(info, sort_keys=True))
