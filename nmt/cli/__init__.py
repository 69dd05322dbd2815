"""The `nmt` command line (nmt.cli.commands), with `nmt align ...` in nmt.cli.align.

`main` is the console script's entry. As the process's entry point (no argv given), it first lets nmt.engine.mkl_on_amd
execute the process again where that makes MKL's products faster (an AMD processor), before the commands' modules
are imported, so that the re-execution costs no more than the interpreter's start.
"""
from ..engine import mkl_on_amd


def main(argv: list[str] | None = None) -> int:
    if argv is None:
        mkl_on_amd.reexec_if_useful()  # returns where there is nothing to do
    from .commands import main as run_command  # (after the re-execution: see the module docstring)
    return run_command(argv)


def build_parser():
    from .commands import build_parser as build
    return build()


__all__ = ["build_parser", "main"]
