"""The fast path of RNNsearch's decoder loop (nmt.models.rnnsearch): the GRU state update and the additive attention
of every target step, with a hand-written backward pass in place of autograd's.

Per step i (RNNSearch.decode, engine "plain"): s_i = GRU([E y_{i-1} ; c_{i-1}], s_{i-1}) (from the second step on),
then e_ij = v^T tanh(W s_i + U h_j + b [+ V ehat_i]) (+ training noise), alpha_i = softmax_j(e_i), c_i = sum_j
alpha_ij h_j. As in nmt.models.feed_decoder: the embedding part of the GRU's input projection and its bias are one
product over all steps before the loop, the target foresight term V ehat too; the backward pass walks the steps in
reverse with the formulas written out; the weight gradients (W_ih's context part, W_hh, W, v) and the gradients
of the encoder states and keys are one product each over all steps at the end. The attention noise is drawn for all
steps at once (the plain path draws it step by step: same distribution, another random stream).

nn.GRUCell's formulas, gates (r, z, n):
    r, z = sigmoid(W_ir x + b_ir + W_hr h + b_hr), sigmoid(W_iz x + b_iz + W_hz h + b_hz)
    n    = tanh(W_in x + b_in + r * (W_hn h + b_hn))
    h'   = (1 - z) * n + z * h
"""
from __future__ import annotations

import torch

from .dropout import gaussian_noise

_softmax_backward = torch.ops.aten._softmax_backward_data
_tanh_backward = torch.ops.aten.tanh_backward
_sigmoid_backward = torch.ops.aten.sigmoid_backward


class _Plan:
    def __init__(self, mask: torch.Tensor, noise: torch.Tensor | None, first_update: int):
        self.neg = torch.zeros(mask.shape, dtype=torch.float32, device=mask.device).masked_fill_(~mask, float("-inf"))
        self.noise = noise
        self.first_update = first_update   # 0: a context from an earlier call waits for this call's first word
        self.final = None


def _run(plan: _Plan, pre_emb, W_ic, W_hh, b_hh, h0, ctx0, memory, keys, W, v, fore, save: bool):
    """pre_emb [T, B, 3H]: W_ih's embedding columns times E y_{i-1}, plus b_ih. Returns states [T, B, H], contexts
    [T, B, 2H], weights [T, B, S], and what the backward pass needs when `save`."""
    T, B = pre_emb.shape[:2]
    H = W_hh.size(1)
    neg = plan.neg.to(memory.dtype)
    W_ic_t, W_hh_t, W_t = W_ic.t(), W_hh.t(), W.t()
    hidden, context = h0, ctx0
    states, contexts, weights = [], [], []
    saved = {"h_prev": [], "x": [], "rz": [], "n": [], "ghn": [], "z_att": []}
    for t in range(T):
        if t >= plan.first_update:
            gi = torch.addmm(pre_emb[t], context, W_ic_t)
            gh = torch.addmm(b_hh, hidden, W_hh_t)
            rz = torch.sigmoid(gi[:, :2 * H] + gh[:, :2 * H])
            ghn = gh[:, 2 * H:]
            n = torch.tanh(torch.addcmul(gi[:, 2 * H:], rz[:, :H], ghn))
            if save:
                for key, value in (("h_prev", hidden), ("x", context), ("rz", rz), ("n", n), ("ghn", ghn)):
                    saved[key].append(value)
            hidden = torch.addcmul(n, rz[:, H:], hidden - n)
        pre = torch.mm(hidden, W_t)
        if fore is not None:
            pre = pre + fore[t]
        z_att = torch.tanh(keys + pre.unsqueeze(1))                               # [B, S, A]
        energies = torch.matmul(z_att, v) + neg
        if plan.noise is not None:
            energies = energies + plan.noise[t]
        alpha = torch.softmax(energies, dim=-1)
        context = torch.bmm(alpha.unsqueeze(1), memory).squeeze(1)
        if save:
            saved["z_att"].append(z_att)
        states.append(hidden)
        contexts.append(context)
        weights.append(alpha)
    plan.final = (hidden, context)
    return torch.stack(states), torch.stack(contexts), torch.stack(weights), saved if save else None


class _RNNSearchDecoder(torch.autograd.Function):
    """Inputs: plan, pre_emb, W_ic, W_hh, b_hh, h0, ctx0 (or None), memory, keys, W, v, fore (or None). Outputs:
    states [T, B, H], contexts [T, B, 2H], weights [T, B, S]."""

    @staticmethod
    def forward(ctx, plan, pre_emb, W_ic, W_hh, b_hh, h0, ctx0, memory, keys, W, v, fore):
        states, contexts, weights, saved = _run(plan, pre_emb, W_ic, W_hh, b_hh, h0, ctx0, memory, keys, W, v, fore,
                                                save=True)
        ctx.plan, ctx.saved = plan, saved
        ctx.save_for_backward(W_ic, W_hh, memory, keys, W, v, states, weights)
        ctx.has = (ctx0 is not None, fore is not None)
        return states, contexts, weights

    @staticmethod
    def backward(ctx, d_states, d_contexts, d_weights):
        plan, saved = ctx.plan, ctx.saved
        W_ic, W_hh, memory, keys, W, v, states, weights = ctx.saved_tensors
        T, B, H = states.shape
        d_hidden_next = states.new_zeros(B, H)
        d_ctx_next = memory.new_zeros(B, memory.size(-1))
        d_keys = torch.zeros_like(keys)
        D_CTX, D_E, D_PRE, D_GI, D_GH = [], [], [], [], []
        for t in range(T - 1, -1, -1):
            d_ctx = d_ctx_next if d_contexts is None else d_contexts[t] + d_ctx_next
            alpha = weights[t]
            d_alpha = torch.bmm(memory, d_ctx.unsqueeze(2)).squeeze(2)
            if d_weights is not None:
                d_alpha = d_alpha + d_weights[t]
            d_e = _softmax_backward(d_alpha, alpha, -1, alpha.dtype)
            d_z = _tanh_backward(d_e.unsqueeze(2) * v, saved["z_att"][t])
            d_keys += d_z
            d_pre = d_z.sum(dim=1)
            d_hidden = torch.addmm(d_hidden_next, d_pre, W)
            if d_states is not None:
                d_hidden = d_hidden + d_states[t]
            D_CTX.append(d_ctx)
            D_E.append(d_e)
            D_PRE.append(d_pre)
            if t >= plan.first_update:
                u = t - plan.first_update
                h_prev, rz, n, ghn = saved["h_prev"][u], saved["rz"][u], saved["n"][u], saved["ghn"][u]
                r, z = rz[:, :H], rz[:, H:]
                d_gin = _tanh_backward(d_hidden - d_hidden * z, n)         # d (gi_n + r * gh_n)
                d_rz = _sigmoid_backward(torch.cat([d_gin * ghn, d_hidden * (h_prev - n)], dim=1), rz)
                d_gi = torch.cat([d_rz, d_gin], dim=1)
                d_gh = torch.cat([d_rz, d_gin * r], dim=1)
                D_GI.append(d_gi)
                D_GH.append(d_gh)
                d_hidden_next = torch.addmm(d_hidden * z, d_gh, W_hh)
                d_ctx_next = torch.mm(d_gi, W_ic)
            else:
                d_hidden_next = d_hidden
                d_ctx_next = None
        D_CTX, D_E, D_PRE = (torch.stack(x[::-1]) for x in (D_CTX, D_E, D_PRE))
        d_memory = torch.bmm(weights.permute(1, 2, 0), D_CTX.transpose(0, 1))
        flat = lambda x: x.reshape(-1, x.size(-1))  # noqa: E731
        d_W = torch.mm(flat(D_PRE).t(), flat(states))
        d_v = torch.einsum("tbs,tbsa->a", D_E, torch.stack(saved["z_att"])).view_as(v)
        d_pre_emb = states.new_zeros(T, B, 3 * H)
        d_W_ic = torch.zeros_like(W_ic)
        d_W_hh = torch.zeros_like(W_hh)
        d_b_hh = W_hh.new_zeros(3 * H)
        if D_GI:
            D_GI, D_GH = torch.stack(D_GI[::-1]), torch.stack(D_GH[::-1])
            d_pre_emb[plan.first_update:] = D_GI
            d_W_ic = torch.mm(flat(D_GI).t(), flat(torch.stack(saved["x"])))
            d_W_hh = torch.mm(flat(D_GH).t(), flat(torch.stack(saved["h_prev"])))
            d_b_hh = D_GH.sum(dim=(0, 1))
        has_ctx0, has_fore = ctx.has
        return (None, d_pre_emb, d_W_ic, d_W_hh, d_b_hh, d_hidden_next, d_ctx_next if has_ctx0 else None,
                d_memory, d_keys, d_W, d_v, D_PRE if has_fore else None)


def run_rnnsearch_decoder(model, emb: torch.Tensor, memory: torch.Tensor, keys: torch.Tensor, mask: torch.Tensor,
                          hidden: torch.Tensor, context: torch.Tensor | None, foresight: torch.Tensor | None):
    """RNNSearch's decoder over target embeddings emb [B, T, E] (after dropout): the states s_i [B, T, H], contexts
    c_i [B, T, 2H] and weights alpha_i [B, T, S] of every step, and the final (s, c). `foresight` [B, T, A] is
    V ehat_i for a target foresight model."""
    cell, attention = model.decoder, model.attention
    T, B, E = emb.size(1), emb.size(0), emb.size(2)
    pre_emb = torch.addmm(cell.bias_ih, emb.transpose(0, 1).reshape(T * B, E),
                          cell.weight_ih[:, :E].t()).view(T, B, -1)
    noise = None
    if attention.training and attention.noise > 0:
        noise = gaussian_noise((T, B, memory.size(1)), attention.noise, memory.device, memory.dtype)
    plan = _Plan(mask, noise, 0 if context is not None else 1)
    fore = None if foresight is None else foresight.transpose(0, 1)
    args = (pre_emb, cell.weight_ih[:, E:], cell.weight_hh, cell.bias_hh, hidden, context, memory, keys,
            attention.W.weight, attention.v.weight.view(-1), fore)
    if torch.is_grad_enabled() and any(p.requires_grad for p in model.parameters()):
        states, contexts, weights = _RNNSearchDecoder.apply(plan, *args)
    else:
        states, contexts, weights, _ = _run(plan, *args, save=False)
    return states.transpose(0, 1), contexts.transpose(0, 1), weights.transpose(0, 1), plan.final
