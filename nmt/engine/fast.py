"""The fast engine's kernels, as one `Accelerator` (nmt.models.accelerator) that a model is handed by
`use`: the compiled LSTM and bidirectional GRU loops (on a CPU in fp32, where nmt.engine.native's kernels
load; elsewhere the model's nn.LSTM/nn.GRU: oneDNN on a CPU, cuDNN on a GPU), and the input-feeding and RNNsearch
decoders with their hand-written backward passes (on every device). docs/engine.md says what each computes."""

from __future__ import annotations

import torch
from torch import nn

from ..base.errors import ConfigError
from ..models.accelerator import accelerate
from ..models.io import load_models
from . import native
from .fast_gru import run_bidirectional_gru
from .fast_lstm import run_lstm
from .feed_decoder import run_decoder
from .gru_decoder import run_rnnsearch_decoder


def _compiled_loops(x: torch.Tensor) -> bool:
    """Whether the compiled loops serve x: fp32 on a CPU where they load, not under autocast."""
    return native.usable(x) and not torch.is_autocast_enabled(x.device.type)


class FastKernels:
    def lstm(self, lstm: nn.LSTM, inputs, lengths, hidden):
        return run_lstm(lstm, inputs, lengths, hidden) if _compiled_loops(inputs) else None

    def bidirectional_gru(self, gru: nn.GRU, inputs, lengths):
        return run_bidirectional_gru(gru, inputs, lengths) if _compiled_loops(inputs) else None

    feed_decoder = staticmethod(run_decoder)  # on every device
    rnnsearch_decoder = staticmethod(run_rnnsearch_decoder)


FAST_KERNELS = FastKernels()


ENGINES = ("fast", "eager")


def use(model: nn.Module, engine: str) -> nn.Module:
    """Run `model` (an ensemble's members too) on `engine` from now on and return it: "fast", the kernels above and
    cheaper dropout masks; "eager", the model's own reference code."""
    if engine not in ENGINES:
        raise ConfigError(f"unknown engine {engine!r}; choose one of {', '.join(ENGINES)}")
    accelerate(model, FAST_KERNELS if engine == "fast" else None)
    return model


def load_for_decoding(paths: list[str], device=None, combine: str = "prob"):
    """nmt.models.io.load_models, the model (or ensemble) on the fast engine: how every command that decodes model
    files (translation, perplexity, alignment extraction, heat maps) runs them."""
    model, src_vocab, tgt_vocab, config = load_models(paths, device, combine)
    return use(model, "fast"), src_vocab, tgt_vocab, config
