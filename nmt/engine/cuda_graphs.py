"""CUDA graphs for the input-feeding decoder's part of a training update (`train.cuda_graphs`).

Why: on a GPU the fast engine's input-feeding decoder launches some forty small kernels per target word forward and
fifty backward, one Python call each. Measured on an H200 (torch 2.11): one update of Luong et al.'s 4x1000
global (general) + feed model at batch 128 launched 4,100 kernels whose GPU time added up to 32 ms of a 77 ms update,
and local-p's 5,200 kernels 34 ms of 130 ms: the GPU waited for Python. A CUDA graph records those launches once and
replays them with one call.

What is graphed: the decoder, its attention, the output layer and the loss of a teacher-forced batch, forward and
backward (torch.cuda.make_graphed_callables), given the encoder's output. The encoder stays outside: cuDNN's packed
sequences depend on the sentences' lengths through host-side metadata that a graph would freeze, and it is a few
calls anyway. A graph replays fixed shapes, so a batch is padded: its source positions to a multiple of BUCKET
(masked out, as padding always is; never past a location-based model's max_src_len) and its target words to a
multiple of BUCKET (padding targets, which the loss ignores, in steps after each sentence's end that change nothing
before them). The loss and the gradients are those of the ungraphed path to float rounding (tests/test_cuda_graphs.py
on a CPU; tests/test_cuda.py on a GPU, not yet run with the plain decoder below: docs/engine.md), the dropout masks
are drawn afresh at every replay (torch's graph-safe Philox generator).

What a graph records is not the fast engine's decoder but a plain one (nmt.engine.graph_decoder.FeedDecoderLoss): the
model's own formulas in torch operations, differentiated by autograd. Why a separate path: the fast engine's buffers,
in-place writes, hand-written backward pass and C loops exist to save Python's and autograd's cost per operation,
which inside a graph is nothing (the kernels are replayed by one call); and local-p's capture of them failed on an
H200 (cause not found). The plain path reads nothing back to the host and takes no branch on a tensor's values, which
torch.compile(fullgraph=True) checks on a CPU for every graphed model (tests/test_cuda_graphs.py). A batch that runs
ungraphed runs on the fast engine (DecoderLoss), as without graphs.

One graph per (batch size, source bucket, target bucket), captured the first time a batch of that shape comes, its
warm-up and capture on a forked RNG (so a resumed run, which captures at other moments, draws the masks an
uninterrupted one draws). The graphs share one memory pool: they run one at a time, each update's forward replay
followed by its own backward replay, so no graph's live memory is written by another's. A batch of another size
(the last of an epoch) runs ungraphed.

Which models: Luong et al.'s input-feeding decoders with global, local-m or local-p attention and any score (the
variants whose registry entry says `graphed`), without guided alignment, on the fast engine, sentence batches and a
CUDA device (`unsupported` says why not). Without input feeding the decoder is one cuDNN call already; Raffel et
al.'s monotonic attention carries a state from step to step that the graphed decoder does not. A capture that fails
stops the training with one line (CaptureError).

`train.cuda_graphs`: auto (the default) graphs those models on a CUDA device and says nothing of the others; true
does the same and says in one line why a model or device is not graphed; false never graphs. The setting is left
out when runs are compared (nmt.settings.NOT_COMPARED): like the device, it changes how updates are launched, not
what they compute.

What was checked on a GPU, and how fast it runs: docs/engine.md, "CUDA graphs".
"""
from __future__ import annotations

import inspect

import torch
import torch.nn.functional as F
from torch import nn

from ..data.batches import Batch
from ..data.vocab import PAD_ID
from ..base.errors import ConfigError, UserError
from .fused_loss import linear_cross_entropy
from .graph_decoder import FeedDecoderLoss
from ..models.seq2seq import EncoderOutput, Seq2Seq
from ..models.variants import VARIANTS

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
        with torch.autocast(memory.device.type, dtype=self.dtype or torch.float32, enabled=self.dtype is not None,
                            cache_enabled=False):  # a graph cannot keep autocast's cache of cast weights
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
    return (over_source(memory), F.pad(mask, (0, more_source), value=False) if more_source else mask, h, c,
            over_target(tgt_in), over_target(tgt_out), *(over_source(k) for k in keys))


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
                graphed = torch.cuda.make_graphed_callables(FeedDecoderLoss(self.model, self.dtype), samples,
                                                            allow_unused_input=True, **self._pool())
        except Exception as err:  # noqa: BLE001 (whatever failed, the process cannot go on: see CaptureError)
            first = str(err).splitlines()[0] if str(err) else ""
            raise CaptureError(f"CUDA graphs: recording the update of a batch of {key[0]} sentences, {key[1]} source "
                               f"positions and {key[2]} target words failed ({type(err).__name__}: {first}); "
                               "train with train.cuda_graphs: false") from err
        self.graphs[key] = graphed
        return graphed

    def _pool(self) -> dict:
        """The shared memory pool, where this torch's make_graphed_callables takes one (2.1 and later)."""
        accepts = "pool" in inspect.signature(torch.cuda.make_graphed_callables).parameters
        return {"pool": self.pool} if accepts else {}
