"""The attention variants of the Luong model (model.attention), one frozen record each: the layer nmt.models builds
for it, the config keys it reads, its credit rule, its label and its fast kernel. It lives in settings, below the
models, so that the setting's values (sections.ATTENTIONS) and its help are derived from it; docs/contributing.md
says how to add a variant.
Details: docs/internals/settings.md."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

CONTENT_SCORES = ("dot", "general", "concat")
CREDIT_RULES = ("read", "predicted")
Model = Any  # a model's settings (nmt.settings.ModelSettings, which is declared with the values named here)


def _by_score(model: Model) -> str:
    return "read" if model.score in CONTENT_SCORES else "predicted"


def _scored_label(model: Model) -> str:
    return f"{model.attention} ({model.score})"  # "local-p (general)", as Luong et al.'s Figure 7


@dataclass(frozen=True)
class AttentionVariant:
    name: str
    # the layer's class in nmt.models (nmt.models.variants.LAYERS) and its arguments from a model's settings; None:
    # no attention layer
    layer: str | None
    arguments: Callable[[Model], dict]
    credit: Callable[[Model], str]  # "read" or "predicted" (module doc)
    label: Callable[[Model], str]
    keys: tuple[str, ...]  # the model config keys the layer reads, beyond hidden
    # the fast decoder's step kernel for the layer (nmt.engine.attention_kernels.KERNELS); None: the reference layer
    # itself, differentiated by autograd step by step (correct for any layer, not fast)
    kernel: str | None = None
    # whether the input-feeding decoder's update may be replayed from CUDA graphs (nmt.engine.cuda_graphs), every score:
    # what is recorded is the layer's own `forward` under autograd (nmt.engine.graph_decoder), so the layer must compute
    # on the device alone (no host read, no branch on a tensor's values: tests/unit/test_cuda_graphs.py traces it whole)
    graphed: bool = False
    paper: str | None = None  # the paper it comes from, where not Luong et al. 2015 (the setting's help cites it)


def _local(mode: str) -> AttentionVariant:
    return AttentionVariant(
        mode,
        "LocalAttention",
        lambda m: {"hidden": m.hidden, "score": m.score, "mode": mode, "window": m.window, "reverse": m.reverse},
        _by_score,
        _scored_label,
        ("score", "window", "reverse"),
        "local",
        graphed=True,
    )


VARIANTS: dict[str, AttentionVariant] = {
    v.name: v
    for v in (
        AttentionVariant("none", None, lambda m: {}, _by_score, _scored_label, ()),
        AttentionVariant(
            "global",
            "GlobalAttention",
            lambda m: {"hidden": m.hidden, "score": m.score, "max_src_len": m.max_src_len},
            _by_score,
            _scored_label,
            ("score", "max_src_len"),
            "global",
            graphed=True,
        ),
        _local("local-m"),
        _local("local-p"),
        AttentionVariant(
            "monotonic",
            "MonotonicAttention",
            lambda m: {
                "hidden": m.hidden,
                "energy": m.energy,
                "attention_dim": m.attention_dim or None,
                "bias_init": float(m.energy_bias),
                "noise": float(m.attention_noise),
            },
            lambda m: "read",
            lambda m: f"monotonic ({m.energy.replace('eq', 'eq. ')})",
            # its soft mode's kernel; not graphed: Raffel et al.'s layer carries a state from step to step, which the
            # graphed decoder (written for Luong et al.'s attention) does not
            ("energy", "energy_bias", "attention_dim", "attention_noise"),
            "monotonic",
            paper="Raffel et al. 2017",
        ),
    )
}


def attentions_help() -> str:
    """The model.attention setting's help: its values, each with the paper it comes from where that is not Luong's."""
    return " | ".join(f"{v.name} ({v.paper})" if v.paper else v.name for v in VARIANTS.values())
