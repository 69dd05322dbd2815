"""`nmt systems`, `nmt seed-targets`, `nmt export-run`, `nmt dvc-yaml`, `nmt params-yaml`, `nmt config`: what the
preset plans (their options: nmt.cli.parser). Each command imports the modules that do its work when it runs."""

from __future__ import annotations

import functools
import json
from pathlib import Path

from .. import config as cfg
from ..base import layout
from ..config import plan
from ..data.tasks import data_task
from ..settings import SystemSettings
from .arguments import load_config, table_file
from .parser import build_parser


def cmd_systems(args) -> None:
    config = load_config(args)
    for pair, systems in plan.collect_systems(config, Path(args.params).parent).items():
        for system in systems:
            print(f"{pair}\t{system}" if args.with_pair else system)


def cmd_seed_targets(args) -> None:
    """The files of one seed's part of the run, one a line: `snakemake $(nmt seed-targets --seed 2)` makes them."""
    for path in plan.seed_part(load_config(args), Path(args.params).parent, args.seed):
        print(path)


def cmd_export_run(args) -> None:
    from ..pipeline.export import export_run

    config = load_config(args)
    results = Path(args.results or layout.path(layout.RESULTS_ROOT, preset=config["preset"]))
    done = export_run(config, Path(args.params).parent, results, Path(args.out), seeds=args.seed, replace=args.replace)
    print(f"{args.out}: {done['copied']} files copied, {done['unchanged']} already there")


def cmd_dvc_yaml(args) -> None:
    from ..base.atomic import write_text_atomic
    from ..pipeline.dvc_yaml import DEFAULT_PATH, planned_preset, render, stale_files
    from . import code_deps  # grimp: only this command reads the import graph

    config = load_config(args)
    root = Path(args.params).parent
    parser = build_parser()

    @functools.lru_cache(maxsize=None)  # every stage of a step runs the same command: its files once
    def files_of(words: tuple[str, ...]) -> list[str]:
        return code_deps.as_dependencies(code_deps.command_files(code_deps.handler(parser, words)))

    files = render(config, root, files_of)
    stale = stale_files(root, files)
    if args.check:
        top = root / DEFAULT_PATH
        # errors="replace": a damaged stage file (a byte that is not UTF-8) just does not match, and is said so
        planned = planned_preset(top.read_text(encoding="utf-8", errors="replace") if top.is_file() else "")
        if planned and planned != config["preset"]:
            raise cfg.ConfigError(
                f"{top}: plans preset {planned!r}, params.yaml names {config['preset']!r}; "
                "regenerate it with `nmt dvc-yaml`, then run `dvc repro` again"
            )
        for path, text in files.items():
            current = (root / path).read_text(encoding="utf-8", errors="replace") if (root / path).is_file() else None
            if current != text:
                raise cfg.ConfigError(
                    f"{root / path}: does not match the preset's table and figure files or the "
                    "code's imports; regenerate it with `nmt dvc-yaml`, then run `dvc repro` again"
                )
        if stale:
            raise cfg.ConfigError(
                f"{root / stale[0]}: a step the preset's plan does not have; regenerate the stage "
                "files with `nmt dvc-yaml`, then run `dvc repro` again"
            )
        if args.stamp:
            write_text_atomic(args.stamp, f"dvc.yaml plans preset {config['preset']}\n")
        print(f"{root / DEFAULT_PATH} and the {len(files) - 1} step files under it are current")
        return
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(root / path, text)
    for path in stale:
        (root / path).unlink()
    print(f"{root / DEFAULT_PATH} and {len(files) - 1} step files: the stages of preset {config['preset']}")


def cmd_params_yaml(args) -> None:
    from ..base.atomic import write_text_atomic
    from ..base.files import read_text
    from ..pipeline.params_yaml import render

    current = read_text(args.params)
    text = render(current)
    if args.check:
        if text != current:
            raise cfg.ConfigError(
                f"{args.params}: its comments differ from the settings' declared help "
                "(nmt/settings/sections.py); rewrite them with `nmt params-yaml`"
            )
        print(f"{args.params}: its comments are the settings' declared help")
        return
    write_text_atomic(args.params, text)
    print(f"{args.params}: comments written from the settings' declared help")


def cmd_config(args) -> None:
    if args.schema:
        print(json.dumps(cfg.schema(), indent=2))
        return
    layers = cfg.load_layers(args.params, args.preset)
    config = layers.values
    if bool(args.table) != bool(args.system):
        raise cfg.ConfigError("nmt config: --table and --system go together (one system of one table)")
    if args.table:
        path = table_file(config, Path(args.params).parent, args.table)
        table = cfg.load_table(path)
        # the system as its table's task trains it: that task's corpus and preparation (e.g. 30K vocabularies)
        layers = cfg.task_prepare_layers(cfg.system_layers(layers, table, args.system, path), table["task"])
    if args.explain:
        for key, value, origin in layers.explained():
            print(f"{key} = {json.dumps(value)}    # {origin}")
        return
    if args.table:
        config = layers.values
        config["task"] = {
            "name": table["task"],
            "played_by": data_task(config, table["task"]),
            "corpus": cfg.corpus_for_task(config, table["task"])["corpus"],
        }
        # its settings as training reads them (typed, every key), and what it trains by, whichever keys that comes
        # from (train.epochs gives way to the others)
        config.update(SystemSettings.from_config(config).as_dict())
    print(json.dumps(config, indent=2, sort_keys=True))
