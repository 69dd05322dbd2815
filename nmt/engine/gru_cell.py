"""One GRU step's gates and their gradients for the fast engine's hand-written backward passes (nmt.engine.gru_decoder,
nmt.engine.fast_gru), in nn.GRU's formulas and gate order (r, z, n), so that its parameters are used as they are:
    r = sigmoid(gi_r + gh_r)    z = sigmoid(gi_z + gh_z)    n = tanh(gi_n + r * gh_n)    h' = n + z * (h - n)
gi and gh are the input and hidden products with their biases [B, 3H]; gi is overwritten with (r, z, n), which the
backward pass reads with gh's n part. On a CPU in fp32 each function is one call of a compiled C kernel
(nmt.engine.native), else these torch operations."""

from __future__ import annotations

import torch

from . import native

_tanh_backward = torch.ops.aten.tanh_backward
_sigmoid_backward = torch.ops.aten.sigmoid_backward


def gru_forward(
    gi: torch.Tensor, gh: torch.Tensor, h_prev: torch.Tensor, h_out: torch.Tensor | None = None
) -> torch.Tensor:
    """h' [B, H] (into h_out when given); gi becomes the activations (r, z, n)."""
    if h_out is None:
        h_out = torch.empty_like(h_prev)
    if native.usable(gi, gh, h_prev, h_out):
        native.gru_cell_forward(native.library(), gi, gh, h_prev, h_out)
        return h_out
    H = h_prev.size(-1)
    rz = gi[:, : 2 * H].add_(gh[:, : 2 * H]).sigmoid_()
    n = gi[:, 2 * H :].addcmul_(rz[:, :H], gh[:, 2 * H :]).tanh_()
    return torch.addcmul(n, rz[:, H:], h_prev - n, out=h_out)


def gru_backward(
    d_h: torch.Tensor,
    act: torch.Tensor,
    gh: torch.Tensor,
    h_prev: torch.Tensor,
    d_gi: torch.Tensor,
    d_gh: torch.Tensor,
    d_h2: torch.Tensor | None = None,
) -> torch.Tensor:
    """Gradients of one step from d h' = d_h (+ d_h2): writes d gi and d gh [B, 3H]; returns the direct part of d h_prev
    (d h' * z; the caller adds d_gh @ W_hh)."""
    if native.usable(d_h, act, gh, h_prev, d_gi, d_gh) and (d_h2 is None or native.usable(d_h2)):
        d_hprev = torch.empty_like(h_prev)
        native.gru_cell_backward(native.library(), d_h, d_h2, act, gh, h_prev, d_gi, d_gh, d_hprev)
        return d_hprev
    if d_h2 is not None:
        d_h = d_h + d_h2
    H = h_prev.size(-1)
    r, z, n = act[:, :H], act[:, H : 2 * H], act[:, 2 * H :]
    d_n = _tanh_backward(d_h - d_h * z, n)  # d (gi_n + r gh_n)
    d_rz = _sigmoid_backward(torch.cat([d_n * gh[:, 2 * H :], d_h * (h_prev - n)], dim=1), act[:, : 2 * H])
    d_gi[:, : 2 * H] = d_rz
    d_gi[:, 2 * H :] = d_n
    d_gh[:, : 2 * H] = d_rz
    torch.mul(d_n, r, out=d_gh[:, 2 * H :])
    return d_h * z
