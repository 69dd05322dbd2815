"""The engine on a CUDA device: what the CPU tests assert (tests/cli/test_fast_engine.py, tests/cli/test_train.py), asserted
on a GPU, plus CUDA against the CPU.

CI's machines have no GPU: there every test here is skipped with the reason "no CUDA device" (not a missing tool:
NMT_REQUIRE_ALL does not turn it into a failure, since no CI machine can have one). On a GPU node run them with
`python -m pytest -q tests/cli/test_cuda.py`, or all the GPU checks with `bash benchmarks/gpu-check.sh`.

fp32 here means fp32: TF32 is off for matrix products and cuDNN in every test (torch leaves cuDNN's on by default),
so the tolerances are the CPU tests' own.
"""

import json
import subprocess

import pytest
import torch
import yaml

from nmt.data.batches import make_batch
from nmt.decode.translate import beam_search, greedy
from nmt.engine.fast import use
from nmt.engine.train_step import TrainingStep
from nmt.models.io import load_checkpoint

from factories import random_ids
from fast_models import LUONG, RNNSEARCH, V, assert_same_gradients, batch, fast_model, gradients, name
from step_settings import train_settings
from training_runs import assert_same_run, epochs_recorded, final_state, half_an_epoch, kill_when, train_cmd

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
CUDA = torch.device("cuda")


@pytest.fixture(autouse=True)
def exact_fp32():
    products, cudnn = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    yield
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = products, cudnn


@pytest.mark.parametrize("overrides", LUONG + RNNSEARCH, ids=name)
def test_on_cuda_the_fast_path_gives_the_eager_paths_loss_weights_and_gradients(overrides):
    model = fast_model(overrides).to(CUDA).train()
    assert_same_gradients(gradients(model, "fast", CUDA), gradients(model, "eager", CUDA))


@pytest.mark.parametrize("overrides", LUONG[1::3] + RNNSEARCH, ids=name)
def test_cuda_computes_what_the_cpu_computes(overrides):
    cpu = gradients(fast_model(overrides).train(), "fast")
    cuda = gradients(fast_model(overrides).to(CUDA).train(), "fast", CUDA)
    assert_same_gradients(cuda, cpu, rel_loss=1e-5)


@pytest.mark.parametrize("overrides", [LUONG[1], LUONG[5], LUONG[10], LUONG[-2], RNNSEARCH[0]], ids=name)
def test_on_cuda_twenty_updates_of_the_fast_path_give_the_eager_losses(overrides):
    losses = {}
    for engine in ("eager", "fast"):
        model = fast_model(overrides).to(CUDA).train()
        train = train_settings(optimizer="adam", lr=0.01, clip_norm=1.0, engine=engine, precision="fp32")
        step = TrainingStep(model, list(model.parameters()), train, CUDA)
        losses[engine] = [step(batch(seed % 3).to(CUDA))[0].item() for seed in range(20)]
    assert losses["fast"] == pytest.approx(losses["eager"], rel=1e-5)


def test_on_cuda_bf16_training_tracks_fp32_within_three_percent():
    final = {}
    for precision in ("fp32", "bf16"):
        model = fast_model(LUONG[1]).to(CUDA).train()
        train = train_settings(optimizer="adam", lr=0.01, clip_norm=1.0, precision=precision)
        step = TrainingStep(model, list(model.parameters()), train, CUDA)
        assert (step.dtype is None) == (precision == "fp32")
        losses = [step(batch(seed % 3).to(CUDA))[0].item() for seed in range(30)]
        final[precision] = sum(losses[-3:])
    assert final["bf16"] == pytest.approx(final["fp32"], rel=0.03)


def test_auto_precision_is_bf16_on_a_gpu_that_supports_it():
    model = fast_model(LUONG[1]).to(CUDA)
    step = TrainingStep(model, list(model.parameters()), train_settings(optimizer="adam", lr=0.01, clip_norm=1.0), CUDA)
    assert step.dtype == (torch.bfloat16 if torch.cuda.is_bf16_supported() else None)


def search(model, src, src_len, beam):
    return greedy(model, src, src_len) if beam == 1 else beam_search(model, src, src_len, beam)


@pytest.mark.parametrize("overrides", [LUONG[1], LUONG[6], LUONG[-3], RNNSEARCH[0]], ids=name)
@pytest.mark.parametrize("beam", [1, 3])
def test_on_cuda_batched_search_equals_the_eager_path_the_cpu_and_one_sentence_at_a_time(overrides, beam):
    b = batch()
    cpu_model = fast_model(overrides).eval()
    found = {"cpu": search(cpu_model, b.src, b.src_len, beam)}
    model = fast_model(overrides).to(CUDA).eval()
    src, src_len = b.src.to(CUDA), b.src_len.to(CUDA)
    for engine in ("fast", "eager"):
        use(model, engine)
        found[engine] = search(model, src, src_len, beam)
    use(model, "fast")
    found["one at a time"] = [
        search(model, src[i : i + 1, : int(b.src_len[i])], src_len[i : i + 1], beam)[0] for i in range(src.size(0))
    ]
    reference = [(h.tokens, h.positions) for h in found["cpu"]]
    for how, hyps in found.items():
        assert [(h.tokens, h.positions) for h in hyps] == reference, how
        assert [h.score for h in hyps] == pytest.approx([h.score for h in found["cpu"]], rel=1e-4, abs=1e-4), how


# -- CUDA graphs (nmt.engine.cuda_graphs) ------------------------------------------------------------------------------
def shaped_batches(seed=3):
    """Batches of several shapes: two source and target buckets, and one batch of fewer sentences."""
    gen = torch.Generator().manual_seed(seed)
    shapes = [([7, 1, 12, 4, 9], [9, 5, 8, 2, 6]), ([21, 3, 17, 5, 2], [4, 19, 3, 3, 1]), ([5, 6, 2], [7, 1, 3])]
    out = []
    for src_lengths, tgt_lengths in shapes:
        src, tgt = random_ids(src_lengths, V, gen), random_ids(tgt_lengths, V, gen)
        out.append(make_batch(src, tgt, list(range(len(src)))).to(CUDA))
    return out


GRAPHED = LUONG[:12]  # global, local-m and local-p x 4 scores (nmt.engine.cuda_graphs.graphed)


def graph_run(overrides, graphs, updates=12, lr=0.1, dropout=0.0, batch_size=5):
    """Updates by SGD (Adam would turn float-rounding differences of near-zero gradients into steps of lr)."""
    model = fast_model({**overrides, "dropout": dropout, "max_src_len": 24}).to(CUDA).train()
    train = train_settings(
        optimizer="sgd", lr=lr, clip_norm=1.0, precision="fp32", cuda_graphs=graphs, batch_size=batch_size
    )
    step = TrainingStep(model, list(model.parameters()), train, CUDA)
    batches = shaped_batches()
    losses = [step(batches[i % len(batches)])[0].item() for i in range(updates)]
    return losses, model, step


@pytest.mark.parametrize("overrides", GRAPHED, ids=name)
def test_on_cuda_graphed_updates_equal_ungraphed_ones_over_batches_of_several_shapes(overrides):
    plain, plain_model, plain_step = graph_run(overrides, False)
    graphed, graphed_model, step = graph_run(overrides, True)
    assert plain_step.graphs is None and step.graphs is not None
    assert len(step.graphs.graphs) == 2  # two shapes of 5 sentences; the batch of 3 ran ungraphed
    assert graphed == pytest.approx(plain, rel=1e-5)
    for (key, p), q in zip(plain_model.named_parameters(), graphed_model.parameters()):
        torch.testing.assert_close(q, p, atol=1e-5, rtol=1e-4, msg=key)


@pytest.mark.parametrize("overrides", [LUONG[1], LUONG[9]], ids=name)  # global and local-p general
def test_on_cuda_graph_replays_draw_fresh_dropout_masks_and_seeded_runs_repeat(overrides):
    first, _, step = graph_run(overrides, True, updates=6, lr=0.0, dropout=0.3)
    assert step.graphs.graphs
    assert first[0] != first[3]  # the same batch and parameters (lr 0): other masks
    again, _, _ = graph_run(overrides, True, updates=6, lr=0.0, dropout=0.3)
    assert again == first


def test_on_cuda_bf16_graphs_track_ungraphed_bf16():
    final = {}
    for graphs in (False, True):
        model = fast_model(LUONG[1]).to(CUDA).train()
        train = train_settings(
            optimizer="adam", lr=0.01, clip_norm=1.0, precision="bf16", cuda_graphs=graphs, batch_size=5
        )  # batch()'s sentences: graphed
        step = TrainingStep(model, list(model.parameters()), train, CUDA)
        losses = [step(batch(seed % 3).to(CUDA))[0].item() for seed in range(30)]
        final[graphs] = sum(losses[-3:])
    assert final[True] == pytest.approx(final[False], rel=0.03)


# -- nmt train on CUDA: seeded runs, the CUDA RNG state in checkpoints, resume after SIGKILL ------------------------
def cuda_train_cmd(root, preset, out):
    return train_cmd(root, preset, out) + ["--device", "cuda"]


@pytest.mark.parametrize("graphs", [False, True], ids=["ungraphed", "cuda-graphs"])
def test_nmt_train_on_cuda_checkpoints_the_cuda_rng_and_a_killed_run_resumes_exactly(workspace, graphs):  # noqa: F811
    root, preset = workspace
    # the same preset with train.cuda_graphs: true or false (the model, global general + feed, can be graphed, so the
    # default, auto, would graph it too)
    spec = yaml.safe_load((root / "presets" / f"{preset}.yaml").read_text())
    spec["train"]["cuda_graphs"] = graphs
    preset = f"{preset}_graphs_{str(graphs).lower()}"
    (root / "presets" / f"{preset}.yaml").write_text(yaml.safe_dump(spec))
    reference = root / f"cuda-a-{preset}"
    log = subprocess.run(cuda_train_cmd(root, preset, reference), check=True, capture_output=True, text=True).stderr
    assert "device cuda" in log and ("CUDA graphs" in log) == graphs, log
    state = load_checkpoint(reference / "checkpoint.pt")["state"]
    assert state["cuda_rng"] is not None and state["cuda_rng"].dtype == torch.uint8, log
    meta = json.loads((reference / "model.json").read_text())
    # (model.json's environment names CUDA's version on any machine: the device itself says where it trained)
    assert meta["device"].startswith("cuda"), meta
    assert meta["environment"]["device"] == torch.cuda.get_device_name(torch.device(meta["device"])), meta
    assert meta["environment"]["hardware"]["gpus"] and meta["wall_s"] > 0, meta
    subprocess.run(cuda_train_cmd(root, preset, root / f"cuda-b-{preset}"), check=True, capture_output=True)
    assert_same_run(final_state(reference), final_state(root / f"cuda-b-{preset}"))  # seeded: the same numbers twice

    out = root / f"cuda-killed-{preset}"  # killed without warning in epoch 2, after epoch 1's checkpoint
    kill_when(
        cuda_train_cmd(root, preset, out),
        lambda: epochs_recorded(out) >= 1 and (out / "checkpoint.pt").exists(),
        pause=lambda: half_an_epoch(out),
        poll=0.02,
        timeout=180,
    )
    subprocess.run(cuda_train_cmd(root, preset, out), check=True, capture_output=True)
    assert_same_run(final_state(reference), final_state(out))
