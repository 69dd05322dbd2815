"""`nmt unk dict|replace`: unknown-word replacement (their options: nmt.cli.parser). Each command imports the module
that does its work when it runs."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .. import config as cfg
from .arguments import load_config


def cmd_unk_dict(args) -> None:
    from ..decode.unk import build_dictionary, convert_release_dictionary

    config = load_config(args) if args.task else None
    release = cfg.unk_dictionary_release(config, args.task) if args.task else None
    if release is not None:  # the task corpus' own dictionary (Luong et al.'s, from the Berkeley aligner)
        from ..data.fetch import fetch_file

        mirror = (config["data"].get("mirror") and Path(args.params).parent / config["data"]["mirror"]) or None
        path = fetch_file(release["corpus"], release["file"], Path(args.downloads) / release["corpus"], mirror=mirror)
        print(json.dumps(convert_release_dictionary(path, args.out)))
        return
    if not (args.src and args.tgt):
        raise cfg.ConfigError(
            "nmt unk dict needs --src and --tgt (the training pairs eflomal aligns), or --task "
            "with unk.dictionary: stanford and a task whose corpus releases a dictionary"
        )
    stats = build_dictionary(
        args.src,
        args.tgt,
        args.out,
        seed=args.seed,
        samplers=args.samplers,
        progress=lambda m: print(m, file=sys.stderr),
    )
    print(json.dumps(stats))


def cmd_unk_replace(args) -> None:
    from ..decode.unk import replace_file

    print(json.dumps(replace_file(args.hyp, args.positions, args.src, args.dict, args.out)))
