"""Tests for nmt.scoring.bleu: BLEU variants, per-length BLEU, the Scores JSON."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest
from sacrebleu.metrics import BLEU

from nmt.base.atomic import write_json_atomic
from nmt.data.text import CorpusError, read_lines, write_lines_atomic
from nmt.data.tokenize import detokenize
from nmt.scoring.bleu import (
    SCORE_KEYS,
    bleu_by_length,
    bleu_detokenized,
    bleu_tokenized,
    evaluate_files,
    is_lowercased,
)

import required

SHARED_DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
MULTI30K = SHARED_DATA / "multi30k"

HYPS = ["the cat sat on the mat", "a dog runs"]
REFS = ["the cat sat on a mat", "the dog runs fast"]

# Tokenised German-ish sentences with punctuation and an apostrophe, so that detokenisation matters.
TOK_HYPS = [
    "ein mann , der einen hut trägt , sitzt auf einer bank .",
    "zwei hunde spielen im schnee .",
    "eine frau liest ein buch &apos; s im park .",
    "",
    "ein kind springt in den &quot; pool &quot; .",
]
TOK_REFS = [
    "ein mann mit einem hut sitzt auf einer bank .",
    "zwei hunde spielen im tiefen schnee .",
    "eine frau liest im park ein buch .",
    "ein junge fährt fahrrad .",
    "ein kind springt in den pool .",
]


def sacrebleu_cli(ref: Path, hyp: Path, *extra: str) -> float:
    out = subprocess.run(
        [sys.executable, "-m", "sacrebleu", str(ref), "-i", str(hyp), "-b", "-w", "6", *extra],
        check=True,
        capture_output=True,
        text=True,
    )
    return float(out.stdout.strip())


SACREBLEU = Path(sys.executable).with_name("sacrebleu")
CLI_LENGTHS = re.compile(r"\(BP = ([0-9.]+) ratio = ([0-9.]+) hyp_len = (\d+) ref_len = (\d+)\)")


def sacrebleu_cli_lengths(ref: Path, hyp: Path, *extra: str) -> dict:
    """What the `sacrebleu` command line prints (-f json, its verbose_score) for BP, ratio and the two lengths."""
    out = subprocess.run(
        [str(SACREBLEU), str(ref), "-i", str(hyp), "-f", "json", *extra], check=True, capture_output=True, text=True
    )
    bp, ratio, hyp_len, ref_len = CLI_LENGTHS.search(json.loads(out.stdout)["verbose_score"]).groups()
    return {"bp": float(bp), "ratio": float(ratio), "hyp_len": int(hyp_len), "ref_len": int(ref_len)}


# ------------------------------------------------------------------------------------------- bleu_tokenized
def test_bleu_tokenized_hand_computed():
    # Sentence 1: hyp "the cat sat on the mat" (6 tokens), ref "the cat sat on a mat" (6 tokens)
    #   1-grams: the x2 (clipped to 1 by the ref), cat, sat, on, mat        -> 5 correct / 6
    #   2-grams: the-cat, cat-sat, sat-on match; on-the, the-mat do not     -> 3 / 5
    #   3-grams: the-cat-sat, cat-sat-on match; sat-on-the, on-the-mat not  -> 2 / 4
    #   4-grams: the-cat-sat-on matches; cat-sat-on-the, sat-on-the-mat not -> 1 / 3
    # Sentence 2: hyp "a dog runs" (3 tokens), ref "the dog runs fast" (4 tokens)
    #   1-grams: dog, runs match; a does not  -> 2 / 3
    #   2-grams: dog-runs matches; a-dog not  -> 1 / 2
    #   3-grams: a-dog-runs does not          -> 0 / 1
    #   4-grams: none in the hypothesis       -> 0 / 0
    # Corpus precisions: p1 = 7/9, p2 = 4/7, p3 = 2/5, p4 = 1/3 (all > 0, so smoothing plays no role)
    # Lengths: hyp 6 + 3 = 9 < ref 6 + 4 = 10  ->  BP = exp(1 - 10/9) = exp(-1/9) ~ 0.8948
    # BLEU = 100 * BP * (p1 p2 p3 p4)^(1/4) = 100 * exp(-1/9) * (56/945)^(1/4) ~ 44.1503
    expected = 100 * math.exp(1 - 10 / 9) * (7 / 9 * 4 / 7 * 2 / 5 * 1 / 3) ** 0.25
    score, sig = bleu_tokenized(HYPS, REFS)
    assert score == pytest.approx(expected, abs=1e-9)
    assert score == pytest.approx(44.1503, abs=1e-4)


def test_bleu_tokenized_exp_smoothing_hand_computed():
    # hyp "a b c d e" vs ref "a b x d e": p1 = 4/5, p2 = 2/4 (a-b, d-e), p3 = 0/3, p4 = 0/2.
    # exp smoothing (mteval-v13a): the k-th order with zero matches gets precision 1 / (2^k * total):
    #   p3 = 1 / (2 * 3), p4 = 1 / (4 * 2). multi-bleu.perl would print 0 here instead.
    expected = 100 * (4 / 5 * 2 / 4 * 1 / 6 * 1 / 8) ** 0.25
    assert bleu_tokenized(["a b c d e"], ["a b x d e"])[0] == pytest.approx(expected, abs=1e-9)


def test_bleu_identical_is_100():
    refs = ["the quick brown fox jumps .", "a b c d e f g", "ein mann , der läuft ."]
    assert bleu_tokenized(refs, refs)[0] == pytest.approx(100.0)
    assert bleu_detokenized(refs, refs, "de")[0] == pytest.approx(100.0)


def test_bleu_empty_hypotheses_score_zero():
    assert bleu_tokenized(["", ""], ["a b c d", "e f g h"])[0] == 0.0


def test_bleu_length_mismatch_is_an_error():
    with pytest.raises(ValueError, match="2 hypotheses but 1 references"):
        bleu_tokenized(["a", "b"], ["a"])


def test_bleu_tokenized_does_not_retokenize():
    # "small." is one token for tokenize='none' but 13a would split it into "small ." and match the reference.
    hyps = ["the house is small.", "my dog likes to sleep."]
    refs = ["the house is small .", "my dog likes to sleep ."]
    tok_score, _ = bleu_tokenized(hyps, refs)
    thirteen_a = BLEU(tokenize="13a").corpus_score(hyps, [refs]).score
    assert thirteen_a == pytest.approx(100.0)
    assert tok_score < 80.0
    # and the same text with the period split off does score 100 without re-tokenisation
    assert bleu_tokenized(refs, refs)[0] == pytest.approx(100.0)


def test_bleu_is_case_sensitive():
    assert bleu_tokenized(["The cat sat on a mat"], ["the cat sat on a mat"])[0] < 100.0


def test_signatures():
    _, sig_tok = bleu_tokenized(HYPS, REFS)
    _, sig_detok = bleu_detokenized(HYPS, REFS, "en")
    for sig in (sig_tok, sig_detok):
        assert "nrefs:1" in sig and "case:mixed" in sig and "eff:no" in sig and "smooth:exp" in sig
        assert "version:" in sig
    assert "tok:none" in sig_tok and "tok:13a" not in sig_tok
    assert "tok:13a" in sig_detok and "tok:none" not in sig_detok


def test_bleu_tokenized_equals_sacrebleu_cli(tmp_path):
    hyp, ref = tmp_path / "hyp.txt", tmp_path / "ref.txt"
    write_lines_atomic(hyp, TOK_HYPS)
    write_lines_atomic(ref, TOK_REFS)
    ours = bleu_tokenized(TOK_HYPS, TOK_REFS)[0]
    assert 0 < ours < 100
    assert ours == pytest.approx(sacrebleu_cli(ref, hyp, "-tok", "none"), abs=1e-5)


def test_bleu_detokenized_equals_sacrebleu_cli_on_detokenized_files(tmp_path):
    hyp, ref = tmp_path / "hyp.detok", tmp_path / "ref.detok"
    write_lines_atomic(hyp, detokenize(TOK_HYPS, "de"))
    write_lines_atomic(ref, detokenize(TOK_REFS, "de"))
    ours = bleu_detokenized(TOK_HYPS, TOK_REFS, "de")[0]
    assert 0 < ours < 100
    assert ours == pytest.approx(sacrebleu_cli(ref, hyp), abs=1e-5)


# ------------------------------------------------------------------------------------------- bleu_by_length
def test_bleu_by_length_buckets():
    srcs = ["w " * 3, "w " * 10, "w " * 11, "w " * 25, ""]
    hyps = ["a b c d e", "a b c d e", "x y z w v", "a b c d e", "a b c d e"]
    refs = ["a b c d e"] * 5
    out = bleu_by_length(hyps, refs, srcs, buckets=(10, 20))
    assert [(b["bucket"], b["min_len"], b["max_len"], b["n_sentences"]) for b in out] == [
        (10, 0, 10, 3),
        (20, 11, None, 2),
    ]  # lengths 3, 10, 0 -> first; 11 and 25 (beyond 20) -> last
    assert out[0]["bleu_tok"] == pytest.approx(100.0)
    assert out[1]["bleu_tok"] == pytest.approx(bleu_tokenized(hyps[2:4], refs[2:4])[0])


def test_bleu_by_length_empty_bucket_and_defaults():
    out = bleu_by_length(["a b c d"], ["a b c d"], ["one two three"])
    assert [b["bucket"] for b in out] == [10, 20, 30, 40, 50, 60, 70]
    assert out[0]["n_sentences"] == 1 and out[0]["bleu_tok"] == pytest.approx(100.0)
    assert all(b["n_sentences"] == 0 and b["bleu_tok"] is None for b in out[1:])
    with pytest.raises(ValueError, match="increasing"):
        bleu_by_length([], [], [], buckets=(20, 10))
    with pytest.raises(ValueError, match="counts differ"):
        bleu_by_length(["a"], ["a"], [])


# --------------------------------------------------------------------------------- evaluate_files / JSON
META = {"system": "base", "testset": "test", "preset": "demo", "pair": "synth"}


def test_evaluate_files_writes_expected_keys(tmp_path):
    hyp, ref, out = tmp_path / "base.test.txt", tmp_path / "test.tgt", tmp_path / "scores" / "base.test.json"
    write_lines_atomic(hyp, TOK_HYPS)  # contains an empty line: allowed in hypotheses
    write_lines_atomic(ref, TOK_REFS)
    scores = evaluate_files(hyp, ref, lang="de", ppl=4.12, meta=META, out_path=out)
    assert set(scores) == set(SCORE_KEYS)
    assert scores["system"] == "base" and scores["testset"] == "test"
    assert scores["preset"] == "demo" and scores["pair"] == "synth"
    assert scores["n_sentences"] == 5
    assert scores["bleu_tok"] == bleu_tokenized(TOK_HYPS, TOK_REFS)[0]  # full float, not rounded
    assert scores["bleu_detok"] == bleu_detokenized(TOK_HYPS, TOK_REFS, "de")[0]
    assert "tok:none" in scores["bleu_tok_signature"] and "tok:13a" in scores["bleu_detok_signature"]
    assert scores["ppl"] == 4.12
    assert scores["hyp"] == str(hyp) and scores["ref"] == str(ref)
    text = out.read_text(encoding="utf-8")
    assert json.loads(text) == scores
    assert text == json.dumps(scores, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


# Shorter than TOK_REFS (BP < 1) and longer (BP = 1, ratio > 1), both tokenised and detokenised + 13a.
SHORT_HYPS = [
    "ein mann sitzt auf einer bank .",
    "zwei hunde spielen im schnee .",
    "eine frau liest ein buch .",
    "",
    "ein kind springt in den pool .",
]
LONG_HYPS = TOK_HYPS[:3] + ["ein kleiner junge fährt schnell ein rotes fahrrad ."] + TOK_HYPS[4:]


def test_brevity_penalty_and_length_ratio_equal_the_sacrebleu_command_line(tmp_path):
    """Each BLEU field's F_bp, F_ratio, F_hyp_len, F_ref_len in the scores file are what `sacrebleu` prints beside
    the same score (BP = ... ratio = ... hyp_len = ... ref_len = ..., 3 decimals): `--tokenize none` on the
    tokenised files for bleu_tok, 13a on the detokenised files for bleu_detok; the plain translation is shorter than
    the reference, the unk-replaced one longer."""
    hyp, unk, ref, out = tmp_path / "h.tok", tmp_path / "h.unk.tok", tmp_path / "r.tok", tmp_path / "s.json"
    write_lines_atomic(hyp, SHORT_HYPS)
    write_lines_atomic(unk, LONG_HYPS)
    write_lines_atomic(ref, TOK_REFS)
    for name, lines in (("h", SHORT_HYPS), ("h.unk", LONG_HYPS), ("r", TOK_REFS)):
        write_lines_atomic(tmp_path / f"{name}.detok", detokenize(lines, "de"))
    evaluate_files(hyp, ref, lang="de", ppl=None, meta=META, unk={"hyp": str(unk)}, out_path=out)
    scores = json.loads(out.read_text(encoding="utf-8"))
    cli = {
        "bleu_tok": sacrebleu_cli_lengths(ref, hyp, "--tokenize", "none"),
        "bleu_detok": sacrebleu_cli_lengths(tmp_path / "r.detok", tmp_path / "h.detok"),
        "bleu_tok_unk": sacrebleu_cli_lengths(ref, unk, "--tokenize", "none"),
        "bleu_detok_unk": sacrebleu_cli_lengths(tmp_path / "r.detok", tmp_path / "h.unk.detok"),
    }
    for field, printed in cli.items():
        assert scores[f"{field}_hyp_len"] == printed["hyp_len"] and scores[f"{field}_ref_len"] == printed["ref_len"]
        assert scores[f"{field}_bp"] == pytest.approx(printed["bp"], abs=5e-4), field
        assert scores[f"{field}_ratio"] == pytest.approx(printed["ratio"], abs=5e-4), field
        assert scores[f"{field}_ratio"] == scores[f"{field}_hyp_len"] / scores[f"{field}_ref_len"]
    for field in ("bleu_tok", "bleu_detok"):  # shorter: penalised
        assert 0 < scores[f"{field}_bp"] < 1 and scores[f"{field}_ratio"] < 1
        assert scores[f"{field}_bp"] == pytest.approx(math.exp(1 - 1 / scores[f"{field}_ratio"]))
    for field in ("bleu_tok_unk", "bleu_detok_unk"):  # longer: no penalty
        assert scores[f"{field}_bp"] == 1.0 and scores[f"{field}_ratio"] > 1
    assert scores["bleu_detok_unk_hyp_len"] != scores["bleu_tok_unk_hyp_len"]  # 13a tokens: "&apos; s" is one, "'s"


def test_chrf_equals_the_sacrebleu_command_line(tmp_path):
    """chrf and chrf_unk are what `sacrebleu REF -i HYP -m chrf` prints for the same tokenised files, with its
    signature; without an unk-replaced translation chrf_unk is null."""
    hyp, unk, ref, out = tmp_path / "h.tok", tmp_path / "h.unk.tok", tmp_path / "r.tok", tmp_path / "s.json"
    write_lines_atomic(hyp, SHORT_HYPS)
    write_lines_atomic(unk, LONG_HYPS)
    write_lines_atomic(ref, TOK_REFS)
    evaluate_files(hyp, ref, lang="de", ppl=None, meta=META, unk={"hyp": str(unk)}, out_path=out)
    scores = json.loads(out.read_text(encoding="utf-8"))
    for field, path in (("chrf", hyp), ("chrf_unk", unk)):
        printed = json.loads(
            subprocess.run(
                [str(SACREBLEU), str(ref), "-i", str(path), "-m", "chrf", "-f", "json", "-w", "6"],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
        )
        assert scores[field] == pytest.approx(printed["score"], abs=5e-7), field
        assert scores[f"{field}_signature"] == printed["signature"] and printed["name"] == "chrF2"
    assert 0 < scores["chrf"] < 100 and scores["chrf"] != scores["chrf_unk"]
    plain = evaluate_files(hyp, ref, lang="de", ppl=None, meta=META)
    assert plain["chrf"] == scores["chrf"] and plain["chrf_unk"] is None and plain["chrf_unk_signature"] is None


def test_lowercased_text_is_scored_case_insensitively_and_says_so(tmp_path):
    """Text lowercased in preparation has no case to match: with ``lowercase`` every BLEU and chrF field is what
    `sacrebleu -lc` prints (the same numbers here, the text being lowercase) and its signature says case:lc."""
    hyp, unk, ref = tmp_path / "h.tok", tmp_path / "h.unk.tok", tmp_path / "r.tok"
    write_lines_atomic(hyp, SHORT_HYPS)
    write_lines_atomic(unk, LONG_HYPS)
    write_lines_atomic(ref, TOK_REFS)
    cased = evaluate_files(hyp, ref, lang="de", ppl=None, meta=META, unk={"hyp": str(unk)})
    lowered = evaluate_files(hyp, ref, lang="de", ppl=None, meta=META, unk={"hyp": str(unk)}, lowercase=True)
    for field in ("bleu_tok", "bleu_detok", "bleu_tok_unk", "bleu_detok_unk", "chrf", "chrf_unk"):
        assert lowered[field] == pytest.approx(cased[field], abs=1e-9), field
        assert "case:lc" in lowered[f"{field}_signature"] and "case:mixed" in cased[f"{field}_signature"]
        assert is_lowercased(lowered[f"{field}_signature"]) and not is_lowercased(cased[f"{field}_signature"])
    assert lowered["bleu_tok"] == pytest.approx(sacrebleu_cli(ref, hyp, "-tok", "none", "-lc"), abs=5e-7)
    # on cased text the two differ: the case-insensitive score counts "Mann" against "mann"
    write_lines_atomic(hyp, [line.capitalize() for line in SHORT_HYPS])
    assert (
        evaluate_files(hyp, ref, lang="de", ppl=None, meta=META, lowercase=True)["bleu_tok"]
        > evaluate_files(hyp, ref, lang="de", ppl=None, meta=META)["bleu_tok"]
    )


def test_length_diagnostics_are_null_without_their_bleu(tmp_path):
    hyp, ref = tmp_path / "h", tmp_path / "r"
    write_lines_atomic(hyp, TOK_REFS)
    write_lines_atomic(ref, TOK_REFS)
    scores = evaluate_files(hyp, ref, lang="de", ppl=None, meta=META)
    assert scores["bleu_tok_bp"] == 1.0 and scores["bleu_tok_ratio"] == 1.0
    assert scores["bleu_tok_hyp_len"] == scores["bleu_tok_ref_len"] == sum(len(r.split()) for r in TOK_REFS)
    for field in ("bleu_tok_unk", "bleu_detok_unk"):  # no unk replacement
        assert all(scores[f"{field}_{d}"] is None for d in ("signature", "bp", "ratio", "hyp_len", "ref_len"))
    with pytest.raises(ValueError, match="bleu_detok_bp"):
        evaluate_files(hyp, ref, lang="de", ppl=None, meta={**META, "bleu_detok_bp": 1.0})


def test_evaluate_files_ppl_none_and_meta_checks(tmp_path):
    hyp, ref = tmp_path / "h", tmp_path / "r"
    write_lines_atomic(hyp, TOK_REFS)
    write_lines_atomic(ref, TOK_REFS)
    scores = evaluate_files(hyp, ref, lang="de", ppl=None, meta=META)
    assert scores["ppl"] is None and scores["bleu_tok"] == pytest.approx(100.0)
    with pytest.raises(ValueError, match="meta lacks pair"):
        evaluate_files(hyp, ref, lang="de", ppl=None, meta={k: v for k, v in META.items() if k != "pair"})
    with pytest.raises(ValueError, match="bleu_tok"):
        evaluate_files(hyp, ref, lang="de", ppl=None, meta={**META, "bleu_tok": 99.0})
    with pytest.raises(ValueError, match="finite"):
        evaluate_files(hyp, ref, lang="de", ppl=float("nan"), meta=META)


def test_evaluate_files_mismatch_names_files(tmp_path):
    hyp, ref = tmp_path / "base.test.txt", tmp_path / "test.tgt"
    write_lines_atomic(hyp, TOK_HYPS[:3])
    write_lines_atomic(ref, TOK_REFS)
    with pytest.raises(CorpusError) as info:
        evaluate_files(hyp, ref, lang="de", ppl=None, meta=META)
    msg = str(info.value)
    assert str(hyp) in msg and str(ref) in msg and "3 lines" in msg and "5 lines" in msg


def test_evaluate_files_empty_reference_line_is_an_error(tmp_path):
    hyp, ref = tmp_path / "h", tmp_path / "r"
    write_lines_atomic(hyp, ["a", "b"])
    write_lines_atomic(ref, ["a", ""])
    with pytest.raises(CorpusError, match=r":2: empty line"):
        evaluate_files(hyp, ref, lang="en", ppl=None, meta=META)


def test_write_json_atomic(tmp_path):
    p = tmp_path / "x.json"
    write_json_atomic(p, {"b": 1, "a": "ü"})
    assert p.read_text(encoding="utf-8") == '{\n  "a": "ü",\n  "b": 1\n}\n'
    with pytest.raises(ValueError):
        write_json_atomic(p, {"a": float("inf")})
    assert json.loads(p.read_text(encoding="utf-8")) == {"a": "ü", "b": 1}  # old file kept


# ------------------------------------------------------------------------------------------ real data (opt.)
def _need(*paths: Path) -> None:
    for p in paths:
        if not p.is_file():
            required.unavailable(f"shared data not available: {p}")


def test_multi30k_test_against_itself_is_100(tmp_path):
    ref = MULTI30K / "tok" / "test_2016_flickr.lc.norm.tok.de"
    _need(ref)
    scores = evaluate_files(ref, ref, lang="de", ppl=None, meta=META, out_path=tmp_path / "s.json")
    assert scores["n_sentences"] == 1000
    assert scores["bleu_tok"] == pytest.approx(100.0)
    assert scores["bleu_detok"] == pytest.approx(100.0)


def test_multi30k_degraded_hypothesis_matches_cli(tmp_path):
    """A non-trivial score on real data: drop the last word of every third sentence and swap the first two
    words of every fifth; compare with the sacreBLEU command line, tokenised and detokenised."""
    ref_path = MULTI30K / "tok" / "test_2016_flickr.lc.norm.tok.de"
    _need(ref_path)
    refs = read_lines(ref_path)
    hyps = []
    for i, line in enumerate(refs):
        toks = line.split()
        if i % 3 == 0:
            toks = toks[:-2] + toks[-1:]
        if i % 5 == 0 and len(toks) > 2:
            toks[0], toks[1] = toks[1], toks[0]
        hyps.append(" ".join(toks))
    hyp_path = tmp_path / "hyp.tok"
    write_lines_atomic(hyp_path, hyps)
    tok = bleu_tokenized(hyps, refs)[0]
    assert 50 < tok < 100
    assert tok == pytest.approx(sacrebleu_cli(ref_path, hyp_path, "-tok", "none"), abs=1e-5)
    detok_hyp, detok_ref = tmp_path / "hyp.detok", tmp_path / "ref.detok"
    write_lines_atomic(detok_hyp, detokenize(hyps, "de"))
    write_lines_atomic(detok_ref, detokenize(refs, "de"))
    assert bleu_detokenized(hyps, refs, "de")[0] == pytest.approx(sacrebleu_cli(detok_ref, detok_hyp), abs=1e-5)


def test_evaluate_files_adds_bleu_by_source_length(tmp_path):
    hyp, ref, src = tmp_path / "h.txt", tmp_path / "r.txt", tmp_path / "s.txt"
    unk = tmp_path / "h.unk.txt"
    write_lines_atomic(hyp, TOK_HYPS)
    write_lines_atomic(unk, TOK_REFS)  # a perfect "replacement", to tell the two curves apart
    write_lines_atomic(ref, TOK_REFS)
    sources = [" ".join(["w"] * n) for n in (3, 12, 12, 45, 80)]
    write_lines_atomic(src, sources)
    scores = evaluate_files(hyp, ref, lang="de", ppl=None, meta=META, src_path=src, unk={"hyp": str(unk), "unks": 0})
    assert scores["by_length"]["plain"] == bleu_by_length(TOK_HYPS, TOK_REFS, sources)
    assert [b["n_sentences"] for b in scores["by_length"]["unk"]] == [1, 2, 0, 0, 1, 0, 1]
    assert scores["by_length"]["unk"] == bleu_by_length(TOK_REFS, TOK_REFS, sources)
    assert evaluate_files(hyp, ref, lang="de", ppl=None, meta=META)["by_length"] is None


# ------------------------------------------------------------------------------------------- the raw reference
# The raw (never tokenised) reference of TOK_REFS, as WMT releases it: what NIST BLEU is scored against.
RAW_REFS = [
    "Ein Mann mit einem Hut sitzt auf einer Bank.",
    "Zwei Hunde spielen im tiefen Schnee.",
    "Eine Frau liest im Park ein Buch.",
    "Ein Junge fährt Fahrrad.",
    "Ein Kind springt in den Pool.",
]


def test_detokenised_bleu_against_the_raw_reference_equals_the_sacrebleu_command_line(tmp_path):
    """bleu_detok with a raw reference: the detokenised hypotheses scored against the raw reference as it is, the
    number `sacrebleu RAW -i DETOKENISED_HYP` (13a) prints; the scores file says which reference it used."""
    hyp, ref, raw = tmp_path / "hyp.txt", tmp_path / "test.tgt", tmp_path / "test.raw_ref"
    write_lines_atomic(hyp, TOK_HYPS)
    write_lines_atomic(ref, [line.lower() for line in TOK_REFS])
    write_lines_atomic(raw, RAW_REFS)
    write_lines_atomic(tmp_path / "hyp.detok", detokenize(TOK_HYPS, "de"))
    scores = evaluate_files(hyp, ref, lang="de", ppl=None, meta=META, raw_ref_path=raw)
    assert scores["bleu_detok"] == pytest.approx(sacrebleu_cli(raw, tmp_path / "hyp.detok"), abs=1e-5)
    assert scores["bleu_detok_reference"] == {"kind": "raw", "path": str(raw)}
    assert scores["bleu_detok"] != bleu_detokenized(TOK_HYPS, TOK_REFS, "de")[0]  # the casing counts now
    without = evaluate_files(hyp, ref, lang="de", ppl=None, meta=META)
    assert without["bleu_detok_reference"] == {"kind": "detokenised", "path": str(ref)}


def test_a_raw_reference_in_another_order_is_an_error_naming_both_files(tmp_path):
    hyp, ref, raw = tmp_path / "hyp.txt", tmp_path / "test.tgt", tmp_path / "test.raw_ref"
    write_lines_atomic(hyp, TOK_HYPS)
    write_lines_atomic(ref, TOK_REFS)
    write_lines_atomic(raw, RAW_REFS[1:] + RAW_REFS[:1])  # shuffled
    with pytest.raises(CorpusError, match=rf"{raw}:1: not the sentence of line 1 of {ref} \(5 of 5 lines differ\)"):
        evaluate_files(hyp, ref, lang="de", ppl=None, meta=META, raw_ref_path=raw)
    write_lines_atomic(raw, RAW_REFS[:4])
    with pytest.raises(CorpusError, match=rf"{raw}: 4 lines, but the tokenised test set {ref} has 5"):
        evaluate_files(hyp, ref, lang="de", ppl=None, meta=META, raw_ref_path=raw)
