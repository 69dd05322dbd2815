"""The grammar of `nmt evaluate`, `nmt report` and `nmt compare` (their work: nmt.cli.scoring_commands, imported when
one runs). Like nmt.cli.parser, it imports nothing heavy."""

from __future__ import annotations

from .options import DEMO, THREADS_HELP, add_config_args, command


def register(sub) -> None:
    """`nmt evaluate`, `nmt report`, `nmt compare`: scores and the report."""
    p = command(
        sub,
        "evaluate",
        help="BLEU (tokenised and sacreBLEU 13a) and perplexity -> JSON",
        example="nmt evaluate --preset demo --hyp results/demo/en-de/translations/base.test.txt --ref "
        f"{DEMO}/test.tgt --system base --testset test --preset-name demo --pair en-de --out "
        "base.test.json",
        handler="scoring_commands:cmd_evaluate",
    )
    add_config_args(p)
    p.add_argument("--hyp", required=True, help="the translation, tokenised, one sentence a line")
    p.add_argument("--ref", required=True, help="the tokenised reference, line by line parallel to --hyp")
    p.add_argument(
        "--raw-ref",
        help="the test set's raw reference (same sentences and order as --ref, checked): "
        "detokenised BLEU is scored against it instead of the detokenised --ref",
    )
    p.add_argument(
        "--lowercase",
        action="store_true",
        help="the text was lowercased when it was prepared (prepare.lowercase): score BLEU and chrF "
        "case-insensitively, so that their signatures say case:lc",
    )
    p.add_argument("--src", help="source file (for perplexity, with --model; for unk replacement)")
    p.add_argument(
        "--positions",
        help="attended source positions (nmt translate --positions-out): also score "
        "the translation after unk replacement",
    )
    p.add_argument("--unk-dict", help="the dictionary of nmt unk dict")
    p.add_argument("--unk-out", help="where the unk-replaced translation goes")
    p.add_argument("--model", help="model for test perplexity")
    p.add_argument(
        "--models-dir",
        help="instead of --model: perplexity from DIR/SYSTEM/model.pt when the preset's "
        "tables train SYSTEM; none when they define it as an ensemble",
    )
    p.add_argument("--lang", help="target language for detokenisation (default: the model's corpus setting)")
    p.add_argument("--out", required=True, help="JSON file for the scores")
    p.add_argument("--system", required=True, help="recorded in the JSON: the system's name")
    p.add_argument("--testset", required=True, help="recorded in the JSON: the split scored (e.g. test)")
    p.add_argument("--preset-name", dest="preset_name", required=True, help="recorded in the JSON: the preset")
    p.add_argument(
        "--pair",
        required=True,
        help="recorded in the JSON: the task (e.g. en-de); with the params file it also names the target language",
    )
    p.add_argument("--threads", type=int, default=None, help=THREADS_HELP)
    p.add_argument(
        "--device",
        default=None,
        help="for perplexity: cpu, cuda, cuda:1 (default: a free GPU when there "
        "is one; the workflow's CPU jobs pass cpu)",
    )

    p = command(
        sub,
        "report",
        help="render the preset's tables into HTML + CSV + JSON",
        example="nmt report --preset demo --results results/demo --data data/demo --out reports/demo",
        handler="scoring_commands:cmd_report",
    )
    add_config_args(p)
    p.add_argument("--results", required=True, help="results/{preset}")
    p.add_argument("--data", required=True, help="data/{preset}")
    p.add_argument("--out", required=True, help="reports/{preset}")
    p.add_argument(
        "--partial",
        action="store_true",
        help="render even when fewer than half of the expected scores files exist (a run not finished, "
        "one seed's part of a reference); without it, such a report is refused",
    )

    p = command(
        sub,
        "compare",
        help="a run's report against a reference's (docs/reproductions/PRESET): the "
        "numbers that differ by more than the seeds' spread, the claims that differ",
        example="nmt compare reports/demo reports/demo --all",
        handler="scoring_commands:cmd_compare",
    )
    p.add_argument("run", help="the run's report directory (reports/PRESET)")
    p.add_argument("reference", help="the reference's report directory")
    p.add_argument("--all", action="store_true", help="show every number and claim, not only those that differ")
    p.add_argument(
        "--across-presets",
        action="store_true",
        help="compare reports of different presets or corpora anyway (the first line says so)",
    )
    p.add_argument("--json", help="also write the comparison as JSON")
