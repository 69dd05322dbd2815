"""`nmt data get`: the raw parallel corpus that plays a table's task in a preset.

The preset names a corpus per task (`data.tasks.{task}.corpus`): `synth` is generated on the spot; any other
name is a corpus of the registry (nmt/data/corpora.yaml), fetched file by file from the mirror or the network
and verified (nmt.data.fetch). Either way the result is the same layout, `{split}.src` / `{split}.tgt` plus
`stats.json`, so every later stage is the same whatever the corpus.
"""
from __future__ import annotations

import json
from pathlib import Path

from ..base.errors import ConfigError
from . import synth
from .clean import clean_training_pairs
from .alignments import check_lengths, load_alignments, read_parallel_sentences, write_pharaoh
from .fetch import fetch_file
from .task_settings import CleanTrain, DataSettings, SplitSource
from .tasks import corpus_for_task, licence_allows
from ..base.atomic import write_text_atomic
from .text import check_same_sentences, read_lines, read_parallel, write_lines_atomic

SYNTH_OPTIONS = ("seed", "n_train", "n_dev", "n_test", "n_align", "n_test2", "max_len", "swap", "clause_weights")


def get_task_corpus(config: dict, task: str, out_dir: str | Path, *, root: str | Path = ".",
                    downloads: str | Path = "data/downloads", allow_network: bool = True) -> dict:
    """Write the task's corpus into out_dir; returns the summary also written to out_dir/stats.json."""
    spec = corpus_for_task(config, task)
    out_dir = Path(out_dir)
    if spec["corpus"] == "synth":
        return synth.generate(out_dir, **{k: spec[k] for k in SYNTH_OPTIONS if k in spec})
    return _registry_corpus(config, spec, out_dir, Path(root), Path(downloads), allow_network)


def split_sources(spec: dict) -> dict[str, tuple[str, str, str]]:
    """{split: (corpus, src file, tgt file)} for a registry task: a split is a file stem of the task's corpus
    (STEM.SRC_LANG / STEM.TGT_LANG) or an explicit {corpus, src, tgt, ...} (other names, or another corpus;
    `split_options` has the rest: encoding, gold links)."""
    splits = spec.get("splits") or {}
    missing = [s for s in ("train", "dev", "test") if s not in splits]
    if missing:
        raise ConfigError(f"corpus {spec['corpus']!r}: data.tasks.*.splits lacks {', '.join(missing)}")
    sources = {}
    for split, source in splits.items():
        if isinstance(source, str):
            sources[split] = (spec["corpus"], f"{source}.{spec['src_lang']}", f"{source}.{spec['tgt_lang']}")
        else:
            files = SplitSource.read(source)
            sources[split] = (files.corpus or spec["corpus"], files.src, files.tgt)
    return sources


def split_options(spec: dict, split: str) -> dict:
    """encoding, gold, gold_format, gold_reverse, raw_ref, tokenized of a split (an explicit one's as it gives them,
    each left out at its declared default: nmt.data.task_settings.SplitSource)."""
    source = (spec.get("splits") or {}).get(split)
    options = SplitSource.read(source if isinstance(source, dict) else {}).as_dict()
    return {key: options[key] for key in ("encoding", "gold", "gold_format", "gold_reverse", "raw_ref", "tokenized")}



def _gold_links(path: Path, options: dict, src: list[str], tgt: list[str], out: Path) -> dict:
    """Write the split's gold links as out (Pharaoh, 0-based, source index first), checked against the text."""
    gold = load_alignments(path, options["gold_format"], reverse=options["gold_reverse"])
    check_lengths(gold.sentences, [len(s.split()) for s in src], [len(t.split()) for t in tgt], gold.path,
                  lines=gold.lines, spell=gold.spell)
    write_pharaoh(out, gold.sentences)
    return {"sure": sum(len(a.sure) for a in gold.sentences),
            "possible": sum(len(a.possible) for a in gold.sentences)}


def _registry_corpus(config: dict, spec: dict, out_dir: Path, root: Path, downloads: Path,
                     allow_network: bool) -> dict:
    data = config["data"]
    mirror = root / data["mirror"] if data.get("mirror") else None

    def fetch(corpus: str, name: str) -> Path:
        path = fetch_file(corpus, name, downloads / corpus, mirror=mirror,
                          allow_network=allow_network, accept_licence=DataSettings.read(data).accept_rwth_licence)
        summary["files"][f"{corpus}/{name}"] = str(path)
        return path

    summary = {"corpus": spec["corpus"], "mirror": data.get("mirror"), "splits": {}, "files": {}}
    texts = {}
    for split, (corpus, src_name, tgt_name) in split_sources(spec).items():
        if not licence_allows(config, (spec.get("splits") or {}).get(split)):
            continue  # a licence-gated split you have not accepted: it does not exist for this preset
        texts[split] = _read_split(spec, split, corpus, src_name, tgt_name, fetch, out_dir)
    # Empty lines are an error (file:line) except where the preset says the training data has some to drop.
    cleaning = _cleaning(spec, texts)
    for split, text in texts.items():
        src, tgt = text["src"], text["tgt"]
        dropped = {}
        if split == "train" and cleaning is not None:
            src, tgt, dropped = clean_training_pairs(src, tgt, **cleaning)
        if split == "train" and spec.get("max_train"):
            src, tgt = src[: spec["max_train"]], tgt[: spec["max_train"]]
        write_lines_atomic(out_dir / f"{split}.src", src)
        write_lines_atomic(out_dir / f"{split}.tgt", tgt)
        if text["raw_ref"] is not None:
            write_lines_atomic(out_dir / f"{split}.raw_ref", text["raw_ref"])
        summary["splits"][split] = {
            "corpus": text["corpus"], "src_file": text["src_file"], "tgt_file": text["tgt_file"],
            **({"raw_ref": text["raw_ref_name"]} if text["raw_ref"] is not None else {}),
            "sentences": len(src),
            "dropped_empty_pairs": dropped["empty"]["pairs"] if dropped else 0,
            "dropped_empty_first_lines": dropped["empty"]["first_lines"] if dropped else [],
            **({"cleaning": dropped} if dropped and spec.get("clean_train") else {}),
            **({"tokenized": True} if text["tokenized"] else {}),
            "src_tokens": sum(len(x.split()) for x in src), "tgt_tokens": sum(len(x.split()) for x in tgt),
            **({"gold_links": text["gold"]} if text["gold"] else {})}
    write_text_atomic(out_dir / "stats.json", json.dumps(summary, indent=2, sort_keys=True) + "\n")
    return summary


def _read_split(spec: dict, split: str, corpus: str, src_name: str, tgt_name: str, fetch, out_dir: Path) -> dict:
    """One split's sentences (and its gold links, written as {split}.gold, and raw reference), checked."""
    options = split_options(spec, split)
    paths = [fetch(corpus, src_name), fetch(corpus, tgt_name)]
    lenient = split == "train" and bool(spec.get("drop_empty_train") or spec.get("clean_train"))
    if options["encoding"] != "utf-8" or options["gold"]:
        # e.g. the RWTH texts: latin-1, a trailing empty line; written out as UTF-8 like every other split
        src, tgt = read_parallel_sentences(*paths, encoding=options["encoding"])
    else:
        src, tgt = read_parallel(*paths, allow_empty_src=lenient, allow_empty_tgt=lenient)
    gold = None
    if options["gold"]:
        gold = _gold_links(fetch(corpus, options["gold"]), options, src, tgt, out_dir / f"{split}.gold")
    raw_ref = ref_label = None
    if options["raw_ref"]:  # the untokenised reference, for detokenised BLEU: checked to be the same sentences
        ref_corpus, ref_name = options["raw_ref"]["corpus"], options["raw_ref"]["file"]
        ref_path = fetch(ref_corpus, ref_name)
        raw_ref, ref_label = read_lines(ref_path), f"{ref_corpus}/{ref_name}"
        check_same_sentences(raw_ref, tgt, ref_path, paths[1])
    return {"src": src, "tgt": tgt, "gold": gold, "raw_ref": raw_ref, "raw_ref_name": ref_label, "corpus": corpus,
            "src_file": src_name, "tgt_file": tgt_name, "tokenized": options["tokenized"]}


def _cleaning(spec: dict, texts: dict) -> dict | None:
    """clean_training_pairs' options for the task's training split (drop_empty_train, clean_train), or None."""
    if spec.get("clean_train") is None:
        return {"drop_empty": True} if spec.get("drop_empty_train") else None
    clean = CleanTrain.read(spec["clean_train"])
    missing = [split for split in clean.exclude if split not in split_sources(spec)]
    if missing:
        raise ConfigError(f"corpus {spec['corpus']!r}: data.tasks.*.clean_train.exclude names no split "
                          f"{', '.join(map(repr, missing))} (splits: {', '.join(split_sources(spec))})")
    # a licence-gated split not accepted here is not read: nothing of it to exclude, and no table scores it
    exclude = [line for split in clean.exclude if split in texts for side in ("src", "tgt") for line in texts[split][side]]
    return {"drop_empty": True, "max_ratio": clean.max_ratio, "exclude": exclude}
