# Corpora: get (generate the synthetic corpus, or fetch a registry corpus from the mirror or the network,
# verified by sha256) and prepare (tokenise, filter, vocabularies, binarise). Each task's corpus has its own
# splits (train/dev/test, plus e.g. a second test set or a gold-aligned split), so each task gets its own pair
# of rules: Snakemake needs a rule's output files to be known before it runs.


def _rule_name(task):
    return task.replace("-", "_")


for _task, _splits in SPLITS.items():

    rule:
        name:
            f"corpus_{_rule_name(_task)}"
        output:
            expand(layout.RAW_SIDE, pair=_task, split=_splits, side=["src", "tgt"], allow_missing=True),
            expand(layout.GOLD, pair=_task, split=nmtcfg.gold_splits(config, _task), allow_missing=True),
            expand(layout.RAW_REFERENCE, pair=_task, split=nmtcfg.raw_reference_splits(config, _task),
                   allow_missing=True),
            stats=layout.pattern(layout.RAW_STATS, pair=_task),
        params:
            settings=nmtcfg.fingerprint(config["data"]["tasks"][_task]),
            task=_task,
        resources:
            **CPU_JOB,
        log:
            f"logs/{{preset}}/{_task}/corpus.log",
        shell:
            "nmt data get {NMT_ARGS} --task {params.task} --out $(dirname {output.stats}) > {log} 2>&1"

    rule:
        name:
            f"prepare_{_rule_name(_task)}"
        input:
            expand(layout.RAW_SIDE, pair=_task, split=_splits, side=["src", "tgt"], allow_missing=True),
        output:
            expand(layout.PREPARED_SIDE, pair=_task, split=_splits, side=["src", "tgt"], allow_missing=True),
            expand(layout.PREPARED_TENSORS, pair=_task, split=_splits, allow_missing=True),
            expand(layout.VOCAB, pair=_task, side=["src", "tgt"], allow_missing=True),
            prep=layout.pattern(layout.PREP_STATS, pair=_task),
        params:
            settings=nmtcfg.fingerprint(nmtcfg.prepare_for_task(config, _task)),
            task=_task,
            raw=layout.pattern(layout.RAW, pair=_task),
            splits=" ".join(_splits),
        resources:
            **CPU_JOB,
        log:
            f"logs/{{preset}}/{_task}/prepare.log",
        shell:
            "nmt data prepare {NMT_ARGS} --task {params.task} --raw {params.raw}"
            " --out $(dirname {output.prep}) --splits {params.splits} > {log} 2>&1"
