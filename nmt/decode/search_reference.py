"""The plain, step-by-step Python implementations of greedy and beam search, kept as the reference.
Details: docs/internals/decode.md."""

from __future__ import annotations

import torch

from ..data.vocab import BOS_ID, EOS_ID
from .translate import Hypothesis, attended_words, ensure_can_translate, max_lengths


@torch.no_grad()
def greedy_reference(model, src: torch.Tensor, src_len: torch.Tensor, max_len_ratio: float = 2.0) -> list[Hypothesis]:
    ensure_can_translate(model)
    batch = src.size(0)
    enc = model.encode(src, src_len)
    state = model.initial_state(enc)
    limits = max_lengths(src_len, max_len_ratio).tolist()
    prev = torch.full((batch,), BOS_ID, dtype=torch.long, device=src.device)
    hyps = [Hypothesis([], 0.0) for _ in range(batch)]
    finished = [False] * batch
    for t in range(max(limits)):
        log_probs, state, weights = model.step(prev, enc, state)
        best_scores, best = log_probs.max(dim=-1)
        attended = attended_words(weights, src_len).tolist() if weights is not None else None
        for b in range(batch):
            if finished[b]:
                continue
            hyps[b].score += float(best_scores[b])
            token = int(best[b])
            if token == EOS_ID:
                finished[b] = True
            else:
                hyps[b].tokens.append(token)
                if attended is not None:
                    hyps[b].positions.append(attended[b])
                if t + 1 >= limits[b]:
                    finished[b] = True
        if all(finished):
            break
        prev = best
    return hyps


@torch.no_grad()
def beam_search_reference(
    model, src: torch.Tensor, src_len: torch.Tensor, beam: int, max_len_ratio: float = 2.0
) -> list[Hypothesis]:
    """Batched beam search; the best finished hypothesis (highest summed log-probability) per sentence.

    Each step ranks beam x vocabulary continuations per sentence and looks at the 2*beam best: a
    continuation with </s> is finished if it ranks among the first `beam`; the `beam` best others carry
    on. A sentence stops when it has `beam` finished hypotheses or reaches its length limit.
    """
    ensure_can_translate(model)
    batch, k = src.size(0), beam
    device = src.device
    enc = model.encode(src, src_len)
    expand = torch.arange(batch, device=device).repeat_interleave(k)
    enc = enc.select(expand)
    enc_lengths = src_len.to(device).index_select(0, expand)  # of every hypothesis' sentence
    state = model.initial_state(enc)
    limits = max_lengths(src_len, max_len_ratio).tolist()
    scores = torch.full((batch, k), float("-inf"), device=device)
    scores[:, 0] = 0.0  # at the start only one hypothesis exists per sentence
    prev = torch.full((batch * k,), BOS_ID, dtype=torch.long, device=device)
    alive: list[list[list[int]]] = [[[] for _ in range(k)] for _ in range(batch)]
    alive_pos: list[list[list[int]]] = [[[] for _ in range(k)] for _ in range(batch)]
    finished: list[list[Hypothesis]] = [[] for _ in range(batch)]
    done = [False] * batch

    for t in range(max(limits)):
        log_probs, state, weights = model.step(prev, enc, state)
        attended = attended_words(weights, enc_lengths).view(batch, k).tolist() if weights is not None else None
        vocab = log_probs.size(-1)
        candidates = (scores.unsqueeze(-1) + log_probs.view(batch, k, vocab)).view(batch, k * vocab)
        top_scores, top_index = candidates.topk(min(2 * k, k * vocab), dim=-1)
        top_scores, top_index = top_scores.tolist(), top_index.tolist()
        origin = torch.zeros(batch, k, dtype=torch.long)
        next_tokens = torch.full((batch, k), EOS_ID, dtype=torch.long)
        next_scores = torch.full((batch, k), float("-inf"))
        for b in range(batch):
            if done[b]:
                continue
            kept = 0
            for rank, (score, flat) in enumerate(zip(top_scores[b], top_index[b])):
                if score == float("-inf"):
                    break
                source_beam, token = divmod(flat, vocab)
                if token == EOS_ID:
                    if rank < k:
                        finished[b].append(
                            Hypothesis(list(alive[b][source_beam]), score, list(alive_pos[b][source_beam]))
                        )
                    continue
                if kept < k:
                    origin[b, kept], next_tokens[b, kept], next_scores[b, kept] = source_beam, token, score
                    kept += 1
            new_alive = [alive[b][int(origin[b, j])] + [int(next_tokens[b, j])] for j in range(kept)]
            alive[b] = new_alive + [[] for _ in range(k - kept)]
            if attended is not None:
                new_pos = [alive_pos[b][int(origin[b, j])] + [attended[b][int(origin[b, j])]] for j in range(kept)]
                alive_pos[b] = new_pos + [[] for _ in range(k - kept)]
            if len(finished[b]) >= k:
                done[b] = True
            elif t + 1 >= limits[b]:
                # Out of length: the surviving hypotheses end here without </s>.
                finished[b].extend(
                    Hypothesis(alive[b][j], float(next_scores[b, j]), alive_pos[b][j]) for j in range(kept)
                )
                done[b] = True
        if all(done):
            break
        flat_origin = (torch.arange(batch).unsqueeze(1) * k + origin).view(-1).to(device)
        state = state.select(flat_origin)
        scores = next_scores.to(device)
        prev = next_tokens.view(-1).to(device)
    return [max(f, key=lambda h: h.score) if f else Hypothesis([], float("-inf")) for f in finished]
