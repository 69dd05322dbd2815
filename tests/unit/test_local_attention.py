"""Local attention (local-m, local-p) against global attention and a naive per-position computation."""

import math

import pytest
import torch

from nmt.models.attention import GlobalAttention
from nmt.models.local_attention import LocalAttention
from nmt.models.seq2seq import Seq2Seq
from nmt.settings import ModelSettings

from factories import make_model, model_config

H = 6


def lengths_mask(lengths):
    S = max(lengths)
    return torch.arange(S).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)


@pytest.mark.parametrize("score", ["dot", "general", "concat"])
@pytest.mark.parametrize("reverse", [False, True])
def test_local_m_with_a_window_wider_than_the_sentence_equals_global(score, reverse):
    torch.manual_seed(0)
    lengths = [7, 3, 1]
    B, T, S = len(lengths), 9, max(lengths)  # T > S: steps past the source end are clipped into the sentence
    glob = GlobalAttention(H, score, max_src_len=S)
    local = LocalAttention(H, score, "local-m", window=2 * S, reverse=reverse)
    local.load_state_dict(glob.state_dict(), strict=False)  # same score and output weights
    query, memory = torch.randn(B, T, H), torch.randn(B, S, H)
    mask = lengths_mask(lengths)
    h_g, w_g = glob(query, memory, glob.keys(memory), mask)
    h_l, w_l = local(query, memory, local.keys(memory), mask, torch.arange(T))
    torch.testing.assert_close(w_l, w_g, atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(h_l, h_g, atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("reverse", [False, True])
def test_local_m_window_is_centred_on_source_word_t(reverse):
    """With D = 0 local-m puts all weight on source word t, which sits at encoder position len-1-t when the
    source is read reversed; once t runs past the sentence the window stays on its last (first) word."""
    torch.manual_seed(1)
    lengths = [5, 2]
    attn = LocalAttention(H, "dot", "local-m", window=0, reverse=reverse)
    T = 4
    memory = torch.randn(2, 5, H)
    _, weights = attn(torch.randn(2, T, H), memory, attn.keys(memory), lengths_mask(lengths), torch.arange(T))
    for b, n in enumerate(lengths):
        for t in range(T):
            word = min(t, n - 1)
            position = n - 1 - word if reverse else word
            expected = torch.zeros(5)
            expected[position] = 1.0
            torch.testing.assert_close(weights[b, t], expected)


def test_local_m_window_at_the_sentence_edges_ignores_outside_positions():
    torch.manual_seed(2)
    attn = LocalAttention(H, "general", "local-m", window=2, reverse=False)
    memory = torch.randn(1, 6, H)
    mask = torch.tensor([[True] * 4 + [False] * 2])
    _, weights = attn(torch.randn(1, 4, H), memory, attn.keys(memory), mask, torch.arange(4))
    support = [(weights[0, t] > 0).nonzero().flatten().tolist() for t in range(4)]
    assert support == [[0, 1, 2], [0, 1, 2, 3], [0, 1, 2, 3], [1, 2, 3]]  # clipped to words 0..3, no padding
    torch.testing.assert_close(weights.sum(-1), torch.ones(1, 4))


@torch.no_grad()
def naive_local_p(attn: LocalAttention, query, memory, lengths):
    """Per sentence, step and source position: p_t, the window, align() over it, the Gaussian, the context."""
    B, T, _ = query.shape
    S = memory.size(1)
    D = attn.window
    weights = torch.zeros(B, T, S, dtype=torch.float64)
    htilde = torch.zeros(B, T, H, dtype=torch.float64)
    q, m = query.double(), memory.double()
    W_p, v_p = attn.W_p.weight.double(), attn.v_p.weight.double()[0]
    for b in range(B):
        n = lengths[b]
        for t in range(T):
            h = q[b, t]
            p = n * (1.0 / (1.0 + math.exp(-float(v_p @ torch.tanh(W_p @ h)))))
            centre = min(int(round(p)), n - 1)
            window = [s for s in range(centre - D, centre + D + 1) if 0 <= s < n]
            raw = [float(h @ (attn.W_a.weight.double() @ m[b, s])) for s in window]  # general score
            top = max(raw)
            total = sum(math.exp(r - top) for r in raw)
            context = torch.zeros(H, dtype=torch.float64)
            for s, r in zip(window, raw):
                a = math.exp(r - top) / total * math.exp(-((s - p) ** 2) / (2 * (D / 2) ** 2))
                weights[b, t, s] = a
                context += a * m[b, s]
            htilde[b, t] = torch.tanh(attn.W_c.weight.double() @ torch.cat([context, h]))
    return htilde, weights


def test_local_p_matches_naive_per_position_computation():
    torch.manual_seed(3)
    lengths = [12, 5, 1]
    B, T, S = len(lengths), 4, max(lengths)
    attn = LocalAttention(H, "general", "local-p", window=3, reverse=True)
    query, memory = torch.randn(B, T, H), torch.randn(B, S, H)
    h, w = attn(query, memory, attn.keys(memory), lengths_mask(lengths), torch.arange(T))
    ref_h, ref_w = naive_local_p(attn, query, memory, lengths)
    torch.testing.assert_close(w.double(), ref_w, atol=1e-6, rtol=1e-5)
    torch.testing.assert_close(h.double(), ref_h, atol=1e-6, rtol=1e-5)
    with torch.inference_mode():  # the decoding path (no gradients) computes the same
        h_dec, w_dec = attn(query, memory, attn.keys(memory), lengths_mask(lengths), torch.arange(T))
    torch.testing.assert_close(w_dec, w)
    torch.testing.assert_close(h_dec, h)


def test_local_p_gradients_reach_the_position_predictor():
    torch.manual_seed(4)
    attn = LocalAttention(H, "dot", "local-p", window=2, reverse=False)
    memory = torch.randn(2, 9, H)
    mask = lengths_mask([9, 6])
    htilde, _ = attn(torch.randn(2, 3, H), memory, attn.keys(memory), mask, torch.arange(3))
    htilde.pow(2).sum().backward()
    for param in (attn.W_p.weight, attn.v_p.weight):
        assert param.grad is not None and torch.isfinite(param.grad).all() and param.grad.abs().sum() > 0


@pytest.mark.parametrize("mode", ["local-m", "local-p"])
@pytest.mark.parametrize("score", ["dot", "general", "concat", "location"])
def test_padding_does_not_change_local_attention(mode, score):
    torch.manual_seed(5)
    attn = LocalAttention(H, score, mode, window=2, reverse=True)
    query, memory = torch.randn(1, 5, H), torch.randn(1, 4, H)
    h1, w1 = attn(query, memory, attn.keys(memory), torch.ones(1, 4, dtype=torch.bool), torch.arange(5))
    padded = torch.cat([memory, 1e3 * torch.randn(1, 7, H)], dim=1)
    pmask = torch.tensor([[True] * 4 + [False] * 7])
    h2, w2 = attn(query, padded, attn.keys(padded), pmask, torch.arange(5))
    assert torch.all(w2[:, :, 4:] == 0)
    torch.testing.assert_close(h1, h2)
    torch.testing.assert_close(w1, w2[:, :, :4])


def test_local_attention_model_trains_and_config_errors_are_clear():
    cfg = model_config(hidden=H, embed=4, attention="local-p", score="location", max_src_len=8)
    model = make_model(6, cfg, src_vocab=10, tgt_vocab=10, init=None, train=True)
    src, src_len = torch.tensor([[4, 5, 6, 7], [8, 9, 0, 0]]), torch.tensor([4, 2])
    log_probs, weights = model(src, src_len, torch.tensor([[2, 4, 5], [2, 6, 0]]))
    assert weights.shape == (2, 3, 4) and torch.all(weights[1, :, 2:] == 0)
    log_probs.sum().backward()
    assert model.attention.W_a.weight.shape == (5, H)  # location: one score per window offset (2D+1)
    with pytest.raises(ValueError, match="local-p attention needs a window D >= 1"):
        Seq2Seq(ModelSettings.read({**cfg, "window": 0}), src_vocab=10, tgt_vocab=10)


@pytest.mark.parametrize("attention", ["global", "local-m"])
def test_model_returns_weights_in_the_written_source_order(attention):
    """A reversed model attends over encoder positions len-1..0; what it returns is indexed by source word."""
    model = make_model(
        7,
        src_vocab=12,
        tgt_vocab=10,
        init=None,
        hidden=H,
        embed=4,
        attention=attention,
        score="dot",
        input_feed=False,
        max_src_len=8,
        window=0,
    )
    src, src_len = torch.tensor([[4, 5, 6, 0], [7, 8, 9, 10]]), torch.tensor([3, 4])
    tgt = torch.tensor([[2, 4, 5], [2, 6, 7]])
    _, weights = model(src, src_len, tgt)
    enc = model.encode(src, src_len)
    top, _ = model.decoder(model.tgt_embed(tgt), enc.final)
    _, raw = model.attention(top, enc.memory, enc.keys, enc.mask, torch.arange(3))  # encoder order
    for b, n in enumerate(src_len.tolist()):
        torch.testing.assert_close(weights[b, :, :n], raw[b, :, :n].flip(-1))
    if attention == "local-m":  # D = 0: target word t attends exactly source word t
        assert weights[1].argmax(-1).tolist() == [0, 1, 2]


def test_window_row_helpers_match_plain_indexing_and_bmm():
    """gather_rows / row_dots / weighted_rows (index_select, chunked bmm, embedding_bag) against advanced
    indexing and plain products, values and gradients, with windows clipped at the sentence edges (repeated
    rows)."""
    from nmt.models.local_attention import gather_rows, row_dots, weighted_rows, window_rows

    torch.manual_seed(8)
    B, T, S, W = 3, 4, 5, 7
    index = (torch.randint(-2, S + 2, (B, T, 1)) + torch.arange(-3, 4)).clamp(0, S - 1)  # [B, T, W]
    rows = window_rows(index, S)
    assert rows.shape == (B * T, W)
    memory = torch.randn(B, S, H, requires_grad=True)
    weights = torch.randn(B * T, W, requires_grad=True)
    plain = memory[torch.arange(B).view(B, 1, 1), index].view(B * T, W, H)  # the naive gather
    torch.testing.assert_close(gather_rows(memory, rows), plain, rtol=0, atol=0)

    query = torch.randn(B * T, H)
    naive_dots = (query.unsqueeze(1) * plain).sum(-1)
    torch.testing.assert_close(row_dots(query, memory, rows), naive_dots)  # with gradients: one bmm
    with torch.no_grad():  # decoding: in chunks through a buffer; 5 rows of 7 x 6 floats a chunk, 2 left over
        torch.testing.assert_close(row_dots(query, memory, rows, chunk_bytes=5 * W * H * 4), naive_dots)
        torch.testing.assert_close(row_dots(query, memory, rows), naive_dots)  # one chunk

    fast = weighted_rows(memory, rows, weights)
    naive = torch.bmm(weights.unsqueeze(1), plain).squeeze(1)
    torch.testing.assert_close(fast, naive)
    upstream = torch.randn(B * T, H)
    grads = torch.autograd.grad((fast * upstream).sum(), (memory, weights))
    naive_grads = torch.autograd.grad((naive * upstream).sum(), (memory, weights))
    for got, want in zip(grads, naive_grads):
        torch.testing.assert_close(got, want)
