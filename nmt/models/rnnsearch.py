"""RNNsearch of Bahdanau et al. (2015), with the target foresight of Peter, Nix & Ney (2017).
Details: docs/internals/models.md."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from ..base.errors import UserError
from ..data.vocab import EOS_ID, PAD_ID
from ..settings import ModelSettings
from .accelerator import Accelerator
from .dropout import Dropout
from .shared import init_uniform, lengths_on

CANNOT_TRANSLATE = "target foresight models align given a reference; they cannot translate"


class CannotTranslateError(UserError, ValueError):
    """Free decoding asked of a target foresight model."""


@dataclass
class RNNSearchEncoderOutput:
    memory: torch.Tensor  # [B, S, 2H] h_j, in written order
    mask: torch.Tensor  # [B, S] True where there is a source word
    keys: torch.Tensor  # [B, S, A] U h_j + b
    init: torch.Tensor  # [B, H] s_0

    def select(self, index: torch.Tensor) -> "RNNSearchEncoderOutput":
        return RNNSearchEncoderOutput(
            *(t.index_select(0, index) for t in (self.memory, self.mask, self.keys, self.init))
        )


@dataclass
class RNNSearchState:
    hidden: torch.Tensor  # [B, H] s_{i-1}: the state that attends for the next word
    context: torch.Tensor | None  # [B, 2H] c_{i-1}, waiting for y_{i-1} to update the state (None at i = 1)
    step: int = 0

    def select(self, index: torch.Tensor) -> "RNNSearchState":
        return RNNSearchState(
            self.hidden.index_select(0, index),
            None if self.context is None else self.context.index_select(0, index),
            self.step,
        )


def next_words(tgt_in: torch.Tensor) -> torch.Tensor:
    """tgt_out of a complete teacher-forcing input: tgt_in shifted left, </s> after its last word, padding after."""
    out = torch.full_like(tgt_in, PAD_ID)
    out[:, :-1] = tgt_in[:, 1:]
    last = (tgt_in != PAD_ID).sum(dim=1, keepdim=True) - 1
    return out.scatter(1, last.clamp_min(0), EOS_ID)


class AdditiveAttention(nn.Module):
    """e_ij = v^T tanh(W s + U h_j + b [+ V ehat]), softmax over the source words, c = sum_j alpha_ij h_j."""

    def __init__(self, query_dim: int, key_dim: int, attention_dim: int, foresight_dim: int = 0, noise: float = 0.0):
        super().__init__()
        self.W = nn.Linear(query_dim, attention_dim, bias=False)
        self.U = nn.Linear(key_dim, attention_dim)
        self.v = nn.Linear(attention_dim, 1, bias=False)
        self.V = nn.Linear(foresight_dim, attention_dim, bias=False) if foresight_dim else None
        self.noise = noise

    def keys(self, memory: torch.Tensor) -> torch.Tensor:
        return self.U(memory)

    def foresight(self, target_embeddings: torch.Tensor) -> torch.Tensor:
        """V ehat for target embeddings [..., E]."""
        return self.V(target_embeddings)

    def energies(self, query: torch.Tensor, keys: torch.Tensor, foresight: torch.Tensor | None = None) -> torch.Tensor:
        """e [B, S] for queries s [B, H]; `foresight` is V ehat [B, A]. Noisy in training mode when noise > 0."""
        pre = self.W(query)
        if foresight is not None:
            pre = pre + foresight
        energies = self.v(torch.tanh(keys + pre.unsqueeze(1))).squeeze(-1)
        if self.training and self.noise > 0:
            energies = energies + self.noise * torch.randn_like(energies)
        return energies

    def forward(
        self,
        query: torch.Tensor,
        memory: torch.Tensor,
        keys: torch.Tensor,
        mask: torch.Tensor,
        foresight: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Context c [B, 2H] and weights alpha [B, S]."""
        energies = self.energies(query, keys, foresight).masked_fill(~mask, float("-inf"))
        weights = torch.softmax(energies, dim=-1)
        return torch.bmm(weights.unsqueeze(1), memory).squeeze(1), weights


class RNNSearch(nn.Module):
    def __init__(self, model: ModelSettings, src_vocab: int, tgt_vocab: int):
        super().__init__()
        self.settings = model
        hidden, embed = model.hidden, model.embed
        attention_dim = model.attention_dim or hidden
        self.target_foresight = bool(model.target_foresight)
        self.hidden_size = hidden
        self.maxout_units = max(1, hidden // 2)
        self.src_embed = nn.Embedding(src_vocab, embed, padding_idx=PAD_ID)
        self.tgt_embed = nn.Embedding(tgt_vocab, embed, padding_idx=PAD_ID)
        self.encoder = nn.GRU(embed, hidden, batch_first=True, bidirectional=True)
        self.init_state = nn.Linear(hidden, hidden)  # W_s
        self.attention = AdditiveAttention(
            hidden, 2 * hidden, attention_dim, embed if self.target_foresight else 0, float(model.attention_noise)
        )
        self.decoder = nn.GRUCell(embed + 2 * hidden, hidden)
        self.readout = nn.Linear(hidden + embed + 2 * hidden, 2 * self.maxout_units)  # [U_o V_o C_o], b_o
        self.generator = nn.Linear(self.maxout_units, tgt_vocab)  # W_o
        self.dropout = Dropout(model.dropout)
        self.source_path: str | None = None  # set by nmt.models.io.load_model, for error messages
        self.accelerator: Accelerator | None = None  # as Seq2Seq.accelerator

    # -- encoder ---------------------------------------------------------------------------------------------
    def encode(self, src: torch.Tensor, src_len: torch.Tensor) -> RNNSearchEncoderOutput:
        src_len_cpu, src_len = lengths_on(src_len, src.device)
        emb = self.dropout(self.src_embed(src))
        memory = (
            None if self.accelerator is None else self.accelerator.bidirectional_gru(self.encoder, emb, src_len_cpu)
        )
        if memory is None:
            packed = pack_padded_sequence(emb, src_len_cpu, batch_first=True, enforce_sorted=False)
            out, _ = self.encoder(packed)
            memory, _ = pad_packed_sequence(out, batch_first=True, total_length=src.size(1))
        mask = torch.arange(src.size(1), device=src.device).unsqueeze(0) < src_len.unsqueeze(1)
        # The backward RNN's state at the first word has read the whole sentence.
        init = torch.tanh(self.init_state(memory[:, 0, self.hidden_size :]))
        return RNNSearchEncoderOutput(memory=memory, mask=mask, keys=self.attention.keys(memory), init=init)

    def initial_state(self, enc: RNNSearchEncoderOutput) -> RNNSearchState:
        return RNNSearchState(hidden=enc.init, context=None)

    # -- decoder ---------------------------------------------------------------------------------------------
    def decode(
        self,
        tgt_in: torch.Tensor,
        enc: RNNSearchEncoderOutput,
        state: RNNSearchState,
        tgt_out: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, RNNSearchState, torch.Tensor]:
        """Teacher-forced decoding of tgt_in [B, T]: log-probabilities [B, T, V], the final state, and the attention
        weights [B, T, S]; row t is alpha of the step that reads tgt_in[:, t] and predicts tgt_out[:, t]."""
        features, state, weights = self.decode_features(tgt_in, enc, state, tgt_out)
        return self.log_probs(features), state, weights

    def decode_features(
        self,
        tgt_in: torch.Tensor,
        enc: RNNSearchEncoderOutput,
        state: RNNSearchState,
        tgt_out: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, RNNSearchState, torch.Tensor]:
        """As `decode`, but the output layer's input (t_i after dropout) [B, T, l] in place of log-probabilities."""
        emb = self.dropout(self.tgt_embed(tgt_in))
        foresight = None
        if self.target_foresight:
            if tgt_out is None:
                tgt_out = next_words(tgt_in)
            if tgt_out.shape != tgt_in.shape:
                raise ValueError(f"tgt_out {tuple(tgt_out.shape)} must have the shape of tgt_in {tuple(tgt_in.shape)}")
            foresight = self.attention.foresight(self.dropout(self.tgt_embed(tgt_out)))
        if self.accelerator is not None:
            states, contexts, weights, (hidden, context) = self.accelerator.rnnsearch_decoder(
                self, emb, enc.memory, enc.keys, enc.mask, state.hidden, state.context, foresight
            )
        else:
            hidden, context = state.hidden, state.context
            states, contexts, weights = [], [], []
            for t in range(tgt_in.size(1)):
                if context is not None:  # the word read now was predicted by the previous step: s_i = GRU(...)
                    hidden = self.decoder(torch.cat([emb[:, t], context], dim=-1), hidden)
                context, alpha = self.attention(
                    hidden, enc.memory, enc.keys, enc.mask, None if foresight is None else foresight[:, t]
                )
                states.append(hidden)
                contexts.append(context)
                weights.append(alpha)
            states, contexts, weights = (torch.stack(x, dim=1) for x in (states, contexts, weights))
        features = self._readout(states, emb, contexts)
        return features, RNNSearchState(hidden, context, state.step + tgt_in.size(1)), weights

    def _readout(self, states: torch.Tensor, prev_emb: torch.Tensor, contexts: torch.Tensor) -> torch.Tensor:
        """t_i (maxout of t~_i), after dropout: what the output layer W_o reads."""
        pre = self.readout(torch.cat([states, prev_emb, contexts], dim=-1))
        maxout = pre.view(*pre.shape[:-1], self.maxout_units, 2).max(dim=-1).values
        return self.dropout(maxout)

    def log_probs(self, features: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(self.generator(features), dim=-1)

    def step(
        self, prev: torch.Tensor, enc: RNNSearchEncoderOutput, state: RNNSearchState
    ) -> tuple[torch.Tensor, RNNSearchState, torch.Tensor]:
        """One free decoding step for prev [B]: log-probs [B, V], new state, weights [B, S]."""
        if self.target_foresight:
            where = f"{self.source_path}: " if self.source_path else ""
            raise CannotTranslateError(f"{where}{CANNOT_TRANSLATE} (model.target_foresight: true)")
        log_probs, state, weights = self.decode(prev.unsqueeze(1), enc, state)
        return log_probs.squeeze(1), state, weights.squeeze(1)

    def features(
        self, src: torch.Tensor, src_len: torch.Tensor, tgt_in: torch.Tensor, tgt_out: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Teacher-forced: the output layer's input [B, T, l] and the attention weights (see Seq2Seq.features)."""
        enc = self.encode(src, src_len)
        features, _, weights = self.decode_features(tgt_in, enc, self.initial_state(enc), tgt_out)
        return features, weights

    def forward(
        self, src: torch.Tensor, src_len: torch.Tensor, tgt_in: torch.Tensor, tgt_out: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        features, weights = self.features(src, src_len, tgt_in, tgt_out)
        return self.log_probs(features), weights

    def init_uniform(self, init_range: float) -> None:
        """Uniform initialisation of every parameter in [-r, r] (the recipe `nmt train` applies to every model)."""
        init_uniform(self, init_range)
