"""Local attention of Luong et al. (2015), section 3.2.
Details: docs/internals/models.md."""

from __future__ import annotations

import torch
import torch.nn.functional as F
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

    def centres(
        self, query: torch.Tensor, steps: torch.Tensor, lengths: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Integer window centres [B, T] (encoder positions) and, for local-p, the real-valued p_t [B, T]."""
        last = (lengths - 1).unsqueeze(1)  # [B, 1]
        if self.mode == "local-m":
            aligned = steps.unsqueeze(0).expand(lengths.size(0), -1)
            if self.reverse:
                aligned = last - aligned
            return torch.minimum(aligned.clamp(min=0), last), None
        # v_p^T tanh(x) computed as 2 v_p^T sigmoid(2x) - sum(v_p): the same number, but torch's CPU sigmoid is
        # about 3.5x faster than its tanh, and this [B, T, H] nonlinearity is a tenth of a decoding step's cost.
        energy = 2 * self.v_p(torch.sigmoid(2 * self.W_p(query))).squeeze(-1) - self.v_p.weight.sum()
        p = lengths.unsqueeze(1).to(query.dtype) * torch.sigmoid(energy)
        centre = torch.minimum(torch.round(p).long(), last)
        return centre, p

    def window_scores(self, query: torch.Tensor, keys: torch.Tensor | None, rows: torch.Tensor) -> torch.Tensor:
        """Scores [B, T, W] of queries [B, T, H] against the keys at `rows` [B*T, W] of the flattened keys."""
        B, T, H = query.shape
        if self.score == "location":
            return self.W_a(query)  # one score per window offset: no keys to gather
        if self.score in ("dot", "general"):
            return row_dots(query.reshape(B * T, H), keys, rows).view(B, T, -1)
        window_keys = gather_rows(keys, rows)  # [B*T, W, H]
        hidden = torch.tanh(self.W_q(query).reshape(B * T, 1, H) + window_keys)  # concat
        return self.v_a(hidden).view(B, T, -1)

    def context(
        self,
        query: torch.Tensor,
        memory: torch.Tensor,
        keys: torch.Tensor | None,
        mask: torch.Tensor,
        steps: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
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
        outside = (positions < 0) | (positions >= lengths.view(B, 1, 1))
        index = positions.clamp(0, S - 1)
        rows = window_rows(index, S)  # [B*T, W] rows of the flattened [B*S, H] memory and keys
        scores = self.window_scores(query, keys, rows).masked_fill(outside, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        if p is not None:
            gauss = torch.exp(-((positions.to(query.dtype) - p.unsqueeze(-1)) ** 2) / (2 * self.sigma**2))
            weights = weights * gauss
        context = weighted_rows(memory, rows, weights.view(B * T, -1)).view(B, T, H)
        full = weights.new_zeros(B, T, S).scatter_add_(2, index, weights.masked_fill(outside, 0.0))
        return context, full


# A step reads only the 2D+1 window rows of the encoder states (memory, keys), by their row number in the
# flattened [B*S, H] view; no index of the full [.., W, H] size is built (torch.gather would need one).


def window_rows(index: torch.Tensor, src_len: int) -> torch.Tensor:
    """Rows [B*T, W] of the flattened [B*S, H] states for the window positions `index` [B, T, W] (in 0..S-1)."""
    B = index.size(0)
    return (index + (torch.arange(B, device=index.device) * src_len).view(B, 1, 1)).view(-1, index.size(-1))


def gather_rows(states: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    """The states [B, S, H] at `rows` [N, W] of their flattened view: [N, W, H].

    index_select copies rows about 3x faster than advanced indexing (states[rows]) on CPU (torch 2.13).
    """
    H = states.size(-1)
    return states.reshape(-1, H).index_select(0, rows.view(-1)).view(*rows.shape, H)


def row_dots(query: torch.Tensor, states: torch.Tensor, rows: torch.Tensor, chunk_bytes: int = 1 << 20) -> torch.Tensor:
    """query[n] . (states at row rows[n, w] of their flattened view [B*S, H]): [N, W]."""
    N, W = rows.shape
    H = query.size(-1)
    if torch.is_grad_enabled() or states.device.type != "cpu":
        # [N, 1, H] x [N, H, W]: this orientation is several times faster on CPU than keys x query.
        return torch.bmm(query.unsqueeze(1), gather_rows(states, rows).transpose(1, 2)).view(N, W)
    # Decoding on CPU: gather and multiply about chunk_bytes of rows at a time through one reused buffer, so
    # the copy is read back from cache and no [N, W, H] copy (fresh pages: page faults) is allocated per step.
    # 1-2 MiB measured fastest; smaller chunks pay per-call overhead.
    step = max(1, chunk_bytes // (W * H * query.element_size()))
    flat = states.reshape(-1, H)
    buffer = query.new_empty(min(step, N) * W, H)
    out = query.new_empty(N, 1, W)
    for i in range(0, N, step):
        n = min(step, N - i)
        window = torch.index_select(flat, 0, rows[i : i + n].reshape(-1), out=buffer[: n * W]).view(n, W, H)
        torch.bmm(query[i : i + n].unsqueeze(1), window.transpose(1, 2), out=out[i : i + n])
    return out.view(N, W)


def weighted_rows(states: torch.Tensor, rows: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """sum_w weights[n, w] * states at row rows[n, w] of their flattened view [B*S, H]: [N, H].

    embedding_bag reads the rows in place; copying the window out first and multiplying it (gather + bmm)
    costs several times more on CPU. It is differentiable in both the states and the weights.
    """
    return F.embedding_bag(rows, states.reshape(-1, states.size(-1)), per_sample_weights=weights, mode="sum")
