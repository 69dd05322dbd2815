"""What an engine may compute in place of a model's own loops.
Details: docs/internals/models.md."""

from __future__ import annotations

from typing import Protocol

import torch
from torch import nn

from .dropout import Dropout

LSTMState = tuple[torch.Tensor, torch.Tensor]


class Accelerator(Protocol):
    def lstm(
        self, lstm: nn.LSTM, inputs: torch.Tensor, lengths: torch.Tensor | None, hidden: LSTMState | None
    ) -> tuple[torch.Tensor, LSTMState] | None:
        """What nn.LSTM gives on inputs [B, S, E]: with `lengths` (on the CPU) as on a packed sequence padded back
        (outputs 0 past each sentence's end, each sentence's final state), without over all S steps from
        `hidden`."""

    def bidirectional_gru(self, gru: nn.GRU, inputs: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor | None:
        """What a bidirectional nn.GRU gives on a packed sequence padded back: [B, S, 2H]."""

    def feed_decoder(
        self,
        model: nn.Module,
        emb: torch.Tensor,
        memory: torch.Tensor,
        keys: torch.Tensor | None,
        mask: torch.Tensor,
        hidden: LSTMState,
        feed: torch.Tensor,
        first_step: int,
        attention_state: torch.Tensor | None,
    ) -> tuple:
        """Seq2Seq's input-feeding decoder over emb [B, T, E]: htilde [B, T, H], the weights over the encoder
        positions [B, T, S], the final (h, c), feed and attention state."""

    def rnnsearch_decoder(
        self,
        model: nn.Module,
        emb: torch.Tensor,
        memory: torch.Tensor,
        keys: torch.Tensor,
        mask: torch.Tensor,
        hidden: torch.Tensor,
        context: torch.Tensor | None,
        foresight: torch.Tensor | None,
    ) -> tuple:
        """RNNSearch's decoder over emb [B, T, E]: the states, contexts and weights of every step, and the final
        (s, c)."""


def accelerate(model: nn.Module, accelerator: Accelerator | None) -> None:
    """Hand `accelerator` to every architecture inside `model` (an ensemble's members too), and let its dropout
    layers draw their cheaper masks (nmt.models.dropout); None gives the reference back."""
    for module in model.modules():
        if isinstance(module, Dropout):
            module.fast = accelerator is not None
        elif "accelerator" in vars(module):
            object.__setattr__(module, "accelerator", accelerator)
