"""Scoring translations: tokenised BLEU (multi-bleu.perl style), detokenised sacreBLEU, per-length BLEU.
Details: docs/internals/scoring.md."""

from __future__ import annotations

import math
from typing import Any, Sequence

from sacrebleu.metrics import BLEU, CHRF
from sacrebleu.metrics.bleu import BLEUScore

from nmt.base.errors import InputError
from nmt.data.text import PathLike, check_same_sentences, read_lines, read_parallel
from nmt.data.tokenize import detokenize
from nmt.records.scores import write_scores

BLEU_FIELDS = ("bleu_tok", "bleu_detok", "bleu_tok_unk", "bleu_detok_unk")
#: What a scores file keeps beside each BLEU field F: ``F_signature``, then sacreBLEU's length diagnostics.
BLEU_DETAIL_SUFFIXES = ("signature", "bp", "ratio", "hyp_len", "ref_len")


def _bleu_keys(field: str) -> tuple[str, ...]:
    return (field,) + tuple(f"{field}_{suffix}" for suffix in BLEU_DETAIL_SUFFIXES)


SCORE_KEYS = (
    "system",
    "testset",
    "preset",
    "pair",
    "n_sentences",
    *_bleu_keys("bleu_tok"),
    *_bleu_keys("bleu_detok"),
    "bleu_detok_reference",
    "ppl",
    "hyp",
    "ref",
    *_bleu_keys("bleu_tok_unk"),
    *_bleu_keys("bleu_detok_unk"),
    "chrf",
    "chrf_signature",
    "chrf_unk",
    "chrf_unk_signature",
    "unk",
    "by_length",
)
META_KEYS = ("system", "testset", "preset", "pair")


def _empty(ref_path: PathLike, hyp_path: PathLike) -> InputError:
    return InputError(f"{ref_path}: empty: no sentence to score {hyp_path} against")


def require_sentences(ref_path: PathLike, hyp_path: PathLike) -> None:
    """An empty reference (and so, as the line counts must agree, an empty translation) is one InputError: nothing
    can be scored. `nmt evaluate` asks before it writes anything (the unk-replaced translation)."""
    if not read_lines(ref_path):
        raise _empty(ref_path, hyp_path)


def _check_lengths(hyps: Sequence[str], refs: Sequence[str]) -> None:
    if len(hyps) != len(refs):
        raise InputError(f"{len(hyps)} hypotheses but {len(refs)} references")


def bleu_metric(tokenize: str, lowercase: bool = False) -> BLEU:
    """sacreBLEU's BLEU as every score here is computed: one reference, ``exp`` smoothing, no effective order;
    ``tokenize`` 'none' (tokenised text as it is) or '13a'; case-sensitive unless ``lowercase`` (text lowercased in
    preparation: signature ``case:lc``). With 'none' the text is tokenised on purpose, so sacreBLEU's warning about
    tokenised input (``force``) is off."""
    return BLEU(
        tokenize=tokenize, smooth_method="exp", effective_order=False, lowercase=lowercase, force=tokenize == "none"
    )


def is_lowercased(signature: str | None) -> bool:
    """Whether a sacreBLEU signature says the score was computed case-insensitively (``case:lc``)."""
    return bool(signature) and "case:lc" in str(signature).split("|")


def _bleu_score(
    hyps: Sequence[str], refs: Sequence[str], tokenize: str, lowercase: bool = False
) -> tuple[BLEUScore, str]:
    """sacreBLEU's ``BLEUScore`` (score, bp, ratio, sys_len, ref_len, ...) and the metric's signature."""
    _check_lengths(hyps, refs)
    metric = bleu_metric(tokenize, lowercase)
    score = metric.corpus_score(list(hyps), [list(refs)])
    return score, str(metric.get_signature())


def _bleu(hyps: Sequence[str], refs: Sequence[str], tokenize: str, lowercase: bool = False) -> tuple[float, str]:
    score, signature = _bleu_score(hyps, refs, tokenize, lowercase)
    return float(score.score), signature


def chrf(hyps: Sequence[str], refs: Sequence[str], lowercase: bool = False) -> tuple[float, str]:
    """sacreBLEU's chrF2 with its defaults (sacrebleu -m chrf; ``lowercase``: case-insensitive, ``-lc``):
    ``(score in 0..100, signature)``."""
    _check_lengths(hyps, refs)
    metric = CHRF(lowercase=lowercase)
    return float(metric.corpus_score(list(hyps), [list(refs)]).score), str(metric.get_signature())


def _chrf_fields(field: str, lines: Sequence[str] | None, refs: Sequence[str], lowercase: bool) -> dict[str, Any]:
    score, signature = chrf(lines, refs, lowercase) if lines is not None else (None, None)
    return {field: score, f"{field}_signature": signature}


def _bleu_fields(field: str, result: tuple[BLEUScore, str] | None) -> dict[str, Any]:
    """A BLEU field of the scores file with its signature and length diagnostics, as sacreBLEU reports them:
    ``F_bp`` (its ``bp``), ``F_ratio`` (its ``ratio`` = sys_len / ref_len), ``F_hyp_len``, ``F_ref_len``; all None
    when there is no score (``result`` None)."""
    if result is None:
        return dict.fromkeys(_bleu_keys(field))
    score, signature = result
    return {
        field: float(score.score),
        f"{field}_signature": signature,
        f"{field}_bp": float(score.bp),
        f"{field}_ratio": float(score.ratio),
        f"{field}_hyp_len": int(score.sys_len),
        f"{field}_ref_len": int(score.ref_len),
    }


def bleu_tokenized(hyps: Sequence[str], refs: Sequence[str]) -> tuple[float, str]:
    """Corpus BLEU on already tokenised text, ``multi-bleu.perl`` equivalent (see the module docstring).

    No re-tokenisation (sacreBLEU ``tokenize='none'``), case-sensitive, ``exp`` smoothing, effective order off.
    Returns ``(score in 0..100, sacreBLEU signature)``, e.g. ``nrefs:1|case:mixed|eff:no|tok:none|smooth:exp|...``.
    """
    return _bleu(hyps, refs, "none")


def bleu_detokenized(hyps: Sequence[str], refs: Sequence[str], lang: str) -> tuple[float, str]:
    """Detokenise hypotheses and references with sacremoses for ``lang``, then sacreBLEU with its default ``13a``
    tokeniser. Returns ``(score, signature)`` with ``tok:13a`` in the signature."""
    _check_lengths(hyps, refs)
    return _bleu(detokenize(hyps, lang), detokenize(refs, lang), "13a")


def bleu_against_raw(hyps: Sequence[str], raw_refs: Sequence[str], lang: str) -> tuple[float, str]:
    """Detokenise the hypotheses with sacremoses for ``lang`` and score them with sacreBLEU's ``13a`` against the
    raw (never tokenised) references: NIST BLEU as WMT reports it (mteval-v13a). Returns ``(score, signature)``."""
    _check_lengths(hyps, raw_refs)
    return _bleu(detokenize(hyps, lang), list(raw_refs), "13a")


def bleu_by_length(
    hyps: Sequence[str], refs: Sequence[str], srcs: Sequence[str], buckets: Sequence[int] = (10, 20, 30, 40, 50, 60, 70)
) -> list[dict[str, Any]]:
    """Tokenised BLEU per source-length bucket (Luong et al. 2015, Figure 6).

    The length of a sentence is the number of whitespace-separated tokens of its *source*. Bucket ``b`` holds
    the sentences with ``prev < len <= b`` (``prev`` = the previous bucket bound, 0 for the first bucket, whose
    range also includes length 0); the last bucket also takes every longer sentence. One dict per bucket, in
    order: ``{"bucket": b, "min_len": prev + 1 (0 for the first), "max_len": b (None for the last, open-ended),
    "n_sentences": k, "bleu_tok": score or None when the bucket is empty}``.
    """
    if not (len(hyps) == len(refs) == len(srcs)):
        raise InputError(f"{len(hyps)} hypotheses, {len(refs)} references and {len(srcs)} sources: counts differ")
    bounds = [int(b) for b in buckets]
    if not bounds or bounds[0] <= 0 or any(a >= b for a, b in zip(bounds, bounds[1:])):
        raise ValueError(f"buckets must be positive and strictly increasing, got {tuple(buckets)}")
    members: list[list[int]] = [[] for _ in bounds]
    for i, src in enumerate(srcs):
        n = len(src.split())
        k = next((j for j, b in enumerate(bounds) if n <= b), len(bounds) - 1)
        members[k].append(i)
    out = []
    prev = 0
    for j, (bound, idx) in enumerate(zip(bounds, members)):
        last = j == len(bounds) - 1
        score = bleu_tokenized([hyps[i] for i in idx], [refs[i] for i in idx])[0] if idx else None
        out.append(
            {
                "bucket": bound,
                "min_len": 0 if j == 0 else prev + 1,
                "max_len": None if last else bound,
                "n_sentences": len(idx),
                "bleu_tok": score,
            }
        )
        prev = bound
    return out


def evaluate_files(
    hyp_path: PathLike,
    ref_path: PathLike,
    *,
    lang: str,
    ppl: float | None,
    meta: dict[str, Any],
    out_path: PathLike | None = None,
    unk: dict[str, Any] | None = None,
    src_path: PathLike | None = None,
    raw_ref_path: PathLike | None = None,
    lowercase: bool = False,
) -> dict[str, Any]:
    """Score a translation file against its reference; returns the Scores dict of ``docs/formats.md``.

    Both files must be in the tokenised form the model works in (the hypothesis is model output; the reference
    is the tokenised target side of the test split): ``bleu_tok`` scores them as they are, ``bleu_detok``
    detokenises both with sacremoses for ``lang`` first. Files are read with :func:`read_parallel` semantics:
    different line counts are a ``CorpusError`` naming both files; empty lines are allowed in the hypothesis (a
    model may output nothing) but not in the reference.

    ``meta`` must supply ``system``, ``testset``, ``preset`` and ``pair``; any other keys are copied into the result
    but may not replace a computed key. ``hyp``/``ref`` are recorded as the paths were given (pass paths relative
    to the repository root). ``ppl`` is the teacher-forced test perplexity, or None; it must be finite. Scores are
    kept as full floats (rounding is the report's job). If ``out_path`` is given the dict is also written there
    as a scores file (nmt.records.scores.write_scores).

    ``unk`` (optional) describes an unk-replaced version of the same translation: ``{"hyp": path, ...counts}``;
    it is scored the same way into ``bleu_tok_unk``/``bleu_detok_unk`` (None when there is none, e.g. a model
    without attention).

    Each BLEU field ``F`` comes with ``F_signature`` and sacreBLEU's length diagnostics of the same score:
    ``F_bp`` (brevity penalty), ``F_ratio`` (hypothesis / reference length), ``F_hyp_len``, ``F_ref_len``; all
    None where ``F`` is.

    ``src_path`` (optional, the test source) adds ``by_length``: tokenised BLEU per source-length bucket
    (:func:`bleu_by_length`) of the translation and, under ``"unk"``, of the unk-replaced one (Figure 6).

    ``raw_ref_path`` (optional, the test set's raw reference, in the order of ``ref_path``: checked, a mismatch is a
    CorpusError naming both files) is what ``bleu_detok`` scores against instead of the detokenised ``ref_path``.

    ``lowercase``: the task's text was lowercased when it was prepared: every BLEU and chrF score is case-insensitive
    (``case:lc`` in its signature), the raw reference's case included.
    """
    missing = [k for k in META_KEYS if k not in meta]
    if missing:
        raise ValueError(f"meta lacks {', '.join(missing)}")
    clash = sorted(set(meta) & (set(SCORE_KEYS) - set(META_KEYS)))
    if clash:
        raise ValueError(f"meta may not set the computed key(s) {', '.join(clash)}")
    if ppl is not None:
        ppl = float(ppl)
        if not math.isfinite(ppl):
            raise ValueError(f"ppl must be a finite number or None, got {ppl}")
    hyps, refs = read_parallel(hyp_path, ref_path, allow_empty_src=True)
    if not refs:  # sacreBLEU has nothing to average over (an IndexError deep inside it)
        raise _empty(ref_path, hyp_path)
    raw_refs = None
    if raw_ref_path is not None:
        raw_refs = read_lines(raw_ref_path)
        check_same_sentences(raw_refs, refs, raw_ref_path, ref_path)

    # what bleu_against_raw / bleu_detokenized score against, detokenised once for both translations
    detok_refs = list(raw_refs) if raw_refs is not None else detokenize(refs, lang)

    def detok_bleu(lines: list[str]) -> tuple[BLEUScore, str]:
        return _bleu_score(detokenize(lines, lang), detok_refs, "13a", lowercase)

    scores = dict(meta)
    scores.update(
        {
            "n_sentences": len(refs),
            **_bleu_fields("bleu_tok", _bleu_score(hyps, refs, "none", lowercase)),
            **_bleu_fields("bleu_detok", detok_bleu(hyps)),
            "bleu_detok_reference": (
                {"kind": "raw", "path": str(raw_ref_path)}
                if raw_refs is not None
                else {"kind": "detokenised", "path": str(ref_path)}
            ),
            "ppl": ppl,
            "hyp": str(hyp_path),
            "ref": str(ref_path),
            **_bleu_fields("bleu_tok_unk", None),
            **_bleu_fields("bleu_detok_unk", None),
            **_chrf_fields("chrf", hyps, refs, lowercase),
            **_chrf_fields("chrf_unk", None, refs, lowercase),
            "unk": unk,
            "by_length": None,
        }
    )
    srcs = read_parallel(src_path, ref_path)[0] if src_path is not None else None
    if srcs is not None:
        scores["by_length"] = {"plain": bleu_by_length(hyps, refs, srcs), "unk": None}
    if unk is not None:
        replaced, _ = read_parallel(unk["hyp"], ref_path, allow_empty_src=True)
        scores.update(_bleu_fields("bleu_tok_unk", _bleu_score(replaced, refs, "none", lowercase)))
        scores.update(_bleu_fields("bleu_detok_unk", detok_bleu(replaced)))
        scores.update(_chrf_fields("chrf_unk", replaced, refs, lowercase))
        if srcs is not None:
            scores["by_length"]["unk"] = bleu_by_length(replaced, refs, srcs)
    if out_path is not None:
        write_scores(out_path, scores)
    return scores
