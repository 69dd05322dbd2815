"""Alignment files: Pharaoh, talp and RWTH blocks read into (source, target) 0-based links; every error names
file:line; writers round-trip; texts in latin-1."""

import re

import pytest

from nmt.data.alignments import (
    Alignment,
    check_count,
    check_lengths,
    flip,
    format_pharaoh,
    load_alignments,
    load_rwth,
    load_talp,
    read_parallel_sentences,
    read_pharaoh,
    read_rwth,
    read_sentences,
    read_talp,
    write_pharaoh,
    write_talp,
)
from nmt.data.text import CorpusError, read_lines

# One corpus of three sentence pairs in all three formats (first index = source):
#   pair 1: sure 0-0, 1-1; possible-only 1-2
#   pair 2: no links
#   pair 3: sure 2-0
EXPECTED = [
    Alignment({(0, 0), (1, 1)}, {(0, 0), (1, 1), (1, 2)}),
    Alignment(set(), set()),
    Alignment({(2, 0)}, {(2, 0)}),
]
PHARAOH = "0-0 1-1 1?2\n\n2-0\n"
TALP = "1-1 2-2 2p3 \n \n3-1 \n\n"  # RWTH layout: trailing blanks, a final empty line
RWTH = "SENT: 0\nS 0 0\nS 1 1\nP 1 2\n\nSENT: 1\n\nSENT: 2\nS 2 0\n\n"


def write(tmp_path, name, text, encoding="utf-8"):
    path = tmp_path / name
    path.write_bytes(text.encode(encoding))
    return path


# -- reading --------------------------------------------------------------------------------------------------
def test_the_three_formats_read_the_same_links(tmp_path):
    assert read_pharaoh(write(tmp_path, "a.pharaoh", PHARAOH)) == EXPECTED
    assert read_talp(write(tmp_path, "a.talp", TALP)) == EXPECTED  # 1-based -> 0-based
    assert read_rwth(write(tmp_path, "a.rwth", RWTH)) == EXPECTED


@pytest.mark.parametrize("fmt, text", [("pharaoh", PHARAOH), ("talp", TALP), ("rwth", RWTH)])
def test_reverse_swaps_every_link_to_target_first(tmp_path, fmt, text):
    path = write(tmp_path, f"a.{fmt}", text)
    swapped = load_alignments(path, fmt, reverse=True).sentences
    assert swapped == flip(EXPECTED)
    assert swapped[0].possible == {(0, 0), (1, 1), (2, 1)}


def test_crlf_line_endings_read_the_same_links_and_a_lone_cr_is_an_error(tmp_path):
    crlf = tmp_path / "crlf.pharaoh"
    crlf.write_bytes(PHARAOH.replace("\n", "\r\n").encode())
    assert read_pharaoh(crlf) == EXPECTED
    cr = tmp_path / "cr.pharaoh"
    cr.write_bytes(PHARAOH.replace("\n", "\r").encode())
    with pytest.raises(CorpusError, match=r"cr\.pharaoh:1: carriage return inside the line"):
        read_pharaoh(cr)


def test_talp_drops_only_empty_lines_at_the_end(tmp_path):
    # a blank (whitespace) line is a pair without links, wherever it is; empty lines at the end are not pairs
    assert read_talp(write(tmp_path, "a.talp", "1-1 \n \n\n\n")) == [
        Alignment({(0, 0)}, {(0, 0)}),
        Alignment(set(), set()),
    ]
    # Pharaoh: every line counts (aligners write an empty line for a pair without links)
    assert len(read_pharaoh(write(tmp_path, "a.pharaoh", "0-0\n\n"))) == 2


def test_rwth_records_where_each_sentence_starts(tmp_path):
    loaded = load_rwth(write(tmp_path, "a.rwth", RWTH))
    assert loaded.lines == [1, 6, 8]
    assert loaded.spell((1, 2)) == "1 2"
    assert load_talp(write(tmp_path, "a.talp", TALP), reverse=True).spell((2, 1)) == "2-3"


# -- reading errors: each names file:line -------------------------------------------------------------------
@pytest.mark.parametrize(
    "fmt, text, line, message",
    [
        ("pharaoh", "0-0\n0-x\n", 2, "malformed alignment link '0-x' (expected i-j for sure or i?j"),
        ("pharaoh", "0-0 1p1\n", 1, "malformed alignment link '1p1'"),  # a talp token in a Pharaoh file
        ("pharaoh", "1--2\n", 1, "malformed alignment link '1--2'"),  # negative index
        (
            "talp",
            "1-1\n2?2\n",
            2,
            "malformed alignment link '2?2' (expected i-j for sure or ipj for possible, 1-based)",
        ),
        ("talp", "1-1 0-3\n", 1, "alignment link '0-3' has index 0, but talp indices are 1-based"),
        ("talp", "1-1 1.5-2\n", 1, "malformed alignment link '1.5-2'"),  # non-integer
        ("rwth", "SENT: 0\nS 1 x\n", 2, "non-integer index in 'S 1 x'"),
        ("rwth", "SENT: 0\nS 21 -100\n", 2, "negative index in 'S 21 -100'"),
        ("rwth", "SENT: 0\nQ 1 1\n", 2, "malformed line 'Q 1 1'"),
        ("rwth", "SENT: 0\nS 1 1 1\n", 2, "malformed line 'S 1 1 1'"),
        ("rwth", "S 1 1\n", 1, "link 'S 1 1' before the first 'SENT: 0' line"),
        ("rwth", "SENT: 0\n\nSENT: 2\n", 3, "expected 'SENT: 1'"),  # a gap would shift every sentence
    ],
)
def test_reading_errors_name_file_and_line(tmp_path, fmt, text, line, message):
    path = write(tmp_path, "links", text)
    with pytest.raises(CorpusError) as err:
        load_alignments(path, fmt)
    assert err.value.line == line
    assert str(err.value).startswith(f"{path}:{line}: ")
    assert message in str(err.value)


def test_rwth_negative_index_can_be_skipped_explicitly(tmp_path):
    path = write(tmp_path, "links", "SENT: 0\nS 0 0\nS 21 -100\nP 1 1\n")
    loaded = load_alignments(path, "rwth", skip_negative=True)
    assert loaded.sentences == [Alignment({(0, 0)}, {(0, 0), (1, 1)})]
    assert loaded.skipped == [f"{path}:3: skipped 'S 21 -100' (negative index)"]


def test_invalid_encoding_of_an_alignment_file(tmp_path):
    path = tmp_path / "links"
    path.write_bytes(b"0-0\n1-1 \xff\n")
    with pytest.raises(CorpusError, match=r"links:2: invalid UTF-8 \(byte 0xff at column 5\)"):
        read_pharaoh(path)


# -- writing and round trips ------------------------------------------------------------------------------------
def test_write_pharaoh_sorts_and_marks_possible_links(tmp_path):
    out = tmp_path / "out.pharaoh"
    write_pharaoh(out, [EXPECTED[0], set(), {(3, 1), (0, 2)}])  # plain link sets: all sure
    assert out.read_text() == "0-0 1-1 1?2\n\n0-2 3-1\n"
    write_pharaoh(out, EXPECTED, sure_only=True)
    assert out.read_text() == "0-0 1-1\n\n2-0\n"
    assert format_pharaoh(EXPECTED[0], reverse=True) == "0-0 1-1 2?1"


def test_write_pharaoh_is_atomic(tmp_path):
    out = tmp_path / "out.pharaoh"
    out.write_text("old\n")

    def broken():
        yield {(0, 0)}
        raise RuntimeError("aligner died")

    with pytest.raises(RuntimeError):
        write_pharaoh(out, broken())
    assert out.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.pharaoh"]  # no temporary file left behind


def test_round_trips_between_the_formats(tmp_path):
    rwth = read_rwth(write(tmp_path, "a.rwth", RWTH))
    write_talp(tmp_path / "b.talp", rwth)
    assert (tmp_path / "b.talp").read_text() == "1-1 2-2 2p3 \n \n3-1 \n"
    talp = read_talp(tmp_path / "b.talp")
    write_pharaoh(tmp_path / "c.pharaoh", talp)
    assert read_pharaoh(tmp_path / "c.pharaoh") == talp == rwth == EXPECTED
    # reversed on the way out, reversed on the way in: the same links
    write_talp(tmp_path / "d.talp", EXPECTED, reverse=True)
    assert read_talp(tmp_path / "d.talp", reverse=True) == EXPECTED


def test_talp_round_trip_keeps_a_last_pair_without_links(tmp_path):
    alignments = [Alignment({(0, 0)}, {(0, 0)}), Alignment(set(), set())]
    write_talp(tmp_path / "a.talp", alignments)
    assert read_talp(tmp_path / "a.talp") == alignments


# -- checks against the corpus --------------------------------------------------------------------------------
def test_links_outside_the_sentence_pair(tmp_path):
    path = write(tmp_path, "a.talp", TALP)
    loaded = load_talp(path)
    check_lengths(loaded.sentences, [2, 1, 3], [3, 1, 1], path)  # fits
    with pytest.raises(CorpusError) as err:
        check_lengths(loaded.sentences, [2, 1, 2], [3, 1, 1], path, lines=loaded.lines, spell=loaded.spell)
    assert str(err.value) == (
        f"{path}:3: link 2-0: source index 2 out of range (2 source words) (written '3-1' in the file)"
    )
    with pytest.raises(
        CorpusError, match=re.escape(f"{path}:1: link 1-2: target index 2 out of range (2 target words)")
    ):
        check_lengths(loaded.sentences, [2, 1, 3], [2, 1, 1], path)


def test_rwth_range_errors_point_at_the_block(tmp_path):
    loaded = load_rwth(write(tmp_path, "a.rwth", RWTH))
    with pytest.raises(CorpusError) as err:
        check_lengths(loaded.sentences, [2, 1, 2], [3, 1, 1], loaded.path, lines=loaded.lines)
    assert err.value.line == 8  # the 'SENT: 2' line


def test_sentence_count_mismatch(tmp_path):
    path = write(tmp_path, "a.pharaoh", PHARAOH)
    with pytest.raises(CorpusError) as err:
        check_lengths(read_pharaoh(path), [2, 2], [3, 3], path)
    assert str(err.value) == (
        f"{path}:3: sentence 3 of alignment links has no partner: the file has 3 sentences "
        "of links for 2 sentence pairs"
    )
    with pytest.raises(
        CorpusError,
        match=re.escape(f"{path}: the file ends after 3 sentences of alignment links, but there are 4 sentence pairs"),
    ):
        check_count(read_pharaoh(path), 4, path)


# -- texts in other encodings ---------------------------------------------------------------------------------
def test_latin1_text_with_the_rwth_line_rules(tmp_path):
    path = write(tmp_path, "de", "daß es so ist\nja\n\n", encoding="latin-1")
    assert read_sentences(path, encoding="latin-1") == ["daß es so ist", "ja"]  # trailing blank line dropped
    with pytest.raises(CorpusError) as err:  # the same bytes are not UTF-8
        read_sentences(path)
    assert str(err.value) == f"{path}:1: invalid UTF-8 (byte 0xdf at column 3)"
    with pytest.raises(CorpusError, match=r":1: invalid ascii \(byte 0xdf at column 3\)"):
        read_lines(path, encoding="ascii")


def test_read_sentences_refuses_an_empty_line_before_the_end(tmp_path):
    path = write(tmp_path, "en", "a\n\nb\n\n")
    with pytest.raises(CorpusError, match=re.escape(f"{path}:2: empty line")):
        read_sentences(path)


def test_parallel_sentence_counts_must_agree(tmp_path):
    src = write(tmp_path, "de", "a\nb\nc\n\n")
    tgt = write(tmp_path, "en", "a\nb\n")
    with pytest.raises(CorpusError, match=re.escape(f"{src}:3: no partner line in {tgt}")):
        read_parallel_sentences(src, tgt)
