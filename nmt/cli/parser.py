"""The `nmt` command line's grammar: every command, its options with their help, and one example each. Each command
names the function it runs as "MODULE:FUNCTION" of nmt.cli (nmt.cli.options.resolve imports it when the command runs),
so that building the parser, all `nmt --help` does, imports nothing heavy. The examples work at the demo preset from
the repository's root; those that read a run's files need the demo run made first (`snakemake --cores all`, README.md's
"Set up and run the demo")."""

from __future__ import annotations

import argparse

from ..base import eflomal_runner, layout
from . import align_parser, model_parser, scoring_parser
from .options import DEMO, THREADS_HELP, Formatter, add_config_args, add_table_arg, command, group, resolve

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
        _data_commands,
        _bench_commands,
        _plan_commands,
        model_parser.register,
        _unk_commands,
        align_parser.register,
        scoring_parser.register,
    ):  # the order of `nmt --help`
        add_commands(sub)
    return parser


def _data_commands(sub) -> None:
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


def _bench_commands(sub) -> None:
    """`nmt bench train|translate|attention|monotonic`: measurements of this code's speed."""
    bench = group(sub, "bench", help="measurements of this code's speed", dest="bench_command")
    p = command(
        bench,
        "train",
        help="training throughput of each distinct model of the preset (for nmt estimate)",
        example="nmt bench train --preset demo --systems base --updates 5 --device cpu --out throughput-demo.json",
        handler="bench_commands:cmd_bench_train",
    )
    add_config_args(p)
    p.add_argument("--data", help="prepared data root, for real sizes (default: data/PRESET)")
    p.add_argument("--updates", type=int, default=20, help="timed updates per model (default: %(default)s)")
    p.add_argument("--warmup", type=int, default=3, help="untimed updates first (default: %(default)s)")
    p.add_argument("--device", help="cpu or cuda (default: cuda when available)")
    p.add_argument("--threads", type=int, default=None, help=THREADS_HELP)
    p.add_argument(
        "--compare-eager",
        action="store_true",
        help="also time the plain eager fp32 path, in turn with the fast one (eager_tokens_per_s)",
    )
    p.add_argument("--systems", nargs="+", metavar="SYSTEM", help="measure only these systems (default: all)")
    p.add_argument(
        "--epoch-check",
        nargs="+",
        metavar="SYSTEM",
        default=[],
        help="also train one epoch of each on its prepared data, fast and eager fp32: dev perplexity "
        "and throughput of both",
    )
    p.add_argument(
        "--epoch-check-seeds",
        nargs="+",
        type=int,
        metavar="SEED",
        help="train each --epoch-check system once per seed, both paths (default: the preset's seed); "
        "the paths' dropout masks differ, and the seeds show how much that alone moves the result",
    )
    p.add_argument(
        "--precision",
        help="the fast path's train.precision for every system: auto, fp32 or bf16 (default: each system's own)",
    )
    p.add_argument("--out", help="JSON file (default: benchmarks/throughput-PRESET-DEVICE.json)")
    p = command(
        bench,
        "translate",
        help="decoding speed of each distinct model of the preset: greedy and beam "
        "search, sentences/s at batch 1 and 64",
        example="nmt bench translate --preset demo --systems base --min-time 0.2 --device cpu --out "
        "translate-demo.json",
        handler="bench_commands:cmd_bench_translate",
    )
    add_config_args(p)
    p.add_argument("--data", help="prepared data root, for real sentences (default: data/PRESET)")
    p.add_argument("--beam", type=int, help="beam size (default: the preset's translate.beam)")
    p.add_argument("--device", help="cpu or cuda (default: cuda when available)")
    p.add_argument("--threads", type=int, default=None, help=THREADS_HELP)
    p.add_argument(
        "--compare-eager",
        action="store_true",
        help="also time the plain path (eager engine, step-by-step reference searches), in turn",
    )
    p.add_argument("--systems", nargs="+", metavar="SYSTEM", help="only these systems (default: all)")
    p.add_argument(
        "--min-time",
        type=float,
        default=1.0,
        help="seconds of timed decoding per model and batch size (default: %(default)s)",
    )
    p.add_argument("--out", help="JSON file (default: benchmarks/translate-PRESET-DEVICE.json)")
    p = command(
        bench,
        "attention",
        help="time per decoder step of global vs local attention, by source length",
        example="nmt bench attention --preset demo --lengths 10 50 --out attention-speed.json",
        handler="bench_commands:cmd_bench_attention",
    )
    add_config_args(p)
    p.add_argument("--out", required=True, help="JSON file for the report")
    p.add_argument("--lengths", type=int, nargs="+", help="source lengths (default: bench.attention.lengths)")
    p.add_argument("--device", default="cpu", help="cpu or cuda (default: %(default)s)")
    p.add_argument("--threads", type=int, default=1, help="CPU threads (default: %(default)s)")
    p = command(
        bench,
        "monotonic",
        help="softmax vs hard monotonic attention (Raffel et al. 2017, appendix F): "
        "context vectors over a T x U grid, and whole greedy decoding by length",
        example="nmt bench monotonic --preset demo --out monotonic-speed.json",
        handler="bench_commands:cmd_bench_monotonic",
    )
    add_config_args(p)
    p.add_argument("--out", required=True, help="JSON file for the report")
    p.add_argument("--threads", type=int, default=1, help="CPU threads, torch's and numpy's (default: %(default)s)")


def _plan_commands(sub) -> None:
    """`nmt estimate`, `nmt systems`, `nmt seed-targets`, `nmt export-run`, `nmt dvc-yaml`, `nmt params-yaml`,
    `nmt config`: what the preset plans."""
    p = command(
        sub,
        "estimate",
        help="device-hours to train every system of the preset, from measured throughput",
        description="Device-hours to train every system of the preset: epochs x training tokens per epoch / "
        "the throughput `nmt bench train` measured. Works before any download: the training sizes come from "
        "the prepared data where it exists, else from the sizes the preset or the corpus registry states "
        "(each row says which). A system without a measurement says 'not measured'.",
        example="nmt estimate --preset demo --throughput benchmarks/throughput-demo-cpu.json",
        handler="bench_commands:cmd_estimate",
    )
    add_config_args(p)
    p.add_argument(
        "--throughput",
        help="the JSON file `nmt bench train` wrote (default: the preset's committed "
        "benchmarks/throughput-PRESET-DEVICE.json, where there is one)",
    )
    p.add_argument("--data", help="prepared data root, for real sizes where it exists (default: data/PRESET)")
    claims_file = layout.path(layout.REPORT_CLAIMS, preset="PRESET")  # reports/PRESET/ and the file's name
    p.add_argument(
        "--claims",
        help=f"a report's {claims_file.rsplit('/', 1)[1]} ({claims_file}): also what training "
        "every inconclusive claim's systems with the seeds that would decide it costs",
    )
    p.add_argument("--json", help="also write the estimate as JSON")

    p = command(
        sub,
        "systems",
        help="list the systems the preset's tables train",
        example="nmt systems --preset demo --with-pair",
        handler="plan_commands:cmd_systems",
    )
    add_config_args(p)
    p.add_argument("--with-pair", action="store_true", help="print each system's task first (TASK<tab>SYSTEM)")
    p = command(
        sub,
        "seed-targets",
        help="the files of one seed's part of the run (a run made one seed at a time: "
        "`snakemake $(nmt seed-targets --seed 2)`)",
        example="nmt seed-targets --preset demo --seed 1",
        handler="plan_commands:cmd_seed_targets",
    )
    add_config_args(p)
    p.add_argument("--seed", type=int, required=True, help="one of the preset's train.seeds")
    p = command(
        sub,
        "export-run",
        help="copy a run's small files (no models) into another directory, e.g. a "
        "published reference; one seed's part at a time with --seed",
        example="nmt export-run --preset demo --out demo-export/results",
        handler="plan_commands:cmd_export_run",
    )
    add_config_args(p)
    p.add_argument("--results", help="the run's results directory (default: results/PRESET)")
    p.add_argument("--out", required=True, help="e.g. docs/reproductions/PRESET/results")
    p.add_argument("--seed", type=int, action="append", help="only this seed's part (repeatable; default: every seed)")
    p.add_argument("--replace", action="store_true", help="overwrite files already there with other content")
    p = command(
        sub,
        "dvc-yaml",
        help="write dvc.yaml and workflow/dvc/*/dvc.yaml beside the params file: the "
        "stages of the preset params.yaml names, from its table and figure files "
        "(run it after changing the preset)",
        example="nmt dvc-yaml --check",
        handler="plan_commands:cmd_dvc_yaml",
    )
    add_config_args(p)
    p.add_argument("--check", action="store_true", help="only check that the file is current (exit 2 if not)")
    p.add_argument("--stamp", help="with --check: write this file once the check passes (dvc.yaml's plan stage)")
    p = command(
        sub,
        "params-yaml",
        help="write the params file's comments from the settings' declared help "
        "(nmt/settings/sections.py); its values are left as they are",
        example="nmt params-yaml --check",
        handler="plan_commands:cmd_params_yaml",
    )
    p.add_argument("--params", default="params.yaml", help="the params file (default: %(default)s)")
    p.add_argument("--check", action="store_true", help="only check that the comments are current (exit 2 if not)")

    p = command(
        sub,
        "config",
        help="print the resolved configuration (of one system with --table/--system)",
        example="nmt config --preset demo --table luong2015_table1 --system base",
        handler="plan_commands:cmd_config",
    )
    add_config_args(p)
    add_table_arg(p)
    p.add_argument(
        "--system",
        help="with --table: a system of that table (`nmt systems` lists them), printed as training resolves it",
    )
    p.add_argument(
        "--explain",
        action="store_true",
        help="print each value on a line of its own with the layer that "
        "set it (params.yaml, the preset, the command line, the table's recipe, the table, a seed run, the "
        "task's corpus), like `git config --show-origin`",
    )
    p.add_argument(
        "--schema",
        action="store_true",
        help="print the JSON schema every configuration is validated "
        "against (derived from the declared settings, nmt/settings/sections.py)",
    )


def _unk_commands(sub) -> None:
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
