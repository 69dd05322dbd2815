# Decode each test set with each trained system (beam size from the preset's `translate` section).


rule translate:
    input:
        model="results/{preset}/{pair}/models/{system}/model.pt",
        src="data/{preset}/{pair}/prepared/{testset}.src",
    output:
        "results/{preset}/{pair}/translations/{system}.{testset}.txt",
    params:
        settings=lambda wc: nmtcfg.fingerprint(config["translate"]),
    threads: 1
    log:
        "logs/{preset}/{pair}/translate/{system}.{testset}.log",
    benchmark:
        "results/{preset}/benchmarks/{pair}/translate/{system}.{testset}.tsv"
    shell:
        "nmt translate --model {input.model} --src {input.src} --out {output} --threads {threads} > {log} 2>&1"
