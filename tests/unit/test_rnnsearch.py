"""RNNsearch (Bahdanau et al. 2015) with target foresight, attention noise, frozen training and guided alignment
(Peter, Nix & Ney 2017): the equations against a naive float64 reimplementation, the decoding interface (batched ==
one by one, teacher forcing == step by step), what target foresight may and may not do, and the training variants
end to end on a tiny synthetic corpus."""

import json
import math
import signal
from pathlib import Path

import pytest
import torch
import yaml

import nmt.training.run as train_module
from nmt import config as cfg
from nmt import settings
from nmt.cli import main
from nmt.config import ConfigError
from nmt.data.batches import alignment_targets, make_batch
from nmt.data.links import load_training_links
from nmt.data.prepare import load_split, prepare
from nmt.data.synth import build_lexicon, generate, generate_pairs
from nmt.data.text import CorpusError
from nmt.data.torch_files import save_torch
from nmt.data.vocab import BOS_ID, EOS_ID, PAD_ID
from nmt.decode.attention_map import forced_attention
from nmt.decode.translate import beam_search, greedy, translate_ids
from nmt.engine.train_step import make_optimizer
from nmt.models.io import load_models
from nmt.models.objectives import alignment_loss
from nmt.models.registry import build_model
from nmt.models.rnnsearch import AdditiveAttention, CannotTranslateError, RNNSearch, next_words
from nmt.scoring.likelihood import batch_nll
from nmt.settings import ModelSettings, TrainSettings
from nmt.training.run import attention_parameter_names, train

from factories import (
    SMALL_RNNSEARCH,
    SRC_VOCAB,
    TGT_VOCAB,
    StopAfter,
    make_model,
    model_config,
    random_ids,
    write_model_file,
)

ROOT = Path(__file__).resolve().parents[2]
SRC_V, TGT_V = SRC_VOCAB, TGT_VOCAB  # make_model's vocabularies
BASE = model_config(SMALL_RNNSEARCH)  # built with engine="fast", as nmt train and nmt translate run it


pytestmark = pytest.mark.usefixtures("one_thread")  # tests/unit/conftest.py


def sources():
    return random_ids((5, 1, 9, 3, 7), SRC_V, seed=7)


def references():
    return random_ids((4, 2, 6, 1, 5), TGT_V, seed=8)


# -- equations ------------------------------------------------------------------------------------------------
def naive_energies(att: AdditiveAttention, s, h, n, ehat=None):
    """e_j = v^T tanh(W s + U h_j + b [+ V ehat]) for j < n, position by position, in float64."""
    W, U, b, v = (x.detach().double() for x in (att.W.weight, att.U.weight, att.U.bias, att.v.weight[0]))
    extra = att.V.weight.detach().double() @ ehat if ehat is not None else 0.0
    return torch.stack([v @ torch.tanh(W @ s + U @ h[j] + b + extra) for j in range(n)])


@pytest.mark.parametrize("foresight", [False, True])
def test_attention_energies_and_context_match_a_naive_float64_reference(foresight):
    torch.manual_seed(0)
    H, A, E, lengths = 5, 4, 3, [6, 2, 4]
    att = AdditiveAttention(H, 2 * H, A, E if foresight else 0)
    for p in att.parameters():
        torch.nn.init.uniform_(p, -0.8, 0.8)
    B, S = len(lengths), max(lengths)
    memory = torch.randn(B, S, 2 * H)
    mask = torch.arange(S).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)
    memory = memory.masked_fill(~mask.unsqueeze(-1), 0.0)
    query, ehat = torch.randn(B, H), torch.randn(B, E)
    fs = att.foresight(ehat) if foresight else None
    context, weights = att(query, memory, att.keys(memory), mask, fs)
    energies = att.energies(query, att.keys(memory), fs)
    for b, n in enumerate(lengths):
        e = naive_energies(att, query[b].double(), memory[b].double(), n, ehat[b].double() if foresight else None)
        torch.testing.assert_close(energies[b, :n].double(), e, atol=1e-5, rtol=1e-5)
        alpha = torch.exp(e - e.max()) / torch.exp(e - e.max()).sum()
        torch.testing.assert_close(weights[b, :n].double(), alpha, atol=1e-6, rtol=1e-5)
        assert torch.all(weights[b, n:] == 0)  # padding gets exactly nothing
        c = sum(alpha[j] * memory[b, j].double() for j in range(n))
        torch.testing.assert_close(context[b].double(), c, atol=1e-6, rtol=1e-5)


def _gru(x, h, cell):
    """torch's GRU cell equations, in float64."""
    w_ih, w_hh, b_ih, b_hh = (t.detach().double() for t in (cell[0], cell[1], cell[2], cell[3]))
    gi, gh = w_ih @ x + b_ih, w_hh @ h + b_hh
    n = h.numel()
    r, z = torch.sigmoid(gi[:n] + gh[:n]), torch.sigmoid(gi[n : 2 * n] + gh[n : 2 * n])
    cand = torch.tanh(gi[2 * n :] + r * gh[2 * n :])
    return (1 - z) * cand + z * h


def naive_rnnsearch(model: RNNSearch, src: list[int], tgt: list[int]):
    """log p(y_i) and alpha_i of one sentence pair, Bahdanau et al.'s equations written out in float64 (the readout
    reads s_{i-1}, E y_{i-1} and c_i; the state is updated with y_i and c_i once y_i is known)."""
    d = lambda t: t.detach().double()  # noqa: E731
    H = model.hidden_size
    enc = model.encoder
    x = [d(model.src_embed.weight[w]) for w in src]
    fwd_cell = (enc.weight_ih_l0, enc.weight_hh_l0, enc.bias_ih_l0, enc.bias_hh_l0)
    bwd_cell = (enc.weight_ih_l0_reverse, enc.weight_hh_l0_reverse, enc.bias_ih_l0_reverse, enc.bias_hh_l0_reverse)
    fwd, bwd, h = [], [None] * len(src), torch.zeros(H, dtype=torch.float64)
    for j in range(len(src)):
        h = _gru(x[j], h, fwd_cell)
        fwd.append(h)
    h = torch.zeros(H, dtype=torch.float64)
    for j in reversed(range(len(src))):
        h = _gru(x[j], h, bwd_cell)
        bwd[j] = h
    annotations = torch.stack([torch.cat([f, b]) for f, b in zip(fwd, bwd)])
    s = torch.tanh(d(model.init_state.weight) @ bwd[0] + d(model.init_state.bias))
    dec = model.decoder
    dec_cell = (dec.weight_ih, dec.weight_hh, dec.bias_ih, dec.bias_hh)
    E = lambda w: d(model.tgt_embed.weight[w])  # noqa: E731
    tgt_in, tgt_out = [BOS_ID] + tgt, tgt + [EOS_ID]
    log_probs, alphas, c = [], [], None
    for i, (prev, word) in enumerate(zip(tgt_in, tgt_out)):
        if i > 0:
            s = _gru(torch.cat([E(prev), c]), s, dec_cell)
        e = naive_energies(model.attention, s, annotations, len(src), E(word) if model.target_foresight else None)
        alpha = torch.softmax(e, dim=0)
        c = alpha @ annotations
        t_tilde = d(model.readout.weight) @ torch.cat([s, E(prev), c]) + d(model.readout.bias)
        t = torch.stack([torch.maximum(t_tilde[2 * k], t_tilde[2 * k + 1]) for k in range(model.maxout_units)])
        logits = d(model.generator.weight) @ t + d(model.generator.bias)
        log_probs.append(torch.log_softmax(logits, dim=0))
        alphas.append(alpha)
    return torch.stack(log_probs), torch.stack(alphas)


@pytest.mark.parametrize("foresight", [False, True])
def test_teacher_forced_model_matches_bahdanaus_equations_in_float64(foresight):
    model = make_model(3, BASE, engine="fast", target_foresight=foresight)
    srcs, tgts = sources(), references()
    batch = make_batch(srcs, tgts, list(range(len(srcs))))
    with torch.no_grad():
        log_probs, weights = model(batch.src, batch.src_len, batch.tgt_in)
    for b, (src, tgt) in enumerate(zip(srcs, tgts)):
        ref_lp, ref_alpha = naive_rnnsearch(model, src, tgt)
        T = len(tgt) + 1
        torch.testing.assert_close(log_probs[b, :T].double(), ref_lp, atol=2e-5, rtol=1e-5)
        torch.testing.assert_close(weights[b, :T, : len(src)].double(), ref_alpha, atol=2e-6, rtol=1e-5)
        assert torch.all(weights[b, :, len(src) :] == 0)


def test_teacher_forcing_equals_step_by_step_decoding():
    model = make_model(4, BASE, engine="fast")
    srcs, tgts = sources(), references()
    batch = make_batch(srcs, tgts, list(range(len(srcs))))
    with torch.no_grad():
        log_probs, weights = model(batch.src, batch.src_len, batch.tgt_in)
        enc = model.encode(batch.src, batch.src_len)
        state = model.initial_state(enc)
        for t in range(batch.tgt_in.size(1)):
            lp, state, w = model.step(batch.tgt_in[:, t], enc, state)
            torch.testing.assert_close(lp, log_probs[:, t], atol=1e-6, rtol=1e-6)
            torch.testing.assert_close(w, weights[:, t], atol=1e-6, rtol=1e-6)


# -- decoding -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("beam", [1, 3])
def test_batched_decoding_equals_one_by_one_and_scores_equal_forced_decoding(beam):
    model = make_model(5, BASE, engine="fast")
    srcs = sources()
    batched = translate_ids(model, srcs, beam=beam, batch_size=3, max_len_ratio=1.0, device="cpu", progress=False)
    for src, hyp in zip(srcs, batched):
        single = translate_ids(model, [src], beam=beam, batch_size=1, max_len_ratio=1.0, device="cpu", progress=False)[
            0
        ]
        assert hyp.tokens == single.tokens and hyp.positions == single.positions
        assert hyp.score == pytest.approx(single.score, abs=1e-4)
        assert len(hyp.positions) == len(hyp.tokens) and all(0 <= p < len(src) for p in hyp.positions)
        if hyp.tokens and len(hyp.tokens) < len(src) + 10:  # ended with </s>: its score is the forced log-likelihood
            forced = make_batch([src], [hyp.tokens], [0])
            with torch.no_grad():
                assert -float(batch_nll(model, forced)) == pytest.approx(hyp.score, abs=1e-4)
                _, weights = model(forced.src, forced.src_len, forced.tgt_in)
            assert weights[0, : len(hyp.tokens)].argmax(-1).tolist() == hyp.positions  # for unk replacement
    batch = make_batch(srcs, None, list(range(len(srcs))))
    assert [h.tokens for h in greedy(model, batch.src, batch.src_len, 1.0)] == [
        h.tokens for h in beam_search(model, batch.src, batch.src_len, 1, 1.0)
    ]


def test_ensembles_mix_rnnsearch_and_luong_members():
    from nmt.models.ensemble import Ensemble

    model, twin = make_model(11, BASE, engine="fast"), make_model(11, BASE, engine="fast")
    luong = build_model(
        ModelSettings.read({**BASE, "arch": "luong", "attention": "global", "score": "general"}), SRC_V, TGT_V
    ).eval()
    alone = translate_ids(model, sources(), beam=3, batch_size=2, max_len_ratio=1.0, device="cpu", progress=False)
    pair = translate_ids(
        Ensemble([model, twin]), sources(), beam=3, batch_size=2, max_len_ratio=1.0, device="cpu", progress=False
    )
    assert [h.tokens for h in alone] == [h.tokens for h in pair]
    mixed = Ensemble([model, luong])
    batched = translate_ids(mixed, sources(), beam=3, batch_size=3, max_len_ratio=1.0, device="cpu", progress=False)
    for src, hyp in zip(sources(), batched):
        single = translate_ids(mixed, [src], beam=3, batch_size=1, max_len_ratio=1.0, device="cpu", progress=False)[0]
        assert hyp.tokens == single.tokens and hyp.score == pytest.approx(single.score, abs=1e-4)


# -- target foresight -----------------------------------------------------------------------------------------
def test_target_foresight_reads_the_current_target_word_and_nothing_later():
    src, ref = sources()[2], [5, 6, 7, 8, 9]
    changed = ref[:2] + [11] + ref[3:]  # y_3 differs
    tf, plain = make_model(6, BASE, engine="fast", target_foresight=True), make_model(6, BASE, engine="fast")
    for model in (tf, plain):
        a, a2, b = (forced_attention(model, src, y) for y in (ref, ref, changed))
        assert torch.equal(a, a2)
        # rows 0, 1 (predicting y_1, y_2) do not see y_3 in either model
        torch.testing.assert_close(a[:2], b[:2], atol=0, rtol=0)
        # rows 3, 4 have read y_3
        assert (a[3:] - b[3:]).abs().max() > 1e-4
    # row 2 predicts y_3: only the TF model's attention depends on it
    assert (forced_attention(tf, src, ref)[2] - forced_attention(tf, src, changed)[2]).abs().max() > 1e-3
    torch.testing.assert_close(
        forced_attention(plain, src, ref)[2], forced_attention(plain, src, changed)[2], atol=0, rtol=0
    )
    # without tgt_out the foresight words are tgt_in's next words, </s> after the last
    batch = make_batch(sources(), references(), list(range(5)))
    assert torch.equal(next_words(batch.tgt_in), batch.tgt_out)
    with torch.no_grad():
        torch.testing.assert_close(
            tf(batch.src, batch.src_len, batch.tgt_in),
            tf(batch.src, batch.src_len, batch.tgt_in, tgt_out=batch.tgt_out),
        )


def test_target_foresight_model_refuses_free_translation_naming_its_file(tmp_path):
    model = make_model(7, BASE, engine="fast", target_foresight=True)
    path = tmp_path / "tf" / "model.pt"
    path.parent.mkdir()
    write_model_file(path, model, system="tf")  # the default words: SRC_V and TGT_V with the specials
    loaded, *_ = load_models([str(path)], "cpu")  # loading is fine: forced decoding needs it
    with pytest.raises(
        ConfigError,
        match=rf"{path}: target foresight models align given a reference; they cannot "
        "translate",
    ):
        translate_ids(loaded, sources(), beam=2, batch_size=2, max_len_ratio=1.0, device="cpu", progress=False)
    batch = make_batch(sources(), None, list(range(5)))
    for search in (
        lambda: greedy(loaded, batch.src, batch.src_len),
        lambda: beam_search(loaded, batch.src, batch.src_len, 3),
    ):
        with pytest.raises(ConfigError, match="cannot translate"):
            search()
    from nmt.models.ensemble import Ensemble

    with pytest.raises(ConfigError, match=str(path)):
        translate_ids(
            Ensemble([make_model(8, BASE, engine="fast"), loaded]),
            sources(),
            beam=2,
            batch_size=2,
            max_len_ratio=1.0,
            device="cpu",
            progress=False,
        )
    enc = loaded.encode(batch.src, batch.src_len)
    with pytest.raises(CannotTranslateError, match="cannot translate"):
        loaded.step(torch.full((5,), BOS_ID), enc, loaded.initial_state(enc))
    # ... while forced decoding works
    weights = forced_attention(loaded, [5, 6, 7], [4, 5])
    assert weights.shape == (2, 3)


# -- attention noise ------------------------------------------------------------------------------------------
def test_attention_noise_only_in_training_mode():
    noisy, clean = make_model(9, BASE, engine="fast", attention_noise=1.0), make_model(9, BASE, engine="fast")
    assert all(torch.equal(a, b) for a, b in zip(noisy.state_dict().values(), clean.state_dict().values()))
    batch = make_batch(sources(), references(), list(range(5)))
    run = lambda m: m(batch.src, batch.src_len, batch.tgt_in)  # noqa: E731
    with torch.no_grad():
        eval_noisy, eval_again, eval_clean = run(noisy), run(noisy), run(clean)
        for x, y, z in zip(eval_noisy, eval_again, eval_clean):
            assert torch.equal(x, y) and torch.equal(x, z)  # deterministic and unaffected in eval mode
        clean.train()
        for x, y in zip(run(clean), eval_clean):  # training mode alone changes nothing (dropout 0) ...
            assert torch.equal(x, y)
        noisy.train()
        torch.manual_seed(0)
        first = run(noisy)
        second = run(noisy)
        assert (first[1] - eval_clean[1]).abs().max() > 1e-3  # ... the noise does
        assert (first[1] - second[1]).abs().max() > 1e-3
        assert torch.all(first[1][batch.src.unsqueeze(1).expand_as(first[1]) == PAD_ID] == 0)  # padding still 0
        torch.manual_seed(0)
        assert torch.equal(run(noisy)[1], first[1])  # seeded noise
        noisy.eval()
        assert torch.equal(run(noisy)[1], eval_clean[1])


def test_rnnsearch_only_settings_are_refused_by_the_luong_model():
    luong = {**BASE, "arch": "luong", "attention": "global"}
    with pytest.raises(ValueError, match="target_foresight is implemented for model.arch: rnnsearch only"):
        build_model(ModelSettings.read({**luong, "target_foresight": True}), SRC_V, TGT_V)
    with pytest.raises(ValueError, match="unknown model.arch 'transformer'"):
        build_model(ModelSettings.read({**luong, "arch": "transformer"}), SRC_V, TGT_V)


# -- guided alignment -----------------------------------------------------------------------------------------
def test_guided_alignment_loss_equals_the_hand_computed_value_and_reaches_the_attention():
    # two sentences: 2 source x 2 target words, and 3 source x 1 target word (padded)
    links = [[(0, 0), (1, 0), (1, 1)], [(2, 0)]]
    batch = make_batch([[4, 5], [4, 5, 6]], [[7, 8], [9]], [0, 1], links)
    assert batch.align.tolist() == [
        [[0.5, 0.5, 0], [0, 1, 0], [0, 0, 0]],  # row per target word, </s> row 0
        [[0, 0, 1], [0, 0, 0], [0, 0, 0]],
    ]
    weights = torch.tensor(
        [
            [[0.7, 0.3, 0.0], [0.2, 0.8, 0.0], [0.5, 0.5, 0.0]],
            [[0.1, 0.3, 0.6], [0.2, 0.2, 0.6], [1 / 3, 1 / 3, 1 / 3]],
        ],
        dtype=torch.float64,
    )
    expected = -(0.5 * math.log(0.7) + 0.5 * math.log(0.3) + math.log(0.8)) - math.log(0.6)
    assert float(alignment_loss(weights, batch.align)) == pytest.approx(expected, rel=1e-12)
    # "read" credit (Luong content scores): word t's weights come from the step after
    expected_read = -(0.5 * math.log(0.2) + 0.5 * math.log(0.8) + math.log(0.5)) - math.log(0.6)
    assert float(alignment_loss(weights, batch.align, "read")) == pytest.approx(expected_read, rel=1e-12)
    assert alignment_targets([[]], 2, 2).sum() == 0  # a pair without links contributes nothing

    model = make_model(10, BASE, engine="fast", target_foresight=True)
    model.train()
    log_probs, weights = model(batch.src, batch.src_len, batch.tgt_in, tgt_out=batch.tgt_out)
    loss = alignment_loss(weights, batch.align)
    assert torch.isfinite(loss) and loss > 0
    loss.backward()
    for name in (
        "attention.W.weight",
        "attention.U.weight",
        "attention.U.bias",
        "attention.v.weight",
        "attention.V.weight",
        "encoder.weight_hh_l0",
        "decoder.weight_hh",
        "tgt_embed.weight",
    ):
        grad = dict(model.named_parameters())[name].grad
        assert grad is not None and grad.abs().sum() > 0, name
    assert model.generator.weight.grad is None  # the output layer does not shape the attention
    assert sorted(attention_parameter_names(model)) == [
        "attention.U.bias",
        "attention.U.weight",
        "attention.V.weight",
        "attention.W.weight",
        "attention.v.weight",
    ]


# -- data pipeline and training -------------------------------------------------------------------------------
def test_prepare_filters_the_training_links_with_the_pairs(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    long = " ".join(["w"] * 6)
    (raw / "train.src").write_text(f"a b\n{long}\na c d\nb\n")
    (raw / "train.tgt").write_text("x y\nx\nz x\ny y\n")
    (raw / "train.links").write_text("0-0 1-1\n5-0\n0?1 2-0\n\n")
    (raw / "dev.src").write_text("a\n")
    (raw / "dev.tgt").write_text("x\n")
    kwargs = dict(splits=["train", "dev"], src_lang="en", tgt_lang="de", max_len=5, src_vocab=10, tgt_vocab=10)
    stats = prepare(raw, tmp_path / "out", **kwargs)
    assert (tmp_path / "out" / "train.links").read_text() == "0-0 1-1\n0?1 2-0\n\n"  # the long pair's line went too
    assert stats["train_links"]["pairs"] == 3 and stats["train_links"]["links"] == 4
    src, tgt = load_split(tmp_path / "out" / "train.pt")
    links = load_training_links(tmp_path / "out" / "train.links", src, tgt)
    assert [x.tolist() for x in links] == [[[0, 0], [1, 1]], [[0, 1], [2, 0]], []]

    (raw / "train.links").write_text("0-0\n0-0\n0-0\n")
    with pytest.raises(CorpusError, match="train.links: 3 lines of links but 4 raw training pairs"):
        prepare(raw, tmp_path / "out2", **kwargs)
    (raw / "train.links").write_text("0-0\n0-0\n0-0 3-1\n0-0\n")
    with pytest.raises(CorpusError, match=r"train.links:3: link 3-1 lies outside the sentence pair \(3 source"):
        prepare(raw, tmp_path / "out2", **kwargs)
    with pytest.raises(CorpusError, match="tokenize: true"):
        prepare(raw, tmp_path / "out2", **{**kwargs, "tokenize": True})
    with pytest.raises(CorpusError, match="2 lines of links but 3 training pairs"):
        (tmp_path / "short.links").write_text("0-0\n0-0\n")
        load_training_links(tmp_path / "short.links", src, tgt)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """A synthetic corpus whose raw training split comes with its generator's links; the length filter drops some."""
    root = tmp_path_factory.mktemp("rnnsearch")
    generate(root / "raw", seed=3, n_train=150, n_dev=12, n_test=6, n_align=3, max_len=10)
    triples = list(generate_pairs(3, "train", 150, max_len=10, lexicon=build_lexicon(3)))
    assert [t[0] for t in triples] == (root / "raw" / "train.src").read_text().splitlines()
    (root / "raw" / "train.links").write_text("".join(t[2] + "\n" for t in triples))
    stats = prepare(
        root / "raw",
        root / "prep",
        splits=["train", "dev", "test"],
        src_lang="en",
        tgt_lang="de",
        max_len=8,
        src_vocab=60,
        tgt_vocab=60,
    )
    assert 0 < stats["train_dropped_by_length"] < 75
    kept = [t for t in triples if len(t[0].split()) <= 8 and len(t[1].split()) <= 8]
    assert (root / "prep" / "train.links").read_text().splitlines() == [t[2] for t in kept]
    return root


def system_config(**sections):
    config = cfg.load_params(ROOT / "params.yaml", "tiny")
    config["model"].update(arch="rnnsearch", hidden=8, embed=8, attention_dim=6)
    config["train"].update(
        epochs=1,
        halve_after=1,
        batch_size=16,
        optimizer="adadelta",
        lr=1.0,
        clip_norm=1.0,
        dropout_schedule={"epochs": 1, "halve_after": 1},
        plateau=None,
        keep="last",
    )
    for section, values in sections.items():
        config[section].update(values)
    cfg.validate(config, "test")
    return config


def final(out: Path):
    metrics = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    for m in metrics:
        m.pop("elapsed_s")
        m.pop("tgt_tokens_per_s")
    return metrics, torch.load(out / "model.pt", weights_only=True)["model"]


def assert_same(a, b):
    assert a[0] == b[0]
    assert a[1].keys() == b[1].keys() and all(torch.equal(a[1][k], b[1][k]) for k in a[1])


def test_settings_added_later_at_their_defaults_do_not_invalidate_checkpoints():
    from nmt.bench.estimate import cost_key

    config = system_config()
    config["model"].update(arch="luong", attention_dim=0)  # params.yaml's defaults
    older = {
        **config,
        "model": {k: v for k, v in config["model"].items() if k not in settings.ADDED["model"]},
        "train": {k: v for k, v in config["train"].items() if k not in settings.ADDED["train"]},
    }
    assert settings.comparable_settings(older) == settings.comparable_settings(config)
    size = {"src_vocab": 10, "tgt_vocab": 10}
    assert cost_key(older, size) == cost_key(config, size)
    config["model"]["arch"] = "rnnsearch"
    assert settings.comparable_settings(older) != settings.comparable_settings(config)


def test_seeded_training_is_reproducible_and_frozen_tf_training_changes_only_the_attention(corpus, monkeypatch):
    data = corpus / "prep"
    # AdaDelta as in Blocks / Bahdanau et al.: rho 0.95, eps 1e-6, lr 1.0
    group = make_optimizer(
        [torch.nn.Parameter(torch.zeros(1))], TrainSettings.from_dict(system_config()["train"])
    ).param_groups[0]
    assert (group["rho"], group["eps"], group["lr"]) == (0.95, 1e-6, 1.0)
    base = system_config(train={"max_updates": 6})
    train(base, data, corpus / "base_a", progress=False)
    train(base, data, corpus / "base_b", progress=False)
    assert_same(final(corpus / "base_a"), final(corpus / "base_b"))  # seeded CPU runs are identical
    metrics, baseline = final(corpus / "base_a")
    assert metrics[-1]["updates"] == 6 and math.isfinite(metrics[-1]["train_loss"])

    frozen = system_config(
        model={"target_foresight": True},
        train={"init_from": str(corpus / "base_a" / "model.pt"), "trainable": "attention", "max_updates": 5, "seed": 2},
    )
    train(frozen, data, corpus / "tf", progress=False)
    metrics, tf = final(corpus / "tf")
    assert metrics[-1]["updates"] == 5
    assert set(tf) - set(baseline) == {"attention.V.weight"}
    for name, value in baseline.items():
        if name.startswith("attention."):
            assert not torch.equal(tf[name], value), f"{name} did not move"
        else:
            assert torch.equal(tf[name], value), f"{name} changed"
    meta = json.loads((corpus / "tf" / "model.json").read_text())
    assert meta["trainable_parameters"] == sum(v.numel() for k, v in tf.items() if k.startswith("attention."))

    # killed (SIGTERM) after 2 updates and rerun: the same result as uninterrupted
    monkeypatch.setattr(train_module, "StopRequested", StopAfter(2))
    with pytest.raises(SystemExit) as stopped:
        train(frozen, data, corpus / "tf_killed", progress=False)
    assert stopped.value.code == 128 + signal.SIGTERM
    assert not (corpus / "tf_killed" / "model.pt").exists()
    monkeypatch.setattr(train_module, "StopRequested", StopAfter(10**9))
    train(frozen, data, corpus / "tf_killed", progress=False)
    assert_same(final(corpus / "tf"), final(corpus / "tf_killed"))

    # the TF model aligns a reference (forced decoding) ...
    model, src_vocab, tgt_vocab, _ = load_models([str(corpus / "tf" / "model.pt")], "cpu")
    src, tgt = (
        (corpus / "prep" / "test.src").read_text().splitlines()[0],
        (corpus / "prep" / "test.tgt").read_text().splitlines()[0],
    )
    weights = forced_attention(model, src_vocab.encode(src), tgt_vocab.encode(tgt))
    assert weights.shape == (len(tgt.split()), len(src.split()))
    torch.testing.assert_close(weights.sum(-1), torch.ones(len(tgt.split())))
    # ... and init_from refuses a model of other vocabularies or architecture
    other = system_config(
        model={"arch": "luong", "attention": "global", "score": "general"},
        train={"init_from": str(corpus / "base_a" / "model.pt"), "max_updates": 1},
    )
    with pytest.raises(ConfigError, match="is a rnnsearch model; this system is luong"):
        train(other, data, corpus / "other", progress=False)


def test_guided_alignment_training_runs_with_the_filtered_links(corpus):
    data = corpus / "prep"
    guided = system_config(
        model={"target_foresight": True},
        train={"guided_alignment": {"weight": 1.0, "file": "train.links"}, "max_updates": 8},
    )
    train(guided, data, corpus / "ga", progress=False)
    metrics, params = final(corpus / "ga")
    assert math.isfinite(metrics[-1]["train_align_loss"]) and metrics[-1]["train_align_loss"] > 0
    plain = system_config(model={"target_foresight": True}, train={"max_updates": 8})
    train(plain, data, corpus / "no_ga", progress=False)
    other_metrics, other = final(corpus / "no_ga")
    assert "train_align_loss" not in other_metrics[-1]
    assert not torch.equal(params["attention.W.weight"], other["attention.W.weight"])
    luong = system_config(
        model={"arch": "luong", "attention": "global", "score": "general"},
        train={"guided_alignment": {"weight": 1.0, "file": str(data / "train.links")}, "max_updates": 3},
    )
    train(luong, data, corpus / "ga_luong", progress=False)  # Luong's attention can be guided too
    assert math.isfinite(final(corpus / "ga_luong")[0][-1]["train_align_loss"])
    bad = system_config(train={"guided_alignment": {"weight": 1.0, "file": "missing.links"}})
    with pytest.raises(CorpusError, match="missing.links: no such file"):
        train(bad, data, corpus / "bad", progress=False)


def test_nmt_train_translate_and_attention_end_to_end(corpus, tmp_path, capsys):
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    params.update(presets_dir=str(tmp_path / "presets"), tables=[str(tmp_path / "table.yaml")], figures=[])
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    (tmp_path / "presets").mkdir()
    preset = yaml.safe_load((ROOT / "workflow/presets/tiny.yaml").read_text())
    preset["model"].update(hidden=8, embed=8)
    preset["train"].update(
        epochs=1,
        halve_after=1,
        batch_size=16,
        optimizer="adadelta",
        lr=1.0,
        max_updates=4,
        dropout_schedule={"epochs": 1, "halve_after": 1},
        plateau=None,
    )
    (tmp_path / "presets" / "unit.yaml").write_text(yaml.safe_dump(preset))
    table = {
        "id": "t",
        "title": "t",
        "paper": "p",
        "task": "en-de",
        "testset": "test",
        "columns": ["ppl"],
        "rows": [{"label": "rnnsearch", "system": "rnnsearch", "paper": {}}],
        "systems": {"rnnsearch": {"model": {"arch": "rnnsearch"}}},
    }
    (tmp_path / "table.yaml").write_text(yaml.safe_dump(table))
    out = tmp_path / "model"
    common = ["--params", str(tmp_path / "params.yaml"), "--preset", "unit"]
    assert (
        main(
            [
                "train",
                *common,
                "--table",
                str(tmp_path / "table.yaml"),
                "--system",
                "rnnsearch",
                "--data",
                str(corpus / "prep"),
                "--out",
                str(out),
                "--threads",
                "1",
                "--device",
                "cpu",
            ]
        )
        == 0
    )
    assert json.loads((out / "model.json").read_text())["config"]["model"]["arch"] == "rnnsearch"
    hyp, positions = tmp_path / "hyp.txt", tmp_path / "pos.txt"
    assert (
        main(
            [
                "translate",
                "--model",
                str(out / "model.pt"),
                "--src",
                str(corpus / "prep" / "test.src"),
                "--out",
                str(hyp),
                "--positions-out",
                str(positions),
                "--beam",
                "2",
                "--threads",
                "1",
            ]
        )
        == 0
    )
    lines = hyp.read_text().splitlines()
    assert len(lines) == 6
    assert [len(p.split()) for p in positions.read_text().splitlines()] == [len(h.split()) for h in lines]
    attention = tmp_path / "attention.json"
    assert (
        main(
            [
                "attention",
                "--model",
                str(out / "model.pt"),
                "--src",
                str(corpus / "prep" / "test.src"),
                "--tgt",
                str(corpus / "prep" / "test.tgt"),
                "--line",
                "2",
                "--out",
                str(attention),
                "--threads",
                "1",
            ]
        )
        == 0
    )
    result = json.loads(attention.read_text())
    assert len(result["weights"]) == len(result["tgt"]) and len(result["weights"][0]) == len(result["src"])
    # a target foresight model: `nmt translate` stops at once, naming the file
    blob = torch.load(out / "model.pt", weights_only=True)
    blob["model_config"] = {**blob["model_config"], "target_foresight": True}
    torch.manual_seed(0)
    tf = build_model(ModelSettings.read(blob["model_config"]), len(blob["src_vocab"]), len(blob["tgt_vocab"]))
    blob["model"] = tf.state_dict()
    tf_model = tmp_path / "tf" / "model.pt"
    tf_model.parent.mkdir()
    save_torch(blob, tf_model)
    capsys.readouterr()
    assert (
        main(
            [
                "translate",
                "--model",
                str(tf_model),
                "--src",
                str(corpus / "prep" / "test.src"),
                "--out",
                str(tmp_path / "tf.txt"),
            ]
        )
        == 2
    )
    assert f"{tf_model}: target foresight models align given a reference" in capsys.readouterr().err
    assert not (tmp_path / "tf.txt").exists()
    assert (
        main(
            [
                "attention",
                "--model",
                str(tf_model),
                "--src",
                str(corpus / "prep" / "test.src"),
                "--tgt",
                str(corpus / "prep" / "test.tgt"),
                "--line",
                "1",
                "--out",
                str(attention),
                "--threads",
                "1",
            ]
        )
        == 0
    )
