"""The grammar of `nmt train`, `nmt translate` and `nmt attention` (their work: nmt.cli.model_commands, imported when
one runs). Like nmt.cli.parser, it imports nothing heavy."""

from __future__ import annotations

from .options import (
    DEMO,
    DEMO_MODELS,
    DEVICE_HELP,
    THREADS_HELP,
    add_config_args,
    add_system_args,
    add_table_arg,
    command,
)


def register(sub) -> None:
    """`nmt train`, `nmt translate`, `nmt attention`: the commands that run a model."""
    p = command(
        sub,
        "train",
        help="train one system of a table (resumes from its checkpoint)",
        example=f"nmt train --preset demo --table luong2015_table1 --system base --data {DEMO} --out demo-models/base",
        handler="model_commands:cmd_train",
    )
    add_config_args(p)
    add_table_arg(p, required=True)
    p.add_argument("--system", required=True, help="a system of the table (`nmt systems` lists them)")
    p.add_argument("--data", required=True, help="prepared data directory (nmt data prepare's --out)")
    p.add_argument("--out", required=True, help="model directory")
    p.add_argument(
        "--init-from",
        help="model.pt to start from (train.init_from {system: NAME} default: "
        "results/PRESET/TASK/models/NAME/model.pt)",
    )
    p.add_argument(
        "--guided-links",
        help="links of the prepared training pairs for guided alignment "
        "(train.guided_alignment.from ALIGNER default: "
        "results/PRESET/TASK/alignments/aligners/ALIGNER.train.links)",
    )
    p.add_argument("--threads", type=int, default=None, help=THREADS_HELP)
    p.add_argument("--device", default=None, help="cpu, cuda, cuda:1 (default: cuda when available)")
    p.add_argument(
        "--replace",
        action="store_true",
        help="train even where --out holds another system's (or other settings') finished model.pt, "
        "removing that training's files first (without it: refused, nothing touched)",
    )

    p = command(
        sub,
        "translate",
        help="translate a tokenised source file (several --model: an ensemble)",
        example=f"nmt translate --preset demo --task en-de --system base --models-dir {DEMO_MODELS} "
        f"--src {DEMO}/test.src --out base.test.txt",
        handler="model_commands:cmd_translate",
    )
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--model", nargs="+", help="model.pt; more than one decodes them as an ensemble")
    which.add_argument(
        "--system",
        help="a system or ensemble that the preset's tables define for --task, "
        "its model.pt (or its members') taken from --models-dir",
    )
    add_system_args(p)
    p.add_argument(
        "--positions-out",
        help="also write, per output word, the source position credited with it "
        "(the largest attention weight of the step credited to the word), for unk replacement",
    )
    p.add_argument(
        "--credit",
        choices=["read", "predicted"],
        default=None,
        help="which step's attention is credited to an output word: the step that reads it or the one "
        "that predicts it (default: each model's own rule, Luong et al.'s footnote 14, as in alignment "
        "extraction)",
    )
    p.add_argument("--src", required=True, help="tokenised source file, one sentence a line")
    p.add_argument("--out", required=True, help="the translations, one a line")
    p.add_argument("--beam", type=int, default=None, help="beam size (1 = greedy; default from the config)")
    p.add_argument(
        "--monotonic",
        choices=["soft", "hard"],
        default=None,
        help="monotonic attention: its expected alignment (soft, as trained; the default) or the hard "
        "linear-time process (Raffel et al. 2017)",
    )
    p.add_argument(
        "--batch-size",
        type=int,
        default=None,
        help="sentences decoded together (default: the model's translate.batch_size)",
    )
    p.add_argument("--threads", type=int, default=None, help=THREADS_HELP)
    p.add_argument("--device", default=None, help=DEVICE_HELP)

    p = command(
        sub,
        "attention",
        help="attention matrix of a model for one reference translation (forced "
        "decoding; the data of Luong et al.'s Figure 7), or an aligner's links of that sentence pair",
        example=f"nmt attention --preset demo --task en-de --system global_location_feed --models-dir "
        f"{DEMO_MODELS} --src {DEMO}/align.src --tgt {DEMO}/align.tgt --line 1 --out attention.json",
        handler="model_commands:cmd_attention",
    )
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--model", nargs="+", help="model.pt (with attention); several = an ensemble (their average)")
    source.add_argument("--system", help="a system or ensemble that the preset's tables define for --task")
    source.add_argument(
        "--links",
        help="a word aligner's links (Pharaoh, source first, one line per sentence pair "
        "of --src/--tgt), drawn in place of attention",
    )
    add_system_args(p)
    p.add_argument(
        "--label", default="word alignment links", help="with --links: what the links are (default: %(default)s)"
    )
    p.add_argument("--device", default=None, help=DEVICE_HELP)
    p.add_argument("--src", required=True, help="tokenised source file")
    p.add_argument("--tgt", required=True, help="tokenised reference file, line by line parallel to --src")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--line", type=int, help="the 1-based line to use")
    which.add_argument(
        "--length",
        type=int,
        nargs=2,
        metavar=("MIN", "MAX"),
        help="use the first line whose source has MIN to MAX words",
    )
    p.add_argument("--out", required=True, help="JSON file: words, weights (target x source), models or links")
    p.add_argument("--name", dest="system_name", help="the name recorded in the JSON (default: --system)")
    p.add_argument("--threads", type=int, default=None, help=THREADS_HELP)
