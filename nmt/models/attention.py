"""Global attention of Luong et al. (2015), section 3.1.
Details: docs/internals/models.md."""

from __future__ import annotations

import torch
from torch import nn

from ..base.errors import ConfigError

SCORES = ("dot", "general", "concat", "location")


class GlobalAttention(nn.Module):
    def __init__(self, hidden: int, score: str, max_src_len: int):
        super().__init__()
        if score not in SCORES:
            raise ConfigError(f"unknown attention score {score!r}; choose one of {', '.join(SCORES)}")
        self.score = score
        self.max_src_len = max_src_len
        if score == "general":
            self.W_a = nn.Linear(hidden, hidden, bias=False)
        elif score == "concat":
            # W_a [h; hbar] split into a query part and a key part, so keys are computed once per sentence.
            self.W_q = nn.Linear(hidden, hidden, bias=False)
            self.W_k = nn.Linear(hidden, hidden, bias=False)
            self.v_a = nn.Linear(hidden, 1, bias=False)
        elif score == "location":
            self.W_a = nn.Linear(hidden, max_src_len, bias=False)
        self.W_c = nn.Linear(2 * hidden, hidden, bias=False)

    def keys(self, memory: torch.Tensor) -> torch.Tensor | None:
        """The per-sentence part of the score, computed once before decoding. memory: [B, S, H]."""
        if self.score == "general":
            return self.W_a(memory)
        if self.score == "concat":
            return self.W_k(memory)
        if self.score == "dot":
            return memory
        return None

    def scores(self, query: torch.Tensor, keys: torch.Tensor | None, src_positions: int) -> torch.Tensor:
        """Unnormalised scores [B, T, S] for queries [B, T, H]."""
        if self.score in ("dot", "general"):
            return torch.bmm(query, keys.transpose(1, 2))
        if self.score == "concat":
            hidden = torch.tanh(self.W_q(query).unsqueeze(2) + keys.unsqueeze(1))  # [B, T, S, H]
            return self.v_a(hidden).squeeze(-1)
        logits = self.W_a(query)  # location: [B, T, max_src_len]
        if src_positions <= self.max_src_len:
            return logits[:, :, :src_positions]
        # Words past the maximum length get no attention.
        filler = logits.new_full((*logits.shape[:2], src_positions - self.max_src_len), float("-inf"))
        return torch.cat([logits, filler], dim=-1)

    def context(
        self,
        query: torch.Tensor,
        memory: torch.Tensor,
        keys: torch.Tensor | None,
        mask: torch.Tensor,
        steps: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The context vectors c_t [B, T, H] and attention weights [B, T, S] for queries [B, T, H]."""
        scores = self.scores(query, keys, memory.size(1))
        scores = scores.masked_fill(~mask.unsqueeze(1), float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        return torch.bmm(weights, memory), weights

    def step_context(
        self,
        query: torch.Tensor,
        memory: torch.Tensor,
        keys: torch.Tensor | None,
        mask: torch.Tensor,
        step: int,
        state: None = None,
    ) -> tuple[torch.Tensor, torch.Tensor, None]:
        """One decoder step for query [B, 1, H] at target position `step`: (context, weights, state) as every attention
        layer gives them to nmt.engine.attention_kernels.AutogradKernel (this layer carries no state)."""
        steps = torch.tensor([step], device=query.device)
        return (*self.context(query, memory, keys, mask, steps), None)

    def forward(
        self,
        query: torch.Tensor,
        memory: torch.Tensor,
        keys: torch.Tensor | None,
        mask: torch.Tensor,
        steps: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """query [B, T, H], memory [B, S, H], mask [B, S] (True = a real source word); `steps` (the target
        positions) only matters to local attention.

        Returns htilde [B, T, H] and the attention weights [B, T, S].
        """
        context, weights = self.context(query, memory, keys, mask, steps)
        htilde = torch.tanh(self.W_c(torch.cat([context, query], dim=-1)))
        return htilde, weights
