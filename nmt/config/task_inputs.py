"""What a task's and a system's jobs take from a resolved configuration: the splits of the task's corpus (and which
of them have raw references, gold links or pre-tokenised text), its prepare settings, the files a training reads
besides its corpus, and the options of eflomal and unk replacement."""

from __future__ import annotations

from pathlib import Path

from ..base import layout
from ..data.tasks import corpus_for_task, data_task, licence_allows
from ..settings import EflomalSettings, UnkSettings
from ..settings.origins import Layer, Layered, Origin


def training_inputs(system_cfg: dict, task_results: str | Path) -> dict[str, Path]:
    """Files a system's training reads besides its corpus, where the workflow puts them among its task's results
    (``task_results``: results/{preset}/{pair}, nmt.base.layout):
      init_from  train.init_from {system: NAME} -> NAME's model.pt (a path is taken as it is);
      links      train.guided_alignment.from ALIGNER -> the aligner's links of the prepared training pairs;
                 from {system: NAME} -> that system's forced-decoding links of them (`file` instead names a file
                 in the data directory, which nmt train reads itself).
    Only the keys the system uses are present."""

    def result(template: str, system: str) -> Path:
        return layout.under(task_results, layout.RESULTS, template, system=system, split="train")

    train = system_cfg["train"]
    out: dict[str, Path] = {}
    init = train.get("init_from")
    if isinstance(init, dict):
        out["init_from"] = result(layout.MODEL, init["system"])
    elif init:
        out["init_from"] = Path(init)
    guided = train.get("guided_alignment") or {}
    source = guided.get("from") if guided.get("weight") else None
    if isinstance(source, dict):  # a trained system's own alignments of the training pairs (forced decoding)
        out["links"] = result(layout.LINKS, source["system"])
    elif source:
        out["links"] = result(layout.ALIGNER_LINKS, source)
    return out


def task_splits(config: dict, task: str) -> list[str]:
    """The splits the task's corpus provides, train/dev/test first: what `nmt data get` writes and
    `nmt data prepare` binarises. A synthetic corpus also has its gold-aligned `align` split, and `test2`
    when asked for; a registry corpus has the splits its preset names (e.g. test2: newstest2015)."""
    spec = corpus_for_task(config, task)
    if spec["corpus"] == "synth":
        extra = ["align"] + (["test2"] if spec.get("n_test2") else [])
    else:
        extra = [
            s
            for s, source in (spec.get("splits") or {}).items()
            if s not in ("train", "dev", "test") and licence_allows(config, source)
        ]
    return ["train", "dev", "test", *extra]


def raw_reference_splits(config: dict, task: str) -> list[str]:
    """The task's test splits that come with a raw reference (`raw_ref`: `nmt data get` writes {split}.raw_ref),
    against which detokenised BLEU is scored; the others score it against their detokenised tokenised reference."""
    spec = corpus_for_task(config, task)
    if spec["corpus"] == "synth":
        return []
    return [
        name
        for name, source in (spec.get("splits") or {}).items()
        if isinstance(source, dict) and source.get("raw_ref") and licence_allows(config, source)
    ]


def gold_splits(config: dict, task: str) -> list[str]:
    """The task's splits that come with gold word alignments (`{split}.gold`, Pharaoh, source index first):
    the synthetic corpus' `align` split; a registry split that names a `gold` file."""
    spec = corpus_for_task(config, task)
    if spec["corpus"] == "synth":
        return ["align"]
    return [
        name
        for name, source in (spec.get("splits") or {}).items()
        if isinstance(source, dict) and source.get("gold") and licence_allows(config, source)
    ]


def tokenized_splits(config: dict, task: str) -> list[str]:
    """The task's splits that are already tokenised as their gold links count words (`tokenized: true`): `nmt data
    prepare` keeps them as they are when it tokenises the rest."""
    splits = corpus_for_task(config, task).get("splits") or {}
    return [split for split, source in splits.items() if isinstance(source, dict) and source.get("tokenized")]


def prepare_for_task(config: dict, task: str) -> dict:
    """The preset's `prepare` section with the task's own overrides (data.tasks.{task}.prepare) applied."""
    return task_prepare_layers(Layered(config), task).values["prepare"]


def task_prepare_layers(config: Layered, task: str) -> Layered:
    """The configuration with its `prepare` section as the task's corpus prepares it (data.tasks.{task}.prepare over
    the preset's), each of those keys with the layer that set it."""
    played_by = data_task(config.values, task)

    def from_task(key: str) -> Origin:
        written = config.origins.get(f"data.tasks.{played_by}.{key}")
        return Origin(Layer.TASK, written.file if written else None, f"data.tasks.{played_by}.{key}")

    return config.copy().merge({"prepare": corpus_for_task(config.values, task).get("prepare") or {}}, from_task)


def eflomal_samplers(config: dict) -> int:
    """How many samplers every eflomal run of the preset averages (`eflomal.samplers`)."""
    return EflomalSettings.of(config).samplers


def unk_dictionary_release(config: dict, task: str) -> dict | None:
    """{corpus, file}: the dictionary the task's corpus releases (data.tasks.{task}.unk_dictionary: Stanford's
    dict.en-de, from the Berkeley aligner as in Luong et al.) when `unk.dictionary` is stanford; None = build it
    with eflomal from the training pairs (the default, and the fallback of a task whose corpus releases none)."""
    if UnkSettings.of(config).dictionary != "stanford":
        return None
    return corpus_for_task(config, task).get("unk_dictionary")


def unk_credit_option(config: dict) -> str:
    """What `nmt translate` is told of unk replacement's crediting (`unk.credit`): nothing by default (each model's
    own rule, as alignment extraction credits), else " --credit read" or " --credit predicted" for every model."""
    credit = UnkSettings.of(config).credit
    return f" --credit {credit}" if credit else ""
