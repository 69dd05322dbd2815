"""The fast path of RNNsearch's decoder loop (nmt.models.rnnsearch): the GRU state update and the additive attention
of every target step, with a hand-written backward pass in place of autograd's.
Details: docs/internals/engine.md."""

from __future__ import annotations

import torch

from ..models.dropout import gaussian_noise
from . import native
from .decoding_cache import cached
from .fp32_region import fp32_region
from .gru_cell import gru_backward, gru_forward

_softmax_backward = torch.ops.aten._softmax_backward_data
_tanh_backward = torch.ops.aten.tanh_backward


class _Plan:
    def __init__(self, mask: torch.Tensor, noise: torch.Tensor | None, first_update: int):
        self.neg = torch.zeros(mask.shape, dtype=torch.float32, device=mask.device).masked_fill_(~mask, float("-inf"))
        self.present = mask.float()
        self.noise = noise
        self.first_update = first_update  # 0: a context from an earlier call waits for this call's first word
        self.final = None


def transposed_weights(W_ic, W_hh, W) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The right-hand sides of the loop's products, transposed and contiguous (faster products than on views)."""
    return W_ic.t().contiguous(), W_hh.t().contiguous(), W.t().contiguous()


def _run(
    plan: _Plan,
    pre_emb,
    W_ic,
    W_hh,
    b_hh,
    h0,
    ctx0,
    memory,
    keys,
    W,
    v,
    fore,
    save: bool,
    transposed: tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None = None,
):
    """pre_emb [T, B, 3H]: W_ih's embedding columns times E y_{i-1}, plus b_ih. Returns states [T, B, H], contexts
    [T, B, 2H], weights [T, B, S], and what the backward pass needs when `save`. The state update of step t reads the
    context of step t - 1 (CTX[t - 1]; ctx0 before the first step) and the state of step t - 1."""
    T, B = pre_emb.shape[:2]
    H = W_hh.size(1)
    neg = plan.neg.to(memory.dtype)
    W_ic_t, W_hh_t, W_t = transposed or transposed_weights(W_ic, W_hh, W)
    states = pre_emb.new_empty(T, B, H)
    contexts = memory.new_empty(T, B, memory.size(-1))
    weights = memory.new_empty(T, B, memory.size(1))
    GI = pre_emb.clone()  # becomes each step's gate activations (r, z, n)
    GH = pre_emb.new_empty(T, B, 3 * H)
    Z = [] if save else None  # per step: z [B, S, A], or with the compiled kernels the query pre [B, A]
    noise = plan.noise
    fused = native.usable(keys, memory, pre_emb)
    if fused:
        lib, present = native.library(), plan.present.to(memory.dtype)
        keys, memory, v = keys.contiguous(), memory.contiguous(), v.contiguous()
    hidden, context = h0, ctx0
    for t in range(T):
        if t >= plan.first_update:
            gi = GI[t].addmm_(context, W_ic_t)
            gh = torch.addmm(b_hh, hidden, W_hh_t, out=GH[t])
            hidden = gru_forward(gi, gh, hidden, states[t])
        else:
            states[t] = hidden
        pre = torch.mm(hidden, W_t) if fore is None else torch.addmm(fore[t], hidden, W_t)
        if fused:  # one pass (kernels.c) for what the next four lines do; the backward pass recomputes z from pre
            weights[t], contexts[t] = native.additive_attention_forward(
                lib, keys, pre, v, present, None if noise is None else noise[t], memory
            )
            context = contexts[t]
            z_att = pre
        else:
            z_att = torch.tanh(keys + pre.unsqueeze(1))  # [B, S, A]
            energies = torch.matmul(z_att, v) + (neg if noise is None else neg + noise[t])
            weights[t] = torch.softmax(energies, dim=-1)
            context = torch.bmm(weights[t].unsqueeze(1), memory, out=contexts[t].unsqueeze(1)).squeeze(1)
        if save:
            Z.append(z_att)
    plan.final = (hidden, context)
    return states, contexts, weights, (GI, GH, Z) if save else None


class _RNNSearchDecoder(torch.autograd.Function):
    """Inputs: plan, pre_emb, W_ic, W_hh, b_hh, h0, ctx0 (or None), memory, keys, W, v, fore (or None). Outputs:
    states [T, B, H], contexts [T, B, 2H], weights [T, B, S]."""

    @staticmethod
    def forward(ctx, plan, pre_emb, W_ic, W_hh, b_hh, h0, ctx0, memory, keys, W, v, fore):
        states, contexts, weights, saved = _run(
            plan, pre_emb, W_ic, W_hh, b_hh, h0, ctx0, memory, keys, W, v, fore, save=True
        )
        # not the plan itself: its `final` holds views of `states` and `contexts`, outputs whose grad_fn is this
        # node, and a tensor on ctx outside save_for_backward is a reference cycle through C++ that no garbage
        # collection frees: every update's graph (GI, GH, Z, the outputs) stayed alive, 0.6 GB a demo epoch
        ctx.first_update, ctx.saved = plan.first_update, saved
        ctx.set_materialize_grads(False)  # unused outputs (the weights, the contexts) get None, not zeros
        ctx.save_for_backward(W_ic, W_hh, memory, keys, W, v, h0, states, contexts, weights)
        ctx.has = (ctx0 is not None, fore is not None)
        ctx.ctx0 = ctx0
        return states, contexts, weights

    @staticmethod
    def backward(ctx, d_states, d_contexts, d_weights):
        GI, GH, Z = ctx.saved
        W_ic, W_hh, memory, keys, W, v, h0, states, contexts, weights = ctx.saved_tensors
        T, B, H = states.shape
        fused = native.usable(keys, memory, states)
        if fused:
            lib, memory, keys = native.library(), memory.contiguous(), keys.contiguous()
        else:
            memory_t = memory.transpose(1, 2).contiguous()
        d_hidden_next = states.new_zeros(B, H)
        d_ctx_next = None
        d_keys = torch.zeros_like(keys)
        d_v = torch.zeros_like(v)
        D_CTX = memory.new_empty(T, B, memory.size(-1))
        D_PRE = states.new_empty(T, B, W.size(0))
        D_GI = states.new_zeros(T, B, 3 * H)
        D_GH = states.new_zeros(T, B, 3 * H)
        for t in range(T - 1, -1, -1):
            d_ctx = D_CTX[t]
            if d_contexts is None:
                d_ctx.copy_(d_ctx_next) if d_ctx_next is not None else d_ctx.zero_()
            elif d_ctx_next is None:
                d_ctx.copy_(d_contexts[t])
            else:
                torch.add(d_contexts[t], d_ctx_next, out=d_ctx)
            alpha, z_att = weights[t], Z[t]
            if fused:  # Z[t] is the step's query
                D_PRE[t], _ = native.additive_attention_backward(
                    lib,
                    d_ctx,
                    None if d_weights is None else d_weights[t].contiguous(),
                    memory,
                    alpha,
                    keys,
                    z_att,
                    v,
                    d_keys,
                    d_v,
                )
                d_pre = D_PRE[t]
            else:
                d_alpha = torch.bmm(d_ctx.unsqueeze(1), memory_t).squeeze(1)
                if d_weights is not None:
                    d_alpha = d_alpha + d_weights[t]
                d_e = _softmax_backward(d_alpha, alpha, -1, alpha.dtype)
                d_v.addmv_(z_att.reshape(-1, z_att.size(-1)).t(), d_e.reshape(-1))
                d_z = _tanh_backward(d_e.unsqueeze(2) * v, z_att)
                d_keys += d_z
                d_pre = torch.sum(d_z, dim=1, out=D_PRE[t])
            d_hidden = torch.addmm(d_hidden_next, d_pre, W)
            if d_states is not None:
                d_hidden += d_states[t]
            if t >= ctx.first_update:
                h_prev = states[t - 1] if t > 0 else h0
                d_hprev = gru_backward(d_hidden, GI[t], GH[t], h_prev, D_GI[t], D_GH[t])
                d_hidden_next = d_hprev.addmm_(D_GH[t], W_hh)
                d_ctx_next = torch.mm(D_GI[t], W_ic)
            else:
                d_hidden_next = d_hidden
                d_ctx_next = None

        def flat(x):
            return x.reshape(-1, x.size(-1))

        d_memory = torch.bmm(weights.permute(1, 2, 0), D_CTX.transpose(0, 1))
        d_W = torch.mm(flat(D_PRE).t(), flat(states))
        # the update of step t read the state and context of step t - 1 (h0 and ctx0 before the first step); without
        # ctx0 the first step makes no update (first = 1)
        first = ctx.first_update
        previous_states = torch.cat([h0.unsqueeze(0), states[:-1]])
        previous_contexts = contexts[:-1] if ctx.ctx0 is None else torch.cat([ctx.ctx0.unsqueeze(0), contexts[:-1]])
        d_W_ic = torch.mm(flat(D_GI[first:]).t(), flat(previous_contexts))
        d_W_hh = torch.mm(flat(D_GH[first:]).t(), flat(previous_states[first:]))
        d_b_hh = D_GH.sum(dim=(0, 1))
        has_ctx0, has_fore = ctx.has
        return (
            None,
            D_GI,
            d_W_ic,
            d_W_hh,
            d_b_hh,
            d_hidden_next,
            d_ctx_next if has_ctx0 else None,
            d_memory,
            d_keys,
            d_W,
            d_v,
            D_PRE if has_fore else None,
        )


@fp32_region
def run_rnnsearch_decoder(
    model,
    emb: torch.Tensor,
    memory: torch.Tensor,
    keys: torch.Tensor,
    mask: torch.Tensor,
    hidden: torch.Tensor,
    context: torch.Tensor | None,
    foresight: torch.Tensor | None,
):
    """RNNSearch's decoder over target embeddings emb [B, T, E] (after dropout): the states s_i [B, T, H], contexts
    c_i [B, T, 2H] and weights alpha_i [B, T, S] of every step, and the final (s, c). `foresight` [B, T, A] is
    V ehat_i for a target foresight model."""
    cell, attention = model.decoder, model.attention
    T, B, E = emb.size(1), emb.size(0), emb.size(2)
    pre_emb = torch.addmm(cell.bias_ih, emb.transpose(0, 1).reshape(T * B, E), cell.weight_ih[:, :E].t()).view(T, B, -1)
    noise = None
    if attention.training and attention.noise > 0:
        noise = gaussian_noise((T, B, memory.size(1)), attention.noise, memory.device, memory.dtype)
    plan = _Plan(mask, noise, 0 if context is not None else 1)
    fore = None if foresight is None else foresight.transpose(0, 1)
    args = (
        pre_emb,
        cell.weight_ih[:, E:],
        cell.weight_hh,
        cell.bias_hh,
        hidden,
        context,
        memory,
        keys,
        attention.W.weight,
        attention.v.weight.view(-1),
        fore,
    )
    if torch.is_grad_enabled() and any(p.requires_grad for p in model.parameters()):
        states, contexts, weights = _RNNSearchDecoder.apply(plan, *args)
    else:
        # a decoding step is a call of its own: the transposes come from the decoding cache (decoding_cache)
        transposed = cached(model, "rnnsearch_step_weights", lambda: transposed_weights(args[1], args[2], args[8]))
        states, contexts, weights, _ = _run(plan, *args, save=False, transposed=transposed)
    return states.transpose(0, 1), contexts.transpose(0, 1), weights.transpose(0, 1), plan.final
