"""`nmt attention`: the attention matrix of a model for one reference translation (Luong et al. 2015, Figure 7).

The reference is force-decoded (nmt.align.extract): one row per reference word, one column per source word in
the order the source is written. Which decoder step's weights a word gets follows Luong et al.'s footnote 14, as
for the alignments scored with AER: the step that predicts it (location scores), or the step that reads it
(content scores: dot, general, concat).
"""
from __future__ import annotations

from pathlib import Path

import torch

from .config import ConfigError
from .data.text import CorpusError, read_parallel
from .align.extract import credit_rule, soft_alignments
from .translate import load_models


def select_line(src_lines: list[str], src_path: str | Path, *, line: int | None = None,
                length: tuple[int, int] | None = None) -> int:
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
    raise CorpusError(src_path, None, f"no line has between {low} and {high} source words "
                                      f"({len(src_lines)} lines)")


def forced_attention(model, src_ids: list[int], tgt_ids: list[int]) -> torch.Tensor:
    """Attention weights [T, S] of one sentence pair under teacher forcing (T = len(tgt_ids)); model in eval mode."""
    device = next(model.parameters()).device
    return torch.from_numpy(soft_alignments(model, [src_ids], [tgt_ids], device=device)[0]).float()


def attention_label(model_config: dict) -> str:
    """How the papers label a model: "local-p (general)" (Luong et al., Figure 7), "RNNsearch + target
    foresight" (Peter et al.)."""
    if model_config.get("arch", "luong") == "rnnsearch":
        return "RNNsearch" + (" + target foresight" if model_config.get("target_foresight") else "")
    if model_config["attention"] == "monotonic":
        return f"monotonic ({model_config.get('energy', 'eq17').replace('eq', 'eq. ')})"
    return f"{model_config['attention']} ({model_config['score']})"


def attention_map(model_path: str | Path, src_path: str | Path, tgt_path: str | Path, *, line: int | None = None,
                  length: tuple[int, int] | None = None, system: str | None = None, device: str = "cpu") -> dict:
    """The JSON record of `nmt attention` for one line of a tokenised parallel file pair."""
    model, src_vocab, tgt_vocab, _ = load_models([str(model_path)], device)
    if model.attention is None:
        raise ConfigError(f"{model_path}: this model has no attention (attention: none); "
                          "there is no attention matrix to draw")
    model.eval()
    src_lines, tgt_lines = read_parallel(src_path, tgt_path)
    number = select_line(src_lines, src_path, line=line, length=length)
    src_text, tgt_text = src_lines[number - 1], tgt_lines[number - 1]
    # Unknown words are fed as <unk> but reported as written.
    weights = forced_attention(model, src_vocab.encode(src_text), tgt_vocab.encode(tgt_text))
    return {"model": str(model_path), "system": system, "line": number, "src": src_text.split(),
            "tgt": tgt_text.split(), "weights": weights.tolist(), "attention": attention_label(model.config),
            "credited": credit_rule(model.config)}
