"""`nmt train`, `nmt translate`, `nmt attention`: the commands that run a model (their options:
nmt.cli.model_parser). Each command imports the modules that do its work when it runs, so that the others do not
pay for importing torch."""

from __future__ import annotations

import json
from pathlib import Path

from .. import config as cfg
from ..base import layout
from ..base.atomic import write_json_atomic
from ..config import plan
from .arguments import load_config, system_models, table_file


def cmd_train(args) -> None:
    from ..training.run import train

    config = load_config(args)
    path = table_file(config, Path(args.params).parent, args.table)
    table = cfg.load_table(path)
    system_cfg = cfg.system_config(config, table, args.system, path)
    # Files from other steps (a baseline to start from, aligned training pairs): given on the command line, as the
    # workflow's jobs give them (nmt.pipeline.jobs), else where the layout puts them among the task's results.
    found = cfg.training_inputs(system_cfg, layout.path(layout.RESULTS, preset=config["preset"], pair=table["task"]))
    init_from, links = args.init_from or found.get("init_from"), args.guided_links or found.get("links")
    if init_from:
        system_cfg["train"]["init_from"] = str(init_from)
    if links:
        system_cfg["train"]["guided_alignment"] = {
            **system_cfg["train"]["guided_alignment"],
            "file": str(Path(links).resolve()),
        }
    train(
        system_cfg,
        args.data,
        args.out,
        system=args.system,
        threads=args.threads,
        device=args.device,
        replace=args.replace,
    )


def cmd_translate(args) -> None:
    from ..base.devices import set_threads
    from ..data.text import read_lines, write_lines_atomic
    from ..decode.translate import translate_ids
    from ..engine.fast import load_for_decoding

    set_threads(args.threads)
    paths, combine = system_models(args, "nmt translate")
    model, src_vocab, tgt_vocab, config = load_for_decoding(paths, args.device, combine)
    options = config.get("translate") or {}
    missing = [key for key in cfg.schema()["properties"]["translate"]["required"] if key not in options]
    if missing:  # every model file nmt train writes has them (params.yaml's translate section, resolved)
        raise cfg.ConfigError(
            f"{paths[0]}: its config has no translate.{', translate.'.join(missing)}: "
            "not a model file written by nmt train"
        )
    decode = {}
    if args.system:  # a table's `decodings:` entry says how this one is decoded (beam, monotonic)
        decode = plan.decode_options(
            plan.collect_ensembles(load_config(args), Path(args.params).parent).get(args.task, {}), args.system
        )
    beam = args.beam or decode.get("beam") or options["beam"]
    monotonic = args.monotonic or decode.get("monotonic")
    if monotonic:
        from ..models.monotonic import set_monotonic_mode

        try:
            set_monotonic_mode(model, monotonic)
        except ValueError as e:
            raise cfg.ConfigError(f"{', '.join(paths)}: {e}") from e
    lines = read_lines(args.src)
    device = next(model.parameters()).device
    sources = [src_vocab.encode(line) for line in lines]
    batch_size = args.batch_size or options["batch_size"]
    hyps = translate_ids(
        model, sources, beam=beam, batch_size=batch_size, max_len_ratio=options["max_len_ratio"], device=device
    )
    if args.positions_out:
        # the source word credited with each output word, for unk replacement: by the rule alignment extraction
        # credits attention with (each model's own, Luong et al.'s footnote 14, unless --credit says otherwise)
        from ..align.extract import credited_positions

        positions = credited_positions(
            model, sources, [h.tokens for h in hyps], credit=args.credit, batch_size=batch_size, device=device
        )
    write_lines_atomic(args.out, (" ".join(tgt_vocab.decode(h.tokens)) for h in hyps))
    if args.positions_out:
        write_lines_atomic(args.positions_out, (" ".join(map(str, p)) for p in positions))


def cmd_attention(args) -> None:
    from ..base.devices import set_threads
    from ..decode.attention_map import attention_map, links_map

    set_threads(args.threads)
    where = {
        "line": args.line,
        "length": tuple(args.length) if args.length else None,
        "system": args.system_name or args.system,
    }
    if args.links:
        result = links_map(args.links, args.src, args.tgt, **where, label=args.label)
    else:
        paths, combine = system_models(args, "nmt attention")
        result = attention_map(paths, args.src, args.tgt, **where, device=args.device, combine=combine)
    write_json_atomic(args.out, result)
    print(
        json.dumps(
            {
                "line": result["line"],
                "attention": result["attention"],
                "src_words": len(result["src"]),
                "tgt_words": len(result["tgt"]),
            }
        )
    )
