"""What every architecture shares: where sentence lengths live, the uniform initialisation.

Seq2Seq and RNNSearch both import these; neither imports the other (nmt.models.registry knows both).
"""

from __future__ import annotations

import torch
from torch import nn

from ..data.vocab import PAD_ID


def lengths_on(src_len: torch.Tensor, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """The sentence lengths on the CPU (what packing reads) and on `device` (masks). Training batches bring them
    on the CPU in pinned memory (nmt.training.run.to_device), so that neither copy makes a GPU update wait."""
    on_cpu = src_len if src_len.device.type == "cpu" else src_len.cpu()
    return on_cpu, src_len.to(device, non_blocking=True)


def init_uniform(model: nn.Module, init_range: float) -> None:
    """Every parameter uniform in [-r, r], then the padding rows of both embeddings zero (`nmt train`'s recipe for
    every architecture: Luong et al.'s, and ours for RNNsearch). A layer whose scalars have initial values of
    their own (monotonic attention's scale g and bias r, Raffel et al. 2.4) gets them back through
    `reset_scalars`."""
    for param in model.parameters():
        nn.init.uniform_(param, -init_range, init_range)
    for module in model.modules():
        if module is not model and hasattr(module, "reset_scalars"):
            module.reset_scalars()
    with torch.no_grad():
        model.src_embed.weight[PAD_ID].zero_()
        model.tgt_embed.weight[PAD_ID].zero_()


def count_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())
