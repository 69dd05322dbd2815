"""Attention one decoder step at a time, with its backward pass, for the fast input-feeding decoder
(nmt.engine.feed_decoder).
Details: docs/internals/engine.md."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from ..models.dropout import gaussian_noise
from . import native

_softmax_backward = torch.ops.aten._softmax_backward_data
_tanh_backward = torch.ops.aten.tanh_backward
_sigmoid_backward = torch.ops.aten.sigmoid_backward


def _additive_mask(mask: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """0 where mask is True, -inf elsewhere: added to scores instead of a masked_fill per step."""
    return torch.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill_(~mask, float("-inf"))


def _flat(x: torch.Tensor) -> torch.Tensor:
    return x.reshape(-1, x.size(-1))


def _transposed(x: torch.Tensor) -> torch.Tensor:
    """[B, S, H] -> [B, H, S], contiguous. A product of one row per sentence with its [S, H] states is several times
    faster on a CPU as [1, H] x [H, S] than as [S, H] x [H, 1] (MKL's batched GEMV), so training transposes once;
    a decoding step, which would pay the transposition for one product, does not."""
    return x.transpose(1, 2).contiguous()


class _StepGradients:
    """What a backward pass collects step by step: lists of per-step gradients (DS: scores, D_CTX: contexts, D_PRE_Q:
    concat's query projections, D_PRE_P / D_E: local-p's position predictor) and the tensors `accumulators` that
    steps add into (concat's key and v_a gradients). begin_backward empties both: a backward pass may run more than
    once (gradcheck does)."""

    accumulators: tuple[torch.Tensor, ...] = ()

    def empty_lists(self) -> None:
        self.DS, self.D_CTX, self.D_PRE_Q, self.D_PRE_P, self.D_E = [], [], [], [], []

    def begin_backward(self) -> None:
        self.empty_lists()
        for accumulator in self.accumulators:
            accumulator.zero_()


class GlobalKernel(_StepGradients):
    """Global attention (nmt.models.attention.GlobalAttention): a_t = softmax(score(h_t, hbar)), c_t = sum a_t hbar."""

    def __init__(
        self, layer: nn.Module, memory: torch.Tensor, keys: torch.Tensor | None, mask: torch.Tensor, save: bool
    ):
        self.score = layer.score
        self.memory, self.keys, self.save = memory, keys, save
        B, S, H = memory.shape
        self.neg = _additive_mask(mask, memory.dtype)
        self.params: list[torch.Tensor] = []
        if self.score == "location":
            # W_a h_t gives one score per source position up to max_src_len; positions past it get none.
            weight = layer.W_a.weight
            rows = min(S, weight.size(0))
            self.location_t = memory.new_zeros(H, S)
            self.location_t[:, :rows] = weight[:rows].t()
            if S > rows:
                self.neg[:, rows:] = float("-inf")
            self.params.append(weight)
        elif self.score == "concat":
            self.W_q, self.v_a = layer.W_q.weight, layer.v_a.weight.view(-1)
            self.params += [self.W_q, layer.v_a.weight]
            # one pass of a compiled kernel per step and direction (kernels.c: additive attention)
            self.fused = native.usable(memory, keys)
            if self.fused:
                self.lib, self.present = native.library(), mask.to(memory.dtype)
                self.memory, self.keys, self.v_a = memory.contiguous(), keys.contiguous(), self.v_a.contiguous()
            if save:
                self.d_keys = torch.zeros_like(keys)
                self.d_v = torch.zeros_like(self.v_a)
                self.accumulators = (self.d_keys, self.d_v)
        self.memory_t = _transposed(memory) if save else None
        self.keys_t = None
        if save and self.score in ("dot", "general"):
            self.keys_t = self.memory_t if keys is memory else _transposed(keys)
        self.A: list[torch.Tensor] = []
        self.Z: list[torch.Tensor] = []
        self.empty_lists()
        # with whole steps in C (compiled_attention): every step's weights, scores' and contexts' gradients
        self.A_all = self.DS_all = self.D_CTX_all = None

    def compiled_attention(self, steps: int) -> tuple[int, list[torch.Tensor]] | None:
        """Where the decoder's whole steps can run in C with this attention inside (kernels.c
        feed_forward_step_global: training, a dot, general or location score, the compiled loops): whether the score
        is location's, and the tensors of its table (one buffer each for the weights and the scores' gradients of
        all steps, which `weights` and `finish` then read). None elsewhere."""
        if not self.save or self.score not in ("dot", "general", "location") or not native.loops_usable(self.memory):
            return None
        B, S, H = self.memory.shape
        self.memory = self.memory.contiguous()
        location = self.score == "location"
        rhs = self.location_t if location else self.keys_t
        keys = None if location else self.keys.contiguous()
        self.A_all = self.memory.new_empty(steps, B, S)
        self.DS_all = self.memory.new_empty(steps, B, S)
        present = (self.neg == 0).to(self.memory.dtype)
        self.compiled_tensors = [rhs, keys, self.memory, present, self.A_all, self.DS_all]
        return int(location), self.compiled_tensors

    def compiled_backward_tensors(self, d_weights: torch.Tensor | None) -> list[torch.Tensor]:
        """The table's tensors for the backward pass: compiled_attention's, the weights' gradient, two scratch rows."""
        B, S, H = self.memory.shape
        return [
            *self.compiled_tensors,
            None if d_weights is None else d_weights.contiguous(),
            self.memory.new_empty(B, S),
            self.memory.new_empty(B, H),
        ]

    def forward(self, t: int, query: torch.Tensor) -> torch.Tensor:
        if self.score in ("dot", "general"):
            if self.keys_t is not None:
                scores = torch.baddbmm(self.neg.unsqueeze(1), query.unsqueeze(1), self.keys_t).squeeze(1)
            else:
                scores = torch.baddbmm(self.neg.unsqueeze(2), self.keys, query.unsqueeze(2)).squeeze(2)
        elif self.score == "location":
            scores = torch.addmm(self.neg, query, self.location_t)
        elif self.fused:  # concat, compiled
            pre_q = F.linear(query, self.W_q)
            weights, context = native.additive_attention_forward(
                self.lib, self.keys, pre_q, self.v_a, self.present, None, self.memory
            )
            if self.save:
                self.Z.append(pre_q)  # the backward pass recomputes z from it
            self.A.append(weights)
            return context
        else:  # concat: v_a^T tanh(W_q h_t + W_k hbar_s)
            z = torch.tanh(self.keys + F.linear(query, self.W_q).unsqueeze(1))
            scores = torch.matmul(z, self.v_a) + self.neg
            if self.save:
                self.Z.append(z)
        weights = torch.softmax(scores, dim=-1)
        self.A.append(weights)
        return torch.bmm(weights.unsqueeze(1), self.memory).squeeze(1)

    def weights(self) -> torch.Tensor:
        return self.A_all if self.A_all is not None else torch.stack(self.A)

    def begin_backward(self) -> None:
        super().begin_backward()
        self.D_CTX_all = None

    def backward(self, t: int, d_context: torch.Tensor, d_weights: torch.Tensor | None) -> torch.Tensor:
        a = self.A[t] if self.A_all is None else self.A_all[t]
        if self.score == "concat" and self.fused:
            d_pre_q, _ = native.additive_attention_backward(
                self.lib,
                d_context,
                None if d_weights is None else d_weights.contiguous(),
                self.memory,
                a,
                self.keys,
                self.Z[t],
                self.v_a,
                self.d_keys,
                self.d_v,
            )
            self.D_CTX.append(d_context)
            self.D_PRE_Q.append(d_pre_q)
            return torch.mm(d_pre_q, self.W_q)
        d_a = torch.bmm(d_context.unsqueeze(1), self.memory_t).squeeze(1)
        if d_weights is not None:
            d_a = d_a + d_weights
        d_scores = _softmax_backward(d_a, a, -1, a.dtype)
        self.DS.append(d_scores)
        self.D_CTX.append(d_context)
        if self.score in ("dot", "general"):
            return torch.bmm(d_scores.unsqueeze(1), self.keys).squeeze(1)
        if self.score == "location":
            return torch.mm(d_scores, self.location_t.t())
        d_pre = _tanh_backward(d_scores.unsqueeze(2) * self.v_a, self.Z[t])  # [B, S, H]
        self.d_keys += d_pre
        self.d_v.addmv_(_flat(self.Z[t]).t(), d_scores.reshape(-1))
        d_pre_q = d_pre.sum(dim=1)
        self.D_PRE_Q.append(d_pre_q)
        return torch.mm(d_pre_q, self.W_q)

    def finish(self, queries: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None, list[torch.Tensor]]:
        """queries [T, B, H]. Returns d memory [B, S, H], d keys (or None) and the gradients of `params`."""
        if self.D_CTX_all is not None:  # the steps ran in C: their buffers, in step order
            A, DS, D_CTX = self.A_all, self.DS_all, self.D_CTX_all
        else:
            A = torch.stack(self.A)  # [T, B, S]
            DS = torch.stack(self.DS[::-1]) if self.DS else None  # backward ran t = T-1 .. 0
            D_CTX = torch.stack(self.D_CTX[::-1])  # [T, B, H]
        d_memory = torch.bmm(A.permute(1, 2, 0), D_CTX.transpose(0, 1))
        if self.score in ("dot", "general"):
            return d_memory, torch.bmm(DS.permute(1, 2, 0), queries.transpose(0, 1)), []
        flat_q = _flat(queries)
        if self.score == "location":
            d_location = torch.mm(_flat(DS).t(), flat_q)  # [S, H]
            weight = self.params[0]
            d_weight = torch.zeros_like(weight)
            rows = min(weight.size(0), d_location.size(0))
            d_weight[:rows] = d_location[:rows]
            return d_memory, None, [d_weight]
        D_PRE_Q = torch.stack(self.D_PRE_Q[::-1])
        d_W_q = torch.mm(_flat(D_PRE_Q).t(), flat_q)
        return d_memory, self.d_keys, [d_W_q, self.d_v.view_as(self.params[1])]


class _LocalCentres(_StepGradients):
    """Where both local kernels centre their window: local-m at p_t = t (the source word t of the written sentence when
    the source is reversed), known for every step in advance; local-p at p_t = S sigmoid(v_p^T tanh(W_p h_t)), predicted
    at each step, its gradient coming through the Gaussian that multiplies the weights."""

    def _set_up_centres(self, layer: nn.Module, first_step: int, steps: int) -> torch.Tensor | None:
        """local-p: its predictor's parameters (None); local-m: the centres of all steps [T, B]."""
        if self.mode == "local-p":
            self.W_p, self.v_p = layer.W_p.weight, layer.v_p.weight.view(-1)
            self.v_p_sum = self.v_p.sum()
            self.params += [self.W_p, layer.v_p.weight]
            return None
        last = (self.lengths - 1).unsqueeze(0)
        aligned = torch.arange(first_step, first_step + steps, device=self.lengths.device).unsqueeze(1)
        if layer.reverse:
            aligned = last - aligned
        return torch.minimum(aligned.clamp(min=0), last)

    def _predict_centre(self, query: torch.Tensor) -> tuple[torch.Tensor, tuple, torch.Tensor]:
        """local-p's p_t [B], what its backward pass reads, and the window's centre [B]. As LocalAttention.centres:
        v_p^T tanh(x) = 2 v_p^T sigmoid(2x) - sum(v_p), x = W_p h_t."""
        m = torch.sigmoid(2 * F.linear(query, self.W_p))  # [B, H]
        sig = torch.sigmoid(2 * torch.mv(m, self.v_p) - self.v_p_sum)  # [B]
        p = self.lengths.to(query.dtype) * sig
        return p, (m, sig), torch.minimum(torch.round(p).long(), self.lengths - 1)

    def _centre_backward(
        self,
        d_w: torch.Tensor,
        a: torch.Tensor,
        gauss: torch.Tensor,
        positions: torch.Tensor,
        p: torch.Tensor,
        predictor: tuple,
    ) -> torch.Tensor:
        """d (W_p h_t) [B, H] through the Gaussian (d_w: the gradient of the weights at `positions`); keeps it and the
        energy's gradient for the predictor's parameters."""
        # d/dp of exp(-(s - p)^2 / 2 sigma^2) = gauss (s - p) / sigma^2
        d_p = (d_w * a * gauss * (positions.to(a.dtype) - p.unsqueeze(1))).sum(1) * (2 / self.two_sigma2)
        m, sig = predictor
        d_e = _sigmoid_backward(d_p * self.lengths.to(a.dtype), sig)  # [B]
        d_pre_p = _sigmoid_backward(d_e.unsqueeze(1) * (2 * self.v_p), m) * 2  # d (W_p h_t)
        self.D_E.append(d_e)
        self.D_PRE_P.append(d_pre_p)
        return d_pre_p

    def _predictor_gradients(self, flat_queries: torch.Tensor, predictors: list[tuple]) -> list[torch.Tensor]:
        """The gradients of W_p and v_p over all steps (`predictors`: each step's, in step order)."""
        d_pre_p = torch.stack(self.D_PRE_P[::-1])  # [T, B, H]
        d_e = torch.stack(self.D_E[::-1])  # [T, B]
        m = torch.stack([predictor[0] for predictor in predictors])  # [T, B, H]
        # e = 2 v_p^T m - sum(v_p): d e / d v_p = 2 m - 1
        return [torch.mm(_flat(d_pre_p).t(), flat_queries), torch.einsum("tb,tbh->h", d_e, 2 * m - 1).view(1, -1)]


class LocalKernel(_LocalCentres):
    """Local attention (nmt.models.local_attention.LocalAttention), local-m or local-p: the window of 2D+1 encoder
    positions around p_t; scores, softmax over the window, local-p's Gaussian; positions outside the sentence get no
    weight. Reads only the window's rows of the encoder states, like the layer itself (local-m's windows do not depend
    on the decoder: they are gathered for all T steps at once). The gradients of the encoder states and of dot/general
    keys are summed over the steps by one product with the weights and score gradients scattered to source positions
    ([T, B, S], which the weights need anyway); concat's, whose key gradients are vectors per window position, are
    added up step by step."""

    def __init__(
        self,
        layer: nn.Module,
        memory: torch.Tensor,
        keys: torch.Tensor | None,
        mask: torch.Tensor,
        first_step: int,
        steps: int,
        save: bool,
    ):
        self.layer, self.score, self.mode = layer, layer.score, layer.mode
        self.memory, self.keys, self.save = memory, keys, save
        B, S, H = memory.shape
        self.B, self.S, self.H = B, S, H
        self.lengths = mask.sum(dim=1)
        self.flat_memory = memory.reshape(B * S, H)
        self.flat_keys = None if keys is None else keys.reshape(B * S, keys.size(-1))
        self.offsets = torch.arange(-layer.window, layer.window + 1, device=memory.device)
        self.batch_rows = (torch.arange(B, device=memory.device) * S).unsqueeze(1)
        self.two_sigma2 = 2 * layer.sigma**2
        self.params: list[torch.Tensor] = []
        if self.score == "location":
            self.W_a = layer.W_a.weight  # [2D+1, H]
            self.params.append(self.W_a)
        elif self.score == "concat":
            self.W_q, self.v_a = layer.W_q.weight, layer.v_a.weight.view(-1)
            self.params += [self.W_q, layer.v_a.weight]
            self.fused = native.usable(memory, keys)  # the energies by a compiled kernel (kernels.c)
            if self.fused:
                self.v_a = self.v_a.contiguous()
            if save:
                self.d_flat_keys = torch.zeros_like(self.flat_keys)
                self.d_v = torch.zeros_like(self.v_a)
                self.accumulators = (self.d_flat_keys, self.d_v)
        centres = self._set_up_centres(layer, first_step, steps)
        self.windows = None
        if centres is not None:  # local-m
            windows = self._windows(centres)  # for all T steps
            # per step at once (unbind), with the padding's -inf to add to the scores, and for dot/general the window's
            # keys transposed (a [1, H] x [H, W] product per sentence is faster than [W, H] x [H, 1])
            self.windows = [x.unbind(0) if x is not None else [None] * steps for x in windows]
            self.window_neg = (
                torch.zeros(windows[1].shape, dtype=memory.dtype, device=memory.device)
                .masked_fill_(windows[1], float("-inf"))
                .unsqueeze(2)
                .unbind(0)
            )
            self.window_keys_t = (
                windows[5].transpose(2, 3).contiguous().unbind(0) if self.score in ("dot", "general") else None
            )
        self.index, self.outside, self.rows, self.A, self.W = [], [], [], [], []
        self.saved: list[tuple] = []
        self.empty_lists()

    def _windows(self, centre: torch.Tensor):
        """Window positions for centres [..., B]: index (clamped into the batch's rows) [..., B, W], outside [..., B, W],
        rows of the flattened states, and those rows of memory and keys [..., B, W, H]."""
        positions = centre.unsqueeze(-1) + self.offsets
        outside = (positions < 0) | (positions >= self.lengths.unsqueeze(1))
        index = positions.clamp(0, self.S - 1)
        rows = (index + self.batch_rows).reshape(-1)
        shape = (*index.shape, self.H)
        window = self.flat_memory.index_select(0, rows).view(shape)
        window_keys = None
        if self.flat_keys is not None and self.score != "location":
            window_keys = self.flat_keys.index_select(0, rows).view(*index.shape, self.flat_keys.size(-1))
        return positions, outside, index, rows.view(index.shape), window, window_keys

    def forward(self, t: int, query: torch.Tensor) -> torch.Tensor:
        p = predictor = None
        neg = None
        if self.windows is not None:
            positions, outside, index, rows, window, window_keys = (x[t] for x in self.windows)
            neg = self.window_neg[t]
        else:  # local-p
            p, predictor, centre = self._predict_centre(query)
            positions, outside, index, rows, window, window_keys = self._windows(centre)
        z = None
        if self.score == "location":
            scores = F.linear(query, self.W_a)
        elif self.score == "concat":
            if self.fused:
                z, scores = native.additive_energy_forward(
                    native.library(), window_keys.contiguous(), F.linear(query, self.W_q), self.v_a
                )
            else:
                z = torch.tanh(window_keys + F.linear(query, self.W_q).unsqueeze(1))
                scores = torch.matmul(z, self.v_a)
        elif neg is not None:  # dot/general, local-m: the padding's -inf added by the product
            scores = torch.baddbmm(neg, query.unsqueeze(1), self.window_keys_t[t]).squeeze(1)
        else:
            scores = torch.bmm(window_keys, query.unsqueeze(2)).squeeze(2)
        if neg is None or self.score in ("location", "concat"):
            scores = scores.masked_fill(outside, float("-inf"))
        a = torch.softmax(scores, dim=-1)
        gauss = None
        if p is not None:
            gauss = torch.exp((positions.to(query.dtype) - p.unsqueeze(1)) ** 2 / -self.two_sigma2)
            weights = a * gauss
        else:
            weights = a
        self.index.append(index)
        self.outside.append(outside)
        self.W.append(weights)
        if self.save:
            self.rows.append(rows)
            self.saved.append((positions, window, window_keys, z, a, gauss, p, predictor))
        return torch.bmm(weights.unsqueeze(1), window).squeeze(1)

    def _scatter(self, values: list[torch.Tensor]) -> torch.Tensor:
        """Per-step window values [B, W] at their source positions: [T, B, S] (outside positions dropped)."""
        index = torch.stack(self.index)
        window = torch.stack(values).masked_fill(torch.stack(self.outside), 0.0)
        return window.new_zeros(index.size(0), self.B, self.S).scatter_add_(2, index, window)

    def weights(self) -> torch.Tensor:
        """[T, B, S]: each step's window weights at their source positions (one scatter for all steps)."""
        self.full = self._scatter(self.W)
        return self.full

    def backward(self, t: int, d_context: torch.Tensor, d_weights: torch.Tensor | None) -> torch.Tensor:
        positions, window, window_keys, z, a, gauss, p, predictor = self.saved[t]
        index, outside = self.index[t], self.outside[t]
        d_w = torch.bmm(d_context.unsqueeze(1), window.transpose(1, 2)).squeeze(1)  # [B, W]
        if d_weights is not None:
            d_w = d_w + d_weights.gather(1, index).masked_fill(outside, 0.0)
        d_pre_p = None
        if gauss is not None:
            d_a = d_w * gauss
            d_pre_p = self._centre_backward(d_w, a, gauss, positions, p, predictor)
        else:
            d_a = d_w
        d_scores = _softmax_backward(d_a, a, -1, a.dtype)
        self.DS.append(d_scores)
        self.D_CTX.append(d_context)
        if self.score == "location":
            d_q = torch.mm(d_scores, self.W_a)
        elif self.score == "concat":
            if self.fused:
                d_pre = torch.zeros_like(z)
                d_pre_q = native.additive_energy_backward(
                    native.library(), d_scores.contiguous(), z, self.v_a, d_pre, self.d_v
                )
            else:
                d_pre = _tanh_backward(d_scores.unsqueeze(2) * self.v_a, z)  # [B, W, H]
                self.d_v.addmv_(z.reshape(-1, z.size(-1)).t(), d_scores.reshape(-1))
                d_pre_q = d_pre.sum(dim=1)
            self.d_flat_keys.index_add_(0, self.rows[t].reshape(-1), d_pre.reshape(-1, d_pre.size(-1)))
            self.D_PRE_Q.append(d_pre_q)
            d_q = torch.mm(d_pre_q, self.W_q)
        else:
            d_q = torch.bmm(d_scores.unsqueeze(1), window_keys).squeeze(1)
        return d_q if d_pre_p is None else torch.addmm(d_q, d_pre_p, self.W_p)

    def finish(self, queries: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None, list[torch.Tensor]]:
        d_ctx = torch.stack(self.D_CTX[::-1])  # [T, B, H]
        d_memory = torch.bmm(self.full.permute(1, 2, 0), d_ctx.transpose(0, 1))
        flat_q = _flat(queries)
        param_grads: list[torch.Tensor] = []
        d_keys = None
        if self.score == "location":
            param_grads.append(torch.mm(_flat(torch.stack(self.DS[::-1])).t(), flat_q))
        elif self.score == "concat":
            d_keys = self.d_flat_keys.view_as(self.keys)
            param_grads.append(torch.mm(_flat(torch.stack(self.D_PRE_Q[::-1])).t(), flat_q))
            param_grads.append(self.d_v.view(1, -1))
        else:
            d_full = self._scatter(self.DS[::-1])  # [T, B, S]
            d_keys = torch.bmm(d_full.permute(1, 2, 0), queries.transpose(0, 1))
        if self.mode == "local-p":
            param_grads += self._predictor_gradients(flat_q, [saved[7] for saved in self.saved])
        return d_memory, d_keys, param_grads


class LocalBandKernel(_LocalCentres):
    """Local attention (local-m, local-p) for short sources: the same weights as LocalKernel, computed over all source
    positions with everything outside the window (and the sentence) masked, like global attention. Reading the window's
    rows costs a copy of them per step (2 B W H numbers for memory and keys); when the source is not much longer than the
    window (S <= 3 (2D + 1), the demo's and the small preset's sentences against D = 10), one product over all S
    positions in place is cheaper. Dot, general and concat scores (location scores are per window offset: LocalKernel).
    local-p's Gaussian multiplies the softmax, and p_t's gradient comes through it, as in LocalKernel."""

    def __init__(
        self,
        layer: nn.Module,
        memory: torch.Tensor,
        keys: torch.Tensor,
        mask: torch.Tensor,
        first_step: int,
        steps: int,
        save: bool,
    ):
        self.layer, self.score, self.mode, self.save = layer, layer.score, layer.mode, save
        B, S, H = memory.shape
        self.memory, self.keys = memory, keys
        self.lengths = mask.sum(dim=1)
        self.positions = torch.arange(S, device=memory.device)
        self.window, self.two_sigma2 = layer.window, 2 * layer.sigma**2
        self.params: list[torch.Tensor] = []
        self.fused = False
        if self.score == "concat":
            self.W_q, self.v_a = layer.W_q.weight, layer.v_a.weight.view(-1)
            self.params += [self.W_q, layer.v_a.weight]
            self.fused = native.usable(memory, keys)  # the energies by a compiled kernel (kernels.c)
            if self.fused:
                self.keys, self.v_a = keys.contiguous(), self.v_a.contiguous()
            if save:
                self.d_keys = torch.zeros_like(keys)
                self.d_v = torch.zeros_like(self.v_a)
                self.accumulators = (self.d_keys, self.d_v)
        else:
            self.keys_t = _transposed(keys) if save else None
        centres = self._set_up_centres(layer, first_step, steps)
        self.negs = None if centres is None else self._band(centres).unbind(0)  # local-m: all steps' windows
        self.memory_t = _transposed(memory) if save else None
        self.A, self.W, self.saved = [], [], []
        self.empty_lists()

    def _band(self, centre: torch.Tensor) -> torch.Tensor:
        """0 inside the window [centre - D, centre + D] and the sentence, -inf elsewhere: [..., B, S]."""
        offset = (self.positions - centre.unsqueeze(-1)).abs()
        inside = (offset <= self.window) & (self.positions < self.lengths.unsqueeze(1))
        return torch.zeros(inside.shape, dtype=self.memory.dtype, device=inside.device).masked_fill_(
            ~inside, float("-inf")
        )

    def forward(self, t: int, query: torch.Tensor) -> torch.Tensor:
        p = predictor = None
        if self.negs is not None:
            neg = self.negs[t]
        else:  # local-p
            p, predictor, centre = self._predict_centre(query)
            neg = self._band(centre)
        z = None
        if self.score == "concat":
            if self.fused:
                z, scores = native.additive_energy_forward(
                    native.library(), self.keys, F.linear(query, self.W_q), self.v_a
                )
            else:
                z = torch.tanh(self.keys + F.linear(query, self.W_q).unsqueeze(1))
                scores = torch.matmul(z, self.v_a)
            scores = scores + neg
        elif self.keys_t is not None:
            scores = torch.baddbmm(neg.unsqueeze(1), query.unsqueeze(1), self.keys_t).squeeze(1)
        else:
            scores = torch.baddbmm(neg.unsqueeze(2), self.keys, query.unsqueeze(2)).squeeze(2)
        a = torch.softmax(scores, dim=-1)
        gauss = None
        if p is not None:
            gauss = torch.exp((self.positions.to(query.dtype) - p.unsqueeze(1)) ** 2 / -self.two_sigma2)
            weights = a * gauss
        else:
            weights = a
        self.W.append(weights)
        if self.save:
            self.saved.append((z, a, gauss, p, predictor))
        return torch.bmm(weights.unsqueeze(1), self.memory).squeeze(1)

    def weights(self) -> torch.Tensor:
        return torch.stack(self.W)

    def backward(self, t: int, d_context: torch.Tensor, d_weights: torch.Tensor | None) -> torch.Tensor:
        z, a, gauss, p, predictor = self.saved[t]
        d_w = torch.bmm(d_context.unsqueeze(1), self.memory_t).squeeze(1)  # [B, S]
        if d_weights is not None:
            d_w = d_w + d_weights
        d_pre_p = None
        if gauss is not None:
            d_a = d_w * gauss
            d_pre_p = self._centre_backward(d_w, a, gauss, self.positions, p, predictor)
        else:
            d_a = d_w
        d_scores = _softmax_backward(d_a, a, -1, a.dtype)
        self.D_CTX.append(d_context)
        if self.score == "concat":
            if self.fused:
                d_pre_q = native.additive_energy_backward(
                    native.library(), d_scores.contiguous(), z, self.v_a, self.d_keys, self.d_v
                )
            else:
                d_pre = _tanh_backward(d_scores.unsqueeze(2) * self.v_a, z)
                self.d_keys += d_pre
                self.d_v.addmv_(_flat(z).t(), d_scores.reshape(-1))
                d_pre_q = d_pre.sum(dim=1)
            self.D_PRE_Q.append(d_pre_q)
            d_q = torch.mm(d_pre_q, self.W_q)
        else:
            self.DS.append(d_scores)
            d_q = torch.bmm(d_scores.unsqueeze(1), self.keys).squeeze(1)
        return d_q if d_pre_p is None else torch.addmm(d_q, d_pre_p, self.W_p)

    def finish(self, queries: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None, list[torch.Tensor]]:
        weights = torch.stack(self.W)  # [T, B, S]
        d_ctx = torch.stack(self.D_CTX[::-1])
        d_memory = torch.bmm(weights.permute(1, 2, 0), d_ctx.transpose(0, 1))
        flat_q = _flat(queries)
        param_grads: list[torch.Tensor] = []
        if self.score == "concat":
            d_keys = self.d_keys
            param_grads.append(torch.mm(_flat(torch.stack(self.D_PRE_Q[::-1])).t(), flat_q))
            param_grads.append(self.d_v.view(1, -1))
        else:
            d_keys = torch.bmm(torch.stack(self.DS[::-1]).permute(1, 2, 0), queries.transpose(0, 1))
        if self.mode == "local-p":
            param_grads += self._predictor_gradients(flat_q, [saved[4] for saved in self.saved])
        return d_memory, d_keys, param_grads


class MonotonicKernel:
    """Soft monotonic attention (nmt.models.monotonic.MonotonicAttention in soft mode, its default "clamped" form):
    p_i = sigmoid(e_i + noise) (0 on padding), alpha_i = p_i cp_i cumsum(alpha_{i-1} / clamp(cp_i, eps, 1)) with
    cp_i = exp(exclusive cumsum(log clamp(1 - p_i, eps, 1))), c_i = sum_j alpha_ij h_j. The state alpha_{i-1} chains
    the steps, and so does its gradient. The clamps pass gradients where their input lies within the bounds, as
    torch.clamp's backward does."""

    def __init__(
        self,
        layer: nn.Module,
        memory: torch.Tensor,
        keys: torch.Tensor,
        mask: torch.Tensor,
        state: torch.Tensor,
        steps: int,
        save: bool,
    ):
        self.energy, self.eps = layer.energy, layer.eps
        self.memory, self.keys, self.save = memory, keys, save
        B, S, H = memory.shape
        self.present = mask.to(memory.dtype)
        self.prev = state.to(memory.dtype)
        self.noise = None
        if layer.training and layer.noise > 0:
            self.noise = gaussian_noise((steps, B, S), layer.noise, memory.device, memory.dtype)
        if self.energy == "eq17":  # e = g s^T (W h) + r; keys = W h
            self.params = [layer.g, layer.r]
            self.keys_t = _transposed(keys) if save else None
        else:  # e = [g] (v^T [/ ||v||]) tanh(W s + V h + b) [+ r]; keys = V h + b
            self.W = layer.W.weight
            self.v = layer.v if self.energy == "eq15" else layer.v / layer.v.norm()
            self.params = [self.W, self.v] + ([layer.g, layer.r] if self.energy == "eq16" else [])
        self.memory_t = _transposed(memory) if save else None
        self.native = native.usable(memory, self.prev)
        if self.native:
            self.present, self.prev = self.present.contiguous(), self.prev.contiguous()
            if self.energy != "eq17":
                self.keys, self.v = self.keys.contiguous(), self.v.contiguous()
        if save and self.energy != "eq17":
            self.d_keys = torch.zeros_like(keys)
            self.d_v = torch.zeros_like(self.v)
        self.A: list[torch.Tensor] = []
        self.saved: list[tuple] = []
        self.d_prev = None
        self.DE, self.D_CTX, self.D_PRE = [], [], []

    def begin_backward(self) -> None:
        self.d_prev = None
        self.DE, self.D_CTX, self.D_PRE = [], [], []
        if self.energy != "eq17" and self.save:
            self.d_keys.zero_()
            self.d_v.zero_()

    @property
    def state(self) -> torch.Tensor:
        return self.prev

    def forward(self, t: int, query: torch.Tensor) -> torch.Tensor:
        z = qk = None
        if self.energy == "eq17":
            if self.keys_t is not None:
                qk = torch.bmm(query.unsqueeze(1), self.keys_t).squeeze(1)
            else:
                qk = torch.bmm(self.keys, query.unsqueeze(2)).squeeze(2)
            energies = qk * self.params[0] + self.params[1]
        else:
            if self.native:  # one pass (kernels.c) for the next two lines
                z, energies = native.additive_energy_forward(
                    native.library(), self.keys, F.linear(query, self.W), self.v
                )
            else:
                z = torch.tanh(self.keys + F.linear(query, self.W).unsqueeze(1))  # [B, S, A]
                energies = torch.matmul(z, self.v)
            if self.energy == "eq16":
                energies = energies * self.params[2] + self.params[3]
        if self.noise is not None:
            energies = energies + self.noise[t]
        if self.native:
            sig, p, cumprod, cumsum, alpha = native.monotonic_forward(
                native.library(), energies.contiguous(), self.present, self.prev, self.eps
            )
        else:
            sig = torch.sigmoid(energies)
            p = sig * self.present
            logs = (1.0 - p).clamp(self.eps, 1.0).log_()
            cumprod = F.pad(torch.cumsum(logs, dim=-1)[:, :-1], (1, 0)).exp_()  # exclusive product of (1 - p)
            cumsum = torch.cumsum(self.prev / cumprod.clamp(self.eps, 1.0), dim=-1)
            alpha = p * cumprod * cumsum
        if self.save:
            self.saved.append((z, qk, sig, p, cumprod, cumsum, self.prev))
        self.prev = alpha
        self.A.append(alpha)
        return torch.bmm(alpha.unsqueeze(1), self.memory).squeeze(1)

    def weights(self) -> torch.Tensor:
        return torch.stack(self.A)

    def backward(self, t: int, d_context: torch.Tensor, d_weights: torch.Tensor | None) -> torch.Tensor:
        z, qk, sig, p, cumprod, cumsum, prev = self.saved[t]
        d_alpha = torch.bmm(d_context.unsqueeze(1), self.memory_t).squeeze(1)
        if d_weights is not None:
            d_alpha = d_alpha + d_weights
        if self.d_prev is not None:
            d_alpha = d_alpha + self.d_prev
        if self.native:
            d_e, self.d_prev = native.monotonic_backward(
                native.library(), d_alpha.contiguous(), self.present, prev, self.eps, sig, p, cumprod, cumsum
            )
        else:
            d_e = self._backward(d_alpha, sig, p, cumprod, cumsum, prev)
        self.DE.append(d_e)
        self.D_CTX.append(d_context)
        if self.energy == "eq17":
            return torch.bmm(d_e.unsqueeze(1), self.keys).squeeze(1) * self.params[0]
        if self.native:  # d keys and d v accumulate unscaled by g (eq16: d v and d keys times g in finish)
            d_pre = native.additive_energy_backward(
                native.library(), d_e.contiguous(), z, self.v, self.d_keys, self.d_v
            )
            if self.energy == "eq16":
                d_pre = d_pre * self.params[2]
            self.D_PRE.append(d_pre)
            return torch.mm(d_pre, self.W)
        self.d_v.addmv_(_flat(z).t(), d_e.reshape(-1))  # (times g for eq16: finish)
        if self.energy == "eq16":
            d_e = d_e * self.params[2]
        d_z = _tanh_backward(d_e.unsqueeze(2) * self.v, z)  # [B, S, A]
        self.d_keys += d_z
        d_pre = d_z.sum(dim=1)
        self.D_PRE.append(d_pre)
        return torch.mm(d_pre, self.W)

    def _backward(self, d_alpha, sig, p, cumprod, cumsum, prev) -> torch.Tensor:
        """The recursion's backward in torch operations (what kernels.c's monotonic_backward computes): d energies,
        and self.d_prev, the gradient of the previous step's alpha."""
        clamped = cumprod.clamp(self.eps, 1.0)
        one_minus = 1.0 - p
        d_u = (d_alpha * p * cumprod).flip(-1).cumsum(-1).flip(-1)  # cumsum's backward: suffix sums
        self.d_prev = d_u / clamped
        d_cumprod = d_alpha * p * cumsum - self.d_prev * prev / clamped * (cumprod >= self.eps)
        # the exclusive cumsum's backward: d logs_l = sum_{j > l} d out_j
        d_logs = F.pad((d_cumprod * cumprod).flip(-1).cumsum(-1).flip(-1)[:, 1:], (0, 1))
        d_p = d_alpha * cumprod * cumsum - d_logs / one_minus.clamp(self.eps, 1.0) * (one_minus >= self.eps)
        return _sigmoid_backward(d_p * self.present, sig)

    def finish(self, queries: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None, list[torch.Tensor]]:
        A = torch.stack(self.A)
        d_ctx = torch.stack(self.D_CTX[::-1])
        d_e = torch.stack(self.DE[::-1])  # [T, B, S]
        d_memory = torch.bmm(A.permute(1, 2, 0), d_ctx.transpose(0, 1))
        if self.energy == "eq17":
            g = self.params[0]
            d_keys = torch.bmm(d_e.permute(1, 2, 0), queries.transpose(0, 1)) * g
            qk = torch.stack([s[1] for s in self.saved])
            return d_memory, d_keys, [(d_e * qk).sum().view_as(g), d_e.sum().view_as(self.params[1])]
        d_W = torch.mm(_flat(torch.stack(self.D_PRE[::-1])).t(), _flat(queries))
        if self.energy == "eq15":
            return d_memory, self.d_keys, [d_W, self.d_v]
        g = self.params[2]
        v_z = torch.stack([torch.matmul(s[0], self.v) for s in self.saved])  # [T, B, S]
        d_keys = self.d_keys * g if self.native else self.d_keys  # the compiled kernel's d keys are unscaled by g
        return d_memory, d_keys, [d_W, self.d_v * g, (d_e * v_z).sum().view_as(g), d_e.sum().view_as(self.params[3])]


class AutogradKernel:
    """Any attention layer with a `step_context(query [B, 1, H], memory, keys, mask, step, state)` method returning
    (context [B, 1, H], weights [B, 1, S], state), differentiated by autograd step by step. The attention state
    (monotonic attention's previous alignment) chains the steps; its gradient is carried backwards."""

    def __init__(
        self,
        layer: nn.Module,
        memory: torch.Tensor,
        keys: torch.Tensor | None,
        mask: torch.Tensor,
        first_step: int,
        state: torch.Tensor | None,
        save: bool,
    ):
        self.layer, self.mask, self.first_step, self.save = layer, mask, first_step, save
        w_c = getattr(getattr(layer, "W_c", None), "weight", None)
        self.params = [p for p in layer.parameters() if p.requires_grad and p is not w_c]
        if save:
            memory = memory.detach().requires_grad_()
            keys = None if keys is None else keys.detach().requires_grad_()
        self.memory, self.keys = memory, keys
        self.state = state
        self.A: list[torch.Tensor] = []
        self.steps: list[tuple] = []
        self.d_state = None
        self.grad_memory = torch.zeros_like(memory) if save else None
        self.grad_keys = None if keys is None or not save else torch.zeros_like(keys)
        self.grad_params = [torch.zeros_like(p) for p in self.params] if save else []

    def begin_backward(self) -> None:
        self.d_state = None
        for acc in [self.grad_memory, self.grad_keys, *self.grad_params]:
            if acc is not None:
                acc.zero_()

    def forward(self, t: int, query: torch.Tensor) -> torch.Tensor:
        if not self.save:
            context, weights, self.state = self.layer.step_context(
                query.unsqueeze(1), self.memory, self.keys, self.mask, self.first_step + t, self.state
            )
            self.A.append(weights.squeeze(1))
            return context.squeeze(1)
        with torch.enable_grad():
            q = query.detach().clone().requires_grad_()  # (the query is a view of the decoder's buffers, written on)
            state_in = self.state
            if state_in is not None and state_in.is_floating_point():
                state_in = state_in.detach().requires_grad_()
            context, weights, state = self.layer.step_context(
                q.unsqueeze(1), self.memory, self.keys, self.mask, self.first_step + t, state_in
            )
            context, weights = context.squeeze(1), weights.squeeze(1)  # views made with grad mode on
        self.steps.append((q, state_in, context, weights, state))
        self.state = state.detach() if state is not None else None
        self.A.append(weights.detach())
        return context.detach()

    def weights(self) -> torch.Tensor:
        return torch.stack(self.A)

    def backward(self, t: int, d_context: torch.Tensor, d_weights: torch.Tensor | None) -> torch.Tensor:
        q, state_in, context, weights, state_out = self.steps[t]
        outputs, grads = [context], [d_context]
        if d_weights is not None:
            outputs.append(weights)
            grads.append(d_weights)
        if self.d_state is not None and state_out is not None and state_out.requires_grad:
            outputs.append(state_out)
            grads.append(self.d_state)
        inputs = [q, self.memory] + ([self.keys] if self.keys is not None else []) + self.params
        with_state = state_in is not None and state_in.requires_grad
        if with_state:
            inputs.append(state_in)
        found = torch.autograd.grad(outputs, inputs, grads, allow_unused=True)
        d_q, d_mem = found[0], found[1]
        rest = list(found[2:])
        if self.keys is not None:
            d_keys = rest.pop(0)
            if d_keys is not None:
                self.grad_keys += d_keys
        if d_mem is not None:
            self.grad_memory += d_mem
        for acc, g in zip(self.grad_params, rest[: len(self.params)]):
            if g is not None:
                acc += g
        self.d_state = rest[len(self.params)] if with_state else None
        return d_q if d_q is not None else torch.zeros_like(q)

    def finish(self, queries: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None, list[torch.Tensor]]:
        return self.grad_memory, self.grad_keys, self.grad_params


KERNELS = ("global", "local", "monotonic")  # what a registry entry may name (nmt.settings.attention_variants)


def make_kernel(
    layer: nn.Module,
    kind: str | None,
    memory: torch.Tensor,
    keys: torch.Tensor | None,
    mask: torch.Tensor,
    first_step: int,
    state: torch.Tensor | None,
    steps: int,
    save: bool,
    autograd: bool = False,
):
    """The fastest kernel there is for this attention layer (see the module docstring): `kind` is the one its
    variant's registry entry names (None: the generic one); `autograd` forces the generic one (tests compare the
    two)."""
    kind = None if autograd else kind
    if kind == "global":
        return GlobalKernel(layer, memory, keys, mask, save)
    if kind == "local":
        if layer.score != "location" and memory.size(1) <= 3 * (2 * layer.window + 1):
            return LocalBandKernel(layer, memory, keys, mask, first_step, steps, save)
        return LocalKernel(layer, memory, keys, mask, first_step, steps, save)
    if kind == "monotonic" and not layer.hard and layer.soft_form == "clamped":
        return MonotonicKernel(layer, memory, keys, mask, state, steps, save)
    return AutogradKernel(layer, memory, keys, mask, first_step, state, save)
