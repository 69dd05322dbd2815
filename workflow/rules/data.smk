# Corpora: generate (demo) and prepare (tokenise, filter, vocabularies, binarise).

SPLITS = ["train", "dev", "test"]


rule synth_corpus:
    output:
        expand("data/{{preset}}/{{pair}}/raw/{split}.{side}", split=SPLITS + ["align"], side=["src", "tgt"]),
        "data/{preset}/{pair}/raw/align.gold",
        stats="data/{preset}/{pair}/raw/stats.json",
    log:
        "logs/{preset}/{pair}/synth.log",
    shell:
        "nmt data synth {NMT_ARGS} --task {wildcards.pair} --out $(dirname {output.stats}) > {log} 2>&1"


rule prepare:
    input:
        expand("data/{{preset}}/{{pair}}/raw/{split}.{side}", split=SPLITS, side=["src", "tgt"]),
    output:
        expand("data/{{preset}}/{{pair}}/prepared/{split}.{ext}", split=SPLITS, ext=["src", "tgt", "pt"]),
        "data/{preset}/{pair}/prepared/vocab.src",
        "data/{preset}/{pair}/prepared/vocab.tgt",
        prep="data/{preset}/{pair}/prepared/prep.json",
    params:
        settings=lambda wc: nmtcfg.fingerprint(config["prepare"]),
    log:
        "logs/{preset}/{pair}/prepare.log",
    shell:
        "nmt data prepare {NMT_ARGS} --task {wildcards.pair} --raw data/{wildcards.preset}/{wildcards.pair}/raw"
        " --out $(dirname {output.prep}) --splits {SPLITS} > {log} 2>&1"
