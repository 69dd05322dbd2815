"""Teacher-forced likelihood of a corpus: dev/test perplexity."""

from __future__ import annotations

import math

import torch

from ..data.batches import bucketed_batches, make_batch
from ..data.vocab import PAD_ID
from ..engine.fused_loss import linear_cross_entropy
from ..models.objectives import token_nll


def batch_nll(model, batch) -> torch.Tensor:
    """Summed negative log-likelihood of batch.tgt_out (padding excluded). tgt_out goes to the model too: a target
    foresight model reads the word it predicts in its attention. The output layer and the loss are one fused step
    (nmt.engine.fused_loss: the same number without [N, V] log-probabilities)."""
    if not hasattr(model, "features"):  # e.g. an ensemble: its members' distributions are combined first
        log_probs, _ = model(batch.src, batch.src_len, batch.tgt_in, tgt_out=batch.tgt_out)
        return token_nll(log_probs, batch.tgt_out)
    features, _ = model.features(batch.src, batch.src_len, batch.tgt_in, tgt_out=batch.tgt_out)
    return linear_cross_entropy(features, model.generator.weight, model.generator.bias, batch.tgt_out, PAD_ID)


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
