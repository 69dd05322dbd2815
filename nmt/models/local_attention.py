"""Local attention of Luong et al. (2015), section 3.2.

At target step t the decoder attends to a window of 2D+1 source positions around an aligned position p_t:
  local-m (monotonic)  p_t = t: the t-th target word looks at the t-th source word. When the encoder reads the
                       source reversed, source word t sits at encoder position len-1-t, so the window is centred
                       there.
  local-p (predictive) p_t = len * sigmoid(v_p^T tanh(W_p h_t)), a real position predicted from the decoder state;
                       the window's weights are multiplied by a Gaussian exp(-(s - p_t)^2 / (2 sigma^2)),
                       sigma = D/2, which is what makes p_t trainable (the window itself is chosen by rounding).
Inside the window the weights are align(h_t, hbar_s), a softmax over the window of one of the global scores
(dot, general, concat; location: W_a h_t gives 2D+1 scores, one per offset in the window).

The window is gathered from the encoder states, so the cost of a step is O(D), not O(S). Positions of the window
outside the sentence (before its start, past its end, or padding) get no weight; the centre is clipped into the
sentence so that at least one real word is always in the window (local-m once t runs past the source length).
"""
from __future__ import annotations

import torch
from torch import nn

from .attention import GlobalAttention

MODES = ("local-m", "local-p")  # monotonic, predictive


class LocalAttention(GlobalAttention):
    def __init__(self, hidden: int, score: str, mode: str, window: int, reverse: bool):
        if mode not in MODES:
            raise ValueError(f"unknown local attention {mode!r}; choose one of {', '.join(MODES)}")
        if window < (1 if mode == "local-p" else 0):  # local-p's Gaussian has sigma = D/2
            raise ValueError(f"{mode} attention needs a window D >= {1 if mode == 'local-p' else 0}, got {window}")
        # The location score of a local window is a vector over the 2D+1 window offsets.
        super().__init__(hidden, score, max_src_len=2 * window + 1)
        self.mode = mode
        self.window = window
        self.reverse = reverse
        self.sigma = window / 2
        if mode == "local-p":
            self.W_p = nn.Linear(hidden, hidden, bias=False)
            self.v_p = nn.Linear(hidden, 1, bias=False)

    def centres(self, query: torch.Tensor, steps: torch.Tensor, lengths: torch.Tensor
                ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Integer window centres [B, T] (encoder positions) and, for local-p, the real-valued p_t [B, T]."""
        last = (lengths - 1).unsqueeze(1)  # [B, 1]
        if self.mode == "local-m":
            aligned = steps.unsqueeze(0).expand(lengths.size(0), -1)
            if self.reverse:
                aligned = last - aligned
            return torch.minimum(aligned.clamp(min=0), last), None
        p = lengths.unsqueeze(1).to(query.dtype) * torch.sigmoid(self.v_p(torch.tanh(self.W_p(query)))).squeeze(-1)
        centre = torch.minimum(torch.round(p).long(), last)
        return centre, p

    def window_scores(self, query: torch.Tensor, window_keys: torch.Tensor | None) -> torch.Tensor:
        """Scores [B, T, W] of queries [B, T, H] against their gathered window keys [B*T, W, H]."""
        B, T, H = query.shape
        if self.score in ("dot", "general"):
            # [B*T, 1, H] x [B*T, H, W]: this orientation is several times faster on CPU than keys x query.
            return torch.bmm(query.reshape(B * T, 1, H), window_keys.transpose(1, 2)).view(B, T, -1)
        if self.score == "concat":
            hidden = torch.tanh(self.W_q(query).reshape(B * T, 1, H) + window_keys)
            return self.v_a(hidden).view(B, T, -1)
        return self.W_a(query)  # location: one score per window offset

    def context(self, query: torch.Tensor, memory: torch.Tensor, keys: torch.Tensor | None, mask: torch.Tensor,
                steps: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """query [B, T, H], memory [B, S, H], mask [B, S] (True = a real source word), steps [T] the target
        positions of the queries (0 = first target word; local-m needs them).

        Returns c_t [B, T, H] and the attention weights scattered back to source positions [B, T, S].
        """
        if steps is None:
            if self.mode == "local-m":
                raise ValueError("local-m attention needs the target positions of its queries (steps)")
            steps = torch.arange(query.size(1))
        B, T, H = query.shape
        S = memory.size(1)
        lengths = mask.sum(dim=1)
        centre, p = self.centres(query, steps.to(query.device), lengths)
        offsets = torch.arange(-self.window, self.window + 1, device=query.device)
        positions = centre.unsqueeze(-1) + offsets  # [B, T, W]
        inside = (positions >= 0) & (positions < lengths.view(B, 1, 1))
        index = positions.clamp(0, S - 1)
        # Gather whole rows of the flattened [B*S, H] states: a row copy per window slot, nothing of size S.
        # (Advanced indexing copies rows about 3x faster than index_select on CPU.)
        rows = (index + (torch.arange(B, device=query.device) * S).view(B, 1, 1)).view(-1)
        window_memory = memory.reshape(B * S, H)[rows].view(B * T, -1, H)
        window_keys = None
        if keys is not None:
            window_keys = window_memory if keys is memory else keys.reshape(B * S, H)[rows].view(B * T, -1, H)
        scores = self.window_scores(query, window_keys).masked_fill(~inside, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        if p is not None:
            gauss = torch.exp(-((positions.to(query.dtype) - p.unsqueeze(-1)) ** 2) / (2 * self.sigma ** 2))
            weights = weights * gauss
        context = torch.bmm(weights.view(B * T, 1, -1), window_memory).view(B, T, H)
        full = weights.new_zeros(B, T, S).scatter_add_(2, index, weights.masked_fill(~inside, 0.0))
        return context, full
