"""Tests for the synthetic demo corpus generator (nmt.data.synth)."""

import json
import os
import re
from pathlib import Path

import pytest

from nmt.data import synth

SPLITS = ("train", "dev", "test", "align")
FILES = [f"{s}.{side}" for s in SPLITS for side in ("src", "tgt")] + ["align.gold", "stats.json"]
SIZES = dict(n_train=2000, n_dev=150, n_test=150, n_align=120)
LINK = re.compile(r"^(\d+)([-?])(\d+)$")


def _read(p: Path) -> list[str]:
    text = p.read_text(encoding="utf-8")
    assert text.endswith("\n")
    return text[:-1].split("\n")


def _links(line: str) -> list[tuple[int, int, bool]]:
    out = []
    for tok in line.split():
        m = LINK.match(tok)
        assert m, f"bad link {tok!r}"
        out.append((int(m.group(1)), int(m.group(3)), m.group(2) == "-"))
    return out


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    d = tmp_path_factory.mktemp("synth")
    summary = synth.generate(d, seed=1, **SIZES)
    return d, summary


def test_same_seed_identical_bytes(corpus, tmp_path):
    d, summary = corpus
    summary2 = synth.generate(tmp_path / "again", seed=1, **SIZES)
    assert summary2 == summary
    for name in FILES:
        assert (d / name).read_bytes() == (tmp_path / "again" / name).read_bytes(), name


def test_different_seed_differs(corpus, tmp_path):
    d, _ = corpus
    synth.generate(tmp_path, seed=2, **SIZES)
    for name in ("train.src", "train.tgt", "align.gold"):
        assert (d / name).read_bytes() != (tmp_path / name).read_bytes(), name


def test_line_counts_and_summary(corpus):
    d, summary = corpus
    want = {"train": SIZES["n_train"], "dev": SIZES["n_dev"], "test": SIZES["n_test"], "align": SIZES["n_align"]}
    assert json.loads((d / "stats.json").read_text()) == summary
    assert summary["seed"] == 1 and summary["max_len"] == 50
    for split in SPLITS:
        src, tgt = _read(d / f"{split}.src"), _read(d / f"{split}.tgt")
        assert len(src) == len(tgt) == want[split]
        st = summary["splits"][split]
        assert st["sentences"] == want[split]
        assert st["src_tokens"] == sum(len(s.split()) for s in src)
        assert st["tgt_tokens"] == sum(len(t.split()) for t in tgt)
    assert len(_read(d / "align.gold")) == want["align"]
    assert 100 <= summary["src_vocab"] <= 300 and 100 <= summary["tgt_vocab"] <= 300
    # no stray temp files
    assert sorted(p.name for p in d.iterdir()) == sorted(FILES)


def test_lengths_within_bounds_on_both_sides(tmp_path):
    synth.generate(tmp_path, seed=3, n_train=500, n_dev=50, n_test=50, n_align=50, max_len=20, min_len=5)
    for split in SPLITS:
        for side in ("src", "tgt"):
            for line in _read(tmp_path / f"{split}.{side}"):
                assert line == line.strip() and "  " not in line
                assert 5 <= len(line.split()) <= 20, (split, side, line)


def test_length_distribution_has_long_sentences(corpus):
    d, _ = corpus
    lens = [len(s.split()) for s in _read(d / "train.src")]
    assert min(lens) >= 3 and max(lens) <= 50
    assert max(lens) >= 45
    assert sum(n >= 30 for n in lens) / len(lens) > 0.15
    assert sum(n < 15 for n in lens) / len(lens) > 0.2


def test_alignment_links_in_range_and_cover_target(corpus):
    d, _ = corpus
    lex = synth.build_lexicon(1)
    src, tgt, gold = _read(d / "align.src"), _read(d / "align.tgt"), _read(d / "align.gold")
    for s, t, g in zip(src, tgt, gold):
        s, t, links = s.split(), t.split(), _links(g)
        assert len(set((i, j) for i, j, _ in links)) == len(links)  # no duplicate links
        for i, j, _ in links:
            assert 0 <= i < len(s) and 0 <= j < len(t)
        # every target token is aligned to something (all of them come from a non-dropped word)
        assert {j for _, j, _ in links} == set(range(len(t)))
        # exactly the dropped source words are unaligned
        aligned_src = {i for i, _, _ in links}
        for i, w in enumerate(s):
            assert (i not in aligned_src) == (w in lex.dropped), (w, s)
        # an aligned source word has exactly one sure link, except the second word of a two-word
        # conjunction (many-to-one), which only has a possible link
        second = {b for _, b in lex.conj2}
        for i in aligned_src:
            n_sure = sum(ok for k, _, ok in links if k == i)
            assert n_sure == (0 if s[i] in second else 1), (i, s[i])


def test_reordering_happens(corpus):
    d, _ = corpus
    gold = _read(d / "align.gold")
    crossing = 0
    long_jump = 0
    for g in gold:
        sure = sorted((i, j) for i, j, ok in _links(g) if ok)
        if any(b[1] < a[1] for a, b in zip(sure, sure[1:])):
            crossing += 1
        if any(abs(i - j) >= 5 for i, j in sure):
            long_jump += 1
    assert crossing / len(gold) > 0.5
    assert long_jump / len(gold) > 0.3


def test_one_to_many_many_to_one_and_dropped_occur(corpus):
    d, _ = corpus
    lex = synth.build_lexicon(1)
    src, gold = _read(d / "align.src"), _read(d / "align.gold")
    n_1tom = n_mto1 = n_dropped = n_possible = 0
    for s, g in zip(src, gold):
        s, links = s.split(), _links(g)
        per_src, per_tgt = {}, {}
        for i, j, _ in links:
            per_src.setdefault(i, set()).add(j)
            per_tgt.setdefault(j, set()).add(i)
        n_1tom += sum(len(js) > 1 for js in per_src.values())
        n_mto1 += sum(len(is_) > 1 for is_ in per_tgt.values())
        n_dropped += sum(w in lex.dropped for w in s)
        n_possible += sum(not ok for _, _, ok in links)
    assert n_1tom > 20 and n_mto1 > 5 and n_dropped > 20 and n_possible > 20
    # the lexicon has all kinds, and source/target forms are disjoint
    assert lex.dropped and lex.one_to_many and lex.many_to_one
    assert not lex.src_words & lex.tgt_words
    tokens = {w for s in _read(d / "train.src") for w in s.split()}
    assert lex.dropped <= tokens and lex.one_to_many <= tokens and lex.many_to_one <= tokens


def test_splits_disjoint_from_train(corpus):
    d, _ = corpus
    train = set(_read(d / "train.src"))
    seen = set()
    for split in ("dev", "test", "align"):
        lines = _read(d / f"{split}.src")
        assert not train & set(lines), split
        assert len(set(lines)) == len(lines), split
        assert not seen & set(lines), split
        seen |= set(lines)


def test_target_is_a_function_of_source(corpus):
    d, _ = corpus
    m = {}
    for s, t in zip(_read(d / "train.src"), _read(d / "train.tgt")):
        assert m.setdefault(s, t) == t


def test_describe():
    text = synth.describe()
    assert isinstance(text, str) and 100 < len(text) < 1200


def test_atomic_write_leaves_no_partial_file(tmp_path, monkeypatch):
    real_replace = os.replace  # the rename of nmt.base.atomic's writes
    calls = []

    def failing_replace(a, b):
        calls.append(b)
        if len(calls) == 3:
            raise OSError("simulated crash")
        return real_replace(a, b)

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError):
        synth.generate(tmp_path, seed=1, n_train=50, n_dev=5, n_test=5, n_align=5)
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["train.src", "train.tgt"]  # completed files only, no temp files, no stats.json


def test_empty_split_and_bad_lengths(tmp_path):
    summary = synth.generate(tmp_path, seed=1, n_train=20, n_dev=0, n_test=0, n_align=0)
    assert summary["splits"]["dev"]["sentences"] == 0
    assert (tmp_path / "align.gold").read_text() == ""
    with pytest.raises(ValueError):
        synth.generate(tmp_path, seed=1, n_train=1, max_len=2, min_len=3)


def test_second_test_set_leaves_the_other_splits_unchanged(corpus, tmp_path):
    d, _ = corpus
    summary = synth.generate(tmp_path, seed=1, n_test2=40, **SIZES)
    for name in FILES[:-1]:  # every file but stats.json is byte-identical
        assert (tmp_path / name).read_bytes() == (d / name).read_bytes(), name
    test2 = _read(tmp_path / "test2.src")
    assert summary["splits"]["test2"]["sentences"] == len(test2) == 40
    others = {line for s in ("train", "dev", "test", "align") for line in _read(d / f"{s}.src")}
    assert not set(test2) & others and len(set(test2)) == 40


def test_swap_is_the_same_pairs_the_other_way_round(corpus, tmp_path):
    d, _ = corpus
    synth.generate(tmp_path, seed=1, swap=True, **SIZES)
    for split in SPLITS:
        assert _read(tmp_path / f"{split}.src") == _read(d / f"{split}.tgt")
        assert _read(tmp_path / f"{split}.tgt") == _read(d / f"{split}.src")
    for fwd, rev in zip(_read(d / "align.gold"), _read(tmp_path / "align.gold")):
        assert sorted((j, i, sure) for i, j, sure in _links(fwd)) == sorted(_links(rev))
