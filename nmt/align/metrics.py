"""Alignment quality against a gold standard of sure (S) and possible (P) links, S ⊆ P.
Details: docs/internals/align.md."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Iterable, Sequence

import numpy as np

from ..base.errors import UserError
from ..data.alignments import Alignment, Link


class MetricError(UserError, ValueError):
    """The metric is undefined for these inputs, or the inputs do not fit together."""


@dataclass(frozen=True)
class AlignmentScores:
    aer: float
    precision: float | None  # None when the hypothesis has no link
    recall: float | None  # None when the gold standard has no sure link
    sentences: int
    hypothesis: int  # |A|
    sure: int  # |S|
    possible: int  # |P| (sure included)
    hypothesis_sure: int  # |A∩S|
    hypothesis_possible: int  # |A∩P|

    def to_dict(self) -> dict:
        """A JSON-ready record: the rates at the top, the corpus counts under "counts"."""
        counts = asdict(self)
        rates = {key: counts.pop(key) for key in ("aer", "precision", "recall", "sentences")}
        return {**rates, "counts": counts}


@dataclass(frozen=True)
class SoftScores:
    saer: float
    sentences: int
    mass: float  # sum(M_A)
    sure: int  # sum(M_S) = |S|
    mass_on_sure: float  # sum(M_A*M_S)
    mass_on_possible: float  # sum(M_A*M_P)

    def to_dict(self) -> dict:
        counts = asdict(self)
        rates = {key: counts.pop(key) for key in ("saer", "sentences")}
        return {**rates, "counts": counts}


def _links(item: Alignment | Iterable[Link]) -> set[Link]:
    if isinstance(item, Alignment):
        return set(item.possible) | set(item.sure)
    return set(item)


def _pairs(gold: Sequence[Alignment], hypotheses: Sequence) -> None:
    if len(gold) != len(hypotheses):
        raise MetricError(f"{len(hypotheses)} hypothesis sentences for {len(gold)} gold sentences")


def sentence_counts(
    gold: Sequence[Alignment], hypotheses: Sequence[Alignment | Iterable[Link]]
) -> list[tuple[int, int, int, int]]:
    """(|A|, |S|, |A∩S|, |A∩P|) of each sentence: what corpus AER sums, and what a bootstrap over sentences
    resamples (nmt.scoring.significance)."""
    _pairs(gold, hypotheses)
    counts = []
    for reference, hypothesis in zip(gold, hypotheses):
        sure = set(reference.sure)
        possible = set(reference.possible) | sure
        links = _links(hypothesis)
        counts.append((len(links), len(sure), len(links & sure), len(links & possible)))
    return counts


def score(gold: Sequence[Alignment], hypotheses: Sequence[Alignment | Iterable[Link]]) -> AlignmentScores:
    """Corpus-level AER, precision and recall of `hypotheses` (one link set or `Alignment` per sentence)."""
    n_a, n_s, a_s, a_p = (sum(column) for column in zip(*sentence_counts(gold, hypotheses))) if gold else (0,) * 4
    n_p = sum(len(set(reference.possible) | set(reference.sure)) for reference in gold)
    if n_a + n_s == 0:
        raise MetricError(
            "AER is undefined: neither the hypothesis nor the gold standard has a link "
            f"(|A| + |S| = 0 over {len(gold)} sentences)"
        )
    return AlignmentScores(
        aer=1.0 - (a_s + a_p) / (n_a + n_s),
        precision=a_p / n_a if n_a else None,
        recall=a_s / n_s if n_s else None,
        sentences=len(gold),
        hypothesis=n_a,
        sure=n_s,
        possible=n_p,
        hypothesis_sure=a_s,
        hypothesis_possible=a_p,
    )


def soft_sentence_counts(
    gold: Sequence[Alignment], matrices: Sequence[np.ndarray]
) -> list[tuple[float, int, float, float]]:
    """(sum(M_A), |S|, sum(M_A*M_S), sum(M_A*M_P)) of each sentence: what corpus SAER sums.

    A matrix (rows = target words, columns = source words: entry [j, i] is the weight of link (i, j)) must be
    finite and non-negative, and every gold link must fall inside it."""
    _pairs(gold, matrices)
    counts = []
    for k, (reference, matrix) in enumerate(zip(gold, matrices)):
        matrix = np.asarray(matrix, dtype=np.float64)
        if matrix.ndim != 2:
            raise MetricError(f"sentence {k + 1}: the soft alignment is not a matrix (shape {matrix.shape})")
        if not np.all(np.isfinite(matrix)) or np.any(matrix < 0):
            raise MetricError(f"sentence {k + 1}: the soft alignment has negative or non-finite weights")
        n_tgt, n_src = matrix.shape
        sure = set(reference.sure)
        possible = set(reference.possible) | sure
        for i, j in sorted(possible):
            if not (0 <= i < n_src and 0 <= j < n_tgt):
                raise MetricError(
                    f"sentence {k + 1}: gold link {i}-{j} lies outside the soft alignment "
                    f"({n_tgt} target x {n_src} source words)"
                )
        counts.append(
            (
                float(matrix.sum()),
                len(sure),
                sum(float(matrix[j, i]) for i, j in sure),
                sum(float(matrix[j, i]) for i, j in possible),
            )
        )
    return counts


def score_soft(gold: Sequence[Alignment], matrices: Sequence[np.ndarray]) -> SoftScores:
    """Corpus-level SAER of soft alignment matrices, one per sentence (see soft_sentence_counts)."""
    counts = soft_sentence_counts(gold, matrices)
    mass = on_sure = on_possible = 0.0
    n_s = 0
    for m, s, on_s, on_p in counts:  # summed in sentence order, as before
        mass += m
        n_s += s
        on_sure += on_s
        on_possible += on_p
    if mass + n_s == 0:
        raise MetricError(
            "SAER is undefined: the soft alignments carry no weight and the gold standard has no "
            f"sure link (over {len(gold)} sentences)"
        )
    return SoftScores(
        saer=1.0 - (on_sure + on_possible) / (mass + n_s),
        sentences=len(gold),
        mass=mass,
        sure=n_s,
        mass_on_sure=on_sure,
        mass_on_possible=on_possible,
    )
