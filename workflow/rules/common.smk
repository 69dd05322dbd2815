# What a job asks a cluster for, and where its commands compute.
import os


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
