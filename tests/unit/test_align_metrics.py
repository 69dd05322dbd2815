"""AER, precision, recall and SAER against hand-computed values; `nmt align score`, on the RWTH gold set when
../shared/data has it."""

import json
import re
from pathlib import Path

import numpy as np
import pytest

from nmt.align.metrics import MetricError, score, score_soft
from nmt.cli import main
from nmt.data.alignments import Alignment

import required

RWTH = Path(__file__).resolve().parents[3] / "shared" / "data" / "rwth_de_en_gold_alignment"


def gold(sure, possible_only=()):
    return Alignment(set(sure), set(sure) | set(possible_only))


def run(argv, capsys):
    """`nmt ARGV` in-process: (exit status, stdout, stderr)."""
    try:
        status = main(argv)
    except SystemExit as stop:
        status = stop.code
    out = capsys.readouterr()
    return status, out.out, out.err


# -- AER, precision, recall -----------------------------------------------------------------------------------
def test_perfect_hypothesis():
    result = score([gold({(0, 0), (1, 1)}, {(1, 2)})], [{(0, 0), (1, 1)}])
    assert (result.aer, result.precision, result.recall) == (0.0, 1.0, 1.0)


def test_disjoint_hypothesis():
    result = score([gold({(0, 0), (1, 1)})], [{(0, 1), (1, 0)}])
    assert (result.aer, result.precision, result.recall) == (1.0, 0.0, 0.0)


def test_hand_computed_sure_and_possible():
    # S = {0-0, 1-1}, P = S + {1-2}; A = {0-0, 1-2, 2-2}
    # |A∩S| = 1 (0-0), |A∩P| = 2 (0-0, 1-2), |A| = 3, |S| = 2
    # AER = 1 - (1 + 2) / (3 + 2) = 0.4; precision = 2/3; recall = 1/2
    result = score([gold({(0, 0), (1, 1)}, {(1, 2)})], [{(0, 0), (1, 2), (2, 2)}])
    assert result.aer == pytest.approx(0.4)
    assert result.precision == pytest.approx(2 / 3)
    assert result.recall == pytest.approx(0.5)
    assert result.to_dict()["counts"] == {
        "hypothesis": 3,
        "sure": 2,
        "possible": 3,
        "hypothesis_sure": 1,
        "hypothesis_possible": 2,
    }


def test_gold_with_only_possible_links():
    # S = {}, P = {0-0, 1-1}; A = {0-0, 2-2}: AER = 1 - (0 + 1) / (2 + 0) = 0.5 = 1 - precision; recall undefined
    result = score([gold((), {(0, 0), (1, 1)})], [{(0, 0), (2, 2)}])
    assert result.aer == pytest.approx(0.5)
    assert result.precision == pytest.approx(0.5)
    assert result.recall is None


def test_sentences_without_links_count_for_nothing():
    with_empty = score([gold({(0, 0)}), gold(()), gold({(1, 1)})], [{(0, 0)}, set(), {(0, 1)}])
    without = score([gold({(0, 0)}), gold({(1, 1)})], [{(0, 0)}, {(0, 1)}])
    assert with_empty.aer == without.aer == pytest.approx(1 - 2 / 4)
    assert with_empty.sentences == 3


def test_corpus_level_is_not_the_mean_of_sentence_rates():
    # sentence 1: A = S = {0-0}: AER 0.  sentence 2: A = {0-1, 1-1, 2-1}, S = {0-0}: AER 1.
    # mean of sentence rates: 0.5;  corpus: |A| = 4, |S| = 2, |A∩S| = |A∩P| = 1 -> 1 - 2/6 = 2/3
    result = score([gold({(0, 0)}), gold({(0, 0)})], [{(0, 0)}, {(0, 1), (1, 1), (2, 1)}])
    assert result.aer == pytest.approx(2 / 3)
    assert result.precision == pytest.approx(1 / 4)
    assert result.recall == pytest.approx(1 / 2)


def test_no_links_at_all_is_an_error_not_a_number():
    with pytest.raises(MetricError, match=r"AER is undefined: neither the hypothesis nor the gold standard has a link"):
        score([gold(()), gold((), {(0, 0)})], [set(), set()])
    # an empty hypothesis against real gold links is defined: AER 1, precision undefined
    result = score([gold({(0, 0)})], [set()])
    assert (result.aer, result.precision, result.recall) == (1.0, None, 0.0)
    json.dumps(result.to_dict(), allow_nan=False)  # null, not NaN (which json.dumps would write otherwise)


def test_sentence_counts_must_agree():
    with pytest.raises(MetricError, match="1 hypothesis sentences for 2 gold sentences"):
        score([gold({(0, 0)}), gold({(0, 0)})], [{(0, 0)}])


# -- SAER -----------------------------------------------------------------------------------------------------
def test_saer_of_a_one_hot_matrix_equals_aer():
    reference = [gold({(0, 0), (1, 1)}, {(1, 2)})]
    hypothesis = {(0, 0), (1, 2), (2, 2)}
    matrix = np.zeros((3, 3))  # rows = target words, columns = source words
    for i, j in hypothesis:
        matrix[j, i] = 1.0
    soft = score_soft(reference, [matrix])
    assert soft.saer == pytest.approx(score(reference, [hypothesis]).aer) == pytest.approx(0.4)


def test_saer_of_a_uniform_matrix_by_hand():
    # 2 target x 3 source words, every weight 1/3 (rows sum to 1); S = {0-0}, P = S + {2-1}
    # sum(M_A) = 2, sum(M_A*M_S) = 1/3, sum(M_A*M_P) = 2/3, |S| = 1 -> SAER = 1 - (1/3 + 2/3) / (2 + 1) = 2/3
    soft = score_soft([gold({(0, 0)}, {(2, 1)})], [np.full((2, 3), 1 / 3)])
    assert soft.saer == pytest.approx(2 / 3)
    assert soft.to_dict()["counts"]["mass"] == pytest.approx(2.0)


def test_saer_matrix_orientation_and_errors():
    # link (source 2, target 0) is entry [0, 2] of a target x source matrix
    matrix = np.zeros((1, 3))
    matrix[0, 2] = 1.0
    assert score_soft([gold({(2, 0)})], [matrix]).saer == 0.0
    with pytest.raises(
        MetricError,
        match=r"sentence 1: gold link 0-2 lies outside the soft alignment "
        r"\(1 target x 3 source words\)",
    ):
        score_soft([gold({(0, 2)})], [matrix])
    with pytest.raises(MetricError, match="negative or non-finite"):
        score_soft([gold({(0, 0)})], [np.array([[-0.5, 1.0]])])
    with pytest.raises(MetricError, match="SAER is undefined"):
        score_soft([gold(())], [np.zeros((2, 2))])


# -- nmt align score ------------------------------------------------------------------------------------------
def test_score_command_writes_json_and_saer(tmp_path, capsys):
    (tmp_path / "gold.talp").write_text("1-1 2-2 2p3 \n")  # German-first talp, 1-based
    (tmp_path / "hyp").write_text("0-0 2-1 2-2\n")  # English-first Pharaoh: en 2 - de 2 = de 2 - en 2
    np.savez(tmp_path / "soft.npz", np.array([[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0]]))
    status, out, err = run(
        [
            "align",
            "score",
            "--gold",
            str(tmp_path / "gold.talp"),
            "--gold-format",
            "talp",
            "--test",
            str(tmp_path / "hyp"),
            "--test-reverse",
            "--soft",
            str(tmp_path / "soft.npz"),
            "--out",
            str(tmp_path / "scores.json"),
            "--system",
            "giza",
            "--testset",
            "align",
            "--pair",
            "de-en",
            "--preset-name",
            "small",
        ],
        capsys,
    )
    assert status == 0, err
    # as scored (German, English): S = {0-0, 1-1}, P = S + {1-2}; A = {0-0, 1-2, 2-2} -> AER 0.4 (see above)
    record = json.loads((tmp_path / "scores.json").read_text())
    assert record["aer"] == pytest.approx(0.4) and json.loads(out)["aer"] == pytest.approx(0.4)
    assert record["counts"]["hypothesis_possible"] == 2
    assert [record[key] for key in ("system", "testset", "pair", "preset")] == ["giza", "align", "de-en", "small"]
    # the diagonal matrix credits 0-0, 1-1, 2-2 (target x source): A∩S mass 2, A∩P mass 2, mass 3, |S| 2
    assert record["saer"] == pytest.approx(1 - 4 / 5)
    (tmp_path / "soft.json").write_text(json.dumps([[[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0]]]))
    status, out, _ = run(
        [
            "align",
            "score",
            "--gold",
            str(tmp_path / "gold.talp"),
            "--gold-format",
            "talp",
            "--test",
            str(tmp_path / "hyp"),
            "--test-reverse",
            "--soft",
            str(tmp_path / "soft.json"),
        ],
        capsys,
    )
    assert status == 0 and json.loads(out)["saer"] == pytest.approx(0.2)


def test_score_command_errors_name_the_file(tmp_path, capsys):
    (tmp_path / "gold").write_text("0-0\n1-1\n")
    (tmp_path / "hyp").write_text("0-0\n1-1\n0-0\n")
    (tmp_path / "src").write_text("a\nb\n")
    (tmp_path / "tgt").write_text("x\ny\n")
    base = ["align", "score", "--gold", str(tmp_path / "gold")]
    status, _, err = run(base + ["--test", str(tmp_path / "hyp")], capsys)
    assert status == 2 and f"{tmp_path / 'hyp'}:3: sentence 3 of alignment links has no partner" in err
    status, _, err = run(
        base + ["--test", str(tmp_path / "gold"), "--src", str(tmp_path / "src"), "--tgt", str(tmp_path / "tgt")],
        capsys,
    )
    assert status == 2 and f"{tmp_path / 'gold'}:2: link 1-1: source index 1 out of range (1 source words)" in err
    (tmp_path / "empty").write_text("\n\n")
    status, _, err = run(
        ["align", "score", "--gold", str(tmp_path / "empty"), "--test", str(tmp_path / "empty")], capsys
    )
    assert status == 2 and "AER is undefined" in err


@pytest.mark.parametrize(
    "content, expected",
    [
        (b"[[[1.0, 0], [0, 1.0]]", ":1:22: invalid JSON: "),
        (
            b'{"0": [[1.0]]}',
            ": soft alignments (a JSON list of matrices, one per sentence pair) must be an array at the top "
            "level, not an object",
        ),
        (b'[[[1.0, "\xe4"]]]', ":1: invalid UTF-8 (byte 0xe4 at column 10"),
    ],
)
def test_a_bad_soft_alignment_file_is_one_line_naming_it(tmp_path, capsys, content, expected):
    (tmp_path / "gold").write_text("0-0\n")
    (tmp_path / "soft.json").write_bytes(content)
    status, _, err = run(
        [
            "align",
            "score",
            "--gold",
            str(tmp_path / "gold"),
            "--test",
            str(tmp_path / "gold"),
            "--soft",
            str(tmp_path / "soft.json"),
        ],
        capsys,
    )
    assert status == 2 and len(err.strip().splitlines()) == 1, err
    assert err.strip().startswith(f"nmt: error: {tmp_path / 'soft.json'}{expected}"), err


# -- acceptance: the RWTH gold standard ----------------------------------------------------------------------
def parse_talp(path):
    """An independent reading of the talp file: (sure, possible) sets of (de, en) 0-based links per line."""
    lines = path.read_text(encoding="ascii").split("\n")
    while lines and lines[-1] == "":
        lines.pop()
    out = []
    for line in lines:
        sure, possible = set(), set()
        for token in line.split():
            sep = "-" if "-" in token else "p"
            i, j = token.split(sep)
            (sure if sep == "-" else possible).add((int(i) - 1, int(j) - 1))
        out.append((sure, sure | possible))
    return out


needs_rwth = required.skip_unless(
    (RWTH / "alignmentDeEn.talp").is_file(), "../shared/data/rwth_de_en_gold_alignment is absent"
)


@needs_rwth
def test_rwth_gold_against_itself(tmp_path, capsys):
    talp = str(RWTH / "alignmentDeEn.talp")
    status, out, err = run(
        [
            "align",
            "score",
            "--gold",
            talp,
            "--gold-format",
            "talp",
            "--test",
            talp,
            "--test-format",
            "talp",
            "--src",
            str(RWTH / "de"),
            "--tgt",
            str(RWTH / "en"),
            "--encoding",
            "latin-1",
            "--out",
            str(tmp_path / "self.json"),
        ],
        capsys,
    )
    assert status == 0, err
    record = json.loads((tmp_path / "self.json").read_text())
    assert (record["aer"], record["precision"], record["recall"], record["sentences"]) == (0.0, 1.0, 1.0, 508)
    assert record["counts"]["sure"] == 9613 and record["counts"]["possible"] == 9613 + 921  # SOURCE.md's counts
    assert record["range_checked"] is True
    # the same links, read as English-first on both sides: still a perfect score
    status, out, _ = run(
        [
            "align",
            "score",
            "--gold",
            talp,
            "--gold-format",
            "talp",
            "--gold-reverse",
            "--test",
            talp,
            "--test-format",
            "talp",
            "--test-reverse",
            "--src",
            str(RWTH / "en"),
            "--tgt",
            str(RWTH / "de"),
            "--encoding",
            "latin-1",
        ],
        capsys,
    )
    assert status == 0 and json.loads(out)["aer"] == 0.0


@needs_rwth
def test_rwth_block_file_against_the_talp_file(tmp_path, capsys):
    talp, block = str(RWTH / "alignmentDeEn.talp"), str(RWTH / "alignmentDeEn")
    base = ["align", "score", "--gold", talp, "--gold-format", "talp", "--test", block, "--test-format", "rwth"]
    # by default the known defect stops the reader, at its line
    status, _, err = run(base, capsys)
    assert status == 2
    assert re.search(r"alignmentDeEn:4085: negative index in 'S 21 -100'", err)
    # skipped explicitly: the block file equals the talp file except for the one link it spelled 21 -100
    status, out, err = run(base + ["--skip-negative", "--out", str(tmp_path / "block.json")], capsys)
    assert status == 0 and "skipped 'S 21 -100'" in err
    gold = parse_talp(RWTH / "alignmentDeEn.talp")
    from nmt.data.alignments import read_rwth

    blocks = read_rwth(block, skip_negative=True)
    differing = [k for k, (g, b) in enumerate(zip(gold, blocks)) if (g[0], g[1]) != (b.sure, b.possible)]
    assert differing == [178]
    assert gold[178][0] - blocks[178].sure == {(21, 0)} and blocks[178].sure <= gold[178][0]
    n_sure = sum(len(s) for s, _ in gold)
    n_possible = sum(len(p) for _, p in gold)
    # A = all links but 21-0 (sure in gold): |A| = |P| - 1, |A∩S| = |S| - 1, |A∩P| = |P| - 1
    expected = 1 - ((n_sure - 1) + (n_possible - 1)) / ((n_possible - 1) + n_sure)
    record = json.loads((tmp_path / "block.json").read_text())
    assert record["aer"] == pytest.approx(expected, abs=1e-15)
    assert record["test"]["skipped"] == [f"{block}:4085: skipped 'S 21 -100' (negative index)"]
