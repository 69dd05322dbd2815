"""The attention layers of the Luong model's variants (model.attention): each variant's record
(nmt.settings.attention_variants: its keys, credit rule, label and fast kernel) names its layer's class, built here.
A variant that reuses a layer (local-m and local-p) is one record; a new layer's class goes into :data:`LAYERS`."""

from __future__ import annotations

from torch import nn

from ..base.errors import ConfigError
from ..settings import ModelSettings
from ..settings.attention_variants import CONTENT_SCORES, CREDIT_RULES, VARIANTS, AttentionVariant
from .attention import GlobalAttention
from .local_attention import LocalAttention
from .monotonic import MonotonicAttention

__all__ = ["CONTENT_SCORES", "CREDIT_RULES", "LAYERS", "VARIANTS", "AttentionVariant", "build_attention", "variant"]

#: the attention layers a variant's record may name, by class name
LAYERS: dict[str, type[nn.Module]] = {
    layer.__name__: layer for layer in (GlobalAttention, LocalAttention, MonotonicAttention)
}


def variant(model: ModelSettings) -> AttentionVariant:
    name = model.attention
    if name not in VARIANTS:
        raise ConfigError(f"unknown model.attention {name!r}; choose one of {', '.join(VARIANTS)}")
    return VARIANTS[name]


def build_attention(model: ModelSettings) -> nn.Module | None:
    """The attention layer a model config asks for (None for attention: none)."""
    chosen = variant(model)
    return None if chosen.layer is None else LAYERS[chosen.layer](**chosen.arguments(model))
