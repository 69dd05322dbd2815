"""`nmt data get|list|fetch|prepare`: corpora (their options: nmt.cli.parser). Each command imports the module that
does its work when it runs."""

from __future__ import annotations

import json
from pathlib import Path

from .. import config as cfg
from ..base import layout
from ..settings import PrepareSettings
from .arguments import load_config


def cmd_data_get(args) -> None:
    from ..data.corpus import get_task_corpus

    config = load_config(args)
    summary = get_task_corpus(
        config,
        args.task,
        args.out,
        root=Path(args.params).parent,
        downloads=args.downloads,
        allow_network=not args.offline,
    )
    print(json.dumps(summary["splits"], sort_keys=True))


def cmd_data_list(args) -> None:
    """The registry: every corpus, its files, where a mirror keeps them, and its licence."""
    from ..data.corpus_registry import load_registry

    for name, spec in load_registry().items():
        gated = " [licence-gated]" if spec.licence_gated else ""
        print(f"{name}{gated}: {' '.join(spec.description.split())}")
        print(f"  licence: {' '.join(spec.licence.split())}")
        for fname, entry in spec.files.items():
            source = f"sacreBLEU {entry.sacrebleu.testset}" if entry.sacrebleu else entry.url
            print(f"  {fname:<34} mirror: {entry.mirror or '-':<48} from: {source}")


def cmd_data_fetch(args) -> None:
    """Fetch registry files into a directory (e.g. to fill a mirror, or to get the raw WMT newstests)."""
    from ..data.fetch import fetch_corpus

    dest = (
        Path(args.dest)
        if args.dest
        else layout.under(args.downloads, layout.DOWNLOADS, layout.DOWNLOADED_CORPUS, corpus=args.corpus)
    )
    paths = fetch_corpus(
        args.corpus,
        args.files or None,
        dest,
        mirror=args.mirror,
        allow_network=not args.offline,
        accept_licence=args.accept_licence,
    )
    for path in paths.values():
        print(path)


def cmd_data_prepare(args) -> None:
    from ..data.prepare import prepare

    config = load_config(args)
    spec = cfg.corpus_for_task(config, args.task)
    prep = cfg.prepare_for_task(config, args.task)
    stats = prepare(
        args.raw,
        args.out,
        splits=args.splits or cfg.task_splits(config, args.task),
        src_lang=spec["src_lang"],
        tgt_lang=spec["tgt_lang"],
        max_len=prep["max_len"],
        src_vocab=prep["src_vocab"],
        tgt_vocab=prep["tgt_vocab"],
        tokenize=prep["tokenize"],
        lowercase=PrepareSettings.read(prep).lowercase,
        tokenized_splits=tuple(cfg.tokenized_splits(config, args.task)),
    )
    print(
        json.dumps(
            {
                "src_vocab": stats["src_vocab"],
                "tgt_vocab": stats["tgt_vocab"],
                "train_dropped_by_length": stats["train_dropped_by_length"],
            }
        )
    )
