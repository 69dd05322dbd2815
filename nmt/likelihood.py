"""Teacher-forced likelihood of a corpus: dev/test perplexity."""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from .data.batches import bucketed_batches, make_batch
from .data.vocab import PAD_ID
from .errors import ConfigError
from .models.fused_loss import linear_cross_entropy


def batch_nll(model, batch) -> torch.Tensor:
    """Summed negative log-likelihood of batch.tgt_out (padding excluded). tgt_out goes to the model too: a target
    foresight model reads the word it predicts in its attention. The output layer and the loss are one fused step
    (nmt.models.fused_loss: the same number without [N, V] log-probabilities)."""
    if not hasattr(model, "features"):  # e.g. an ensemble: its members' distributions are combined first
        log_probs, _ = model(batch.src, batch.src_len, batch.tgt_in, tgt_out=batch.tgt_out)
        return token_nll(log_probs, batch.tgt_out)
    features, _ = model.features(batch.src, batch.src_len, batch.tgt_in, tgt_out=batch.tgt_out)
    return linear_cross_entropy(features, model.generator.weight, model.generator.bias, batch.tgt_out, PAD_ID)


def token_nll(log_probs: torch.Tensor, tgt_out: torch.Tensor) -> torch.Tensor:
    """Summed negative log-likelihood of tgt_out [B, T] under log_probs [B, T, V] (padding excluded)."""
    return F.nll_loss(log_probs.reshape(-1, log_probs.size(-1)), tgt_out.reshape(-1),
                      ignore_index=PAD_ID, reduction="sum")


def alignment_loss(weights: torch.Tensor, align: torch.Tensor, credit: str = "predicted") -> torch.Tensor:
    """Guided alignment loss of Chen et al. (2016), summed over the batch: -sum_n sum_i sum_j A_ij log alpha_ij.

    weights [B, T, S]: the model's attention, row t from the step that reads tgt_in[:, t] (and predicts word t);
    align [B, T, S]: Batch.align, row t for target word t (0-based), rows normalised over the linked source words,
    zero for words without links, </s> and padding, which therefore contribute nothing. `credit` says which step's
    weights belong to word t, as alignment extraction (nmt.align.extract) credits them: "predicted" (row t; RNNsearch
    and location scores) or "read" (the step that reads word t, row t + 1; Luong et al.'s content scores).
    Where alpha underflows below the smallest normal float, log alpha is cut off there (and has no gradient)."""
    if credit == "read":
        weights, align = weights[:, 1:], align[:, :-1]
    elif credit != "predicted":
        raise ConfigError(f"unknown credit rule {credit!r}")
    log_alpha = torch.log(weights.clamp_min(torch.finfo(weights.dtype).tiny))
    return -(align.to(weights.dtype) * log_alpha).sum()


@torch.no_grad()
def corpus_nll(model, src: list[list[int]], tgt: list[list[int]], batch_size: int, device) -> tuple[float, int]:
    """(summed NLL, number of target tokens incl. </s>) over a corpus, in eval mode."""
    was_training = model.training
    model.eval()
    total, tokens = 0.0, 0
    for index in bucketed_batches(src, tgt, batch_size, seed=None):
        batch = make_batch([src[i] for i in index], [tgt[i] for i in index], index).to(device)
        total += float(batch_nll(model, batch))
        tokens += batch.n_tokens
    model.train(was_training)
    return total, tokens


def perplexity(nll: float, tokens: int) -> float:
    return math.exp(nll / max(tokens, 1))
