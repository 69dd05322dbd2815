"""What several `nmt` commands share when they run: the config, a table named by its id or its file, and a system's
models named with --system."""

from __future__ import annotations

from pathlib import Path

from .. import config as cfg
from ..config import plan


def load_config(args) -> dict:
    return cfg.load_params(args.params, args.preset)


def table_file(config: dict, root: Path, table: str) -> str:
    """--table as a file: the file it names, or the file of the preset's table with that id (the report's and the
    docs' name for it, e.g. luong2015_table1)."""
    if Path(table).is_file():
        return table
    by_id = {cfg.load_table(root / path)["id"]: str(root / path) for path in config["tables"]}
    if table in by_id:
        return by_id[table]
    raise cfg.ConfigError(
        f"--table {table}: neither a table of preset {config['preset']!r} nor a file; its tables: "
        f"{', '.join(sorted(by_id))}"
    )


def system_models(args, command: str) -> tuple[list[str], str]:
    """The model files and ensemble combination a command decodes: --model as given, or --system NAME of the
    preset's tables for --task under --models-dir (how `dvc repro` names a system or an ensemble)."""
    if not args.system:
        return args.model, args.combine
    if not args.task:
        raise cfg.ConfigError(f"{command} --system needs --task (and --models-dir)")
    paths, ensemble_combine = plan.decoding_models(
        load_config(args), Path(args.params).parent, args.task, args.system, args.models_dir
    )
    return [str(p) for p in paths], ensemble_combine or args.combine
