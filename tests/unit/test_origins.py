"""A configuration merged from layers, each value with the layer that set it (nmt.settings.origins), and `nmt config
--explain`, which prints them."""

import copy
from pathlib import Path

from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from nmt.cli import main
from nmt.settings.origins import Layered, Origin, leaf_keys

ROOT = Path(__file__).resolve().parents[2]

KEYS = st.sampled_from(["a", "b", "c"])
SCALARS = st.one_of(st.integers(-3, 3), st.none(), st.lists(st.integers(0, 2), max_size=2))
TREES = st.recursive(SCALARS, lambda inner: st.dictionaries(KEYS, inner, max_size=3), max_leaves=8)
LAYERS = st.lists(st.dictionaries(KEYS, TREES, max_size=3), min_size=1, max_size=4)


def naive_merge(base: dict, override: dict) -> dict:
    """Mappings merge key by key, anything else replaces (what nmt.config always did)."""
    merged = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = naive_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def sets(tree, dotted: str) -> bool:
    for name in dotted.split("."):
        if not isinstance(tree, dict) or name not in tree:
            return False
        tree = tree[name]
    return True


@hypothesis_settings(max_examples=300, deadline=None)
@given(LAYERS)
def test_merged_values_are_the_naive_merge_and_each_leaf_names_the_last_layer_that_sets_it(layers):
    layered, expected = Layered(), {}
    for index, layer in enumerate(layers):
        layered.merge(layer, lambda key, index=index: Origin(f"layer {index}", None, key))
        expected = naive_merge(expected, layer)
    assert layered.values == expected
    leaves = [leaf for name, value in expected.items() for leaf in leaf_keys(value, name)]
    assert set(layered.origins) == set(leaves)
    for leaf in leaves:  # a layer that sets a leaf wrote it at that path (a mapping copied whole holds it too)
        last = max(i for i, layer in enumerate(layers) if sets(layer, leaf))
        assert layered.origins[leaf].layer == f"layer {last}", (leaf, layered.origins[leaf])


def explained(capsys, *args) -> dict[str, str]:
    main(["config", "--params", str(ROOT / "params.yaml"), *args, "--explain"])
    lines = capsys.readouterr().out.splitlines()
    return {line.split(" = ", 1)[0]: line for line in lines}


def test_explain_names_the_layer_of_every_value_of_a_system(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    shown = explained(capsys, "--preset", "small-gpu", "--table", "luong2015_table1", "--system", "base_reverse_seed2")
    assert not [line for line in shown.values() if "origin unknown" in line]
    assert shown["preset"] == 'preset = "small-gpu"    # command line (--preset)'
    assert shown["train.lr"] == "train.lr = 0.002    # preset (workflow/presets/small-gpu.yaml: train.lr)"
    assert shown["train.clip_norm"].endswith("# " + str(ROOT / "params.yaml") + ": train.clip_norm")
    assert shown["model.reverse"].startswith("model.reverse = true    # table (")
    assert shown["model.reverse"].endswith("luong2015_table1.yaml: systems.base_reverse.model.reverse)")
    assert shown["train.seed"] == "train.seed = 2    # seed run (base_reverse_seed2)"
    assert shown["prepare.lowercase"] == (
        "prepare.lowercase = true    # preset (workflow/presets/small-gpu.yaml: prepare.lowercase)"
    )


def test_explain_names_a_recipes_keys_by_the_file_that_writes_them_and_the_tasks_own_preparation(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    shown = explained(capsys, "--preset", "tiny", "--table", "peter2017_table1", "--system", "rnnsearch")
    assert shown["model.arch"].endswith("# recipe (" + str(ROOT / "params.yaml") + ": recipes.rnnsearch.model.arch)")
    assert shown["model.hidden"].endswith("# recipe (workflow/presets/tiny.yaml: recipes.rnnsearch.model.hidden)")
    shown = explained(capsys, "--preset", "paper", "--table", "peter2017_table1", "--system", "rnnsearch")
    assert shown["prepare.src_vocab"] == (
        "prepare.src_vocab = 30000    # task's corpus (workflow/presets/paper.yaml: "
        "data.tasks.de-en-europarl.prepare.src_vocab)"
    )
