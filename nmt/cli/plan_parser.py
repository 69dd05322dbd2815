"""The grammar of the plan's commands: `nmt estimate`, `systems`, `seed-targets`, `export-run`, `dvc-yaml`,
`params-yaml` and `config` (their work: nmt.cli.plan_commands, estimate's nmt.cli.bench_commands, imported
when one runs). Like nmt.cli.parser, it imports nothing heavy."""

from __future__ import annotations

from ..base import layout
from .options import add_config_args, add_table_arg, command


def register(sub) -> None:
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
