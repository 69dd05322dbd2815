"""Statistical word-alignment baselines, with eflomal (Östling & Tiedemann 2016; PyPI package `eflomal`).
Details: docs/internals/align.md."""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from ..base import eflomal_runner
from ..base.errors import UserError
from ..data.alignments import (
    DEFAULT_SYMMETRIZE,
    Link,
    check_lengths,
    load_pharaoh,
    read_parallel_sentences,
    write_pharaoh,
)
from ..data.text import CorpusError
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
            raise CorpusError(
                name,
                first_line + offset,
                "empty sentence: eflomal would align nothing there; remove the pair from both sides",
            )
        if n > MAX_TOKENS:
            raise CorpusError(
                name,
                first_line + offset,
                f"{n} tokens: eflomal cannot align a sentence of more "
                f"than {MAX_TOKENS} tokens (it would leave it unaligned)",
            )
        lengths.append(n)
    return lengths


def align(
    src: Sequence[str],
    tgt: Sequence[str],
    *,
    extra_src: Sequence[str] = (),
    extra_tgt: Sequence[str] = (),
    model: int = eflomal_runner.DEFAULT_MODEL,
    method: str = DEFAULT_SYMMETRIZE,
    seed: int = 1,
    samplers: int = eflomal_runner.DEFAULT_SAMPLERS,
    names: tuple[str, str, str, str] = ("source", "target", "extra source", "extra target"),
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
        fwd_path, rev_path, seeded = eflomal_runner.align(
            list(extra_src) + list(src),
            list(extra_tgt) + list(tgt),
            Path(tmp),
            seed=seed,
            model=model,
            samplers=samplers,
        )
        directions = []
        for path, what in ((fwd_path, "forward"), (rev_path, "reverse")):
            if not Path(path).is_file():
                raise AlignerError(
                    f"eflomal wrote no {what} links (the aligner failed; run `eflomal-align -v` "
                    "on the same text to see why)"
                )
            links = load_pharaoh(path)
            if len(links.sentences) != n_extra + len(src):
                raise AlignerError(
                    f"eflomal wrote {len(links.sentences)} lines of {what} links for "
                    f"{n_extra + len(src)} sentence pairs (the aligner failed)"
                )
            test = [a.sure for a in links.sentences[n_extra:]]
            check_lengths(
                links.sentences[n_extra:],
                src_lengths,
                tgt_lengths,
                f"eflomal {what} links",
                lines=[n_extra + k + 1 for k in range(len(src))],
            )
            directions.append(test)
    forward, reverse = directions
    merged = symmetrize_corpus(forward, reverse, method)
    info = {
        "aligner": "eflomal",
        "model": model,
        "label": LABELS[model],
        "method": method,
        "seed": seed,
        "reproducible": seeded,
        "sentences": len(src),
        "training_sentences": n_extra + len(src),
        "seconds": round(time.perf_counter() - start, 2),
        "links": sum(map(len, merged)),
    }
    return StatisticalAlignment(merged, forward, reverse, info)


def align_files(
    src_path: str | Path,
    tgt_path: str | Path,
    out_path: str | Path,
    *,
    encoding: str = "utf-8",
    extra_src_path: str | Path | None = None,
    extra_tgt_path: str | Path | None = None,
    extra_encoding: str = "utf-8",
    model: int = eflomal_runner.DEFAULT_MODEL,
    method: str = DEFAULT_SYMMETRIZE,
    seed: int = 1,
    samplers: int = eflomal_runner.DEFAULT_SAMPLERS,
    forward_out: str | Path | None = None,
    reverse_out: str | Path | None = None,
) -> dict:
    """`align` on tokenised text files; writes the merged links of the test pairs to `out_path` (Pharaoh,
    source-first, one line per test pair; written atomically) and, if asked, each direction's links."""
    if (extra_src_path is None) != (extra_tgt_path is None):
        raise AlignerError("give both extra training sides (source and target) or neither")
    src, tgt = read_parallel_sentences(src_path, tgt_path, encoding=encoding)
    extra_src: list[str] = []
    extra_tgt: list[str] = []
    if extra_src_path is not None:
        extra_src, extra_tgt = read_parallel_sentences(extra_src_path, extra_tgt_path, encoding=extra_encoding)
    result = align(
        src,
        tgt,
        extra_src=extra_src,
        extra_tgt=extra_tgt,
        model=model,
        method=method,
        seed=seed,
        samplers=samplers,
        names=(str(src_path), str(tgt_path), str(extra_src_path), str(extra_tgt_path)),
    )
    write_pharaoh(out_path, result.links)
    if forward_out:
        write_pharaoh(forward_out, result.forward)
    if reverse_out:
        write_pharaoh(reverse_out, result.reverse)
    return {
        **result.info,
        "out": str(out_path),
        "src": str(src_path),
        "tgt": str(tgt_path),
        "extra_src": None if extra_src_path is None else str(extra_src_path),
        "extra_tgt": None if extra_tgt_path is None else str(extra_tgt_path),
    }
