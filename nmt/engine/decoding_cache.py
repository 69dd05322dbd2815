"""Weights a decoder rearranges for its step loop, computed once per decoding instead of once per step.

A decoding step (greedy or beam search) is a call of the decoder of its own (T = 1). The rearranged weights its loop
multiplies with (the LSTM layers' [x ; h] weights side by side, transposes made contiguous) would otherwise be copied
from the parameters at every step: 32 MB per layer and step at the paper's 1000 units. Within `decoding_cache(model)`
they are made once and reused: the parameters must not change meanwhile. Outside it (training) they are made per call,
from the current parameters.
"""
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
