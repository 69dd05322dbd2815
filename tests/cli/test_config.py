"""Configuration: presets merge over params.yaml; bad keys and types fail with a message naming them."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from nmt import config as cfg
from nmt import settings
from nmt.config import plan
from nmt.settings.origins import Layered

import required

ROOT = Path(__file__).resolve().parents[2]


def write_params(tmp_path, preset_overrides, params_overrides=None):
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    params.update(params_overrides or {})
    params["presets_dir"] = "presets"
    params["tables"] = [str(ROOT / t) for t in params["tables"]]
    params["figures"] = [str(ROOT / f) for f in params.get("figures", [])]
    (tmp_path / "presets").mkdir(exist_ok=True)
    base = yaml.safe_load((ROOT / "workflow/presets/tiny.yaml").read_text())
    (tmp_path / "presets" / "tiny.yaml").write_text(yaml.safe_dump(Layered(base).merge(preset_overrides, str).values))
    params["preset"] = "tiny"
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    return tmp_path / "params.yaml"


@pytest.mark.parametrize("preset", ["demo", "tiny", "small", "paper"])
def test_shipped_presets_are_valid(preset):
    config = cfg.load_params(ROOT / "params.yaml", preset)
    assert config["preset"] == preset
    trained = plan.collect_systems(config, ROOT)
    # the presets meant for verdicts train three seeds of every system, the demo and tiny one
    systems = {task: {s: t for s, t in by.items() if not cfg.SEED_RUN.match(s)} for task, by in trained.items()}
    for task, by in systems.items():
        seeds = [f"{s}_seed{n}" for s in by for n in (2, 3)]
        if preset in ("small", "paper"):
            assert set(trained[task]) == set(by) | set(seeds), task
        else:
            assert trained[task] == by, task
    table = {n: cfg.load_table(ROOT / f"workflow/tables/luong2015_table{n}.yaml") for n in (1, 3, 4)}
    # Table 1's systems, then Table 4's grid without the two it shares with Table 1; Table 3 is De->En
    # Peter et al.'s tables run on the Europarl tasks: demo, tiny and small play them with their own de-en / en-de
    # corpus (same_as), the paper preset with Europarl v7. Demo and tiny have gold alignments, so Table 1 trains its
    # RNNsearch systems in both directions; small and paper (before the RWTH licence is accepted) cannot score it,
    # so only the De->En systems the guided-BLEU follow-up needs are trained.
    peter = list(cfg.load_table(ROOT / "workflow/tables/peter2017_table1.yaml")["systems"])
    follow_up = ["rnnsearch_guided_by_tf"]  # De->En only: its table translates
    both_ways = preset in ("demo", "tiny")
    assert list(systems["en-de"]) == list(
        dict.fromkeys([*table[1]["systems"], *table[4]["systems"], *(peter if both_ways else [])])
    )
    if preset == "paper":
        assert list(systems["de-en"]) == list(table[3]["systems"])
        assert list(systems["de-en-europarl"]) == peter + follow_up and "en-de-europarl" not in systems
        assert cfg.corpus_for_task(config, "de-en-europarl")["corpus"] == "europarl_v7_de_en"
    else:
        assert list(systems["de-en"]) == list(table[3]["systems"]) + peter + follow_up
        assert "de-en-europarl" not in systems  # trained once, under the task that plays it
    members = plan.collect_ensembles(config, ROOT)["en-de"]["ensemble_attention"]["members"]
    assert len(members) == 8 and set(members) <= set(systems["en-de"])
    # Raffel Table 4: softmax, monotonic eq. 16 and eq. 17, greedy; the two monotonic ones decoded soft and hard
    assert list(systems["en-vi"]) == ["softmax_dot", "monotonic_eq16", "monotonic_eq17"]
    envi = cfg.corpus_for_task(config, "en-vi")
    assert envi["corpus"] == ("synth" if preset in ("demo", "tiny") else "iwslt15_en_vi_stanford")
    for name in systems["en-vi"]:
        resolved = cfg.system_config(config, cfg.load_table(ROOT / systems["en-vi"][name]), name)
        assert resolved["model"]["reverse"] is False and resolved["model"]["input_feed"] is True


def test_preset_overrides_defaults_and_table_overrides_preset():
    config = cfg.load_params(ROOT / "params.yaml", "tiny")
    assert config["model"]["hidden"] == 32 and config["train"]["clip_norm"] == 5.0
    table = cfg.load_table(ROOT / "workflow/tables/luong2015_table1.yaml")
    system = cfg.system_config(config, table, "global_location_feed")
    assert system["model"]["attention"] == "global" and system["model"]["input_feed"] is True
    assert system["model"]["hidden"] == 32


@pytest.mark.parametrize(
    "overrides, expected",
    [
        ({"train": {"lerning_rate": 1.0}}, "train: Additional properties are not allowed ('lerning_rate'"),
        ({"train": {"lr": "fast"}}, "train.lr: 'fast' is not of type 'number'"),
        ({"model": {"score": "cosine"}}, "model.score: 'cosine' is not one of"),
        ({"model": {"layers": 0}}, "model.layers: 0 is less than the minimum of 1"),
    ],
)
def test_bad_keys_and_types_are_named(tmp_path, overrides, expected):
    params = write_params(tmp_path, overrides)
    with pytest.raises(cfg.ConfigError) as err:
        cfg.load_params(params)
    assert expected in str(err.value)
    assert "tiny.yaml" in str(err.value)


def test_unknown_preset_and_system_are_named(tmp_path):
    with pytest.raises(cfg.ConfigError, match="unknown preset 'huge'; known presets: .*demo"):
        cfg.load_params(ROOT / "params.yaml", "huge")
    config = cfg.load_params(ROOT / "params.yaml", "tiny")
    table = cfg.load_table(ROOT / "workflow/tables/luong2015_table1.yaml")
    with pytest.raises(cfg.ConfigError, match="unknown system 'global_dot'; known systems: base"):
        cfg.system_config(config, table, "global_dot")


def test_cli_reports_config_errors_without_a_traceback(tmp_path):
    params = write_params(tmp_path, {"translate": {"beam": -1}})
    result = subprocess.run(
        [sys.executable, "-m", "nmt.cli", "systems", "--params", str(params)], capture_output=True, text=True
    )
    assert result.returncode == 2
    assert "translate.beam: -1 is less than the minimum of 1" in result.stderr
    assert "Traceback" not in result.stderr


def test_snakemake_rejects_overrides_other_than_the_preset(tmp_path):
    required.module("snakemake")
    result = subprocess.run(
        ["snakemake", "-n", "--cores", "1", "--config", "preset=tiny", "beam_size=3"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode != 0
    assert "may only set `preset` (got beam_size)" in result.stdout + result.stderr


def test_snakemake_names_a_bad_key_in_a_preset(tmp_path):
    required.module("snakemake")
    work = tmp_path / "wf"
    shutil.copytree(ROOT / "workflow", work / "workflow")
    shutil.copy2(ROOT / "Snakefile", work / "Snakefile")
    shutil.copy2(ROOT / "params.yaml", work / "params.yaml")
    preset = work / "workflow/presets/tiny.yaml"
    preset.write_text(preset.read_text() + "beam_size: 3\n")
    result = subprocess.run(
        ["snakemake", "-n", "--cores", "1", "--config", "preset=tiny"], cwd=work, capture_output=True, text=True
    )
    assert result.returncode != 0
    assert "Additional properties are not allowed ('beam_size'" in result.stdout + result.stderr


def test_table_file_errors_are_config_errors_naming_file_and_row(tmp_path):
    table = yaml.safe_load((ROOT / "workflow/tables/luong2015_table1.yaml").read_text())
    table["rows"][4]["system"] = "bsae"
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(table))
    with pytest.raises(cfg.ConfigError, match=r"t\.yaml.*row 5.*bsae"):
        cfg.load_table(path)


def test_paper_preset_is_the_paper_recipe():
    config = cfg.load_params(ROOT / "params.yaml", "paper")
    model, train, prep = config["model"], config["train"], config["prepare"]
    assert (model["layers"], model["hidden"], model["embed"]) == (4, 1000, 1000)
    assert (prep["src_vocab"], prep["tgt_vocab"], prep["max_len"]) == (50000, 50000, 50)
    assert (train["optimizer"], train["lr"], train["epochs"], train["halve_after"]) == ("sgd", 1.0, 10, 5)
    assert train["dropout_schedule"] == {"epochs": 12, "halve_after": 8}
    assert (train["batch_size"], train["clip_norm"], train["init_range"]) == (128, 5.0, 0.1)
    assert cfg.corpus_for_task(config, "en-de")["splits"]["test"] == "newstest2014"


def _raffel_table(tmp_path, **changes):
    table = yaml.safe_load((ROOT / "workflow/tables/raffel2017_table4.yaml").read_text())
    table["decodings"].update(changes)
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(table))
    return path


def test_decodings_are_one_member_entries_with_their_options():
    table = cfg.load_table(ROOT / "workflow/tables/raffel2017_table4.yaml")
    hard = table["ensembles"]["monotonic_eq16_hard"]
    assert hard == {"members": ["monotonic_eq16"], "combine": None, "decode": {"beam": 1, "monotonic": "hard"}}
    ensembles = plan.collect_ensembles(cfg.load_params(ROOT / "params.yaml", "tiny"), ROOT)["en-vi"]
    assert plan.decode_options(ensembles, "monotonic_eq16_hard") == {"beam": 1, "monotonic": "hard"}
    assert plan.decode_options(ensembles, "monotonic_eq16") == {}
    assert not plan.is_ensemble(ensembles, "monotonic_eq16_hard")  # its perplexity is its system's
    paths, combine = plan.model_files(ensembles, "monotonic_eq16_hard", "models")
    assert paths == [Path("models/monotonic_eq16/model.pt")] and combine is None


@pytest.mark.parametrize(
    "decoding, expected",
    [
        (
            {"system": "monotonic_eq16", "monotonic": "sideways"},
            r"decodings\.bad\.monotonic: 'sideways' is not one of \['soft', 'hard'\]",
        ),
        ({"system": "monotonic_eq16", "beam": 0}, r"decodings\.bad\.beam: 0 is less than the minimum of 1"),
        ({"system": "monotonic_eq16"}, r"decodings\.bad changes nothing"),
        ({"beam": 1}, r"decodings\.bad: 'system' is a required property"),
        (
            {"system": "monotonic_eq16", "beam": 1, "lenght_penalty": 1},
            r"decodings\.bad: Additional properties .*'lenght_penalty' was unexpected",
        ),
    ],
)
def test_bad_decodings_are_named(tmp_path, decoding, expected):
    with pytest.raises(cfg.ConfigError, match=r"t\.yaml: " + expected):
        cfg.load_table(_raffel_table(tmp_path, bad=decoding))


def test_a_decoding_of_an_untrained_system_is_named(tmp_path):
    path = _raffel_table(tmp_path, bad={"system": "monotonic_eq18", "beam": 1})
    config = cfg.load_params(ROOT / "params.yaml", "tiny")
    config["tables"] = [str(path)]
    with pytest.raises(cfg.ConfigError, match=r"t\.yaml: decodings\.bad: member\(s\) 'monotonic_eq18' are not trained"):
        plan.collect_ensembles(config, ROOT)


def test_the_table_schema_offers_exactly_the_choices_the_code_knows():
    """schemas/tables.schema.yaml's enums and nmt.config.table_files' constants are one list each."""
    from nmt.config import table_files as tables
    from nmt.config.schema import schema_path
    from nmt.data.alignments import SYMMETRIZE_METHODS

    schema = yaml.safe_load(schema_path("tables").read_text())
    defs, properties = schema["$defs"], schema["properties"]
    assert defs["column"]["enum"] == list(tables.COLUMN_LABELS)
    assert defs["symmetrize"]["enum"] == list(SYMMETRIZE_METHODS)
    ensemble = properties["ensembles"]["additionalProperties"]["properties"]
    assert ensemble["combine"]["enum"] == list(tables.ENSEMBLE_COMBINATIONS)
    assert properties["decodings"]["additionalProperties"]["properties"]["monotonic"]["enum"] == list(
        tables.MONOTONIC_MODES
    )
    aligner = properties["alignment"]["properties"]["aligners"]["additionalProperties"]["properties"]
    assert aligner["tool"]["enum"] == list(tables.ALIGNER_TOOLS)
    assert aligner["model"]["enum"] == list(tables.ALIGNER_MODELS)


@pytest.mark.parametrize("preset", sorted(p.stem for p in (ROOT / "workflow/presets").glob("*.yaml")))
def test_every_arm_of_a_preset_trains_by_one_rule_and_is_gated_by_it(preset):
    """The reduced presets train every system, recipes included, by one plateau rule that stops by the convergence
    gate itself (stop: gate: a run it stops is a run the gate passes; docs/statistics.md), with room for the gate's
    line before the cap; the paper preset keeps the papers' fixed schedules."""
    config = cfg.load_params(ROOT / "params.yaml", preset)
    rules = set()
    for task, systems in plan.collect_systems(config, ROOT).items():
        for system, table_path in systems.items():
            train = cfg.system_config(config, cfg.load_table(ROOT / table_path), system, table_path)["train"]
            plateau = train.get("plateau")
            rules.add(
                None
                if plateau is None
                else (
                    plateau["within"],
                    plateau["halvings"],
                    plateau.get("stop"),
                    plateau["max_epochs"],
                    train.get("keep"),
                )
            )
    if preset == "paper":
        assert rules == {None}
    else:
        assert len(rules) == 1 and None not in rules, rules
        within, halvings, stop, max_epochs, keep = rules.pop()
        assert stop == "gate" and keep == "best"
        if preset != "tiny":  # the 2-epoch smoke test converges never
            assert max_epochs >= config["verdicts"]["converged_window"] + halvings


def test_a_checkpoint_written_while_until_flat_existed_still_compares_equal():
    """train.until_flat was replaced by train.plateau: a paper-preset checkpoint written before carries
    until_flat: null and must resume, not start afresh; one that used the rule must not."""
    table = cfg.load_table(ROOT / "workflow/tables/luong2015_table1.yaml")
    current = cfg.system_config(cfg.load_params(ROOT / "params.yaml", "paper"), table, "base")
    older = {**current, "train": {**current["train"], "until_flat": None}}
    older["train"].pop("plateau")
    assert settings.comparable_settings(older) == settings.comparable_settings(current)
    older["train"]["until_flat"] = {"within": 0.03, "extra_epochs": 3}
    assert settings.comparable_settings(older) != settings.comparable_settings(current)


def test_a_bad_default_is_an_error_even_where_the_preset_overrides_it(tmp_path):
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    path = write_params(
        tmp_path, {"train": {"lr": 0.01}}, {"train": {**params["train"], "lr": -1}}
    )  # tiny sets its own lr: the default is still wrong
    with pytest.raises(
        cfg.ConfigError,
        match=r"params\.yaml: bad config key train\.lr: -1 is less than or equal to "
        r"the minimum of 0",
    ):
        cfg.load_params(path)


@pytest.mark.parametrize(
    "text, where, reason",
    [
        ("preset: tiny\ntrain: {lr: [1, 2\n", ":3:1: invalid YAML: ", "expected ',' or ']', but got '<stream end>'"),
        ("preset: tiny\n  model: x\n", ":2:8: invalid YAML: ", "mapping values are not allowed here"),
    ],
)
def test_a_yaml_error_is_one_line_with_file_line_column_and_reason(tmp_path, text, where, reason):
    (tmp_path / "params.yaml").write_text(text)
    done = subprocess.run(
        [sys.executable, "-m", "nmt.cli", "config", "--params", str(tmp_path / "params.yaml")],
        capture_output=True,
        text=True,
    )
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert lines[0].startswith(f"nmt: error: {tmp_path / 'params.yaml'}{where}{reason}"), lines[0]
