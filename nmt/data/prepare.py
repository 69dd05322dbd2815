"""`nmt data prepare`: raw parallel text -> tokenised text, vocabularies and binarised tensors.
Details: docs/internals/data.md."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import torch

from ..base.errors import InputError, first_line
from .links import check_links, read_links
from .staging import staged_directory
from ..base.atomic import write_text_atomic
from .text import CorpusError, read_lines, read_parallel, write_lines_atomic
from .torch_files import save_torch
from .vocab import Vocab

LINKS = "train.links"  # the prepared training pairs' links, for guided alignment (train.guided_alignment.file)
OWN_SUFFIXES = (".src", ".tgt", ".pt", ".links")  # with prep.json: the files prepare writes (the directory's own)


def _own(entry: Path) -> bool:
    """A file of the prepared directory that prepare writes (replaced or dropped when it prepares again); anything
    else there is kept."""
    return entry.name == "prep.json" or entry.suffix in OWN_SUFFIXES or (entry.name.startswith(".")
                                                                         and entry.name.endswith(".tmp"))


def _normalise(lines: list[str], lang: str, tokenize: bool, lowercase: bool) -> list[str]:
    if tokenize:
        from .tokenize import tokenize as moses_tokenize  # sacremoses only for corpora that need tokenising
        lines = moses_tokenize(lines, lang)
    if lowercase:
        lines = [line.lower() for line in lines]
    return lines


def _save_ids(path: Path, src: list[list[int]], tgt: list[list[int]]) -> None:
    def flat(seqs):
        lengths = torch.tensor([len(s) for s in seqs], dtype=torch.long)
        data = torch.tensor([t for s in seqs for t in s], dtype=torch.int32)
        return {"data": data, "lengths": lengths}
    blob = {"src": flat(src), "tgt": flat(tgt)}
    save_torch(blob, path)  # whole or not at all; a full disk an OSError naming it


#: what a training reads of a prepared directory, and so what identifies the data it was trained on
TRAINING_FILES = ("vocab.src", "vocab.tgt", "train.pt", "dev.pt")


def prepared_fingerprint(data_dir: str | Path) -> str:
    """A digest of the content of the prepared files a training reads (TRAINING_FILES): two directories with the same
    vocabularies and splits have the same fingerprint wherever they lie; another corpus, direction or vocabulary has
    another."""
    digest = hashlib.sha256()
    for name in TRAINING_FILES:
        digest.update(name.encode() + b"\0")
        with open(Path(data_dir) / name, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        digest.update(b"\0")
    return digest.hexdigest()[:16]


def load_split(path: str | Path) -> tuple[list[list[int]], list[list[int]]]:
    """(source, target) sentences of a split that `nmt data prepare` binarised; InputError naming the file when it
    is truncated, corrupt or not such a file."""
    remedy = "prepare the data again (`nmt data prepare`, or delete it and rerun the workflow)"
    try:
        blob = torch.load(path, weights_only=True)
    except (FileNotFoundError, IsADirectoryError, PermissionError):
        raise
    except Exception as err:  # torch.load's errors for truncated and foreign files: RuntimeError, EOFError, ...
        raise InputError(f"{path}: not a split written by nmt data prepare ({first_line(err) or type(err).__name__}); "
                         f"{remedy}") from None

    def unflat(side: str) -> list[list[int]]:
        try:
            data, lengths = blob[side]["data"].tolist(), blob[side]["lengths"].tolist()
        except (KeyError, TypeError, AttributeError):
            raise InputError(f"{path}: not a split written by nmt data prepare (no {side} data and lengths); "
                             f"{remedy}") from None
        if sum(lengths) != len(data):
            raise InputError(f"{path}: its {side} lengths add up to {sum(lengths)} tokens, its data has "
                             f"{len(data)}; {remedy}")
        out, pos = [], 0
        for n in lengths:
            out.append(data[pos: pos + n])
            pos += n
        return out
    if not isinstance(blob, dict):
        raise InputError(f"{path}: not a split written by nmt data prepare (a {type(blob).__name__}); {remedy}")
    return unflat("src"), unflat("tgt")


def prepare(raw_dir: str | Path, out_dir: str | Path, *, splits: list[str], train_split: str = "train",
            src_lang: str, tgt_lang: str, max_len: int, src_vocab: int, tgt_vocab: int,
            tokenize: bool = False, lowercase: bool = False, links: str | Path | None = None,
            tokenized_splits: tuple[str, ...] = ()) -> dict:
    """`links`: the raw training split's word alignment (default: {raw_dir}/{train_split}.links when it exists).
    `tokenized_splits`: splits kept as they are tokenised when `tokenize` is on (the RWTH gold set, whose links count
    its own words: re-tokenising it would renumber them)."""
    raw_dir, out_dir = Path(raw_dir), Path(out_dir)
    if train_split not in splits:  # the vocabularies and the length filter come from it
        raise InputError(f"nmt data prepare --splits {' '.join(splits)}: the {train_split!r} split must be one of them "
                         "(the vocabularies are built from it)")
    texts = {}
    for split in splits:
        src, tgt = read_parallel(raw_dir / f"{split}.src", raw_dir / f"{split}.tgt")
        if not src:  # nothing to train on, to validate or to score: every later step would fail without saying why
            raise CorpusError(raw_dir / f"{split}.src", None, f"the {split} split is empty (no sentence pairs)")
        tok = tokenize and split not in tokenized_splits
        texts[split] = (_normalise(src, src_lang, tok, lowercase), _normalise(tgt, tgt_lang, tok, lowercase))

    # Length filter on the training data only: test sentences are never dropped.
    src, tgt = texts[train_split]
    keep = [i for i in range(len(src)) if len(src[i].split()) <= max_len and len(tgt[i].split()) <= max_len]
    if not keep:
        raise CorpusError(raw_dir / f"{train_split}.src", None, f"none of its {len(src)} training pairs is at most "
                                                                 f"prepare.max_len ({max_len}) words on both sides")
    texts[train_split] = ([src[i] for i in keep], [tgt[i] for i in keep])
    dropped = len(src) - len(keep)
    links_path = Path(links) if links is not None else raw_dir / f"{train_split}.links"
    kept_links = None
    if links is not None or links_path.is_file():
        kept_links = _filter_links(links_path, src, tgt, keep, tokenize)

    vocabs = (Vocab.build(texts[train_split][0], src_vocab), Vocab.build(texts[train_split][1], tgt_vocab))
    stats = {"src_lang": src_lang, "tgt_lang": tgt_lang, "tokenize": "sacremoses" if tokenize else "none",
             **({"kept_as_tokenized": sorted(set(tokenized_splits) & set(texts))} if tokenize and tokenized_splits
                else {}),
             "lowercase": lowercase, "max_len": max_len, "train_dropped_by_length": dropped,
             "src_vocab": len(vocabs[0]), "tgt_vocab": len(vocabs[1]), "splits": {}}
    with staged_directory(out_dir, own=_own) as staging:
        _write_prepared(staging, texts, vocabs, stats, kept_links, links_path)
    return stats


def _write_prepared(out_dir: Path, texts: dict, vocabs: tuple[Vocab, Vocab], stats: dict, kept_links: list[str] | None,
                    links_path: Path) -> None:
    """Every file of the prepared directory into ``out_dir`` (the staging directory); completes ``stats``."""
    for split, (s, t) in texts.items():
        write_lines_atomic(out_dir / f"{split}.src", s)
        write_lines_atomic(out_dir / f"{split}.tgt", t)
        ids_src = [vocabs[0].encode(line) for line in s]
        ids_tgt = [vocabs[1].encode(line) for line in t]
        _save_ids(out_dir / f"{split}.pt", ids_src, ids_tgt)
        n_tgt = sum(len(x) for x in ids_tgt)
        stats["splits"][split] = {
            "sentences": len(s), "src_tokens": sum(len(x) for x in ids_src), "tgt_tokens": n_tgt,
            "tgt_unk_rate": round(sum(x.count(1) for x in ids_tgt) / max(n_tgt, 1), 4),
        }
    if kept_links is not None:
        write_lines_atomic(out_dir / LINKS, kept_links)
        stats["train_links"] = {"from": str(links_path), "file": LINKS, "pairs": len(kept_links),
                                "links": sum(len(line.split()) for line in kept_links)}
    vocabs[0].save(out_dir / "vocab.src")
    vocabs[1].save(out_dir / "vocab.tgt")
    write_text_atomic(out_dir / "prep.json", json.dumps(stats, indent=2, sort_keys=True) + "\n")


def _filter_links(path: Path, src: list[str], tgt: list[str], keep: list[int], tokenize: bool) -> list[str]:
    """The lines of the links file for the kept training pairs, checked against the (normalised) pairs."""
    if tokenize:
        raise CorpusError(path, None, "links index the words of the raw training text, which tokenize: true "
                                      "renumbers; align the prepared train.src/train.tgt instead and name that file "
                                      "in train.guided_alignment.file")
    lines = read_lines(path, allow_empty=True)
    if len(lines) != len(src):
        raise CorpusError(path, None, f"{len(lines)} lines of links but {len(src)} raw training pairs; the file "
                                      "must have one line per pair of the raw training split")
    check_links(read_links(path), [len(s.split()) for s in src], [len(t.split()) for t in tgt], path)
    return [lines[i].strip() for i in keep]
