"""Alignment files: Pharaoh, talp and RWTH block format, read into one representation.
Details: docs/internals/data.md."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, NamedTuple, Sequence

import numpy as np

from ..base.errors import ConfigError, InputError
from .alignment_formats import DEFAULT_SYMMETRIZE, FORMATS, SYMMETRIZE_METHODS  # noqa: F401 (its readers' names)
from .text import CorpusError, read_lines, write_lines_atomic

Link = tuple[int, int]  # (source index, target index), 0-based

SURE, POSSIBLE = 1.0, 0.5  # matrix values: black and mid-grey in the heat map


_PHARAOH = re.compile(r"(\d+)([-?])(\d+)")
_TALP = re.compile(r"(\d+)([-p])(\d+)")
_RWTH_SENT = re.compile(r"SENT:\s*(\S+)")
_INT = re.compile(r"-?\d+")


class Alignment(NamedTuple):
    sure: set[Link]
    possible: set[Link]  # includes the sure links


@dataclass
class AlignmentFile:
    """The sentences of one alignment file, with what is needed to point back into it.

    `lines[k]` is the 1-based line where sentence k starts (for Pharaoh and talp simply k + 1); `spell(link)`
    writes a link the way the file wrote it (base and side order), so that an error about a link can quote
    the file's own token; `skipped` lists the links a lenient reader dropped (``path:LINE: ...``)."""
    path: str
    format: str
    reverse: bool
    sentences: list[Alignment]
    lines: list[int]
    skipped: list[str] = field(default_factory=list)

    def spell(self, link: Link) -> str:
        i, j = (link[1], link[0]) if self.reverse else link
        if self.format == "talp":
            return f"{i + 1}-{j + 1}"
        if self.format == "rwth":
            return f"{i} {j}"
        return f"{i}-{j}"


def _oriented(first: int, second: int, reverse: bool) -> Link:
    return (second, first) if reverse else (first, second)


def _read_linewise(path: str | Path, pattern: re.Pattern, base: int, reverse: bool, fmt: str,
                   expected: str) -> AlignmentFile:
    lines = read_lines(path, allow_empty=True)  # ASCII in practice; UTF-8 is a superset
    if fmt == "talp":
        while lines and lines[-1] == "":  # the RWTH talp file ends with an empty line: not a sentence
            lines.pop()
    sentences = []
    for number, line in enumerate(lines, start=1):
        sure, possible = set(), set()
        for token in line.split():
            match = pattern.fullmatch(token)
            if match is None:
                raise CorpusError(path, number, f"malformed alignment link {token!r} ({expected})")
            first, second = int(match.group(1)) - base, int(match.group(3)) - base
            if first < 0 or second < 0:  # only a 1-based file can get here: index 0
                raise CorpusError(path, number, f"alignment link {token!r} has index 0, but {fmt} indices "
                                                f"are 1-based")
            link = _oriented(first, second, reverse)
            if match.group(2) == "-":
                sure.add(link)
            possible.add(link)
        sentences.append(Alignment(sure, possible))
    return AlignmentFile(str(path), fmt, reverse, sentences, list(range(1, len(sentences) + 1)))


def load_pharaoh(path: str | Path, *, reverse: bool = False) -> AlignmentFile:
    return _read_linewise(path, _PHARAOH, 0, reverse, "pharaoh",
                          "expected i-j for sure or i?j for possible, 0-based")


def load_talp(path: str | Path, *, reverse: bool = False) -> AlignmentFile:
    return _read_linewise(path, _TALP, 1, reverse, "talp", "expected i-j for sure or ipj for possible, 1-based")


def load_rwth(path: str | Path, *, reverse: bool = False, skip_negative: bool = False) -> AlignmentFile:
    """The RWTH block format: ``SENT: n`` then ``S i j`` / ``P i j`` lines, 0-based. Sentence numbers must
    run 0, 1, 2, ... (a gap would silently shift every later sentence against the corpus)."""
    sentences: list[Alignment] = []
    starts: list[int] = []
    skipped: list[str] = []
    for number, line in enumerate(read_lines(path, allow_empty=True), start=1):
        words = line.split()
        if not words:
            continue
        header = _RWTH_SENT.fullmatch(line.strip())
        if header is not None:
            if header.group(1) != str(len(sentences)):
                raise CorpusError(path, number, f"expected 'SENT: {len(sentences)}' (sentences are numbered "
                                                f"0, 1, ... in order), got {line.strip()!r}")
            sentences.append(Alignment(set(), set()))
            starts.append(number)
            continue
        if words[0] not in ("S", "P") or len(words) != 3:
            raise CorpusError(path, number, f"malformed line {line.strip()!r} (expected 'SENT: n', 'S i j' "
                                            "for a sure link or 'P i j' for a possible one)")
        if not sentences:
            raise CorpusError(path, number, f"link {line.strip()!r} before the first 'SENT: 0' line")
        if not (_INT.fullmatch(words[1]) and _INT.fullmatch(words[2])):
            raise CorpusError(path, number, f"non-integer index in {line.strip()!r}")
        first, second = int(words[1]), int(words[2])
        if first < 0 or second < 0:
            if skip_negative:
                skipped.append(f"{path}:{number}: skipped {line.strip()!r} (negative index)")
                continue
            raise CorpusError(path, number, f"negative index in {line.strip()!r} (indices are 0-based; the "
                                            "RWTH De-En file has one such link, 'S 21 -100' in SENT 178; "
                                            "skip_negative / --skip-negative drops such links)")
        link = _oriented(first, second, reverse)
        if words[0] == "S":
            sentences[-1].sure.add(link)
        sentences[-1].possible.add(link)
    return AlignmentFile(str(path), "rwth", reverse, sentences, starts, skipped)


def load_alignments(path: str | Path, fmt: str = "pharaoh", *, reverse: bool = False,
                    skip_negative: bool = False) -> AlignmentFile:
    """Read an alignment file of format `fmt` (one of FORMATS); ``reverse=True``: the file lists the target
    index first. ``skip_negative`` only concerns the RWTH block format (the others cannot spell a negative
    index: it is a malformed token there)."""
    if fmt == "pharaoh":
        return load_pharaoh(path, reverse=reverse)
    if fmt == "talp":
        return load_talp(path, reverse=reverse)
    if fmt == "rwth":
        return load_rwth(path, reverse=reverse, skip_negative=skip_negative)
    raise ConfigError(f"unknown alignment format {fmt!r} (known: {', '.join(FORMATS)})")


def read_pharaoh(path: str | Path, *, reverse: bool = False) -> list[Alignment]:
    """One (sure, possible) pair of link sets per line; an empty line has no links.

    A malformed link raises `CorpusError` (a `ValueError`) naming path:line and the token."""
    return load_pharaoh(path, reverse=reverse).sentences


def read_talp(path: str | Path, *, reverse: bool = False) -> list[Alignment]:
    return load_talp(path, reverse=reverse).sentences


def read_rwth(path: str | Path, *, reverse: bool = False, skip_negative: bool = False) -> list[Alignment]:
    return load_rwth(path, reverse=reverse, skip_negative=skip_negative).sentences


# -- writing --------------------------------------------------------------------------------------------------
def _as_alignment(item: Alignment | Iterable[Link]) -> Alignment:
    """An `Alignment`, or a plain collection of links (a hypothesis: all sure)."""
    if isinstance(item, Alignment):
        return Alignment(set(item.sure), set(item.possible) | set(item.sure))
    links = set(item)
    return Alignment(links, set(links))


def _tokens(item, sure_only: bool, base: int, possible_mark: str, reverse: bool) -> list[str]:
    alignment = _as_alignment(item)
    links = alignment.sure if sure_only else alignment.possible
    out = []
    for link in sorted(links):
        i, j = (link[1], link[0]) if reverse else link
        if min(i, j) < 0:
            raise InputError(f"link {link[0]}-{link[1]}: negative index")
        out.append(f"{i + base}{'-' if link in alignment.sure else possible_mark}{j + base}")
    return out


def format_pharaoh(item: Alignment | Iterable[Link], *, sure_only: bool = False, reverse: bool = False) -> str:
    """One Pharaoh line: links sorted by (source, target), ``i-j`` sure, ``i?j`` possible-only."""
    return " ".join(_tokens(item, sure_only, 0, "?", reverse))


def write_pharaoh(path: str | Path, alignments: Iterable[Alignment | Iterable[Link]], *,
                  sure_only: bool = False, reverse: bool = False) -> None:
    """Write one Pharaoh line per sentence pair, atomically (a temporary file renamed over `path`, so a
    crash never leaves half a file). ``sure_only`` drops possible-only links; ``reverse`` writes target
    first. Items are `Alignment`s or plain link sets (all sure)."""
    write_lines_atomic(path, (format_pharaoh(a, sure_only=sure_only, reverse=reverse) for a in alignments))


def write_talp(path: str | Path, alignments: Iterable[Alignment | Iterable[Link]], *,
               reverse: bool = False) -> None:
    """Write talp lines (1-based, ``i-j`` sure, ``ipj`` possible-only), atomically, in the RWTH layout: each
    line's links followed by a space, so that a sentence without links is a line of one blank, which the talp
    reader keeps (empty lines at the end of a talp file are not sentences)."""
    write_lines_atomic(path, (" ".join(_tokens(a, False, 1, "p", reverse)) + " " for a in alignments))


# -- checks against the corpus --------------------------------------------------------------------------------
def flip(alignments: Sequence[Alignment]) -> list[Alignment]:
    """The same links with the two sides swapped: (source, target) -> (target, source)."""
    return [Alignment({(j, i) for i, j in a.sure}, {(j, i) for i, j in a.possible}) for a in alignments]


def check_count(alignments: Sequence, sentences: int, path: str | Path, what: str = "sentence pairs", *,
                lines: Sequence[int] | None = None) -> None:
    """`CorpusError` unless the file has exactly `sentences` sentences; it names the line of the first
    sentence too many, or (too few) the file alone. `lines` maps sentence k to its line (default k + 1)."""
    if len(alignments) > sentences:
        line = lines[sentences] if lines else sentences + 1
        raise CorpusError(path, line, f"sentence {sentences + 1} of alignment links has no partner: the file "
                                      f"has {len(alignments)} sentences of links for {sentences} {what}")
    if len(alignments) < sentences:
        raise CorpusError(path, None, f"the file ends after {len(alignments)} sentences of alignment links, "
                                      f"but there are {sentences} {what}")


def check_lengths(alignments: Sequence[Alignment], src_lengths: Sequence[int], tgt_lengths: Sequence[int],
                  path: str | Path, *, lines: Sequence[int] | None = None,
                  spell: Callable[[Link], str] | None = None) -> None:
    """Every link must point at a word of its sentence pair: ``CorpusError(path, line, "link 12-3: source index
    12 out of range (10 source words)")``. Links are quoted 0-based, source first (as stored); `spell` adds the
    file's own spelling of the token, `lines` maps sentence k to its line (default k + 1)."""
    if len(src_lengths) != len(tgt_lengths):
        raise InputError(f"{len(src_lengths)} source lengths but {len(tgt_lengths)} target lengths")
    check_count(alignments, len(src_lengths), path, lines=lines)
    for k, (alignment, n_src, n_tgt) in enumerate(zip(alignments, src_lengths, tgt_lengths)):
        for i, j in sorted(alignment.possible | alignment.sure):
            problem = None
            if not 0 <= i < n_src:
                problem = f"source index {i} out of range ({n_src} source words)"
            elif not 0 <= j < n_tgt:
                problem = f"target index {j} out of range ({n_tgt} target words)"
            if problem:
                written = f" (written {spell((i, j))!r} in the file)" if spell else ""
                raise CorpusError(path, lines[k] if lines else k + 1, f"link {i}-{j}: {problem}{written}")


def read_sentences(path: str | Path, *, encoding: str = "utf-8") -> list[str]:
    """The sentences of a tokenised text file in `encoding` (the RWTH `de`/`en` files are latin-1), with the
    line rules of `nmt.data.text.read_lines`; empty lines at the end of the file are dropped (the RWTH files
    end with one), an empty line before the end is an error (``path:LINE: empty line``)."""
    lines = read_lines(path, allow_empty=True, encoding=encoding)
    while lines and not lines[-1].strip():
        lines.pop()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            raise CorpusError(path, number, "empty line" if not line else "empty line (only whitespace)")
    return lines


def read_parallel_sentences(src_path: str | Path, tgt_path: str | Path, *, encoding: str = "utf-8"
                            ) -> tuple[list[str], list[str]]:
    """Both sides of a sentence-aligned pair of files (`read_sentences`); different counts raise
    `CorpusError` naming both files and counts."""
    src = read_sentences(src_path, encoding=encoding)
    tgt = read_sentences(tgt_path, encoding=encoding)
    if len(src) != len(tgt):
        longer, other = (src_path, tgt_path) if len(src) > len(tgt) else (tgt_path, src_path)
        raise CorpusError(longer, min(len(src), len(tgt)) + 1,
                          f"no partner line in {other} ({src_path} has {len(src)} sentences, {tgt_path} has "
                          f"{len(tgt)})")
    return src, tgt


def links_to_matrix(sure: set[Link], possible: set[Link], src_len: int, tgt_len: int) -> np.ndarray:
    """A tgt_len x src_len matrix (rows: target words, like an attention matrix): 1.0 for sure links,
    0.5 for possible-only ones, 0 elsewhere. A link outside the sentence pair raises `ValueError`."""
    matrix = np.zeros((tgt_len, src_len))
    for links, value in ((possible, POSSIBLE), (sure, SURE)):  # sure last: it wins over possible
        for i, j in links:
            if not 0 <= i < src_len:
                raise InputError(f"link {i}-{j}: source index {i} out of range ({src_len} source words)")
            if not 0 <= j < tgt_len:
                raise InputError(f"link {i}-{j}: target index {j} out of range ({tgt_len} target words)")
            matrix[j, i] = value
    return matrix
