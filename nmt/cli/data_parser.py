"""The grammar of `nmt data get|list|fetch|prepare` (their work: nmt.cli.data_commands, imported when one runs). Like
nmt.cli.parser, it imports nothing heavy."""

from __future__ import annotations

from ..base import layout
from .options import DEMO, add_config_args, command, group


def register(sub) -> None:
    """`nmt data get|list|fetch|prepare`: corpora."""
    data = group(sub, "data", help="corpora: list, fetch, get, prepare", dest="data_command")
    p = command(
        data,
        "get",
        help="the raw corpus of a task: generated (synth) or fetched and verified",
        example="nmt data get --preset demo --task en-de --out data/demo/en-de/raw",
        handler="data_commands:cmd_data_get",
    )
    add_config_args(p)
    p.add_argument("--task", required=True, help="the table task (e.g. en-de); the preset names its corpus")
    p.add_argument("--out", required=True, help="directory for {split}.src / {split}.tgt")
    p.add_argument("--downloads", default=layout.DOWNLOADS, help="where fetched files are kept (default: %(default)s)")
    p.add_argument("--offline", action="store_true", help="use only the mirror and earlier downloads")
    command(
        data,
        "list",
        help="the corpus registry: corpora, files, mirror paths, licences",
        example="nmt data list",
        handler="data_commands:cmd_data_list",
    )
    p = command(
        data,
        "fetch",
        help="fetch files of a registry corpus, verified by sha256 (mirror first)",
        example="nmt data fetch multi30k train.en train.de --mirror ../shared/data",
        handler="data_commands:cmd_data_fetch",
    )
    p.add_argument("corpus", help="a corpus of the registry (`nmt data list`)")
    p.add_argument("files", nargs="*", help="file names (default: all of the corpus)")
    p.add_argument("--dest", help="destination directory (default: DOWNLOADS/CORPUS)")
    p.add_argument("--downloads", default=layout.DOWNLOADS, help="where fetched files are kept (default: %(default)s)")
    p.add_argument("--mirror", help="a directory laid out like ../shared/data, consulted before the network")
    p.add_argument("--offline", action="store_true", help="never download")
    p.add_argument(
        "--accept-licence",
        action="store_true",
        help="you read and accepted the licence of a licence-gated corpus (RWTH gold alignments)",
    )
    p = command(
        data,
        "prepare",
        help="tokenise, length-filter, build vocabularies, binarise",
        example="nmt data prepare --preset demo --task en-de --raw data/demo/en-de/raw --out " + DEMO,
        handler="data_commands:cmd_data_prepare",
    )
    add_config_args(p)
    p.add_argument("--task", required=True, help="the table task (e.g. en-de) whose preparation settings apply")
    p.add_argument("--raw", required=True, help="directory with {split}.src / {split}.tgt (nmt data get's --out)")
    p.add_argument("--out", required=True, help="directory for the prepared splits, vocabularies and prep.json")
    p.add_argument("--splits", nargs="+", default=None, help="default: every split of the task's corpus")
