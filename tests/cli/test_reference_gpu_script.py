"""benchmarks/reference-gpu.sh stops on its own bad arguments: a seed the preset does not train, or a time limit that
is not a number of minutes, is one line and exit status 2 before anything runs (with no targets, Snakemake would
make the whole preset, every seed)."""

import subprocess

import pytest

from pipelines import ROOT

SCRIPT = ROOT / "benchmarks/reference-gpu.sh"


def run_script(*args):
    return subprocess.run(["bash", str(SCRIPT), *args], cwd=ROOT, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(
    "seeds, said",
    [
        ("7", "seed 7 is not one of train.seeds (1, 2, 3)"),
        ("1,9", "seed 9 is not one of train.seeds (1, 2, 3)"),
        ("x", "argument --seed: invalid int value: 'x'"),
    ],
)
def test_a_seed_the_preset_does_not_train_stops_the_run_before_snakemake(tmp_path, seeds, said):
    done = run_script(seeds, str(tmp_path / "out"), "1")
    assert done.returncode == 2, done.stderr
    assert said in done.stderr
    made = {p.name for p in (tmp_path / "out").iterdir()}
    assert "snakemake.log" not in made and "mps" not in made, made  # neither MPS nor Snakemake was started


@pytest.mark.parametrize("minutes", ["0", "five", "-3", "1.5"])
def test_a_time_limit_that_is_not_whole_minutes_stops_the_run(tmp_path, minutes):
    done = run_script("1", str(tmp_path / "out"), minutes)
    assert done.returncode == 2
    assert done.stderr == f"reference-gpu.sh: MINUTES: a whole number of minutes, got '{minutes}'\n"
