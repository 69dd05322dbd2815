"""CUDA graphs for the input-feeding decoder's part of a training update (`train.cuda_graphs`).
Details: docs/internals/engine.md."""

from __future__ import annotations

import inspect

import torch
import torch.nn.functional as F
from torch import nn

from ..base.errors import ConfigError, UserError
from ..data.batches import Batch
from ..data.vocab import PAD_ID
from ..models.seq2seq import EncoderOutput, Seq2Seq
from ..models.variants import VARIANTS
from .fused_loss import linear_cross_entropy
from .graph_decoder import FeedDecoderLoss

BUCKET = 8


def graphed() -> tuple[str, ...]:
    """The attention variants whose input-feeding updates are graphed (every score), as the registry declares them."""
    return tuple(name for name, v in VARIANTS.items() if v.graphed)


class CaptureError(UserError):
    """A CUDA graph could not be recorded. Not recovered from in the same process: a capture that fails half-way can
    leave CUDA's random generator marked as capturing, so the next dropout mask fails too."""


SETTINGS = ("auto", True, False)


def wanted(setting, device: torch.device) -> bool:
    """Whether `train.cuda_graphs` (auto, true or false) asks for graphs on `device`: auto and true do on a CUDA
    device (they differ in what is said when a model cannot have them: nothing for auto)."""
    if not (setting == "auto" or isinstance(setting, bool)):
        raise ConfigError(f"train.cuda_graphs: expected auto, true or false, got {setting!r}")
    return setting is not False and device.type == "cuda"


def unsupported(model: nn.Module, *, engine: str, guided: bool, token_batches: bool = False) -> str | None:
    """Why `model`'s updates cannot be graphed (None: they can)."""
    if engine != "fast":
        return f"engine {engine}"
    if not isinstance(model, Seq2Seq):  # the graphed loss is written against Seq2Seq's decoder
        return "only Luong et al.'s decoders are graphed"
    if not getattr(model, "input_feed", False):
        return "a decoder without input feeding is one cuDNN call already"
    attention = model.settings.attention
    if attention not in graphed():
        return f"attention {attention} is not graphed (only {', '.join(graphed())})"
    if guided:
        return "guided alignment reads the attention weights"
    if token_batches:
        return "token batches (train.batch_tokens) vary in their number of sentences"
    return None


def bucket(length: int, cap: int | None = None) -> int:
    """`length` rounded up to a multiple of BUCKET, but not past `cap` (when given and >= length)."""
    size = -(-length // BUCKET) * BUCKET
    return min(size, cap) if cap is not None and cap >= length else size


class DecoderLoss(nn.Module):
    """The summed NLL of a teacher-forced batch given the encoder's output: decoder, output layer and loss, as the fast
    engine computes them (nmt.engine.train_step.TrainingStep.loss) after the encoder; under autocast to `dtype` when
    given. What a batch that is not graphed runs (a graph records graph_decoder.FeedDecoderLoss: the same function)."""

    def __init__(self, model: nn.Module, dtype: torch.dtype | None):
        super().__init__()
        self.model, self.dtype = model, dtype

    def forward(self, memory, mask, h, c, tgt_in, tgt_out, *keys):
        model = self.model
        with torch.autocast(
            memory.device.type, dtype=self.dtype or torch.float32, enabled=self.dtype is not None, cache_enabled=False
        ):  # a graph cannot keep autocast's cache of cast weights
            enc = EncoderOutput(memory=memory, mask=mask, keys=keys[0] if keys else None, final=(h, c))
            htilde, _, _ = model.decode_states(tgt_in, enc, model.initial_state(enc))
            generator = model.generator
            return linear_cross_entropy(model.dropout(htilde), generator.weight, generator.bias, tgt_out, PAD_ID)


def decoder_inputs(enc: EncoderOutput, batch: Batch) -> tuple[torch.Tensor, ...]:
    """DecoderLoss's arguments for a batch and its encoder output."""
    args = (enc.memory, enc.mask, enc.final[0], enc.final[1], batch.tgt_in, batch.tgt_out)
    return args if enc.keys is None else args + (enc.keys,)


def padded_inputs(args: tuple[torch.Tensor, ...], source: int, target: int) -> tuple[torch.Tensor, ...]:
    """DecoderLoss's arguments with `source` positions and `target` words: memory and keys padded with zeros, the
    mask with False, the target words with PAD_ID (which the loss ignores)."""
    memory, mask, h, c, tgt_in, tgt_out, *keys = args
    more_source, more_target = source - mask.size(1), target - tgt_in.size(1)

    def over_source(x):  # [B, S, D]
        return F.pad(x, (0, 0, 0, more_source)) if more_source else x

    def over_target(x):  # [B, T]
        return F.pad(x, (0, more_target), value=PAD_ID) if more_target else x

    return (
        over_source(memory),
        F.pad(mask, (0, more_source), value=False) if more_source else mask,
        h,
        c,
        over_target(tgt_in),
        over_target(tgt_out),
        *(over_source(k) for k in keys),
    )


class GraphedDecoderLoss:
    """graphed(batch) -> the batch's summed NLL (a tensor in the autograd graph), the encoder run as usual and the
    rest through a CUDA graph for batches of `batch_size` sentences (any size when None), ungraphed for the others,
    and outside training mode."""

    def __init__(self, model: nn.Module, dtype: torch.dtype | None, device: torch.device, batch_size: int | None):
        self.model, self.dtype, self.device, self.batch_size = model, dtype, device, batch_size
        self.plain = DecoderLoss(model, dtype)
        self.graphs: dict[tuple[int, int, int], nn.Module] = {}
        self.pool = torch.cuda.graph_pool_handle()
        # a location-based score has one weight per source position up to max_src_len: no padding past it
        settings = model.settings
        self.source_cap = settings.max_src_len if settings.score == "location" else None

    def __call__(self, batch: Batch) -> torch.Tensor:
        enc = self.model.encode(batch.src, batch.src_len)
        args = decoder_inputs(enc, batch)
        if self.batch_size not in (None, batch.src.size(0)) or not self.model.training:
            return self.plain(*args)
        key = (batch.src.size(0), bucket(batch.src.size(1), self.source_cap), bucket(batch.tgt_in.size(1)))
        args = padded_inputs(args, key[1], key[2])
        graphed = self.graphs.get(key) or self._capture(key, args)
        return graphed(*args)

    def _capture(self, key, args) -> nn.Module:
        samples = tuple(a.detach().clone().requires_grad_(a.requires_grad) for a in args)
        try:
            # the warm-up runs and the capture draw dropout masks: on a forked generator, so that the training's
            # random stream is the same whenever the capture happens; outside autocast, as a backward pass runs
            with torch.random.fork_rng(devices=[self.device]), torch.autocast(self.device.type, enabled=False):
                graphed = torch.cuda.make_graphed_callables(
                    FeedDecoderLoss(self.model, self.dtype), samples, allow_unused_input=True, **self._pool()
                )
        except Exception as err:  # noqa: BLE001 (whatever failed, the process cannot go on: see CaptureError)
            first = str(err).splitlines()[0] if str(err) else ""
            raise CaptureError(
                f"CUDA graphs: recording the update of a batch of {key[0]} sentences, {key[1]} source "
                f"positions and {key[2]} target words failed ({type(err).__name__}: {first}); "
                "train with train.cuda_graphs: false"
            ) from err
        self.graphs[key] = graphed
        return graphed

    def _pool(self) -> dict:
        """The shared memory pool, where this torch's make_graphed_callables takes one (2.1 and later)."""
        accepts = "pool" in inspect.signature(torch.cuda.make_graphed_callables).parameters
        return {"pool": self.pool} if accepts else {}
