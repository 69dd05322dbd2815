"""Gold word alignments: reading them and turning one sentence's links into a matrix for a heat map.

Pharaoh format, as `nmt.data.synth` writes `align.gold`: one line per sentence pair, space-separated links,
0-based source index i and target index j; `i-j` is a sure link, `i?j` a possible-only one. As in Och & Ney
(2003), every sure link is also possible (S ⊆ P).
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

import numpy as np

from .data.text import CorpusError, read_lines

Link = tuple[int, int]  # (source index, target index), 0-based

_LINK = re.compile(r"(\d+)([-?])(\d+)")

SURE, POSSIBLE = 1.0, 0.5  # matrix values: black and mid-grey in the heat map


class Alignment(NamedTuple):
    sure: set[Link]
    possible: set[Link]  # includes the sure links


def read_pharaoh(path: str | Path) -> list[Alignment]:
    """One (sure, possible) pair of link sets per line; an empty line has no links.

    A malformed link raises `CorpusError` (a `ValueError`) naming path:line and the token."""
    alignments = []
    for number, line in enumerate(read_lines(path, allow_empty=True), start=1):
        sure, possible = set(), set()
        for token in line.split():
            match = _LINK.fullmatch(token)
            if match is None:
                raise CorpusError(path, number, f"malformed alignment link {token!r} "
                                                "(expected i-j for sure or i?j for possible, 0-based)")
            link = (int(match.group(1)), int(match.group(3)))
            if match.group(2) == "-":
                sure.add(link)
            possible.add(link)
        alignments.append(Alignment(sure, possible))
    return alignments


def links_to_matrix(sure: set[Link], possible: set[Link], src_len: int, tgt_len: int) -> np.ndarray:
    """A tgt_len x src_len matrix (rows: target words, like an attention matrix): 1.0 for sure links,
    0.5 for possible-only ones, 0 elsewhere. A link outside the sentence pair raises `ValueError`."""
    matrix = np.zeros((tgt_len, src_len))
    for links, value in ((possible, POSSIBLE), (sure, SURE)):  # sure last: it wins over possible
        for i, j in links:
            if not 0 <= i < src_len:
                raise ValueError(f"link {i}-{j}: source index {i} out of range ({src_len} source words)")
            if not 0 <= j < tgt_len:
                raise ValueError(f"link {i}-{j}: target index {j} out of range ({tgt_len} target words)")
            matrix[j, i] = value
    return matrix
