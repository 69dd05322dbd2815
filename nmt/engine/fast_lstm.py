"""A stacked unidirectional LSTM over padded sequences with a hand-written backward pass: the fast engine's encoder
(and the decoder of models without input feeding) on a CPU, computing exactly what nn.LSTM computes on a packed
sequence.
Details: docs/internals/engine.md."""

from __future__ import annotations

import torch
from torch import nn

from ..models.dropout import mask_like
from . import native
from .decoding_cache import cached
from .lstm_cell import cell_backward, cell_forward


def _layer_forward(
    x: torch.Tensor,
    W_ih: torch.Tensor,
    W_hh_t: torch.Tensor,
    bias: torch.Tensor,
    active: list[slice | None],
    h0: torch.Tensor | None,
    c0: torch.Tensor | None,
    save: bool,
):
    """One layer over x [S, B, in] (time-major). active[t]: the rows computed at step t (None: all). Returns the outputs
    [S, B, H] (0 at padded positions), the states h [S + 1, B, H] and cells [S + 1, B, H] (index 0: the initial ones;
    S: each row's final one), and with `save` (gates [S, B, 4H] after their nonlinearities, tanh(cell) [S, B, H])."""
    S, B = x.shape[:2]
    H = W_hh_t.size(0)
    acts = torch.addmm(bias, x.reshape(S * B, -1), W_ih.t()).view(S, B, 4 * H)
    states = x.new_empty(S + 1, B, H)  # every row of every step is written below
    cells = x.new_empty(S + 1, B, H)
    if h0 is None:
        states[0], cells[0] = 0.0, 0.0
    else:
        states[0], cells[0] = h0, c0
    tanhs = x.new_empty(S, B, H) if save else None
    if native.loops_usable(acts, W_hh_t, states):
        native.lstm_layer_forward(native.library(), acts, W_hh_t, states, cells, tanhs, *native.step_rows(active, B))
    else:
        _step_loop(acts, W_hh_t, states, cells, tanhs, active)
    out = states[1:]
    if any(rows is not None for rows in active):  # rows past their sentence's end output 0
        valid = torch.zeros(S, B, 1, dtype=x.dtype, device=x.device)
        for t, rows in enumerate(active):
            valid[t, rows if rows is not None else slice(None)] = 1.0
        out = out * valid
    return out, states, cells, (acts, tanhs) if save else None


def _step_loop(acts, W_hh_t, states, cells, tanhs, active) -> None:
    """_layer_forward's steps, one torch product and cell kernel each (where the compiled loop is not available)."""
    S, B = acts.shape[:2]
    act_t, state_t, cell_t = acts.unbind(0), states.unbind(0), cells.unbind(0)
    tanh_t = tanhs.unbind(0) if tanhs is not None else [None] * S
    for t in range(S):
        rows = active[t]
        if rows is None:
            cell_forward(
                act_t[t].addmm_(state_t[t], W_hh_t),
                cell_t[t],
                cell_out=cell_t[t + 1],
                tanh_out=tanh_t[t],
                h_out=state_t[t + 1],
            )
            continue
        cell_forward(
            act_t[t][rows].addmm_(state_t[t][rows], W_hh_t),
            cell_t[t][rows],
            cell_out=cell_t[t + 1][rows],
            tanh_out=None if tanh_t[t] is None else tanh_t[t][rows],
            h_out=state_t[t + 1][rows],
        )
        for kept in complement_rows(rows, B):  # ended rows keep their state
            state_t[t + 1][kept] = state_t[t][kept]
            cell_t[t + 1][kept] = cell_t[t][kept]


def _backward_steps(d_out, mask, d_h, d_c, acts, cells, tanhs, d_gates, W_hh, active) -> None:
    """_FastLSTM.backward's steps for one layer, one cell kernel and torch product each (where the compiled loop is not
    available): d_h, d_c [B, H] from the final step's gradients to the initial ones; d_gates filled in."""
    S, B, H = tanhs.shape
    scratch = d_h.new_empty(B, 4 * H)
    act_t, cell_t, tanh_t, dg_t = acts.unbind(0), cells.unbind(0), tanhs.unbind(0), d_gates.unbind(0)
    out_t = d_out.unbind(0)
    mask_t = mask.unbind(0) if mask is not None else [None] * S
    for t in range(S - 1, -1, -1):
        rows = active[t]
        if rows is None:
            cell_backward(out_t[t], d_c, act_t[t], cell_t[t], tanh_t[t], dg_t[t], scratch, d_h2=d_h, mask=mask_t[t])
            torch.mm(dg_t[t], W_hh, out=d_h)
            continue
        dg, dc = dg_t[t][rows], d_c[rows]
        result = cell_backward(
            out_t[t][rows],
            dc,
            act_t[t][rows],
            cell_t[t][rows],
            tanh_t[t][rows],
            dg,
            scratch[rows],
            d_h2=d_h[rows],
            mask=None if mask_t[t] is None else mask_t[t][rows],
        )
        if result is not dc:
            dc.copy_(result)
        torch.mm(dg, W_hh, out=d_h[rows])


def complement_rows(rows: slice, size: int) -> list[slice]:
    return [part for part in (slice(0, rows.start), slice(rows.stop, size)) if part.stop > part.start]


class _FastLSTM(torch.autograd.Function):
    """Inputs: active (the rows computed at each step), dropout masks between layers (or None), x [S, B, E], the
    initial states h0, c0 [L, B, H] (or None: zeros), then per layer W_ih [4H, in], W_hh [4H, H] and the summed bias
    [4H]. Outputs: out [S, B, H], h_n [L, B, H], c_n [L, B, H]."""

    @staticmethod
    def forward(ctx, active, masks, x, h0, c0, *weights):
        L = len(weights) // 3
        saved, inputs = [], []
        layer_in = x
        finals_h, finals_c = [], []
        for layer in range(L):
            W_ih, W_hh, bias = weights[3 * layer : 3 * layer + 3]
            out, states, cells, (acts, tanhs) = _layer_forward(
                layer_in,
                W_ih,
                W_hh.t().contiguous(),
                bias,
                active,
                None if h0 is None else h0[layer],
                None if c0 is None else c0[layer],
                save=True,
            )
            inputs.append(layer_in)
            saved.append((acts, states, cells, tanhs))
            finals_h.append(states[-1])
            finals_c.append(cells[-1])
            layer_in = out if masks is None or layer == L - 1 else out * masks[layer]
        ctx.active, ctx.masks, ctx.saved, ctx.inputs = active, masks, saved, inputs
        ctx.set_materialize_grads(False)  # final states the loss does not reach get None, not zeros
        ctx.initial = h0 is not None
        ctx.save_for_backward(*weights)
        return out, torch.stack(finals_h), torch.stack(finals_c)

    @staticmethod
    def backward(ctx, d_out, d_h_n, d_c_n):
        weights = ctx.saved_tensors
        L = len(weights) // 3
        active, masks = ctx.active, ctx.masks
        B = ctx.inputs[0].size(1)
        padded = any(rows is not None for rows in active)
        grads: list[torch.Tensor] = [None] * len(weights)
        d_h0, d_c0 = [None] * L, [None] * L
        d_layer_out = d_out
        for layer in range(L - 1, -1, -1):
            W_ih, W_hh, _ = weights[3 * layer : 3 * layer + 3]
            acts, states, cells, tanhs = ctx.saved[layer]
            x = ctx.inputs[layer]
            S, _, H = tanhs.shape
            if d_layer_out is None:
                d_layer_out = x.new_zeros(S, B, H)
            d_layer_out = d_layer_out.contiguous()  # (a gradient may come expanded: the fused kernel wants rows)
            mask = masks[layer] if masks is not None and layer < L - 1 else None
            d_h = torch.zeros_like(states[0]) if d_h_n is None else d_h_n[layer].clone()
            d_c = torch.zeros_like(states[0]) if d_c_n is None else d_c_n[layer].clone()
            # rows outside their sentence get no gradient at a step: zeros there (and only there matter)
            d_gates = x.new_zeros(S, B, 4 * H) if padded else x.new_empty(S, B, 4 * H)
            steps = (d_layer_out, mask, d_h, d_c, acts, cells, tanhs, d_gates, W_hh.contiguous())
            if native.loops_usable(*steps[:1], *steps[2:]):
                native.lstm_layer_backward(native.library(), *steps, *native.step_rows(active, B))
            else:
                _backward_steps(*steps, active)
            flat_dg = d_gates.view(S * B, 4 * H)
            d_h0[layer], d_c0[layer] = d_h, d_c
            grads[3 * layer] = torch.mm(flat_dg.t(), x.reshape(S * B, -1))
            grads[3 * layer + 1] = torch.mm(flat_dg.t(), states[:-1].reshape(S * B, H))
            grads[3 * layer + 2] = flat_dg.sum(dim=0)
            d_layer_out = torch.mm(flat_dg, W_ih).view(S, B, -1)
        initial = (torch.stack(d_h0), torch.stack(d_c0)) if ctx.initial else (None, None)
        return (None, None, d_layer_out, *initial, *grads)


def lstm_weights(lstm: nn.LSTM) -> list[torch.Tensor]:
    """Per layer: W_ih, W_hh and the summed bias (differentiably)."""
    out = []
    for layer in range(lstm.num_layers):
        out += [
            getattr(lstm, f"weight_ih_l{layer}"),
            getattr(lstm, f"weight_hh_l{layer}"),
            getattr(lstm, f"bias_ih_l{layer}") + getattr(lstm, f"bias_hh_l{layer}"),
        ]
    return out


def step_schedule(lengths: list[int], steps: int) -> tuple[list[slice | None], list[int] | None]:
    """The rows computed at each step (None: all), and the order to sort the batch in first (None: as it is). Lengths
    that do not decrease give suffixes, lengths that do not increase prefixes; others are sorted longest first."""
    B = len(lengths)

    def rows(n: int, suffix: bool) -> slice | None:
        return None if n == B else slice(B - n, B) if suffix else slice(0, n)

    if all(a <= b for a, b in zip(lengths, lengths[1:])):
        return [rows(sum(1 for n in lengths if n > t), True) for t in range(steps)], None
    order = None
    if not all(a >= b for a, b in zip(lengths, lengths[1:])):
        order = sorted(range(B), key=lambda i: -lengths[i])
        lengths = [lengths[i] for i in order]
    return [rows(sum(1 for n in lengths if n > t), False) for t in range(steps)], order


def run_lstm(
    lstm: nn.LSTM,
    x: torch.Tensor,
    lengths: torch.Tensor | None = None,
    hidden: tuple[torch.Tensor, torch.Tensor] | None = None,
) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
    """With `lengths`: what `lstm(pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False))`
    followed by pad_packed_sequence(..., total_length=x.size(1)) gives: outputs [B, S, H] (0 past each sentence's
    end) and the final (h, c) [L, B, H] of each sentence. Without: lstm(x, hidden) over all S steps. `hidden`: the
    initial (h, c) [L, B, H] (default zeros)."""
    if lstm.bidirectional or not lstm.batch_first or lstm.proj_size:
        raise ValueError("run_lstm supports unidirectional batch-first LSTMs without projections")
    B, S = x.shape[:2]
    if lengths is None:
        active, order = [None] * S, None
    else:
        active, order = step_schedule(lengths.tolist(), S)
    h0, c0 = hidden if hidden is not None else (None, None)
    inverse = None
    if order is not None:
        order_t = torch.tensor(order, device=x.device)
        inverse = torch.empty_like(order_t)
        inverse[order_t] = torch.arange(B, device=x.device)
        x = x.index_select(0, order_t)
        if hidden is not None:
            h0, c0 = (state.index_select(1, order_t) for state in hidden)
    x_t = x.transpose(0, 1)  # [S, B, E]
    L, H = lstm.num_layers, lstm.hidden_size
    masks = None
    if lstm.training and L > 1 and lstm.dropout > 0:
        masks = mask_like((L - 1, S, B, H), lstm.dropout, x.device, x.dtype)
    weights = lstm_weights(lstm)
    if torch.is_grad_enabled() and (x.requires_grad or any(w.requires_grad for w in weights)):
        out, h_n, c_n = _FastLSTM.apply(active, masks, x_t.contiguous(), h0, c0, *weights)
    else:
        # a decoding step runs the decoder LSTM for one step: W_hh's transposes are made once per decoding
        transposed = cached(lstm, "fast_lstm_weights", lambda: [w.t().contiguous() for w in weights[1::3]])
        layer_in, finals_h, finals_c = x_t, [], []
        for layer in range(L):
            W_ih, _, bias = weights[3 * layer : 3 * layer + 3]
            out, states, cells, _ = _layer_forward(
                layer_in,
                W_ih,
                transposed[layer],
                bias,
                active,
                None if h0 is None else h0[layer],
                None if c0 is None else c0[layer],
                save=False,
            )
            finals_h.append(states[-1])
            finals_c.append(cells[-1])
            layer_in = out if masks is None or layer == L - 1 else out * masks[layer]
        h_n, c_n = torch.stack(finals_h), torch.stack(finals_c)
    out = out.transpose(0, 1)
    if inverse is None:
        return out, (h_n, c_n)
    return out.index_select(0, inverse), (h_n.index_select(1, inverse), c_n.index_select(1, inverse))
