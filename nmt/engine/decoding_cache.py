"""Weights a decoder rearranges for its step loop, computed once per decoding instead of once per step.
Details: docs/internals/engine.md."""

from __future__ import annotations

import contextlib

import torch
from torch import nn

_CACHE_ATTR = "_fast_decoder_weights"


@contextlib.contextmanager
def decoding_cache(model: nn.Module):
    """Within this context `cached` keeps what the decoders of `model` and of every module inside it (an ensemble's
    members, their LSTMs) rearrange, for every decoding step (see the module docstring)."""
    members = list(model.modules()) if isinstance(model, nn.Module) else []
    for member in members:
        object.__setattr__(member, _CACHE_ATTR, {})
    try:
        yield model
    finally:
        for member in members:
            object.__setattr__(member, _CACHE_ATTR, None)


def cached(model: nn.Module, key: str, make):
    """make() without gradients, kept in `model`'s decoding cache under `key` while one is open (decoding_cache)."""
    cache = getattr(model, _CACHE_ATTR, None)
    if cache is not None and key in cache:
        return cache[key]
    with torch.no_grad():
        value = make()
    if cache is not None:
        cache[key] = value
    return value
