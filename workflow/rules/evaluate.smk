# BLEU (tokenised, multi-bleu equivalent; sacreBLEU 13a on detokenised text), before and after unk replacement
# (models with attention), and test perplexity (trained systems).


rule unk_dictionary:
    input:
        src=prepared("train", "src"),
        tgt=prepared("train", "tgt"),
    output:
        layout.UNK_DICTIONARY,
    resources:
        **CPU_JOB,
    params:
        # eflomal's links of the training pairs, or (unk.dictionary: stanford) the task corpus' released dictionary
        how=lambda wc, input, output: (
            f"{NMT_ARGS} --task {wc.pair} --out {output}"
            if nmtcfg.unk_dictionary_release(config, wc.pair)
            else f"--src {input.src} --tgt {input.tgt} --out {output}" + EFLOMAL_SAMPLERS
        ),
    log:
        "logs/{preset}/{pair}/unk_dictionary.log",
    shell:
        "nmt unk dict {params.how} > {log} 2>&1"


rule evaluate:
    input:
        hyp=layout.TRANSLATION,
        positions=layout.POSITIONS,
        unk_dict=layout.UNK_DICTIONARY,
        ref=prepared("{testset}", "tgt"),
        src=prepared("{testset}", "src"),
        model=scoring_model,
        raw_ref=raw_reference,
    output:
        scores=layout.SCORES,
        # the translation after unk replacement (unchanged for a model without attention)
        unk=layout.UNK_TRANSLATION,
    params:
        # perplexity from the system's own model; an ensemble has none (the preset names the language)
        scoring=lambda wc, input: f"--model {input.model}" if input.model else NMT_ARGS,
        # detokenised BLEU against the test set's raw reference where the preset has one
        raw_ref=lambda wc, input: f" --raw-ref {input.raw_ref}" if input.raw_ref else "",
    wildcard_constraints:
        testset="|".join(sorted({testset for _, _, testset in EVALUATIONS})) or "none",
    threads: 1
    resources:
        **CPU_JOB,
    log:
        "logs/{preset}/{pair}/evaluate/{system}.{testset}.log",
    shell:
        "nmt evaluate --hyp {input.hyp} --ref {input.ref}{params.raw_ref} --src {input.src} {params.scoring}"
        " --positions {input.positions} --unk-dict {input.unk_dict} --unk-out {output.unk}"
        " --out {output.scores} --system {wildcards.system} --testset {wildcards.testset}"
        " --preset-name {wildcards.preset} --pair {wildcards.pair} --threads {threads}" + CPU_DEVICE + " > {log} 2>&1"
