"""The run files' modules (nmt.records): each writes its file as the pipeline always has (the same bytes: key order,
indentation, trailing newline), reads back what it wrote, and refuses a malformed file with one line naming it."""

from __future__ import annotations

import json

import pytest

from nmt.base import layout
from nmt.base.errors import ConfigError, InputError
from nmt.records import benchmarks, metrics, model_info, report_files, scores

EPOCHS = [
    {"epoch": 1, "updates": 10, "lr": 1.0, "dev_ppl": 40.5, "elapsed_s": 2.0, "tgt_tokens_per_s": 100.0},
    {"epoch": 2, "updates": 20, "lr": 0.5, "dev_ppl": 30.25, "elapsed_s": 2.5, "tgt_tokens_per_s": 90.0},
]


def one_line(err: pytest.ExceptionInfo) -> str:
    text = str(err.value)
    assert "\n" not in text
    return text


def test_the_names_and_paths_are_the_layouts(tmp_path):
    assert (metrics.NAME, metrics.CSV_NAME, model_info.NAME) == ("metrics.jsonl", "metrics.csv", "model.json")
    assert (report_files.CLAIMS_NAME, report_files.SUMMARY_NAME, scores.DIR_NAME) == (
        "claims.json",
        "summary.json",
        "scores",
    )
    results = tmp_path / "results" / "demo"
    fields = dict(pair="en-de", system="base")
    assert metrics.metrics_path(results, **fields) == layout.under(
        results, layout.RESULTS_ROOT, layout.METRICS, **fields
    )
    assert model_info.model_info_path(results, **fields) == results / "en-de/models/base" / model_info.NAME
    assert scores.run_scores_path(results, "en-de", "base", "test") == results / "en-de/scores/base.test.json"
    assert scores.scores_path(scores.scores_dir(results, "en-de"), "base", "test") == scores.run_scores_path(
        results, "en-de", "base", "test"
    )
    assert benchmarks.throughput_path("tiny", "cpu") == "benchmarks/throughput-tiny-cpu.json"


# -- metrics ---------------------------------------------------------------------------------------------------------
def test_metrics_are_one_sorted_json_line_per_epoch_and_a_csv_beside_them(tmp_path):
    metrics.write_metrics(tmp_path, EPOCHS)
    assert (tmp_path / metrics.NAME).read_text() == "".join(json.dumps(r, sort_keys=True) + "\n" for r in EPOCHS)
    columns = sorted(EPOCHS[0])
    assert (tmp_path / metrics.CSV_NAME).read_text().split("\n") == [
        ",".join(columns),
        *(",".join(repr(r[c]) for c in columns) for r in EPOCHS),
        "",
    ]
    assert metrics.read_metrics(tmp_path / metrics.NAME) == EPOCHS
    assert metrics.read_epochs(tmp_path / metrics.NAME) == EPOCHS


def test_the_evaluations_file_is_one_sorted_json_line_per_evaluation(tmp_path):
    evaluations = [{"updates": 5, "epoch": 1, "dev_ppl": 50.0}, {"updates": 10, "epoch": 1, "dev_ppl": 45.0}]
    metrics.write_evaluations(tmp_path, evaluations)
    assert (tmp_path / metrics.EVALUATIONS_NAME).read_text() == "".join(
        json.dumps(e, sort_keys=True) + "\n" for e in evaluations
    )


def test_an_empty_metrics_file_is_a_damaged_record_for_the_report_and_an_empty_file_for_the_export(tmp_path):
    path = tmp_path / metrics.NAME
    path.write_text("")
    with pytest.raises(InputError) as err:
        metrics.read_metrics(path)
    assert one_line(err) == (
        f"{path}: empty: no epoch recorded (nmt train writes it once an epoch has finished); "
        "train the system again, or remove its directory to leave it out"
    )
    with pytest.raises(InputError) as err:
        metrics.read_epochs(path)
    assert one_line(err) == f"{path}: a training's metrics is empty (0 bytes)"
    assert metrics.read_epochs(path, allow_empty=True) == []


def test_a_malformed_metrics_line_names_the_file_the_line_and_the_key(tmp_path):
    path = tmp_path / metrics.NAME
    path.write_text(json.dumps(EPOCHS[0]) + "\n" + json.dumps({**EPOCHS[1], "dev_ppl": "high"}) + "\n")
    with pytest.raises(InputError) as err:
        metrics.read_metrics(path)
    assert one_line(err).startswith(f"{path}:2: ") and "dev_ppl" in one_line(err)


def test_the_digest_ties_the_metrics_to_the_model_info_that_recorded_them(tmp_path):
    meta = {metrics.DIGEST_KEY: metrics.metrics_digest(EPOCHS)}
    metrics.check_metrics(meta, EPOCHS, tmp_path / "m", tmp_path / "j")
    metrics.check_metrics({}, EPOCHS[:1], tmp_path / "m", tmp_path / "j")  # written before the digest: not checked
    assert metrics.metrics_digest(EPOCHS) == metrics.metrics_digest([dict(reversed(r.items())) for r in EPOCHS])
    with pytest.raises(InputError) as err:
        metrics.check_metrics(meta, EPOCHS[:1], tmp_path / "m", tmp_path / "j")
    assert one_line(err) == (
        f"{tmp_path / 'm'}: not the epochs the training of {tmp_path / 'j'} recorded (its "
        "metrics_digest differs: another training's metrics, or edited); put that training's "
        "metrics.jsonl back, or train the system again"
    )


def test_metrics_files_lists_every_training_of_a_results_directory(tmp_path):
    for pair, system in (("en-de", "b"), ("de-en", "a")):
        metrics.write_metrics(metrics.metrics_path(tmp_path, pair, system).parent, EPOCHS)
    assert metrics.metrics_files(tmp_path) == sorted(
        [metrics.metrics_path(tmp_path, "de-en", "a"), metrics.metrics_path(tmp_path, "en-de", "b")]
    )


# -- model info ------------------------------------------------------------------------------------------------------
def test_model_info_is_sorted_indented_ascii_json(tmp_path):
    meta = {
        "system": "base",
        "parameters": 12,
        "config": {"train": {"seed": 1}, "model": {"arch": "luong"}},
        "device": "cpu",
        "note": "caf\u00e9",
    }
    model_info.write_model_info(tmp_path, meta)
    assert (tmp_path / model_info.NAME).read_text() == json.dumps(meta, indent=2, sort_keys=True) + "\n"
    assert model_info.read_model_info(tmp_path / model_info.NAME) == meta


def test_malformed_model_info_is_one_line_naming_the_file_and_the_key(tmp_path):
    path = tmp_path / model_info.NAME
    path.write_text(json.dumps({"system": 3}))
    with pytest.raises(InputError) as err:
        model_info.read_model_info(path)
    assert one_line(err).startswith(f"{path}: system: ")
    path.write_text("{")
    with pytest.raises(InputError) as err:
        model_info.read_model_info(path)
    assert one_line(err).startswith(f"{path}:1:2: invalid JSON")


# -- scores ----------------------------------------------------------------------------------------------------------
def test_a_scores_file_is_written_and_read_back(tmp_path):
    record = {
        "system": "base",
        "testset": "test",
        "preset": "tiny",
        "pair": "en-de",
        "bleu_tok": 12.5,
        "hyp": "h\u00e9.txt",
    }
    path = scores.run_scores_path(tmp_path, "en-de", "base", "test")
    scores.write_scores(path, record)
    assert path.read_text(encoding="utf-8") == json.dumps(record, sort_keys=True, indent=2, ensure_ascii=False) + "\n"
    assert scores.read_scores(path, system="base", testset="test", pair="en-de", preset="tiny") == record
    assert scores.scores_files(tmp_path) == [path]
    assert scores.preset_named(tmp_path) == "tiny"


def test_a_scores_file_of_another_run_or_with_a_bad_value_is_refused_in_one_line(tmp_path):
    path = tmp_path / "base.test.json"
    scores.write_scores(path, {"system": "base", "bleu_tok": 12.5})
    with pytest.raises(InputError) as err:
        scores.read_scores(path, system="other")
    assert one_line(err) == f"{path}: 'system' is 'base', expected 'other'"
    path.write_text(json.dumps({"bleu_tok": "high"}))
    with pytest.raises(InputError) as err:
        scores.read_scores(path)
    assert one_line(err).startswith(f"{path}: bleu_tok: 'high' is not of type")


# -- a report's claims file and summary ------------------------------------------------------------------------------
def test_the_claims_file_and_the_summary_keep_their_key_order(tmp_path):
    record = {"preset": "tiny", "rule": {"alpha": 0.05}, "claims": [{"id": "b", "verdict": None}, {"id": "a"}]}
    summary = {"t2": {"base": {"bleu": 1.5}}, "t1": {}}
    report_files.write_claims(tmp_path, record)
    report_files.write_summary(tmp_path, summary)
    assert (tmp_path / report_files.CLAIMS_NAME).read_text() == json.dumps(record, indent=2) + "\n"
    assert list(report_files.read_summary(tmp_path)) == ["t2", "t1"]
    assert report_files.read_claims(tmp_path) == record
    assert report_files.read_claims_file(tmp_path / report_files.CLAIMS_NAME) == record
    with pytest.raises(ValueError):
        report_files.report_json({"x": float("nan")})


def test_a_claims_file_that_is_not_there_or_malformed_is_one_line(tmp_path):
    with pytest.raises(ConfigError) as err:
        report_files.read_claims_file(tmp_path / "nothing.json")
    assert one_line(err) == f"{tmp_path / 'nothing.json'}: no such file; give the claims.json that `nmt report` wrote"
    report_files.write_report_json(tmp_path / report_files.CLAIMS_NAME, {"claims": [{"id": 3}]})
    with pytest.raises(InputError) as err:
        report_files.read_claims(tmp_path)
    assert one_line(err) == f"{tmp_path / report_files.CLAIMS_NAME}: claims[1].id: 3 is not of type 'string'"


# -- benchmarks and throughput ---------------------------------------------------------------------------------------
def test_a_throughput_file_is_written_and_read_back(tmp_path):
    result = {
        "preset": "tiny",
        "device": "cpu",
        "device_type": "cpu",
        "date": "2025-01-01",
        "torch": "2",
        "measurements": {"k": {"systems": ["base"], "tokens_per_s": 10.0}},
    }
    path = tmp_path / benchmarks.throughput_path("tiny", "cpu")
    benchmarks.write_measurement(path, result)
    assert path.read_text() == json.dumps(result, sort_keys=True, indent=2) + "\n"
    assert benchmarks.read_throughput(path) == result


def test_a_throughput_file_that_is_not_there_or_malformed_is_one_config_error(tmp_path):
    with pytest.raises(ConfigError) as err:
        benchmarks.read_throughput(tmp_path / "t.json")
    assert one_line(err) == f"{tmp_path / 't.json'}: no such file; write it with `nmt bench train`"
    (tmp_path / "t.json").write_text(json.dumps({"preset": "tiny"}))
    with pytest.raises(ConfigError) as err:
        benchmarks.read_throughput(tmp_path / "t.json")
    assert one_line(err).startswith(f"{tmp_path / 't.json'}: ")
