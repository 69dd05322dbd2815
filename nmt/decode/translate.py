"""`nmt translate`: greedy and batched beam search with a trained model.

Both searches decode a whole mini-batch of sentences at once; every sentence's result is independent of
the others in its batch (tests check batched == one-by-one, and beam size 1 == greedy).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import torch
from tqdm import tqdm

from ..base.errors import ConfigError
from ..data.batches import bucketed_batches, make_batch
from ..data.vocab import BOS_ID, EOS_ID
from ..engine.decoding_cache import decoding_cache
from ..models.rnnsearch import CANNOT_TRANSLATE


@dataclass
class Hypothesis:
    tokens: list[int]  # without </s>
    score: float  # summed log-probability (incl. </s> when the hypothesis ended with it)
    # For each token, the source word (written order) with the highest attention weight at the step that emitted
    # it: what unk replacement copies or looks up. Empty for models without attention.
    positions: list[int] = field(default_factory=list)


def ensure_can_translate(model) -> None:
    """A ConfigError naming the model file when `model` (or a member of an ensemble) cannot decode freely: a target
    foresight model needs the reference word in its attention, so it aligns but does not translate."""
    for member in getattr(model, "models", None) or [model]:
        if getattr(member, "target_foresight", False):
            where = getattr(member, "source_path", None) or "this model"
            raise ConfigError(
                f"{where}: {CANNOT_TRANSLATE} (model.target_foresight: true); use it with "
                "forced decoding (nmt attention, alignment extraction) instead"
            )


def attended_words(weights: torch.Tensor, src_len: torch.Tensor) -> torch.Tensor:
    """The source word each row of weights [N, S] attends to most. A row without weight (hard monotonic attention
    that ran past the sentence's end: zero context) gives the last word, the one the process saw last."""
    attended = weights.argmax(dim=-1)
    none = weights.sum(dim=-1) == 0
    return torch.where(none, src_len.to(attended.device) - 1, attended)


def max_lengths(src_len: torch.Tensor, ratio: float) -> torch.Tensor:
    return (src_len.float() * ratio).long() + 10


# Inside their step loops both searches keep everything on the model's device: no value is read back to Python
# except "is every sentence done?", which lets the loop stop early. On a GPU that read is a host synchronisation (the
# host waits for the queued steps to finish, and the device then idles while the next step is launched), so it is
# made only every DONE_CHECK_EVERY steps, not every step: a batch then takes at most DONE_CHECK_EVERY - 1 steps
# more than needed (never beyond its longest length limit), and they change nothing (done sentences are masked out).
# On a CPU the read costs nothing and the extra steps would: it checks after every step. Either way the output is
# the same.
DONE_CHECK_EVERY = 8


def done_check_every(device: torch.device) -> int:
    """After how many steps a search reads whether every sentence is done (see DONE_CHECK_EVERY)."""
    return 1 if device.type == "cpu" else DONE_CHECK_EVERY


def _score_dtype(device: torch.device) -> torch.dtype:
    """Summed log-probabilities in double precision, as the plain Python search does (its floats are doubles);
    single precision on devices without float64."""
    return torch.float32 if device.type == "mps" else torch.float64


def _decoding(search):
    """Run a search with the model's decoding cache open (its rearranged decoder weights computed once)."""

    @functools.wraps(search)
    def run(model, *args, **kwargs):
        with decoding_cache(model):
            return search(model, *args, **kwargs)

    return run


@_decoding
@torch.no_grad()
def greedy(model, src: torch.Tensor, src_len: torch.Tensor, max_len_ratio: float = 2.0) -> list[Hypothesis]:
    """Greedy search: per sentence, the most probable word at every step until </s> or the sentence's length limit
    (`max_lengths`); the score sums the chosen words' log-probabilities, </s> included.

    Every step is tensor operations on the model's device: the argmax of every step goes into [batch, steps] buffers
    and a sentence's tokens are their first `lengths` columns (once done, a sentence emits nothing more)."""
    ensure_can_translate(model)
    batch, device = src.size(0), src.device
    enc = model.encode(src, src_len)
    state = model.initial_state(enc)
    limits = max_lengths(src_len, max_len_ratio).to(device)
    steps = int(limits.max())  # one read per batch
    prev = torch.full((batch,), BOS_ID, dtype=torch.long, device=device)
    tokens = torch.zeros(batch, steps, dtype=torch.long, device=device)
    positions = torch.zeros(batch, steps, dtype=torch.long, device=device)
    lengths = torch.zeros(batch, dtype=torch.long, device=device)
    scores = torch.zeros(batch, dtype=_score_dtype(device), device=device)
    finished = torch.zeros(batch, dtype=torch.bool, device=device)
    attends = False
    check_every = done_check_every(device)
    for t in range(steps):
        log_probs, state, weights = model.step(prev, enc, state)
        best_scores, best = log_probs.max(dim=-1)
        active = ~finished
        scores += best_scores.to(scores.dtype).masked_fill(finished, 0.0)
        ended = best == EOS_ID
        tokens[:, t] = best
        if weights is not None:
            attends = True
            positions[:, t] = attended_words(weights, src_len)
        lengths += active & ~ended
        finished |= active & (ended | (t + 1 >= limits))
        if (t + 1) % check_every == 0 and bool(finished.all()):
            break
        prev = best
    lengths_, scores_, tokens_ = lengths.tolist(), scores.tolist(), tokens.tolist()
    positions_ = positions.tolist() if attends else None
    return [
        Hypothesis(tokens_[b][:n], scores_[b], positions_[b][:n] if attends else []) for b, n in enumerate(lengths_)
    ]


@_decoding
@torch.no_grad()
def beam_search(
    model, src: torch.Tensor, src_len: torch.Tensor, beam: int, max_len_ratio: float = 2.0
) -> list[Hypothesis]:
    """Batched beam search; the best finished hypothesis (highest summed log-probability) per sentence.

    Each step ranks beam x vocabulary continuations per sentence and looks at the 2*beam best: a
    continuation with </s> is finished if it ranks among the first `beam`; the `beam` best others carry
    on. A sentence stops when it has `beam` finished hypotheses or reaches its length limit.

    In detail (`nmt.decode.search_reference.beam_search_reference` does the same one candidate at a time): the ranked
    list is walked in order and the walk stops at the first candidate of score -inf; a </s> candidate ranked
    `beam` or lower is skipped; alive slots that no candidate fills score -inf. At the length limit (and only if
    the sentence does not have `beam` finished hypotheses yet) the surviving hypotheses are finished as they are,
    without </s>. The result is the finished hypothesis with the highest score, the first finished one on ties;
    Hypothesis([], -inf) for a sentence without any.

    Every step is tensor operations on the model's device. The steps record back-pointers (the word put in each
    alive slot, the slot it continues, the source word it attends to), and per sentence only the best finished
    hypothesis so far is kept (score, length, slot of its last word); the hypotheses are traced back once at
    the end.
    """
    ensure_can_translate(model)
    batch, k = src.size(0), beam
    device = src.device
    enc = model.encode(src, src_len)
    expand = torch.arange(batch, device=device).repeat_interleave(k)
    enc = enc.select(expand)
    enc_lengths = src_len.to(device).index_select(0, expand)  # of every hypothesis' sentence
    state = model.initial_state(enc)
    limits = max_lengths(src_len, max_len_ratio).to(device)
    steps = int(limits.max())  # one read per batch
    scores = torch.full((batch, k), float("-inf"), device=device)
    scores[:, 0] = 0.0  # at the start only one hypothesis exists per sentence
    prev = torch.full((batch * k,), BOS_ID, dtype=torch.long, device=device)
    # Back-pointers: step t put word words[t, b, j], attending to source word attended[t, b, j], in alive slot j
    # of sentence b, continuing the hypothesis in slot origins[t, b, j] after step t - 1.
    words = torch.zeros(steps, batch, k, dtype=torch.long, device=device)
    origins = torch.zeros(steps, batch, k, dtype=torch.long, device=device)
    attended = torch.zeros(steps, batch, k, dtype=torch.long, device=device)
    attends = False
    # The best finished hypothesis of each sentence so far: score, number of words, slot of its last word (at
    # step best_len - 1). A strict > keeps the first of equal scores, as Python's max does.
    best_score = torch.full((batch,), float("-inf"), dtype=_score_dtype(device), device=device)
    best_len = torch.zeros(batch, dtype=torch.long, device=device)
    best_slot = torch.zeros(batch, dtype=torch.long, device=device)
    n_finished = torch.zeros(batch, dtype=torch.long, device=device)
    done = torch.zeros(batch, dtype=torch.bool, device=device)
    rows = torch.arange(batch, device=device).unsqueeze(1)
    check_every = done_check_every(device)
    t = -1
    for t in range(steps):
        log_probs, state, weights = model.step(prev, enc, state)
        vocab = log_probs.size(-1)
        candidates = (scores.unsqueeze(-1) + log_probs.view(batch, k, vocab)).view(batch, k * vocab)
        width = min(2 * k, k * vocab)
        top_scores, top_index = candidates.topk(width, dim=-1)
        source_beam, token = top_index.div(vocab, rounding_mode="floor"), top_index.remainder(vocab)
        rank = torch.arange(width, device=device)
        # The walk over the ranked list: up to the first -inf; none for a sentence already done.
        walked = ((top_scores == float("-inf")).cumsum(dim=-1) == 0) & ~done.unsqueeze(1)
        ends = token == EOS_ID
        goes_on = walked & ~ends
        ends &= walked & (rank < k)
        # Alive slots: the first k continuations without </s>, in rank order; their ranks, `width` for the rest.
        kept = goes_on & (goes_on.cumsum(dim=-1) <= k)
        picked = torch.where(kept, rank, width).sort(dim=-1).values[:, :k]
        filled = picked < width
        picked = picked.clamp(max=width - 1)
        origin = torch.where(filled, source_beam.gather(1, picked), 0)
        next_tokens = torch.where(filled, token.gather(1, picked), EOS_ID)
        next_scores = torch.where(filled, top_scores.gather(1, picked), float("-inf")).to(scores.dtype)
        # Finished with </s>: the hypothesis in slot source_beam after step t - 1 (t words). The first such
        # candidate in rank order has the highest score among them.
        first_end = torch.where(ends, rank, width).min(dim=-1).values
        has_end = first_end < width
        first_end = first_end.clamp(max=width - 1).unsqueeze(1)
        end_score = top_scores.gather(1, first_end).squeeze(1).to(best_score.dtype)
        better = has_end & (end_score > best_score)
        best_score = torch.where(better, end_score, best_score)
        best_len = torch.where(better, t, best_len)
        best_slot = torch.where(better, source_beam.gather(1, first_end).squeeze(1), best_slot)
        n_finished += ends.sum(dim=-1)
        words[t] = next_tokens
        origins[t] = origin
        if weights is not None:
            attends = True
            attended[t] = attended_words(weights, enc_lengths).view(batch, k).gather(1, origin)
        # Out of length: the surviving hypotheses (t + 1 words) end here without </s>; slot 0 is the best of them.
        full = ~done & (n_finished >= k)
        out_of_length = ~done & ~full & (t + 1 >= limits)
        longer = out_of_length & filled[:, 0] & (next_scores[:, 0].to(best_score.dtype) > best_score)
        best_score = torch.where(longer, next_scores[:, 0].to(best_score.dtype), best_score)
        best_len = torch.where(longer, t + 1, best_len)
        best_slot = best_slot.masked_fill(longer, 0)
        done |= full | out_of_length
        if (t + 1) % check_every == 0 and bool(done.all()):
            break
        state = state.select((rows * k + origin).view(-1))
        scores = next_scores
        prev = next_tokens.view(-1)
    # Trace every sentence's best hypothesis back from its last word (no loop over sentences).
    taken = t + 1
    tokens = torch.zeros(batch, taken, dtype=torch.long, device=device)
    positions = torch.zeros(batch, taken, dtype=torch.long, device=device)
    slot = best_slot.unsqueeze(1)
    for s in range(taken - 1, -1, -1):
        tokens[:, s] = words[s].gather(1, slot).squeeze(1)
        positions[:, s] = attended[s].gather(1, slot).squeeze(1)
        slot = torch.where((s < best_len).unsqueeze(1), origins[s].gather(1, slot), slot)
    lengths_, scores_, tokens_ = best_len.tolist(), best_score.tolist(), tokens.tolist()
    positions_ = positions.tolist() if attends else None
    return [
        Hypothesis(tokens_[b][:n], scores_[b], positions_[b][:n] if attends else []) for b, n in enumerate(lengths_)
    ]


def translate_ids(
    model,
    sources: list[list[int]],
    *,
    beam: int,
    batch_size: int,
    max_len_ratio: float,
    device,
    progress: bool | None = None,
) -> list[Hypothesis]:
    """Translate id sequences in length-sorted batches; results come back in input order."""
    ensure_can_translate(model)
    results: list[Hypothesis | None] = [None] * len(sources)
    batches = bucketed_batches(sources, [], batch_size, seed=None)
    with tqdm(
        total=len(sources), desc="translating", unit="sent", disable=None if progress is None else not progress
    ) as bar:
        for index in batches:
            batch = make_batch([sources[i] for i in index], None, index).to(device)
            if beam == 1:
                hyps = greedy(model, batch.src, batch.src_len, max_len_ratio)
            else:
                hyps = beam_search(model, batch.src, batch.src_len, beam, max_len_ratio)
            for i, hyp in zip(index, hyps):
                results[i] = hyp
            bar.update(len(index))
    return results  # type: ignore[return-value]
