"""What several `nmt` command groups share: the config options, and naming a system's models with --system."""
from __future__ import annotations

import argparse
from pathlib import Path

from .. import config as cfg
from ..pipeline import plan


def add_config_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--params", default="params.yaml", help="the params file (default: params.yaml)")
    p.add_argument("--preset", default=None, help="preset name (default: the one params.yaml names)")


def add_system_args(p: argparse.ArgumentParser) -> None:
    """The options with which --system names a system or ensemble of the preset's tables (see system_models)."""
    add_config_args(p)
    p.add_argument("--task", help="with --system: the task (e.g. en-de)")
    p.add_argument("--models-dir", default=".", help="with --system: the directory of the trained systems")
    p.add_argument("--combine", choices=("prob", "logprob"), default="prob",
                   help="ensemble: average the probabilities (default) or the log-probabilities (does not change "
                        "an averaged attention)")


def load_config(args) -> dict:
    return cfg.load_params(args.params, args.preset)


def system_models(args, command: str) -> tuple[list[str], str]:
    """The model files and ensemble combination a command decodes: --model as given, or --system NAME of the
    preset's tables for --task under --models-dir (how `dvc repro` names a system or an ensemble)."""
    if not args.system:
        return args.model, args.combine
    if not args.task:
        raise cfg.ConfigError(f"{command} --system needs --task (and --models-dir)")
    paths, ensemble_combine = plan.decoding_models(load_config(args), Path(args.params).parent, args.task, args.system,
                                                  args.models_dir)
    return [str(p) for p in paths], ensemble_combine or args.combine
