# One training job per system of the preset's tables. Rerunning after a kill resumes from checkpoint.pt.


rule train:
    input:
        data=layout.pattern(layout.PREPARED_TENSORS, split="train"),
        dev=layout.pattern(layout.PREPARED_TENSORS, split="dev"),
        table=table_of,
        # a baseline to start from, links of the training pairs (guided alignment): nmt.config.training_inputs
        extra=training_inputs,
    output:
        model=layout.MODEL,
        metrics=layout.METRICS,
        meta=layout.MODEL_INFO,
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
        layout.pattern(layout.JOB_TIMING, step="train", name="{system}")
    shell:
        "nmt train {NMT_ARGS} --table {input.table} --system {wildcards.system}"
        " --data $(dirname {input.data}) --out $(dirname {output.model}) {params.extra} --threads {threads}"
        + TRAIN_DEVICE + " > {log} 2>&1"
