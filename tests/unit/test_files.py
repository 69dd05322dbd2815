"""nmt.base.files, the one reader per file format: each problem of a text, YAML, JSON or JSON Lines file is one UserError
line naming the file, the line (and column) or the key, and the problem; a good file reads as before."""

import json

import pytest
import yaml

from nmt.base import files
from nmt.base.errors import ConfigError, InputError, UserError
from nmt.config.schema import validator


def write(tmp_path, name, content):
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return path


def one_line(err) -> str:
    text = str(err.value)
    assert "\n" not in text, text
    return text


# -- text -------------------------------------------------------------------------------------------------------
def test_text_is_strict_utf8_naming_line_column_and_offset(tmp_path):
    path = write(tmp_path, "t.txt", b"first\nab\xffc\n")
    with pytest.raises(InputError) as err:
        files.read_text(path, "a vocabulary file")
    assert one_line(err) == (f"{path}:2: invalid UTF-8 (byte 0xff at column 3, byte offset 8; not a UTF-8 text file?)")


def test_text_drops_a_byte_order_mark_and_keeps_the_rest(tmp_path):
    assert files.read_text(write(tmp_path, "t.txt", b"\xef\xbb\xbfa\xc3\xa9\r\nb\n")) == "a\u00e9\r\nb\n"


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda p: None, "no such file"),
        (lambda p: p.mkdir(), "is a directory, not the file"),
    ],
)
def test_a_missing_file_or_a_directory_is_one_line(tmp_path, make, message):
    path = tmp_path / "x"
    make(path)
    with pytest.raises(InputError) as err:
        files.read_text(path)
    assert one_line(err) == f"{path}: {message}"


def test_the_error_class_is_the_callers(tmp_path):
    with pytest.raises(ConfigError):
        files.read_yaml(write(tmp_path, "p.yaml", ""), "a preset", error=ConfigError)


# -- YAML -------------------------------------------------------------------------------------------------------
def test_yaml_reads_as_safe_load_does(tmp_path):
    text = "a: 1\nb: [x, {c: 2.5}]\nanchor: &base {lr: 1, batch: 2}\nmerged:\n  <<: *base\n  lr: 3\n"
    assert files.read_yaml(write(tmp_path, "ok.yaml", text)) == yaml.safe_load(text)


@pytest.mark.parametrize(
    "text, where, problem",
    [
        ("train:\n  lr: 1\n  lr: 2\n", ":3:3: ", "duplicate key 'lr' (first on line 2)"),
        ("preset: tiny\nmodel: {}\npreset: demo\n", ":3:1: ", "duplicate key 'preset' (first on line 1)"),
        ("- {a: 1, b: 2, a: 3}\n", ":1:16: ", "duplicate key 'a' (first on line 1)"),
        ("train: {lr: [1, 2\n", ":2:1: ", "invalid YAML: expected ',' or ']', but got '<stream end>'"),
        ("a: 1\n  b: 2\n", ":2:4: ", "invalid YAML: mapping values are not allowed here"),
        ("a: 1\nb: x\x00y\n", ":2:5: ", "invalid YAML: character U+0000 is not allowed (a binary file?)"),
        ("when: 2024-13-01\n", ": ", "invalid YAML: month must be in 1..12"),
    ],
)
def test_a_yaml_problem_is_one_line_with_its_line_and_column(tmp_path, text, where, problem):
    path = write(tmp_path, "p.yaml", text)
    with pytest.raises(InputError) as err:
        files.read_yaml(path, "a preset")
    assert one_line(err).startswith(f"{path}{where}{problem}")


@pytest.mark.parametrize(
    "content, why",
    [
        (b"", "(0 bytes)"),
        (b"# only a comment\n\n", "(no value in it"),
        (b"null\n", "(no value in it"),
        (b"~", "(no value in it"),
    ],
)
def test_an_empty_yaml_file_is_refused_unless_allowed(tmp_path, content, why):
    path = write(tmp_path, "p.yaml", content)
    with pytest.raises(InputError) as err:
        files.read_yaml(path, "a preset")
    assert one_line(err).startswith(f"{path}: a preset is empty {why}")
    assert files.read_yaml(path, "a preset", allow_empty=True) is None


def test_yaml_checked_against_a_schema_names_the_key(tmp_path):
    path = write(tmp_path, "c.yaml", "claims:\n  - {id: a}\n  - {id: b}\n  - {claim: x}\n")
    schema = {"type": "object", "properties": {"claims": {"type": "array", "items": {"required": ["id"]}}}}
    with pytest.raises(InputError) as err:
        files.read_yaml(path, "a claims file", schema=schema)
    assert one_line(err) == f"{path}: claims[3]: 'id' is a required property"


# -- JSON -------------------------------------------------------------------------------------------------------
def test_json_reads_an_object(tmp_path):
    assert files.read_json(write(tmp_path, "s.json", '{"bleu_tok": 12.5, "by_length": null}')) == {
        "bleu_tok": 12.5,
        "by_length": None,
    }
    assert files.read_json(write(tmp_path, "l.json", "[1, 2]"), top=list) == [1, 2]


@pytest.mark.parametrize(
    "content, where, problem",
    [
        ('{"bleu_tok": 12.5,\n "ppl": }\n', ":2:9: ", "invalid JSON: Expecting value"),
        ("", ":1:1: ", "invalid JSON: Expecting value"),
        (b'{"a": "\xe9"}', ":1: ", "invalid UTF-8 (byte 0xe9 at column 8, byte offset 7; not a UTF-8 text file?)"),
        ("[1, 2]", ": ", "a scores file must be an object at the top level, not an array"),
        ("12.5", ": ", "a scores file must be an object at the top level, not a number"),
        ('"text"', ": ", "a scores file must be an object at the top level, not a string"),
        ("[" * 100000 + "]" * 100000, ": ", "a scores file is nested too deeply"),
        ('{"n": ' + "9" * 5000 + "}", ": ", "invalid JSON: Exceeds the limit (4300 digits)"),
    ],
)
def test_a_json_problem_is_one_line(tmp_path, content, where, problem):
    path = write(tmp_path, "s.json", content)
    with pytest.raises(InputError) as err:
        files.read_json(path, "a scores file")
    assert one_line(err).startswith(f"{path}{where}{problem}")


@pytest.mark.parametrize(
    "change, message",
    [
        ({"bleu_tok": "high"}, "bleu_tok: 'high' is not of type 'number', 'null'"),
        ({"n_sentences": 2.5}, "n_sentences: 2.5 is not of type 'integer'"),
        ({"bleu_tok_bp": "0.9"}, "bleu_tok_bp: '0.9' is not of type 'number', 'null'"),
        (
            {"by_length": {"plain": [{"bleu_tok": 1.0, "n_sentences": 1, "min_len": 0}]}},
            "by_length.plain[1]: 'max_len' is a required property",
        ),
        ({"sentence_counts": {"aer": [[1, 2, 3]]}}, "sentence_counts.aer[1]: [1, 2, 3] is too short"),
    ],
)
def test_a_scores_file_that_breaks_its_schema_is_one_line_naming_the_key(tmp_path, change, message):
    good = {"system": "base", "testset": "test", "bleu_tok": 20.5, "bleu_tok_bp": 1.0, "n_sentences": 3}
    assert files.read_json(write(tmp_path, "ok.json", json.dumps(good)), schema=validator("scores")) == good
    path = write(tmp_path, "s.json", json.dumps({**good, **change}))
    with pytest.raises(InputError) as err:
        files.read_json(path, "a scores file", schema=validator("scores"))
    assert one_line(err) == f"{path}: {message}"


def test_a_huge_value_is_quoted_shortly(tmp_path):
    path = write(tmp_path, "s.json", json.dumps({"bleu_tok": "x" * 100000}))
    with pytest.raises(InputError) as err:
        files.read_json(path, "a scores file", schema=validator("scores"))
    assert len(one_line(err)) < len(str(path)) + 2 * files.MESSAGE_LIMIT


# -- JSON Lines -------------------------------------------------------------------------------------------------
def test_jsonl_reads_one_object_per_line_and_skips_blank_lines(tmp_path):
    path = write(tmp_path, "m.jsonl", '{"epoch": 1}\n\n{"epoch": 2}\r\n')
    assert files.read_jsonl(path) == [{"epoch": 1}, {"epoch": 2}]


@pytest.mark.parametrize(
    "content, where, problem",
    [
        ('{"epoch": 1, "lr": 1, "dev_ppl": 5}\n{"epoch": 2, "dev_ppl": \n', ":2:25: ", "invalid JSON: Expecting value"),
        ('{"epoch": 1, "lr": 1, "dev_ppl": "abc"}\n', ":1: ", "dev_ppl: 'abc' is not of type 'number'"),
        ('{"epoch": 1, "lr": 1}\n', ":1: ", "'dev_ppl' is a required property"),
        (
            '{"epoch": 1, "lr": 1, "dev_ppl": 5}\n[1]\n',
            ":2: ",
            "each line of metrics must be an object at the top level, not an array",
        ),
        (b'{"epoch": 1, "lr": 1, "dev_ppl": 5}\n{"x": "\xff"}\n', ":2: ", "invalid UTF-8 (byte 0xff at column 8"),
        ("", ": ", "metrics is empty (0 bytes)"),
        ("\n\n", ": ", "metrics is empty (no JSON line in it)"),
    ],
)
def test_a_jsonl_problem_is_one_line_naming_its_line(tmp_path, content, where, problem):
    path = write(tmp_path, "m.jsonl", content)
    with pytest.raises(InputError) as err:
        files.read_jsonl(path, "metrics", schema=validator("metrics"))
    assert one_line(err).startswith(f"{path}{where}{problem}")


def test_an_empty_jsonl_file_is_allowed_when_asked(tmp_path):
    assert files.read_jsonl(write(tmp_path, "m.jsonl", ""), allow_empty=True) == []


# -- the schemas describe the files the pipeline writes ---------------------------------------------------------
def test_the_published_reference_runs_files_are_valid(tmp_path):
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "docs" / "reproductions"
    checked = 0
    for pattern, schema, read in (
        ("*/results/*/scores/*.json", validator("scores"), files.read_json),
        ("*/results/*/models/*/model.json", validator("model", "described"), files.read_json),
        ("*/results/*/models/*/metrics.jsonl", validator("metrics"), files.read_jsonl),
    ):
        for path in sorted(root.glob(pattern)):
            read(path, "a file", schema=schema)
            checked += 1
    if not checked:
        pytest.skip("no published reference run in docs/reproductions")


def test_every_error_is_a_user_error(tmp_path):
    with pytest.raises(UserError):
        files.read_json(write(tmp_path, "x.json", "{"))
    with pytest.raises(ValueError):  # InputError is a ValueError too, as callers catch it
        files.read_yaml(write(tmp_path, "x.yaml", "a: [\n"))
