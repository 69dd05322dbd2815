# All tables of the preset, paper numbers beside ours, as HTML + CSV + JSON.


rule report:
    input:
        all_scores,
        all_metrics,
        all_translations,
        all_attention_maps,
        tables=config["tables"],
        figures=config.get("figures", []),
        attention_speed=f"results/{PRESET}/benchmarks/attention.json",
        monotonic_speed=f"results/{PRESET}/benchmarks/monotonic.json",
    output:
        html="reports/{preset}/index.html",
        summary="reports/{preset}/summary.json",
    resources:
        **CPU_JOB,
    log:
        "logs/{preset}/report.log",
    shell:
        "nmt report {NMT_ARGS} --results results/{wildcards.preset} --data data/{wildcards.preset}"
        " --out $(dirname {output.html}) > {log} 2>&1"
