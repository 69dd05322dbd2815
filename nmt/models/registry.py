"""What a model is: the architectures (model.arch) and, for the Luong model, its attention variants
(nmt.models.variants). The builder, alignment extraction, heat maps, the benchmarks and the tests ask here; no
other module tells architectures or variants apart by name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from torch import nn

from ..base.errors import ConfigError
from ..settings import ModelSettings
from .rnnsearch import RNNSearch
from .seq2seq import Seq2Seq
from .variants import variant


@dataclass(frozen=True)
class Architecture:
    name: str
    model_class: type[nn.Module]
    # which decoder step's weights belong to a target word (nmt.settings.attention_variants)
    credit: Callable[[ModelSettings], str]
    label: Callable[[ModelSettings], str]
    only_here: dict  # settings no other architecture implements, and the value that means "off"


def _rnnsearch_label(model: ModelSettings) -> str:
    return "RNNsearch" + (" + target foresight" if model.target_foresight else "")  # Peter et al.'s name


ARCHITECTURES: dict[str, Architecture] = {
    a.name: a
    for a in (
        Architecture("luong", Seq2Seq, lambda m: variant(m).credit(m), lambda m: variant(m).label(m), {}),
        # RNNsearch's alpha_i comes from s_{i-1}, before y_i is emitted (with target foresight it even reads y_i)
        Architecture(
            "rnnsearch",
            RNNSearch,
            lambda m: "predicted",
            _rnnsearch_label,
            {"target_foresight": False, "attention_noise": 0.0},
        ),
    )
}


def architecture(model: ModelSettings) -> Architecture:
    """The entry `model.arch` names."""
    name = model.arch
    if name not in ARCHITECTURES:
        raise ConfigError(f"unknown model.arch {name!r}; choose one of {', '.join(ARCHITECTURES)}")
    return ARCHITECTURES[name]


def build_model(model: ModelSettings, src_vocab: int, tgt_vocab: int) -> nn.Module:
    """The model `model.arch` names, from its typed settings (a model file's are upgraded where it is read: nmt.models.io).
    A setting only another architecture implements is an error, not ignored (monotonic attention has noise of its
    own)."""
    arch = architecture(model)
    own = variant_keys(model)
    for other in ARCHITECTURES.values():
        for key, off in other.only_here.items():
            if other is arch or key in own:
                continue
            if getattr(model, key) != off:
                raise ConfigError(
                    f"model.{key} is implemented for model.arch: {other.name} only (this model is {arch.name})"
                )
    return arch.model_class(model, src_vocab, tgt_vocab)


def variant_keys(model: ModelSettings) -> tuple[str, ...]:
    """The model settings the Luong model's attention variant reads (none for other architectures)."""
    return variant(model).keys if architecture(model).name == "luong" else ()


def credit_rule(model: ModelSettings) -> str:
    """'read' or 'predicted': which decoder step's weights are credited to a target word
    (nmt.settings.attention_variants)."""
    return architecture(model).credit(model)


def label(model: ModelSettings) -> str:
    """How the papers name a model: "local-p (general)" (Luong et al., Figure 7), "monotonic (eq. 17)",
    "RNNsearch + target foresight" (Peter et al.)."""
    return architecture(model).label(model)
