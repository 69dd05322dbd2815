"""unk replacement: dictionary from alignment links, replacement by the attended source word, file errors."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from nmt.decode.unk import (
    UnkError,
    best_translations,
    build_dictionary,
    count_links,
    read_dictionary,
    replace_file,
    replace_unks,
    write_dictionary,
)
from nmt.settings import ModelSettings

import required

ROOT = Path(__file__).resolve().parents[2]


def test_replacement_uses_the_dictionary_or_copies_the_word():
    src = "the president obama met merkel".split()
    hyp = "der <unk> <unk> traf <unk>".split()
    positions = [0, 1, 2, 3, 4]
    assert replace_unks(hyp, positions, src, {"president": "präsident"}) == "der präsident obama traf merkel".split()


def test_dictionary_keeps_the_most_frequent_link_of_the_union(tmp_path):
    src = ["a b", "a c", "a b"]
    tgt = ["x y", "z w", "x y"]
    fwd, rev = tmp_path / "f", tmp_path / "r"
    fwd.write_text("0-0 1-1\n0-0 1-1\n0-1\n")
    rev.write_text("0-0\n\n0-1 1-0\n")  # sentence 1's 0-0 is in both directions: counted once
    counts = count_links(src, tgt, [fwd, rev])
    assert counts["a"] == {"x": 1, "z": 1, "y": 1}
    assert counts["b"] == {"y": 1, "x": 1}
    best = best_translations(counts)
    assert best["a"] == ("x", 1) and best["b"] == ("x", 1) and best["c"] == ("w", 1)  # ties: alphabetical
    write_dictionary(tmp_path / "d.tsv", best)
    assert read_dictionary(tmp_path / "d.tsv") == {"a": "x", "b": "x", "c": "w"}


def test_malformed_links_and_dictionaries_name_file_and_line(tmp_path):
    bad = tmp_path / "links"
    bad.write_text("0-0\n0-x\n")
    with pytest.raises(UnkError, match=r"links:2: malformed alignment link '0-x'"):
        count_links(["a", "a"], ["x", "x"], [bad])
    bad.write_text("0-0\n0-3\n")
    with pytest.raises(UnkError, match=r"links:2: link 0-3 outside the sentence pair \(1 source, 1 target"):
        count_links(["a", "a"], ["x", "x"], [bad])
    d = tmp_path / "d.tsv"
    d.write_text("a\tx\t3\nb x 2\n")
    with pytest.raises(UnkError, match=r"d\.tsv:2: expected 'source<TAB>target<TAB>count or probability', got 'b x 2'"):
        read_dictionary(d)


def test_replace_file_counts_and_rejects_inconsistent_inputs(tmp_path):
    (tmp_path / "hyp").write_text("der <unk> geht\n\n<unk>\n")
    (tmp_path / "pos").write_text("0 1 2\n\n0\n")
    (tmp_path / "src").write_text("the man goes\nhello\nobama\n")
    write_dictionary(tmp_path / "d.tsv", {"man": ("mann", 4)})
    stats = replace_file(tmp_path / "hyp", tmp_path / "pos", tmp_path / "src", tmp_path / "d.tsv", tmp_path / "out")
    assert (tmp_path / "out").read_text() == "der mann geht\n\nobama\n"
    assert stats == {"unks": 2, "from_dictionary": 1, "copied": 1}
    (tmp_path / "pos").write_text("0 1\n\n0\n")
    with pytest.raises(UnkError, match=r"pos:1: 2 positions for 3 words of .*hyp:1"):
        replace_file(tmp_path / "hyp", tmp_path / "pos", tmp_path / "src", tmp_path / "d.tsv", tmp_path / "out2")
    (tmp_path / "pos").write_text("0 1 5\n\n0\n")
    with pytest.raises(UnkError, match=r"pos:1: a position lies outside the 3-word source sentence .*src:1"):
        replace_file(tmp_path / "hyp", tmp_path / "pos", tmp_path / "src", tmp_path / "d.tsv", tmp_path / "out2")
    assert not (tmp_path / "out2").exists()  # nothing half-written


def test_eflomal_dictionary_learns_a_word_for_word_code(tmp_path):
    """A corpus where each source word has one translation (and word order is kept): the dictionary built from
    eflomal's links recovers the code for every frequent word."""
    required.module("eflomal")
    import random

    rng = random.Random(0)
    code = {f"s{i}": f"T{i}" for i in range(30)}
    words = sorted(code)
    src_lines, tgt_lines = [], []
    for _ in range(600):
        sent = [rng.choice(words) for _ in range(rng.randint(3, 9))]
        src_lines.append(" ".join(sent))
        tgt_lines.append(" ".join(code[w] for w in sent))
    (tmp_path / "train.src").write_text("\n".join(src_lines) + "\n")
    (tmp_path / "train.tgt").write_text("\n".join(tgt_lines) + "\n")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "nmt.cli",
            "unk",
            "dict",
            "--src",
            str(tmp_path / "train.src"),
            "--tgt",
            str(tmp_path / "train.tgt"),
            "--out",
            str(tmp_path / "d.tsv"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["entries"] == 30
    assert read_dictionary(tmp_path / "d.tsv") == code


def test_dictionary_refuses_mismatched_corpora(tmp_path):
    (tmp_path / "a").write_text("x y\nz\n")
    (tmp_path / "b").write_text("X Y\n")
    with pytest.raises(UnkError, match=r"a has 2 lines but .*b has 1"):
        build_dictionary(tmp_path / "a", tmp_path / "b", tmp_path / "d.tsv")


def test_eflomal_runs_are_reproducible_with_a_seed(tmp_path):
    """eflomal has no seed option of its own; seeded through nmt.base.eflomal_runner, two runs give the same links."""
    required.module("eflomal")
    import random

    from nmt.base import eflomal_runner

    rng = random.Random(1)
    words = [f"w{i}" for i in range(60)]
    src = [" ".join(rng.choice(words) for _ in range(rng.randint(2, 12))) for _ in range(400)]
    tgt = [" ".join(reversed(line.upper().split())) for line in src]
    runs = []
    for i in range(2):
        (tmp_path / str(i)).mkdir()
        fwd, rev, seeded = eflomal_runner.align(src, tgt, tmp_path / str(i), seed=5)
        if not seeded:
            required.unavailable("no C compiler / not Linux: eflomal cannot be seeded here")
        runs.append((fwd.read_text(), rev.read_text()))
    assert runs[0] == runs[1]


# --------------------------------------------------------------------------- which step's attention an <unk> takes


class HandMadeAttention:
    """A stand-in model whose forced decoding returns fixed attention weights: step k (reading tgt_in[k]) puts
    all its weight on source word STEP_WORD[k], so the step that reads a word and the step that predicts it point
    at different source words."""

    STEP_WORD = [2, 0, 1, 3]  # <s>-step -> word 2, the step reading y_1 -> 0, reading y_2 -> 1, reading y_3 -> 3

    def __init__(self, score):
        import torch

        self.torch = torch
        self.settings = ModelSettings.read({"arch": "luong", "attention": "global", "score": score})
        self.attention = object()

    def __call__(self, src, src_len, tgt_in):
        steps = tgt_in.size(1)
        weights = self.torch.zeros(src.size(0), steps, src.size(1))
        for k in range(steps):
            weights[:, k, self.STEP_WORD[k]] = 1.0
        return None, weights


@pytest.mark.parametrize(
    "score, credit, expected",
    [
        ("general", None, ["een", "tweede", "u"]),  # content-based: the step that reads the word (footnote 14)
        ("location", None, ["drie", "een", "tweede"]),  # location-based: the step that predicts it
        ("general", "predicted", ["drie", "een", "tweede"]),  # unk.credit overrides the model's rule
        ("location", "read", ["een", "tweede", "u"]),
    ],
)
def test_unk_replacement_credits_attention_as_alignment_extraction_does(tmp_path, score, credit, expected):
    """Three <unk> in a row, source 'een twee drie u' (dictionary: twee -> tweede): each <unk> takes the source word
    that soft_alignments credits it with, by the model's footnote-14 rule unless `credit` says otherwise."""
    from nmt.align.extract import credited_positions, soft_alignments

    model = HandMadeAttention(score)
    source, target = [[7, 8, 9, 10]], [[3, 3, 3]]
    positions = credited_positions(model, source, target, credit=credit)
    matrix = soft_alignments(model, source, target, credit=credit)[0]
    assert positions == [[int(w) for w in matrix.argmax(axis=1)]]  # one rule for both
    replaced = replace_unks(["<unk>"] * 3, positions[0], "een twee drie u".split(), {"twee": "tweede"})
    assert replaced == expected


def test_predicted_crediting_gives_the_search_s_own_positions():
    """Forced decoding of a translation through the model repeats the search's steps: crediting every step to the
    word it predicts gives the positions the beam search recorded."""
    import torch

    from nmt.align.extract import credited_positions
    from nmt.decode.translate import beam_search

    from factories import make_model, model_config

    model = make_model(3, model_config(without=("window",), embed=16), src_vocab=30, tgt_vocab=30, init=None)
    sources = [[5, 6, 7, 8, 9], [10, 11, 12], [13, 14, 15, 16, 17, 18]]
    src = torch.tensor([s + [0] * (6 - len(s)) for s in sources])
    hyps = beam_search(model, src, torch.tensor([len(s) for s in sources]), beam=3)
    assert any(h.tokens for h in hyps)
    assert credited_positions(model, sources, [h.tokens for h in hyps], credit="predicted") == [
        h.positions for h in hyps
    ]


# Luong et al.'s dictionary (unk.dictionary: stanford): the task corpus' released one, in the Berkeley aligner's
# translation-table layout or one "source target [probability]" entry per line.
BERKELEY_TABLE = """# Berkeley aligner, stage 2
# Translation probabilities
Haus\tentropy 0.9\tnTrans 2\tsum 1.0
  house: 0.7
  home: 0.3
Kanzlerin\tentropy 0.1\tnTrans 2\tsum 1.0
  chancellor: 0.4
  Chancellor: 0.6
"""


def test_a_released_dictionary_keeps_each_source_words_most_probable_translation(tmp_path):
    from nmt.decode.unk import convert_release_dictionary, read_release_dictionary

    table = tmp_path / "dict.de-en"
    table.write_text(BERKELEY_TABLE, encoding="utf-8")
    assert read_release_dictionary(table) == {"Haus": ("house", 0.7), "Kanzlerin": ("Chancellor", 0.6)}
    plain = tmp_path / "plain"
    plain.write_text("Haus home 0.2\nHaus house 0.8\nBaum tree\nBaum wood\n", encoding="utf-8")
    assert {s: t for s, (t, _) in read_release_dictionary(plain).items()} == {"Haus": "house", "Baum": "tree"}
    out = tmp_path / "unk.dict"
    assert convert_release_dictionary(table, out)["entries"] == 2
    assert read_dictionary(out) == {"Haus": "house", "Kanzlerin": "Chancellor"}  # what nmt evaluate reads
    bad = tmp_path / "bad"
    bad.write_text("# Translation probabilities\nHaus\tentropy 0.9\n  house 0.7\n", encoding="utf-8")
    with pytest.raises(UnkError, match=r"bad:3: expected '  target: probability'"):
        read_release_dictionary(bad)


def test_the_paper_preset_takes_stanfords_dictionary_for_en_de_in_both_engines(tmp_path, monkeypatch, capsys):
    import yaml

    import nmt.data.corpus_registry as registry_module
    from nmt import config as cfg
    from nmt.cli import main
    from nmt.pipeline.jobs import build_jobs

    root = Path(__file__).resolve().parents[2]
    paper = cfg.load_params(root / "params.yaml", "paper")
    assert cfg.unk_dictionary_release(paper, "en-de") == {"corpus": "wmt14_en_de_stanford", "file": "dict.en-de"}
    assert cfg.unk_dictionary_release(paper, "de-en") is None  # no released De->En dictionary: eflomal
    assert cfg.unk_dictionary_release(cfg.load_params(root / "params.yaml", "demo"), "en-de") is None
    jobs = build_jobs(paper, root)
    assert jobs.find("unk_dictionary", {"pair": "en-de"}).shell(1, "") == (
        "nmt unk dict --params params.yaml --preset paper --task en-de --out results/paper/en-de/unk/dictionary.tsv"
    )
    assert (
        jobs.find("unk_dictionary", {"pair": "de-en"})
        .shell(1, "")
        .startswith("nmt unk dict --src data/paper/de-en/prepared/")
    )
    # the command fetches the release (here a hand-made one in its place) and converts it
    upstream = tmp_path / "dict.en-de"
    upstream.write_text(BERKELEY_TABLE, encoding="utf-8")
    registry = yaml.safe_load(registry_module.DEFAULT_REGISTRY.read_text(encoding="utf-8"))
    registry["wmt14_en_de_stanford"]["files"]["dict.en-de"]["url"] = upstream.as_uri()
    (tmp_path / "corpora.yaml").write_text(yaml.safe_dump(registry, allow_unicode=True), encoding="utf-8")
    monkeypatch.setattr(registry_module, "DEFAULT_REGISTRY", tmp_path / "corpora.yaml")
    monkeypatch.setenv("NMT_CHECKSUMS", str(tmp_path / "checksums.tsv"))
    monkeypatch.chdir(root)
    out = tmp_path / "unk.dict"
    main(
        [
            "unk",
            "dict",
            "--preset",
            "paper",
            "--task",
            "en-de",
            "--out",
            str(out),
            "--downloads",
            str(tmp_path / "downloads"),
        ]
    )
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["entries"] == 2
    assert read_dictionary(out) == {"Haus": "house", "Kanzlerin": "Chancellor"}


@pytest.mark.parametrize(
    "hyp, positions, replaced",
    [
        ("a <unk> c\n", "0 1 2\n", True),  # an attention model: its <unk> replaced
        ("a <unk> c\n", "\n", False),  # no attention, no positions: nothing to replace with
        ("\n", "\n", True),  # an attention model that said nothing: the replaced translation is the translation
    ],
)
def test_evaluate_scores_the_unk_replaced_translation_where_there_is_one(tmp_path, hyp, positions, replaced):
    from nmt.cli import main

    files = {"hyp": hyp, "pos": positions, "src": "x y z\n", "ref": "a b c\n", "dict.tsv": "y\tb\t1\n"}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    assert (
        main(
            [
                "evaluate",
                "--hyp",
                str(tmp_path / "hyp"),
                "--ref",
                str(tmp_path / "ref"),
                "--src",
                str(tmp_path / "src"),
                "--positions",
                str(tmp_path / "pos"),
                "--unk-dict",
                str(tmp_path / "dict.tsv"),
                "--unk-out",
                str(tmp_path / "unk"),
                "--lang",
                "de",
                "--out",
                str(tmp_path / "scores.json"),
                "--system",
                "s",
                "--testset",
                "test",
                "--preset-name",
                "p",
                "--pair",
                "en-de",
            ]
        )
        == 0
    )
    scores = json.loads((tmp_path / "scores.json").read_text())
    assert (scores["unk"] is not None) == replaced and (scores["bleu_tok_unk"] is not None) == replaced
    if replaced:
        assert (tmp_path / "unk").read_text() == hyp.replace("<unk>", "b")
        assert scores["by_length"]["unk"] is not None
