# Speed measurements shown in the report. A benchmark asks for every core the run was given, so Snakemake
# runs nothing beside it and the timings are not disturbed by training jobs; it still times one thread.


rule bench_attention:
    output:
        "results/{preset}/benchmarks/attention.json",
    params:
        settings=lambda wildcards: nmtcfg.fingerprint(config["bench"]["attention"]),
    threads: workflow.cores
    log:
        "logs/{preset}/bench_attention.log",
    shell:
        "nmt bench attention {NMT_ARGS} --threads 1 --out {output} > {log} 2>&1"


rule bench_monotonic:
    output:
        "results/{preset}/benchmarks/monotonic.json",
    params:
        settings=lambda wildcards: nmtcfg.fingerprint(config["bench"]["monotonic"]),
    threads: workflow.cores
    log:
        "logs/{preset}/bench_monotonic.log",
    shell:
        "nmt bench monotonic {NMT_ARGS} --threads 1 --out {output} > {log} 2>&1"
