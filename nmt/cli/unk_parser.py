"""The grammar of `nmt unk dict|replace` (their work: nmt.cli.unk_commands, imported when one runs). Like
nmt.cli.parser, it imports nothing heavy."""

from __future__ import annotations

from ..base import eflomal_runner, layout
from .options import DEMO, add_config_args, command, group


def register(sub) -> None:
    """`nmt unk dict|replace`: unknown-word replacement."""
    unk = group(
        sub,
        "unk",
        help="unk replacement: dictionary from word alignments, replacement by attention",
        dest="unk_command",
    )
    p = command(
        unk,
        "dict",
        help="align the training corpus with eflomal; most frequent target word per source word "
        "(or, with --task and unk.dictionary: stanford, the task corpus' own dictionary)",
        example=f"nmt unk dict --src {DEMO}/train.src --tgt {DEMO}/train.tgt --samplers 1 --out dictionary.tsv",
        handler="unk_commands:cmd_unk_dict",
    )
    p.add_argument("--src", help="tokenised training source (eflomal)")
    p.add_argument("--tgt", help="tokenised training target (eflomal)")
    p.add_argument("--out", required=True, help="dictionary TSV (source, target, links or probability)")
    add_config_args(p)
    p.add_argument(
        "--task",
        help="with unk.dictionary: stanford, the task whose corpus' released dictionary "
        "(data.tasks.TASK.unk_dictionary) is fetched and converted",
    )
    p.add_argument("--downloads", default=layout.DOWNLOADS, help="where fetched files are kept (default: %(default)s)")
    p.add_argument("--seed", type=int, default=1, help="seed of eflomal's sampler (default: %(default)s)")
    eflomal_runner.add_samplers_argument(p)
    translations = "results/demo/en-de/translations"
    p = command(
        unk,
        "replace",
        help="replace each <unk> by the dictionary entry of its attended source word",
        example=f"nmt unk replace --hyp {translations}/base.test.txt --positions {translations}/base.test.pos "
        f"--src {DEMO}/test.src --dict results/demo/en-de/unk/dictionary.tsv --out base.test.unk.txt",
        handler="unk_commands:cmd_unk_replace",
    )
    p.add_argument("--hyp", required=True, help="the translation (nmt translate's --out)")
    p.add_argument("--positions", required=True, help="the --positions-out file of nmt translate")
    p.add_argument("--src", required=True, help="the source the translation was made from")
    p.add_argument("--dict", required=True, help="the dictionary of nmt unk dict")
    p.add_argument("--out", required=True, help="the translation with its <unk> replaced")
