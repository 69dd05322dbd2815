"""Numbers as declared (issue 58, class 5): every number read from a settings file, a benchmark or a report is finite
and of its declared type (an integer written as one), checked where the file is read, with the file and key named
(nmt.base.files.StrictValidator); and inputs that would hang or overflow a reader are one line, not a traceback."""

import json
import math
import subprocess
import sys

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from nmt import config as cfg
from nmt.base.errors import ConfigError
from nmt.settings import PARAMS_SCHEMA

from pipelines import ROOT


def nmt(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "nmt.cli", *args], cwd=cwd, capture_output=True, text=True)


def number_keys(schema: dict, path: tuple = ()) -> list[tuple[tuple[str, ...], str]]:
    """(key path, "number" or "integer") of every leaf the params schema types as a number."""
    out = []
    for key, sub in schema.get("properties", {}).items():
        types = sub.get("type")
        types = {types} if isinstance(types, str) else set(types or ())
        if "object" in types or "properties" in sub:
            out += number_keys(sub, path + (key,))
        elif types & {"number", "integer"}:
            out.append((path + (key,), "integer" if "integer" in types and "number" not in types else "number"))
    return out


NUMBER_KEYS = number_keys(PARAMS_SCHEMA)
DEMO = cfg.load_params(ROOT / "params.yaml", "demo")


def with_value(config: dict, path: tuple[str, ...], value) -> dict:
    config = json.loads(json.dumps(config))
    node = config
    for key in path[:-1]:
        node = node.setdefault(key, {})
    node[path[-1]] = value
    return config


def test_the_params_schema_has_number_keys_to_check():
    paths = {".".join(path) for path, _ in NUMBER_KEYS}
    assert {"train.lr", "train.clip_norm", "model.layers", "verdicts.converged_within"} <= paths


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(NUMBER_KEYS), st.sampled_from([math.nan, math.inf, -math.inf]))
def test_a_number_that_is_not_finite_is_refused_naming_its_key(key, value):
    path, _ = key
    with pytest.raises(ConfigError, match=rf"bad config key {'.'.join(path)}: .* is not a finite number"):
        cfg.validate(with_value(DEMO, path, value), "params.yaml")


@settings(max_examples=100, deadline=None)
@given(st.sampled_from([k for k in NUMBER_KEYS if k[1] == "integer"]), st.integers(1, 1000))
def test_an_integer_written_as_a_float_is_refused_naming_its_key(key, whole):
    path, _ = key
    with pytest.raises(
        ConfigError,
        match=rf"bad config key {'.'.join(path)}: {float(whole)} is not an integer "
        rf"\(write {whole}\)",
    ):
        cfg.validate(with_value(DEMO, path, float(whole)), "params.yaml")


@pytest.mark.parametrize(
    "section, key, value, said",
    [
        ("train", "lr", ".nan", "train.lr: nan is not a finite number"),
        ("train", "clip_norm", ".inf", "train.clip_norm: inf is not a finite number"),
        ("model", "layers", "2.0", "model.layers: 2.0 is not an integer (write 2)"),
        ("verdicts", "converged_within", ".nan", "verdicts.converged_within: nan is not a finite number"),
    ],
)
def test_nmt_config_refuses_impossible_numbers_in_one_line(tmp_path, section, key, value, said):
    text = (ROOT / "params.yaml").read_text()
    params = yaml.safe_load(text)
    assert key in params[section]
    params[section][key] = yaml.safe_load(value)
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    (tmp_path / "workflow").symlink_to(ROOT / "workflow")
    done = nmt("config", "--params", "params.yaml", "--preset", "demo", cwd=tmp_path)
    assert done.returncode == 2 and done.stderr == f"nmt: error: params.yaml: bad config key {said}\n"


def test_a_throughput_that_is_not_finite_estimates_nothing(tmp_path):
    bench = json.loads((ROOT / "benchmarks/throughput-small-cpu.json").read_text())
    first = next(iter(bench["measurements"].values()))
    first["tgt_tokens_per_s"] = first["tokens_per_s"] = math.inf
    (tmp_path / "t.json").write_text(json.dumps(bench))  # json writes Infinity, as a hand edit or a bug would
    done = nmt("estimate", "--preset", "small", "--throughput", str(tmp_path / "t.json"))
    assert done.returncode == 2, done.stdout
    assert done.stderr.startswith(f"nmt: error: {tmp_path / 't.json'}: ") and "is not a finite number" in done.stderr


@pytest.mark.parametrize(
    "args, said",
    [
        (("config", "--params", "/dev/zero"), "nmt: error: /dev/zero: is a device, not the params file\n"),
        (
            ("config", "--preset", ""),
            "nmt: error: preset: an empty name; give one of workflow/presets/ (or none for params.yaml's preset)\n",
        ),
    ],
)
def test_inputs_that_would_hang_or_mean_something_else_are_one_line(args, said):
    done = nmt(*args)
    assert done.returncode == 2 and done.stderr == said


def test_a_report_claim_whose_seeds_overflow_is_refused_naming_it(tmp_path):
    claims = json.loads((ROOT / "docs/reproductions/small-gpu/claims.json").read_text())
    claims["preset"], claims["claims"][0]["seeds_needed"] = "small", 7
    (tmp_path / "claims.json").write_text(json.dumps(claims).replace('"seeds_needed": 7', '"seeds_needed": 1e400', 1))
    done = nmt(
        "estimate",
        "--preset",
        "small",
        "--throughput",
        "benchmarks/throughput-small-cpu.json",
        "--claims",
        str(tmp_path / "claims.json"),
    )
    assert done.returncode == 2
    assert (
        done.stderr == f"nmt: error: {tmp_path / 'claims.json'}: claims[1].seeds_needed: inf is not a finite number\n"
    )
