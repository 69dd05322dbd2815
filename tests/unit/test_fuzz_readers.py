"""Every reader fed mutated versions of a real file, through the command that reads it (issue 48): the command either
does its job (exit 0) or says what is wrong in one line (exit 2); never a traceback, never a crash.

Hypothesis draws the mutations of each file: cut short, bytes spliced in (invalid UTF-8, NUL, control characters),
emptied, and, for structured files, a value swapped for one of another type or size (a string for a number, "12.3x",
1e308, a list, a nested object, null), a key dropped, a line given twice (a YAML key twice). The commands run in this
process through `nmt`'s own entry (nmt.cli.main: its argument parsing and its one-line error handling), which keeps
the study inside CI's time.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from pathlib import Path

import pytest
import torch
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nmt.cli import main
from nmt.data.vocab import Vocab
from nmt.models.io import save_model

from factories import make_model, model_config

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = settings(
    max_examples=int(__import__("os").environ.get("NMT_FUZZ_EXAMPLES", "40")),
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# JSON values of every type and size a file could hold in a field's place
VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**30), 10**30)
    | st.just(10**400)
    | st.floats(allow_nan=False, allow_infinity=False, allow_subnormal=False)
    | st.sampled_from(["12.3x", "low", "", "\u00e9", "high"])
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)


def byte_mutations(original: bytes) -> st.SearchStrategy[bytes]:
    n = len(original)
    cut = st.integers(0, n).map(lambda i: original[:i])
    splice = st.tuples(st.integers(0, n), st.integers(0, 6), st.binary(min_size=1, max_size=6)).map(
        lambda t: original[: t[0]] + t[2] + original[t[0] + t[1] :]
    )
    invalid = st.integers(0, n).map(lambda i: original[:i] + b"\xff\xfe" + original[i:])
    return st.one_of(st.just(b""), cut, splice, invalid)


def leaf_paths(data, prefix=()) -> list[tuple]:
    """Every path to a value inside parsed JSON/YAML data, containers included."""
    paths = [prefix]
    if isinstance(data, dict):
        for key, value in data.items():
            paths += leaf_paths(value, prefix + (key,))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            paths += leaf_paths(value, prefix + (i,))
    return paths


def replaced(data, path: tuple, value, drop: bool):
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(data, dict):
        out = dict(data)
        if drop and not rest:
            out.pop(head, None)
        else:
            out[head] = replaced(data[head], rest, value, drop)
        return out
    out = list(data)
    if drop and not rest:
        del out[head]
    else:
        out[head] = replaced(data[head], rest, value, drop)
    return out


@st.composite
def structured_mutation(draw, data, dump) -> bytes:
    """One value of ``data`` swapped for another (or its key dropped), dumped back with ``dump``."""
    paths = leaf_paths(data)
    path = draw(st.sampled_from(paths))
    drop = bool(path) and draw(st.booleans())
    return dump(replaced(data, path, None if drop else draw(VALUES), drop))


def json_mutations(original: bytes) -> st.SearchStrategy[bytes]:
    data = json.loads(original)
    dump = lambda d: json.dumps(d).encode()  # noqa: E731
    return st.one_of(byte_mutations(original), structured_mutation(data, dump))


def yaml_mutations(original: bytes) -> st.SearchStrategy[bytes]:
    data = yaml.safe_load(original)
    lines = original.split(b"\n")
    twice = st.integers(0, len(lines) - 1).map(lambda i: b"\n".join(lines[: i + 1] + [lines[i]] + lines[i + 1 :]))
    dump = lambda d: yaml.safe_dump(d, sort_keys=False, allow_unicode=True).encode()  # noqa: E731
    return st.one_of(byte_mutations(original), twice, structured_mutation(data, dump))


def run(argv: list[str]) -> tuple[int, str]:
    """`nmt ARGV` in this process: its exit status and what it wrote to stderr."""
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            status = main(argv)
        except SystemExit as exit_:  # argparse
            status = exit_.code
    return status, err.getvalue()


def assert_done_or_one_line(status: int, err: str) -> None:
    assert "Traceback" not in err and "internal error" not in err, err
    assert status in (0, 2), (status, err)
    if status == 2:
        errors = [line for line in err.splitlines() if line.startswith("nmt: error: ")]
        assert len(errors) == 1 and err.rstrip("\n").endswith(errors[0]), err


# -- configuration: a preset and a table file, through `nmt config` ------------------------------------------------
@pytest.fixture(scope="module")
def params(tmp_path_factory) -> Path:
    """params.yaml with its presets in a directory of this test's own, every other file the repository's."""
    where = tmp_path_factory.mktemp("params")
    config = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    config["presets_dir"] = str(where / "presets")
    for key in ("tables", "figures", "claims"):
        config[key] = [str(ROOT / path) for path in config[key]]
    (where / "presets").mkdir()
    shutil.copy(ROOT / "workflow/presets/tiny.yaml", where / "presets" / "tiny.yaml")
    path = where / "params.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


@EXAMPLES
@given(preset=yaml_mutations((ROOT / "workflow/presets/tiny.yaml").read_bytes()))
def test_a_mutated_preset(params, preset):
    (params.parent / "presets" / "fuzz.yaml").write_bytes(preset)
    assert_done_or_one_line(*run(["config", "--params", str(params), "--preset", "fuzz"]))


@EXAMPLES
@given(table=yaml_mutations((ROOT / "workflow/tables/luong2015_table1.yaml").read_bytes()))
def test_a_mutated_table_file(params, tmp_path, table):
    path = tmp_path / "table.yaml"
    path.write_bytes(table)
    assert_done_or_one_line(
        *run(
            ["config", "--params", str(params), "--preset", "tiny", "--table", str(path), "--system", "global_location"]
        )
    )


# -- a report's files, through `nmt compare` ----------------------------------------------------------------------
ROWS = [
    {
        "label": "base",
        "system": "base",
        "status": "measured",
        "n_runs": 3,
        "paper_bleu_tok": 11.3,
        "ours_bleu_tok": 18.3,
        "ours_bleu_tok_sd": 0.4,
    },
    {
        "label": "global",
        "system": "global_location",
        "status": "measured",
        "n_runs": 3,
        "paper_bleu_tok": 16.8,
        "ours_bleu_tok": 31.9,
        "ours_bleu_tok_sd": 0.6,
    },
]
CLAIMS = {
    "preset": "small",
    "claims": [{"id": "luong-attention", "verdict": "reproduced", "ours_delta": 13.6, "ci_low": 12.1, "ci_high": 15.0}],
}


def write_report(where: Path, summary: bytes, rows: bytes, claims: bytes) -> Path:
    where.mkdir(parents=True, exist_ok=True)
    (where / "summary.json").write_bytes(summary)
    (where / "luong2015_table1.json").write_bytes(rows)
    (where / "claims.json").write_bytes(claims)
    return where


GOOD = {
    "summary": json.dumps({"luong2015_table1": {}}).encode(),
    "rows": json.dumps(ROWS).encode(),
    "claims": json.dumps(CLAIMS).encode(),
}


@EXAMPLES
@given(which=st.sampled_from(sorted(GOOD)), data=st.data())
def test_a_mutated_report_file(tmp_path, which, data):
    reference = write_report(tmp_path / "reference", GOOD["summary"], GOOD["rows"], GOOD["claims"])
    mutated = dict(GOOD, **{which: data.draw(json_mutations(GOOD[which]))})
    ours = write_report(tmp_path / "run", mutated["summary"], mutated["rows"], mutated["claims"])
    assert_done_or_one_line(*run(["compare", str(ours), str(reference)]))


# -- a translation, through `nmt evaluate` ------------------------------------------------------------------------
REFERENCE = "ein mann sitzt auf einer bank .\nzwei hunde spielen im schnee .\neine frau liest ein buch .\n"


@EXAMPLES
@given(hyp=byte_mutations(REFERENCE.replace("bank", "mauer").encode()))
def test_a_mutated_translation(tmp_path, hyp):
    (tmp_path / "hyp.txt").write_bytes(hyp)
    (tmp_path / "ref.txt").write_text(REFERENCE, encoding="utf-8")
    status, err = run(
        [
            "evaluate",
            "--hyp",
            str(tmp_path / "hyp.txt"),
            "--ref",
            str(tmp_path / "ref.txt"),
            "--lang",
            "de",
            "--out",
            str(tmp_path / "scores.json"),
            "--system",
            "x",
            "--testset",
            "test",
            "--preset-name",
            "p",
            "--pair",
            "en-de",
        ]
    )
    assert_done_or_one_line(status, err)
    if status == 0:
        assert json.loads((tmp_path / "scores.json").read_text(encoding="utf-8"))["n_sentences"] == 3


# -- a model file, through `nmt translate` --------------------------------------------------------------------------
MODEL = model_config(hidden=8, reverse=False, score="dot")
SRC, TGT = [f"s{i}" for i in range(6)], [f"t{i}" for i in range(5)]


@pytest.fixture(scope="module")
def model_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("model") / "model.pt"
    model = make_model(0, MODEL, src_vocab=len(SRC) + 4, tgt_vocab=len(TGT) + 4, init=None, train=True)
    save_model(path, model, Vocab(SRC), TGT, {"model": dict(MODEL), "translate": {"beam": 2}}, system="fuzz")
    return path


@st.composite
def model_mutations(draw, path: Path) -> bytes:
    """The model file's bytes mutated, or its payload with one entry (not a tensor) swapped and saved again."""
    original = path.read_bytes()
    if draw(st.booleans()):
        return draw(byte_mutations(original))
    payload = torch.load(path, weights_only=True)
    plain = {key: value for key, value in payload.items() if key != "state_dict"}
    key = draw(st.sampled_from(sorted(plain)))
    mutated = dict(payload, **{key: draw(VALUES)})
    buffer = io.BytesIO()
    torch.save(mutated, buffer)
    return buffer.getvalue()


@settings(
    max_examples=30,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_a_mutated_model_file(model_file, tmp_path, data):
    mutated = tmp_path / "model.pt"
    mutated.write_bytes(data.draw(model_mutations(model_file)))
    (tmp_path / "src.txt").write_text("s1 s2 s3\ns4 s5\n", encoding="utf-8")
    assert_done_or_one_line(
        *run(
            [
                "translate",
                "--model",
                str(mutated),
                "--src",
                str(tmp_path / "src.txt"),
                "--out",
                str(tmp_path / "out.txt"),
                "--device",
                "cpu",
            ]
        )
    )
