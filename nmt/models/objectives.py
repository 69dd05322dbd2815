"""The training objective, as the reference path computes it: the summed negative log-likelihood of the target words,
and the guided alignment loss. The fast engine computes the first fused with the output layer
(nmt.engine.fused_loss) and is tested against this one."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from ..base.errors import ConfigError
from ..data.vocab import PAD_ID


def token_nll(log_probs: torch.Tensor, tgt_out: torch.Tensor) -> torch.Tensor:
    """Summed negative log-likelihood of tgt_out [B, T] under log_probs [B, T, V] (padding excluded)."""
    return F.nll_loss(
        log_probs.reshape(-1, log_probs.size(-1)), tgt_out.reshape(-1), ignore_index=PAD_ID, reduction="sum"
    )


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
