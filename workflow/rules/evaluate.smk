# BLEU (tokenised, multi-bleu equivalent; sacreBLEU 13a on detokenised text), before and after unk replacement
# (models with attention), and test perplexity (trained systems).


rule unk_dictionary:
    input:
        src="data/{preset}/{pair}/prepared/train.src",
        tgt="data/{preset}/{pair}/prepared/train.tgt",
    output:
        "results/{preset}/{pair}/unk/dictionary.tsv",
    resources:
        **CPU_JOB,
    log:
        "logs/{preset}/{pair}/unk_dictionary.log",
    shell:
        "nmt unk dict --src {input.src} --tgt {input.tgt} --out {output}" + EFLOMAL_SAMPLERS + " > {log} 2>&1"


rule evaluate:
    input:
        hyp="results/{preset}/{pair}/translations/{system}.{testset}.txt",
        positions="results/{preset}/{pair}/translations/{system}.{testset}.pos",
        unk_dict="results/{preset}/{pair}/unk/dictionary.tsv",
        ref="data/{preset}/{pair}/prepared/{testset}.tgt",
        src="data/{preset}/{pair}/prepared/{testset}.src",
        model=scoring_model,
    output:
        scores="results/{preset}/{pair}/scores/{system}.{testset}.json",
        # the translation after unk replacement (unchanged for a model without attention)
        unk="results/{preset}/{pair}/translations/{system}.{testset}.unk.txt",
    params:
        # perplexity from the system's own model; an ensemble has none (the preset names the language)
        scoring=lambda wc, input: f"--model {input.model}" if input.model else NMT_ARGS,
    wildcard_constraints:
        testset="|".join(sorted({testset for _, _, testset in EVALUATIONS})) or "none",
    threads: 1
    resources:
        **CPU_JOB,
    log:
        "logs/{preset}/{pair}/evaluate/{system}.{testset}.log",
    shell:
        "nmt evaluate --hyp {input.hyp} --ref {input.ref} --src {input.src} {params.scoring}"
        " --positions {input.positions} --unk-dict {input.unk_dict} --unk-out {output.unk}"
        " --out {output.scores} --system {wildcards.system} --testset {wildcards.testset}"
        " --preset-name {wildcards.preset} --pair {wildcards.pair} --threads {threads}" + CPU_DEVICE + " > {log} 2>&1"
