"""One training update, as `nmt train` and `nmt bench train` make it: forward, loss, backward, gradient clipping and
the optimiser's step, on the fast or the plain engine, in fp32 or bf16.
Details: docs/internals/engine.md."""

from __future__ import annotations

import contextlib
import sys

import torch

from ..base.errors import ConfigError
from ..data.batches import Batch
from ..data.vocab import PAD_ID
from ..models.objectives import alignment_loss, token_nll
from ..settings import TrainSettings
from . import cuda_graphs
from .fast import ENGINES, use
from .fused_loss import linear_cross_entropy

PRECISIONS = ("auto", "fp32", "bf16")


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def resolve_precision(name: str, device: torch.device) -> torch.dtype | None:
    """The autocast dtype for `train.precision` on `device` (None: fp32)."""
    if name not in PRECISIONS:
        raise ConfigError(f"train.precision: unknown value {name!r} ({', '.join(PRECISIONS)})")
    if name == "fp32":
        return None
    bf16_on_gpu = device.type == "cuda" and torch.cuda.is_bf16_supported()
    if name == "bf16":
        if device.type == "cuda" and not bf16_on_gpu:
            raise ConfigError(
                f"train.precision: bf16, but {torch.cuda.get_device_name(device)} does not support "
                "bf16; use fp32 (or auto)"
            )
        return torch.bfloat16
    return torch.bfloat16 if bf16_on_gpu else None


def autocast(device: torch.device, dtype: torch.dtype | None):
    """A context in which autocast runs in `dtype` on `device` (nothing when dtype is None)."""
    if dtype is None:
        return contextlib.nullcontext()
    return torch.autocast(device.type, dtype=dtype)


def make_optimizer(
    params, train: TrainSettings, device: torch.device | str = "cpu", *, fused: bool = True
) -> torch.optim.Optimizer:
    """The recipe's optimiser. `fused` (the fast engine): torch's fused implementation (Adam; SGD on a GPU) or its
    multi-tensor one (foreach), which compute what the single-tensor loop computes with a few kernels for all
    parameters: Adam's step on the small preset's 9M parameters took 12 ms instead of 60 ms on one CPU core. Without:
    torch.optim's defaults, as the plain path always used them."""
    name, lr = train.optimizer, train.lr
    params = list(params)
    on_gpu = torch.device(device).type == "cuda"
    fast = {"fused": True} if fused and (name == "adam" or on_gpu) else {"foreach": True} if fused else {}
    if name == "sgd":
        return torch.optim.SGD(params, lr=lr, **fast)
    if name == "adam":
        return torch.optim.Adam(params, lr=lr, **fast)
    if name == "adadelta":
        return torch.optim.Adadelta(params, lr=lr, rho=0.95, eps=1e-6, **({"foreach": True} if fused else {}))
    raise ConfigError(f"unknown optimizer {name!r}")


def clip_gradients(parameters: list[torch.Tensor], max_norm: float, device: torch.device) -> None:
    """torch.nn.utils.clip_grad_norm_, to the same numbers. On a CPU, where reading the norm costs nothing, the
    gradients are multiplied only when the factor min(1, max_norm / (norm + 1e-6)) is below 1 (most updates after the
    first few clip nothing, and the multiplication is a pass over every gradient); on a GPU, always, so that no update
    waits for the device."""
    if device.type != "cpu":
        torch.nn.utils.clip_grad_norm_(parameters, max_norm, foreach=True)
        return
    grads = [p.grad for p in parameters if p.grad is not None]
    norm = torch.nn.utils.get_total_norm(grads, foreach=True)
    if max_norm / (float(norm) + 1e-6) < 1.0:
        torch.nn.utils.clip_grads_with_norm_(parameters, max_norm, norm, foreach=True)


class TrainingStep:
    """update = TrainingStep(model, params, train, device); loss, align = update(batch): one update of `params` (the
    trainable parameters of `model`) on a batch already on `device`. `loss` is the summed NLL of the batch's target
    words, `align` the summed guided-alignment loss (None without guided alignment), both detached tensors on the
    device (reading them waits for it). `update.optimizer` is the optimiser (its state goes into checkpoints)."""

    def __init__(
        self,
        model: torch.nn.Module,
        params: list[torch.nn.Parameter],
        train: TrainSettings,
        device: torch.device,
        *,
        guided_weight: float = 0.0,
        credit: str | None = None,
        engine: str | None = None,
        precision: str | None = None,
    ):
        self.model, self.device = model, device
        self.engine = engine or train.engine
        if self.engine not in ENGINES:
            raise ConfigError(f"train.engine: unknown value {self.engine!r} ({', '.join(ENGINES)})")
        self.dtype = resolve_precision(precision or train.precision, device)
        self.parameters = list(params)
        self.optimizer = make_optimizer(self.parameters, train, device, fused=self.engine == "fast")
        self.clip = train.clip_norm
        self.guided_weight, self.credit = guided_weight, credit
        use(model, self.engine)
        self.graphs = None
        setting = train.cuda_graphs
        if cuda_graphs.wanted(setting, device):
            why = cuda_graphs.unsupported(
                model, engine=self.engine, guided=guided_weight > 0, token_batches=bool(train.batch_tokens)
            )
            if why is None:
                self.graphs = cuda_graphs.GraphedDecoderLoss(model, self.dtype, device, train.batch_size)
            elif setting is True:
                _say(f"train.cuda_graphs: true, but {why}: training without CUDA graphs")
        elif setting is True:
            _say(f"train.cuda_graphs: true, but CUDA graphs need a CUDA device: training on {device} without them")

    def loss(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor | None]:
        """The summed NLL of the batch's target words and the attention weights (for guided alignment)."""
        model = self.model
        if self.graphs is not None:
            return self.graphs(batch), None
        if self.engine == "fast":
            features, weights = model.features(batch.src, batch.src_len, batch.tgt_in, tgt_out=batch.tgt_out)
            generator = model.generator
            return linear_cross_entropy(features, generator.weight, generator.bias, batch.tgt_out, PAD_ID), weights
        log_probs, weights = model(batch.src, batch.src_len, batch.tgt_in, tgt_out=batch.tgt_out)
        return token_nll(log_probs, batch.tgt_out), weights

    def __call__(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor | None]:
        use(self.model, self.engine)  # (a benchmark may alternate two steps on one model)
        if self.device.type == "cuda":
            # under bf16 autocast the step-by-step decoders' products stay fp32: let them use TF32; an fp32 step
            # (the eager reference that a benchmark alternates with it) computes in true fp32. Set at every update,
            # since torch keeps it in one global switch.
            torch.backends.cuda.matmul.allow_tf32 = self.dtype is not None
        self.optimizer.zero_grad(set_to_none=True)
        with autocast(self.device, self.dtype):
            loss, weights = self.loss(batch)
            objective, align = loss, None
            if self.guided_weight > 0:
                align = alignment_loss(weights.float(), batch.align, self.credit)
                objective = loss + self.guided_weight * align
        # The paper's loss is summed over a sentence and averaged over the mini-batch.
        (objective / batch.src.size(0)).backward()
        if self.clip > 0:
            if self.engine == "fast":
                clip_gradients(self.parameters, self.clip, self.device)
            else:
                torch.nn.utils.clip_grad_norm_(self.parameters, self.clip)
        self.optimizer.step()
        return loss.detach(), None if align is None else align.detach()
