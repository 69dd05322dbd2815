"""nmt.models.registry: what a model is, in one place. The schema's choices, the builder, crediting and labels all
come from the same entries, and the package layout keeps the layer contracts (.importlinter)."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import yaml

from nmt import config as cfg
from nmt import settings
from nmt.engine.fast import use
from nmt.models import ARCHITECTURES, VARIANTS
from nmt.models.registry import build_model, credit_rule, label
from nmt.models.seq2seq import Seq2Seq
from nmt.settings import ModelSettings

from factories import model_config

ROOT = Path(__file__).resolve().parents[2]
BASE = model_config(without=("attention",), hidden=8, reverse=False, max_src_len=10, arch="luong", energy="eq17")


def test_the_schema_offers_exactly_the_registered_architectures_and_variants():
    model = cfg.schema()["properties"]["model"]["properties"]
    assert model["attention"]["enum"] == list(VARIANTS)
    assert model["arch"]["enum"] == list(ARCHITECTURES)


@pytest.mark.parametrize("attention", list(VARIANTS))
def test_every_variant_builds_decodes_and_has_a_credit_rule_and_label(attention):
    config = {**BASE, "attention": attention}
    torch.manual_seed(0)
    model = build_model(ModelSettings.read(config), 11, 13)
    assert isinstance(model, Seq2Seq)
    assert (model.attention is None) == (attention == "none")
    src, src_len, tgt = torch.randint(4, 11, (2, 5)), torch.tensor([5, 3]), torch.randint(4, 13, (2, 4))
    log_probs, _ = model(src, src_len, tgt)
    assert log_probs.shape == (2, 4, 13)
    # the fast engine serves every variant, with its kernel or with the reference layer under autograd
    fast_log_probs, _ = use(model, "fast")(src, src_len, tgt)
    torch.testing.assert_close(fast_log_probs, log_probs, rtol=1e-5, atol=1e-5)
    assert credit_rule(ModelSettings.read(config)) in ("read", "predicted")
    assert label(ModelSettings.read(config)).startswith(attention)


def test_each_variant_names_its_fast_kernel_or_runs_its_reference_layer_under_autograd():
    """The registry says which step kernel serves a variant in the fast decoder (None: its own layer,
    differentiated by autograd; a new variant starts there and is fast once it has a kernel)."""
    from nmt.engine.attention_kernels import KERNELS

    shipped = {"none": None, "global": "global", "local-m": "local", "local-p": "local", "monotonic": "monotonic"}
    kernels = {v.name: v.kernel for v in VARIANTS.values()}
    assert {name: kernels.get(name, "not registered") for name in shipped} == shipped  # a new variant adds to them
    assert set(kernels.values()) - {None} <= set(KERNELS)


@pytest.mark.parametrize(
    "config, rule, name",
    [
        ({"attention": "global", "score": "location"}, "predicted", "global (location)"),
        ({"attention": "local-p", "score": "general"}, "read", "local-p (general)"),
        ({"attention": "monotonic", "score": "location", "energy": "eq16"}, "read", "monotonic (eq. 16)"),
        ({"arch": "rnnsearch", "score": "dot"}, "predicted", "RNNsearch"),
        ({"arch": "rnnsearch", "target_foresight": True}, "predicted", "RNNsearch + target foresight"),
    ],
)
def test_credit_rules_and_labels_follow_the_papers(config, rule, name):
    assert credit_rule(ModelSettings.read(config)) == rule and label(ModelSettings.read(config)) == name


def test_a_setting_of_another_architecture_is_an_error_not_ignored():
    with pytest.raises(ValueError, match="target_foresight is implemented for model.arch: rnnsearch only"):
        build_model(ModelSettings.read({**BASE, "attention": "global", "target_foresight": True}), 11, 13)
    with pytest.raises(ValueError, match="attention_noise"):
        build_model(ModelSettings.read({**BASE, "attention": "global", "attention_noise": 1.0}), 11, 13)
    build_model(
        ModelSettings.read({**BASE, "attention": "monotonic", "attention_noise": 1.0}), 11, 13
    )  # monotonic has noise of its own
    with pytest.raises(ValueError, match="unknown model.arch 'transformer'"):
        build_model(ModelSettings.read({**BASE, "attention": "global", "arch": "transformer"}), 11, 13)


def test_the_import_contracts_hold():
    """Layers (cli > pipeline, report, bench > train, decode, align > engine > config > models > settings > data > base:
    the models never import the engine), no cycles, and the engine's own layers; the README's test command runs
    `lint-imports` too, this says which contract broke from inside pytest."""
    lint = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))
    done = subprocess.run([lint, "--config", str(ROOT / ".importlinter")], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "3 kept, 0 broken" in done.stdout


def test_settings_added_later_mean_as_before_at_their_defaults_and_off_in_the_registry():
    """settings.ADDED names the value of each later key that means "as before": params.yaml's default must be
    it (a default run compares equal to an older one), and an architecture's setting is off at the same value."""
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    properties = cfg.schema()["properties"]
    for section, keys in settings.ADDED.items():
        for key in keys:
            assert key in properties[section]["properties"], (section, key)
            assert settings.comparable_settings({section: {key: params[section][key]}})[section] == {}, (section, key)
    for arch in ARCHITECTURES.values():
        for key, off in arch.only_here.items():
            assert settings.ADDED["model"][key] == off, (arch.name, key)
