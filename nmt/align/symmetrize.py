"""Merging the two directions of an asymmetric aligner (or of attention) into one alignment.
Details: docs/internals/align.md."""

from __future__ import annotations

from bisect import insort
from typing import Iterable, Sequence

from ..base.errors import ConfigError, InputError
from ..data.alignments import DEFAULT_SYMMETRIZE, SYMMETRIZE_METHODS, Link

METHODS = SYMMETRIZE_METHODS

# (target offset, source offset), in symal's order: the four sides, then the diagonals
_SIDES = ((-1, 0), (0, -1), (1, 0), (0, 1))
_DIAGONALS = ((-1, -1), (-1, 1), (1, -1), (1, 1))


def _key(link: Link) -> tuple[int, int]:
    """Scan order: target first, then source (symal's and Koehn's loops)."""
    return link[1], link[0]


def _grow_diag(forward: set[Link], reverse: set[Link]) -> tuple[set[Link], set[int], set[int]]:
    union = forward | reverse
    current = forward & reverse
    src_covered = {i for i, _ in current}
    tgt_covered = {j for _, j in current}
    added = True
    while added:
        added = False
        order = sorted(_key(link) for link in current)
        index = 0
        while index < len(order):
            t, s = order[index]
            for dt, ds in _SIDES + _DIAGONALS:
                neighbour = (s + ds, t + dt)
                if neighbour in union and not (neighbour[0] in src_covered and neighbour[1] in tgt_covered):
                    current.add(neighbour)
                    src_covered.add(neighbour[0])
                    tgt_covered.add(neighbour[1])
                    key = _key(neighbour)
                    insort(order, key)
                    if key < (t, s):  # inserted before the link being looked at: keep the place
                        index += 1
                    added = True
            index += 1
    return current, src_covered, tgt_covered


def _final(
    current: set[Link], src_covered: set[int], tgt_covered: set[int], direction: set[Link], both_uncovered: bool
) -> None:
    for link in sorted(direction, key=_key):
        i, j = link
        ok = (
            (i not in src_covered and j not in tgt_covered)
            if both_uncovered
            else (i not in src_covered or j not in tgt_covered)
        )
        if ok:
            current.add(link)
            src_covered.add(i)
            tgt_covered.add(j)


def _has_corner(links: set[Link]) -> bool:
    """Whether some link has both a horizontal and a vertical neighbour in `links`."""
    for i, j in links:
        if ((i - 1, j) in links or (i + 1, j) in links) and ((i, j - 1) in links or (i, j + 1) in links):
            return True
    return False


def _refined(forward: set[Link], reverse: set[Link]) -> set[Link]:
    current = forward & reverse
    candidates = sorted((forward | reverse) - current, key=_key)
    added = True
    while added:
        added = False
        for link in candidates:
            if link in current:
                continue
            i, j = link
            src_free = all(a != i for a, _ in current)
            tgt_free = all(b != j for _, b in current)
            if src_free and tgt_free:
                current.add(link)
                added = True
                continue
            touches = any(n in current for n in ((i - 1, j), (i + 1, j), (i, j - 1), (i, j + 1)))
            if touches and not _has_corner(current | {link}):
                current.add(link)
                added = True
    return current


def symmetrize(forward: Iterable[Link], reverse: Iterable[Link], method: str = DEFAULT_SYMMETRIZE) -> set[Link]:
    """The merged links of one sentence pair (see the module doc for the methods)."""
    forward, reverse = set(forward), set(reverse)
    if method == "intersection":
        return forward & reverse
    if method == "union":
        return forward | reverse
    if method == "refined":
        return _refined(forward, reverse)
    if method in ("grow-diag", "grow-diag-final", "grow-diag-final-and"):
        current, src_covered, tgt_covered = _grow_diag(forward, reverse)
        if method != "grow-diag":
            both = method == "grow-diag-final-and"
            _final(current, src_covered, tgt_covered, forward, both)
            _final(current, src_covered, tgt_covered, reverse, both)
        return current
    raise ConfigError(f"unknown symmetrisation method {method!r} (known: {', '.join(METHODS)})")


def symmetrize_corpus(
    forward: Sequence[Iterable[Link]], reverse: Sequence[Iterable[Link]], method: str = DEFAULT_SYMMETRIZE
) -> list[set[Link]]:
    """`symmetrize` sentence by sentence; both directions must have the same number of sentences."""
    if len(forward) != len(reverse):
        raise InputError(f"{len(forward)} sentences of forward links but {len(reverse)} of reverse links")
    if method not in METHODS:
        raise ConfigError(f"unknown symmetrisation method {method!r} (known: {', '.join(METHODS)})")
    return [symmetrize(f, r, method) for f, r in zip(forward, reverse)]
