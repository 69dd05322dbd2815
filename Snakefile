# The whole pipeline as a Snakemake DAG: `snakemake --cores all` (demo preset by default).
# Another preset: `snakemake --cores all --config preset=tiny`. Every rule calls one `nmt` command; the
# systems to train come from the preset's table files (workflow/tables/*.yaml), never from a list here.
from pathlib import Path

from snakemake.logging import logger
from snakemake.utils import min_version

from nmt import config as nmtcfg
from nmt import layout
from nmt.align.statistical import aligner_label
from nmt.pipeline import plan as nmtplan
from nmt.pipeline import snakemake_locks as nmt_locks

min_version("8.0")


configfile: "params.yaml"


report: "workflow/report/workflow.rst"  # `snakemake --report report.zip`: nmt's report with Snakemake's provenance


# `--config` may only pick the preset: every `nmt` command re-reads params.yaml and the preset itself, so
# any other override would change what Snakemake tracks but not what the commands do.
_overrides = set(workflow.config_settings.overwrite_config) - {"preset"}
if _overrides:
    raise WorkflowError(
        f"--config/--configfile may only set `preset` (got {', '.join(sorted(_overrides))}); "
        "change other settings in params.yaml or in workflow/presets/<preset>.yaml"
    )

# params.yaml + workflow/presets/{preset}.yaml, validated against nmt/spec/schemas/params.schema.yaml:
# an unknown key or a wrong type stops the workflow here with a message naming it.
try:
    _resolved = nmtcfg.merge_preset(config, config.get("preset"), root=Path(workflow.basedir), source="params.yaml")
except nmtcfg.ConfigError as err:
    raise WorkflowError(str(err))
config.clear()
config.update(_resolved)

# A run killed with its jobs leaves Snakemake's locks behind: they are taken over when the run that held them is
# gone (nmt.pipeline.snakemake_locks), so that the same command finishes it without --unlock.
if workflow.is_main_process:
    _taken_over = nmt_locks.take_over_stale_locks(".snakemake")
    if _taken_over:
        logger.warning(_taken_over)

PRESET = config["preset"]
SYSTEMS = nmtplan.collect_systems(config, workflow.basedir)  # {task: {system: table file}}: trained
ENSEMBLES = nmtplan.collect_ensembles(config, workflow.basedir)  # {task: {ensemble: members}}: decoded together
TABLES = {t: nmtcfg.load_table(t) for t in config["tables"]}
EVALUATIONS = nmtplan.collect_evaluations(config, workflow.basedir)  # [(task, system, testset)] shown
ATTENTION_MAPS = nmtplan.collect_attention_maps(config, workflow.basedir)  # {(task, system, split): length}
ALIGNMENTS = {(a["task"], a["name"], a["split"]): a for a in nmtplan.collect_alignments(config, workflow.basedir)}
TRAINING_ALIGNMENTS = nmtplan.collect_training_alignments(config, workflow.basedir)  # {(task, aligner): settings}
nmtplan.collect_claims(config, workflow.basedir)  # a claim naming an unknown system stops here, not at the report
SPLITS = {task: nmtcfg.task_splits(config, task) for task in SYSTEMS}  # what each task's corpus provides
NMT_ARGS = f"--params params.yaml --preset {PRESET}"

wildcard_constraints:
    preset=PRESET,
    pair="|".join(SYSTEMS) or "none",
    system="[A-Za-z0-9_]+",
    testset="[A-Za-z0-9_]+",


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/translate.smk"
include: "workflow/rules/evaluate.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/align.smk"
include: "workflow/rules/bench.smk"
include: "workflow/rules/report.smk"


rule all:
    input:
        layout.path(layout.REPORT, preset=PRESET),
