"""Paired bootstrap resampling of a test set: how sure a difference between two systems' scores is.
Details: docs/internals/scoring.md."""

from __future__ import annotations

import os
from typing import Sequence

import numpy as np

from ..base.errors import InputError
from .bleu import bleu_metric


def bootstrap_seed() -> int | None:
    """The seed sacreBLEU's paired tests use: $SACREBLEU_SEED (12345 unless set; 'none' draws from the OS)."""
    seed = os.environ.get("SACREBLEU_SEED", "12345")
    return None if seed.lower() == "none" else int(seed)


def resample_indices(n_sentences: int, n_samples: int, seed: int | None = None) -> np.ndarray:
    """[n_samples, n_sentences] sentence indices drawn with replacement, as sacreBLEU draws them for a paired
    bootstrap test (``seed``: :func:`bootstrap_seed` when None)."""
    if n_sentences < 1:
        raise ValueError("a bootstrap needs at least one sentence")
    rng = np.random.default_rng(bootstrap_seed() if seed is None else seed)
    return rng.choice(n_sentences, size=(n_samples, n_sentences), replace=True)


def bleu_statistics(hyps: Sequence[str], refs: Sequence[str], tokenize: str, lowercase: bool = False) -> np.ndarray:
    """[n_sentences, k]: sacreBLEU's sufficient statistics of each sentence (hypothesis and reference lengths,
    n-gram matches and totals) for BLEU with ``tokenize`` ('none': the tokenised text as it is; '13a'), case-insensitive
    with ``lowercase`` (nmt.scoring.bleu.bleu_metric)."""
    if len(hyps) != len(refs):
        raise InputError(f"{len(hyps)} hypotheses but {len(refs)} references")
    metric = bleu_metric(tokenize, lowercase)
    return np.asarray(metric._extract_corpus_statistics(list(hyps), [list(refs)]), dtype=np.int64)


def bleu_of(stats: np.ndarray, tokenize: str) -> float:
    """Corpus BLEU of the whole test set from its sentences' statistics: the score nmt.scoring.bleu reports (the case
    is in the statistics already)."""
    return float(bleu_metric(tokenize)._aggregate_and_compute(stats.tolist()).score)


def bleu_resamples(stats: np.ndarray, indices: np.ndarray, tokenize: str) -> np.ndarray:
    """[n_samples]: corpus BLEU of each resample of the sentences, computed as sacreBLEU computes its resamples
    (float32 statistics: integer counts, so their sums are exact)."""
    metric = bleu_metric(tokenize)
    stats32 = np.asarray(stats, dtype="float32")
    return np.array([metric._compute_score_from_stats(stats32[idx].sum(0)).score for idx in indices])


def error_rate(counts: np.ndarray) -> float:
    """AER or SAER of summed sentence counts [a, s, a_s, a_p] (|A|, |S|, |A∩S|, |A∩P|, or the soft masses):
    1 - (a_s + a_p) / (a + s)."""
    a, s, a_s, a_p = (float(x) for x in counts)
    if a + s == 0:
        raise ValueError("the error rate is undefined: no hypothesis link and no sure gold link")
    return 1.0 - (a_s + a_p) / (a + s)


def error_rate_resamples(counts: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """[n_samples]: AER/SAER of each resample of per-sentence counts [n_sentences, 4] (a resample whose sums are
    all zero, possible only for a corpus of link-less sentences, counts as an error rate of 1)."""
    counts = np.asarray(counts, dtype=np.float64)
    sums = np.stack([counts[idx].sum(axis=0) for idx in indices])
    denominator = sums[:, 0] + sums[:, 1]
    with np.errstate(invalid="ignore", divide="ignore"):
        rates = 1.0 - (sums[:, 2] + sums[:, 3]) / denominator
    return np.where(denominator > 0, rates, 1.0)


def percentile_interval(samples: np.ndarray) -> tuple[float, float]:
    """The 95% interval of bootstrap samples as sacreBLEU reads it: the sorted samples at n // 40 and
    n - n // 40 - 1 (``sacrebleu.significance.estimate_ci`` reports half their distance around the mean)."""
    ordered = np.sort(np.asarray(samples, dtype=np.float64))
    low = len(ordered) // 40
    return float(ordered[low]), float(ordered[len(ordered) - low - 1])


def tail_p_value(samples: np.ndarray, threshold: float, side: str) -> float:
    """Two-sided-equivalent bootstrap p-value of the difference lying above (``side='above'``) or below
    (``'below'``) ``threshold``: twice the share of the resampled differences on the other side of it (at or beyond
    the threshold), capped at 1. It is at most 0.05 exactly when the 95% percentile interval
    (:func:`percentile_interval`, for a number of samples divisible by 40) lies wholly on that side: verdicts read
    off p-values and off intervals agree. A p-value of 0 means no resample crossed (below 2 / n_samples)."""
    samples = np.asarray(samples, dtype=np.float64)
    crossing = samples <= threshold if side == "above" else samples >= threshold
    return min(1.0, 2.0 * float(crossing.sum()) / len(samples))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's (1979) step-down adjusted p-values, in the order given: the k-th smallest of m is multiplied by
    (m - k + 1), made monotone (never below the adjusted value before it) and capped at 1. Rejecting every
    hypothesis whose adjusted p-value is at most alpha keeps the chance of any false rejection at most alpha."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted, running = [0.0] * m, 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted
