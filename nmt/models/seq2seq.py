"""The stacked-LSTM encoder-decoder of Luong et al. (2015): no attention, global or local attention, or Raffel et
al.'s (2017) monotonic attention in place of the softmax (model.arch: luong; its attention layers are the
variants of nmt.models.variants, and nmt.models.registry builds it).
Details: docs/internals/models.md."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from ..data.vocab import PAD_ID
from ..settings import ModelSettings
from .accelerator import Accelerator
from .dropout import Dropout
from .monotonic import MonotonicAttention
from .shared import init_uniform, lengths_on
from .variants import build_attention


@dataclass
class EncoderOutput:
    memory: torch.Tensor  # [B, S, H] top-layer states, in the order the encoder read them
    mask: torch.Tensor  # [B, S] True where there is a source word
    keys: torch.Tensor | None  # attention keys precomputed from memory
    final: tuple[torch.Tensor, torch.Tensor]  # (h, c), each [L, B, H]

    def select(self, index: torch.Tensor) -> "EncoderOutput":
        """Rows `index` of the batch (used to expand for beam search)."""
        return EncoderOutput(
            memory=self.memory.index_select(0, index),
            mask=self.mask.index_select(0, index),
            keys=None if self.keys is None else self.keys.index_select(0, index),
            final=tuple(s.index_select(1, index) for s in self.final),
        )


@dataclass
class DecoderState:
    hidden: tuple[torch.Tensor, torch.Tensor]  # (h, c), each [L, B, H]
    feed: torch.Tensor | None  # [B, H] htilde of the previous step (input feeding)
    step: int = 0  # target position of the next word (local-m aligns it)
    attention: torch.Tensor | None = None  # monotonic attention's state, batch first (None for the others)

    def select(self, index: torch.Tensor) -> "DecoderState":
        return DecoderState(
            hidden=tuple(s.index_select(1, index) for s in self.hidden),
            feed=None if self.feed is None else self.feed.index_select(0, index),
            step=self.step,
            attention=None if self.attention is None else self.attention.index_select(0, index),
        )


def reverse_padded(src: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Reverse each row's first `length` tokens, leaving its padding in place."""
    positions = torch.arange(src.size(1), device=src.device).unsqueeze(0)
    lengths = lengths.to(src.device, non_blocking=True).unsqueeze(1)
    source_index = torch.where(positions < lengths, lengths - 1 - positions, positions)
    return src.gather(1, source_index)


class Seq2Seq(nn.Module):
    def __init__(self, model: ModelSettings, src_vocab: int, tgt_vocab: int):
        super().__init__()
        self.settings = model
        hidden, embed, layers, p = model.hidden, model.embed, model.layers, model.dropout
        self.reverse = model.reverse
        if model.attention == "monotonic" and self.reverse:
            # The hard process walks the encoder states in the order they were computed; online decoding needs
            # that to be the order the words arrive in (Raffel et al. do not reverse the source either).
            raise ValueError("monotonic attention reads the source left to right: set model.reverse: false")
        self.input_feed = model.input_feed and model.attention != "none"
        self.src_embed = nn.Embedding(src_vocab, embed, padding_idx=PAD_ID)
        self.tgt_embed = nn.Embedding(tgt_vocab, embed, padding_idx=PAD_ID)
        inter_layer = p if layers > 1 else 0.0
        self.encoder = nn.LSTM(embed, hidden, layers, batch_first=True, dropout=inter_layer)
        self.decoder = nn.LSTM(
            embed + (hidden if self.input_feed else 0), hidden, layers, batch_first=True, dropout=inter_layer
        )
        self.attention = build_attention(model)
        self.monotonic = isinstance(self.attention, MonotonicAttention)
        self.dropout = Dropout(p)
        self.generator = nn.Linear(hidden, tgt_vocab)
        self.hidden_size = hidden
        # an engine's faster computation of the loops below (nmt.models.accelerator); None: the reference
        self.accelerator: Accelerator | None = None

    def _run_lstm(
        self,
        lstm: nn.LSTM,
        x: torch.Tensor,
        lengths: torch.Tensor | None,
        hidden: tuple[torch.Tensor, torch.Tensor] | None,
    ) -> tuple[torch.Tensor, tuple]:
        """`lstm` over x [B, S, E]: with `lengths` (on the CPU) packed and padded back to S, without from `hidden`."""
        fast = None if self.accelerator is None else self.accelerator.lstm(lstm, x, lengths, hidden)
        if fast is not None:
            return fast
        if lengths is None:
            return lstm(x, hidden)
        packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        out, final = lstm(packed)
        return pad_packed_sequence(out, batch_first=True, total_length=x.size(1))[0], final

    # -- encoder ---------------------------------------------------------------------------------------------
    def encode(self, src: torch.Tensor, src_len: torch.Tensor) -> EncoderOutput:
        src_len_cpu, src_len = lengths_on(src_len, src.device)
        if self.reverse:
            src = reverse_padded(src, src_len)
        emb = self.dropout(self.src_embed(src))
        memory, final = self._run_lstm(self.encoder, emb, src_len_cpu, None)
        mask = torch.arange(src.size(1), device=src.device).unsqueeze(0) < src_len.unsqueeze(1)
        keys = self.attention.keys(memory) if self.attention is not None else None
        return EncoderOutput(memory=memory, mask=mask, keys=keys, final=final)

    def initial_state(self, enc: EncoderOutput) -> DecoderState:
        feed = None
        if self.input_feed:
            feed = enc.memory.new_zeros(enc.memory.size(0), self.hidden_size)
        attention = self.attention.initial_state(enc.mask) if self.monotonic else None
        return DecoderState(hidden=enc.final, feed=feed, attention=attention)

    # -- decoder ---------------------------------------------------------------------------------------------
    def _attend(
        self, top: torch.Tensor, enc: EncoderOutput, first_step: int, attention_state: torch.Tensor | None
    ) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None]:
        """htilde [B, T, H], the weights over the source words [B, T, S] and the attention state after them."""
        if self.attention is None:
            return top, None, None
        if self.monotonic:
            return self.attention(top, enc.memory, enc.keys, enc.mask, attention_state)
        steps = torch.arange(first_step, first_step + top.size(1), device=top.device)
        htilde, weights = self.attention(top, enc.memory, enc.keys, enc.mask, steps)
        return htilde, self._source_order(weights, enc), None

    def _source_order(self, weights: torch.Tensor, enc: EncoderOutput) -> torch.Tensor:
        """Weights over encoder positions -> over the words of the source as written (undo the reversal)."""
        if not self.reverse:
            return weights
        positions = torch.arange(weights.size(-1), device=weights.device).view(1, 1, -1)
        lengths = enc.mask.sum(dim=1).view(-1, 1, 1)
        index = torch.where(positions < lengths, lengths - 1 - positions, positions)
        return weights.gather(-1, index.expand_as(weights))

    def decode(
        self, tgt_in: torch.Tensor, enc: EncoderOutput, state: DecoderState, tgt_out: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, DecoderState, torch.Tensor | None]:
        """Teacher-forced decoding of tgt_in [B, T]: log-probabilities [B, T, V], the final state, and the
        attention weights [B, T, S] over the source words in their written order (None without attention).
        `tgt_out` (the words predicted) is accepted for the interface's sake and not needed here."""
        htilde, state, weights = self.decode_states(tgt_in, enc, state)
        return self.log_probs(self.dropout(htilde)), state, weights

    def decode_states(
        self, tgt_in: torch.Tensor, enc: EncoderOutput, state: DecoderState
    ) -> tuple[torch.Tensor, DecoderState, torch.Tensor | None]:
        """What the output layer reads (htilde [B, T, H], or h_t without attention, before dropout), the final
        state and the attention weights (as `decode`)."""
        emb = self.dropout(self.tgt_embed(tgt_in))
        next_step = state.step + tgt_in.size(1)
        if not self.input_feed:
            # No dependency between steps beyond the LSTM: run all steps in one call.
            top, hidden = self._run_lstm(self.decoder, emb, None, state.hidden)
            htilde, weights, attention = self._attend(top, enc, state.step, state.attention)
            return htilde, DecoderState(hidden, None, next_step, attention), weights
        if self.accelerator is not None:
            htilde, weights, hidden, feed, attention = self.accelerator.feed_decoder(
                self, emb, enc.memory, enc.keys, enc.mask, state.hidden, state.feed, state.step, state.attention
            )
            return htilde, DecoderState(hidden, feed, next_step, attention), self._source_order(weights, enc)
        outputs, all_weights = [], []
        hidden, feed, attention = state.hidden, state.feed, state.attention
        for t in range(tgt_in.size(1)):
            step_in = torch.cat([emb[:, t], feed], dim=-1).unsqueeze(1)
            top, hidden = self.decoder(step_in, hidden)
            htilde, weights, attention = self._attend(top, enc, state.step + t, attention)
            feed = htilde.squeeze(1)
            outputs.append(htilde)
            all_weights.append(weights)
        return (
            torch.cat(outputs, dim=1),
            DecoderState(hidden, feed, next_step, attention),
            torch.cat(all_weights, dim=1),
        )

    def log_probs(self, features: torch.Tensor) -> torch.Tensor:
        """log p(y) [..., V] from the output layer's input (after dropout)."""
        return torch.log_softmax(self.generator(features), dim=-1)

    def step(
        self, prev: torch.Tensor, enc: EncoderOutput, state: DecoderState
    ) -> tuple[torch.Tensor, DecoderState, torch.Tensor | None]:
        """One decoding step for prev [B] token ids: log-probs [B, V], new state, weights [B, S] or None."""
        log_probs, state, weights = self.decode(prev.unsqueeze(1), enc, state)
        return log_probs.squeeze(1), state, None if weights is None else weights.squeeze(1)

    def features(
        self, src: torch.Tensor, src_len: torch.Tensor, tgt_in: torch.Tensor, tgt_out: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Teacher-forced: the output layer's input [B, T, H] (after dropout) and the attention weights. Training's
        loss applies `generator` to it (nmt.engine.fused_loss); `forward` gives the log-probabilities."""
        enc = self.encode(src, src_len)
        htilde, _, weights = self.decode_states(tgt_in, enc, self.initial_state(enc))
        return self.dropout(htilde), weights

    def forward(
        self, src: torch.Tensor, src_len: torch.Tensor, tgt_in: torch.Tensor, tgt_out: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        features, weights = self.features(src, src_len, tgt_in, tgt_out)
        return self.log_probs(features), weights

    def init_uniform(self, init_range: float) -> None:
        """Uniform initialisation of every parameter in [-r, r] (the paper's recipe)."""
        init_uniform(self, init_range)
