# BLEU (tokenised, multi-bleu equivalent; sacreBLEU 13a on detokenised text) and test perplexity.


rule evaluate:
    input:
        hyp="results/{preset}/{pair}/translations/{system}.{testset}.txt",
        ref="data/{preset}/{pair}/prepared/{testset}.tgt",
        src="data/{preset}/{pair}/prepared/{testset}.src",
        model="results/{preset}/{pair}/models/{system}/model.pt",
    output:
        "results/{preset}/{pair}/scores/{system}.{testset}.json",
    threads: 1
    log:
        "logs/{preset}/{pair}/evaluate/{system}.{testset}.log",
    shell:
        "nmt evaluate --hyp {input.hyp} --ref {input.ref} --src {input.src} --model {input.model}"
        " --out {output} --system {wildcards.system} --testset {wildcards.testset}"
        " --preset-name {wildcards.preset} --pair {wildcards.pair} --threads {threads} > {log} 2>&1"
