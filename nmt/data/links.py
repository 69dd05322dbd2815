"""Word alignment links of the training pairs, for guided alignment training (Chen et al. 2016).
Details: docs/internals/data.md."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .alignments import read_pharaoh
from .text import CorpusError


def read_links(path: str | Path) -> list[np.ndarray]:
    """One int32 array [n_links, 2] of (source index, target index) per line, sorted."""
    out = []
    for alignment in read_pharaoh(path):
        links = getattr(alignment, "possible", alignment)  # possible links include the sure ones
        out.append(np.array(sorted(links), dtype=np.int32).reshape(-1, 2))
    return out


def check_links(links: list[np.ndarray], src_lengths: list[int], tgt_lengths: list[int], path: str | Path,
                line_numbers: list[int] | None = None) -> None:
    """A CorpusError naming path:line for a link outside its sentence pair."""
    for k, (pair, n_src, n_tgt) in enumerate(zip(links, src_lengths, tgt_lengths)):
        bad = (pair[:, 0] >= n_src) | (pair[:, 1] >= n_tgt)
        if bad.any():
            i, j = pair[bad.argmax()]
            line = line_numbers[k] if line_numbers is not None else k + 1
            raise CorpusError(path, line, f"link {i}-{j} lies outside the sentence pair ({n_src} source words, "
                                          f"{n_tgt} target words)")


def load_training_links(path: str | Path, src: list[list[int]], tgt: list[list[int]]) -> list[np.ndarray]:
    """The links of the prepared training pairs `src`/`tgt` (token ids), checked: one line per pair, links inside."""
    path = Path(path)
    if not path.is_file():
        raise CorpusError(path, None, "no such file (guided alignment needs the training pairs' links: put "
                                      "{raw}/train.links before `nmt data prepare`, or align the prepared "
                                      "train.src/train.tgt and name the file in train.guided_alignment.file)")
    links = read_links(path)
    if len(links) != len(src):
        raise CorpusError(path, None, f"{len(links)} lines of links but {len(src)} training pairs; the file must "
                                      "have one line per prepared training pair")
    check_links(links, [len(s) for s in src], [len(t) for t in tgt], path)
    return links
