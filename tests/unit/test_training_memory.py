"""A training holds its model's memory, not its updates': the tensors alive after 2N updates are those alive after N,
on both engines, for every architecture (Luong, monotonic, RNNsearch with and without target foresight and guided
alignment). The fast RNNsearch decoder once kept every update's graph alive (its autograd context held views of its
own outputs: a reference cycle through C++ that no garbage collection frees), 0.6 GB a demo epoch (issue 67)."""

import gc

import pytest
import torch

from nmt.data.batches import make_batch
from nmt.engine.train_step import TrainingStep

from factories import random_ids
from fast_models import LUONG, RNNSEARCH, V, fast_model, name
from step_settings import train_settings

# a round of batches of different shapes (sentences, longest source, longest target), so that anything kept per
# shape is made in the first round and a cache that grows with the updates shows in the later ones
SHAPES = [((7, 1, 12, 4, 9), (9, 5, 8, 2, 6)), ((3, 5), (4, 11)), ((10, 2, 6), (3, 7, 1)), ((8,), (8,))]
SYSTEMS = [LUONG[1], LUONG[-4], *RNNSEARCH, {"arch": "rnnsearch", "guided": True}]


pytestmark = pytest.mark.usefixtures("one_thread")  # tests/unit/conftest.py


def batches(guided: bool):
    gen = torch.Generator().manual_seed(3)
    for src_lengths, tgt_lengths in SHAPES:
        src, tgt = random_ids(src_lengths, V, gen), random_ids(tgt_lengths, V, gen)
        # guided: each target word linked to one source word (the diagonal, clipped to the sentence)
        links = [[(min(j, n - 1), j) for j in range(m)] for n, m in zip(src_lengths, tgt_lengths)] if guided else None
        yield make_batch(src, tgt, list(range(len(src))), links)


def live_tensors() -> int:
    """The tensors Python can reach, after a collection (type(), not isinstance: some module objects warn on
    __class__)."""
    gc.collect()
    return sum(1 for thing in gc.get_objects() if issubclass(type(thing), torch.Tensor))


@pytest.mark.parametrize("engine", ["fast", "eager"])
@pytest.mark.parametrize("system", SYSTEMS, ids=name)
def test_live_tensors_do_not_grow_with_the_updates(system, engine):
    overrides = {key: value for key, value in system.items() if key != "guided"}
    guided = system.get("guided", False)
    model = fast_model(overrides)
    train = train_settings(optimizer="adam", lr=0.01, clip_norm=1.0, engine=engine, precision="fp32")
    step = TrainingStep(
        model,
        list(model.parameters()),
        train,
        torch.device("cpu"),
        guided_weight=1.0 if guided else 0.0,
        credit="predicted",
    )
    rounds = [list(batches(guided)) for _ in range(4)]
    counts = []
    for n, round_ in enumerate(rounds):
        for b in round_:
            step(b)
        if n in (1, 3):  # after 2N and 4N updates (the optimiser's state is made at the first)
            counts.append(live_tensors())
    assert counts[1] <= counts[0], f"{counts[1] - counts[0]} more live tensors after {len(SHAPES) * 2} more updates"
