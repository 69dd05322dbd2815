"""Dropout whose mask costs a fifth of torch's on a CPU, for the fast engine.
Details: docs/internals/models.md."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

_LEVELS = 1 << 16


def keep_mask(shape: tuple[int, ...], p: float, device, dtype: torch.dtype) -> torch.Tensor:
    """A CPU tensor of `shape`: 0 with probability p (rounded to k/65536), else 1 / (1 - that probability)."""
    dropped = round(p * _LEVELS)
    numel = 1
    for size in shape:
        numel *= size
    seed = int(torch.randint(0, 2**62, (1,)))
    words = np.random.PCG64(seed).random_raw((numel + 3) // 4)
    uniform16 = torch.from_numpy(words.view(np.int16)[:numel])  # uniform on [-32768, 32767]
    # keep where u >= t, t = dropped - 32768: clamp(u - (t - 1), 0, 1) is 1 there and 0 elsewhere (integers)
    mask = uniform16.to(torch.float32).sub_(dropped - _LEVELS // 2 - 1).clamp_(0.0, 1.0)
    mask.mul_(_LEVELS / (_LEVELS - dropped))
    return mask.view(shape).to(device=device, dtype=dtype)


def mask_like(shape: tuple[int, ...], p: float, device, dtype: torch.dtype) -> torch.Tensor:
    """A dropout mask (0, or 1 / keep probability) of `shape`: keep_mask on a CPU, torch's Bernoulli elsewhere."""
    if torch.device(device).type == "cpu":
        return keep_mask(shape, p, device, dtype)
    return torch.empty(shape, device=device, dtype=dtype).bernoulli_(1.0 - p).div_(1.0 - p)


def gaussian_noise(shape: tuple[int, ...], std: float, device, dtype: torch.dtype) -> torch.Tensor:
    """N(0, std^2) noise of `shape` (the attention noise of training), drawn at once for all steps."""
    return torch.randn(shape, device=device, dtype=dtype).mul_(std)


def dropout(x: torch.Tensor, p: float, training: bool, fast: bool = True) -> torch.Tensor:
    if not training or p == 0.0:
        return x
    if not fast or x.device.type != "cpu" or p >= 1.0:
        return nn.functional.dropout(x, p, training)
    return x * keep_mask(tuple(x.shape), p, x.device, x.dtype)


class Dropout(nn.Dropout):
    fast = False  # set by nmt.models.accelerator.accelerate

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return dropout(x, self.p, self.training, self.fast)
