"""The small models and the batch the fast-engine tests share (tests/cli/test_fast_engine.py, tests/unit/test_cuda_graphs.py,
tests/cli/test_cuda.py): every Luong and RNNsearch configuration, one seeded batch, and its loss, weights and gradients."""

import itertools

import pytest
import torch
import torch.nn.functional as F

from nmt.data.batches import make_batch
from nmt.data.vocab import PAD_ID
from nmt.engine import cuda_graphs
from nmt.engine.fast import use
from nmt.engine.fused_loss import linear_cross_entropy
from nmt.engine.graph_decoder import FeedDecoderLoss

from factories import SMALL_RNNSEARCH, TWO_LAYER_LUONG, make_model, model_config, random_ids

V = 30

LUONG = [
    {"attention": att, "score": score}
    for att, score in itertools.product(["global", "local-m", "local-p"], ["dot", "general", "concat", "location"])
]
LUONG += [
    {"attention": "global", "score": "general", "layers": 1},
    {"attention": "global", "score": "general", "layers": 3, "reverse": False},
    {"attention": "global", "score": "dot", "input_feed": False},
    {"attention": "monotonic", "energy": "eq15", "reverse": False},
    {"attention": "monotonic", "energy": "eq16", "reverse": False},
    {"attention": "monotonic", "energy": "eq17", "reverse": False},
    # p_ij near 1 everywhere: the recursion's clamps at eps are reached
    {"attention": "monotonic", "energy": "eq17", "reverse": False, "energy_bias": 12.0},
]
RNNSEARCH = [{"arch": "rnnsearch"}, {"arch": "rnnsearch", "target_foresight": True}]


# Monotonic energies with bias 0 here (the default is -1); the RNNsearch model wider than the shared one
LUONG_BASE = model_config(TWO_LAYER_LUONG, arch="luong", energy="eq17", energy_bias=0.0, attention_noise=0.0)
RNNSEARCH_BASE = model_config(
    SMALL_RNNSEARCH, embed=8, hidden=12, attention_dim=10, target_foresight=False, attention_noise=0.0
)


def fast_model(overrides, seed=0):
    """In training mode on the fast engine, as nmt train and nmt translate run it; the tests that compare set the
    engine."""
    base = RNNSEARCH_BASE if overrides.get("arch") == "rnnsearch" else LUONG_BASE
    return make_model(seed, base, src_vocab=V, tgt_vocab=V, init=0.3, engine="fast", train=True, **overrides)


def batch(seed=1, src_lengths=(7, 1, 12, 4, 9), tgt_lengths=(9, 5, 8, 2, 6)):
    gen = torch.Generator().manual_seed(seed)
    src = random_ids(list(src_lengths), V, gen)
    tgt = random_ids(list(tgt_lengths), V, gen)
    return make_batch(src, tgt, list(range(len(src))))


def name(overrides):
    return ",".join(f"{k}={v}" for k, v in overrides.items())


def gradients(model, engine, device="cpu"):
    """Loss, attention weights and parameter gradients of one teacher-forced batch on `device` (plus a term on the
    weights, as guided alignment adds); the tensors on the CPU."""
    use(model, engine)
    model.zero_grad()
    b = batch().to(device)
    log_probs, weights = model(b.src, b.src_len, b.tgt_in, tgt_out=b.tgt_out)
    loss = F.nll_loss(log_probs.reshape(-1, V), b.tgt_out.reshape(-1), ignore_index=PAD_ID, reduction="sum")
    extra = 0 if weights is None else (weights * torch.linspace(0, 1, weights.size(-1), device=device)).sum() * 0.1
    (loss + extra).backward()
    return (
        loss.item(),
        None if weights is None else weights.cpu(),
        {n: p.grad.cpu() for n, p in model.named_parameters() if p.grad is not None},
    )


def assert_same_gradients(got, want, *, rel_loss=1e-6):
    """Two `gradients` results agree: the loss to `rel_loss`, the attention weights and every gradient to fp32
    rounding of different kernels."""
    (loss, weights, grads), (ref_loss, ref_weights, ref_grads) = got, want
    assert loss == pytest.approx(ref_loss, rel=rel_loss)
    if ref_weights is not None:
        torch.testing.assert_close(weights, ref_weights, atol=1e-6, rtol=1e-5)
    assert grads.keys() == ref_grads.keys()
    for key in ref_grads:
        torch.testing.assert_close(grads[key], ref_grads[key], atol=1e-5, rtol=1e-4, msg=key)


# What a CUDA graph records (nmt.engine.graph_decoder), against the step it stands for (tests/unit/test_cuda_graphs.py,
# tests/studies/test_graph_trace.py).
def plain_loss_and_gradients(model, b):
    model.zero_grad()
    features, _ = model.features(b.src, b.src_len, b.tgt_in, tgt_out=b.tgt_out)
    loss = linear_cross_entropy(features, model.generator.weight, model.generator.bias, b.tgt_out, PAD_ID)
    loss.backward()
    return loss.item(), {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}


def recorded_loss_and_gradients(model, b, compiled=None):
    """What a graph records (FeedDecoderLoss) on `b` padded to its graph's shape (past the longest source sentence,
    target words to the next bucket); `compiled`: through torch.compile(fullgraph=True) with that backend."""
    model.zero_grad()
    enc = model.encode(b.src, b.src_len)
    source, target = cuda_graphs.bucket(b.src.size(1) + 1), cuda_graphs.bucket(b.tgt_in.size(1))
    args = cuda_graphs.padded_inputs(cuda_graphs.decoder_inputs(enc, b), source, target)
    loss_module = FeedDecoderLoss(model, None)
    if compiled is not None:
        torch._dynamo.reset()  # a fresh trace: a graph break anywhere fails the test (fullgraph)
        loss_module = torch.compile(loss_module, fullgraph=True, backend=compiled)
    loss = loss_module(*args)
    loss.backward()
    return loss.item(), {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}


def assert_same_loss_and_gradients(got, want):
    (loss, grads), (ref_loss, ref_grads) = got, want
    assert loss == pytest.approx(ref_loss, rel=1e-6)
    assert grads.keys() == ref_grads.keys()
    for key in ref_grads:
        torch.testing.assert_close(grads[key], ref_grads[key], atol=1e-6, rtol=1e-5, msg=key)
