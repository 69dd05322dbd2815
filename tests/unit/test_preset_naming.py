"""A misspelt preset is blamed on where it was given (--preset, Snakemake's --config or --configfile, params.yaml)
with the nearest preset; Snakemake's --config may set the preset alone (nmt.pipeline.snakemake_config)."""

from pathlib import Path

import pytest
import yaml

from nmt import config as cfg
from nmt.pipeline import snakemake_config

ROOT = Path(__file__).resolve().parents[2]


def test_a_preset_given_with_preset_is_blamed_on_it():
    with pytest.raises(cfg.ConfigError) as err:
        cfg.load_params(ROOT / "params.yaml", "smal")
    assert str(err.value).startswith("--preset smal: unknown preset 'smal' (did you mean 'small'?); known presets: ")


def test_a_preset_named_by_the_params_file_is_blamed_on_it(tmp_path):
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    params["preset"] = "tinny"
    params["presets_dir"] = str(ROOT / params["presets_dir"])
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    with pytest.raises(cfg.ConfigError) as err:
        cfg.load_params(tmp_path / "params.yaml")
    assert str(err.value).startswith(f"{tmp_path / 'params.yaml'}: unknown preset 'tinny' (did you mean 'tiny'?)")


def test_no_suggestion_when_nothing_is_near():
    with pytest.raises(cfg.ConfigError, match=r"^--preset huge: unknown preset 'huge'; known presets: .*demo"):
        cfg.load_params(ROOT / "params.yaml", "huge")


def test_where_snakemake_was_told_the_preset():
    where = snakemake_config.where_preset_named
    assert where({"preset": "tinny"}, {"preset": "tinny"}, [], "params.yaml") == "--config preset=tinny"
    assert where({}, {"preset": "tinny"}, ["/tmp/mine.yaml"], "params.yaml") == "--configfile /tmp/mine.yaml"
    assert where({}, {}, [], "params.yaml") == "params.yaml"


def test_only_the_preset_may_be_overridden():
    assert snakemake_config.refused_keys({"preset": "tiny"}) is None
    assert snakemake_config.refused_keys({}) is None
    line = snakemake_config.refused_keys({"preset": "tiny", "train": {"lr": 0.1}, "beam_size": 3})
    assert line.startswith("--config/--configfile may only set `preset` (got beam_size, train); ")
    assert "\n" not in line
