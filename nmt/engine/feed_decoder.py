"""The fast path of the input-feeding decoder (Luong et al. 2015, section 3.3): the stacked LSTM decoder, its
attention and the attentional layer htilde_t = tanh(W_c [c_t ; h_t]), one target step at a time, with a
hand-written backward pass (backpropagation through time) in place of autograd's.
Details: docs/internals/engine.md."""

from __future__ import annotations

import torch
from torch import nn

from ..models.dropout import mask_like
from ..models.variants import variant
from . import native
from .attention_kernels import make_kernel
from .decoding_cache import cached
from .fp32_region import fp32_region
from .lstm_cell import cell_backward, cell_forward

_tanh_backward = torch.ops.aten.tanh_backward


def decoder_weights(
    lstm: nn.LSTM, embed: int
) -> tuple[torch.Tensor, torch.Tensor, list[torch.Tensor], list[torch.Tensor]]:
    """From nn.LSTM's parameters, differentiably: the first layer's embedding projection and bias [4H, E], [4H];
    per layer the weights of [x_t ; h_{t-1}] side by side [4H, 2H]; the biases of layers 2..L."""
    w_ih0 = lstm.weight_ih_l0
    emb_weight, emb_bias = w_ih0[:, :embed], lstm.bias_ih_l0 + lstm.bias_hh_l0
    recurrent = [torch.cat([w_ih0[:, embed:], lstm.weight_hh_l0], dim=1)]
    biases = []
    for layer in range(1, lstm.num_layers):
        recurrent.append(torch.cat([getattr(lstm, f"weight_ih_l{layer}"), getattr(lstm, f"weight_hh_l{layer}")], dim=1))
        biases.append(getattr(lstm, f"bias_ih_l{layer}") + getattr(lstm, f"bias_hh_l{layer}"))
    return emb_weight, emb_bias, recurrent, biases


class _Plan:
    """What the autograd Function needs besides tensors: sizes, the attention kernel, the dropout masks; the forward
    pass leaves the final states here (they are not differentiated)."""

    def __init__(self, layers: int, hidden: int, kernel, dropout_masks: torch.Tensor | None):
        self.layers, self.hidden, self.kernel, self.dropout_masks = layers, hidden, kernel, dropout_masks
        self.final = None  # (h_n, c_n, attention state)


def _run(plan: _Plan, pre0, h0, c0, feed0, W_c_t, transposed, biases, save: bool):
    """The forward loop. pre0 [T, B, 4H]: the first layer's embedding projection + bias per step; W_c_t and
    `transposed` the attentional layer's and each LSTM layer's weights transposed (step_weights). Returns htilde
    [T, B, H], weights [T, B, S] and, when `save`, what the backward pass needs.

    Layout: INP[l][t] = [x_t ; h_{t-1}], layer l's input at step t, [T + 1, B, 2H]: every step writes its h and the
    next layer's (dropped-out) input straight into the rows where they are read, and htilde_t, the next step's feed,
    into INP[0][t + 1][:, :H] (so htilde [T, B, H] is a view of INP[0]). ACT[l][t] starts as the step's input-free
    part of the gates (pre0, or the bias) and gets the step's product added in place, then its activations."""
    T, B = pre0.shape[:2]
    L, H = plan.layers, plan.hidden
    kernel, masks = plan.kernel, plan.dropout_masks
    new = pre0.new_empty
    INP = [new(T + 1, B, 2 * H) for _ in range(L)]
    ACT = [pre0.clone()] + [bias.expand(T, B, 4 * H).clone() for bias in biases]
    C = [new(T + 1, B, H) for _ in range(L)]
    TC = [new(T, B, H) for _ in range(L)] if save else [None] * L
    CH = new(T, B, 2 * H)
    INP[0][0, :, :H] = feed0
    for layer in range(L):
        INP[layer][0, :, H:] = h0[layer]
        C[layer][0] = c0[layer]
    if native.loops_usable(pre0):  # every step but its attention in C (kernels.c feed_forward_step)
        _compiled_forward(plan, INP, ACT, C, TC, CH, W_c_t, transposed, masks)
    else:
        _forward_steps(plan, INP, ACT, C, TC, CH, W_c_t, transposed, masks)
    plan.final = (
        torch.stack([INP[layer][T, :, H:] for layer in range(L)]),
        torch.stack([c[T] for c in C]),
        getattr(kernel, "state", None),
    )
    HT = INP[0][1:, :, :H]
    return HT, kernel.weights(), (INP, ACT, C, TC, CH) if save else None


def _compiled_forward(plan: _Plan, INP, ACT, C, TC, CH, W_c_t, transposed, masks) -> None:
    """_run's steps with one C call per step around the attention kernel."""
    L, H, kernel = plan.layers, plan.hidden, plan.kernel
    T, B = ACT[0].shape[:2]
    lib = native.library()
    masks = None if masks is None else masks.contiguous()
    tensors = [*INP, *ACT, *C, *TC, *transposed, CH, W_c_t, masks]
    table = native.address_table(tensors)
    compiled_attention = getattr(kernel, "compiled_attention", lambda steps: None)(T)
    if compiled_attention is not None:  # the attention inside the step too: one call per step
        location, att_tensors = compiled_attention
        att = native.address_table(att_tensors)
        S = att_tensors[2].size(1)
        for t in range(T):
            lib.feed_forward_step_global(table.data_ptr(), att.data_ptr(), location, t, T, B, H, L, S)
        return
    tops = INP[L - 1][1:, :, H:].unbind(0)  # each step's top-layer h: the attention's query
    context = None
    for t in range(T):
        lib.feed_forward_step(table.data_ptr(), t, None if context is None else context.data_ptr(), T, B, H, L)
        context = kernel.forward(t, tops[t]).contiguous()
    lib.feed_forward_step(table.data_ptr(), T, context.data_ptr(), T, B, H, L)


def _forward_steps(plan: _Plan, INP, ACT, C, TC, CH, W_c_t, transposed, masks) -> None:
    """_run's steps, a few torch operations each (where the compiled loop is not available)."""
    L, H, kernel = plan.layers, plan.hidden, plan.kernel
    T = ACT[0].size(0)
    # every step's views made at once (unbind: one call each), not one slicing call per use inside the loop
    inp_t = [x.unbind(0) for x in INP]
    h_t = [x[:, :, H:].unbind(0) for x in INP]  # h_{t-1} of each layer (its recurrent input)
    x_t = [x[:, :, :H].unbind(0) for x in INP]  # x_t of each layer (htilde_{t-1} for the first)
    act_t, c_t = [x.unbind(0) for x in ACT], [x.unbind(0) for x in C]
    tc_t = [x.unbind(0) if x is not None else [None] * T for x in TC]
    mask_t = [m.unbind(0) for m in masks.unbind(0)] if masks is not None else None
    ch_t = CH.unbind(0)
    compiled = native.usable(CH)  # all the loop's tensors are CH's kind: decided once
    for t in range(T):
        for layer in range(L):
            h = h_t[layer][t + 1]
            cell_forward(
                act_t[layer][t].addmm_(inp_t[layer][t], transposed[layer]),
                c_t[layer][t],
                cell_out=c_t[layer][t + 1],
                tanh_out=tc_t[layer][t],
                h_out=h,
                compiled=compiled,
            )
            if layer < L - 1:
                above = x_t[layer + 1][t]
                torch.mul(h, mask_t[layer][t], out=above) if masks is not None else above.copy_(h)
        torch.cat([kernel.forward(t, h), h], dim=1, out=ch_t[t])
        torch.mm(ch_t[t], W_c_t, out=x_t[0][t + 1]).tanh_()


class _FeedDecoder(torch.autograd.Function):
    """Inputs: plan, pre0, h0, c0, feed0, W_c, memory, keys (or None), the L recurrent weights, the L - 1 biases,
    the attention kernel's parameters. Outputs: htilde [T, B, H] and the attention weights [T, B, S]."""

    @staticmethod
    def forward(ctx, plan: _Plan, pre0, h0, c0, feed0, W_c, memory, keys, *rest):
        L = plan.layers
        recurrent, biases = list(rest[:L]), list(rest[L : 2 * L - 1])
        HT, weights, saved = _run(plan, pre0, h0, c0, feed0, *step_weights(recurrent, W_c), biases, save=True)
        # an output the loss does not use (the weights, unless guided alignment trains them) gets None in backward,
        # not a [T, B, S] tensor of zeros added step by step
        ctx.set_materialize_grads(False)
        ctx.plan, ctx.saved = plan, saved
        ctx.save_for_backward(W_c, *recurrent)
        ctx.has_keys = keys is not None
        return HT, weights

    @staticmethod
    def backward(ctx, d_HT, d_weights):
        plan = ctx.plan
        L, H = plan.layers, plan.hidden
        W_c, *recurrent = ctx.saved_tensors
        INP, ACT, C, TC, CH = ctx.saved
        kernel = plan.kernel
        kernel.begin_backward()
        T, B = CH.shape[:2]
        DG = [CH.new_empty(T, B, 4 * H) for _ in range(L)]
        D_PRE = CH.new_empty(T, B, H)
        steps = (plan, W_c, recurrent, INP, ACT, C, TC, CH, DG, D_PRE, d_HT, d_weights)
        if native.loops_usable(CH):  # every step but its attention in C (kernels.c feed_backward_step)
            d_h, d_c, d_feed = _compiled_backward(*steps)
        else:
            d_h, d_c, d_feed = _backward_steps(*steps)

        def flat(x):
            return x.reshape(-1, x.size(-1))

        d_recurrent = [torch.mm(flat(DG[layer]).t(), flat(INP[layer][:T])) for layer in range(L)]
        d_biases = [DG[layer].sum(dim=(0, 1)) for layer in range(1, L)]
        d_W_c = torch.mm(flat(D_PRE).t(), flat(CH))
        d_memory, d_keys, d_params = kernel.finish(CH[:, :, H:])
        return (
            None,
            DG[0],
            d_h,
            d_c,
            d_feed,
            d_W_c,
            d_memory,
            d_keys if ctx.has_keys else None,
            *d_recurrent,
            *d_biases,
            *d_params,
        )


def _compiled_backward(plan: _Plan, W_c, recurrent, INP, ACT, C, TC, CH, DG, D_PRE, d_HT, d_weights):
    """The backward pass's steps with one C call per step around the attention kernel's backward. Fills DG and
    D_PRE; returns the gradients of the initial h and c [L, B, H] and of the initial feed [B, H]."""
    L, H, kernel = plan.layers, plan.hidden, plan.kernel
    T, B = CH.shape[:2]
    lib = native.library()
    masks = None if plan.dropout_masks is None else plan.dropout_masks.contiguous()
    d_h, d_c, d_feed = CH.new_zeros(L, B, H), CH.new_zeros(L, B, H), CH.new_zeros(B, H)
    D_CH = CH.new_empty(T, B, 2 * H)  # one row per step: a kernel may keep the step's d context (a view of it)
    tensors = [
        *INP,
        *ACT,
        *C,
        *TC,
        *(w.contiguous() for w in recurrent),
        *DG,
        W_c.contiguous(),
        D_PRE,
        D_CH,
        d_h,
        d_c,
        d_feed,
        CH.new_empty(B, 2 * H),
        None if d_HT is None else d_HT.contiguous(),
        masks,
    ]
    table = native.address_table(tensors)
    if getattr(kernel, "A_all", None) is not None:  # the forward pass ran whole steps in C: so does this one
        att_tensors = kernel.compiled_backward_tensors(d_weights)
        att = native.address_table(att_tensors)
        location, S = int(kernel.score == "location"), att_tensors[2].size(1)
        for t in range(T - 1, -1, -1):
            lib.feed_backward_step_global(table.data_ptr(), att.data_ptr(), location, t, T, B, H, L, S)
        kernel.D_CTX_all = D_CH[:, :, :H]
        return d_h, d_c, d_feed
    lib.feed_backward_step(table.data_ptr(), T - 1, None, T, B, H, L)
    for t in range(T - 1, -1, -1):
        d_query = kernel.backward(t, D_CH[t, :, :H], None if d_weights is None else d_weights[t]).contiguous()
        lib.feed_backward_step(table.data_ptr(), t - 1, d_query.data_ptr(), T, B, H, L)
    return d_h, d_c, d_feed


def _backward_steps(plan: _Plan, W_c, recurrent, INP, ACT, C, TC, CH, DG, D_PRE, d_HT, d_weights):
    """The backward pass's steps, a few torch operations each (where the compiled loop is not available); as
    _compiled_backward."""
    L, H, kernel, masks = plan.layers, plan.hidden, plan.kernel, plan.dropout_masks
    T, B = CH.shape[:2]
    new_zeros = CH.new_zeros
    d_h = [new_zeros(B, H) for _ in range(L)]
    d_c = [new_zeros(B, H) for _ in range(L)]
    d_feed = new_zeros(B, H)
    scratch = CH.new_empty(B, 4 * H)
    ht_t = INP[0][:, :, :H].unbind(0)
    act_t, c_t, tc_t = [x.unbind(0) for x in ACT], [x.unbind(0) for x in C], [x.unbind(0) for x in TC]
    dg_t, d_pre_t = [x.unbind(0) for x in DG], D_PRE.unbind(0)
    d_ht_t = d_HT.unbind(0) if d_HT is not None else None
    mask_t = [m.unbind(0) for m in masks.unbind(0)] if masks is not None else None
    compiled = native.usable(CH) and (d_HT is None or d_HT.stride(-1) == 1)
    for t in range(T - 1, -1, -1):
        d_ht = d_feed if d_ht_t is None else d_ht_t[t] + d_feed
        d_pre = _tanh_backward.grad_input(d_ht, ht_t[t + 1], grad_input=d_pre_t[t])
        d_ch = torch.mm(d_pre, W_c)
        d_x = d_ch[:, H:] + kernel.backward(t, d_ch[:, :H], None if d_weights is None else d_weights[t])
        mask = None
        for layer in range(L - 1, -1, -1):
            dg = dg_t[layer][t]
            d_c[layer] = cell_backward(
                d_x,
                d_c[layer],
                act_t[layer][t],
                c_t[layer][t],
                tc_t[layer][t],
                dg,
                scratch,
                d_h2=d_h[layer],
                mask=mask,
                compiled=compiled,
            )
            d_inp = torch.mm(dg, recurrent[layer])
            d_x, d_h[layer] = d_inp[:, :H], d_inp[:, H:]
            mask = None if masks is None or layer == 0 else mask_t[layer - 1][t]
        d_feed = d_x
    return torch.stack(d_h), torch.stack(d_c), d_feed


def step_weights(recurrent: list[torch.Tensor], W_c: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """The right-hand sides of the loop's products: W_c and each layer's [x ; h] weights, transposed and contiguous
    (MKL's products are faster than on a transposed view)."""
    return W_c.t().contiguous(), [w.t().contiguous() for w in recurrent]


def cached_decoder_weights(model: nn.Module, lstm: nn.LSTM, embed: int):
    """decoder_weights without gradients, taken from the decoding cache when one is open (decoding_cache)."""
    return cached(model, "weights", lambda: decoder_weights(lstm, embed))


@fp32_region
def run_decoder(
    model: nn.Module,
    emb: torch.Tensor,
    memory: torch.Tensor,
    keys: torch.Tensor | None,
    mask: torch.Tensor,
    hidden: tuple[torch.Tensor, torch.Tensor],
    feed: torch.Tensor,
    first_step: int,
    attention_state: torch.Tensor | None,
):
    """Decode target embeddings emb [B, T, E] (after dropout) with `model`'s LSTM decoder (model.decoder), its
    attention layer (model.attention, whose W_c makes htilde) and input feeding. Returns htilde [B, T, H], the
    attention weights [B, T, S] over encoder positions, and the final (h, c), feed and attention state."""
    lstm, attention = model.decoder, model.attention
    L, H = lstm.num_layers, lstm.hidden_size
    embed = emb.size(-1)
    grad = torch.is_grad_enabled() and any(p.requires_grad for p in model.parameters())
    emb_weight, emb_bias, recurrent, biases = (
        decoder_weights(lstm, embed) if grad else cached_decoder_weights(model, lstm, embed)
    )
    T, B = emb.size(1), emb.size(0)
    pre0 = torch.addmm(emb_bias, emb.transpose(0, 1).reshape(T * B, embed), emb_weight.t()).view(T, B, 4 * H)
    masks = None
    if lstm.training and L > 1 and lstm.dropout > 0:
        masks = mask_like((L - 1, T, B, H), lstm.dropout, emb.device, emb.dtype)
    kernel = make_kernel(
        attention, variant(model.settings).kernel, memory, keys, mask, first_step, attention_state, T, save=grad
    )
    plan = _Plan(L, H, kernel, masks)
    W_c = attention.W_c.weight
    if grad:
        HT, weights = _FeedDecoder.apply(
            plan, pre0, hidden[0], hidden[1], feed, W_c, memory, keys, *recurrent, *biases, *kernel.params
        )
    else:
        W_c_t, transposed = cached(model, "step_weights", lambda: step_weights(recurrent, W_c))
        HT, weights, _ = _run(plan, pre0, hidden[0], hidden[1], feed, W_c_t, transposed, biases, save=False)
    h_n, c_n, state = plan.final
    return HT.transpose(0, 1), weights.transpose(0, 1), (h_n, c_n), HT[-1].contiguous(), state
