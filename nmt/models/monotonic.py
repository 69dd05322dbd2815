"""Monotonic attention of Raffel, Luong, Liu, Weiss and Eck (ICML 2017), "Online and Linear-Time Attention by
Enforcing Monotonic Alignments".
Details: docs/internals/models.md."""

from __future__ import annotations

import math
from typing import Callable

import torch
import torch.nn.functional as F
from torch import nn

ENERGIES = ("eq15", "eq16", "eq17")
MODES = ("soft", "hard")
SOFT_FORMS = ("clamped", "logspace")  # the paper's parallel form; the same without its clamped division


def exclusive_cumprod(x: torch.Tensor, eps: float) -> torch.Tensor:
    """prod_{l<j} x_l along the last dim (1 at j = 0), in log space: exp(exclusive cumsum(log(clamp(x, eps, 1)))).

    Log space because torch's cumprod gradient divides by the running product (nan/inf once it underflows), and
    the clamp keeps log away from log(0) when p rounds to 1."""
    logs = torch.log(x.clamp(eps, 1.0))
    return torch.exp(F.pad(torch.cumsum(logs, dim=-1)[..., :-1], (1, 0)))


def soft_monotonic_weights(p: torch.Tensor, prev_alpha: torch.Tensor, eps: float) -> torch.Tensor:
    """alpha_i [B, S] from p_i [B, S] and alpha_{i-1} [B, S] (the paper's parallel form, see the module docstring):
    alpha_i = p_i * cumprod_excl(1 - p_i) * cumsum(alpha_{i-1} / clamp(cumprod_excl(1 - p_i), eps, 1))."""
    cumprod = exclusive_cumprod(1.0 - p, eps)
    return p * cumprod * torch.cumsum(prev_alpha / cumprod.clamp(eps, 1.0), dim=-1)


def soft_monotonic_weights_logspace(p: torch.Tensor, prev_alpha: torch.Tensor, eps: float) -> torch.Tensor:
    """The same alpha_i without the clamped division: with L_j = sum_{l<j} log(clamp(1 - p_il, eps, 1)),
      alpha_ij = p_ij sum_{k<=j} alpha_{i-1,k} exp(L_j - L_k)
               = p_ij exp(L_j + logcumsumexp_k(log alpha_{i-1,k} - L_k)).

    exp(L_j - L_k) <= 1 for k <= j, so nothing overflows however small the products get, and logcumsumexp keeps
    -L_k (up to 23 S) in log space. alpha_{i-1} is floored at the dtype's smallest normal number before the log
    (log 0 would give nan gradients); that adds at most S times that number to a weight."""
    logs = F.pad(torch.cumsum(torch.log((1.0 - p).clamp(eps, 1.0)), dim=-1)[..., :-1], (1, 0))
    floor = torch.finfo(prev_alpha.dtype).tiny
    return p * torch.exp(logs + torch.logcumsumexp(torch.log(prev_alpha.clamp_min(floor)) - logs, dim=-1))


def hard_monotonic_step(
    p_at: Callable[[torch.Tensor, torch.Tensor], torch.Tensor], pointer: torch.Tensor, lengths: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, int]:
    """One output step of the hard process for a batch.

    p_at(rows, positions) gives p for those (sentence, position) pairs ([N] each, returns [N]); it is only ever
    asked about the current pointers of the sentences still walking. pointer [B] long: t_{i-1} (= length once a
    sentence is exhausted); lengths [B].

    Returns the new pointers [B] (t_i, or the length where no position stopped), whether each sentence attends
    ([B] bool; False = exhausted, zero context) and how many p were evaluated.
    """
    pointer = pointer.clone()
    attends = torch.zeros_like(pointer, dtype=torch.bool)
    rows = (pointer < lengths).nonzero().squeeze(1)
    evaluated = 0
    while rows.numel():
        positions = pointer.index_select(0, rows)
        stop = p_at(rows, positions) >= 0.5
        evaluated += rows.numel()
        attends[rows[stop]] = True
        # Rows that did not stop move on to their next entry; those that ran off their sentence are done.
        moving = rows[~stop]
        pointer[moving] += 1
        rows = moving[pointer.index_select(0, moving) < lengths.index_select(0, moving)]
    return pointer, attends, evaluated


class MonotonicAttention(nn.Module):
    def __init__(
        self,
        hidden: int,
        energy: str,
        attention_dim: int | None = None,
        bias_init: float = -1.0,
        noise: float = 1.0,
        eps: float = 1e-10,
    ):
        super().__init__()
        if energy not in ENERGIES:
            raise ValueError(f"unknown monotonic attention energy {energy!r}; choose one of {', '.join(ENERGIES)}")
        if energy == "eq17" and attention_dim not in (None, hidden):
            raise ValueError(
                f"the eq17 energy g s^T W h + r has W of size hidden x hidden ({hidden}); "
                f"attention_dim={attention_dim} does not apply to it"
            )
        attention_dim = hidden if attention_dim is None else attention_dim
        if attention_dim < 1:
            raise ValueError(f"attention_dim must be positive, got {attention_dim}")
        if noise < 0:
            raise ValueError(f"the pre-sigmoid noise is a standard deviation, got {noise}")
        if not 0 < eps < 1:
            raise ValueError(f"eps must be in (0, 1), got {eps}")
        self.energy = energy
        self.hidden = hidden
        self.attention_dim = attention_dim
        self.bias_init = bias_init
        self.noise = noise
        self.eps = eps
        self.hard = False
        self.soft_form = "clamped"  # SOFT_FORMS: how the soft mode computes alpha_i (see the module docstring)
        self.energy_evaluations = 0  # (sentence, position) energies computed in hard mode; tests reset it to 0
        if energy == "eq17":
            self.W = nn.Linear(hidden, hidden, bias=False)
        else:
            self.W = nn.Linear(hidden, attention_dim, bias=False)  # W s_i
            self.V = nn.Linear(hidden, attention_dim, bias=True)  # V h_j + b: the keys
            self.v = nn.Parameter(torch.empty(attention_dim))
            bound = 1.0 / math.sqrt(attention_dim)  # nn.Linear's default init for a 1-output layer
            nn.init.uniform_(self.v, -bound, bound)
        if energy != "eq15":
            self.g = nn.Parameter(torch.empty(()))
            self.r = nn.Parameter(torch.empty(()))
        self.W_c = nn.Linear(2 * hidden, hidden, bias=False)
        self.reset_scalars()

    def reset_scalars(self) -> None:
        """g = 1/sqrt(attention dim) and r = bias_init (eq16, eq17; eq15 has neither). The model calls this after
        its uniform initialisation of all parameters, which would otherwise leave g and r in [-0.1, 0.1]."""
        if self.energy == "eq15":
            return
        with torch.no_grad():
            self.g.fill_(1.0 / math.sqrt(self.attention_dim))
            self.r.fill_(self.bias_init)

    def extra_repr(self) -> str:
        return (
            f"energy={self.energy}, attention_dim={self.attention_dim}, bias_init={self.bias_init}, "
            f"noise={self.noise}, eps={self.eps}, hard={self.hard}, soft_form={self.soft_form}"
        )

    # -- energies ------------------------------------------------------------------------------------------------
    def keys(self, memory: torch.Tensor) -> torch.Tensor:
        """The per-sentence part of the energy, computed once before decoding. memory [B, S, H] ->
        eq15/eq16: V h_j + b [B, S, attention_dim]; eq17: W h_j [B, S, H]."""
        return self.W(memory) if self.energy == "eq17" else self.V(memory)

    def _from_hidden(self, hidden: torch.Tensor) -> torch.Tensor:
        """eq15/eq16: the energy from tanh's argument W s + V h + b [..., A] -> [...]."""
        if self.energy == "eq15":
            return torch.tanh(hidden) @ self.v
        return self.g * (torch.tanh(hidden) @ (self.v / self.v.norm())) + self.r

    def energies(self, query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        """e_ij for every query [B, T, H] and every memory position (keys [B, S, K]): [B, T, S]. Soft mode."""
        if self.energy == "eq17":
            return self.g * torch.bmm(query, keys.transpose(1, 2)) + self.r
        return self._from_hidden(self.W(query).unsqueeze(2) + keys.unsqueeze(1))  # via [B, T, S, A]

    def energies_at(self, query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        """e for N (query, key) pairs: query [N, H], keys [N, K] -> [N]. Hard mode: one memory entry each."""
        if self.energy == "eq17":
            return self.g * (query * keys).sum(-1) + self.r
        return self._from_hidden(self.W(query) + keys)

    def p_choose(self, query: torch.Tensor, keys: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """p_ij = sigmoid(e_ij + noise) [B, T, S]; noise N(0, noise^2) only while training; 0 on padding."""
        energies = self.energies(query, keys)
        if self.training and self.noise > 0:
            energies = energies + self.noise * torch.randn_like(energies)
        return torch.sigmoid(energies).masked_fill(~mask.unsqueeze(1), 0.0)

    # -- attention -----------------------------------------------------------------------------------------------
    def initial_state(self, mask: torch.Tensor) -> torch.Tensor:
        """The state before the first output step for mask [B, S] (True = a real source word): soft: alpha_0,
        one-hot on position 0 [B, S] float; hard: the pointers, zeros [B] long."""
        if self.hard:
            return torch.zeros(mask.size(0), dtype=torch.long, device=mask.device)
        alpha = torch.zeros(mask.shape, device=mask.device)
        alpha[:, 0] = 1.0
        return alpha

    def context(
        self, query: torch.Tensor, memory: torch.Tensor, keys: torch.Tensor, mask: torch.Tensor, state: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """query [B, T, H] (T >= 1 output steps, taken in order), memory [B, S, H], keys from `keys(memory)`,
        mask [B, S] (True = a real source word), state from `initial_state` or the previous call.

        Returns the contexts c_i [B, T, H], the weights [B, T, S] and the state after the last step.
        """
        if self.hard:
            return self._hard_context(query, memory, keys, mask, state)
        if state.dim() != 2 or not state.is_floating_point():
            raise ValueError(
                f"soft monotonic attention expects the state alpha [B, S] (float), got "
                f"{tuple(state.shape)} {state.dtype}: was it made by initial_state in hard mode?"
            )
        if self.soft_form not in SOFT_FORMS:
            raise ValueError(f"unknown soft_form {self.soft_form!r}; choose one of {', '.join(SOFT_FORMS)}")
        step = soft_monotonic_weights if self.soft_form == "clamped" else soft_monotonic_weights_logspace
        p = self.p_choose(query, keys, mask)
        alpha = state.to(p.dtype)
        weights = []
        for i in range(query.size(1)):  # alpha_i depends on alpha_{i-1}
            alpha = step(p[:, i], alpha, self.eps)
            weights.append(alpha)
        weights = torch.stack(weights, dim=1)
        return torch.bmm(weights, memory), weights, alpha

    def _hard_context(
        self, query: torch.Tensor, memory: torch.Tensor, keys: torch.Tensor, mask: torch.Tensor, pointer: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        if self.training:
            raise RuntimeError(
                "hard monotonic attention is the test-time process and is not differentiable; "
                "call model.eval() (training uses the soft expected alignment)"
            )
        if pointer.dim() != 1 or pointer.dtype != torch.long:
            raise ValueError(
                f"hard monotonic attention expects the state [B] (long pointers), got "
                f"{tuple(pointer.shape)} {pointer.dtype}: was it made by initial_state in soft mode?"
            )
        B, T, H = query.shape
        S = memory.size(1)
        lengths = mask.sum(dim=1)
        flat_memory, flat_keys = memory.reshape(B * S, H), keys.reshape(B * S, keys.size(-1))
        contexts = memory.new_zeros(B, T, H)
        weights = memory.new_zeros(B, T, S)
        for i in range(T):
            q = query[:, i]

            def p_at(rows: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
                # Only the keys at the pointers of the walking sentences: no [B, S] energy matrix.
                return torch.sigmoid(
                    self.energies_at(q.index_select(0, rows), flat_keys.index_select(0, rows * S + positions))
                )

            pointer, attends, evaluated = hard_monotonic_step(p_at, pointer, lengths)
            self.energy_evaluations += evaluated
            rows = attends.nonzero().squeeze(1)
            chosen = pointer.index_select(0, rows)
            contexts[rows, i] = flat_memory.index_select(0, rows * S + chosen)
            weights[rows, i, chosen] = 1.0
        return contexts, weights, pointer

    def step_context(
        self,
        query: torch.Tensor,
        memory: torch.Tensor,
        keys: torch.Tensor,
        mask: torch.Tensor,
        step: int,
        state: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """One decoder step (query [B, 1, H]) for the fast decoder's AutogradKernel: `context` of that step."""
        return self.context(query, memory, keys, mask, state)

    def forward(
        self, query: torch.Tensor, memory: torch.Tensor, keys: torch.Tensor, mask: torch.Tensor, state: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """htilde_i = tanh(W_c [c_i ; s_i]) [B, T, H] (as in GlobalAttention), the weights [B, T, S] and the new
        state; the arguments are those of `context`."""
        context, weights, state = self.context(query, memory, keys, mask, state)
        htilde = torch.tanh(self.W_c(torch.cat([context, query], dim=-1)))
        return htilde, weights, state


def set_monotonic_mode(model: nn.Module, mode: str) -> None:
    """Soft ("soft": the expected alignment) or hard ("hard": the linear-time process, decoding only) monotonic
    attention for every MonotonicAttention in `model`. "hard" on a model without one is an error (a request for
    hard decoding that would silently do nothing); "soft" is the default and a no-op there."""
    if mode not in MODES:
        raise ValueError(f"unknown monotonic attention mode {mode!r}; choose one of {', '.join(MODES)}")
    layers = [m for m in model.modules() if isinstance(m, MonotonicAttention)]
    if mode == "hard" and not layers:
        raise ValueError(
            f"hard monotonic decoding asked for, but the model ({type(model).__name__}) has no monotonic attention"
        )
    for layer in layers:
        layer.hard = mode == "hard"
