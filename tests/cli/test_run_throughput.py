"""nmt.bench.run_throughput: a run's aggregate training throughput (what benchmarks/reference-gpu.sh records for a
stretch of the GPU reference run), against sums done by hand."""

import json
import subprocess
import sys
from pathlib import Path

from nmt.bench.run_throughput import Trained, main, stretch_line, trained


def write_metrics(results: Path, pair: str, system: str, epochs: list[tuple[float, float]]) -> None:
    """A metrics.jsonl of finished epochs, each (tgt_tokens_per_s, elapsed_s)."""
    path = results / pair / "models" / system / "metrics.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join(
            json.dumps(
                {"epoch": i + 1, "lr": 0.01, "dev_ppl": 10.0 - i, "tgt_tokens_per_s": rate, "elapsed_s": seconds}
            )
            + "\n"
            for i, (rate, seconds) in enumerate(epochs)
        )
    )


def test_the_totals_are_the_sums_over_every_finished_epoch_of_every_training(tmp_path):
    results = tmp_path / "results" / "toy"
    write_metrics(results, "en-de", "base", [(1000.0, 2.0), (1500.0, 2.0)])
    write_metrics(results, "de-en", "attention", [(400.0, 5.0)])
    (results / "en-de" / "models" / "empty").mkdir(parents=True)  # a training that has not finished an epoch
    old = results / "en-de" / "models" / "old" / "metrics.jsonl"
    old.parent.mkdir(parents=True)
    old.write_text(json.dumps({"epoch": 1, "lr": 1.0, "dev_ppl": 5.0}) + "\n")  # written before the rates existed
    assert trained(results) == Trained(trainings=3, epochs=4, tokens=2000.0 + 3000.0 + 2000.0, training_s=9.0)


def test_a_stretch_is_the_difference_over_its_wall_time(tmp_path, capsys):
    results = tmp_path / "results"
    write_metrics(results, "en-de", "a", [(1000.0, 10.0)])
    assert main([str(results)]) == 0
    before = tmp_path / "before.json"
    before.write_text(capsys.readouterr().out)
    write_metrics(results, "en-de", "a", [(1000.0, 10.0), (3000.0, 10.0)])  # a second epoch of a, a first of b
    write_metrics(results, "en-de", "b", [(2000.0, 20.0)])
    assert main([str(results), "--since", str(before), "--seconds", "20"]) == 0
    line = capsys.readouterr().out.strip()
    # 30,000 + 40,000 tokens in 20 s: 3,500 tokens/s; 30 s of training in 20 s: 1.5 at once
    assert line == (
        "trained: 2 epochs, 70,000 target tokens in 20 s of wall time: 3,500 target tokens/s aggregate; "
        "30 s of training in all (on average 1.5 trainings at once); 2 trainings with an epoch"
    )
    assert stretch_line(Trained(), Trained(1, 1, 10.0, 1.0), 0.0).split(": ")[2].startswith("- target tokens/s")


def test_a_bad_totals_file_is_one_line_naming_it(tmp_path, capsys):
    results = tmp_path / "results"
    write_metrics(results, "en-de", "a", [(1000.0, 10.0)])
    since = tmp_path / "before.json"
    since.write_text('{"tokens": 1}')
    assert main([str(results), "--since", str(since), "--seconds", "5"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {since}:") and "'trainings' is a required property" in err[0]


def test_it_runs_as_a_module_as_the_gpu_script_calls_it(tmp_path):
    results = tmp_path / "results"
    write_metrics(results, "en-de", "a", [(100.0, 1.0)])
    done = subprocess.run(
        [sys.executable, "-m", "nmt.bench.run_throughput", str(results)], capture_output=True, text=True, check=True
    )
    assert json.loads(done.stdout) == {"trainings": 1, "epochs": 1, "tokens": 100.0, "training_s": 1.0}
