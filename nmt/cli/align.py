"""`nmt align ...`: score alignments against a gold standard, merge two directions, run eflomal, extract a
model's alignments.

`register(subparsers)` adds the command group to the `nmt` parser (nmt/cli/commands.py). The modules doing the work are
imported inside the commands, so building the parser stays cheap. Every command writes its results with an
atomic rename, prints a one-line JSON summary, and stops with ``nmt: error: path:LINE: problem`` (exit
status 2) on bad input, like the other `nmt` commands.
"""
from __future__ import annotations

import argparse
import codecs
import json
import sys

from .. import eflomal_runner
from ..data.alignments import DEFAULT_SYMMETRIZE, FORMATS  # plain constants; alignments.py imports nothing heavy besides numpy
from .common import add_system_args, system_models


def _encoding(name: str) -> str:
    try:
        codec = codecs.lookup(name).name
    except LookupError:
        raise argparse.ArgumentTypeError(f"unknown encoding {name!r}") from None
    if "\n".encode(codec) != b"\n":
        raise argparse.ArgumentTypeError(f"encoding {name!r} is not ASCII-compatible (one line = one sentence "
                                         "needs a one-byte newline)")
    return codec


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
    from ..devices import set_threads
    from ..align.extract import extract_files

    set_threads(args.threads)
    paths, combine = system_models(args, "nmt align extract")
    info = extract_files(paths, args.src, args.tgt, args.out, args.soft_out, combine=combine,
                         batch_size=args.batch_size, device=args.device, predicted_out=args.predicted_out)
    print(json.dumps(info, sort_keys=True))


def register(subparsers) -> None:
    """Add `nmt align {score,symmetrize,eflomal,extract}` to the `nmt` command's subparsers."""
    from ..align.statistical import LABELS
    from ..align.symmetrize import METHODS

    align = subparsers.add_parser("align", help="word alignments: score (AER, SAER), symmetrize, eflomal baselines"
                                  ).add_subparsers(dest="align_command", required=True)

    p = align.add_parser("score", help="AER, precision, recall (and SAER of soft alignments) against gold links",
                         description="Links are compared as (source, target) pairs, 0-based, after each file's "
                         "--*-reverse. Formats: pharaoh (0-based i-j sure, i?j possible), talp (1-based i-j, "
                         "ipj), rwth (SENT: n blocks of 'S i j' / 'P i j', 0-based). See docs/formats.md.")
    p.add_argument("--gold", required=True, help="gold alignment file (sure and possible links)")
    p.add_argument("--gold-format", choices=FORMATS, default="pharaoh", help="default: %(default)s")
    p.add_argument("--gold-reverse", action="store_true",
                   help="the gold file lists the target index first (e.g. the German-first RWTH file for En->De)")
    p.add_argument("--test", required=True, help="hypothesis alignment file")
    p.add_argument("--test-format", choices=FORMATS, default="pharaoh", help="default: %(default)s")
    p.add_argument("--test-reverse", action="store_true", help="the test file lists the target index first")
    p.add_argument("--test-predicted", help="the same model's links with every step credited to the word it "
                   "predicts (nmt align extract --predicted-out; same format): recorded as aer_predicted etc.")
    p.add_argument("--test-sure-only", action="store_true",
                   help="score only the hypothesis' sure links (default: all of its links)")
    p.add_argument("--skip-negative", action="store_true",
                   help="rwth format: drop links with a negative index (the RWTH file's 'S 21 -100' in SENT 178) "
                        "with a warning, instead of stopping")
    p.add_argument("--soft", help="soft alignments for SAER: .npz (arr_0, arr_1, ...) or .json (list of "
                                  "matrices), one target x source matrix per sentence pair")
    p.add_argument("--src", help="source text (as scored) to check that every link lies inside its sentence pair")
    p.add_argument("--tgt", help="target text (as scored), with --src")
    p.add_argument("--encoding", type=_encoding, default="utf-8",
                   help="encoding of --src/--tgt (the RWTH texts are latin-1; default: %(default)s)")
    p.add_argument("--out", help="JSON file for the scores and counts")
    for flag, what in (("--system", "system id"), ("--testset", "split name"), ("--pair", "task, e.g. en-de"),
                       ("--preset-name", "preset")):
        p.add_argument(flag, help=f"recorded in the JSON: the {what} (as nmt evaluate records it)")
    p.set_defaults(func=cmd_score)

    p = align.add_parser("symmetrize", help="merge forward and reverse links (grow-diag-final-and, refined, ...)")
    p.add_argument("--forward", required=True, help="forward-direction links, source index first")
    p.add_argument("--reverse", required=True, help="reverse-direction links (source first unless --flip-reverse)")
    p.add_argument("--format", choices=FORMATS, default="pharaoh", help="format of both files (default: %(default)s)")
    p.add_argument("--flip-reverse", action="store_true", help="the reverse file lists the target index first")
    p.add_argument("--method", choices=METHODS, default=DEFAULT_SYMMETRIZE, help="default: %(default)s")
    p.add_argument("--out", required=True, help="merged links (Pharaoh, source first)")
    p.set_defaults(func=cmd_symmetrize)

    p = align.add_parser("eflomal", help="statistical baseline links of a test set (eflomal, both directions, merged)",
                         description="Models: " + "; ".join(f"{k} = {v}" for k, v in LABELS.items()) + ". "
                         "The extra training pairs are aligned together with the test pairs (as the papers' "
                         "baselines were); only the test pairs' links are written.")
    p.add_argument("--src", required=True, help="tokenised test source text")
    p.add_argument("--tgt", required=True, help="tokenised test target text")
    p.add_argument("--encoding", type=_encoding, default="utf-8", help="of --src/--tgt (default: %(default)s)")
    p.add_argument("--extra-src", help="tokenised extra training source, aligned before the test pairs")
    p.add_argument("--extra-tgt", help="tokenised extra training target")
    p.add_argument("--extra-encoding", type=_encoding, default="utf-8", help="of --extra-* (default: %(default)s)")
    p.add_argument("--model", type=int, choices=sorted(LABELS), default=eflomal_runner.DEFAULT_MODEL,
                   help="eflomal model (default: %(default)s)")
    p.add_argument("--method", choices=METHODS, default=DEFAULT_SYMMETRIZE, help="default: %(default)s")
    p.add_argument("--seed", type=int, default=eflomal_runner.DEFAULT_SEED,
                   help="seed of eflomal's sampler (default: %(default)s)")
    eflomal_runner.add_samplers_argument(p)
    p.add_argument("--out", required=True, help="merged links of the test pairs (Pharaoh, source first)")
    p.add_argument("--forward-out", help="also write the forward direction's links of the test pairs")
    p.add_argument("--reverse-out", help="also write the reverse direction's links (source first, as eflomal writes)")
    p.add_argument("--json", help="also write the run's summary (model, method, seed, reproducible, time) as JSON")
    p.set_defaults(func=cmd_eflomal)

    p = align.add_parser("extract", help="alignments of a trained model (or ensemble) by forced decoding of the "
                                         "reference: one link per target word, and the soft matrices",
                         description="Row t of a soft matrix holds the attention credited to target word t "
                         "(Luong et al. 2015, footnote 14: content scores credit the step that reads the word, "
                         "location scores and RNNsearch the step that predicts it); the hard link of a target "
                         "word is its largest weight. Several --model: their matrices are averaged.")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--model", nargs="+", help="model.pt file(s); several = an ensemble")
    which.add_argument("--system", help="a system or ensemble that the preset's tables define for --task")
    add_system_args(p)
    p.add_argument("--src", required=True, help="tokenised source text, as the model reads it")
    p.add_argument("--tgt", required=True, help="tokenised reference translations")
    p.add_argument("--out", required=True, help="hard links (Pharaoh, source index first)")
    p.add_argument("--soft-out", help="soft matrices (.npz, arr_0, arr_1, ...: target x source words)")
    p.add_argument("--predicted-out", help="also the hard links with every step's weights credited to the word it "
                                           "predicts, whatever the score (for content scores, footnote 14's other case)")
    p.add_argument("--batch-size", type=int, default=32, help="sentence pairs per forward pass (default: %(default)s)")
    p.add_argument("--device", default=None, help="cpu, cuda, cuda:1 (default: a free GPU when there is one)")
    p.add_argument("--threads", type=int, default=1, help="CPU threads (default: %(default)s)")
    p.set_defaults(func=cmd_extract)
