# All tables of the preset, paper numbers beside ours, as HTML + CSV + JSON.


rule report:
    input:
        all_scores,
        all_metrics,
        all_translations,
        all_attention_maps,
        tables=config["tables"],
        figures=config.get("figures", []),
        claims=config.get("claims", []),
        # the paper preset: what the report's list of deviations compares this preset's settings with
        paper_preset=f"{config['presets_dir']}/paper.yaml",
        attention_speed=layout.path(layout.BENCHMARK, preset=PRESET, name="attention"),
        monotonic_speed=layout.path(layout.BENCHMARK, preset=PRESET, name="monotonic"),
    output:
        # the whole directory, so that `snakemake --report` carries the page with its figures and files
        report=report(directory(layout.REPORT), htmlindex="index.html", category="Paper tables and claims",
                      caption="../report/tables.rst"),
    params:
        results=layout.RESULTS_ROOT,
        data=layout.DATA_ROOT,
    resources:
        **CPU_JOB,
    log:
        "logs/{preset}/report.log",
    shell:
        "nmt report {NMT_ARGS} --results {params.results} --data {params.data}"
        " --out {output.report} > {log} 2>&1"
