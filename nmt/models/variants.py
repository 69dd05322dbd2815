"""The attention variants of the Luong model (model.attention), one registry entry each.

An entry says everything the rest of the pipeline needs to know about a variant: how to build its layer from the
model config, which config keys it reads, which decoder step's weights are credited to a target word when
alignments are extracted (nmt.align.extract), and how the papers label it (heat maps, tables). Adding a variant
is its module plus one entry here (and its table rows); docs/contributing.md walks through it.

Crediting (Luong et al. 2015, footnote 14): content-based scores (dot, general, concat) compare the decoder state
that has just read y_{t-1} with the source words, so the weights of the step that reads y_t belong to y_t
("read"); location-based scores (a_t = softmax(W_a h_t) never looks at the source words) are credited to the word
the step predicts ("predicted"). Monotonic attention's energies are content-based too (Raffel et al. eq. 15-17).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from torch import nn

from ..base.errors import ConfigError
from ..settings import ModelSettings
from .attention import GlobalAttention
from .local_attention import LocalAttention
from .monotonic import MonotonicAttention

CONTENT_SCORES = ("dot", "general", "concat")
CREDIT_RULES = ("read", "predicted")


def _by_score(model: ModelSettings) -> str:
    return "read" if model.score in CONTENT_SCORES else "predicted"


def _scored_label(model: ModelSettings) -> str:
    return f"{model.attention} ({model.score})"  # "local-p (general)", as Luong et al.'s Figure 7


@dataclass(frozen=True)
class AttentionVariant:
    name: str
    build: Callable[[ModelSettings], nn.Module | None]  # the layer for a model's settings (None: no attention)
    credit: Callable[[ModelSettings], str]               # "read" or "predicted" (module doc)
    label: Callable[[ModelSettings], str]
    keys: tuple[str, ...]                       # the model config keys the layer reads, beyond hidden
    # the fast decoder's step kernel for the layer (nmt.engine.attention_kernels.KERNELS); None: the reference layer
    # itself, differentiated by autograd step by step (correct for any layer, not fast)
    kernel: str | None = None
    # whether the input-feeding decoder's update may be replayed from CUDA graphs (nmt.engine.cuda_graphs), every score:
    # what is recorded is the layer's own `forward` under autograd (nmt.engine.graph_decoder), so the layer must compute
    # on the device alone (no host read, no branch on a tensor's values: tests/test_cuda_graphs.py traces it whole)
    graphed: bool = False


def _local(mode: str) -> AttentionVariant:
    return AttentionVariant(
        mode, lambda m: LocalAttention(m.hidden, m.score, mode, m.window, m.reverse),
        _by_score, _scored_label, ("score", "window", "reverse"), "local", graphed=True)


VARIANTS: dict[str, AttentionVariant] = {v.name: v for v in (
    AttentionVariant("none", lambda m: None, _by_score, _scored_label, ()),
    AttentionVariant("global", lambda m: GlobalAttention(m.hidden, m.score, m.max_src_len),
                     _by_score, _scored_label, ("score", "max_src_len"), "global", graphed=True),
    _local("local-m"),
    _local("local-p"),
    AttentionVariant(
        "monotonic",
        lambda m: MonotonicAttention(m.hidden, m.energy, m.attention_dim or None,
                                     bias_init=float(m.energy_bias), noise=float(m.attention_noise)),
        lambda m: "read",
        lambda m: f"monotonic ({m.energy.replace('eq', 'eq. ')})",
        # its soft mode's kernel; not graphed: Raffel et al.'s layer carries a state from step to step, which the
        # graphed decoder (written for Luong et al.'s attention) does not
        ("energy", "energy_bias", "attention_dim", "attention_noise"), "monotonic"),
)}


def variant(model: ModelSettings) -> AttentionVariant:
    name = model.attention
    if name not in VARIANTS:
        raise ConfigError(f"unknown model.attention {name!r}; choose one of {', '.join(VARIANTS)}")
    return VARIANTS[name]


def build_attention(model: dict) -> nn.Module | None:
    """The attention layer a model config asks for (None for attention: none)."""
    return variant(model).build(model)
