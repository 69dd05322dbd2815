"""One LSTM step's nonlinearities and their gradients, written out for the fast engine's hand-written backward passes
(nmt.engine.feed_decoder). Gates in nn.LSTM's order (i, f, g, o), so that its parameters are used as they are:
    i, f, o = sigmoid(a_i), sigmoid(a_f), sigmoid(a_o)      g = tanh(a_g)
    c' = f * c + i * g                                      h' = o * tanh(c')
`gates` holds the pre-activations a and is overwritten with the activations (what the backward pass needs).
On a CPU in fp32 each function is one call of a compiled C kernel (nmt.engine.native), else these torch operations."""

from __future__ import annotations

import torch

from . import native

_tanh_backward = torch.ops.aten.tanh_backward
_sigmoid_backward = torch.ops.aten.sigmoid_backward


def cell_forward(
    gates: torch.Tensor,
    c_prev: torch.Tensor,
    *,
    cell_out: torch.Tensor | None = None,
    tanh_out: torch.Tensor | None = None,
    h_out: torch.Tensor | None = None,
    compiled: bool | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """gates [B, 4H] (pre-activations, overwritten with activations), c_prev [B, H] -> (h', c', tanh(c')), written
    into the given buffers when there are. `compiled`: whether the compiled kernel applies, when the caller knows
    (a loop decides once for all its steps)."""
    if compiled if compiled is not None else native.usable(gates, c_prev):
        cell = torch.empty_like(c_prev) if cell_out is None else cell_out
        tanh_c = torch.empty_like(c_prev) if tanh_out is None else tanh_out
        h = torch.empty_like(c_prev) if h_out is None else h_out
        native.lstm_cell_forward(native.library(), gates, c_prev, cell, tanh_c, h)
        return h, cell, tanh_c
    H = c_prev.size(-1)
    gates[:, : 2 * H].sigmoid_()
    gates[:, 2 * H : 3 * H].tanh_()
    gates[:, 3 * H :].sigmoid_()
    cell = torch.addcmul(gates[:, H : 2 * H] * c_prev, gates[:, :H], gates[:, 2 * H : 3 * H], out=cell_out)
    tanh_c = torch.tanh(cell, out=tanh_out)
    h = torch.mul(gates[:, 3 * H :], tanh_c, out=h_out)
    return h, cell, tanh_c


def cell_backward(
    d_h: torch.Tensor,
    d_c: torch.Tensor,
    act: torch.Tensor,
    c_prev: torch.Tensor,
    tanh_c: torch.Tensor,
    d_gates: torch.Tensor,
    scratch: torch.Tensor,
    d_h2: torch.Tensor | None = None,
    mask: torch.Tensor | None = None,
    compiled: bool | None = None,
) -> torch.Tensor:
    """Gradients of one step: d_h (* mask) (+ d_h2) of h' (mask: the dropout mask between h' and the layer above,
    whose gradient d_h is), d_c [B, H] of c' (overwritten), act [B, 4H] the activations cell_forward left, c_prev
    and tanh(c'). Writes d pre-activations into d_gates [B, 4H] (scratch: a [B, 4H] buffer) and returns the gradient
    of c_prev (in d_c's storage)."""
    if compiled is None:
        compiled = native.usable(d_h, d_c, act, c_prev, tanh_c, d_gates, *[x for x in (d_h2, mask) if x is not None])
    if compiled:
        native.lstm_cell_backward(native.library(), d_h, d_h2, d_c, act, c_prev, tanh_c, d_gates, mask)
        return d_c
    if mask is not None:
        d_h = d_h * mask
    if d_h2 is not None:
        d_h = d_h + d_h2
    H = c_prev.size(-1)
    i, f, g, o = act[:, :H], act[:, H : 2 * H], act[:, 2 * H : 3 * H], act[:, 3 * H :]
    dc = d_c.add_(_tanh_backward(d_h * o, tanh_c))
    torch.mul(dc, g, out=scratch[:, :H])
    torch.mul(dc, c_prev, out=scratch[:, H : 2 * H])
    torch.mul(dc, i, out=scratch[:, 2 * H : 3 * H])
    torch.mul(d_h, tanh_c, out=scratch[:, 3 * H :])
    _sigmoid_backward.grad_input(scratch[:, : 2 * H], act[:, : 2 * H], grad_input=d_gates[:, : 2 * H])
    _tanh_backward.grad_input(scratch[:, 2 * H : 3 * H], g, grad_input=d_gates[:, 2 * H : 3 * H])
    _sigmoid_backward.grad_input(scratch[:, 3 * H :], o, grad_input=d_gates[:, 3 * H :])
    return dc.mul_(f)
