"""Ensembles: of one model == that model; of two identical models == the same output; the combination rule."""

import pytest
import torch

from nmt.data.batches import make_batch
from nmt.data.vocab import Vocab
from nmt.decode.translate import beam_search, greedy, translate_ids
from nmt.models.ensemble import Ensemble
from nmt.models.io import load_models
from nmt.models.seq2seq import Seq2Seq

from factories import SRC_WORDS, TGT_WORDS, make_model, random_ids, write_model_file


def sources():
    return random_ids((6, 2, 9, 4), 20, seed=3)


@pytest.mark.parametrize("combine", ["prob", "logprob"])
def test_ensemble_of_one_model_is_that_model(combine):
    model = make_model(0)
    batch = make_batch(sources(), None, list(range(4)))
    alone = beam_search(model, batch.src, batch.src_len, beam=3)
    ensemble = beam_search(Ensemble([model], combine), batch.src, batch.src_len, beam=3)
    assert [h.tokens for h in alone] == [h.tokens for h in ensemble]
    for a, e in zip(alone, ensemble):
        assert e.score == pytest.approx(a.score, abs=1e-5)


@pytest.mark.parametrize("combine", ["prob", "logprob"])
def test_ensemble_of_two_identical_models_gives_the_same_output(combine):
    model, twin = make_model(1), make_model(1)
    hyps = translate_ids(model, sources(), beam=4, batch_size=3, max_len_ratio=2.0, device="cpu", progress=False)
    both = translate_ids(
        Ensemble([model, twin], combine),
        sources(),
        beam=4,
        batch_size=3,
        max_len_ratio=2.0,
        device="cpu",
        progress=False,
    )
    assert [h.tokens for h in hyps] == [h.tokens for h in both]
    for a, e in zip(hyps, both):
        assert e.score == pytest.approx(a.score, abs=1e-4)


def test_members_distributions_are_combined_word_by_word():
    """Different members (reversed or not, global or local-p, with or without input feeding): one step of the
    ensemble equals the average probability (or renormalised average log-probability) of the members' steps."""
    members = [
        make_model(2),
        make_model(3, reverse=False, attention="local-p", input_feed=False),
        make_model(4, attention="none"),
    ]
    batch = make_batch(sources(), None, list(range(4)))
    prev = torch.tensor([2, 2, 2, 2])
    steps = [
        m.step(prev, m.encode(batch.src, batch.src_len), m.initial_state(m.encode(batch.src, batch.src_len)))
        for m in members
    ]
    lps = torch.stack([s[0] for s in steps])
    for combine, expected in (("prob", torch.log(lps.exp().mean(0))), ("logprob", torch.log_softmax(lps.mean(0), -1))):
        ens = Ensemble(members, combine)
        enc = ens.encode(batch.src, batch.src_len)
        lp, _, weights = ens.step(prev, enc, ens.initial_state(enc))
        torch.testing.assert_close(lp, expected, atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(lp.exp().sum(-1), torch.ones(4))
        # attention: the mean over the two members that have it, both in written source order
        torch.testing.assert_close(weights, (steps[0][2] + steps[1][2]) / 2)


def test_batched_ensemble_equals_one_by_one():
    ens = Ensemble([make_model(5), make_model(6, attention="local-m", score="dot")])
    srcs = sources()
    batched = translate_ids(ens, srcs, beam=3, batch_size=4, max_len_ratio=2.0, device="cpu", progress=False)
    for src, hyp in zip(srcs, batched):
        single = translate_ids(ens, [src], beam=3, batch_size=1, max_len_ratio=2.0, device="cpu", progress=False)[0]
        assert hyp.tokens == single.tokens and hyp.score == pytest.approx(single.score, abs=1e-4)
    batch = make_batch(srcs, None, list(range(4)))
    assert [h.tokens for h in greedy(ens, batch.src, batch.src_len)] == [
        h.tokens for h in beam_search(ens, batch.src, batch.src_len, beam=1)
    ]


def test_members_with_different_vocabularies_are_refused(tmp_path):
    a, b = tmp_path / "a.pt", tmp_path / "b.pt"
    write_model_file(a, make_model(7), config={"translate": {"beam": 2}})
    write_model_file(b, make_model(8), SRC_WORDS, TGT_WORDS[:-1] + ["other"], config={"translate": {"beam": 2}})
    model, _, _, _ = load_models([str(a)], "cpu")
    assert isinstance(model, Seq2Seq)
    ens, src_vocab, _, _ = load_models([str(a), str(a)], "cpu")
    assert isinstance(ens, Ensemble) and len(ens.models) == 2 and len(src_vocab) == len(Vocab(SRC_WORDS))
    with pytest.raises(ValueError, match=r"b\.pt: its target vocabulary differs from that of .*a\.pt"):
        load_models([str(a), str(b)], "cpu")
    with pytest.raises(ValueError, match="unknown ensemble combination 'max'"):
        Ensemble([make_model(9)], "max")


def test_members_of_different_runs_are_refused_through_the_command_line(tmp_path):
    """Two models of one vocabulary, trained by different presets (or on another corpus): `nmt translate` with both
    refuses in one line naming the odd file, exit 2, and writes no output."""
    import subprocess
    import sys

    run = {
        "preset": "tiny",
        "data": {"mirror": "/a", "tasks": {"en-de": {"corpus": "synth"}}},
        "prepare": {"max_len": 50},
        "translate": {"beam": 2, "max_len_ratio": 2.0, "batch_size": 8},
    }
    a, b, c = tmp_path / "a.pt", tmp_path / "b.pt", tmp_path / "c.pt"
    for path, seed, config in (
        (a, 7, run),
        (b, 8, {**run, "preset": "demo"}),
        (c, 9, {**run, "data": {**run["data"], "mirror": "/elsewhere"}}),
    ):
        write_model_file(path, make_model(seed), config=config)
    source = tmp_path / "src.txt"
    source.write_text("s1 s2 s3\n")

    def translate(*models):
        out = tmp_path / "hyp.txt"
        out.unlink(missing_ok=True)
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "nmt.cli",
                "translate",
                "--model",
                *map(str, models),
                "--src",
                str(source),
                "--out",
                str(out),
                "--device",
                "cpu",
            ],
            capture_output=True,
            text=True,
        )
        return done, out

    done, out = translate(a, b)
    assert done.returncode == 2 and not out.exists(), done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "b.pt: its preset differs from that of" in lines[0] and "a.pt" in lines[0], lines
    done, out = translate(a, c)  # where the data lives is no part of a run
    assert done.returncode == 0 and out.read_text().count("\n") == 1, done.stderr
