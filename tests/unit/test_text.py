"""Tests for nmt.data.text (corpus reading/writing) and nmt.data.tokenize."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nmt.base.atomic import write_text_atomic
from nmt.data.text import CorpusError, read_lines, read_parallel, write_lines_atomic
from nmt.data.tokenize import detokenize, tokenize

import required

SHARED_DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
MULTI30K = SHARED_DATA / "multi30k"


# ----------------------------------------------------------------------------------------------- read_lines
def test_read_lines_basic(tmp_path):
    p = tmp_path / "a.txt"
    p.write_bytes("eins\nzwei drei\r\nvier ü\n".encode("utf-8"))
    assert read_lines(p) == ["eins", "zwei drei", "vier ü"]


def test_read_lines_last_line_without_newline(tmp_path):
    p = tmp_path / "a.txt"
    p.write_bytes(b"one\ntwo")
    assert read_lines(p) == ["one", "two"]


def test_read_lines_empty_file(tmp_path):
    p = tmp_path / "a.txt"
    p.write_bytes(b"")
    assert read_lines(p) == []


def test_read_lines_only_splits_on_newline(tmp_path):
    # U+2028 and U+0085 are line breaks for str.splitlines but belong inside the sentence here.
    p = tmp_path / "a.txt"
    p.write_text("a\u2028b\x85c\nd\n", encoding="utf-8")
    assert read_lines(p) == ["a\u2028b\x85c", "d"]


def test_read_lines_drops_bom(tmp_path):
    p = tmp_path / "a.txt"
    p.write_bytes(b"\xef\xbb\xbfhello\n")
    assert read_lines(p) == ["hello"]


def test_invalid_utf8_names_file_line_and_byte(tmp_path):
    p = tmp_path / "broken.de"
    p.write_bytes(b"gut\nauch gut\nschl\xfcssel kaputt\nok\n")  # latin-1 u-umlaut on line 3
    with pytest.raises(CorpusError) as info:
        read_lines(p)
    msg = str(info.value)
    assert "broken.de" in msg
    assert ":3:" in msg
    assert "UTF-8" in msg
    assert "0xfc" in msg
    assert "column 5" in msg
    assert info.value.line == 3


def test_invalid_utf8_column_counts_characters(tmp_path):
    p = tmp_path / "x.txt"
    p.write_bytes("äö".encode("utf-8") + b"\xff\n")
    with pytest.raises(CorpusError, match=r"x\.txt:1: invalid UTF-8 \(byte 0xff at column 3\)"):
        read_lines(p)


def test_empty_line_is_named(tmp_path):
    p = tmp_path / "train.en"
    p.write_text("a\nb\n\nd\n", encoding="utf-8")
    with pytest.raises(CorpusError) as info:
        read_lines(p)
    assert str(info.value) == f"{p}:3: empty line"


def test_whitespace_only_line_is_empty(tmp_path):
    p = tmp_path / "train.en"
    p.write_text("a\n  \t\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=r"train\.en:2: empty line"):
        read_lines(p)


def test_empty_lines_allowed_on_request(tmp_path):
    p = tmp_path / "hyp.txt"
    p.write_text("a\n\nc\n\n", encoding="utf-8")
    assert read_lines(p, allow_empty=True) == ["a", "", "c", ""]


def test_missing_file(tmp_path):
    p = tmp_path / "nope.txt"
    with pytest.raises(CorpusError) as info:
        read_lines(p)
    assert str(info.value) == f"{p}: no such file"
    assert isinstance(info.value, ValueError)


def test_directory_is_not_a_file(tmp_path):
    with pytest.raises(CorpusError, match="is a directory"):
        read_lines(tmp_path)


# -------------------------------------------------------------------------------------------- read_parallel
def test_read_parallel_ok(tmp_path):
    s, t = tmp_path / "x.en", tmp_path / "x.de"
    s.write_text("a\nb\n", encoding="utf-8")
    t.write_text("c\nd\n", encoding="utf-8")
    assert read_parallel(s, t) == (["a", "b"], ["c", "d"])


@pytest.mark.parametrize("n_src,n_tgt", [(3, 5), (5, 3)])
def test_read_parallel_mismatch_names_both_files_and_counts(tmp_path, n_src, n_tgt):
    s, t = tmp_path / "test.src", tmp_path / "test.tgt"
    s.write_text("".join(f"s{i}\n" for i in range(n_src)), encoding="utf-8")
    t.write_text("".join(f"t{i}\n" for i in range(n_tgt)), encoding="utf-8")
    with pytest.raises(CorpusError) as info:
        read_parallel(s, t)
    msg = str(info.value)
    assert str(s) in msg and str(t) in msg
    assert f"{n_src} lines" in msg and f"{n_tgt} lines" in msg
    assert ":4:" in msg  # line 4 is the first one without a partner
    assert info.value.line == 4


def test_read_parallel_errors_inside_one_file_name_it(tmp_path):
    s, t = tmp_path / "ok.src", tmp_path / "bad.tgt"
    s.write_text("a\nb\n", encoding="utf-8")
    t.write_text("a\n\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=r"bad\.tgt:2: empty line"):
        read_parallel(s, t)
    assert read_parallel(s, t, allow_empty_tgt=True) == (["a", "b"], ["a", ""])


# -------------------------------------------------------------------------------------- write_lines_atomic
def test_write_lines_atomic_roundtrip(tmp_path):
    p = tmp_path / "sub" / "out.txt"
    write_lines_atomic(p, ["ä b", "", "c"])
    assert p.read_bytes() == "ä b\n\nc\n".encode("utf-8")
    assert read_lines(p, allow_empty=True) == ["ä b", "", "c"]


def test_write_lines_atomic_keeps_old_file_when_iterable_raises(tmp_path):
    p = tmp_path / "out.txt"
    p.write_text("old 1\nold 2\n", encoding="utf-8")

    def lines():
        yield "new 1"
        yield "new 2"
        raise RuntimeError("decoder crashed")

    with pytest.raises(RuntimeError, match="decoder crashed"):
        write_lines_atomic(p, lines())
    assert p.read_text(encoding="utf-8") == "old 1\nold 2\n"
    assert os.listdir(tmp_path) == ["out.txt"]  # no temporary file left behind


def test_write_lines_atomic_no_file_when_first_write_fails(tmp_path):
    p = tmp_path / "out.txt"

    def lines():
        raise RuntimeError("boom")
        yield "never"

    with pytest.raises(RuntimeError):
        write_lines_atomic(p, lines())
    assert os.listdir(tmp_path) == []


def test_write_lines_atomic_rejects_embedded_newline(tmp_path):
    p = tmp_path / "out.txt"
    p.write_text("old\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=r"out\.txt:2: line contains a line break"):
        write_lines_atomic(p, ["fine", "not\nfine"])
    assert p.read_text(encoding="utf-8") == "old\n"


def test_write_lines_atomic_keeps_permissions(tmp_path):
    p = tmp_path / "out.txt"
    p.write_text("old\n", encoding="utf-8")
    os.chmod(p, 0o640)
    write_lines_atomic(p, ["new"])
    assert (p.stat().st_mode & 0o777) == 0o640
    q = tmp_path / "fresh.txt"
    write_text_atomic(q, "x\n")
    umask = os.umask(0)
    os.umask(umask)
    assert (q.stat().st_mode & 0o777) == 0o666 & ~umask


# ------------------------------------------------------------------------------------------------ tokenize
def test_tokenize_unescaped_by_default():
    out = tokenize(['He said "A & B" isn\'t bad.'], "en")
    assert out == ['He said " A & B " isn \'t bad .']
    esc = tokenize(['He said "A & B" isn\'t bad.'], "en", escape=True)
    assert esc == ["He said &quot; A &amp; B &quot; isn &apos;t bad ."]


def test_tokenize_aggressive_dash_and_detokenize_roundtrip():
    assert tokenize(["a 3-4 ratio."], "en", aggressive_dash_splits=True) == ["a 3 @-@ 4 ratio ."]
    assert tokenize(["a 3-4 ratio."], "en") == ["a 3-4 ratio ."]
    assert detokenize(["a 3 @-@ 4 ratio ."], "en") == ["a 3-4 ratio."]
    # Round trip with the same language's rules (the English apostrophe rule is language-specific).
    texts = {
        "en": ['He said "A & B" isn\'t bad.', "It costs $5 (approx.)."],
        "de": ['Er sagte: "A & B" ist z.B. gut, oder?', "Das kostet 5 Euro (ca.)."],
    }
    for lang, text in texts.items():
        for esc in (False, True):
            assert detokenize(tokenize(text, lang, escape=esc), lang) == text


def test_tokenize_empty_and_nonbreaking_prefix():
    assert tokenize([""], "en") == [""]
    assert tokenize(["Mr. Smith left."], "en") == ["Mr. Smith left ."]
    assert tokenize(["Das ist z.B. gut."], "de") == ["Das ist z.B. gut ."]


def test_tokenizer_objects_are_cached():
    from nmt.data import tokenize as mod

    tokenize(["x"], "en")
    assert mod._tokenizer("en") is mod._tokenizer("en")
    assert mod._detokenizer("de") is mod._detokenizer("de")


# ------------------------------------------------------------------------------------------ real data (opt.)
def _need(*paths: Path) -> None:
    for p in paths:
        if not p.is_file():
            required.unavailable(f"shared data not available: {p}")


@pytest.mark.parametrize("lang", ["en", "de"])
def test_tokenize_matches_multi30k_tok(lang):
    """The Multi30k tok/ files were made by task1-tokenize.sh: lowercase.perl | normalize-punctuation.perl -l L |
    tokenizer.perl -l L (default escaping, no -a). Lowercasing *before* tokenising matters: e.g. German 'Bart.'
    is a non-breaking prefix (so 'seinen Bart.' keeps its period) but 'bart.' is not. We do not run the
    punctuation normaliser; for test_2016_flickr it changes exactly one English line (line 383,
    'the number "93".' -> '"93."', the en rule that moves a period inside closing quotes), every other line
    matches exactly."""
    raw_path = MULTI30K / "raw" / f"test_2016_flickr.{lang}"
    tok_path = MULTI30K / "tok" / f"test_2016_flickr.lc.norm.tok.{lang}"
    _need(raw_path, tok_path)
    raw, ref = read_parallel(raw_path, tok_path)
    ours = tokenize([line.lower() for line in raw], lang, escape=True)
    assert ours[0] == ref[0]
    if lang == "en":
        assert ours[0] == "a man in an orange hat starring at something ."
    differing = [i + 1 for i, (a, b) in enumerate(zip(ours, ref)) if a != b]
    assert differing == ([383] if lang == "en" else [])
    # Sentence 1 in the project's own (unescaped, cased) form: same tokens up to case.
    assert [t.lower() for t in tokenize(raw[:1], lang)[0].split()] == ref[0].split()
