"""nmt.engine.cuda_graphs where no GPU is needed: padding a batch to its graph's shape changes neither the loss nor a
gradient; what a graph records (nmt.engine.graph_decoder) computes the fast and the eager engines' loss and gradients;
which models and devices get graphs, and the one-line fallback. Traced whole by torch.compile:
tests/studies/test_graph_trace.py; the graphs themselves on a GPU: tests/cli/test_cuda.py."""

import pytest
import torch

from nmt import settings
from nmt.base.errors import ConfigError
from nmt.engine import cuda_graphs
from nmt.engine.fast import use
from nmt.engine.train_step import TrainingStep

from fast_models import (
    LUONG,
    RNNSEARCH,
    assert_same_loss_and_gradients,
    batch,
    fast_model,
    name,
    plain_loss_and_gradients,
    recorded_loss_and_gradients,
)
from step_settings import train_settings

GRAPHED = [o for o in LUONG if o.get("attention") in cuda_graphs.graphed() and o.get("input_feed", True)]


def test_the_graphed_models_are_luong_et_al_s_attentions_with_input_feeding():
    # global, local-m and local-p x 4 scores; and the 1- and 3-layer global general models
    assert cuda_graphs.graphed() == ("global", "local-m", "local-p")
    assert len(GRAPHED) == 3 * 4 + 2


def padded_loss_and_gradients(model, b, source, target):
    model.zero_grad()
    enc = model.encode(b.src, b.src_len)
    args = cuda_graphs.padded_inputs(cuda_graphs.decoder_inputs(enc, b), source, target)
    assert args[0].size(1) == source and args[4].size(1) == target
    loss = cuda_graphs.DecoderLoss(model, None)(*args)
    loss.backward()
    return loss.item(), {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}


@pytest.mark.parametrize("overrides", GRAPHED, ids=name)
def test_padding_a_batch_to_its_graphs_shape_changes_neither_loss_nor_gradients(overrides):
    model = fast_model(overrides).train()  # no dropout: the two passes compute the same function
    b = batch()
    source = cuda_graphs.bucket(b.src.size(1) + 1)  # past the batch's longest sentence, whatever its bucket
    loss, grads = plain_loss_and_gradients(model, b)
    padded_loss, padded_grads = padded_loss_and_gradients(model, b, source, b.tgt_in.size(1) + 7)
    assert padded_loss == pytest.approx(loss, rel=1e-6)
    assert padded_grads.keys() == grads.keys()
    for key in grads:
        torch.testing.assert_close(padded_grads[key], grads[key], atol=1e-6, rtol=1e-5, msg=key)


@pytest.mark.parametrize("overrides", GRAPHED, ids=name)
def test_what_a_graph_records_computes_the_fast_and_the_eager_engines_loss_and_gradients(overrides):
    model = fast_model(overrides).train()  # no dropout: every path computes the same function
    b = batch()
    recorded = recorded_loss_and_gradients(model, b)
    assert_same_loss_and_gradients(recorded, plain_loss_and_gradients(model, b))
    use(model, "eager")
    assert_same_loss_and_gradients(recorded, plain_loss_and_gradients(model, b))


def test_buckets_round_up_to_eight_but_not_past_a_cap():
    assert [cuda_graphs.bucket(n) for n in (1, 8, 9, 24, 50)] == [8, 8, 16, 24, 56]
    assert cuda_graphs.bucket(17, cap=20) == 20 and cuda_graphs.bucket(12, cap=12) == 12
    assert cuda_graphs.bucket(30, cap=20) == 32  # a cap below the length itself is no cap


@pytest.mark.parametrize(
    "overrides, engine, guided, reason",
    [
        (LUONG[1], "fast", False, None),
        (LUONG[6], "fast", False, None),
        (LUONG[1], "eager", False, "engine eager"),
        (LUONG[1], "fast", True, "guided alignment"),
        ({"attention": "global", "score": "dot", "input_feed": False}, "fast", False, "without input feeding"),
        (LUONG[9], "fast", False, None),
        (LUONG[7], "fast", False, None),
        (LUONG[-1], "fast", False, "attention monotonic is not graphed (only global, local-m, local-p)"),
        (RNNSEARCH[0], "fast", False, "only Luong"),
    ],
    ids=[
        "global-general",
        "local-m-concat",
        "eager",
        "guided",
        "no-feed",
        "local-p",
        "local-m-location",
        "monotonic",
        "rnnsearch",
    ],
)
def test_which_models_are_graphed(overrides, engine, guided, reason):
    why = cuda_graphs.unsupported(fast_model(overrides), engine=engine, guided=guided)
    assert why is None if reason is None else reason in why


def test_graphs_are_wanted_on_cuda_only_and_a_bad_setting_is_a_config_error():
    for setting in ("auto", True):
        assert cuda_graphs.wanted(setting, torch.device("cuda")) and cuda_graphs.wanted(
            setting, torch.device("cuda", 1)
        )
        assert not cuda_graphs.wanted(setting, torch.device("cpu"))
    assert not cuda_graphs.wanted(False, torch.device("cuda"))
    for bad in ("on", 1, None):
        with pytest.raises(ConfigError, match=f"train.cuda_graphs: expected auto, true or false, got {bad!r}"):
            cuda_graphs.wanted(bad, torch.device("cpu"))


def test_the_graphs_setting_never_retrains_or_refuses_a_resume():
    """Graphed updates equal ungraphed ones to float rounding (tests/cli/test_cuda.py): like the device, the setting is
    left out when a run's settings are compared."""
    compared = [
        settings.comparable_settings({"model": {}, "train": {"cuda_graphs": value}}) for value in cuda_graphs.SETTINGS
    ]
    assert all(s == compared[0] for s in compared) and "cuda_graphs" not in compared[0]["train"]


@pytest.mark.parametrize("setting, said", [(True, 1), (False, 0), ("auto", 0)])
def test_without_a_gpu_the_update_trains_ungraphed_and_true_says_so_in_one_line(setting, said, capsys):
    model = fast_model(LUONG[1]).train()
    train = train_settings(optimizer="adam", lr=0.01, clip_norm=1.0, precision="fp32", cuda_graphs=setting)
    step = TrainingStep(model, list(model.parameters()), train, torch.device("cpu"))
    assert step.graphs is None
    assert step(batch())[0].item() > 0
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == said
    if said:
        assert lines[0] == ("train.cuda_graphs: true, but CUDA graphs need a CUDA device: training on cpu without them")
