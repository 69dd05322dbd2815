"""Word alignments from a trained translation model, by forced decoding of the reference.
Details: docs/internals/align.md."""

from __future__ import annotations

import numpy as np
import torch

from ..base.errors import InputError
from ..data.alignments import write_pharaoh
from ..data.batches import bucketed_batches, make_batch
from ..data.text import read_parallel
from ..engine.fast import load_for_decoding
from ..models.registry import credit_rule
from ..models.variants import CREDIT_RULES
from .soft import save_soft


def members_of(model) -> list:
    """The models whose attention is averaged: an ensemble's members, or the model itself."""
    return list(getattr(model, "models", None) or [model])


@torch.inference_mode()
def soft_alignments(
    model,
    sources: list[list[int]],
    targets: list[list[int]],
    *,
    batch_size: int = 32,
    device: torch.device | str = "cpu",
    credit: str | None = None,
) -> list[np.ndarray]:
    """One [T, S] matrix per sentence pair (T reference words, S source words), in input order.

    `model` is a trained model or an ensemble (nmt.models.io.load_models), in eval mode; every member must have
    attention. Each member's steps are credited by its own rule (credit_rule), or all by `credit` ('read' or
    'predicted') when given. Rows sum to 1."""
    if credit is not None and credit not in CREDIT_RULES:
        raise InputError(f"unknown crediting {credit!r}: {' or '.join(CREDIT_RULES)}")
    members = members_of(model)
    for member in members:
        if getattr(member, "attention", None) is None and member.settings.arch == "luong":
            raise InputError("a model without attention (attention: none) has no alignment to extract")
    if len(sources) != len(targets):
        raise InputError(f"{len(sources)} source sentences but {len(targets)} targets")
    out: list[np.ndarray | None] = [None] * len(sources)
    for index in bucketed_batches(sources, targets, batch_size, seed=None):
        batch = make_batch([sources[i] for i in index], [targets[i] for i in index], index).to(device)
        total = None
        for member in members:
            # tgt_in = <s> y_1 .. y_T: step k reads tgt_in[k] and predicts y_{k+1} (</s> at k = T).
            _, weights = member(batch.src, batch.src_len, batch.tgt_in)
            weights = weights.float()
            rule = credit or credit_rule(member.settings)
            credited = weights[:, 1:] if rule == "read" else weights[:, :-1]
            total = credited if total is None else total + credited
        total = (total / len(members)).cpu().numpy()
        for row, i in enumerate(index):
            out[i] = total[row, : len(targets[i]), : len(sources[i])].astype(np.float64)
    return out  # type: ignore[return-value]


def credited_positions(
    model,
    sources: list[list[int]],
    targets: list[list[int]],
    *,
    credit: str | None = None,
    batch_size: int = 32,
    device: torch.device | str = "cpu",
) -> list[list[int]]:
    """For each target word, the source word (written order) whose attention weight is largest in the step
    credited to it: the rows of :func:`soft_alignments` (each member's own rule, footnote 14, or ``credit``), so
    that unk replacement looks at the word alignment extraction links. A row without weight (hard monotonic
    attention that ran past the sentence's end) gives the last source word, the one the process saw last, as the
    search's own positions do (nmt.decode.translate.attended_words). Empty lists for a model without attention."""
    if any(getattr(m, "attention", None) is None and m.settings.arch == "luong" for m in members_of(model)):
        return [[] for _ in targets]
    keep = [i for i, t in enumerate(targets) if t]  # an empty translation has nothing to credit
    matrices = soft_alignments(
        model,
        [sources[i] for i in keep],
        [targets[i] for i in keep],
        batch_size=batch_size,
        device=device,
        credit=credit,
    )
    out: list[list[int]] = [[] for _ in targets]
    for i, matrix in zip(keep, matrices):
        out[i] = [int(s) if row.sum() > 0 else len(sources[i]) - 1 for s, row in zip(matrix.argmax(axis=1), matrix)]
    return out


def hard_links(matrix: np.ndarray) -> set[tuple[int, int]]:
    """One (source, target) link per target word: the source word with the largest weight (first on ties)."""
    if matrix.size == 0:
        return set()
    return {(int(s), t) for t, s in enumerate(matrix.argmax(axis=1))}


def extract_files(
    model_paths: list[str],
    src_path,
    tgt_path,
    links_out,
    soft_out=None,
    *,
    combine: str = "prob",
    batch_size: int = 32,
    device: str | None = None,
    predicted_out=None,
) -> dict:
    """`nmt align extract`: hard links (Pharaoh, source index first, one line per sentence pair) and, with
    `soft_out`, the soft matrices (nmt.align.soft) of one model or an ensemble on a tokenised parallel file
    pair; with `predicted_out`, also the hard links with every step credited to the word it predicts (for a
    content-based model: the other reading of footnote 14). Returns a summary (sentences, links, how the rows
    were credited). `device`: cpu, cuda, or None for a free GPU when there is one (nmt.base.devices)."""
    model, src_vocab, tgt_vocab, _ = load_for_decoding(list(model_paths), device, combine)
    model.eval()
    device = next(model.parameters()).device
    src_lines, tgt_lines = read_parallel(src_path, tgt_path)
    sources, targets = [src_vocab.encode(s) for s in src_lines], [tgt_vocab.encode(t) for t in tgt_lines]
    matrices = soft_alignments(model, sources, targets, batch_size=batch_size, device=device)
    for number, (s, t, m) in enumerate(zip(src_lines, tgt_lines, matrices), start=1):
        # the model must have read every word as written (word-level vocabularies: one id per token)
        if m.shape != (len(t.split()), len(s.split())):
            raise InputError(
                f"{src_path}:{number}: the model read {m.shape[1]} source and {m.shape[0]} target "
                f"tokens, the line has {len(s.split())} and {len(t.split())}"
            )
    links = [hard_links(m) for m in matrices]
    write_pharaoh(links_out, links)
    if soft_out is not None:
        save_soft(soft_out, matrices)
    credited = sorted({credit_rule(m.settings) for m in members_of(model)})
    if predicted_out is not None:
        if credited != ["predicted"]:  # else the same matrices
            matrices = soft_alignments(
                model, sources, targets, batch_size=batch_size, device=device, credit="predicted"
            )
        write_pharaoh(predicted_out, [hard_links(m) for m in matrices])
    return {"sentences": len(links), "links": sum(len(x) for x in links), "credited": credited}
