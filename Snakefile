# The whole pipeline as a Snakemake DAG: `snakemake --cores all` (demo preset by default).
# Another preset: `snakemake --cores all --config preset=tiny`. Every job runs the `nmt` commands of its record
# (nmt.pipeline.jobs), built from the preset's table files (workflow/tables/*.yaml), never from a list here.
from pathlib import Path

from snakemake.logging import logger
from snakemake.utils import min_version

from nmt import config as nmtcfg
from nmt.base import layout
from nmt.pipeline import jobs as nmtjobs
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

# params.yaml + workflow/presets/{preset}.yaml, validated against the schema derived from nmt/settings/sections.py:
# an unknown key or a wrong type stops the workflow here with a message naming it.
try:
    # read as the commands read it too (nmt.base.files): a key given twice, which Snakemake's own reading lets through
    # with the last value, stops here
    nmtcfg.read_yaml(Path(workflow.basedir) / "params.yaml", "the params file")
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
# every job of the preset, with its commands and files; a table, figure or claims file naming what the plan lacks
# stops the workflow here with one line naming it
try:
    JOBS = nmtjobs.build_jobs(config, workflow.basedir)
except nmtcfg.ConfigError as err:
    raise WorkflowError(str(err))

wildcard_constraints:
    preset=PRESET,


include: "workflow/rules/common.smk"
include: "workflow/rules/jobs.smk"


rule all:
    input:
        layout.path(layout.REPORT, preset=PRESET),
