# Decode each test set with each trained system and each ensemble of trained systems (beam size from the
# preset's `translate` section; a table's `decodings:` decode a system otherwise, e.g. greedy with hard monotonic
# attention). Beside the translation goes, per output word, the source word the model
# attended to most (empty lines for models without attention): what unk replacement needs.


rule translate:
    input:
        models=decoding_models,
        src=prepared("{testset}", "src"),
    output:
        hyp=layout.TRANSLATION,
        positions=layout.POSITIONS,
    params:
        settings=lambda wc: nmtcfg.fingerprint([config["translate"], ensemble_of(wc)]),
        combine=combine_args,
        decode=decode_args,
    threads: 1
    resources:
        **DECODE_JOB,
    log:
        "logs/{preset}/{pair}/translate/{system}.{testset}.log",
    benchmark:
        layout.pattern(layout.JOB_TIMING, step="translate", name="{system}.{testset}")
    shell:
        "nmt translate --model {input.models} {params.combine} {params.decode} --src {input.src} --out {output.hyp}"
        " --positions-out {output.positions}" + UNK_CREDIT + " --threads {threads}" + DECODE_DEVICE + " > {log} 2>&1"
