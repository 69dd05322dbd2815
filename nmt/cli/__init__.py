"""The `nmt` command line (nmt.cli.main), with `nmt align ...` in nmt.cli.align."""
from .main import build_parser, main

__all__ = ["build_parser", "main"]
