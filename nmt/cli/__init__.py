"""The `nmt` command line: its grammar in nmt.cli.parser (with nmt.cli.model_parser, nmt.cli.scoring_parser and
nmt.cli.align_parser), what each command does in the module of its command group (nmt.cli.data_commands,
bench_commands, plan_commands, model_commands, unk_commands, scoring_commands, align), imported only when the command
runs (nmt.cli.options.resolve).
Details: docs/internals/cli.md."""

import sys
import traceback

from ..base.errors import UserError
from ..engine import mkl_on_amd
from .options import check_outputs, resolve
from .parser import build_parser


def main(argv: list[str] | None = None) -> int:
    if argv is None:
        mkl_on_amd.reexec_if_useful()  # returns where there is nothing to do
    args = build_parser().parse_args(argv)
    try:
        check_outputs(args)  # no command writes over a file it reads
        resolve(args.func)(args)
    except UserError as err:  # (nmt.base.errors) its message already names the file, line or key
        print(f"nmt: error: {err}", file=sys.stderr)
        return 2
    except OSError as err:  # reading or writing: a missing or read-only path, a full disk, a directory for a file
        print(f"nmt: error: {os_error_line(err)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C outside a training (a training checkpoints and exits on its own)
        print("nmt: interrupted", file=sys.stderr)
        return 130
    except Exception:  # not something a user can cause: our bug, shown whole
        traceback.print_exc()
        print(
            "nmt: internal error: the traceback above is a bug in nmt; please report it with the command that gave it",
            file=sys.stderr,
        )
        return 1
    return 0


def os_error_line(err: OSError) -> str:
    """An OSError as one line: the path(s) it names and the system's reason."""
    reason = err.strerror or str(err)
    if err.filename is None:
        return reason
    if err.filename2 is not None:
        return f"{err.filename} -> {err.filename2}: {reason}"
    return f"{err.filename}: {reason}"


__all__ = ["build_parser", "main"]
