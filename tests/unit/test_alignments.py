"""Gold alignments in Pharaoh format: sure/possible links, strict parsing, links -> heat-map matrix."""

import re

import numpy as np
import pytest

from nmt.data.alignments import links_to_matrix, read_pharaoh


def test_sure_and_possible_links(tmp_path):
    path = tmp_path / "align.gold"
    path.write_text("0-0 1?2 1-1 2?1\n\n3-0 0?0\n")
    first, empty, third = read_pharaoh(path)
    assert first.sure == {(0, 0), (1, 1)}
    assert first.possible == {(0, 0), (1, 1), (1, 2), (2, 1)}  # every sure link is possible too
    assert empty.sure == set() and empty.possible == set()  # an empty line: no links
    assert third.sure == {(3, 0)} and third.possible == {(3, 0), (0, 0)}
    sure, possible = first  # a plain pair too
    assert sure <= possible


def test_empty_file_has_no_sentences(tmp_path):
    path = tmp_path / "align.gold"
    path.write_text("")
    assert read_pharaoh(path) == []


@pytest.mark.parametrize("token", ["1-", "a-b", "1-2-3", "-1-2", "1:2", "1?", "?2", "1--2"])
def test_malformed_links_name_file_line_and_token(tmp_path, token):
    path = tmp_path / "align.gold"
    path.write_text(f"0-0\n1-1 {token} 2-2\n")
    with pytest.raises(ValueError, match=rf"align\.gold:2: malformed alignment link '{re.escape(token)}'") as err:
        read_pharaoh(path)
    assert err.value.line == 2


def test_links_to_matrix():
    matrix = links_to_matrix({(0, 0), (2, 1)}, {(0, 0), (2, 1), (1, 1), (1, 2)}, src_len=3, tgt_len=3)
    assert matrix.shape == (3, 3)  # target words x source words
    np.testing.assert_array_equal(matrix, [[1.0, 0.0, 0.0], [0.0, 0.5, 1.0], [0.0, 0.5, 0.0]])


@pytest.mark.parametrize(
    "sure, possible, message",
    [
        ({(3, 0)}, {(3, 0)}, r"link 3-0: source index 3 out of range \(3 source words\)"),
        (set(), {(0, 2)}, r"link 0-2: target index 2 out of range \(2 target words\)"),
    ],
)
def test_links_outside_the_sentence_pair_are_refused(sure, possible, message):
    with pytest.raises(ValueError, match=message):
        links_to_matrix(sure, possible, src_len=3, tgt_len=2)
