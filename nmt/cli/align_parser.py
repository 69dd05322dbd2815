"""The grammar of `nmt align {score,symmetrize,eflomal,extract}` (their work: nmt.cli.align_commands, imported when
one runs).

Like nmt.cli.parser, it imports nothing heavy: the choices it offers are plain constants (nmt.data.alignment_formats,
nmt.base.eflomal_runner).
"""

from __future__ import annotations

import argparse
import codecs

from ..base import eflomal_runner
from ..data.alignment_formats import DEFAULT_SYMMETRIZE, FORMATS, SYMMETRIZE_METHODS
from .options import add_system_args, command, group

DEMO = "data/demo/en-de/prepared"  # the demo run's prepared En->De data, which the examples read
DEMO_ALIGNMENTS = "results/demo/en-de/alignments"


def _encoding(name: str) -> str:
    try:
        codec = codecs.lookup(name).name
    except LookupError:
        raise argparse.ArgumentTypeError(f"unknown encoding {name!r}") from None
    if "\n".encode(codec) != b"\n":
        raise argparse.ArgumentTypeError(
            f"encoding {name!r} is not ASCII-compatible (one line = one sentence needs a one-byte newline)"
        )
    return codec


def register(subparsers) -> None:
    """Add `nmt align {score,symmetrize,eflomal,extract}` to the `nmt` command's subparsers."""
    align = group(
        subparsers,
        "align",
        help="word alignments: score (AER, SAER), symmetrize, eflomal baselines",
        dest="align_command",
    )

    p = command(
        align,
        "score",
        help="AER, precision, recall (and SAER of soft alignments) against gold links",
        description="AER, precision, recall (and SAER of soft alignments) against gold links. Links are "
        "compared as (source, target) pairs, 0-based, after each file's --*-reverse. Formats: pharaoh "
        "(0-based i-j sure, i?j possible), talp (1-based i-j, ipj), rwth (SENT: n blocks of 'S i j' / "
        "'P i j', 0-based). See docs/formats.md.",
        example=f"nmt align score --gold data/demo/en-de/raw/align.gold --test "
        f"{DEMO_ALIGNMENTS}/global_location_feed.align.links --src {DEMO}/align.src --tgt "
        f"{DEMO}/align.tgt",
        handler="align_commands:cmd_score",
    )
    p.add_argument("--gold", required=True, help="gold alignment file (sure and possible links)")
    p.add_argument("--gold-format", choices=FORMATS, default="pharaoh", help="default: %(default)s")
    p.add_argument(
        "--gold-reverse",
        action="store_true",
        help="the gold file lists the target index first (e.g. the German-first RWTH file for En->De)",
    )
    p.add_argument("--test", required=True, help="hypothesis alignment file")
    p.add_argument("--test-format", choices=FORMATS, default="pharaoh", help="default: %(default)s")
    p.add_argument("--test-reverse", action="store_true", help="the test file lists the target index first")
    p.add_argument(
        "--test-predicted",
        help="the same model's links with every step credited to the word it "
        "predicts (nmt align extract --predicted-out; same format): recorded as aer_predicted etc.",
    )
    p.add_argument(
        "--test-sure-only",
        action="store_true",
        help="score only the hypothesis' sure links (default: all of its links)",
    )
    p.add_argument(
        "--skip-negative",
        action="store_true",
        help="rwth format: drop links with a negative index (the RWTH file's 'S 21 -100' in SENT 178) "
        "with a warning, instead of stopping",
    )
    p.add_argument(
        "--soft",
        help="soft alignments for SAER: .npz (arr_0, arr_1, ...) or .json (list of "
        "matrices), one target x source matrix per sentence pair",
    )
    p.add_argument("--src", help="source text (as scored) to check that every link lies inside its sentence pair")
    p.add_argument("--tgt", help="target text (as scored), with --src")
    p.add_argument(
        "--encoding",
        type=_encoding,
        default="utf-8",
        help="encoding of --src/--tgt (the RWTH texts are latin-1; default: %(default)s)",
    )
    p.add_argument("--out", help="JSON file for the scores and counts")
    for flag, what in (
        ("--system", "system id"),
        ("--testset", "split name"),
        ("--pair", "task, e.g. en-de"),
        ("--preset-name", "preset"),
    ):
        p.add_argument(flag, help=f"recorded in the JSON: the {what} (as nmt evaluate records it)")

    p = command(
        align,
        "symmetrize",
        help="merge forward and reverse links (grow-diag-final-and, refined, ...)",
        example="nmt align symmetrize --forward results/demo/de-en/alignments/rnnsearch.align.links "
        "--reverse results/demo/en-de/alignments/rnnsearch.align.links --flip-reverse --out "
        "rnnsearch.merged.links",
        handler="align_commands:cmd_symmetrize",
    )
    p.add_argument("--forward", required=True, help="forward-direction links, source index first")
    p.add_argument("--reverse", required=True, help="reverse-direction links (source first unless --flip-reverse)")
    p.add_argument("--format", choices=FORMATS, default="pharaoh", help="format of both files (default: %(default)s)")
    p.add_argument("--flip-reverse", action="store_true", help="the reverse file lists the target index first")
    p.add_argument("--method", choices=SYMMETRIZE_METHODS, default=DEFAULT_SYMMETRIZE, help="default: %(default)s")
    p.add_argument("--out", required=True, help="merged links (Pharaoh, source first)")

    labels = eflomal_runner.MODEL_LABELS
    p = command(
        align,
        "eflomal",
        help="statistical baseline links of a test set (eflomal, both directions, merged)",
        description="Statistical baseline links of a test set (eflomal, both directions, merged). Models: "
        + "; ".join(f"{k} = {v}" for k, v in labels.items())
        + ". The extra training pairs are aligned "
        "together with the test pairs (as the papers' baselines were); only the test pairs' links are "
        "written.",
        example=f"nmt align eflomal --src {DEMO}/align.src --tgt {DEMO}/align.tgt --extra-src "
        f"{DEMO}/train.src --extra-tgt {DEMO}/train.tgt --samplers 1 --out eflomal.align.links",
        handler="align_commands:cmd_eflomal",
    )
    p.add_argument("--src", required=True, help="tokenised test source text")
    p.add_argument("--tgt", required=True, help="tokenised test target text")
    p.add_argument("--encoding", type=_encoding, default="utf-8", help="of --src/--tgt (default: %(default)s)")
    p.add_argument("--extra-src", help="tokenised extra training source, aligned before the test pairs")
    p.add_argument("--extra-tgt", help="tokenised extra training target")
    p.add_argument("--extra-encoding", type=_encoding, default="utf-8", help="of --extra-* (default: %(default)s)")
    p.add_argument(
        "--model",
        type=int,
        choices=sorted(labels),
        default=eflomal_runner.DEFAULT_MODEL,
        help="eflomal model (default: %(default)s)",
    )
    p.add_argument("--method", choices=SYMMETRIZE_METHODS, default=DEFAULT_SYMMETRIZE, help="default: %(default)s")
    p.add_argument(
        "--seed", type=int, default=eflomal_runner.DEFAULT_SEED, help="seed of eflomal's sampler (default: %(default)s)"
    )
    eflomal_runner.add_samplers_argument(p)
    p.add_argument("--out", required=True, help="merged links of the test pairs (Pharaoh, source first)")
    p.add_argument("--forward-out", help="also write the forward direction's links of the test pairs")
    p.add_argument("--reverse-out", help="also write the reverse direction's links (source first, as eflomal writes)")
    p.add_argument("--json", help="also write the run's summary (model, method, seed, reproducible, time) as JSON")

    p = command(
        align,
        "extract",
        help="alignments of a trained model (or ensemble) by forced decoding of the "
        "reference: one link per target word, and the soft matrices",
        description="Alignments of a trained model (or ensemble) by forced decoding of the reference. Row t "
        "of a soft matrix holds the attention credited to target word t (Luong et al. 2015, footnote 14: "
        "content scores credit the step that reads the word, location scores and RNNsearch the step that "
        "predicts it); the hard link of a target word is its largest weight. Several --model: their "
        "matrices are averaged.",
        example="nmt align extract --preset demo --task en-de --system global_location_feed --models-dir "
        f"results/demo/en-de/models --src {DEMO}/align.src --tgt {DEMO}/align.tgt --out "
        "global_location_feed.align.links",
        handler="align_commands:cmd_extract",
    )
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--model", nargs="+", help="model.pt file(s); several = an ensemble")
    which.add_argument("--system", help="a system or ensemble that the preset's tables define for --task")
    add_system_args(p)
    p.add_argument("--src", required=True, help="tokenised source text, as the model reads it")
    p.add_argument("--tgt", required=True, help="tokenised reference translations")
    p.add_argument("--out", required=True, help="hard links (Pharaoh, source index first)")
    p.add_argument("--soft-out", help="soft matrices (.npz, arr_0, arr_1, ...: target x source words)")
    p.add_argument(
        "--predicted-out",
        help="also the hard links with every step's weights credited to the word it "
        "predicts, whatever the score (for content scores, footnote 14's other case)",
    )
    p.add_argument("--batch-size", type=int, default=32, help="sentence pairs per forward pass (default: %(default)s)")
    p.add_argument("--device", default=None, help="cpu, cuda, cuda:1 (default: a free GPU when there is one)")
    p.add_argument("--threads", type=int, default=1, help="CPU threads (default: %(default)s)")
