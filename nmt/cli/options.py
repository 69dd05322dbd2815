"""The pieces every `nmt` command's options are built from: the shared options (the params file and preset, a system
named with --system), a command's parser with its one example, and the function a command runs, named as
"MODULE:FUNCTION" of nmt.cli and imported only when the command runs (`resolve`).

Nothing heavy is imported here or by the modules that build the parser (nmt.cli.parser and the other *_parser
modules): `nmt --help` builds every command's options, and pays only for argparse.
"""

from __future__ import annotations

import argparse
import os
from importlib import import_module
from pathlib import Path

from ..base.errors import UserError

# what several commands' help and examples say
DEMO = "data/demo/en-de/prepared"  # the demo run's prepared En->De data, which the examples read
DEMO_MODELS = "results/demo/en-de/models"
THREADS_HELP = "CPU threads, torch's (default: torch's own choice)"
DEVICE_HELP = "cpu, cuda, cuda:1 (default: a free GPU when there is one, else the CPU)"


class Formatter(argparse.HelpFormatter):
    """argparse's wrapping of descriptions, but an example is kept on one line: it is pasted into a shell whole."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith("example: "):
            return indent + text
        return super()._fill_text(text, width, indent)


def command(sub, name: str, *, help: str, example: str, handler: str, **kwargs) -> argparse.ArgumentParser:
    """The parser of `nmt ... NAME`: its --help says what it does and ends with ``example`` (a command line that works
    at the demo or tiny preset); running it calls ``handler`` ("MODULE:FUNCTION" of nmt.cli)."""
    parser = sub.add_parser(
        name,
        help=help,
        description=kwargs.pop("description", help),
        epilog=f"example: {example}",
        formatter_class=Formatter,
        **kwargs,
    )
    parser.set_defaults(func=handler)
    return parser


def group(sub, name: str, *, help: str, dest: str):
    """The subcommands of a command group (`nmt data ...`), one of them required."""
    parser = sub.add_parser(name, help=help, description=help, formatter_class=Formatter)
    return parser.add_subparsers(dest=dest, required=True, metavar="COMMAND")


def resolve(handler: str):
    """The function ``handler`` ("MODULE:FUNCTION" of nmt.cli) names: its module is imported here, when the command
    runs, so that building the parser imports none of the commands' work."""
    module, _, name = handler.partition(":")
    return getattr(import_module(f".{module}", __package__), name)


def add_config_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--params", default="params.yaml", help="the params file (default: %(default)s)")
    p.add_argument(
        "--preset",
        default=None,
        help="preset name, e.g. demo, tiny, small, paper (default: the one the params file names)",
    )


def add_system_args(p: argparse.ArgumentParser) -> None:
    """The options with which --system names a system or ensemble of the preset's tables (nmt.cli.arguments's
    system_models)."""
    add_config_args(p)
    p.add_argument("--task", help="with --system: the task (e.g. en-de)")
    p.add_argument(
        "--models-dir",
        default=".",
        help="with --system: the directory of the trained systems, e.g. "
        "results/demo/en-de/models (default: %(default)s)",
    )
    p.add_argument(
        "--combine",
        choices=("prob", "logprob"),
        default="prob",
        help="ensemble: average the probabilities (default) or the log-probabilities (does not change "
        "an averaged attention)",
    )


def add_table_arg(p: argparse.ArgumentParser, **kwargs) -> None:
    """--table, as the report and the docs name a table (its id) or as the workflow does (its file)."""
    p.add_argument(
        "--table",
        help="a table of the preset: its id (e.g. luong2015_table1) or its file "
        "(workflow/tables/luong2015_table1.yaml)",
        **kwargs,
    )


#: the options a command writes to (the others name what it reads): --out, --json and every --*-out
def _outputs(args: argparse.Namespace) -> list[str]:
    return [name for name in vars(args) if name in ("out", "json") or name.endswith("_out")]


def check_outputs(args: argparse.Namespace) -> None:
    """Refuse an output option that names a file the same command reads (`nmt translate --out` naming its --src,
    `nmt evaluate --out` its --hyp): the command would write over its own input. One UserError naming both options."""
    outputs, inputs = _outputs(args), {}
    for name, value in vars(args).items():
        if name in outputs:
            continue
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str) and item and Path(item).is_file():
                inputs.setdefault(os.path.realpath(item), name)
    for name in outputs:
        value, option = getattr(args, name, None), "--" + name.replace("_", "-")
        if isinstance(value, str) and value and os.path.realpath(value) in inputs:
            read_as = "--" + inputs[os.path.realpath(value)].replace("_", "-")
            raise UserError(
                f"{option} {value}: is also the command's {read_as}: it would be written over while it "
                f"is read; give another {option}"
            )
