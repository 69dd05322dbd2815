"""The command line as a newcomer meets it (issue 49): every option explained, one example per command that runs,
`nmt --version`, tables named by id, an estimate before any download, and a `nmt --help` that imports nothing heavy."""

import argparse
import json
import resource
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from nmt.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
PARAMS = str(ROOT / "params.yaml")
HEAVY = ("torch", "numpy", "jsonschema", "yaml", "sacrebleu")


def nmt(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "nmt.cli", *args], cwd=cwd, capture_output=True, text=True)


def commands(parser=None, words=()):
    """(words, parser) of every command and command group below ``parser``."""
    parser = parser or build_parser()
    yield words, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from commands(child, (*words, name))


def is_leaf(parser) -> bool:
    return not any(isinstance(a, argparse._SubParsersAction) for a in parser._actions)


LEAVES = {" ".join(words): parser for words, parser in commands() if is_leaf(parser)}


def test_every_option_of_every_command_says_what_it_is():
    for words, parser in commands():
        for action in parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            assert action.help and action.help.strip(), (" ".join(words), action.option_strings or action.dest)


def test_every_command_ends_its_help_with_one_example():
    assert len(LEAVES) > 20
    for name, parser in LEAVES.items():
        epilog = parser.epilog or ""
        assert epilog.startswith("example: nmt ") and epilog.count("example:") == 1, name
        assert parser.format_help().rstrip().endswith(epilog), name  # printed whole, on one line
        words = shlex.split(epilog.removeprefix("example: "))
        assert words[1 : 1 + len(name.split())] == name.split(), (name, epilog)  # the example is of this command
        parser.parse_args(words[1 + len(name.split()) :])  # and its options are this command's


@pytest.fixture(scope="module")
def checkout(tmp_path_factory) -> Path:
    """A directory with the repository's params, workflow files and throughput files, and no data."""
    root = tmp_path_factory.mktemp("checkout")
    shutil.copy2(ROOT / "params.yaml", root / "params.yaml")
    shutil.copytree(ROOT / "workflow", root / "workflow", ignore=shutil.ignore_patterns("dvc"))
    shutil.copytree(ROOT / "benchmarks", root / "benchmarks", ignore=shutil.ignore_patterns("*.sh", "*.py", "*.txt"))
    return root


@pytest.mark.parametrize(
    "name", ["data list", "systems", "seed-targets", "config", "estimate", "dvc-yaml", "params-yaml"]
)
def test_the_examples_that_need_no_data_run(name, checkout):
    words = shlex.split(LEAVES[name].epilog.removeprefix("example: "))
    if name == "dvc-yaml":  # the example checks the stage files: write them first, as a checkout has them
        assert nmt("dvc-yaml", cwd=checkout).returncode == 0
    done = nmt(*words[1:], cwd=checkout)
    assert done.returncode == 0, (name, done.stderr)
    assert done.stdout.strip()


def test_version_names_the_package_version_and_the_commit():
    from importlib.metadata import version

    done = nmt("--version")
    assert done.returncode == 0, done.stderr
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    line = done.stdout.strip()
    assert line.startswith(f"nmt {version('nmt-repro')} ")
    if commit.returncode == 0:  # a checkout
        assert f"(commit {commit.stdout.strip()}" in line


def test_a_table_is_named_by_its_id_or_its_file():
    by_id = nmt("config", "--params", PARAMS, "--preset", "demo", "--table", "luong2015_table1", "--system", "base")
    by_file = nmt(
        "config",
        "--params",
        PARAMS,
        "--preset",
        "demo",
        "--table",
        "workflow/tables/luong2015_table1.yaml",
        "--system",
        "base",
    )
    assert by_id.returncode == 0 == by_file.returncode, by_id.stderr + by_file.stderr
    assert by_id.stdout == by_file.stdout and json.loads(by_id.stdout)["model"]
    wrong = nmt("config", "--params", PARAMS, "--preset", "demo", "--table", "luong2015_table9", "--system", "base")
    assert wrong.returncode == 2 and len(wrong.stderr.strip().splitlines()) == 1
    assert "luong2015_table9" in wrong.stderr and "luong2015_table1, luong2015_table2" in wrong.stderr
    train = nmt(
        "train",
        "--params",
        PARAMS,
        "--preset",
        "demo",
        "--table",
        "luong2015_table9",
        "--system",
        "base",
        "--data",
        "nowhere",
        "--out",
        "nowhere",
    )
    assert train.returncode == 2 and "its tables: luong2015_table1" in train.stderr


def test_the_estimate_needs_no_data_and_says_what_it_has_not_measured(tmp_path):
    throughput = ROOT / "benchmarks" / "throughput-small-cpu.json"
    done = nmt(
        "estimate",
        "--params",
        PARAMS,
        "--preset",
        "small",
        "--throughput",
        str(throughput),
        "--json",
        str(tmp_path / "estimate.json"),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "data").exists()  # nothing downloaded or prepared
    lines = done.stdout.splitlines()
    assert lines[0].startswith("preset small: ") and "not measured" in lines[0]
    # a table with no measured system says so, not 0 hours
    raffel = next(line for line in lines if line.startswith("raffel2017_table4 "))
    assert raffel.endswith("not measured")
    result = json.loads((tmp_path / "estimate.json").read_text())
    measured = {(r["task"], r["system"]): r for r in result["rows"] if r["hours"] is not None}
    # Multi30k's 29,000 training pairs as the registry states them, at the length the throughput was measured at
    base = measured[("en-de", "base")]
    assert base["train_pairs"] == 29_000 and "corpora.yaml" in base["size_source"]
    length = next(
        m["length"] for m in json.loads(throughput.read_text())["measurements"].values() if "en-de/base" in m["systems"]
    )
    assert base["tgt_tokens_per_epoch"] == 29_000 * (length + 1)
    assert any(r["hours"] is None for r in result["rows"])
    assert result["total_hours"] == pytest.approx(sum(r["hours"] for r in measured.values()))


def test_the_estimate_reads_the_throughput_file_it_is_given(tmp_path):
    throughput = json.loads((ROOT / "benchmarks" / "throughput-small-cpu.json").read_text())
    for measurement in throughput["measurements"].values():
        measurement["tokens_per_s"] *= 2  # twice as fast: half the hours
    faster = tmp_path / "faster.json"
    faster.write_text(json.dumps(throughput))
    hours = []
    for path in (ROOT / "benchmarks" / "throughput-small-cpu.json", faster):
        done = nmt(
            "estimate",
            "--params",
            PARAMS,
            "--preset",
            "small",
            "--throughput",
            str(path),
            "--json",
            str(tmp_path / "e.json"),
            cwd=tmp_path,
        )
        assert done.returncode == 0, done.stderr
        hours.append(json.loads((tmp_path / "e.json").read_text())["total_hours"])
    assert hours[1] == pytest.approx(hours[0] / 2)


HELP_IMPORTS = (
    "import sys\nfrom nmt.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
    "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})), file=sys.stderr)"
)


def test_help_imports_nothing_heavy():
    done = subprocess.run([sys.executable, "-c", HELP_IMPORTS], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    loaded = set(done.stderr.split())
    assert "argparse" in loaded and not loaded & set(HEAVY), sorted(loaded & set(HEAVY))


def help_cpu_seconds(runs: int = 10) -> float:
    """CPU seconds (user + system) of one `nmt --help`, the mean over ``runs`` processes."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    for _ in range(runs):
        subprocess.run([sys.executable, "-m", "nmt.cli", "--help"], cwd=ROOT, capture_output=True, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) / runs


def test_help_cpu_time_is_reported(capsys):
    seconds = help_cpu_seconds()
    with capsys.disabled():
        print(f"\nnmt --help: {1000 * seconds:.0f} ms of CPU (mean of 10 runs)")
    assert seconds > 0
