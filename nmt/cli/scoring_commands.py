"""`nmt evaluate`, `nmt report`, `nmt compare`: scores and the report (their options: nmt.cli.scoring_parser). Each
command imports the module that does its work when it runs."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ..base.atomic import write_json_atomic
from ..base.errors import UserError
from ..config import plan
from .arguments import load_config


def cmd_evaluate(args) -> None:
    from ..scoring.bleu import require_sentences
    from ..scoring.evaluate import score_translation

    require_sentences(args.ref, args.hyp)  # empty files: one line, before the system's model is looked for
    model = args.model
    if args.models_dir:  # the system's own model for perplexity; an ensemble of the preset's tables has none
        paths, combine = plan.decoding_models(
            load_config(args), Path(args.params).parent, args.pair, args.system, args.models_dir
        )
        if combine is None:
            model = str(paths[0])
    meta = {"system": args.system, "testset": args.testset, "preset": args.preset_name, "pair": args.pair}
    scores = score_translation(
        args.hyp,
        args.ref,
        args.out,
        meta=meta,
        lang=args.lang,
        src=args.src,
        raw_ref=args.raw_ref,
        lowercase=args.lowercase,
        model=model,
        device=args.device,
        threads=args.threads,
        positions=args.positions,
        unk_dict=args.unk_dict,
        unk_out=args.unk_out,
        params=args.params,
        preset=args.preset,
    )
    print(json.dumps({k: scores[k] for k in ("bleu_tok", "bleu_detok", "ppl", "bleu_tok_unk")}))


def cmd_report(args) -> None:
    from ..report.assemble import report_inputs
    from ..report.render import render_report

    inputs, warnings = report_inputs(
        load_config(args), args.params, Path(args.results), Path(args.data), partial=args.partial
    )
    index = render_report(inputs, Path(args.out))
    for warning in warnings:
        print(f"nmt: warning: {warning}", file=sys.stderr)
    print(index)


def cmd_compare(args) -> None:
    from ..report.compare import compare, format_comparison

    if args.json:  # a report's files are what compare reads: never written over by it
        for report in (args.run, args.reference):
            if Path(args.json).resolve().is_relative_to(Path(report).resolve()):
                raise UserError(
                    f"--json {args.json}: lies in the report {report} that compare reads; write the "
                    f"comparison outside it"
                )
    result = compare(Path(args.run), Path(args.reference), across_presets=args.across_presets)
    print(format_comparison(result, everything=args.all))
    if args.json:
        write_json_atomic(args.json, result)
