# The whole pipeline as a Snakemake DAG: `snakemake --cores all` (demo preset by default).
# Another preset: `snakemake --cores all --config preset=tiny`. Every job runs the `nmt` commands of its record
# (nmt.pipeline.jobs), built from the preset's table files (workflow/tables/*.yaml), never from a list here.
# The set-up (the preset merged and checked, the job records built) is workflow/rules/common.smk; the rules,
# one per step, are workflow/rules/jobs.smk.
from snakemake.utils import min_version

min_version("8.0")


configfile: "params.yaml"


report: "workflow/report/workflow.rst"  # `snakemake --report report.zip`: nmt's report with Snakemake's provenance


include: "workflow/rules/common.smk"
include: "workflow/rules/jobs.smk"


rule all:
    input:
        layout.path(layout.REPORT, preset=PRESET),
