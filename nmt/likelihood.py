"""Teacher-forced likelihood of a corpus: dev/test perplexity."""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from .data.batches import bucketed_batches, make_batch
from .data.vocab import PAD_ID


def batch_nll(model, batch) -> torch.Tensor:
    """Summed negative log-likelihood of batch.tgt_out (padding excluded)."""
    log_probs, _ = model(batch.src, batch.src_len, batch.tgt_in)
    return F.nll_loss(log_probs.reshape(-1, log_probs.size(-1)), batch.tgt_out.reshape(-1),
                      ignore_index=PAD_ID, reduction="sum")


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
