# What the paper's figures need besides scores: the attention weights of forcing a reference translation
# through a trained model (Figure 7's heat maps), for the sentence a figure file picks by its source length.


rule attention_map:
    input:
        model="results/{preset}/{pair}/models/{system}/model.pt",
        src="data/{preset}/{pair}/prepared/{split}.src",
        tgt="data/{preset}/{pair}/prepared/{split}.tgt",
    output:
        "results/{preset}/{pair}/attention/{system}.{split}.json",
    params:
        length=lambda wc: " ".join(map(str, ATTENTION_MAPS[(wc.pair, wc.system, wc.split)])),
    threads: 1
    resources:
        **DECODE_JOB,
    log:
        "logs/{preset}/{pair}/attention/{system}.{split}.log",
    shell:
        "nmt attention --model {input.model} --src {input.src} --tgt {input.tgt} --length {params.length}"
        " --system {wildcards.system} --out {output} --threads {threads} > {log} 2>&1"
