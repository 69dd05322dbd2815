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
    from ..align.gold_scores import score_files, skipped_lines
    from ..records.scores import write_scores

    record = score_files(
        args.gold,
        args.test,
        meta={"system": args.system, "testset": args.testset, "preset": args.preset_name, "pair": args.pair},
        gold_format=args.gold_format,
        test_format=args.test_format,
        gold_reverse=args.gold_reverse,
        test_reverse=args.test_reverse,
        predicted=args.test_predicted,
        sure_only=args.test_sure_only,
        skip_negative=args.skip_negative,
        soft=args.soft,
        src=args.src,
        tgt=args.tgt,
        encoding=args.encoding,
    )
    for line in skipped_lines(record):
        print(f"nmt: warning: {line}", file=sys.stderr)
    if args.out:
        write_scores(args.out, record)
    summary = {key: record[key] for key in ("aer", "precision", "recall", "sentences")}
    if "soft" in record:
        summary["saer"] = record["saer"]
    print(json.dumps(summary))


def cmd_symmetrize(args) -> None:
    from ..align.symmetrize import symmetrize_corpus
    from ..data.alignments import check_count, flip, load_alignments, write_pharaoh

    forward = load_alignments(args.forward, args.format)
    reverse = load_alignments(args.reverse, args.format)
    check_count(
        reverse.sentences, len(forward.sentences), reverse.path, f"sentences in {forward.path}", lines=reverse.lines
    )
    backward = flip(reverse.sentences) if args.flip_reverse else reverse.sentences
    merged = symmetrize_corpus([a.possible for a in forward.sentences], [a.possible for a in backward], args.method)
    write_pharaoh(args.out, merged)
    print(
        json.dumps({"sentences": len(merged), "links": sum(map(len, merged)), "method": args.method, "out": args.out})
    )


def cmd_eflomal(args) -> None:
    from ..align.statistical import align_files
    from ..base.atomic import write_json_atomic

    info = align_files(
        args.src,
        args.tgt,
        args.out,
        encoding=args.encoding,
        extra_src_path=args.extra_src,
        extra_tgt_path=args.extra_tgt,
        extra_encoding=args.extra_encoding,
        model=args.model,
        method=args.method,
        seed=args.seed,
        samplers=args.samplers,
        forward_out=args.forward_out,
        reverse_out=args.reverse_out,
    )
    if not info["reproducible"]:
        print(
            "nmt: warning: eflomal could not be seeded here (no C compiler or not Linux): these links are not "
            "reproducible",
            file=sys.stderr,
        )
    if args.json:
        write_json_atomic(args.json, info)
    print(json.dumps(info, sort_keys=True))


def cmd_extract(args) -> None:
    from ..align.extract import extract_files
    from ..base.devices import set_threads

    set_threads(args.threads)
    paths, combine = system_models(args, "nmt align extract")
    info = extract_files(
        paths,
        args.src,
        args.tgt,
        args.out,
        args.soft_out,
        combine=combine,
        batch_size=args.batch_size,
        device=args.device,
        predicted_out=args.predicted_out,
    )
    print(json.dumps(info, sort_keys=True))
