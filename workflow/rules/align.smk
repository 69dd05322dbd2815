# Alignment tables (Luong et al. Table 6, Peter et al. Table 1): word alignments of the gold-aligned split, from
# trained models by forced decoding of the reference, or from a statistical aligner; then AER/SAER against the
# gold links. Which ones: nmt.pipeline.plan.collect_alignments (the tables' `alignment` sections).


def alignment_of(wildcards):
    return ALIGNMENTS[(wildcards.pair, wildcards.system, wildcards.split)]


def reverse_task_file(template, wildcards):
    """The same system's file of the split in the alignment's reverse task (the other translation direction)."""
    return layout.path(template, preset=wildcards.preset, pair=alignment_of(wildcards)["reverse_task"],
                       system=wildcards.system, split=wildcards.split)


rule align_model:
    input:
        models=decoding_models,
        src=prepared("{split}", "src"),
        tgt=prepared("{split}", "tgt"),
    output:
        links=layout.LINKS,
        soft=layout.SOFT_LINKS,
        # every step's weights credited to the word it predicts (Luong Table 6's second column)
        predicted=layout.PREDICTED_LINKS,
    params:
        combine=combine_args,
    wildcard_constraints:
        split="|".join(sorted({split for _, _, split in ALIGNMENTS})) or "none",
    threads: 1
    resources:
        **DECODE_JOB,
    log:
        "logs/{preset}/{pair}/align/{system}.{split}.log",
    shell:
        "nmt align extract --model {input.models} {params.combine} --src {input.src} --tgt {input.tgt}"
        " --out {output.links} --soft-out {output.soft} --predicted-out {output.predicted} --threads {threads}"
        + DECODE_DEVICE + " > {log} 2>&1"


rule align_training_model:
    # a trained system's links of the training pairs, for another system's guided alignment training
    # (train.guided_alignment.from {system: NAME}: Peter et al.'s follow-up with target-foresight alignments)
    input:
        models=decoding_models,
        src=prepared("train", "src"),
        tgt=prepared("train", "tgt"),
    output:
        layout.pattern(layout.LINKS, split="train"),
    threads: 1
    resources:
        **DECODE_JOB,
    log:
        "logs/{preset}/{pair}/align/{system}.train.log",
    shell:
        "nmt align extract --model {input.models} --src {input.src} --tgt {input.tgt} --out {output}"
        " --threads {threads}" + DECODE_DEVICE + " > {log} 2>&1"


rule align_merge:
    # both translation directions (Peter et al.): this task's links and the reverse task's same-named system's,
    # whose source is this task's target (the reverse task's split holds the same pairs the other way round)
    input:
        forward=layout.LINKS,
        backward=lambda wc: reverse_task_file(layout.LINKS, wc),
        forward_predicted=layout.PREDICTED_LINKS,
        backward_predicted=lambda wc: reverse_task_file(layout.PREDICTED_LINKS, wc),
    output:
        links=layout.MERGED_LINKS,
        predicted=layout.MERGED_PREDICTED_LINKS,
    params:
        method=lambda wc: alignment_of(wc)["symmetrize"],
    resources:
        **CPU_JOB,
    log:
        "logs/{preset}/{pair}/align/{system}.{split}.merge.log",
    shell:
        "(nmt align symmetrize --forward {input.forward} --reverse {input.backward} --flip-reverse"
        " --method {params.method} --out {output.links}"
        " && nmt align symmetrize --forward {input.forward_predicted} --reverse {input.backward_predicted}"
        " --flip-reverse --method {params.method} --out {output.predicted}) > {log} 2>&1"


rule align_training_data:
    # the links of the prepared training pairs that guided alignment training reads (train.guided_alignment.from)
    input:
        src=prepared("train", "src"),
        tgt=prepared("train", "tgt"),
    output:
        layout.pattern(layout.ALIGNER_LINKS, split="train"),
    params:
        model=lambda wc: TRAINING_ALIGNMENTS[(wc.pair, wc.system)]["model"],
        method=lambda wc: TRAINING_ALIGNMENTS[(wc.pair, wc.system)]["symmetrize"],
    resources:
        **CPU_JOB,
    log:
        "logs/{preset}/{pair}/align/{system}.train.log",
    shell:
        "nmt align eflomal --src {input.src} --tgt {input.tgt} --model {params.model} --method {params.method}"
        " --out {output}" + EFLOMAL_SAMPLERS + " > {log} 2>&1"


rule align_statistical:
    input:
        src=prepared("{split}", "src"),
        tgt=prepared("{split}", "tgt"),
        train_src=prepared("train", "src"),
        train_tgt=prepared("train", "tgt"),
    output:
        layout.ALIGNER_LINKS,
    params:
        model=lambda wc: alignment_of(wc)["aligner"]["model"],
        method=lambda wc: alignment_of(wc)["aligner"]["symmetrize"],
    wildcard_constraints:
        split="|".join(sorted({split for _, _, split in ALIGNMENTS})) or "none",
    resources:
        **CPU_JOB,
    log:
        "logs/{preset}/{pair}/align/{system}.{split}.log",
    shell:
        "nmt align eflomal --src {input.src} --tgt {input.tgt} --extra-src {input.train_src}"
        " --extra-tgt {input.train_tgt} --model {params.model} --method {params.method}"
        " --out {output}" + EFLOMAL_SAMPLERS + " > {log} 2>&1"


def alignment_links(wildcards):
    entry = alignment_of(wildcards)
    fields = {"preset": wildcards.preset, "pair": wildcards.pair, "system": wildcards.system, "split": wildcards.split}
    if entry["kind"] == "aligner":
        return {"links": layout.path(layout.ALIGNER_LINKS, **fields)}
    merged = bool(entry["reverse_task"])
    return {"links": layout.path(layout.MERGED_LINKS if merged else layout.LINKS, **fields),
            "predicted": layout.path(layout.MERGED_PREDICTED_LINKS if merged else layout.PREDICTED_LINKS, **fields),
            "soft": layout.path(layout.SOFT_LINKS, **fields)}


rule align_score:
    input:
        unpack(alignment_links),
        gold=layout.GOLD,
        src=prepared("{split}", "src"),
        tgt=prepared("{split}", "tgt"),
    output:
        layout.pattern(layout.SCORES, testset="{split}"),
    params:
        soft=lambda wc, input: f"--soft {input.soft}" if "soft" in input.keys() else "",
        predicted=lambda wc, input: f"--test-predicted {input.predicted}" if "predicted" in input.keys() else "",
    wildcard_constraints:
        split="|".join(sorted({split for _, _, split in ALIGNMENTS})) or "none",
    resources:
        **CPU_JOB,
    log:
        "logs/{preset}/{pair}/align/{system}.{split}.score.log",
    shell:
        "nmt align score --gold {input.gold} --test {input.links} {params.predicted} {params.soft}"
        " --src {input.src} --tgt {input.tgt}"
        " --system {wildcards.system} --testset {wildcards.split} --pair {wildcards.pair}"
        " --preset-name {wildcards.preset} --out {output} > {log} 2>&1"
