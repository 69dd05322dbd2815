# Alignment tables (Luong et al. Table 6, Peter et al. Table 1): word alignments of the gold-aligned split, from
# trained models by forced decoding of the reference, or from a statistical aligner; then AER/SAER against the
# gold links. Which ones: nmt.config.collect_alignments (the tables' `alignment` sections).


def alignment_of(wildcards):
    return ALIGNMENTS[(wildcards.pair, wildcards.system, wildcards.split)]


rule align_model:
    input:
        models=decoding_models,
        src="data/{preset}/{pair}/prepared/{split}.src",
        tgt="data/{preset}/{pair}/prepared/{split}.tgt",
    output:
        links="results/{preset}/{pair}/alignments/{system}.{split}.links",
        soft="results/{preset}/{pair}/alignments/{system}.{split}.soft.npz",
    params:
        combine=lambda wc: f"--combine {ensemble_of(wc)['combine']}" if ensemble_of(wc) else "",
    threads: 1
    log:
        "logs/{preset}/{pair}/align/{system}.{split}.log",
    shell:
        "nmt align extract --model {input.models} {params.combine} --src {input.src} --tgt {input.tgt}"
        " --out {output.links} --soft-out {output.soft} --threads {threads} > {log} 2>&1"


rule align_statistical:
    input:
        src="data/{preset}/{pair}/prepared/{split}.src",
        tgt="data/{preset}/{pair}/prepared/{split}.tgt",
        train_src="data/{preset}/{pair}/prepared/train.src",
        train_tgt="data/{preset}/{pair}/prepared/train.tgt",
    output:
        "results/{preset}/{pair}/alignments/aligners/{system}.{split}.links",
    params:
        model=lambda wc: alignment_of(wc)["aligner"]["model"],
        method=lambda wc: alignment_of(wc)["aligner"]["symmetrize"],
    log:
        "logs/{preset}/{pair}/align/{system}.{split}.log",
    shell:
        "nmt align eflomal --src {input.src} --tgt {input.tgt} --extra-src {input.train_src}"
        " --extra-tgt {input.train_tgt} --model {params.model} --method {params.method}"
        " --out {output} > {log} 2>&1"


def alignment_links(wildcards):
    entry = alignment_of(wildcards)
    base = f"results/{wildcards.preset}/{wildcards.pair}/alignments"
    if entry["kind"] == "aligner":
        return {"links": f"{base}/aligners/{wildcards.system}.{wildcards.split}.links"}
    return {"links": f"{base}/{wildcards.system}.{wildcards.split}.links",
            "soft": f"{base}/{wildcards.system}.{wildcards.split}.soft.npz"}


rule align_score:
    input:
        unpack(alignment_links),
        gold="data/{preset}/{pair}/raw/{split}.gold",
        src="data/{preset}/{pair}/prepared/{split}.src",
        tgt="data/{preset}/{pair}/prepared/{split}.tgt",
    output:
        "results/{preset}/{pair}/scores/{system}.{split}.json",
    params:
        soft=lambda wc, input: f"--soft {input.soft}" if "soft" in input.keys() else "",
    wildcard_constraints:
        split="|".join(sorted({split for _, _, split in ALIGNMENTS})) or "none",
    log:
        "logs/{preset}/{pair}/align/{system}.{split}.score.log",
    shell:
        "nmt align score --gold {input.gold} --test {input.links} {params.soft} --src {input.src} --tgt {input.tgt}"
        " --system {wildcards.system} --testset {wildcards.split} --pair {wildcards.pair}"
        " --preset-name {wildcards.preset} --out {output} > {log} 2>&1"
