# Corpora: get (generate the synthetic corpus, or fetch a registry corpus from the mirror or the network,
# verified by sha256) and prepare (tokenise, filter, vocabularies, binarise).

SPLITS = ["train", "dev", "test"]


rule corpus:
    output:
        expand("data/{{preset}}/{{pair}}/raw/{split}.{side}", split=SPLITS, side=["src", "tgt"]),
        stats="data/{preset}/{pair}/raw/stats.json",
    params:
        settings=lambda wc: nmtcfg.fingerprint(config["data"]["tasks"][wc.pair]),
    log:
        "logs/{preset}/{pair}/corpus.log",
    shell:
        "nmt data get {NMT_ARGS} --task {wildcards.pair} --out $(dirname {output.stats}) > {log} 2>&1"


rule prepare:
    input:
        expand("data/{{preset}}/{{pair}}/raw/{split}.{side}", split=SPLITS, side=["src", "tgt"]),
    output:
        expand("data/{{preset}}/{{pair}}/prepared/{split}.{ext}", split=SPLITS, ext=["src", "tgt", "pt"]),
        "data/{preset}/{pair}/prepared/vocab.src",
        "data/{preset}/{pair}/prepared/vocab.tgt",
        prep="data/{preset}/{pair}/prepared/prep.json",
    params:
        settings=lambda wc: nmtcfg.fingerprint(nmtcfg.prepare_for_task(config, wc.pair)),
    log:
        "logs/{preset}/{pair}/prepare.log",
    shell:
        "nmt data prepare {NMT_ARGS} --task {wildcards.pair} --raw data/{wildcards.preset}/{wildcards.pair}/raw"
        " --out $(dirname {output.prep}) --splits {SPLITS} > {log} 2>&1"
