"""`nmt attention`: forced decoding of a reference gives the model's own attention weights, in written source
order, one row per reference word; line selection and errors name the file and line."""

import json

import pytest
import torch

from nmt.cli import main
from nmt.config import ConfigError
from nmt.data.batches import make_batch
from nmt.data.text import CorpusError
from nmt.data.vocab import BOS_ID, UNK_ID
from nmt.decode.attention_map import attention_map, forced_attention, links_map, select_line

from factories import TWO_LAYER_LUONG, make_model, random_ids, write_model_file

CONFIGS = [
    {"attention": "global", "score": "location", "input_feed": True, "reverse": True},
    {"attention": "global", "score": "general", "input_feed": False, "reverse": False},
    {"attention": "local-m", "score": "general", "input_feed": True, "reverse": True},
    {"attention": "local-p", "score": "general", "input_feed": True, "reverse": True},
]


def pair():
    gen = torch.Generator().manual_seed(5)
    (src,), (tgt,) = random_ids([7], 20, gen), random_ids([5], 15, gen)
    return src, tgt


@pytest.fixture
def corpus(tmp_path):
    """Four sentence pairs with 3, 7, 5 and 9 source words; line 3 has words outside the vocabularies."""
    src = ["s1 s2 s3", "s4 s5 s6 s7 s8 s9 s10", "s11 unknown s12 s13 s14", "s1 s2 s3 s4 s5 s6 s7 s8 s9"]
    tgt = ["t1 t2", "t3 t4 t5 t6", "t7 t8 mystery t9 t10 t1", "t2 t3 t4 t5 t6 t7 t8"]
    (tmp_path / "a.src").write_text("".join(s + "\n" for s in src))
    (tmp_path / "a.tgt").write_text("".join(t + "\n" for t in tgt))
    return tmp_path / "a.src", tmp_path / "a.tgt"


@pytest.mark.parametrize("overrides", CONFIGS)
def test_forced_weights_are_the_models_own_one_row_per_reference_word_credited_as_footnote_14(overrides):
    model = make_model(1, TWO_LAYER_LUONG, **overrides)
    src, tgt = pair()
    weights = forced_attention(model, src, tgt)
    assert weights.shape == (len(tgt), len(src))
    # The model's forward on this sentence alone (its last row, predicting </s>, is the one left out) ...
    batch = make_batch([src], [tgt], [0])
    with torch.no_grad():
        _, full = model(batch.src, batch.src_len, batch.tgt_in)
    # Footnote 14: content scores credit a word the step that reads it (row t+1 reads y_t), location scores the
    # step that predicts it (row t reads y_{t-1}, <s> first).
    first = 1 if overrides["score"] in ("dot", "general", "concat") else 0
    torch.testing.assert_close(weights, full[0, first : first + len(tgt)])
    # ... and step by step, through the decoding interface.
    with torch.no_grad():
        enc = model.encode(batch.src, batch.src_len)
        state = model.initial_state(enc)
        rows = []
        for prev in [BOS_ID] + tgt:
            _, state, step_weights = model.step(torch.tensor([prev]), enc, state)
            rows.append(step_weights[0])
        torch.testing.assert_close(weights, torch.stack(rows[first : first + len(tgt)]), atol=1e-5, rtol=1e-5)
    if overrides["attention"] == "global":
        torch.testing.assert_close(weights.sum(-1), torch.ones(len(tgt)))


@pytest.mark.parametrize("score", ["location", "general"])
def test_a_reversed_source_model_gives_weights_in_written_order(score):
    """A reverse model reading src sees what a forward model with the same parameters sees reading src
    backwards: the same weights, but its columns are given in written order, i.e. flipped."""
    reversed_model = make_model(2, TWO_LAYER_LUONG, score=score, reverse=True)
    forward_model = make_model(2, TWO_LAYER_LUONG, score=score, reverse=False)
    forward_model.load_state_dict(reversed_model.state_dict())
    src, tgt = pair()
    written = forced_attention(reversed_model, src, tgt)
    by_hand = forced_attention(forward_model, src[::-1], tgt).flip(-1)
    torch.testing.assert_close(written, by_hand)
    assert not torch.allclose(written, by_hand.flip(-1))  # the test can tell the two orders apart


def test_map_of_a_line_from_files(tmp_path, corpus):
    model = make_model(3, TWO_LAYER_LUONG, attention="local-p", score="general")
    path = write_model_file(tmp_path / "lp.pt", model)
    result = attention_map(path, *corpus, line=3, system="local-p")
    assert result["models"] == [str(path)] and result["system"] == "local-p" and result["line"] == 3
    assert result["attention"] == "local-p (general)"
    # words as written, unknown ones included; fed to the model as <unk>
    assert result["src"] == "s11 unknown s12 s13 s14".split()
    assert result["tgt"] == "t7 t8 mystery t9 t10 t1".split()
    expected = forced_attention(model, [15, UNK_ID, 16, 17, 18], [11, 12, UNK_ID, 13, 14, 5])
    assert torch.tensor(result["weights"]).shape == (6, 5)
    torch.testing.assert_close(torch.tensor(result["weights"]), expected)
    assert result == attention_map(path, *corpus, length=(4, 6), system="local-p")  # the first 4..6-word line


def test_an_ensemble_map_is_the_average_of_its_members(tmp_path, corpus):
    first = write_model_file(tmp_path / "lp.pt", make_model(3, TWO_LAYER_LUONG, attention="local-p", score="general"))
    second = write_model_file(tmp_path / "loc.pt", make_model(4, TWO_LAYER_LUONG, score="location"))
    one, two = (attention_map(path, *corpus, line=2) for path in (first, second))
    both = attention_map([first, second], *corpus, line=2, system="ens")
    torch.testing.assert_close(
        torch.tensor(both["weights"]), (torch.tensor(one["weights"]) + torch.tensor(two["weights"])) / 2
    )
    assert both["models"] == [str(first), str(second)] and both["credited"] == ["predicted", "read"]
    assert both["attention"] == "ensemble of 2: global (location), local-p (general)"


def test_an_aligners_links_are_drawn_as_a_matrix_of_the_same_sentence(tmp_path, corpus):
    links = tmp_path / "eflomal.links"
    links.write_text("0-0 1-1\n0-0 1-1 2?2 6-3\n0-0\n\n")
    result = links_map(links, *corpus, length=(6, 8), system="eflomal", label="eflomal -m 3")
    assert result["line"] == 2 and result["links"] == str(links) and result["credited"] is None
    assert result["src"] == "s4 s5 s6 s7 s8 s9 s10".split() and result["attention"] == "eflomal -m 3"
    assert result["weights"] == [
        [1, 0, 0, 0, 0, 0, 0],
        [0, 1, 0, 0, 0, 0, 0],
        [0, 0, 0.5, 0, 0, 0, 0],
        [0, 0, 0, 0, 0, 0, 1],
    ]
    links.write_text("0-0 1-1\n0-0 7-1\n0-0\n\n")  # source word 7 of a 7-word sentence
    with pytest.raises(CorpusError, match=r"eflomal\.links:2: link 7-1: source index 7 out of range"):
        links_map(links, *corpus, line=1)
    links.write_text("0-0\n")
    with pytest.raises(CorpusError, match=r"eflomal\.links: the file ends after 1 sentences"):
        links_map(links, *corpus, line=1)


def test_line_selection():
    lines = ["a b c", "a b c d e f g", "a b c d e", "a b c d e f g h i"]
    assert select_line(lines, "x.src", line=4) == 4
    assert select_line(lines, "x.src", length=(5, 6)) == 3
    assert select_line(lines, "x.src", length=(7, 7)) == 2
    assert select_line(lines, "x.src", length=(1, 100)) == 1
    for bad in (0, 5):
        with pytest.raises(CorpusError, match=rf"^x\.src:{bad}: no such line \(the file has 4 lines\)"):
            select_line(lines, "x.src", line=bad)
    with pytest.raises(CorpusError, match=r"^x\.src: no line has between 10 and 20 source words"):
        select_line(lines, "x.src", length=(10, 20))
    with pytest.raises(ConfigError, match=r"length range 6\.\.5"):
        select_line(lines, "x.src", length=(6, 5))


def test_errors_name_the_model_or_file_and_line(tmp_path, corpus):
    plain = write_model_file(tmp_path / "plain.pt", make_model(4, TWO_LAYER_LUONG, attention="none", input_feed=False))
    with pytest.raises(ConfigError, match=r"plain\.pt: this model has no attention"):
        attention_map(plain, *corpus, line=1)
    model = write_model_file(tmp_path / "global.pt", make_model(4, TWO_LAYER_LUONG))
    src, tgt = corpus
    with pytest.raises(CorpusError, match=r"a\.src:9: no such line"):
        attention_map(model, src, tgt, line=9)
    short = tmp_path / "short.tgt"
    short.write_text("t1 t2\nt3\n")
    with pytest.raises(CorpusError, match=r"a\.src:3: no partner line in .*short\.tgt"):
        attention_map(model, src, short, line=1)


def test_cli_writes_the_json_and_reports_errors(tmp_path, corpus, capsys):
    model = write_model_file(tmp_path / "loc.pt", make_model(5, TWO_LAYER_LUONG, score="location"))
    out = tmp_path / "maps" / "loc.json"
    src, tgt = corpus
    assert (
        main(
            [
                "attention",
                "--model",
                str(model),
                "--src",
                str(src),
                "--tgt",
                str(tgt),
                "--length",
                "6",
                "8",
                "--out",
                str(out),
                "--name",
                "global-location",
                "--threads",
                "1",
            ]
        )
        == 0
    )
    result = json.loads(out.read_text())
    assert set(result) == {"models", "system", "line", "src", "tgt", "weights", "attention", "credited"}
    assert result["line"] == 2 and result["system"] == "global-location"
    assert result["attention"] == "global (location)"
    assert len(result["weights"]) == 4 and all(len(row) == 7 for row in result["weights"])
    assert json.loads(capsys.readouterr().out)["line"] == 2
    assert (
        main(
            ["attention", "--model", str(model), "--src", str(src), "--tgt", str(tgt), "--line", "7", "--out", str(out)]
        )
        == 2
    )
    assert "a.src:7: no such line" in capsys.readouterr().err
