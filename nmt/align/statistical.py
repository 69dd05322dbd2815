"""Statistical word-alignment baselines, with eflomal (Östling & Tiedemann 2016; PyPI package `eflomal`).

The papers compare attention with classic aligners: fast_align, GIZA++ and the Berkeley aligner (Luong et
al. 2015, Table 6; Peter et al. 2017, Table 1). Those are not pip-installable; eflomal is, and its models
nest the classic ones. Its model numbers (`eflomal-align --help`) mean:

  1  IBM model 1 (lexical translation only),
  2  IBM-1 + HMM (a first-order jump model over source positions),
  3  IBM-1 + HMM + fertility (how many words a word generates); the full model and eflomal's default.

eflomal has no IBM model 2, so there is no exact fast_align twin. fast_align is a reparameterised IBM-2 (a
distortion prior favouring the diagonal); model 2, the smallest eflomal model with a distortion component,
is the closest analogue. Model 3, like GIZA++'s IBM-4/HMM cascade or the Berkeley aligner, models both
distortion and fertility: it stands in for them. LABELS says so wherever a table names a baseline.

Protocol of the papers' baselines: they were trained on a large parallel corpus *with the test sentences
added* (unsupervised aligners see the text they align), and only the test sentences' links are scored.
`align` does the same: extra training pairs first, the test pairs last, both directions aligned, both
directions' links of the test pairs read back, merged by a symmetrisation method
(`nmt.align.symmetrize`, default grow-diag-final-and, Moses' default) and returned.

eflomal writes its forward and its reverse links both source-first (its README: "the forward and reverse
alignments both use source-target order"), so no direction is swapped here; every link read back is checked
to lie inside its sentence pair, which would catch a swapped direction on all but square sentence pairs.
The forward direction links each target word to at most one source word (the model generates the target
from the source), the reverse direction each source word to at most one target word; the forward links are
passed first to the symmetrisation, as Moses' symal orders its final step.

eflomal's own limits are checked before it runs, because it would not complain: a sentence of 1024 or more
tokens is written to it as an empty sentence (silently unaligned), and its Python wrapper ignores the exit
status of the aligner binary (a crash shows up as missing or short link files, reported here).
Empty sentences are refused as well: in a test set they mean a misaligned corpus, in training data a
sentence pair with nothing to learn from.
"""
from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from ..base import eflomal_runner
from ..data.alignments import DEFAULT_SYMMETRIZE, Link, check_lengths, load_pharaoh, read_parallel_sentences, write_pharaoh
from ..data.text import CorpusError
from ..base.errors import UserError
from .symmetrize import METHODS, symmetrize_corpus

LABELS = eflomal_runner.MODEL_LABELS



def aligner_label(settings: dict) -> str:
    """How a heat map names a statistical aligner's links: its model and symmetrisation."""
    return f"{LABELS[settings['model']]}, {settings['symmetrize']}"


MAX_TOKENS = 1023  # eflomal's input format writes a longer sentence as an empty one


class AlignerError(UserError, ValueError):
    """eflomal cannot be run on this input, or did not produce what it should have."""


@dataclass
class StatisticalAlignment:
    """Links of the test sentence pairs: both directions (source, target) and their merge."""
    links: list[set[Link]]
    forward: list[set[Link]]
    reverse: list[set[Link]]
    info: dict = field(default_factory=dict)


def check_sentences(lines: Sequence[str], name: str | Path, first_line: int = 1) -> list[int]:
    """Token counts of `lines`; `CorpusError(name, line, ...)` for an empty sentence or one too long for eflomal.
    `first_line` is the line number of lines[0] in `name`."""
    lengths = []
    for offset, line in enumerate(lines):
        n = len(line.split())
        if n == 0:
            raise CorpusError(name, first_line + offset, "empty sentence: eflomal would align nothing there; "
                                                         "remove the pair from both sides")
        if n > MAX_TOKENS:
            raise CorpusError(name, first_line + offset, f"{n} tokens: eflomal cannot align a sentence of more "
                                                         f"than {MAX_TOKENS} tokens (it would leave it unaligned)")
        lengths.append(n)
    return lengths


def align(src: Sequence[str], tgt: Sequence[str], *, extra_src: Sequence[str] = (), extra_tgt: Sequence[str] = (),
          model: int = eflomal_runner.DEFAULT_MODEL, method: str = DEFAULT_SYMMETRIZE, seed: int = 1,
          samplers: int = eflomal_runner.DEFAULT_SAMPLERS,
          names: tuple[str, str, str, str] = ("source", "target", "extra source", "extra target")
          ) -> StatisticalAlignment:
    """Align the test pairs (src[k], tgt[k]) with eflomal trained on extra_src/extra_tgt followed by them.

    `names` name the four inputs in error messages (file paths, when they come from files; a sentence's line
    is its 1-based index there)."""
    if model not in LABELS:
        raise AlignerError(f"eflomal model {model}: must be one of {sorted(LABELS)} ({'; '.join(LABELS.values())})")
    if method not in METHODS:
        raise AlignerError(f"unknown symmetrisation method {method!r} (known: {', '.join(METHODS)})")
    for (a, b), (name_a, name_b) in (((src, tgt), names[:2]), ((extra_src, extra_tgt), names[2:])):
        if len(a) != len(b):
            raise AlignerError(f"{name_a} has {len(a)} sentences but {name_b} has {len(b)}")
    if not src:
        raise AlignerError(f"{names[0]}: no sentences to align")
    src_lengths = check_sentences(src, names[0])
    tgt_lengths = check_sentences(tgt, names[1])
    check_sentences(extra_src, names[2])
    check_sentences(extra_tgt, names[3])
    n_extra = len(extra_src)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="nmt-align-eflomal-") as tmp:
        fwd_path, rev_path, seeded = eflomal_runner.align(list(extra_src) + list(src), list(extra_tgt) + list(tgt),
                                                          Path(tmp), seed=seed, model=model,
                                                          samplers=samplers)
        directions = []
        for path, what in ((fwd_path, "forward"), (rev_path, "reverse")):
            if not Path(path).is_file():
                raise AlignerError(f"eflomal wrote no {what} links (the aligner failed; run `eflomal-align -v` "
                                   "on the same text to see why)")
            links = load_pharaoh(path)
            if len(links.sentences) != n_extra + len(src):
                raise AlignerError(f"eflomal wrote {len(links.sentences)} lines of {what} links for "
                                   f"{n_extra + len(src)} sentence pairs (the aligner failed)")
            test = [a.sure for a in links.sentences[n_extra:]]
            check_lengths(links.sentences[n_extra:], src_lengths, tgt_lengths, f"eflomal {what} links",
                          lines=[n_extra + k + 1 for k in range(len(src))])
            directions.append(test)
    forward, reverse = directions
    merged = symmetrize_corpus(forward, reverse, method)
    info = {"aligner": "eflomal", "model": model, "label": LABELS[model], "method": method, "seed": seed,
            "reproducible": seeded, "sentences": len(src), "training_sentences": n_extra + len(src),
            "seconds": round(time.perf_counter() - start, 2), "links": sum(map(len, merged))}
    return StatisticalAlignment(merged, forward, reverse, info)


def align_files(src_path: str | Path, tgt_path: str | Path, out_path: str | Path, *, encoding: str = "utf-8",
                extra_src_path: str | Path | None = None, extra_tgt_path: str | Path | None = None,
                extra_encoding: str = "utf-8", model: int = eflomal_runner.DEFAULT_MODEL, method: str = DEFAULT_SYMMETRIZE, seed: int = 1,
                samplers: int = eflomal_runner.DEFAULT_SAMPLERS, forward_out: str | Path | None = None, reverse_out: str | Path | None = None) -> dict:
    """`align` on tokenised text files; writes the merged links of the test pairs to `out_path` (Pharaoh,
    source-first, one line per test pair; written atomically) and, if asked, each direction's links."""
    if (extra_src_path is None) != (extra_tgt_path is None):
        raise AlignerError("give both extra training sides (source and target) or neither")
    src, tgt = read_parallel_sentences(src_path, tgt_path, encoding=encoding)
    extra_src: list[str] = []
    extra_tgt: list[str] = []
    if extra_src_path is not None:
        extra_src, extra_tgt = read_parallel_sentences(extra_src_path, extra_tgt_path, encoding=extra_encoding)
    result = align(src, tgt, extra_src=extra_src, extra_tgt=extra_tgt, model=model, method=method, seed=seed,
                   samplers=samplers, names=(str(src_path), str(tgt_path), str(extra_src_path), str(extra_tgt_path)))
    write_pharaoh(out_path, result.links)
    if forward_out:
        write_pharaoh(forward_out, result.forward)
    if reverse_out:
        write_pharaoh(reverse_out, result.reverse)
    return {**result.info, "out": str(out_path), "src": str(src_path), "tgt": str(tgt_path),
            "extra_src": None if extra_src_path is None else str(extra_src_path),
            "extra_tgt": None if extra_tgt_path is None else str(extra_tgt_path)}
