"""The kinds of claim (``better``, ``best``, ..., ``speedup``), one frozen record each: how a claim of the kind is
parsed into comparisons, the test that judges each comparison and how its differences are shown. It lives in config,
the lowest layer that parses, judges (nmt.report.claims) and shows (nmt.report.claims_view) can all reach.

A new kind is one entry in :data:`CLAIM_KINDS` and its key in claims.schema.yaml (the ``compared`` definition for a
kind that compares a table's rows); tests/unit/test_claim_kinds.py holds the two equal."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

DIFFERENCE_FORMAT = "{:+.2f}"  # how the report shows a difference A - B
#: a term of a claim as written, and where it is (for messages) -> the parsed term (nmt.config.claim_files)
ParseTerm = Callable[[Any, str], dict]


@dataclass(frozen=True)
class ClaimKind:
    name: str
    # what it is judged on: "table" (values of a table's rows, from their scores files) or "benchmark" (a benchmark's
    # grid); each has its parser (nmt.config.claim_files) and its judge (nmt.report.claims.ClaimJudge)
    evidence: str
    definition: str  # the $defs entry of claims.schema.yaml a claim of this kind is checked against
    # a table kind's comparisons: (its entry, ParseTerm, "FILE: claims[i] (ID): KIND") -> [(term A, term B)]
    pairs: Callable[[Any, ParseTerm, str], list[tuple[dict, dict]]] | None = None
    # "reproduced" tests the direction only, and the table's paper values must point the same way
    directional: bool = False
    margin: bool = False  # its entry is {values, margin, margin_basis, margin_why}
    # (difference A - B: nmt.scoring.difference's estimate, direction, margin) -> (p_for, p_against)
    p_values: Callable[[Any, str, float | None], tuple[float, float]] | None = None
    # (direction, the paper's difference, margin) -> how far it lies from the threshold, on the claim's side
    paper_effect: Callable[[str, float, float | None], float] | None = None
    delta_format: str = DIFFERENCE_FORMAT  # how the report shows its differences (or ratios)


def _listed(terms: list, parse: ParseTerm, at: str) -> list[dict]:
    return [parse(term, f"{at}[{j}]") for j, term in enumerate(terms, start=1)]


def _first_against_second(terms: list, parse: ParseTerm, at: str) -> list[tuple[dict, dict]]:
    a, b = _listed(terms, parse, at)
    return [(a, b)]


def _first_against_each(terms: list, parse: ParseTerm, at: str) -> list[tuple[dict, dict]]:
    first, *others = _listed(terms, parse, at)
    return [(first, other) for other in others]


def _each_against_next(terms: list, parse: ParseTerm, at: str) -> list[tuple[dict, dict]]:
    listed = _listed(terms, parse, at)
    return list(zip(listed, listed[1:]))


def _each_pair(pairs: list, parse: ParseTerm, at: str) -> list[tuple[dict, dict]]:
    return [tuple(_listed(pair, parse, f"{at}[{i}]")) for i, pair in enumerate(pairs, start=1)]


def _margin_pair(spec: dict, parse: ParseTerm, at: str) -> list[tuple[dict, dict]]:
    return _first_against_second(spec["values"], parse, f"{at}.values")


def one_sided(difference, direction: str, threshold: float) -> tuple[float, float]:
    """(p_for, p_against) that s * (A - B) lies above ``threshold``, s = +1 where higher is better, -1 where lower."""
    if direction == "higher":
        return difference.p_value(threshold, "above"), difference.p_value(threshold, "below")
    return difference.p_value(-threshold, "below"), difference.p_value(-threshold, "above")


def _oriented(direction: str, paper_delta: float) -> float:
    return paper_delta if direction == "higher" else -paper_delta


def _beats_p(difference, direction: str, margin: float | None) -> tuple[float, float]:
    return one_sided(difference, direction, 0.0)


def _beats_effect(direction: str, paper_delta: float, margin: float | None) -> float:
    return _oriented(direction, paper_delta) + 0.0  # + 0.0: a paper's -0.0 is 0.0 from the threshold


def _within_p(difference, direction: str, margin: float) -> tuple[float, float]:
    return one_sided(difference, direction, -margin)  # worse by less than the margin


def _within_effect(direction: str, paper_delta: float, margin: float) -> float:
    return _oriented(direction, paper_delta) + margin


def _equal_p(difference, direction: str, margin: float) -> tuple[float, float]:
    """Inside (-m, m) by both one-sided tests, against beyond m or below -m."""
    p_for = max(difference.p_value(-margin, "above"), difference.p_value(margin, "below"))
    p_against = min(difference.p_value(margin, "above"), difference.p_value(-margin, "below"))
    return p_for, p_against


def _equal_effect(direction: str, paper_delta: float, margin: float) -> float:
    return margin - abs(paper_delta)


def _beats(name: str, pairs: Callable) -> ClaimKind:
    return ClaimKind(name, "table", "compared", pairs, directional=True, p_values=_beats_p, paper_effect=_beats_effect)


def _within_margin(name: str, p_values: Callable, paper_effect: Callable) -> ClaimKind:
    return ClaimKind(name, "table", "compared", _margin_pair, margin=True, p_values=p_values, paper_effect=paper_effect)


#: every kind, in the order a claim's keys are looked for (and messages list them)
CLAIM_KINDS: dict[str, ClaimKind] = {
    kind.name: kind
    for kind in (
        _beats("better", _first_against_second),  # better: [A, B]: A beats B
        _beats("best", _first_against_each),  # best: [A, B, C, ...]: A beats each of the others
        _beats("order", _each_against_next),  # order: [A, B, C, ...]: each beats the next
        _beats("each_better", _each_pair),  # each_better: [[A, B], [C, D], ...]: A beats B and C beats D
        _within_margin("within", _within_p, _within_effect),  # A is worse than B by less than the margin
        _within_margin("equal", _equal_p, _equal_effect),  # A and B differ by less than the margin
        # a benchmark's speed-up exceeds 1 in every cell within the lengths
        ClaimKind("speedup", "benchmark", "speedup", delta_format="{:.2f}x"),
    )
}


def claim_kind(name: str) -> ClaimKind | None:
    """The registered kind of that name; None for one no entry has (a report's claims file from another version)."""
    return CLAIM_KINDS.get(name)
