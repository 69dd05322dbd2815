"""The `nmt` command line's grammar: every command, its options with their help, and one example each. Each command
names the function it runs as "MODULE:FUNCTION" of nmt.cli (nmt.cli.options.resolve imports it when the command runs),
so that building the parser, all `nmt --help` does, imports nothing heavy. The examples work at the demo preset from
the repository's root; those that read a run's files need the demo run made first (`snakemake --cores all`, README.md's
"Set up and run the demo")."""

from __future__ import annotations

import argparse

from . import align_parser, bench_parser, data_parser, model_parser, plan_parser, scoring_parser, unk_parser
from .options import Formatter, resolve

DESCRIPTION = (
    "The reproduction pipeline's commands: one per step of the workflow (Snakemake and DVC call them; so can "
    "people). `nmt COMMAND --help` says what a command does and ends with an example."
)


class _Version(argparse.Action):
    """--version: the package's version and the commit of its checkout, looked up only when asked for."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(resolve("version:version_line")())
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nmt",
        description=DESCRIPTION,
        formatter_class=Formatter,
        epilog="example: nmt systems --preset demo --with-pair",
    )
    parser.add_argument(
        "--version",
        action=_Version,
        help="print the version and the git commit of the source (when it is a checkout), and exit",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add_commands in (
        data_parser.register,
        bench_parser.register,
        plan_parser.register,
        model_parser.register,
        unk_parser.register,
        align_parser.register,
        scoring_parser.register,
    ):  # the order of `nmt --help`
        add_commands(sub)
    return parser
