"""RNNsearch's bidirectional GRU encoder with a hand-written backward pass: the fast engine's encoder on a CPU,
computing exactly what nn.GRU(bidirectional=True) computes on a packed sequence.
Details: docs/internals/engine.md."""

from __future__ import annotations

import torch
from torch import nn

from .fast_lstm import complement_rows, step_schedule
from .gru_cell import gru_backward, gru_forward


def _gru_forward(x, W_ih, W_hh_t, b_ih, b_hh, active, save: bool):
    """One direction over x [S, B, E] (time-major): states [S + 1, B, H] (0 first), and with `save` the gate
    activations and hidden products [S, B, 3H]."""
    S, B = x.shape[:2]
    H = W_hh_t.size(0)
    GI = torch.addmm(b_ih, x.reshape(S * B, -1), W_ih.t()).view(S, B, 3 * H)
    GH = x.new_empty(S, B, 3 * H)
    states = x.new_empty(S + 1, B, H)
    states[0] = 0.0
    gi_t, gh_t, h_t = GI.unbind(0), GH.unbind(0), states.unbind(0)
    for t in range(S):
        rows = active[t]
        if rows is None:
            gru_forward(gi_t[t], torch.addmm(b_hh, h_t[t], W_hh_t, out=gh_t[t]), h_t[t], h_t[t + 1])
            continue
        gh = torch.addmm(b_hh, h_t[t][rows], W_hh_t, out=gh_t[t][rows])
        gru_forward(gi_t[t][rows], gh, h_t[t][rows], h_t[t + 1][rows])
        for kept in complement_rows(rows, B):
            h_t[t + 1][kept] = h_t[t][kept]
    return states, (GI, GH) if save else None


class _FastGRU(torch.autograd.Function):
    """One direction: inputs active, x [S, B, E], W_ih [3H, E], W_hh [3H, H], b_ih, b_hh; output: the states of every
    step [S, B, H] (each row's last state carried past its end; the caller zeroes the padded positions)."""

    @staticmethod
    def forward(ctx, active, x, W_ih, W_hh, b_ih, b_hh):
        states, saved = _gru_forward(x, W_ih, W_hh.t().contiguous(), b_ih, b_hh, active, save=True)
        ctx.active, ctx.saved = active, saved
        ctx.save_for_backward(x, W_ih, W_hh, states)
        return states[1:]

    @staticmethod
    def backward(ctx, d_out):
        x, W_ih, W_hh, states = ctx.saved_tensors
        GI, GH = ctx.saved
        active = ctx.active
        S, B, H = d_out.shape
        d_out = d_out.contiguous()
        d_h = d_out.new_zeros(B, H)
        D_GI = d_out.new_zeros(S, B, 3 * H)
        D_GH = d_out.new_zeros(S, B, 3 * H)
        gi_t, gh_t, h_t, out_t = GI.unbind(0), GH.unbind(0), states.unbind(0), d_out.unbind(0)
        dgi_t, dgh_t = D_GI.unbind(0), D_GH.unbind(0)
        for t in range(S - 1, -1, -1):
            rows = active[t]
            if rows is None:
                d_h = gru_backward(out_t[t], gi_t[t], gh_t[t], h_t[t], dgi_t[t], dgh_t[t], d_h2=d_h)
                d_h.addmm_(dgh_t[t], W_hh)
                continue
            d_prev = gru_backward(
                out_t[t][rows],
                gi_t[t][rows],
                gh_t[t][rows],
                h_t[t][rows],
                dgi_t[t][rows],
                dgh_t[t][rows],
                d_h2=d_h[rows],
            )
            d_h[rows] = d_prev.addmm_(dgh_t[t][rows], W_hh)

        def flat(v):
            return v.reshape(-1, v.size(-1))

        return (
            None,
            torch.mm(flat(D_GI), W_ih).view_as(x),
            torch.mm(flat(D_GI).t(), flat(x)),
            torch.mm(flat(D_GH).t(), flat(states[:-1])),
            D_GI.sum(dim=(0, 1)),
            D_GH.sum(dim=(0, 1)),
        )


def reverse_within(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """x [B, S, ...] with each row's first `length` positions reversed, the padding left in place."""
    positions = torch.arange(x.size(1), device=x.device).unsqueeze(0)
    lengths = lengths.to(x.device).unsqueeze(1)
    index = torch.where(positions < lengths, lengths - 1 - positions, positions)
    return x.gather(1, index.view(*index.shape, *([1] * (x.dim() - 2))).expand_as(x))


def run_bidirectional_gru(gru: nn.GRU, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """What nn.GRU(bidirectional=True, batch_first=True) gives on pack_padded_sequence(x, lengths), padded back:
    [B, S, 2H], 0 past each sentence's end."""
    if not gru.bidirectional or gru.num_layers != 1 or not gru.batch_first:
        raise ValueError("run_bidirectional_gru supports one bidirectional batch-first layer")
    B, S = x.shape[:2]
    active, order = step_schedule(lengths.tolist(), S)
    if order is not None:  # not sorted: sort, then put back
        order_t = torch.tensor(order, device=x.device)
        inverse = torch.empty_like(order_t)
        inverse[order_t] = torch.arange(B, device=x.device)
        return run_bidirectional_gru(gru, x.index_select(0, order_t), lengths[order_t]).index_select(0, inverse)
    valid = (torch.arange(S, device=x.device).unsqueeze(0) < lengths.to(x.device).unsqueeze(1)).unsqueeze(2)
    valid = valid.to(x.dtype)
    outputs = []
    for suffix, reverse in (("", False), ("_reverse", True)):
        weights = [getattr(gru, f"{name}_l0{suffix}") for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
        inputs = reverse_within(x, lengths) if reverse else x
        if torch.is_grad_enabled() and (x.requires_grad or any(w.requires_grad for w in weights)):
            states = _FastGRU.apply(active, inputs.transpose(0, 1).contiguous(), *weights)
        else:
            W_ih, W_hh, b_ih, b_hh = weights
            states = _gru_forward(
                inputs.transpose(0, 1).contiguous(), W_ih, W_hh.t().contiguous(), b_ih, b_hh, active, save=False
            )[0][1:]
        out = states.transpose(0, 1) * valid
        outputs.append(reverse_within(out, lengths) if reverse else out)
    return torch.cat(outputs, dim=-1)
