"""Monotonic attention (Raffel et al., 2017): the parallel soft form against the recursive definition, soft against
hard when p is binary, gradients over long sequences, the linear-time hard process, the energies, the modes."""

import math

import pytest
import torch
from torch import nn

from nmt.models.monotonic import (
    ENERGIES,
    SOFT_FORMS,
    MonotonicAttention,
    hard_monotonic_step,
    set_monotonic_mode,
    soft_monotonic_weights,
    soft_monotonic_weights_logspace,
)

STEPS = {"clamped": soft_monotonic_weights, "logspace": soft_monotonic_weights_logspace}


pytestmark = pytest.mark.usefixtures("one_thread")  # tests/unit/conftest.py


def lengths_mask(lengths, S=None):
    S = max(lengths) if S is None else S
    return torch.arange(S).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)


def attention(energy, H=6, A=None, seed=0, **kwargs):
    torch.manual_seed(seed)
    attn = MonotonicAttention(H, energy, attention_dim=A, **kwargs)
    with torch.no_grad():  # parameters off their init, so that every term matters
        for param in attn.parameters():
            param.add_(0.3 * torch.randn_like(param))
    return attn


def naive_weights(p, prev=None):
    """alpha_ij = p_ij sum_{k<=j} alpha_{i-1,k} prod_{l=k}^{j-1} (1 - p_il), alpha_0 one-hot on 0 (or `prev`);
    float64 loops."""
    B, T, S = p.shape
    out = torch.zeros(B, T, S, dtype=torch.float64)
    p = p.double().tolist()
    for b in range(B):
        alpha = [1.0] + [0.0] * (S - 1) if prev is None else prev[b].tolist()
        for i in range(T):
            new = []
            for j in range(S):
                total = 0.0
                for k in range(j + 1):
                    prod = 1.0
                    for m in range(k, j):
                        prod *= 1.0 - p[b][i][m]
                    total += alpha[k] * prod
                new.append(p[b][i][j] * total)
            alpha = new
            out[b, i] = torch.tensor(alpha, dtype=torch.float64)
    return out


# -- 1. the parallel soft form is the recursion ---------------------------------------------------------------

SHAPES = [[1], [1, 1, 1], [7, 3], [6, 1, 4, 2], [12, 12], [5, 9, 2]]


@pytest.mark.parametrize("lengths", SHAPES)
@pytest.mark.parametrize("T", [1, 4])
@pytest.mark.parametrize("energy", ["eq16", "eq17"])
@pytest.mark.parametrize("form", SOFT_FORMS)
def test_parallel_soft_form_equals_the_recursive_definition(lengths, T, energy, form):
    H = 6
    attn = attention(energy, H, bias_init=-1.0, seed=len(lengths) + T).double().eval()
    attn.soft_form = form
    B, S = len(lengths), max(lengths)
    query, memory = 2.0 * torch.randn(B, T, H, dtype=torch.float64), torch.randn(B, S, H, dtype=torch.float64)
    mask = lengths_mask(lengths)
    keys = attn.keys(memory)
    context, weights, state = attn.context(query, memory, keys, mask, attn.initial_state(mask))
    expected = naive_weights(attn.p_choose(query, keys, mask).detach())
    torch.testing.assert_close(weights, expected, atol=1e-12, rtol=1e-10)
    torch.testing.assert_close(context, expected @ memory, atol=1e-12, rtol=1e-10)
    torch.testing.assert_close(state, weights[:, -1])
    assert (weights.masked_select(~mask.unsqueeze(1)) == 0).all()  # padding: exactly no weight
    assert (weights.sum(-1) <= 1 + 1e-12).all()

    # float32 (the training precision) against the float64 recursion
    attn32 = attn.float()
    c32, w32, _ = attn32.context(
        query.float(), memory.float(), attn32.keys(memory.float()), mask, attn32.initial_state(mask)
    )
    torch.testing.assert_close(w32.double(), weights, atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(c32.double(), context, atol=1e-5, rtol=1e-4)
    assert (w32.masked_select(~mask.unsqueeze(1)) == 0).all()


def test_soft_form_with_noise_and_a_given_previous_alpha():
    """Training mode (noise drawn from the same seed as p_choose's) and an arbitrary alpha_{i-1}, step by step."""
    attn = attention("eq17", bias_init=-2.0, noise=1.5).double().train()
    lengths = [5, 3]
    mask = lengths_mask(lengths)
    query, memory = torch.randn(2, 3, 6, dtype=torch.float64), torch.randn(2, 5, 6, dtype=torch.float64)
    prev = torch.rand(2, 5, dtype=torch.float64).masked_fill(~mask, 0.0)
    prev = prev / prev.sum(-1, keepdim=True) * 0.8  # need not sum to 1
    keys = attn.keys(memory)
    torch.manual_seed(7)
    p = attn.p_choose(query, keys, mask).detach()
    torch.manual_seed(7)
    context, weights, _ = attn.context(query, memory, keys, mask, prev)
    expected = naive_weights(p, prev)
    torch.testing.assert_close(weights, expected, atol=1e-12, rtol=1e-10)
    torch.testing.assert_close(context, expected @ memory, atol=1e-12, rtol=1e-10)
    torch.testing.assert_close(soft_monotonic_weights(p[:, 0], prev, 1e-10), expected[:, 0])
    torch.testing.assert_close(soft_monotonic_weights_logspace(p[:, 0], prev, 1e-10), expected[:, 0])


def test_clamped_form_loses_mass_on_long_sentences_and_the_logspace_form_does_not():
    """p ~ U(0, 1) and alpha_{i-1} spread over 50 positions: the exclusive products fall below eps after some 23
    positions, where the paper's clamp sets in (see the module docstring)."""
    torch.manual_seed(0)
    p = torch.rand(3, 1, 50, dtype=torch.float64)
    prev = torch.softmax(torch.randn(3, 50, dtype=torch.float64), -1)
    expected = naive_weights(p, prev)[:, 0]
    torch.testing.assert_close(soft_monotonic_weights_logspace(p[:, 0], prev, 1e-10), expected, atol=1e-14, rtol=1e-10)
    torch.testing.assert_close(
        soft_monotonic_weights_logspace(p[:, 0].float(), prev.float(), 1e-10).double(), expected, atol=1e-6, rtol=1e-4
    )
    clamped = soft_monotonic_weights(p[:, 0], prev, 1e-10)
    assert (clamped.sum(-1) < 0.9 * expected.sum(-1)).all()


@pytest.mark.parametrize("hard", [False, True])
def test_steps_one_at_a_time_equal_all_steps_at_once_and_the_state_reorders_for_beam_search(hard):
    attn = attention("eq17", bias_init=0.5).eval()
    attn.hard = hard
    lengths = [7, 4, 6]
    mask = lengths_mask(lengths)
    query, memory = torch.randn(3, 6, 6), torch.randn(3, 7, 6)
    keys = attn.keys(memory)
    h_all, w_all, s_all = attn(query, memory, keys, mask, attn.initial_state(mask))
    state, outs, ws = attn.initial_state(mask), [], []
    for i in range(6):
        h, w, state = attn(query[:, i : i + 1], memory, keys, mask, state)
        outs.append(h)
        ws.append(w)
    torch.testing.assert_close(torch.cat(outs, 1), h_all)
    torch.testing.assert_close(torch.cat(ws, 1), w_all)
    torch.testing.assert_close(state, s_all)
    # Beam search reorders the state's batch rows (dim 0) together with the encoder output.
    _, _, mid = attn(query[:, :3], memory, keys, mask, attn.initial_state(mask))
    idx = torch.tensor([2, 0, 2, 1])
    h_sel, w_sel, _ = attn(query[idx, 3:], memory[idx], keys[idx], mask[idx], mid.index_select(0, idx))
    torch.testing.assert_close(h_sel, h_all[idx, 3:])
    torch.testing.assert_close(w_sel, w_all[idx, 3:])


# -- 2. binary p: the expectation is the hard process ---------------------------------------------------------


def binary_patterns(lengths, T, generator, behind=1):
    """p [B, T, S] in {0, 1}, with at most `behind` 1s before the position the hard process attended to at the
    previous step (more than one: the clamped form's failure, see test_paper_clamp_*), and one sentence running
    off its end at step 2."""
    B, S = len(lengths), max(lengths)
    p = torch.zeros(B, T, S)
    for b, n in enumerate(lengths):
        t = 0
        for i in range(T):
            row = (torch.rand(S, generator=generator) < 0.3).float()
            row[:t] = 0.0
            for _ in range(behind):
                if t > 0 and torch.rand((), generator=generator) < 0.5:
                    row[int(torch.randint(t, (), generator=generator))] = 1.0
            if b == 0 and i == 2:
                row[t:n] = 0.0  # exhausted from here on
            p[b, i] = row
            if t < n:
                stops = row[t:n].nonzero()
                t = t + int(stops[0]) if len(stops) else n
    return p


@pytest.mark.parametrize("form, behind", [("clamped", 1), ("logspace", 1), ("logspace", 4)])
def test_binary_p_soft_weights_equal_the_hard_walk(form, behind):
    generator = torch.Generator().manual_seed(3)
    lengths = [6, 1, 8, 5, 8]
    T = 9
    mask = lengths_mask(lengths)
    p = binary_patterns(lengths, T, generator, behind).masked_fill(~mask.unsqueeze(1), 0.0)
    lengths_t = mask.sum(1)
    alpha = torch.zeros(len(lengths), 8)
    alpha[:, 0] = 1.0
    pointer = torch.zeros(len(lengths), dtype=torch.long)
    exhausted = 0
    for i in range(T):
        alpha = STEPS[form](p[:, i], alpha, 1e-10)
        pointer, attends, _ = hard_monotonic_step(lambda rows, pos: p[rows, i, pos], pointer, lengths_t)
        hard = torch.zeros_like(alpha)
        hard[attends, pointer[attends]] = 1.0
        torch.testing.assert_close(alpha, hard, atol=1e-6, rtol=0)
        exhausted += int((~attends).sum())
    assert exhausted > 0


def binary_energy_attention(lengths, T, generator, behind=1):
    """eq17 with W = I, g = 100, r = -50 and memory h_j = [onehot(j); random]: e_ij = 100 q_ij - 50, so the query's
    first S entries are the (binary) p pattern and the contexts tell the memory entries apart."""
    B, S = len(lengths), max(lengths)
    H = S + 3
    attn = MonotonicAttention(H, "eq17").eval()
    with torch.no_grad():
        attn.W.weight.copy_(torch.eye(H))
        attn.g.fill_(100.0)
        attn.r.fill_(-50.0)
    memory = torch.cat([torch.eye(S).expand(B, S, S), torch.randn(B, S, 3, generator=generator)], dim=-1)
    query = torch.cat([binary_patterns(lengths, T, generator, behind), torch.zeros(B, T, 3)], dim=-1)
    return attn, query, memory, lengths_mask(lengths)


@pytest.mark.parametrize("form, behind", [("clamped", 1), ("logspace", 1), ("logspace", 4)])
def test_binary_p_soft_attention_equals_hard_attention_including_exhausted_memory(form, behind):
    generator = torch.Generator().manual_seed(4)
    lengths = [6, 1, 8, 5, 8, 3]
    attn, query, memory, mask = binary_energy_attention(lengths, 10, generator, behind)
    attn.soft_form = form
    keys = attn.keys(memory)
    probs = attn.p_choose(query, keys, mask)
    assert ((probs < 1e-20) | (probs == 1.0)).all()
    soft_c, soft_w, _ = attn.context(query, memory, keys, mask, attn.initial_state(mask))
    set_monotonic_mode(attn, "hard")
    hard_c, hard_w, pointer = attn.context(query, memory, keys, mask, attn.initial_state(mask))
    torch.testing.assert_close(soft_w, hard_w, atol=1e-6, rtol=0)
    torch.testing.assert_close(soft_c, hard_c, atol=1e-6, rtol=0)
    assert set(hard_w.sum(-1).unique().tolist()) == {0.0, 1.0}
    # sentence 0 ran off its end at step 2: zero context from then on, pointer parked at its length
    assert pointer[0] == lengths[0]
    assert (hard_c[0, 2:] == 0).all() and (hard_w[0, 2:] == 0).all()
    assert soft_c[0, 2:].abs().max() < 1e-6


def test_paper_clamp_underestimates_after_two_certain_stops_before_the_pointer():
    """A pinned-down limitation of the paper's parallel form (its appendix G): with p = 1 at two positions before
    the previously attended one, cumprod_excl there is eps^2 and its clamp to eps leaves only eps of the mass
    that the recursion (and the hard process) puts on the next stop."""
    p = torch.tensor([[1.0, 1.0, 0.0, 1.0]])
    prev = torch.tensor([[0.0, 0.0, 1.0, 0.0]])
    assert naive_weights(p.unsqueeze(1), prev)[0, 0].tolist() == [0.0, 0.0, 0.0, 1.0]
    alpha = soft_monotonic_weights(p.double(), prev.double(), 1e-10)
    assert alpha[0, 3] < 1e-9
    exact = soft_monotonic_weights_logspace(p.double(), prev.double(), 1e-10)
    assert exact[0, 3] == 1.0 and exact[0, :3].max() < 1e-300


# -- 3. gradients over long sequences -------------------------------------------------------------------------


@pytest.mark.parametrize("form", SOFT_FORMS)
def test_soft_recursion_gradients_are_finite_over_200_source_and_200_output_positions(form):
    """Energies from -55 to +55 over 200 output steps x 200 source positions: a band of p ~ 1 sweeping along the
    diagonal (the attention moves through the whole sentence), p ~ 0 elsewhere (the exclusive products underflow),
    a block of p ~ 1 behind the pointer (the clamp's regime) and padding."""
    torch.manual_seed(5)
    S = T = 200
    mask = lengths_mask([S, 150])
    i = torch.arange(T).view(T, 1) / T
    j = torch.arange(S).view(1, S) / S
    energies = 30 * torch.cos(math.pi * (j - i)) - 15 + 2 * torch.randn(2, T, S)
    energies[:, 150:, :20] = 40.0
    energies[:, :, 170:180] = -40.0
    energies.requires_grad_()
    p = torch.sigmoid(energies).masked_fill(~mask.unsqueeze(1), 0.0)
    alpha = torch.zeros(2, S)
    alpha[:, 0] = 1.0
    weights = []
    for step in range(T):
        alpha = STEPS[form](p[:, step], alpha, 1e-10)
        weights.append(alpha)
    weights = torch.stack(weights, 1)
    (weights * torch.randn(2, T, S)).sum().backward()
    assert torch.isfinite(weights).all() and torch.isfinite(energies.grad).all()
    assert energies.grad.abs().sum() > 0
    peaks = weights.argmax(-1)  # the attention sweeps through the sentence
    assert (peaks[:, 60] < 10).all() and (peaks[:, 140] > 60).all()
    assert (weights[:, 140].sum(-1) > 0.99).all()
    # From step 150 on the p ~ 1 block lies behind the pointer: the paper's clamp loses the mass (see
    # test_paper_clamp_*), the gradients stay finite all the same; the log-space form keeps it and moves on.
    if form == "clamped":
        assert (weights[:, 150:].sum(-1) < 1e-6).all()
    else:
        assert (weights[:, 150:].sum(-1) > 0.99).all() and (peaks[:, -1] > 100).all()
    assert (weights.masked_select(~mask.unsqueeze(1)) == 0).all()


@pytest.mark.parametrize("energy", ENERGIES)
@pytest.mark.parametrize("form", SOFT_FORMS)
def test_gradients_reach_every_parameter_over_200_source_and_200_output_positions(energy, form):
    torch.manual_seed(5)
    H, S, T = 8, 200, 200
    attn = MonotonicAttention(H, energy, attention_dim=12 if energy != "eq17" else None, bias_init=-15.0).train()
    attn.soft_form = form
    mask = lengths_mask([S, 150])

    # Memory and queries on a half circle in their first two coordinates: with eq17 (W = I, g = 1) the energy is
    # 30 cos(angle difference) - 15 plus noise, a band of p ~ 1 moving along the diagonal, p ~ 0 far from it.
    def half_circle(n, count):
        angle = math.pi * torch.arange(n) / n
        points = torch.zeros(count, n, H)
        points[..., 0], points[..., 1] = torch.cos(angle), torch.sin(angle)
        return math.sqrt(30) * points + 0.3 * torch.randn(count, n, H)

    memory, query = half_circle(S, 2).requires_grad_(), half_circle(T, 2).requires_grad_()
    with torch.no_grad():
        if energy == "eq17":
            attn.W.weight.copy_(torch.eye(H))
            attn.g.fill_(1.0)
        else:  # large random weights: energies of both signs and large magnitudes
            attn.W.weight.mul_(3.0)
            attn.V.weight.mul_(3.0)
            attn.v.mul_(20.0)
            if energy == "eq16":
                attn.g.fill_(20.0)
                attn.r.fill_(-2.0)
    keys = attn.keys(memory)
    energies = attn.energies(query, keys)
    assert energies.max() > 10 and energies.min() < -10
    htilde, weights, state = attn(query, memory, keys, mask, attn.initial_state(mask))
    loss = (htilde**2).sum() + weights.sum() + state.sum()
    loss.backward()
    assert torch.isfinite(weights).all() and torch.isfinite(htilde).all()
    assert torch.isfinite(memory.grad).all() and torch.isfinite(query.grad).all()
    reached = {name: p.grad for name, p in attn.named_parameters()}
    expected = {
        "eq15": {"W.weight", "V.weight", "V.bias", "v", "W_c.weight"},
        "eq16": {"W.weight", "V.weight", "V.bias", "v", "g", "r", "W_c.weight"},
        "eq17": {"W.weight", "g", "r", "W_c.weight"},
    }[energy]
    assert set(reached) == expected
    for name, grad in reached.items():
        assert grad is not None and torch.isfinite(grad).all(), name
        assert grad.abs().sum() > 0, name
    if energy == "eq17":  # the attention moves through the sentence
        peaks = weights[0].argmax(-1)
        assert peaks[T // 4] < peaks[T // 2] < peaks[3 * T // 4] and peaks[-1] > S // 2


# -- 4. the hard process --------------------------------------------------------------------------------------


def naive_hard(attn, query, memory, lengths):
    """The definition, one sentence at a time: all energies of the sentence computed, then the walk."""
    contexts = torch.zeros_like(query)
    weights = torch.zeros(query.size(0), query.size(1), memory.size(1))
    with torch.no_grad():
        for b, n in enumerate(lengths):
            p = torch.sigmoid(attn.energies(query[b : b + 1], attn.keys(memory[b : b + 1, :n])))[0]
            t = 0
            for i in range(query.size(1)):
                while t < n and p[i, t] < 0.5:
                    t += 1
                if t < n:
                    contexts[b, i] = memory[b, t]
                    weights[b, i, t] = 1.0
    return contexts, weights


@pytest.mark.parametrize("energy", ENERGIES)
def test_hard_batched_equals_sentence_by_sentence_and_the_definition(energy):
    lengths = [9, 1, 6, 9, 3, 7]
    B, S, T, H = len(lengths), max(lengths), 10, 6
    attn = attention(energy, H, bias_init=0.5, seed=11).eval()
    attn.hard = True
    torch.manual_seed(12)
    query, memory = torch.randn(B, T, H), torch.randn(B, S, H)
    mask = lengths_mask(lengths)
    attn.energy_evaluations = 0
    with torch.no_grad():
        context, weights, final = attn.context(query, memory, attn.keys(memory), mask, attn.initial_state(mask))
    batched_evaluations = attn.energy_evaluations
    expected_c, expected_w = naive_hard(attn, query, memory, lengths)
    assert torch.equal(weights, expected_w)
    torch.testing.assert_close(context, expected_c, atol=0, rtol=0)

    total, exhausted = 0, 0
    for b, n in enumerate(lengths):
        one_mask = lengths_mask([n])
        attn.energy_evaluations = 0
        pointers = [attn.initial_state(one_mask)]
        c_b, w_b = [], []
        with torch.no_grad():
            for i in range(T):  # one step at a time, the sentence alone (no padding)
                c, w, state = attn.context(
                    query[b : b + 1, i : i + 1],
                    memory[b : b + 1, :n],
                    attn.keys(memory[b : b + 1, :n]),
                    one_mask,
                    pointers[-1],
                )
                pointers.append(state)
                c_b.append(c)
                w_b.append(w)
        assert attn.energy_evaluations <= n + T
        total += attn.energy_evaluations
        torch.testing.assert_close(torch.cat(c_b, 1)[0], context[b], atol=0, rtol=0)
        assert torch.equal(torch.cat(w_b, 1)[0], weights[b, :, :n])
        steps = torch.cat(pointers).tolist()
        assert steps == sorted(steps) and steps[-1] == int(final[b])  # never backwards
        if steps[-1] == n:  # exhausted: zero context from the step that ran off the end
            first = steps.index(n) - 1
            exhausted += 1
            assert (context[b, first:] == 0).all() and (weights[b, first:] == 0).all()
    assert batched_evaluations == total
    assert exhausted > 0 and exhausted < B


def test_hard_energy_evaluations_are_linear_not_quadratic():
    """Stop at every fourth source word: S + T energies at most, far from the S*T of soft attention."""
    S, T, S_H = 300, 300, 302
    attn = MonotonicAttention(S_H, "eq17").eval()
    with torch.no_grad():
        attn.W.weight.copy_(torch.eye(S_H))
        attn.g.fill_(100.0)
        attn.r.fill_(-50.0)
    memory = torch.eye(S, S_H).unsqueeze(0)
    query = torch.zeros(1, T, S_H)
    for i in range(T):
        if 4 * i < S:
            query[0, i, 4 * i] = 1.0  # p = 1 at source word 4i only
    mask = lengths_mask([S])
    set_monotonic_mode(attn, "hard")
    attn.energy_evaluations = 0
    with torch.no_grad():
        _, weights, pointer = attn.context(query, memory, attn.keys(memory), mask, attn.initial_state(mask))
    assert attn.energy_evaluations <= S + T
    assert weights[0, : S // 4].argmax(-1).tolist() == list(range(0, S, 4))
    assert (weights[0, S // 4 :] == 0).all() and int(pointer) == S


def test_noise_only_while_training_and_hard_mode_only_in_eval():
    attn = attention("eq16", noise=1.0)
    lengths = [5, 3]
    mask = lengths_mask(lengths)
    query, memory = torch.randn(2, 4, 6), torch.randn(2, 5, 6)
    keys = attn.keys(memory)

    def run():
        return attn(query, memory, keys, mask, attn.initial_state(mask))[1]

    attn.eval()
    assert torch.equal(run(), run())  # eval: deterministic
    attn.train()
    assert not torch.equal(run(), run())  # training: pre-sigmoid noise
    attn.noise = 0.0
    assert torch.equal(run(), run())
    attn.hard = True
    with pytest.raises(RuntimeError, match="model.eval"):
        run()
    attn.eval()
    with pytest.raises(ValueError, match="soft mode"):
        attn(query, memory, keys, mask, torch.zeros(2, 5))  # an alpha where the pointers belong
    attn.hard = False
    with pytest.raises(ValueError, match="hard mode"):
        attn(query, memory, keys, mask, torch.zeros(2, dtype=torch.long))


def test_initial_states():
    attn = MonotonicAttention(4, "eq17")
    mask = lengths_mask([3, 1])
    alpha = attn.initial_state(mask)
    assert alpha.dtype.is_floating_point and alpha.tolist() == [[1.0, 0.0, 0.0], [1.0, 0.0, 0.0]]
    attn.hard = True
    pointer = attn.initial_state(mask)
    assert pointer.dtype == torch.long and pointer.tolist() == [0, 0]


# -- 5. energies and their initialisation ---------------------------------------------------------------------


@pytest.mark.parametrize("energy", ENERGIES)
def test_energies_equal_the_per_position_formula(energy):
    H, A = 5, 7
    attn = attention(energy, H, A=None if energy == "eq17" else A, seed=2)
    query, memory = torch.randn(2, 3, H, dtype=torch.float64), torch.randn(2, 4, H, dtype=torch.float64)
    attn = attn.double()
    keys = attn.keys(memory)
    energies = attn.energies(query, keys)
    W = attn.W.weight.detach()
    for b in range(2):
        for i in range(3):
            for j in range(4):
                s, h = query[b, i], memory[b, j]
                if energy == "eq17":
                    e = attn.g * (s @ (W @ h)) + attn.r
                else:
                    hidden = torch.tanh(W @ s + attn.V.weight @ h + attn.V.bias)
                    v = attn.v
                    e = v @ hidden if energy == "eq15" else attn.g * (v / v.norm()) @ hidden + attn.r
                torch.testing.assert_close(energies[b, i, j], e.detach())
                torch.testing.assert_close(attn.energies_at(s.view(1, H), keys[b, j].view(1, -1))[0], e)
    if energy == "eq16":  # weight normalisation: the scale of v does not matter
        with torch.no_grad():
            attn.v.mul_(9.0)
        torch.testing.assert_close(attn.energies(query, keys), energies)


@pytest.mark.parametrize(
    "energy, A, g", [("eq16", 16, 0.25), ("eq16", None, 1 / math.sqrt(6)), ("eq17", None, 1 / math.sqrt(6))]
)
def test_scalars_start_at_their_intended_values_and_reset_after_uniform_init(energy, A, g):
    attn = MonotonicAttention(6, energy, attention_dim=A, bias_init=-3.0)
    assert attn.g.shape == () and attn.r.shape == ()
    assert attn.g.item() == pytest.approx(g) and attn.r.item() == -3.0
    for param in attn.parameters():  # what Seq2Seq.init_uniform does
        nn.init.uniform_(param, -0.1, 0.1)
    assert abs(attn.r.item()) <= 0.1
    attn.reset_scalars()
    assert attn.g.item() == pytest.approx(g) and attn.r.item() == -3.0
    assert abs(attn.W.weight).max() <= 0.1  # the other parameters keep their uniform draw


def test_eq15_has_no_scalars_and_keys_shapes():
    eq15 = MonotonicAttention(6, "eq15", attention_dim=4)
    assert not hasattr(eq15, "g") and not hasattr(eq15, "r")
    eq15.reset_scalars()  # nothing to reset
    memory = torch.randn(2, 5, 6)
    assert eq15.keys(memory).shape == (2, 5, 4)
    assert MonotonicAttention(6, "eq17").keys(memory).shape == (2, 5, 6)


def test_constructor_errors():
    with pytest.raises(ValueError, match="eq15, eq16, eq17"):
        MonotonicAttention(6, "dot")
    with pytest.raises(ValueError, match="attention_dim"):
        MonotonicAttention(6, "eq17", attention_dim=4)
    with pytest.raises(ValueError, match="standard deviation"):
        MonotonicAttention(6, "eq16", noise=-1.0)
    attn = MonotonicAttention(6, "eq17")
    attn.soft_form = "exact"
    mask = lengths_mask([3])
    with pytest.raises(ValueError, match="clamped, logspace"):
        attn(
            torch.randn(1, 1, 6), torch.randn(1, 3, 6), attn.keys(torch.randn(1, 3, 6)), mask, attn.initial_state(mask)
        )


# -- 6. modes -------------------------------------------------------------------------------------------------


def test_set_monotonic_mode():
    model = nn.ModuleDict({"a": MonotonicAttention(4, "eq16"), "b": nn.Sequential(MonotonicAttention(4, "eq17"))})
    set_monotonic_mode(model, "hard")
    assert model["a"].hard and model["b"][0].hard
    set_monotonic_mode(model, "soft")
    assert not model["a"].hard and not model["b"][0].hard
    with pytest.raises(ValueError, match="unknown monotonic attention mode 'greedy'"):
        set_monotonic_mode(model, "greedy")
    plain = nn.Sequential(nn.Linear(4, 4))
    with pytest.raises(ValueError, match="no monotonic attention"):
        set_monotonic_mode(plain, "hard")
    set_monotonic_mode(plain, "soft")  # the default: nothing to do
    with pytest.raises(ValueError, match="unknown"):
        set_monotonic_mode(plain, "Hard")
