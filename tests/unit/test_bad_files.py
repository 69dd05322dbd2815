"""Malformed files through the command line's entry (nmt.cli.main, in this process: the same parsing and error
handling as the `nmt` command, without an interpreter's start per case): every YAML, JSON, JSON Lines and text file a
command reads goes through nmt.base.files, so that a file that is not what its format says (invalid UTF-8, bad
syntax, a key given twice, an empty file, a value of the wrong type) is one line on stderr naming the file and the
line or key ("nmt: error: ..."), exit status 2, no traceback, and nothing the command wrote before is overwritten.
The cases of tests/unit/test_bad_inputs.py are bad arguments and corpora; these are bad files."""

import json
import shutil
from pathlib import Path

import pytest
import yaml

from nmt.data.vocab import SPECIALS

from command_line import assert_one_line

ROOT = Path(__file__).resolve().parents[2]
REPORT = [
    "report",
    "--params",
    str(ROOT / "params.yaml"),
    "--preset",
    "tiny",
    "--results",
    "{d}/results",
    "--data",
    "{d}/data",
    "--out",
    "{d}/out",
    "--partial",
]  # a few files of a run: the one read matters
OLD_REPORT = {"index.html": "<p>a good report</p>\n", "claims.json": '{"claims": []}\n', "summary.json": "{}\n"}


def snapshot(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


# -- params.yaml and the presets: nmt config ----------------------------------------------------------------------
@pytest.fixture
def params(tmp_path) -> Path:
    """A copy of params.yaml whose presets live in tmp_path/presets (copies of the real ones) and whose tables,
    figures and claims are the real files, by absolute path."""
    data = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    shutil.copytree(ROOT / data["presets_dir"], tmp_path / "presets")
    data["presets_dir"] = str(tmp_path / "presets")
    for key in ("tables", "figures", "claims"):
        data[key] = [str(ROOT / f) for f in data[key]]
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def lines_of(path: Path) -> int:
    return path.read_bytes().count(b"\n")


def test_one_invalid_utf8_byte_in_params_yaml(nmt, params):
    line = lines_of(params) + 1
    with open(params, "ab") as handle:
        handle.write(b'description: "caf\xe9"\n')
    done = nmt(["config", "--params", str(params), "--preset", "tiny"], params.parent)
    assert_one_line(done, f"{params}:{line}: invalid UTF-8 (byte 0xe9 at column 18, byte offset ")
    assert done.stdout == ""


@pytest.mark.parametrize(
    "content, expected",
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00", ":1: invalid UTF-8 (byte 0x89 at column 1, byte offset 0"),
        (b"model:\n  hidden: 8\x00\x01\n", ":2:12: invalid YAML: character U+0000 is not allowed (a binary file?)"),
        (b"", ": a preset is empty (0 bytes)"),  # not params.yaml's paper recipe with exit 0
        (b"# nothing set here yet\n", ": a preset is empty (no value in it"),
        (b"train:\n  lr: 1.0\n  batch_size: 4\n  lr: 0.5\n", ":4:3: duplicate key 'lr' (first on line 2)"),
        (
            b"model: {hidden: 8}\ntrain: {lr: 1.0}\nmodel: {hidden: 16}\n",
            ":3:1: duplicate key 'model' (first on line 1)",
        ),
    ],
)
def test_a_bad_preset_file_is_one_line(nmt, params, content, expected):
    preset = params.parent / "presets" / "bad.yaml"
    preset.write_bytes(content)
    done = nmt(["config", "--params", str(params), "--preset", "bad"], params.parent)
    assert_one_line(done, f"{preset}{expected}")
    assert done.stdout == ""


def test_a_key_given_twice_in_params_yaml(nmt, params):
    first = next(n for n, line in enumerate(params.read_text().splitlines(), start=1) if line.startswith("preset:"))
    line = lines_of(params) + 1
    with open(params, "a", encoding="utf-8") as handle:
        handle.write("preset: tiny\n")
    done = nmt(["config", "--params", str(params)], params.parent)
    assert_one_line(done, f"{params}:{line}:1: duplicate key 'preset' (first on line {first})")


def test_an_empty_params_yaml(nmt, params):
    params.write_bytes(b"")
    assert_one_line(
        nmt(["config", "--params", str(params), "--preset", "tiny"], params.parent),
        f"{params}: the params file is empty (0 bytes)",
    )


# -- table, figure and claims files -------------------------------------------------------------------------------
def test_a_table_file_with_a_key_given_twice(nmt, params):
    table = params.parent / "table.yaml"
    text = (ROOT / "workflow/tables/luong2015_table1.yaml").read_text(encoding="utf-8")
    table.write_text(text + "testset: test\n", encoding="utf-8")
    first = next(n for n, line in enumerate(text.splitlines(), start=1) if line.startswith("testset:"))
    done = nmt(
        [
            "train",
            "--params",
            str(params),
            "--preset",
            "tiny",
            "--table",
            str(table),
            "--system",
            "base",
            "--data",
            "{d}/prepared",
            "--out",
            "{d}/out",
        ],
        params.parent,
    )
    assert_one_line(done, f"{table}:{lines_of(table)}:1: duplicate key 'testset' (first on line {first})")
    assert not (params.parent / "out").exists()


@pytest.mark.parametrize(
    "key, content, expected",
    [
        ("claims", b"paper: Raffel\npaper: Luong\nclaims: []\n", ":2:1: duplicate key 'paper' (first on line 1)"),
        ("claims", b"", ": claims file is empty (0 bytes)"),
        ("figures", b"id: x\npaper: \xff\n", ":2: invalid UTF-8 (byte 0xff at column 8"),
    ],
)
def test_a_bad_claims_or_figure_file_is_one_line_and_the_report_stays(nmt, params, key, content, expected):
    bad = params.parent / f"bad_{key}.yaml"
    bad.write_bytes(content)
    data = yaml.safe_load(params.read_text())
    data[key] = [str(bad)]
    params.write_text(yaml.safe_dump(data, sort_keys=False))
    d = params.parent
    old = old_report(d)
    done = nmt(
        [
            "report",
            "--params",
            str(params),
            "--preset",
            "tiny",
            "--results",
            "{d}/results",
            "--data",
            "{d}/data",
            "--out",
            "{d}/out",
            "--partial",
        ],
        d,
    )
    assert_one_line(done, f"{bad}{expected}")
    assert snapshot(d / "out") == old


# -- what nmt report reads: metrics, scores, model.json, data statistics, benchmarks ------------------------------
def old_report(d: Path) -> dict[str, bytes]:
    """A report directory as an earlier, good `nmt report` left it: what a failing one must not touch."""
    (d / "out").mkdir(exist_ok=True)
    for name, text in OLD_REPORT.items():
        (d / "out" / name).write_text(text, encoding="utf-8")
    return snapshot(d / "out")


GOOD_EPOCH = {"epoch": 1, "updates": 10, "lr": 1.0, "train_ppl": 20.0, "dev_ppl": 18.5, "elapsed_s": 2.0}
SCORES = {
    "system": "base",
    "testset": "test",
    "preset": "tiny",
    "pair": "en-de",
    "n_sentences": 2,
    "bleu_tok": 12.5,
    "ppl": 9.5,
}
MONOTONIC = {
    "device": "cpu",
    "torch": "2",
    "numpy": "2",
    "date": "today",
    "threads": 1,
    "blas_threads": 1,
    "contexts": {
        "dim": 8,
        "min_time_s": 0.1,
        "cells": [
            {"T": 4, "U": 4, "speedup": 2.0, "softmax_ms": 0.2, "hard_ms": 0.1},
            {"T": 8, "U": 4, "speedup": "12.3x", "softmax_ms": 1.2, "hard_ms": 0.1},
        ],
    },
    "decoding": {
        "rows": [],
        "baseline": None,
        "methods": [],
        "growth": {},
        "attention_growth": {},
        "models": {},
        "layers": 1,
        "hidden": 8,
        "vocab": 10,
        "repeats": 1,
    },
}


def jsonl(*records) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


MODELS = "results/en-de/models/base"
REPORT_CASES = {
    "metrics.jsonl: dev_ppl not a number": (
        f"{MODELS}/metrics.jsonl",
        jsonl(GOOD_EPOCH, {**GOOD_EPOCH, "epoch": 2, "dev_ppl": "abc"}),
        ":2: dev_ppl: 'abc' is not of type 'number'",
    ),
    "metrics.jsonl: a line without dev_ppl": (
        f"{MODELS}/metrics.jsonl",
        jsonl({k: v for k, v in GOOD_EPOCH.items() if k != "dev_ppl"}),
        ":1: 'dev_ppl' is a required property",
    ),
    "metrics.jsonl: empty, not a training left out without a word": (
        f"{MODELS}/metrics.jsonl",
        b"",
        ": empty: no epoch recorded",
    ),
    "metrics.jsonl: invalid UTF-8": (
        f"{MODELS}/metrics.jsonl",
        jsonl(GOOD_EPOCH) + b'{"epoch": 2, "note": "\xc3"}\n',
        ":2: invalid UTF-8 (byte 0xc3 at column 23",
    ),
    "metrics.jsonl: a line that is not an object": (
        f"{MODELS}/metrics.jsonl",
        jsonl(GOOD_EPOCH, [1, 2]),
        ":2: each line of a training's metrics must be an object at the top level, not an array",
    ),
    "scores: bleu_tok not a number": (
        "results/en-de/scores/base.test.json",
        json.dumps({**SCORES, "bleu_tok": "high"}).encode(),
        ": bleu_tok: 'high' is not of type 'number', 'null'",
    ),
    "scores: invalid UTF-8": (
        "results/en-de/scores/base.test.json",
        b'{"system": "b\xe4se"}',
        ":1: invalid UTF-8 (byte 0xe4 at column 14",
    ),
    "scores: not an object": (
        "results/en-de/scores/base.test.json",
        b"[12.5]",
        ": a scores file must be an object at the top level",
    ),
    "scores: BLEU by length of the wrong shape": (
        "results/en-de/scores/base.test.json",
        json.dumps({**SCORES, "by_length": {"plain": "x"}}).encode(),
        ": by_length.plain: 'x' is not of type 'array', 'null'",
    ),
    "model.json: not an object": (f"{MODELS}/model.json", b'["base"]', ": a model.json must be an object"),
    "model.json: no training settings": (
        f"{MODELS}/model.json",
        json.dumps({"system": "base", "epochs": 3, "config": {"model": {}}}).encode(),
        ": config: 'train' is a required property",
    ),
    "model.json: a size the page shows that is not a number": (
        f"{MODELS}/model.json",
        json.dumps(
            {
                "system": "base",
                "epochs": 3,
                "parameters": "9M",
                "config": {"model": {}, "train": {"optimizer": "sgd", "lr": 1.0, "batch_size": 4, "clip_norm": 5.0}},
            }
        ).encode(),
        ": parameters: '9M' is not of type 'integer'",
    ),
    "prep.json: splits not a mapping": (
        "data/en-de/prepared/prep.json",
        b'{"splits": [29000], "src_vocab": 10}',
        ": splits: [29000] is not of type 'object'",
    ),
    "raw stats.json: invalid JSON": ("data/en-de/raw/stats.json", b'{"splits": {}', ":1:14: invalid JSON: "),
    "attention matrix: a weight that is not a number": (
        "results/en-de/attention/global_location_feed.align.json",
        json.dumps({"line": 1, "src": ["a", "b"], "tgt": ["x"], "weights": [["high", 0.5]]}).encode(),
        ": weights[1][1]: 'high' is not of type 'number'",
    ),
    "attention matrix: not one row per target word": (
        "results/en-de/attention/global_location_feed.align.json",
        json.dumps({"line": 1, "src": ["a", "b"], "tgt": ["x", "y"], "weights": [[0.5, 0.5]]}).encode(),
        ": weights: must be one row per target word (2) of one weight per source word (2)",
    ),
    "monotonic benchmark: a speed-up written 12.3x": (
        "results/benchmarks/monotonic.json",
        json.dumps(MONOTONIC).encode(),
        ": contexts.cells[2].speedup: '12.3x' is not of type 'number'",
    ),
}


@pytest.mark.parametrize("case", sorted(REPORT_CASES))
def test_a_malformed_file_the_report_reads_is_one_line_and_the_report_stays(nmt, tmp_path, case):
    relative, content, expected = REPORT_CASES[case]
    (tmp_path / relative).parent.mkdir(parents=True)
    (tmp_path / relative).write_bytes(content)
    old = old_report(tmp_path)
    assert_one_line(nmt(REPORT, tmp_path), f"{tmp_path / relative}{expected}")
    assert snapshot(tmp_path / "out") == old


def test_a_malformed_attention_benchmark_is_one_line(nmt, tmp_path):
    bench = tmp_path / "results" / "benchmarks" / "attention.json"
    bench.parent.mkdir(parents=True)
    bench.write_text('{"rows": [], "speedups": []}')
    old = old_report(tmp_path)
    assert_one_line(nmt(REPORT, tmp_path), f"{bench}: 'device' is a required property")
    assert snapshot(tmp_path / "out") == old  # read while the page is drawn: the report is written whole


# -- nmt estimate: the throughput file and a report's claims.json -------------------------------------------------
ESTIMATE = [
    "estimate",
    "--params",
    str(ROOT / "params.yaml"),
    "--preset",
    "demo",
    "--data",
    "{d}/data",
    "--throughput",
    "{d}/throughput.json",
    "--json",
    "{d}/estimate.json",
]
THROUGHPUT = json.loads((ROOT / "benchmarks" / "throughput-demo-cpu.json").read_text(encoding="utf-8"))
ESTIMATE_CASES = {
    "throughput: measurements as a list": (
        "throughput",
        {**THROUGHPUT, "measurements": []},
        ": measurements: [] is not of type 'object'",
    ),
    "throughput: a speed that is not a number": (
        "throughput",
        {**THROUGHPUT, "measurements": {"k": {"tokens_per_s": "fast"}}},
        ": measurements.k.tokens_per_s: 'fast' is not of type 'number'",
    ),
    "throughput: a speed of 0 (divided by)": (
        "throughput",
        {**THROUGHPUT, "measurements": {"k": {"tgt_tokens_per_s": 0}}},
        ": measurements.k.tgt_tokens_per_s: 0 is less than or equal to the minimum of 0",
    ),
    "throughput: invalid JSON": ("throughput", '{"preset": "demo",}', ":1:19: invalid JSON: "),
    "claims.json: claims as a string": (
        "claims",
        {"preset": "demo", "claims": "all of them"},
        ": claims: 'all of them' is not of type 'array'",
    ),
    "claims.json: a claim without an id": (
        "claims",
        {"preset": "demo", "claims": [{"id": "a"}, {"id": "b"}, {"seeds_needed": 5}]},
        ": claims[3]: 'id' is a required property",
    ),
    "claims.json: trained as a string": (
        "claims",
        {"preset": "demo", "claims": [{"id": "a", "seeds_needed": 5, "trained": "base"}]},
        ": claims[1].trained: 'base' is not of type 'array', 'null'",
    ),
    "claims.json: not an object": ("claims", [], ": a report's claims file must be an object at the top level"),
}


@pytest.mark.parametrize("case", sorted(ESTIMATE_CASES))
def test_a_malformed_file_nmt_estimate_reads_is_one_line(nmt, tmp_path, case):
    which, content, expected = ESTIMATE_CASES[case]
    files = {"throughput": tmp_path / "throughput.json", "claims": tmp_path / "claims.json"}
    files["throughput"].write_text(json.dumps(THROUGHPUT))
    files["claims"].write_text(json.dumps({"preset": "demo", "claims": []}))
    files[which].write_text(content if isinstance(content, str) else json.dumps(content))
    (tmp_path / "estimate.json").write_text('{"earlier": true}\n')
    done = nmt([*ESTIMATE, "--claims", "{d}/claims.json"], tmp_path)
    assert_one_line(done, f"{files[which]}{expected}")
    assert done.stdout == "" and (tmp_path / "estimate.json").read_text() == '{"earlier": true}\n'


def test_a_malformed_prep_json_nmt_estimate_reads_is_one_line(nmt, tmp_path):
    prep = tmp_path / "data" / "en-de" / "prepared" / "prep.json"
    prep.parent.mkdir(parents=True)
    prep.write_text(json.dumps({"splits": {"train": {"sentences": 10}}, "src_vocab": 20, "tgt_vocab": 20}))
    (tmp_path / "throughput.json").write_text(json.dumps(THROUGHPUT))
    done = nmt(ESTIMATE, tmp_path)
    assert_one_line(done, f"{prep}: splits.train: 'tgt_tokens' is a required property")
    assert not (tmp_path / "estimate.json").exists()


# -- nmt evaluate on empty files; a vocabulary with invalid UTF-8 -------------------------------------------------
EVALUATE = [
    "evaluate",
    "--hyp",
    "{d}/hyp",
    "--ref",
    "{d}/ref",
    "--lang",
    "de",
    "--out",
    "{d}/scores.json",
    "--system",
    "s",
    "--testset",
    "test",
    "--preset-name",
    "demo",
    "--pair",
    "en-de",
]


@pytest.mark.parametrize(
    "more",
    [
        [],
        ["--src", "{d}/ref"],
        ["--positions", "{d}/hyp", "--src", "{d}/ref", "--unk-dict", "{d}/dict", "--unk-out", "{d}/unk"],
    ],
)
def test_nmt_evaluate_on_empty_hypothesis_and_reference_is_one_line(nmt, tmp_path, more):
    for name in ("hyp", "ref", "dict"):
        (tmp_path / name).write_bytes(b"")
    assert_one_line(
        nmt(EVALUATE + more, tmp_path), f"{tmp_path / 'ref'}: empty: no sentence to score {tmp_path / 'hyp'} against"
    )
    assert not (tmp_path / "scores.json").exists() and not (tmp_path / "unk").exists()


def test_a_vocabulary_with_invalid_utf8_is_one_line(nmt, tmp_path):
    prepared = tmp_path / "prepared"
    prepared.mkdir()
    (prepared / "vocab.src").write_bytes("\n".join(SPECIALS).encode() + b"\nhaus\nstra\xdfe\n")
    (prepared / "vocab.tgt").write_text("\n".join(SPECIALS) + "\nhouse\n")
    done = nmt(
        [
            "train",
            "--params",
            str(ROOT / "params.yaml"),
            "--preset",
            "tiny",
            "--table",
            str(ROOT / "workflow/tables/luong2015_table1.yaml"),
            "--system",
            "base",
            "--data",
            "{d}/prepared",
            "--out",
            "{d}/out",
        ],
        tmp_path,
    )
    assert_one_line(done, f"{prepared / 'vocab.src'}:6: invalid UTF-8 (byte 0xdf at column 5")
    assert not (tmp_path / "out").exists()
