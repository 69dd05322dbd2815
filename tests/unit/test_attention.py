"""Attention scores, masking and input feeding against naive per-position reference implementations."""

import math

import pytest
import torch

from nmt.models.attention import GlobalAttention
from nmt.models.seq2seq import reverse_padded

from factories import TWO_LAYER_LUONG, make_model, model_config

H = 6
BASE = model_config(TWO_LAYER_LUONG, without=("window",), hidden=H, embed=5, reverse=False, max_src_len=8)


@torch.no_grad()
def naive_attention(attn: GlobalAttention, query, memory, lengths):
    """Loop over sentences, steps and source positions with plain tensor ops on the module's weights."""
    B, T, _ = query.shape
    S = memory.size(1)
    htilde = torch.zeros(B, T, H, dtype=torch.float64)
    weights = torch.zeros(B, T, S, dtype=torch.float64)
    q, m = query.double(), memory.double()
    for b in range(B):
        for t in range(T):
            h = q[b, t]
            raw = []
            for s in range(lengths[b]):
                hbar = m[b, s]
                if attn.score == "dot":
                    raw.append(float(h @ hbar))
                elif attn.score == "general":
                    raw.append(float(h @ (attn.W_a.weight.double() @ hbar)))
                elif attn.score == "concat":
                    W = torch.cat([attn.W_q.weight, attn.W_k.weight], dim=1).double()  # W_a [h; hbar]
                    raw.append(float(attn.v_a.weight.double()[0] @ torch.tanh(W @ torch.cat([h, hbar]))))
                else:  # location: a fixed-size vector, positions past the sentence masked, renormalised
                    full = attn.W_a.weight.double() @ h
                    raw.append(float(full[s]) if s < attn.max_src_len else -math.inf)
            top = max(raw)
            exps = [math.exp(r - top) for r in raw]
            total = sum(exps)
            context = torch.zeros(H, dtype=torch.float64)
            for s, e in enumerate(exps):
                weights[b, t, s] = e / total
                context += weights[b, t, s] * m[b, s]
            htilde[b, t] = torch.tanh(attn.W_c.weight.double() @ torch.cat([context, h]))
    return htilde, weights


@pytest.mark.parametrize("score", ["dot", "general", "concat", "location"])
def test_global_attention_matches_naive_loop(score):
    torch.manual_seed(0)
    attn = GlobalAttention(H, score, max_src_len=5)
    lengths = [7, 3, 1]  # 7 > max_src_len exercises "ignore words past the maximum length" for location
    B, T, S = len(lengths), 4, max(lengths)
    query, memory = torch.randn(B, T, H), torch.randn(B, S, H)
    mask = torch.arange(S).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)
    htilde, weights = attn(query, memory, attn.keys(memory), mask)
    ref_h, ref_w = naive_attention(attn, query, memory, lengths)
    torch.testing.assert_close(weights.double(), ref_w, atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(htilde.double(), ref_h, atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("score", ["dot", "general", "concat", "location"])
def test_padding_gets_no_weight_and_does_not_change_results(score):
    torch.manual_seed(1)
    attn = GlobalAttention(H, score, max_src_len=10)
    query, memory = torch.randn(1, 3, H), torch.randn(1, 4, H)
    mask = torch.ones(1, 4, dtype=torch.bool)
    h1, w1 = attn(query, memory, attn.keys(memory), mask)
    # Same sentence with 3 padding positions full of garbage.
    padded = torch.cat([memory, 1e3 * torch.randn(1, 3, H)], dim=1)
    pmask = torch.tensor([[True] * 4 + [False] * 3])
    h2, w2 = attn(query, padded, attn.keys(padded), pmask)
    assert torch.all(w2[:, :, 4:] == 0)
    torch.testing.assert_close(h1, h2)
    torch.testing.assert_close(w1, w2[:, :, :4])


def test_reverse_padded_keeps_padding_in_place():
    src = torch.tensor([[5, 6, 7, 0], [8, 9, 0, 0]])
    out = reverse_padded(src, torch.tensor([3, 2]))
    assert out.tolist() == [[7, 6, 5, 0], [9, 8, 0, 0]]


def naive_lstm_stack(lstm, x, state):
    """One time step of a stacked LSTM written out with the gate equations (i, f, g, o as in torch)."""
    h0, c0 = state
    hs, cs = [], []
    inp = x
    for layer in range(lstm.num_layers):
        w_ih = getattr(lstm, f"weight_ih_l{layer}")
        w_hh = getattr(lstm, f"weight_hh_l{layer}")
        bias = getattr(lstm, f"bias_ih_l{layer}") + getattr(lstm, f"bias_hh_l{layer}")
        gates = inp @ w_ih.T + h0[layer] @ w_hh.T + bias
        i, f, g, o = gates.chunk(4, dim=-1)
        c = torch.sigmoid(f) * c0[layer] + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        hs.append(h)
        cs.append(c)
        inp = h
    return inp, (torch.stack(hs), torch.stack(cs))


@pytest.mark.parametrize("score", ["dot", "general", "concat", "location"])
def test_input_feeding_matches_naive_decoder_loop(score):
    model = make_model(2, BASE, src_vocab=11, tgt_vocab=9, init=None, score=score)
    src = torch.tensor([[4, 5, 6, 7], [8, 9, 0, 0]])
    src_len = torch.tensor([4, 2])
    tgt_in = torch.tensor([[2, 4, 5, 6], [2, 7, 0, 0]])
    log_probs, weights = model(src, src_len, tgt_in)

    enc = model.encode(src, src_len)
    state = enc.final
    feed = torch.zeros(2, H)
    for t in range(tgt_in.size(1)):
        x = torch.cat([model.tgt_embed(tgt_in[:, t]), feed], dim=-1)  # [y_{t-1}; htilde_{t-1}]
        top, state = naive_lstm_stack(model.decoder, x, state)
        htilde, w = model.attention(top.unsqueeze(1), enc.memory, enc.keys, enc.mask)
        feed = htilde.squeeze(1)
        ref = torch.log_softmax(model.generator(feed), dim=-1)
        torch.testing.assert_close(log_probs[:, t], ref, atol=1e-5, rtol=1e-4)
        torch.testing.assert_close(weights[:, t], w.squeeze(1), atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize(
    "overrides",
    [
        {"attention": "none", "input_feed": False},
        {"attention": "global", "score": "dot", "input_feed": False},
        {"attention": "global", "score": "location", "input_feed": True, "reverse": True},
        {"attention": "local-m", "score": "general", "input_feed": False, "reverse": True, "window": 1},
        {"attention": "local-p", "score": "dot", "input_feed": True, "reverse": True, "window": 2},
    ],
)
def test_step_by_step_equals_teacher_forcing(overrides):
    model = make_model(3, BASE, src_vocab=11, tgt_vocab=9, init=None, **overrides)
    src = torch.tensor([[4, 5, 6, 7, 8], [8, 9, 10, 0, 0]])
    src_len = torch.tensor([5, 3])
    tgt_in = torch.tensor([[2, 4, 5, 6], [2, 7, 8, 0]])
    full, _ = model(src, src_len, tgt_in)
    enc = model.encode(src, src_len)
    state = model.initial_state(enc)
    for t in range(tgt_in.size(1)):
        step, state, _ = model.step(tgt_in[:, t], enc, state)
        torch.testing.assert_close(step, full[:, t], atol=1e-5, rtol=1e-4)


def test_padding_in_batch_does_not_change_a_sentence():
    model = make_model(4, BASE, src_vocab=11, tgt_vocab=9, init=None, reverse=True)
    alone, _ = model(torch.tensor([[4, 5]]), torch.tensor([2]), torch.tensor([[2, 3, 4]]))
    batch, _ = model(
        torch.tensor([[4, 5, 0, 0], [6, 7, 8, 9]]), torch.tensor([2, 4]), torch.tensor([[2, 3, 4], [2, 5, 6]])
    )
    torch.testing.assert_close(alone[0], batch[0], atol=1e-6, rtol=1e-5)
