# Helpers shared by the rules: which files a step needs, derived from the table files.


def system_fingerprint(wildcards):
    """Changes whenever the system's resolved settings change, so Snakemake retrains it."""
    table = SYSTEMS[wildcards.pair][wildcards.system]
    resolved = nmtcfg.system_config(config, TABLES[table], wildcards.system, table)
    settings = {k: resolved[k] for k in ("model", "train")}
    settings["prepare"] = nmtcfg.prepare_for_task(resolved, wildcards.pair)
    return nmtcfg.fingerprint(settings)


def table_of(wildcards):
    return SYSTEMS[wildcards.pair][wildcards.system]


def all_scores(wildcards):
    return [
        f"results/{PRESET}/{pair}/scores/{system}.{testset}.json"
        for pair, systems in SYSTEMS.items()
        for system in systems
        for testset in TESTSETS
    ]


def all_metrics(wildcards):
    return [
        f"results/{PRESET}/{pair}/models/{system}/metrics.jsonl"
        for pair, systems in SYSTEMS.items()
        for system in systems
    ]
