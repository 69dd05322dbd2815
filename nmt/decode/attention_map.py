"""`nmt attention`: the attention matrix of a model for one reference translation (Luong et al. 2015, Figure 7).
Details: docs/internals/decode.md."""

from __future__ import annotations

from pathlib import Path

import torch

from ..align.extract import members_of, soft_alignments
from ..base.errors import ConfigError
from ..data.alignments import check_lengths, links_to_matrix, read_pharaoh
from ..data.text import CorpusError, read_parallel
from ..engine.fast import load_for_decoding
from ..models.registry import credit_rule, label


def select_line(
    src_lines: list[str], src_path: str | Path, *, line: int | None = None, length: tuple[int, int] | None = None
) -> int:
    """The 1-based line to draw: `line` itself (checked), or the first line whose source has between
    length[0] and length[1] words (inclusive). Exactly one of the two must be given."""
    if (line is None) == (length is None):
        raise ValueError("give exactly one of line and length")
    if line is not None:
        if not 1 <= line <= len(src_lines):
            raise CorpusError(src_path, line, f"no such line (the file has {len(src_lines)} lines)")
        return line
    low, high = length
    if not 1 <= low <= high:
        raise ConfigError(f"length range {low}..{high}: need 1 <= MIN <= MAX")
    for number, text in enumerate(src_lines, start=1):
        if low <= len(text.split()) <= high:
            return number
    raise CorpusError(src_path, None, f"no line has between {low} and {high} source words ({len(src_lines)} lines)")


def forced_attention(model, src_ids: list[int], tgt_ids: list[int]) -> torch.Tensor:
    """Attention weights [T, S] of one sentence pair under teacher forcing (T = len(tgt_ids)); model in eval mode."""
    device = next(model.parameters()).device
    return torch.from_numpy(soft_alignments(model, [src_ids], [tgt_ids], device=device)[0]).float()


def attention_map(
    model_paths: str | Path | list,
    src_path: str | Path,
    tgt_path: str | Path,
    *,
    line: int | None = None,
    length: tuple[int, int] | None = None,
    system: str | None = None,
    device: str | None = None,
    combine: str = "prob",
) -> dict:
    """The JSON record of `nmt attention` for one line of a tokenised parallel file pair: one model, or the
    average of several (an ensemble)."""
    paths = [str(p) for p in (model_paths if isinstance(model_paths, (list, tuple)) else [model_paths])]
    model, src_vocab, tgt_vocab, _ = load_for_decoding(paths, device, combine)
    members = members_of(model)
    for path, member in zip(paths, members):
        if member.attention is None:
            raise ConfigError(
                f"{path}: this model has no attention (attention: none); there is no attention matrix to draw"
            )
    model.eval()
    src_lines, tgt_lines = read_parallel(src_path, tgt_path)
    number = select_line(src_lines, src_path, line=line, length=length)
    src_text, tgt_text = src_lines[number - 1], tgt_lines[number - 1]
    # Unknown words are fed as <unk> but reported as written.
    weights = forced_attention(model, src_vocab.encode(src_text), tgt_vocab.encode(tgt_text))
    labels = sorted({label(m.settings) for m in members})
    return {
        "models": paths,
        "system": system,
        "line": number,
        "src": src_text.split(),
        "tgt": tgt_text.split(),
        "weights": weights.tolist(),
        "attention": labels[0] if len(members) == 1 else f"ensemble of {len(members)}: {', '.join(labels)}",
        "credited": sorted({credit_rule(m.settings) for m in members}),
    }


def links_map(
    links_path: str | Path,
    src_path: str | Path,
    tgt_path: str | Path,
    *,
    line: int | None = None,
    length: tuple[int, int] | None = None,
    system: str | None = None,
    label: str = "word alignment links",
) -> dict:
    """The same record for a word aligner's links (Pharaoh, source first, one line per sentence pair of the files):
    1 for a sure link, 0.5 for a possible-only one, 0 elsewhere, in place of attention weights."""

    src_lines, tgt_lines = read_parallel(src_path, tgt_path)
    number = select_line(src_lines, src_path, line=line, length=length)
    links = read_pharaoh(links_path)
    check_lengths(links, [len(s.split()) for s in src_lines], [len(t.split()) for t in tgt_lines], str(links_path))
    src, tgt = src_lines[number - 1].split(), tgt_lines[number - 1].split()
    sentence = links[number - 1]
    matrix = links_to_matrix(sentence.sure, sentence.possible, len(src), len(tgt))
    return {
        "links": str(links_path),
        "system": system,
        "line": number,
        "src": src,
        "tgt": tgt,
        "weights": matrix.tolist(),
        "attention": label,
        "credited": None,
    }
