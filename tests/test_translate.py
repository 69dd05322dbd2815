"""Greedy and beam search: beam 1 == greedy, batched == one sentence at a time, scores == forced decoding."""
import pytest
import torch

from nmt.data.batches import make_batch
from nmt.data.vocab import EOS_ID
from nmt.likelihood import batch_nll
from nmt.models.monotonic import set_monotonic_mode
from nmt.models.seq2seq import Seq2Seq
from nmt.translate import beam_search, greedy, translate_ids

CONFIGS = [
    {"attention": "none", "input_feed": False, "reverse": True},
    {"attention": "global", "score": "general", "input_feed": True, "reverse": False},
    {"attention": "global", "score": "location", "input_feed": False, "reverse": True},
    {"attention": "local-p", "score": "general", "input_feed": True, "reverse": True, "window": 2},
    # Raffel et al.: monotonic attention decoded by its expected alignment (soft), and by the hard linear-time
    # process (bias 0 so that the untrained model's pointers stop and move rather than run off at once)
    {"attention": "monotonic", "energy": "eq16", "input_feed": False},
    {"attention": "monotonic", "energy": "eq17", "energy_bias": 0.0, "input_feed": True, "hard": True},
]


def make_model(overrides, seed=0):
    torch.manual_seed(seed)
    cfg = {"layers": 2, "hidden": 16, "embed": 8, "dropout": 0.0, "reverse": False, "attention": "global",
           "score": "dot", "input_feed": False, "max_src_len": 12}
    cfg.update(overrides)
    hard = cfg.pop("hard", False)
    model = Seq2Seq(cfg, src_vocab=20, tgt_vocab=15)
    model.init_uniform(0.5)  # larger than the recipe's 0.1 so that the untrained model's choices vary
    model.eval()
    if hard:
        set_monotonic_mode(model, "hard")
    return model


def sources():
    gen = torch.Generator().manual_seed(7)
    return [torch.randint(4, 20, (int(n),), generator=gen).tolist() for n in (5, 1, 9, 3, 12, 7)]


@pytest.mark.parametrize("overrides", CONFIGS)
def test_beam_one_equals_greedy(overrides):
    model = make_model(overrides)
    srcs = sources()
    batch = make_batch(srcs, None, list(range(len(srcs))))
    g = greedy(model, batch.src, batch.src_len)
    b = beam_search(model, batch.src, batch.src_len, beam=1)
    assert [h.tokens for h in g] == [h.tokens for h in b]
    for x, y in zip(g, b):
        assert x.score == pytest.approx(y.score, abs=1e-4)


@pytest.mark.parametrize("overrides", CONFIGS)
@pytest.mark.parametrize("beam", [1, 4])
def test_batched_equals_one_by_one(overrides, beam):
    model = make_model(overrides, seed=1)
    srcs = sources()
    batched = translate_ids(model, srcs, beam=beam, batch_size=4, max_len_ratio=2.0, device="cpu", progress=False)
    for src, hyp in zip(srcs, batched):
        single = translate_ids(model, [src], beam=beam, batch_size=1, max_len_ratio=2.0, device="cpu",
                               progress=False)[0]
        assert hyp.tokens == single.tokens
        assert hyp.score == pytest.approx(single.score, abs=1e-4)


@pytest.mark.parametrize("overrides", CONFIGS)
def test_beam_scores_equal_forced_decoding_and_beat_greedy(overrides):
    model = make_model(overrides, seed=2)
    srcs = sources()
    batch = make_batch(srcs, None, list(range(len(srcs))))
    greedy_hyps = greedy(model, batch.src, batch.src_len)
    beam_hyps = beam_search(model, batch.src, batch.src_len, beam=5)
    for i, hyp in enumerate(beam_hyps):
        assert hyp.score >= greedy_hyps[i].score - 1e-4  # a wider search never finds a worse best
        limit = int(len(srcs[i]) * 2.0) + 10
        if len(hyp.tokens) < limit:  # ended with </s>: its score is the forced-decoding log-likelihood
            forced = make_batch([srcs[i]], [hyp.tokens], [0])
            assert -float(batch_nll(model, forced).detach()) == pytest.approx(hyp.score, abs=1e-3)
        assert EOS_ID not in hyp.tokens


def test_length_limit_is_respected():
    model = make_model(CONFIGS[0], seed=3)
    srcs = [[5, 6]]
    hyps = translate_ids(model, srcs, beam=3, batch_size=1, max_len_ratio=0.5, device="cpu", progress=False)
    assert len(hyps[0].tokens) <= int(2 * 0.5) + 10


@pytest.mark.parametrize("beam", [1, 3])
def test_hypotheses_carry_the_attended_source_word_of_each_token(beam):
    """positions[i] is the argmax of the attention weights at the step that emitted token i (forced decoding
    of the hypothesis gives the same weights), in written source order; none without attention."""
    model = make_model({"attention": "global", "score": "general", "input_feed": True, "reverse": True}, seed=4)
    srcs = sources()
    hyps = translate_ids(model, srcs, beam=beam, batch_size=3, max_len_ratio=2.0, device="cpu", progress=False)
    for src, hyp in zip(srcs, hyps):
        assert len(hyp.positions) == len(hyp.tokens)
        if not hyp.tokens:
            continue
        forced = make_batch([src], [hyp.tokens], [0])
        _, weights = model(forced.src, forced.src_len, forced.tgt_in)
        assert weights[0, :len(hyp.tokens)].argmax(-1).tolist() == hyp.positions
        assert all(0 <= p < len(src) for p in hyp.positions)
    plain = translate_ids(make_model({"attention": "none"}), srcs, beam=beam, batch_size=3, max_len_ratio=2.0,
                          device="cpu", progress=False)
    assert all(h.positions == [] for h in plain)


@pytest.mark.parametrize("beam", [1, 3])
def test_hard_monotonic_decoding_attends_left_to_right(beam):
    """Within a hypothesis the hard process' attended source words never go back and lie in the sentence (once
    it ran past the end: the last word); the pointer travels with its hypothesis through beam search's
    reordering."""
    model = make_model(CONFIGS[-1], seed=3)
    # An untrained model's energies barely vary along the sentence (every pointer stops at once or runs off):
    # let each (state, key) pair decide, pseudo-randomly but deterministically, whether the process stops there.
    model.attention.energies_at = lambda query, keys: torch.where(
        ((keys[:, 0] * 1e4).long() + (query[:, 0] * 1e4).long()).remainder(3) == 0, 5.0, -5.0)
    srcs = sources()
    hard = translate_ids(model, srcs, beam=beam, batch_size=6, max_len_ratio=2.0, device="cpu", progress=False)
    moved = 0
    for src, hyp in zip(srcs, hard):
        assert all(0 <= p < len(src) for p in hyp.positions)
        assert hyp.positions == sorted(hyp.positions)
        moved += len(set(hyp.positions)) > 1
    assert moved >= 2
