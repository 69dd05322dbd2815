"""What many test files build: small model configurations, seeded models made from them, small vocabularies,
corpora of random ids, model files, and a stand-in for train's stop signal. One place, so that a change to how a
model is built or saved is made once; a test file imports it as a sibling module (`from factories import
make_model`), as it does `required` and `pipelines`."""

from __future__ import annotations

import signal
from pathlib import Path

import torch

from nmt.data.torch_files import save_torch
from nmt.engine.fast import use
from nmt.models.registry import build_model
from nmt.settings import ModelSettings

# 16 source and 11 target words: with the 4 special tokens, the 20 and 15 entries make_model's vocabularies default to
SRC_WORDS, TGT_WORDS = [f"s{i}" for i in range(16)], [f"t{i}" for i in range(11)]
SRC_VOCAB, TGT_VOCAB = len(SRC_WORDS) + 4, len(TGT_WORDS) + 4

# Luong et al.'s model at toy size: one reversed layer, global attention with the general score, input feeding.
# `window` is read by local attention only; it is here so that an override to local-m or local-p builds.
SMALL_LUONG = {
    "layers": 1,
    "hidden": 16,
    "embed": 8,
    "dropout": 0.0,
    "reverse": True,
    "attention": "global",
    "score": "general",
    "input_feed": True,
    "max_src_len": 12,
    "window": 2,
}
# Bahdanau et al.'s RNNsearch at toy size; the Luong keys are there as a config file has them (RNNsearch ignores them).
SMALL_RNNSEARCH = {
    "arch": "rnnsearch",
    "layers": 1,
    "hidden": 8,
    "embed": 6,
    "dropout": 0.0,
    "reverse": False,
    "attention": "none",
    "score": "dot",
    "input_feed": False,
    "max_src_len": 12,
    "attention_dim": 7,
}


def model_config(base: dict = SMALL_LUONG, *, without: tuple[str, ...] = (), **overrides) -> dict:
    """A new dict: `base` without the keys in `without`, with `overrides` (base's keys keep their order, new ones
    follow)."""
    config = {key: value for key, value in base.items() if key not in without}
    config.update(overrides)
    return config


# Two layers: the stacked LSTMs' inter-layer paths (dropout between layers, the decoder's layer loop) are exercised
TWO_LAYER_LUONG = model_config(SMALL_LUONG, layers=2)


def make_model(
    seed: int = 0,
    base: dict = SMALL_LUONG,
    *,
    src_vocab: int = SRC_VOCAB,
    tgt_vocab: int = TGT_VOCAB,
    init: float | None = 0.5,
    engine: str | None = None,
    train: bool = False,
    **overrides,
):
    """torch.manual_seed(seed), then the model `model_config(base, **overrides)` describes (nmt.models.registry's
    builder, as nmt train uses), its weights drawn from U(-init, init) (init None: PyTorch's own initialisation),
    on `engine` ("fast" or "eager"; None: as built, which is the eager code), in eval mode or, with `train`, in
    training mode. The default init is larger than the recipes' 0.1, so that attention weights are far from uniform
    and an untrained model's choices vary."""
    torch.manual_seed(seed)
    model = build_model(ModelSettings.from_dict(model_config(base, **overrides)), src_vocab, tgt_vocab)
    if init is not None:
        model.init_uniform(init)
    if engine is not None:
        use(model, engine)
    return model.train(train)


def random_ids(lengths, vocab: int, seed: int | torch.Generator) -> list[list[int]]:
    """One sentence of word ids per length, each id drawn uniformly from the words of a `vocab`-entry vocabulary
    (the specials, ids 0-3, never); `seed` a number or a generator to go on drawing from."""
    gen = torch.Generator().manual_seed(seed) if isinstance(seed, int) else seed
    return [torch.randint(4, vocab, (int(n),), generator=gen).tolist() for n in lengths]


def write_model_file(
    path: Path,
    model,
    src_words: list[str] = SRC_WORDS,
    tgt_words: list[str] = TGT_WORDS,
    *,
    config: dict | None = None,
    system: str | None = None,
) -> Path:
    """A model file as nmt train writes one (the fields load_models reads), written directly: `config` defaults to
    {"model": the model's config}, `system` to the file's stem."""
    save_torch(
        {
            "model_config": model.settings.as_dict(),
            "model": model.state_dict(),
            "src_vocab": src_words,
            "tgt_vocab": tgt_words,
            "config": {"model": model.settings.as_dict()} if config is None else config,
            "system": path.stem if system is None else system,
        },
        path,
    )
    return path


class StopAfter:
    """Stands in for train's StopRequested: 'receives' SIGTERM after `n` updates."""

    def __init__(self, n):
        self.n, self.checks = n, 0

    def __call__(self):
        return self

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    @property
    def signum(self):
        self.checks += 1
        return signal.SIGTERM if self.checks >= self.n else None  # first read after update n, then sticky
