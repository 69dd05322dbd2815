"""Symmetrisation on hand-drawn examples (links as (source, target)), grow-diag-final(-and) against a plain
transcription of Koehn's pseudocode, Och's refined method's corner rule, and `nmt align symmetrize`."""

import json
import random

import pytest

from nmt.align.symmetrize import METHODS, symmetrize, symmetrize_corpus
from nmt.cli import main

# Example A, 6 x 6 (s = source, t = target):
#
#   t\s  0  1  2  3  4  5        F = forward, R = reverse, B = both (the intersection)
#   0    B  F  .  .  R  .
#   1    .  .  .  .  .  .        1-0 (F): side neighbour of 0-0, source 1 uncovered       -> grow adds it
#   2    R  .  B  .  .  .        3-3 (R): diagonal neighbour of 2-2, both uncovered        -> grow-diag adds it
#   3    .  .  .  R  .  .        5-5 (F): far from everything, both words uncovered        -> final and final-and
#   4    .  .  .  .  .  .        4-0 (R): far, target 0 covered, source 4 not              -> final only
#   5    .  .  .  .  .  F        0-2 (R): source 0 and target 2 covered                    -> union only
F_A = {(0, 0), (2, 2), (1, 0), (5, 5)}
R_A = {(0, 0), (2, 2), (3, 3), (4, 0), (0, 2)}
GROW_A = {(0, 0), (2, 2), (1, 0), (3, 3)}


@pytest.mark.parametrize(
    "method, expected",
    [
        ("intersection", {(0, 0), (2, 2)}),
        ("union", F_A | R_A),
        ("grow-diag", GROW_A),
        ("grow-diag-final", GROW_A | {(5, 5), (4, 0)}),
        ("grow-diag-final-and", GROW_A | {(5, 5)}),
        # refined: 1-0 touches 0-0 side by side and makes no corner; 3-3 and 5-5 have both words free;
        # 4-0 has target 0 taken and no side neighbour; 0-2 has both words taken and no side neighbour
        ("refined", {(0, 0), (2, 2), (1, 0), (3, 3), (5, 5)}),
    ],
)
def test_example_a(method, expected):
    assert symmetrize(F_A, R_A, method) == expected


# Example B: the corner rule of Och's refined method.
#   t\s  0  1  2
#   0    .  .  .          1-1 both directions; 2-1 only F (right of 1-1); 1-2 only R (below 1-1)
#   1    .  B  F          refined, in (target, source) order: 2-1 first (touches 1-1, no corner) -> added;
#   2    .  R  .          then 1-2: 1-1 would have a horizontal (2-1) and a vertical (1-2) neighbour -> refused.
# grow-diag takes both: each leaves one word uncovered when it is added.
F_B = {(1, 1), (2, 1)}
R_B = {(1, 1), (1, 2)}


def test_example_b_refined_refuses_an_l_shape():
    assert symmetrize(F_B, R_B, "refined") == {(1, 1), (2, 1)}
    assert symmetrize(F_B, R_B, "grow-diag") == {(1, 1), (2, 1), (1, 2)}
    assert symmetrize(F_B, R_B, "grow-diag-final-and") == {(1, 1), (2, 1), (1, 2)}


# Example C: a diagonal neighbour with one word taken.
#   t\s  0  1           0-0 and 1-3 in both; 1-1 only in F: source 1 is taken (by 1-3), target 1 is free,
#   0    B  .           and its only neighbour in the alignment is 0-0, diagonally.
#   1    .  F           grow-diag adds it (diagonals count, one word uncovered);
#   2    .  .           refined does not (neither word free, no horizontal or vertical neighbour).
#   3    .  B
F_C = {(0, 0), (1, 3), (1, 1)}
R_C = {(0, 0), (1, 3)}


def test_example_c_diagonals_count_only_for_grow_diag():
    assert symmetrize(F_C, R_C, "grow-diag") == {(0, 0), (1, 3), (1, 1)}
    assert symmetrize(F_C, R_C, "refined") == {(0, 0), (1, 3)}


# Example D: grow continues from links it has just added, along a chain.
#   t\s  0  1  2  3     0-0 in both; 1-1, 2-2, 3-3 in F only: each is a diagonal neighbour of the one before,
#   0    B  .  .  .     with both words uncovered -> grow-diag adds all three in one scan;
#   1    .  F  .  .     refined adds them too (both words free); intersection keeps only 0-0.
#   2    .  .  F  .
#   3    .  .  .  F
def test_example_d_grows_along_a_chain():
    forward, reverse = {(0, 0), (1, 1), (2, 2), (3, 3)}, {(0, 0)}
    assert symmetrize(forward, reverse, "grow-diag") == forward
    assert symmetrize(forward, reverse, "refined") == forward
    assert symmetrize(forward, reverse, "intersection") == {(0, 0)}


def koehn(forward, reverse, final=False, final_and=False):
    """Koehn's GROW-DIAG-FINAL(-AND) pseudocode (statmt.org), transcribed literally: cells scanned with the
    english (target) word in the outer loop and the foreign (source) word inside."""
    neighbours = ((-1, 0), (0, -1), (1, 0), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1))  # (target, source)
    union, alignment = forward | reverse, forward & reverse
    size = 1 + max([max(s, t) for s, t in union] + [0])

    def src_aligned(s):
        return any(a == s for a, _ in alignment)

    def tgt_aligned(t):
        return any(b == t for _, b in alignment)

    added = True
    while added:
        added = False
        for t in range(size):
            for s in range(size):
                if (s, t) in alignment:
                    for dt, ds in neighbours:
                        new = (s + ds, t + dt)
                        if (not src_aligned(new[0]) or not tgt_aligned(new[1])) and new in union:
                            alignment.add(new)
                            added = True
    if final:
        for direction in (forward, reverse):
            for t in range(size):
                for s in range(size):
                    free = (
                        (not src_aligned(s) and not tgt_aligned(t))
                        if final_and
                        else (not src_aligned(s) or not tgt_aligned(t))
                    )
                    if free and (s, t) in direction:
                        alignment.add((s, t))
    return alignment


def random_direction(rng, n_src, n_tgt, by_target):
    """A directional alignment: each target (or source) word linked to at most one word, some to none."""
    if by_target:
        return {(rng.randrange(n_src), t) for t in range(n_tgt) if rng.random() < 0.8}
    return {(s, rng.randrange(n_tgt)) for s in range(n_src) if rng.random() < 0.8}


def test_grow_diag_family_matches_koehns_pseudocode():
    rng = random.Random(5)
    for _ in range(400):
        n_src, n_tgt = rng.randint(1, 7), rng.randint(1, 7)
        forward = random_direction(rng, n_src, n_tgt, by_target=True)
        reverse = random_direction(rng, n_src, n_tgt, by_target=False)
        assert symmetrize(forward, reverse, "grow-diag") == koehn(forward, reverse)
        assert symmetrize(forward, reverse, "grow-diag-final") == koehn(forward, reverse, final=True)
        assert symmetrize(forward, reverse, "grow-diag-final-and") == koehn(
            forward, reverse, final=True, final_and=True
        )


def test_refined_invariants_on_random_inputs():
    rng = random.Random(7)
    for _ in range(300):
        n_src, n_tgt = rng.randint(1, 7), rng.randint(1, 7)
        forward = random_direction(rng, n_src, n_tgt, by_target=True)
        reverse = random_direction(rng, n_src, n_tgt, by_target=False)
        refined = symmetrize(forward, reverse, "refined")
        assert forward & reverse <= refined <= forward | reverse
        for i, j in refined:  # no link with both a horizontal and a vertical neighbour
            horizontal = (i - 1, j) in refined or (i + 1, j) in refined
            vertical = (i, j - 1) in refined or (i, j + 1) in refined
            assert not (horizontal and vertical)


def test_every_method_and_errors():
    assert set(METHODS) == {"intersection", "union", "grow-diag", "grow-diag-final", "grow-diag-final-and", "refined"}
    assert symmetrize(set(), set(), "refined") == set()
    with pytest.raises(ValueError, match="unknown symmetrisation method 'grow'"):
        symmetrize(F_A, R_A, "grow")
    with pytest.raises(ValueError, match="2 sentences of forward links but 1 of reverse links"):
        symmetrize_corpus([F_A, F_B], [R_A])


def test_symmetrize_command(tmp_path, capsys):
    (tmp_path / "fwd").write_text("0-0 2-2 1-0 5-5\n1-1 2-1\n")
    (tmp_path / "rev").write_text("0-0 2-2 3-3 4-0 0-2\n1-1 1-2\n")
    (tmp_path / "rev.flipped").write_text("0-0 2-2 3-3 0-4 2-0\n1-1 2-1\n")  # target first
    assert (
        main(
            [
                "align",
                "symmetrize",
                "--forward",
                str(tmp_path / "fwd"),
                "--reverse",
                str(tmp_path / "rev"),
                "--method",
                "grow-diag-final-and",
                "--out",
                str(tmp_path / "out"),
            ]
        )
        == 0
    )
    assert json.loads(capsys.readouterr().out) == {
        "sentences": 2,
        "links": 5 + 3,
        "method": "grow-diag-final-and",
        "out": str(tmp_path / "out"),
    }
    assert (tmp_path / "out").read_text() == "0-0 1-0 2-2 3-3 5-5\n1-1 1-2 2-1\n"
    assert (
        main(
            [
                "align",
                "symmetrize",
                "--forward",
                str(tmp_path / "fwd"),
                "--reverse",
                str(tmp_path / "rev.flipped"),
                "--flip-reverse",
                "--method",
                "refined",
                "--out",
                str(tmp_path / "refined"),
            ]
        )
        == 0
    )
    assert (tmp_path / "refined").read_text() == "0-0 1-0 2-2 3-3 5-5\n1-1 2-1\n"
