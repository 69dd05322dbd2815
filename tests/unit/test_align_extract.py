"""Alignment extraction by forced decoding: footnote 14's crediting, batched = one by one, ensembles average
their members, hard links are the per-word argmax."""

import numpy as np
import pytest
import torch

from nmt.align.extract import hard_links, soft_alignments
from nmt.align.soft import hard_matrix
from nmt.data.batches import make_batch
from nmt.models.ensemble import Ensemble
from nmt.models.registry import credit_rule
from nmt.settings import ModelSettings

from factories import make_model, model_config, write_model_file

BASE = model_config(hidden=12, embed=6)
SIZES = {"src_vocab": 24, "tgt_vocab": 20}  # the command-line test's 20 and 16 words and the 4 specials


def corpus(n=7, seed=3):
    gen = torch.Generator().manual_seed(seed)
    src = [
        torch.randint(4, 24, (int(torch.randint(1, 11, (1,), generator=gen)),), generator=gen).tolist()
        for _ in range(n)
    ]
    tgt = [
        torch.randint(4, 20, (int(torch.randint(1, 9, (1,), generator=gen)),), generator=gen).tolist() for _ in range(n)
    ]
    return src, tgt


@pytest.mark.parametrize(
    "score,rule", [("dot", "read"), ("general", "read"), ("concat", "read"), ("location", "predicted")]
)
def test_credit_rule_follows_footnote_14(score, rule):
    assert credit_rule(ModelSettings.read({"score": score, "attention": "global"})) == rule
    assert (
        credit_rule(ModelSettings.read({"arch": "rnnsearch", "score": score})) == "predicted"
    )  # alpha_i is computed for y_i


@pytest.mark.parametrize("score", ["general", "location"])
def test_rows_are_the_credited_steps_of_the_models_own_forward(score):
    model = make_model(1, BASE, **SIZES, score=score)
    src, tgt = corpus(1)
    (matrix,) = soft_alignments(model, src, tgt)
    batch = make_batch(src, tgt, [0])
    with torch.no_grad():
        _, weights = model(batch.src, batch.src_len, batch.tgt_in)  # T + 1 steps: <s> y_1 .. y_T
    first = 1 if score == "general" else 0
    np.testing.assert_allclose(matrix, weights[0, first : first + len(tgt[0])].double().numpy(), rtol=1e-6)
    assert matrix.shape == (len(tgt[0]), len(src[0]))
    np.testing.assert_allclose(matrix.sum(axis=1), 1.0, rtol=1e-5)


@pytest.mark.parametrize("score", ["general", "location"])
def test_a_crediting_can_be_forced_on_every_model(score):
    model = make_model(1, BASE, **SIZES, score=score)
    src, tgt = corpus(4)
    own = soft_alignments(model, src, tgt)
    read, predicted = (soft_alignments(model, src, tgt, credit=c) for c in ("read", "predicted"))
    for mine, forced in zip(own, read if credit_rule(model.settings) == "read" else predicted):
        np.testing.assert_array_equal(mine, forced)
    batch = make_batch(src[:1], tgt[:1], [0])
    with torch.no_grad():
        _, weights = model(batch.src, batch.src_len, batch.tgt_in)
    # predicted: the step that reads y_{t-1} (<s> for the first word) belongs to y_t
    np.testing.assert_allclose(predicted[0], weights[0, : len(tgt[0])].double().numpy(), rtol=1e-6)
    with pytest.raises(ValueError, match="unknown crediting"):
        soft_alignments(model, src, tgt, credit="next")


@pytest.mark.parametrize(
    "overrides",
    [
        {"attention": "global", "score": "location"},
        {"attention": "local-p", "score": "general"},
        {"attention": "local-m", "score": "dot", "input_feed": False},
    ],
)
def test_batched_equals_one_by_one_in_input_order(overrides):
    model = make_model(2, BASE, **SIZES, **overrides)
    src, tgt = corpus(9)
    batched = soft_alignments(model, src, tgt, batch_size=4)
    for s, t, matrix in zip(src, tgt, batched):
        (alone,) = soft_alignments(model, [s], [t])
        np.testing.assert_allclose(matrix, alone, atol=1e-6)


def test_an_ensemble_averages_its_members_credited_matrices():
    content, location = make_model(3, BASE, **SIZES, score="general"), make_model(4, BASE, **SIZES, score="location")
    src, tgt = corpus(5)
    together = soft_alignments(Ensemble([content, location], "prob").eval(), src, tgt)
    for got, a, b in zip(together, soft_alignments(content, src, tgt), soft_alignments(location, src, tgt)):
        np.testing.assert_allclose(got, (a + b) / 2, atol=1e-6)


def test_a_model_without_attention_is_refused():
    src, tgt = corpus(1)
    with pytest.raises(ValueError, match="no alignment"):
        soft_alignments(make_model(0, BASE, **SIZES, attention="none", input_feed=False), src, tgt)


def test_hard_links_are_one_argmax_per_target_word():
    matrix = np.array(
        [
            [0.1, 0.7, 0.2],
            [0.5, 0.25, 0.25],  # tie-free
            [0.3, 0.3, 0.4],
        ]
    )
    assert hard_links(matrix) == {(1, 0), (0, 1), (2, 2)}
    assert hard_links(np.zeros((0, 3))) == set()
    np.testing.assert_array_equal(hard_matrix({(1, 0), (2, 1)}, 3, 2), [[0, 1, 0], [0, 0, 1]])


@pytest.mark.parametrize("score", ["general", "location"])
def test_extract_command_writes_links_and_soft_matrices_that_score_reads(tmp_path, score):
    import json

    from nmt.align.soft import load_soft
    from nmt.cli import main
    from nmt.data.alignments import read_pharaoh
    from nmt.data.vocab import Vocab

    src_words, tgt_words = [f"s{i}" for i in range(20)], [f"t{i}" for i in range(16)]  # + 4 specials
    model = make_model(5, BASE, **SIZES, score=score)
    path = tmp_path / "m.pt"
    write_model_file(path, model, src_words, tgt_words, system="m")
    src, tgt = ["s1 s2 s3", "s4 s5 unknown s6"], ["t1 t2", "t3 t4 t5"]
    (tmp_path / "a.src").write_text("".join(s + "\n" for s in src))
    (tmp_path / "a.tgt").write_text("".join(t + "\n" for t in tgt))
    (tmp_path / "a.gold").write_text("0-0 1-1\n0-0 1-1 2?2 3-2\n")
    links, soft, predicted = tmp_path / "m.links", tmp_path / "m.soft.npz", tmp_path / "m.predicted.links"
    assert main(
        [
            "align",
            "extract",
            "--model",
            str(path),
            "--src",
            str(tmp_path / "a.src"),
            "--tgt",
            str(tmp_path / "a.tgt"),
            "--out",
            str(links),
            "--soft-out",
            str(soft),
            "--predicted-out",
            str(predicted),
        ]
    ) in (0, None)
    matrices = load_soft(soft)
    assert [m.shape for m in matrices] == [(2, 3), (3, 4)]
    assert [a.sure for a in read_pharaoh(links)] == [hard_links(m) for m in matrices]
    # the other crediting: the model's weights of the step that predicts each word (the same for location)
    by_prediction = soft_alignments(
        model, [Vocab(src_words).encode(s) for s in src], [Vocab(tgt_words).encode(t) for t in tgt], credit="predicted"
    )
    assert [a.sure for a in read_pharaoh(predicted)] == [hard_links(m) for m in by_prediction]
    if score == "location":
        assert predicted.read_text() == links.read_text()
    out = tmp_path / "scores.json"
    assert main(
        [
            "align",
            "score",
            "--gold",
            str(tmp_path / "a.gold"),
            "--test",
            str(links),
            "--soft",
            str(soft),
            "--test-predicted",
            str(predicted),
            "--src",
            str(tmp_path / "a.src"),
            "--tgt",
            str(tmp_path / "a.tgt"),
            "--out",
            str(out),
        ]
    ) in (0, None)
    scores = json.loads(out.read_text())
    assert 0.0 <= scores["aer"] <= 1.0 and 0.0 <= scores["saer"] <= 1.0
    alone = tmp_path / "predicted.json"
    assert main(
        ["align", "score", "--gold", str(tmp_path / "a.gold"), "--test", str(predicted), "--out", str(alone)]
    ) in (0, None)
    assert scores["aer_predicted"] == json.loads(alone.read_text())["aer"]
    assert scores["aer_predicted_pct"] == 100 * scores["aer_predicted"]


def test_a_normalised_hard_matrix_shares_each_target_words_mass():
    np.testing.assert_allclose(
        hard_matrix({(0, 0), (2, 0), (1, 1)}, 3, 3, normalise=True), [[0.5, 0, 0.5], [0, 1, 0], [0, 0, 0]]
    )
