"""Length-bucketed mini-batches with a seeded, resumable order."""
from __future__ import annotations

from dataclasses import dataclass

import torch

from .vocab import BOS_ID, EOS_ID, PAD_ID


@dataclass
class Batch:
    src: torch.Tensor        # [B, S] source ids, padded with PAD_ID
    src_len: torch.Tensor    # [B]
    tgt_in: torch.Tensor     # [B, T] <s> y1 .. yn
    tgt_out: torch.Tensor    # [B, T] y1 .. yn </s>
    index: torch.Tensor      # [B] positions of these sentences in the split
    # [B, T, S] reference alignment for guided alignment training (make_batch's `links`), or None: row t belongs to
    # tgt_out[:, t] (target word t, 0-based), normalised to sum 1 over its linked source words; rows of unlinked
    # words, of </s> and of padding are 0.
    align: torch.Tensor | None = None

    @property
    def n_tokens(self) -> int:
        return int((self.tgt_out != PAD_ID).sum())

    def to(self, device, non_blocking: bool = False) -> "Batch":
        return Batch(*(t.to(device, non_blocking=non_blocking)
                       for t in (self.src, self.src_len, self.tgt_in, self.tgt_out, self.index)),
                     align=None if self.align is None else self.align.to(device, non_blocking=non_blocking))

    def pin_memory(self) -> "Batch":
        """A copy in page-locked memory, from which a copy to a GPU runs without waiting (non_blocking=True)."""
        return Batch(*(t.pin_memory() for t in (self.src, self.src_len, self.tgt_in, self.tgt_out, self.index)),
                     align=None if self.align is None else self.align.pin_memory())


def pad(seqs: list[list[int]], value: int = PAD_ID) -> torch.Tensor:
    width = max((len(s) for s in seqs), default=0)
    out = torch.full((len(seqs), max(width, 1)), value, dtype=torch.long)
    for row, seq in enumerate(seqs):
        out[row, : len(seq)] = torch.tensor(seq, dtype=torch.long)
    return out


def alignment_targets(links: list, src_width: int, tgt_width: int) -> torch.Tensor:
    """[B, tgt_width, src_width]: for each sentence's (source, target) index pairs [n, 2], A[t, s] = 1 / (number of
    links of target word t) for every link (s, t); 0 elsewhere (a target word without links has an all-zero row)."""
    out = torch.zeros(len(links), tgt_width, src_width)
    for row, pairs in enumerate(links):
        pairs = torch.as_tensor(pairs, dtype=torch.long).reshape(-1, 2)
        out[row, pairs[:, 1], pairs[:, 0]] = 1.0
    return out / out.sum(dim=-1, keepdim=True).clamp_min(1.0)


def make_batch(src: list[list[int]], tgt: list[list[int]] | None, index: list[int], links: list | None = None
               ) -> Batch:
    """`links`: per sentence, its (source index, target index) pairs (nmt.data.links), or None."""
    tgt = tgt if tgt is not None else [[] for _ in src]
    batch = Batch(
        src=pad(src),
        src_len=torch.tensor([max(len(s), 1) for s in src], dtype=torch.long),
        tgt_in=pad([[BOS_ID] + t for t in tgt]),
        tgt_out=pad([t + [EOS_ID] for t in tgt]),
        index=torch.tensor(index, dtype=torch.long),
    )
    if links is not None:
        if len(links) != len(src):
            raise ValueError(f"{len(links)} link sets for {len(src)} sentences")
        batch.align = alignment_targets(links, batch.src.size(1), batch.tgt_out.size(1))
    return batch


def epoch_batches(src: list[list[int]], tgt: list[list[int]], batch_size: int, batch_tokens: int, seed: int,
                  epoch: int) -> list[list[int]]:
    """The training batches of an epoch: `train.batch_tokens` > 0 gives token-count batches (token_batches), else
    batches of `train.batch_size` sentences (the papers' recipe)."""
    if batch_tokens:
        return token_batches(src, tgt, batch_tokens, seed, epoch)
    return bucketed_batches(src, tgt, batch_size, seed, epoch)


def token_batches(src: list[list[int]], tgt: list[list[int]], max_tokens: int, seed: int, epoch: int = 0,
                  pool: int = 50) -> list[list[int]]:
    """Batches of up to `max_tokens` padded tokens (fairseq's max_tokens): a batch of n sentences whose longest side
    (target + </s>, or source) has L tokens holds n * L <= max_tokens; a sentence longer than max_tokens on its own
    makes a batch alone. Built like bucketed_batches: the corpus shuffled by (seed, epoch), pools of about `pool`
    batches sorted by length and cut, the batch order shuffled. Short sentences thus come in large batches and long
    ones in small, for a similar cost per update."""
    gen = torch.Generator().manual_seed(seed * 100003 + epoch)
    order = torch.randperm(len(src), generator=gen).tolist()
    mean = max(1.0, sum(max(len(s), len(t) + 1) for s, t in zip(src, tgt)) / max(len(src), 1))
    span = max(1, int(pool * max_tokens / mean))
    batches: list[list[int]] = []
    for start in range(0, len(order), span):
        chunk = sorted(order[start: start + span], key=lambda i: (len(src[i]), len(tgt[i]), i))
        batch: list[int] = []
        longest = 0
        for i in chunk:
            size = max(len(src[i]), len(tgt[i]) + 1)
            if batch and max(longest, size) * (len(batch) + 1) > max_tokens:
                batches.append(batch)
                batch, longest = [], 0
            batch.append(i)
            longest = max(longest, size)
        if batch:
            batches.append(batch)
    perm = torch.randperm(len(batches), generator=gen).tolist()
    return [batches[i] for i in perm]


def bucketed_batches(src: list[list[int]], tgt: list[list[int]], batch_size: int, seed: int | None,
                     epoch: int = 0, pool: int = 50) -> list[list[int]]:
    """Sentence indices grouped into batches of similar length.

    With a seed, the corpus is shuffled, cut into pools of `pool` batches, each pool sorted by length and cut
    into batches, and the batch order shuffled: the order depends only on (seed, epoch), so a resumed run
    sees exactly the batches an uninterrupted run would. Without a seed the order is by length (for decoding).
    """
    order = list(range(len(src)))
    if seed is None:
        order.sort(key=lambda i: (len(src[i]), len(tgt[i]) if tgt else 0, i))
        return [order[i: i + batch_size] for i in range(0, len(order), batch_size)]
    gen = torch.Generator().manual_seed(seed * 100003 + epoch)
    order = torch.randperm(len(src), generator=gen).tolist()
    batches: list[list[int]] = []
    span = batch_size * pool
    for start in range(0, len(order), span):
        chunk = sorted(order[start: start + span], key=lambda i: (len(src[i]), len(tgt[i]), i))
        batches.extend(chunk[i: i + batch_size] for i in range(0, len(chunk), batch_size))
    perm = torch.randperm(len(batches), generator=gen).tolist()
    return [batches[i] for i in perm]
