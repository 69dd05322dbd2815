# The workflow's set-up: the configuration resolved and checked, stale locks taken over, every job of the preset
# built as a record (JOBS), and what a job asks a cluster for and where its commands compute.
import os
import sys
from pathlib import Path

from snakemake.logging import logger

from nmt import config as nmtcfg
from nmt.base import layout
from nmt.pipeline import jobs as nmtjobs
from nmt.pipeline import snakemake_config as nmt_cli_config
from nmt.pipeline import snakemake_locks as nmt_locks


def stop_with_one_line(message):
    """A mistake in what the researcher typed or wrote: its one line and exit status 1, no traceback (a WorkflowError
    would add Snakemake's own lines about this file)."""
    print(f"Error: {message}", file=sys.stderr)
    sys.exit(1)


# `--config` may only pick the preset (nmt.pipeline.snakemake_config); a key Snakemake cannot parse (train.lr=0.1)
# never gets here: Snakemake stops on it before reading this file.
_settings = workflow.config_settings
_refused = nmt_cli_config.refused_keys(_settings.overwrite_config)
if _refused:
    stop_with_one_line(_refused)

# params.yaml + workflow/presets/{preset}.yaml, validated against the schema derived from nmt/settings/sections.py:
# an unknown key or a wrong type stops the workflow here with a message naming it.
try:
    # read as the commands read it too (nmt.base.files): a key given twice, which Snakemake's own reading lets through
    # with the last value, stops here
    nmtcfg.read_yaml(Path(workflow.basedir) / "params.yaml", "the params file")
    _named_by = nmt_cli_config.where_preset_named(_settings.config, _settings.overwrite_config, _settings.configfiles,
                                                  "params.yaml")
    _resolved = nmtcfg.merge_preset(config, config.get("preset"), root=Path(workflow.basedir), source="params.yaml",
                                    named_by=_named_by)
except nmtcfg.ConfigError as err:
    stop_with_one_line(err)
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
    stop_with_one_line(err)


wildcard_constraints:
    preset=PRESET,


def cluster_resources(kind):
    """What a job of this kind (train, decode, cpu) asks a cluster for: the preset's `cluster` section (GPUs,
    memory in MB, wall time in minutes), plus the site's partition and account from the environment when set:
    NMT_SLURM_PARTITION (every job), NMT_SLURM_GPU_PARTITION (jobs with GPUs, if they go elsewhere),
    NMT_SLURM_ACCOUNT. Resources mean nothing to a run on one machine unless it limits them (--resources gpu=1:
    profiles/local)."""
    spec = (config.get("cluster") or {}).get(kind)
    if not spec:
        return {}
    resources = {"mem_mb": spec["mem_mb"], "runtime": spec["runtime"]}
    if spec["gpus"]:
        resources["gpu"] = spec["gpus"]
        if spec.get("gpu_model"):
            resources["gpu_model"] = spec["gpu_model"]
    partition = (spec["gpus"] and os.environ.get("NMT_SLURM_GPU_PARTITION")) or os.environ.get("NMT_SLURM_PARTITION")
    if partition:
        resources["slurm_partition"] = partition
    if os.environ.get("NMT_SLURM_ACCOUNT"):
        resources["slurm_account"] = os.environ["NMT_SLURM_ACCOUNT"]
    return resources


RESOURCES = {kind: cluster_resources(kind) for kind in nmtjobs.KINDS}


def device_option(resources):
    """What the nmt commands of a job with these resources add to say where they compute: " --device cpu" when
    the job holds no GPU, since without --device nmt computes on a free GPU whenever CUDA is available
    (nmt/base/devices.py) and a job must never take one outside the `gpu` resource that Snakemake counts
    (profiles/local) and a cluster grants; nothing when it holds one (nmt then claims a GPU that no other
    nmt job uses)."""
    return "" if resources.get("gpu") else " --device cpu"


DEVICE = {kind: device_option(resources) for kind, resources in RESOURCES.items()}
