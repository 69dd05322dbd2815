"""Ensembles: N trained models decoded together, combining their next-word distributions at every step.
Details: docs/internals/models.md."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from ..base.errors import ConfigError

COMBINATIONS = ("prob", "logprob")


@dataclass
class EnsembleEncoderOutput:
    members: list

    def select(self, index: torch.Tensor) -> "EnsembleEncoderOutput":
        return EnsembleEncoderOutput([m.select(index) for m in self.members])


@dataclass
class EnsembleState:
    members: list

    def select(self, index: torch.Tensor) -> "EnsembleState":
        return EnsembleState([s.select(index) for s in self.members])


class Ensemble(nn.Module):
    def __init__(self, models: list[nn.Module], combine: str = "prob"):
        super().__init__()
        if not models:
            raise ValueError("an ensemble needs at least one model")
        if combine not in COMBINATIONS:
            raise ConfigError(f"unknown ensemble combination {combine!r}; choose one of {', '.join(COMBINATIONS)}")
        self.models = nn.ModuleList(models)
        self.combine = combine

    def encode(self, src: torch.Tensor, src_len: torch.Tensor) -> EnsembleEncoderOutput:
        return EnsembleEncoderOutput([m.encode(src, src_len) for m in self.models])

    def initial_state(self, enc: EnsembleEncoderOutput) -> EnsembleState:
        return EnsembleState([m.initial_state(e) for m, e in zip(self.models, enc.members)])

    def step(
        self, prev: torch.Tensor, enc: EnsembleEncoderOutput, state: EnsembleState
    ) -> tuple[torch.Tensor, EnsembleState, torch.Tensor | None]:
        log_probs, states, weights = [], [], []
        for model, e, s in zip(self.models, enc.members, state.members):
            lp, new_state, w = model.step(prev, e, s)
            log_probs.append(lp)
            states.append(new_state)
            if w is not None:
                weights.append(w)
        stacked = torch.stack(log_probs)  # [N, B, V]
        if self.combine == "prob":
            combined = torch.logsumexp(stacked, dim=0) - math.log(len(log_probs))
        else:
            combined = torch.log_softmax(stacked.mean(dim=0), dim=-1)
        mean_weights = torch.stack(weights).mean(dim=0) if weights else None
        return combined, EnsembleState(states), mean_weights
