# Speed measurements shown in the report. On one machine a benchmark asks for every core the run was given, so
# Snakemake runs nothing beside it and the timings are not disturbed by training jobs; it still times one thread.
# On a cluster (no --cores) the SLURM profile gives it one core on whichever node SLURM picks. Both are CPU jobs:
# `nmt bench attention` is told --device cpu (CPU_DEVICE), `nmt bench monotonic` only ever computes on the CPU.


rule bench_attention:
    output:
        layout.pattern(layout.BENCHMARK, name="attention"),
    params:
        settings=lambda wildcards: nmtcfg.fingerprint(config["bench"]["attention"]),
    threads: lambda wildcards: workflow.cores  # evaluated per job: a cluster run has no total of cores
    resources:
        **CPU_JOB,
    log:
        "logs/{preset}/bench_attention.log",
    shell:
        "nmt bench attention {NMT_ARGS} --threads 1 --out {output}" + CPU_DEVICE + " > {log} 2>&1"


rule bench_monotonic:
    output:
        layout.pattern(layout.BENCHMARK, name="monotonic"),
    params:
        settings=lambda wildcards: nmtcfg.fingerprint(config["bench"]["monotonic"]),
    threads: lambda wildcards: workflow.cores  # evaluated per job: a cluster run has no total of cores
    resources:
        **CPU_JOB,
    log:
        "logs/{preset}/bench_monotonic.log",
    shell:
        "nmt bench monotonic {NMT_ARGS} --threads 1 --out {output} > {log} 2>&1"
