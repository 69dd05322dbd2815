# One training job per system of the preset's tables. Rerunning after a kill resumes from checkpoint.pt.


rule train:
    input:
        data="data/{preset}/{pair}/prepared/train.pt",
        dev="data/{preset}/{pair}/prepared/dev.pt",
        table=table_of,
        # a baseline to start from, links of the training pairs (guided alignment): nmt.config.training_inputs
        extra=training_inputs,
    output:
        model="results/{preset}/{pair}/models/{system}/model.pt",
        metrics="results/{preset}/{pair}/models/{system}/metrics.jsonl",
        meta="results/{preset}/{pair}/models/{system}/model.json",
    params:
        settings=system_fingerprint,
        extra=lambda wc, input: " ".join(f"--{flag} {path}" for flag, path in
                                          zip(training_input_flags(wc), input.extra)),
    threads: 1
    resources:
        **TRAIN_JOB,
    log:
        "logs/{preset}/{pair}/train/{system}.log",
    benchmark:
        "results/{preset}/benchmarks/{pair}/train/{system}.tsv"
    shell:
        "nmt train {NMT_ARGS} --table {input.table} --system {wildcards.system}"
        " --data $(dirname {input.data}) --out $(dirname {output.model}) {params.extra} --threads {threads}"
        + TRAIN_DEVICE + " > {log} 2>&1"
