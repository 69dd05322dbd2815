"""The fast engine against the plain one: same losses, gradients, attention weights and translations in fp32; its
hand-written backward passes against autograd's numerical check; the fused kernels against their torch formulas; the
fused loss; dropout masks; bf16; token batches; no host read per update; the fallback where nothing compiles."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from nmt.data.batches import token_batches
from nmt.data.vocab import PAD_ID
from nmt.decode.translate import beam_search, greedy
from nmt.engine import attention_kernels, feed_decoder, native
from nmt.engine import fast as fast_engine
from nmt.engine.fast import use
from nmt.engine.fast_lstm import run_lstm
from nmt.engine.fused_loss import linear_cross_entropy
from nmt.engine.train_step import TrainingStep, clip_gradients
from nmt.models.dropout import keep_mask

import required
from fast_models import LUONG, RNNSEARCH, assert_same_gradients, batch, fast_model, gradients, name
from step_settings import train_settings

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("overrides", LUONG + RNNSEARCH, ids=name)
def test_fast_path_gives_the_eager_paths_loss_weights_and_gradients(overrides):
    model = fast_model(overrides)
    model.train()
    eager = gradients(model, "eager")
    assert_same_gradients(gradients(model, "fast"), eager)


@pytest.mark.parametrize("overrides", [LUONG[1], LUONG[6], LUONG[11], LUONG[13], LUONG[-2], LUONG[-1]], ids=name)
def test_the_compiled_decoder_steps_compute_what_the_step_by_step_path_does(overrides, monkeypatch):
    """The fast path's two ways of running a step around its attention: one C call (kernels.c feed_forward_step /
    feed_backward_step, calling torch's BLAS) and a few torch operations; with dropout between the layers (the same
    masks: drawn before the loop) and a gradient on the attention weights."""
    if not native.loops_usable(torch.zeros(1)):
        required.unavailable(f"no compiled whole-sequence loops here ({native.reason() or 'no BLAS sgemm_'})")
    results = {}
    for loops in (True, False):
        monkeypatch.setitem(native._state, "loops", loops)
        model = fast_model({**overrides, "dropout": 0.3})
        model.train()
        torch.manual_seed(5)
        results[loops] = gradients(model, "fast")
    assert_same_gradients(results[True], results[False])


@pytest.mark.parametrize("overrides", [LUONG[1], LUONG[5], LUONG[10], LUONG[-2], RNNSEARCH[0]], ids=name)
def test_twenty_updates_of_the_fast_path_give_the_eager_losses(overrides):
    losses = {}
    for engine in ("eager", "fast"):
        model = fast_model(overrides)
        model.train()
        train = train_settings(optimizer="adam", lr=0.01, clip_norm=1.0, engine=engine, precision="fp32")
        step = TrainingStep(model, list(model.parameters()), train, torch.device("cpu"))
        losses[engine] = [step(batch(seed % 3))[0].item() for seed in range(20)]
    for eager, fast in zip(losses["eager"], losses["fast"]):
        assert fast == pytest.approx(eager, rel=1e-5)


@pytest.mark.parametrize("overrides", [LUONG[1], LUONG[6], LUONG[-3], RNNSEARCH[0]], ids=name)
@pytest.mark.parametrize("beam", [1, 3])
def test_fast_path_translates_as_the_eager_path(overrides, beam):
    model = fast_model(overrides).eval()
    b = batch()
    found = {}
    for engine in ("eager", "fast"):
        use(model, engine)
        search = greedy if beam == 1 else lambda m, s, n: beam_search(m, s, n, beam)
        found[engine] = search(model, b.src, b.src_len)
    # the same words and attended positions; scores equal to float rounding (products of other kernels)
    assert [(h.tokens, h.positions) for h in found["fast"]] == [(h.tokens, h.positions) for h in found["eager"]]
    assert [h.score for h in found["fast"]] == pytest.approx([h.score for h in found["eager"]], rel=1e-5, abs=1e-5)


@pytest.mark.parametrize("overrides", [LUONG[1], LUONG[14], LUONG[-3], RNNSEARCH[0]], ids=name)
def test_a_decoding_rearranges_the_decoder_weights_once(overrides, monkeypatch):
    """Inside decoding_cache (as greedy and beam search run) every step reuses the transposed weights the first step
    made, instead of copying each weight matrix once per step; the steps' results are those of uncached calls."""
    from nmt.engine import decoding_cache as cache_module

    model = fast_model(overrides).eval()
    b = batch()
    made = []
    real = cache_module.cached

    def counting(owner, key, make):
        return real(owner, key, lambda: made.append(key) or make())

    for module in ("feed_decoder", "gru_decoder", "fast_lstm"):
        monkeypatch.setattr(f"nmt.engine.{module}.cached", counting, raising=False)
    with torch.no_grad():
        enc = model.encode(b.src, b.src_len)
        made.clear()  # (the encoder's)
        prev = torch.full((b.src.size(0),), 2, dtype=torch.long)
        plain, state = [], model.initial_state(enc)
        for _ in range(4):
            log_probs, state, _ = model.step(prev, enc, state)
            plain.append(log_probs)
        uncached = len(made)
        made.clear()
        with cache_module.decoding_cache(model):
            cached_steps, state = [], model.initial_state(enc)
            for _ in range(4):
                log_probs, state, _ = model.step(prev, enc, state)
                cached_steps.append(log_probs)
    assert uncached == 4 * len(set(made)) and len(made) == len(set(made)) > 0, made  # once per decoding, not per step
    for a, c in zip(plain, cached_steps):
        torch.testing.assert_close(c, a, rtol=0, atol=0)


# -- hand-written backward passes against numerical gradients (float64: the torch formulas) ---------------------
def double_model(overrides, dropout=0.0, noise=0.0):
    model = fast_model({**overrides, "dropout": dropout, "attention_noise": noise}).double().train()
    use(model, "fast")
    return model


@pytest.mark.parametrize("overrides", LUONG[:12:3] + LUONG[1:12:5] + LUONG[-4:], ids=name)
def test_feed_decoder_backward_passes_gradcheck_with_dropout_and_noise(overrides):
    """The hand-written backward pass of the input-feeding decoder (float64: the torch formulas) against numerical
    gradients, with dropout between the layers and monotonic attention's noise (the same draws in every evaluation),
    for the gradients of the target embeddings, the encoder states, the keys, the initial states and feed, through
    htilde and the attention weights (as guided alignment uses them)."""
    model = double_model(overrides, dropout=0.3, noise=0.5 if overrides.get("attention") == "monotonic" else 0.0)
    # every Jacobian entry for one model, on a smaller batch (still padded: lengths 1 to 6); elsewhere gradcheck's
    # fast mode (random projections of the Jacobian)
    full = overrides == LUONG[1]
    b = batch(src_lengths=(5, 1, 6), tgt_lengths=(4, 3, 2)) if full else batch()
    enc = model.encode(b.src, b.src_len)
    # separate leaves (clones: a dot score's keys are its memory, and gradcheck perturbs each input in place)
    memory = enc.memory.detach().clone().requires_grad_()
    keys = None if enc.keys is None else enc.keys.detach().clone().requires_grad_()
    h0, c0 = (s.detach().clone().requires_grad_() for s in enc.final)
    emb = model.tgt_embed(b.tgt_in).detach().requires_grad_()
    feed = torch.zeros(memory.size(0), model.hidden_size, dtype=torch.float64, requires_grad=True)
    state = model.attention.initial_state(enc.mask).double() if model.monotonic else None
    weighting = torch.randn(b.tgt_in.size(1), memory.size(1), dtype=torch.float64)

    def run(emb, memory, h0, c0, feed, *maybe_keys):
        torch.manual_seed(5)  # the same dropout masks and noise in every evaluation
        htilde, weights, _, _, _ = feed_decoder.run_decoder(
            model, emb, memory, maybe_keys[0] if maybe_keys else None, enc.mask, (h0, c0), feed, 0, state
        )
        return (htilde * htilde).sum() + (weights * weighting).sum()

    inputs = (emb, memory, h0, c0, feed) + ((keys,) if keys is not None else ())
    assert torch.autograd.gradcheck(run, inputs, eps=1e-6, atol=1e-5, fast_mode=not full)


def test_every_kernel_matches_autograd_through_the_attention_layer():
    """The hand-written kernels against the generic one (autograd through the layer's own step), same inputs."""
    for overrides in LUONG[:12] + LUONG[-4:-1]:
        model = fast_model(overrides).train()
        b = batch()
        enc = model.encode(b.src, b.src_len)
        grads = {}
        for generic in (False, True):
            model.zero_grad()
            make = attention_kernels.make_kernel
            if generic:
                attention_kernels.make_kernel = lambda *a, **k: make(*a, **k, autograd=True)
                feed_decoder.make_kernel = attention_kernels.make_kernel
            try:
                use(model, "fast")
                htilde, _, weights = model.decode_states(b.tgt_in, enc, model.initial_state(enc))
                (htilde.sum() + weights.sum()).backward(retain_graph=True)
            finally:
                attention_kernels.make_kernel = make
                feed_decoder.make_kernel = make
            grads[generic] = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
        for key in grads[True]:
            torch.testing.assert_close(
                grads[False][key], grads[True][key], atol=1e-5, rtol=1e-4, msg=f"{name(overrides)}: {key}"
            )


def test_rnnsearch_decoder_backward_against_numerical_gradients_with_noise_and_foresight():
    """RNNsearch's hand-written decoder backward pass (float64) against central differences of the loss, for entries
    of every decoder and attention parameter, with dropout, attention noise (the same draws every evaluation) and
    target foresight."""
    model = double_model({"arch": "rnnsearch", "target_foresight": True}, dropout=0.2, noise=0.5)
    b = batch()

    def loss():
        torch.manual_seed(5)
        log_probs, weights = model(b.src, b.src_len, b.tgt_in, tgt_out=b.tgt_out)
        return log_probs.sum() + weights.sum()

    for name_, param in model.named_parameters():
        if not name_.startswith(("decoder.", "attention.")):
            continue
        analytic = torch.autograd.grad(loss(), param)[0].reshape(-1)
        with torch.no_grad():
            flat = param.view(-1)
            for i in range(0, flat.numel(), max(1, flat.numel() // 5)):
                old = flat[i].item()
                flat[i] = old + 1e-6
                up = loss().item()
                flat[i] = old - 1e-6
                down = loss().item()
                flat[i] = old
                assert analytic[i].item() == pytest.approx((up - down) / 2e-6, rel=1e-4, abs=1e-6), name_


# -- fused kernels, fused loss, LSTM ---------------------------------------------------------------------------
@pytest.fixture
def torch_formulas():
    """Run a test's body without the compiled kernels (their torch formulas instead)."""
    native.reset(enabled=False)
    yield
    native.reset()


@pytest.mark.parametrize("overrides", [LUONG[1], LUONG[9], LUONG[-3], LUONG[-1]], ids=name)
def test_compiled_kernels_compute_the_torch_formulas(overrides, monkeypatch):
    if native.library() is None:
        required.unavailable(f"no compiled kernels here: {native.reason()}")
    # nmt.engine.fast_lstm both times (it falls back to the torch formulas too), so both draw the same dropout masks
    monkeypatch.setattr(fast_engine, "_compiled_loops", lambda x: True)
    results = []
    for enabled in (True, False):
        native.reset(enabled=None if enabled else False)
        model = fast_model({**overrides, "dropout": 0.2}).train()
        use(model, "fast")
        torch.manual_seed(3)
        loss, weights, grads = gradients(model, "fast")
        results.append((loss, weights, grads))
    native.reset()
    assert results[0][0] == pytest.approx(results[1][0], rel=1e-6)
    for key in results[0][2]:
        torch.testing.assert_close(results[0][2][key], results[1][2][key], atol=1e-5, rtol=1e-4, msg=key)


@pytest.mark.parametrize("lengths", [[3, 7, 1, 5], [1, 3, 5, 7], [7, 5, 3, 1], [7, 7, 2, 2], None])
@pytest.mark.parametrize("layers", [1, 2])
@pytest.mark.parametrize("loops", ["compiled loop", "step by step"])
def test_fast_lstm_is_nn_lstm_on_a_packed_sequence(lengths, layers, loops, monkeypatch):
    """Both ways the fast LSTM runs its steps: the whole-sequence loop in C (kernels.c, calling torch's BLAS) and one
    cell kernel and torch product per step."""
    if loops == "compiled loop" and not native.loops_usable(torch.zeros(1)):
        required.unavailable(f"no compiled whole-sequence loops here ({native.reason() or 'no BLAS sgemm_'})")
    monkeypatch.setitem(native._state, "loops", loops == "compiled loop")
    torch.manual_seed(0)
    lstm = torch.nn.LSTM(6, 5, layers, batch_first=True)
    x = torch.randn(4, 7, 6, requires_grad=True)
    hidden = tuple(torch.randn(layers, 4, 5, requires_grad=True) for _ in range(2)) if lengths is None else None
    weights = torch.randn(4, 7, 5)
    results = []
    for fast in (False, True):
        x.grad = None
        lstm.zero_grad()
        if fast:
            out, (h, c) = run_lstm(lstm, x, None if lengths is None else torch.tensor(lengths), hidden)
        elif lengths is None:
            out, (h, c) = lstm(x, hidden)
        else:
            packed = torch.nn.utils.rnn.pack_padded_sequence(
                x, torch.tensor(lengths), batch_first=True, enforce_sorted=False
            )
            out, (h, c) = lstm(packed)
            out, _ = torch.nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=7)
        ((out * weights).sum() + 0.3 * h.sum() + 0.7 * c.sum()).backward()
        results.append(
            [out.detach(), h.detach(), c.detach(), x.grad.clone(), *[p.grad.clone() for p in lstm.parameters()]]
        )
    for ref, mine in zip(*results):
        torch.testing.assert_close(mine, ref, atol=2e-6, rtol=1e-5)


@pytest.mark.parametrize("chunk", [40, 1 << 23])
def test_fused_loss_equals_log_softmax_and_nll(chunk):
    torch.manual_seed(0)
    x = torch.randn(7, 9, 16, requires_grad=True)
    weight = (torch.randn(100, 16) * 0.3).requires_grad_()
    bias = torch.randn(100).requires_grad_()
    targets = torch.randint(1, 100, (7, 9))
    targets[:3, -3:] = PAD_ID
    reference = F.nll_loss(
        torch.log_softmax(F.linear(x, weight, bias), -1).view(-1, 100),
        targets.view(-1),
        ignore_index=PAD_ID,
        reduction="sum",
    )
    expected = torch.autograd.grad(reference * 0.3, [x, weight, bias])
    fused = linear_cross_entropy(x, weight, bias, targets, PAD_ID, chunk_elements=chunk)
    assert fused.item() == pytest.approx(reference.item(), rel=1e-6)
    for mine, ref in zip(torch.autograd.grad(fused * 0.3, [x, weight, bias]), expected):
        torch.testing.assert_close(mine, ref, atol=1e-6, rtol=1e-5)
    with torch.no_grad():  # dev perplexity: the loss alone
        assert linear_cross_entropy(x, weight, bias, targets, PAD_ID).item() == pytest.approx(
            reference.item(), rel=1e-6
        )


def test_fused_loss_under_bf16_autocast_is_close_to_fp32():
    torch.manual_seed(0)
    x, weight, bias = torch.randn(64, 32), torch.randn(500, 32) * 0.2, torch.zeros(500)
    targets = torch.randint(1, 500, (64,))
    exact = linear_cross_entropy(x, weight, bias, targets, PAD_ID).item()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        approx = linear_cross_entropy(x, weight, bias, targets, PAD_ID).item()
    assert approx == pytest.approx(exact, rel=1e-2)


# -- dropout, bf16, batches, synchronisation, fallback --------------------------------------------------------
def test_dropout_masks_drop_p_and_keep_the_expectation():
    torch.manual_seed(0)
    mask = keep_mask((500, 400), 0.2, "cpu", torch.float32)
    values = mask.unique().tolist()
    assert values == [0.0, pytest.approx(65536 / (65536 - 13107))]  # 0.2 rounded to 13107 / 65536
    assert (mask == 0).float().mean().item() == pytest.approx(0.2, abs=0.004)
    assert mask.mean().item() == pytest.approx(1.0, abs=0.005)
    torch.manual_seed(0)
    assert torch.equal(mask, keep_mask((500, 400), 0.2, "cpu", torch.float32))  # seeded: the same masks


def test_bf16_training_tracks_fp32_within_three_percent():
    """bf16 autocast (on a CPU here; the default on GPUs that support it): the loss after 30 updates within 3% of
    fp32's on the same batches."""
    final = {}
    for precision in ("fp32", "bf16"):
        model = fast_model(LUONG[1])
        model.train()
        train = train_settings(optimizer="adam", lr=0.01, clip_norm=1.0, precision=precision)
        step = TrainingStep(model, list(model.parameters()), train, torch.device("cpu"))
        losses = [step(batch(seed % 3))[0].item() for seed in range(30)]
        final[precision] = sum(losses[-3:])
    assert final["bf16"] == pytest.approx(final["fp32"], rel=0.03)


def test_the_compiled_kernels_load_on_first_use_inside_a_bf16_region():
    """`nmt train` with precision bf16 on a CPU meets the library first under autocast: its fp32 self-checks must
    not run there (they once failed with 'Float did not match BFloat16')."""
    native.reset()
    try:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            lib = native.library()
        assert (lib is None) == (native.reason() is not None), native.reason()
        assert native.reason() is None or "BFloat16" not in native.reason()
    finally:
        native.reset()


def test_token_batches_hold_at_most_max_tokens_and_cover_the_corpus_once():
    gen = torch.Generator().manual_seed(0)
    src = [[5] * int(n) for n in torch.randint(1, 40, (500,), generator=gen)]
    tgt = [[5] * int(n) for n in torch.randint(1, 40, (500,), generator=gen)]
    batches = token_batches(src, tgt, 300, seed=1, epoch=2)
    assert sorted(i for b in batches for i in b) == list(range(500))
    for b in batches:
        assert len(b) * max(max(len(src[i]), len(tgt[i]) + 1) for i in b) <= 300
    assert batches == token_batches(src, tgt, 300, seed=1, epoch=2)
    assert batches != token_batches(src, tgt, 300, seed=1, epoch=3)


@pytest.mark.parametrize("overrides", [LUONG[1], LUONG[9], LUONG[-2], RNNSEARCH[1]], ids=name)
def test_forward_loss_backward_and_clipping_read_nothing_back_on_the_gpu_path(monkeypatch, overrides):
    """On a GPU an update must not wait for the device: its forward pass, loss, backward pass and clipping read no
    value back (item, float, tolist, bool). Checked on the CPU with the GPU's code paths (no compiled kernels, the
    clipping that never reads the norm) by making every read fail."""
    model = fast_model(overrides).train()
    step = TrainingStep(
        model, list(model.parameters()), train_settings(optimizer="adam", lr=0.01, clip_norm=1.0), torch.device("cpu")
    )
    b = batch()

    def no_read(method):
        original = getattr(torch.Tensor, method)

        def read(self, *args, **kwargs):
            # nn.GRU/nn.LSTM read a packed sequence's batch_sizes, which PyTorch keeps on the host on every device
            if sys._getframe(1).f_code.co_filename.endswith(os.path.join("torch", "nn", "modules", "rnn.py")):
                return original(self, *args, **kwargs)
            raise AssertionError("the update read a value back from the device")

        return read

    monkeypatch.setattr(native, "usable", lambda *tensors: False)
    for method in ("item", "tolist", "__float__", "__int__", "__bool__"):
        monkeypatch.setattr(torch.Tensor, method, no_read(method))
    loss, _ = step.loss(b)
    (loss / 5).backward()
    clip_gradients(step.parameters, 1.0, torch.device("cuda"))
    monkeypatch.undo()
    assert loss.item() > 0


def test_without_a_compiler_the_engine_says_so_once_and_trains(tmp_path):
    """The compiled kernels' fallback: one line on stderr, then the torch formulas (same numbers)."""
    code = (
        "import torch; from nmt.engine import native; from nmt.engine.lstm_cell import cell_forward;"
        "g = torch.randn(2, 8); c = torch.randn(2, 2);"
        "h, *_ = cell_forward(g.clone(), c); h2, *_ = cell_forward(g.clone(), c);"
        "print(native.library() is None, torch.allclose(h, h2))"
    )
    env = {**os.environ, "CC": "/nonexistent/cc", "NMT_CACHE_DIR": str(tmp_path), "PATH": "/nonexistent"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True"]
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "native CPU kernels unavailable (no C compiler found" in lines[0]
