# Helpers shared by the rules: which files a step needs, derived from the table files.
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


TRAIN_JOB = cluster_resources("train")
DECODE_JOB = cluster_resources("decode")
CPU_JOB = cluster_resources("cpu")


def device_option(resources):
    """What the nmt commands of a job with these resources add to say where they compute: " --device cpu" when
    the job holds no GPU, since without --device nmt computes on a free GPU whenever CUDA is available
    (nmt/devices.py) and a job must never take one outside the `gpu` resource that Snakemake counts
    (profiles/local) and a cluster grants; nothing when it holds one (nmt then claims a GPU that no other
    nmt job uses). A rule's shell command is its text plus this, so a job with a GPU runs the command it always
    did (a changed command would make Snakemake rerun it: e.g. retrain every system)."""
    return "" if resources.get("gpu") else " --device cpu"


TRAIN_DEVICE = device_option(TRAIN_JOB)
DECODE_DEVICE = device_option(DECODE_JOB)
CPU_DEVICE = device_option(CPU_JOB)  # " --device cpu" in every preset: e.g. evaluate's test perplexity
EFLOMAL_SAMPLERS = f" --samplers {nmtcfg.eflomal_samplers(config)}"  # every eflomal run: unk dictionary, aligners
UNK_CREDIT = nmtcfg.unk_credit_option(config)  # "" (each model's own footnote-14 rule) or " --credit read|predicted"



def prepared(split, side):
    """A task's prepared file of ``split`` (a name, or a wildcard such as "{testset}"), ``side`` src or tgt."""
    return layout.pattern(layout.PREPARED_SIDE, split=split, side=side)


def system_fingerprint(wildcards):
    """Changes whenever the system's resolved settings change, so Snakemake retrains it."""
    table = SYSTEMS[wildcards.pair][wildcards.system]
    resolved = nmtcfg.system_config(config, TABLES[table], wildcards.system, table)
    settings = nmtcfg.comparable_settings(resolved)  # keys added later, at their default, change nothing
    settings["prepare"] = nmtcfg.prepare_for_task(resolved, wildcards.pair)
    return nmtcfg.fingerprint(settings)


def _training_inputs(wildcards):
    table = SYSTEMS[wildcards.pair][wildcards.system]
    resolved = nmtcfg.system_config(config, TABLES[table], wildcards.system, table)
    return nmtcfg.training_inputs(resolved, layout.path(layout.RESULTS, preset=wildcards.preset, pair=wildcards.pair))


def training_inputs(wildcards):
    """Files the system's training reads besides its corpus: a model to start from, guided-alignment links."""
    return [str(path) for path in _training_inputs(wildcards).values()]


def training_input_flags(wildcards):
    """The `nmt train` options that pass training_inputs, in the same order."""
    return [{"init_from": "init-from", "links": "guided-links"}[key] for key in _training_inputs(wildcards)]


def table_of(wildcards):
    return SYSTEMS[wildcards.pair][wildcards.system]


def all_scores(wildcards):
    """Every scores file the tables show: BLEU/ppl of translations and AER/SAER of alignments."""
    shown = [*EVALUATIONS, *ALIGNMENTS]
    return [layout.path(layout.SCORES, preset=PRESET, pair=pair, system=system, testset=testset)
            for pair, system, testset in shown]


def all_translations(wildcards):
    """Every shown translation, as decoded and after unk replacement (figures and sample tables read them)."""
    return [layout.path(template, preset=PRESET, pair=pair, system=system, testset=testset)
            for pair, system, testset in EVALUATIONS for template in (layout.TRANSLATION, layout.UNK_TRANSLATION)]


def all_attention_maps(wildcards):
    return [layout.path(layout.ATTENTION, preset=PRESET, pair=pair, system=system, split=split)
            for pair, system, split in ATTENTION_MAPS]


def ensemble_of(wildcards):
    """The ensemble spec when {system} names an ensemble of the table, else None."""
    return ENSEMBLES.get(wildcards.pair, {}).get(wildcards.system)


def decoding_models(wildcards):
    """model.pt of a trained system, or of every member of an ensemble."""
    models_dir = layout.path(layout.MODELS, preset=wildcards.preset, pair=wildcards.pair)
    return [str(p) for p in nmtplan.model_files(ENSEMBLES.get(wildcards.pair, {}), wildcards.system, models_dir)[0]]


def combine_args(wildcards):
    """--combine for an ensemble of several systems; nothing for a system or a decoding of one."""
    spec = ensemble_of(wildcards)
    return f"--combine {spec['combine']}" if spec and spec.get("combine") else ""


def decode_args(wildcards):
    """A table's decoding of a trained system (`decodings:`): its beam and monotonic attention mode."""
    options = nmtplan.decode_options(ENSEMBLES.get(wildcards.pair, {}), wildcards.system)
    return " ".join(f"--{key} {value}" for key, value in sorted(options.items()))


def raw_reference(wildcards):
    """The test set's raw reference when the preset has one (nmt.config.raw_reference_splits), else nothing."""
    if wildcards.testset in nmtcfg.raw_reference_splits(config, wildcards.pair):
        return [layout.path(layout.RAW_REFERENCE, preset=PRESET, pair=wildcards.pair, split=wildcards.testset)]
    return []


def scoring_model(wildcards):
    """The model that gives test perplexity: a trained system's own (also for a decoding of it); none for an
    ensemble (the paper reports no perplexity for ensembles)."""
    if nmtplan.is_ensemble(ENSEMBLES.get(wildcards.pair, {}), wildcards.system):
        return []
    return [str(p) for p in decoding_models(wildcards)]


def all_metrics(wildcards):
    return [layout.path(layout.METRICS, preset=PRESET, pair=pair, system=system)
            for pair, systems in SYSTEMS.items() for system in systems]
