"""nmt.engine.cuda_graphs where no GPU is needed: padding a batch to its graph's shape changes neither the loss nor a
gradient, which models and devices get graphs, and the one-line fallback. The graphs themselves are tested on a GPU
(tests/test_cuda.py)."""
import pytest
import torch

from nmt import settings
from nmt.engine import cuda_graphs
from nmt.data.vocab import PAD_ID
from nmt.base.errors import ConfigError
from nmt.engine.fused_loss import linear_cross_entropy
from nmt.engine.train_step import TrainingStep
from step_settings import train_settings
from test_fast_engine import LUONG, RNNSEARCH, batch, fast_model, name

GRAPHED = [o for o in LUONG if o.get("score") in cuda_graphs.graphed().get(o.get("attention"), ())
           and o.get("input_feed", True)]
LOCAL_P = [o for o in LUONG if o.get("attention") == "local-p"]


def test_the_graphed_models_are_global_and_local_m_attention():
    assert len(GRAPHED) == 7 + 2  # global x 4 scores, local-m x 3; and the 1- and 3-layer global general models


def plain_loss_and_gradients(model, b):
    model.zero_grad()
    features, _ = model.features(b.src, b.src_len, b.tgt_in, tgt_out=b.tgt_out)
    loss = linear_cross_entropy(features, model.generator.weight, model.generator.bias, b.tgt_out, PAD_ID)
    loss.backward()
    return loss.item(), {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}


def padded_loss_and_gradients(model, b, source, target):
    model.zero_grad()
    enc = model.encode(b.src, b.src_len)
    args = cuda_graphs.padded_inputs(cuda_graphs.decoder_inputs(enc, b), source, target)
    assert args[0].size(1) == source and args[4].size(1) == target
    loss = cuda_graphs.DecoderLoss(model, None)(*args)
    loss.backward()
    return loss.item(), {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}


@pytest.mark.parametrize("overrides", GRAPHED + LOCAL_P, ids=name)
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


def test_buckets_round_up_to_eight_but_not_past_a_cap():
    assert [cuda_graphs.bucket(n) for n in (1, 8, 9, 24, 50)] == [8, 8, 16, 24, 56]
    assert cuda_graphs.bucket(17, cap=20) == 20 and cuda_graphs.bucket(12, cap=12) == 12
    assert cuda_graphs.bucket(30, cap=20) == 32  # a cap below the length itself is no cap


@pytest.mark.parametrize("overrides, engine, guided, reason", [
    (LUONG[1], "fast", False, None),
    (LUONG[6], "fast", False, None),
    (LUONG[1], "eager", False, "engine eager"),
    (LUONG[1], "fast", True, "guided alignment"),
    ({"attention": "global", "score": "dot", "input_feed": False}, "fast", False, "without input feeding"),
    (LUONG[9], "fast", False, "attention local-p with score general is not graphed"),
    (LUONG[7], "fast", False, "attention local-m with score location is not graphed"),
    (LUONG[-1], "fast", False, "attention monotonic with score general is not graphed"),
    (RNNSEARCH[0], "fast", False, "only Luong"),
], ids=["global-general", "local-m-concat", "eager", "guided", "no-feed", "local-p", "local-m-location", "monotonic",
        "rnnsearch"])
def test_which_models_are_graphed(overrides, engine, guided, reason):
    why = cuda_graphs.unsupported(fast_model(overrides), engine=engine, guided=guided)
    assert why is None if reason is None else reason in why


def test_graphs_are_wanted_on_cuda_only_and_a_bad_setting_is_a_config_error():
    for setting in ("auto", True):
        assert cuda_graphs.wanted(setting, torch.device("cuda")) and cuda_graphs.wanted(setting, torch.device("cuda", 1))
        assert not cuda_graphs.wanted(setting, torch.device("cpu"))
    assert not cuda_graphs.wanted(False, torch.device("cuda"))
    for bad in ("on", 1, None):
        with pytest.raises(ConfigError, match=f"train.cuda_graphs: expected auto, true or false, got {bad!r}"):
            cuda_graphs.wanted(bad, torch.device("cpu"))


def test_the_graphs_setting_never_retrains_or_refuses_a_resume():
    """Graphed updates equal ungraphed ones to float rounding (tests/test_cuda.py): like the device, the setting is
    left out when a run's settings are compared."""
    compared = [settings.comparable_settings({"model": {}, "train": {"cuda_graphs": value}})
                for value in cuda_graphs.SETTINGS]
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
        assert lines[0] == ("train.cuda_graphs: true, but CUDA graphs need a CUDA device: training on cpu without "
                            "them")
