"""Greedy and beam search: beam 1 == greedy, batched == one sentence at a time, scores == forced decoding; the
batched search == the plain Python reference (nmt.decode.search_reference), without reading values back every step."""

from dataclasses import dataclass

import pytest
import torch

import nmt.decode.translate as translate
from nmt.data.batches import make_batch
from nmt.data.vocab import EOS_ID
from nmt.decode.search_reference import beam_search_reference, greedy_reference
from nmt.decode.translate import beam_search, greedy, max_lengths, translate_ids
from nmt.models.ensemble import Ensemble
from nmt.models.monotonic import set_monotonic_mode
from nmt.scoring.likelihood import batch_nll

from factories import SMALL_RNNSEARCH, TWO_LAYER_LUONG, make_model, model_config, random_ids

BASE = model_config(TWO_LAYER_LUONG, without=("window",), reverse=False, score="dot", input_feed=False)

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


def translator(overrides, seed=0):
    """The model of a CONFIGS entry as nmt translate runs it: on the fast engine, in eval mode, with monotonic
    attention decoded by the hard process where the entry says "hard"."""
    overrides = dict(overrides)
    hard = overrides.pop("hard", False)
    model = make_model(seed, BASE, engine="fast", **overrides)
    if hard:
        set_monotonic_mode(model, "hard")
    return model


def sources():
    return random_ids((5, 1, 9, 3, 12, 7), 20, seed=7)


@pytest.mark.parametrize("overrides", CONFIGS)
def test_beam_one_equals_greedy(overrides):
    model = translator(overrides)
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
    model = translator(overrides, seed=1)
    srcs = sources()
    batched = translate_ids(model, srcs, beam=beam, batch_size=4, max_len_ratio=2.0, device="cpu", progress=False)
    for src, hyp in zip(srcs, batched):
        single = translate_ids(model, [src], beam=beam, batch_size=1, max_len_ratio=2.0, device="cpu", progress=False)[
            0
        ]
        assert hyp.tokens == single.tokens
        assert hyp.score == pytest.approx(single.score, abs=1e-4)


@pytest.mark.parametrize("overrides", CONFIGS)
def test_beam_scores_equal_forced_decoding_and_beat_greedy(overrides):
    model = translator(overrides, seed=2)
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
    model = translator(CONFIGS[0], seed=3)
    srcs = [[5, 6]]
    hyps = translate_ids(model, srcs, beam=3, batch_size=1, max_len_ratio=0.5, device="cpu", progress=False)
    assert len(hyps[0].tokens) <= int(2 * 0.5) + 10


@pytest.mark.parametrize("beam", [1, 3])
def test_hypotheses_carry_the_attended_source_word_of_each_token(beam):
    """positions[i] is the argmax of the attention weights at the step that emitted token i (forced decoding
    of the hypothesis gives the same weights), in written source order; none without attention."""
    model = translator({"attention": "global", "score": "general", "input_feed": True, "reverse": True}, seed=4)
    srcs = sources()
    hyps = translate_ids(model, srcs, beam=beam, batch_size=3, max_len_ratio=2.0, device="cpu", progress=False)
    for src, hyp in zip(srcs, hyps):
        assert len(hyp.positions) == len(hyp.tokens)
        if not hyp.tokens:
            continue
        forced = make_batch([src], [hyp.tokens], [0])
        _, weights = model(forced.src, forced.src_len, forced.tgt_in)
        assert weights[0, : len(hyp.tokens)].argmax(-1).tolist() == hyp.positions
        assert all(0 <= p < len(src) for p in hyp.positions)
    plain = translate_ids(
        translator({"attention": "none"}),
        srcs,
        beam=beam,
        batch_size=3,
        max_len_ratio=2.0,
        device="cpu",
        progress=False,
    )
    assert all(h.positions == [] for h in plain)


@pytest.mark.parametrize("beam", [1, 3])
def test_hard_monotonic_decoding_attends_left_to_right(beam):
    """Within a hypothesis the hard process' attended source words never go back and lie in the sentence (once
    it ran past the end: the last word); the pointer travels with its hypothesis through beam search's
    reordering."""
    model = translator(CONFIGS[-1], seed=3)
    # An untrained model's energies barely vary along the sentence (every pointer stops at once or runs off):
    # let each (state, key) pair decide, pseudo-randomly but deterministically, whether the process stops there.
    model.attention.energies_at = lambda query, keys: torch.where(
        ((keys[:, 0] * 1e4).long() + (query[:, 0] * 1e4).long()).remainder(3) == 0, 5.0, -5.0
    )
    srcs = sources()
    hard = translate_ids(model, srcs, beam=beam, batch_size=6, max_len_ratio=2.0, device="cpu", progress=False)
    moved = 0
    for src, hyp in zip(srcs, hard):
        assert all(0 <= p < len(src) for p in hyp.positions)
        assert hyp.positions == sorted(hyp.positions)
        moved += len(set(hyp.positions)) > 1
    assert moved >= 2


# -- the batched search against the plain reference ----------------------------------------------------------------
def make_rnnsearch(seed):
    return make_model(seed, SMALL_RNNSEARCH, engine="fast")


def make_ensemble(seed):
    return Ensemble([translator(CONFIGS[1], seed), translator(CONFIGS[3], seed + 1)])


SEARCH_MODELS = [pytest.param(lambda seed, c=c: translator(c, seed), id=f"config{i}") for i, c in enumerate(CONFIGS)]
SEARCH_MODELS += [pytest.param(make_rnnsearch, id="rnnsearch"), pytest.param(make_ensemble, id="ensemble")]


@dataclass
class CountedState:
    inner: object
    step: int

    def select(self, index):
        return CountedState(self.inner.select(index), self.step)


class LengthPressure:
    """A model whose </s> gets likelier (slope > 0) or less likely (slope < 0) with every step, and likelier after some
    words, renormalised. The untrained models above often end at once or run to the length limit; with a positive
    slope hypotheses end with </s> at varied steps and ranks, with a negative one most reach the limit."""

    def __init__(self, model, slope):
        self.model, self.slope = model, slope
        self.offset = -3 * slope if slope > 0 else -2.0  # at step 0, </s> a little less likely

    def encode(self, src, src_len):
        return self.model.encode(src, src_len)

    def initial_state(self, enc):
        return CountedState(self.model.initial_state(enc), 0)

    def step(self, prev, enc, state):
        log_probs, inner, weights = self.model.step(prev, enc, state.inner)
        log_probs = log_probs.clone()
        log_probs[:, EOS_ID] += self.slope * state.step + self.offset + 1.5 * (prev % 3 == 0)
        return torch.log_softmax(log_probs, dim=-1), CountedState(inner, state.step + 1), weights


@dataclass
class Rows:
    x: torch.Tensor

    def select(self, index):
        return Rows(self.x.index_select(0, index))


class TableModel:
    """Log-probabilities looked up in a table of coarse values by a hash of the history: many equal scores (ties in
    the ranking and among finished hypotheses), impossible words (-inf) and dead ends (a row all -inf: a sentence
    may finish no hypothesis at all); attention one-hot on a pseudo-random source word, or nowhere."""

    def __init__(self, seed, width, vocab=7, rows=23):
        self.width = width  # of the batch's source
        gen = torch.Generator().manual_seed(seed)
        self.table = -torch.randint(0, 5, (rows, vocab), generator=gen).float() * 0.5
        self.table[torch.rand(rows, vocab, generator=gen) < 0.25] = float("-inf")
        self.table[torch.rand(rows, generator=gen) < 0.08] = float("-inf")
        self.table[:, EOS_ID] -= torch.randint(0, 3, (rows,), generator=gen).float()

    def encode(self, src, src_len):
        return Rows(src_len.clone())

    def initial_state(self, enc):
        return Rows(torch.ones_like(enc.x))

    def step(self, prev, enc, state):
        h = (state.x * 31 + prev * 7 + 3) % 1009
        width = self.width
        weights = torch.nn.functional.one_hot(h % width, width).float()
        weights[h % 5 == 0] = 0.0
        return self.table[h % self.table.size(0)], Rows(h), weights


def assert_same_hypotheses(new, reference):
    assert [h.tokens for h in new] == [h.tokens for h in reference]
    assert [h.positions for h in new] == [h.positions for h in reference]
    for n, r in zip(new, reference):
        assert n.score == pytest.approx(r.score, abs=1e-4)


def search_both(model, batch, ratio):
    """Greedy, beam 1, 3 and 5, each by the batched search and by the reference: [(new, reference), ...]."""
    pairs = [(greedy(model, batch.src, batch.src_len, ratio), greedy_reference(model, batch.src, batch.src_len, ratio))]
    for beam in (1, 3, 5):
        pairs.append(
            (
                beam_search(model, batch.src, batch.src_len, beam, ratio),
                beam_search_reference(model, batch.src, batch.src_len, beam, ratio),
            )
        )
    return pairs


@pytest.mark.parametrize("build", SEARCH_MODELS)
@pytest.mark.parametrize("slope", [None, 0.2, -1.0], ids=["plain", "eos-sooner", "eos-later"])
def test_batched_search_equals_the_reference(build, slope):
    """Same tokens and attended source words as the plain Python search, scores to float tolerance, for every kind of
    model, on sentences of 1 to 12 words; a short length limit (ratio 0.3) ends hypotheses without </s>."""
    model = build(7)
    if slope is not None:
        model = LengthPressure(model, slope)
    srcs = sources()
    batch = make_batch(srcs, None, list(range(len(srcs))))
    at_limit = ended = 0
    for ratio in (2.0, 0.3):
        limits = max_lengths(batch.src_len, ratio).tolist()
        for new, reference in search_both(model, batch, ratio):
            assert_same_hypotheses(new, reference)
            at_limit += sum(len(h.tokens) == n for h, n in zip(new, limits))
            ended += sum(0 < len(h.tokens) < n for h, n in zip(new, limits))
    if slope is not None:
        assert (ended if slope > 0 else at_limit) > 0


def test_batched_search_equals_the_reference_with_ties_and_dead_ends():
    """Coarse log-probabilities: equal scores (the ranking's order and the first of equal finished hypotheses must
    be kept), -inf continuations, </s> ranked beyond the beam, more than `beam` finished in one step, sentences
    that finish nothing (Hypothesis([], -inf)), attention rows without weight."""
    srcs = sources()
    batch = make_batch(srcs, None, list(range(len(srcs))))
    nothing = 0
    for seed in range(40):
        model = TableModel(seed, batch.src.size(1))
        for ratio in (2.0, 0.3):
            for new, reference in search_both(model, batch, ratio):
                assert_same_hypotheses(new, reference)
                nothing += sum(h.score == float("-inf") and not h.tokens for h in new)
    assert nothing > 0


READS = ("tolist", "item", "__bool__", "__int__", "__float__", "__index__", "cpu", "numpy")


class ReadWatcher:
    """Wraps a model and records, by the number of steps taken so far, every read of a tensor's values back to
    Python (tolist, item, bool(), int(), float(), .cpu(), ...) made outside the model's own calls: on a GPU each
    is a host synchronisation."""

    def __init__(self, model, patch):
        self.model, self.steps, self.inside, self.reads = model, 0, False, []
        for name in READS:
            original = getattr(torch.Tensor, name)

            def read(tensor, *args, _original=original, **kwargs):
                if not self.inside:
                    self.reads.append(self.steps)
                return _original(tensor, *args, **kwargs)

            patch.setattr(torch.Tensor, name, read)

    def _inside(self, call, *args):
        self.inside = True
        try:
            return call(*args)
        finally:
            self.inside = False

    def encode(self, src, src_len):
        return self._inside(self.model.encode, src, src_len)

    def initial_state(self, enc):
        return self._inside(self.model.initial_state, enc)

    def step(self, prev, enc, state):
        self.steps += 1
        return self._inside(self.model.step, prev, enc, state)


@pytest.mark.parametrize("overrides", [CONFIGS[1], CONFIGS[-1]], ids=["global", "hard-monotonic"])
@pytest.mark.parametrize("beam", [1, 3])
def test_search_reads_nothing_back_inside_its_step_loop(overrides, beam, monkeypatch):
    """Between the first and the last step the search reads at most one value back every DONE_CHECK_EVERY (8)
    steps (whether every sentence is done), as on a GPU (on a CPU it reads after every step: the read costs nothing
    there); the reference, which reads every step, shows the watcher works."""
    monkeypatch.setattr(translate, "done_check_every", lambda device: translate.DONE_CHECK_EVERY)
    model = LengthPressure(translator(overrides, seed=1), -1.0)  # most sentences run to their length limit
    srcs = sources()
    batch = make_batch(srcs, None, list(range(len(srcs))))
    runs = {}
    for name, search in (
        ("batched", greedy if beam == 1 else beam_search),
        ("reference", greedy_reference if beam == 1 else beam_search_reference),
    ):
        with monkeypatch.context() as patch:
            watcher = ReadWatcher(model, patch)
            args = () if beam == 1 else (beam,)
            search(watcher, batch.src, batch.src_len, *args)
        runs[name] = watcher.steps, [s for s in watcher.reads if 0 < s < watcher.steps]
    steps, reads = runs["batched"]
    assert steps >= 16
    assert translate.DONE_CHECK_EVERY >= 8
    assert len(reads) <= steps // 8
    steps, reads = runs["reference"]
    assert len(set(reads)) == steps - 1  # after every step but the last


@pytest.mark.parametrize("beam", [1, 3])
def test_on_a_cpu_the_search_stops_at_the_step_where_the_last_sentence_ends(beam, monkeypatch):
    """No step past the end of the batch's longest output (a GPU may take up to DONE_CHECK_EVERY - 1 more), and the
    same output as with the GPU's rule."""
    model = translator(CONFIGS[1], seed=1)
    srcs = sources()
    batch = make_batch(srcs, None, list(range(len(srcs))))
    search = (
        (lambda m: greedy(m, batch.src, batch.src_len))
        if beam == 1
        else (lambda m: beam_search(m, batch.src, batch.src_len, beam))
    )
    with monkeypatch.context() as patch:
        watcher = ReadWatcher(model, patch)
        every_step = search(watcher)
    with monkeypatch.context() as patch:
        patch.setattr(translate, "done_check_every", lambda device: translate.DONE_CHECK_EVERY)
        watcher_gpu_rule = ReadWatcher(model, patch)
        every_eighth = search(watcher_gpu_rule)
    assert [(h.tokens, h.score) for h in every_step] == [(h.tokens, h.score) for h in every_eighth]
    if beam == 1:  # greedy: a sentence is done at its </s> (one step after its words) or at its length limit
        limits = max_lengths(batch.src_len, 2.0).tolist()
        assert watcher.steps == max(min(len(h.tokens) + 1, limit) for h, limit in zip(every_step, limits))
    assert watcher.steps <= watcher_gpu_rule.steps
