# What the paper's figures need besides scores: the attention weights of forcing a reference translation
# through a trained system or an ensemble (Figure 7's heat maps), for the sentence a figure file picks by its
# source length; a statistical aligner drawn beside them shows its links of the same sentence pair instead.

_MAP_ALIGNERS = {key for key in ATTENTION_MAPS if ALIGNMENTS.get(key, {}).get("kind") == "aligner"}


def _names(keys):
    return "|".join(sorted({system for _, system, _ in keys})) or "none"


def map_length(wildcards):
    return " ".join(map(str, ATTENTION_MAPS[(wildcards.pair, wildcards.system, wildcards.split)]))


rule attention_map:
    input:
        models=decoding_models,
        src=prepared("{split}", "src"),
        tgt=prepared("{split}", "tgt"),
    output:
        layout.ATTENTION,
    params:
        length=map_length,
        combine=combine_args,
    wildcard_constraints:
        system=_names(set(ATTENTION_MAPS) - _MAP_ALIGNERS),
    threads: 1
    resources:
        **DECODE_JOB,
    log:
        "logs/{preset}/{pair}/attention/{system}.{split}.log",
    shell:
        "nmt attention --model {input.models} {params.combine} --src {input.src} --tgt {input.tgt}"
        " --length {params.length} --name {wildcards.system} --out {output} --threads {threads}" + DECODE_DEVICE
        + " > {log} 2>&1"


rule alignment_map:
    input:
        links=layout.ALIGNER_LINKS,
        src=prepared("{split}", "src"),
        tgt=prepared("{split}", "tgt"),
    output:
        layout.ATTENTION,
    params:
        length=map_length,
        label=lambda wc: aligner_label(ALIGNMENTS[(wc.pair, wc.system, wc.split)]["aligner"]),
    wildcard_constraints:
        system=_names(_MAP_ALIGNERS),
    resources:
        **CPU_JOB,
    log:
        "logs/{preset}/{pair}/attention/{system}.{split}.log",
    shell:
        "nmt attention --links {input.links} --label {params.label:q} --src {input.src} --tgt {input.tgt}"
        " --length {params.length} --name {wildcards.system} --out {output}" + CPU_DEVICE + " > {log} 2>&1"
