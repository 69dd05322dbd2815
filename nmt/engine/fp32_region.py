"""Run a step-by-step decoder in fp32 under bf16 autocast.

Why: the decoders' per-step products are small (batch x hidden), so bf16 saves little there while its rounding
compounds over the steps of the recurrence; and the hand-written backward passes (nmt.engine.feed_decoder,
nmt.engine.gru_decoder) keep one dtype throughout. Under autocast the encoder, the embeddings' projections and the
output layer still run in bf16; on a GPU the decoder's fp32 products use TF32 (nmt.engine.train_step).
"""

from __future__ import annotations

import functools

import torch


def _to_fp32(value):
    if isinstance(value, torch.Tensor):
        return value.float() if value.is_floating_point() else value
    if isinstance(value, tuple):
        return tuple(_to_fp32(v) for v in value)
    return value


def _device_type(args) -> str | None:
    for value in args:
        if isinstance(value, torch.Tensor):
            return value.device.type
    return None


def fp32_region(function):
    """Decorate a decoder: with autocast on for its tensors' device, run it with autocast off and its floating-point
    tensor arguments (and tuples of them) cast to fp32; otherwise call it unchanged."""

    @functools.wraps(function)
    def wrapper(*args):
        device = _device_type(args)
        if device is None or not torch.is_autocast_enabled(device):
            return function(*args)
        with torch.autocast(device, enabled=False):
            return function(*(_to_fp32(a) for a in args))

    return wrapper
