"""params.yaml's comments are the settings' declared help (nmt.pipeline.params_yaml), and writing them keeps every
value."""

from pathlib import Path

import yaml

from nmt.pipeline.params_yaml import render

ROOT = Path(__file__).resolve().parents[2]


def test_params_yaml_comments_are_the_declared_help():
    text = (ROOT / "params.yaml").read_text(encoding="utf-8")
    assert render(text) == text, "params.yaml's comments differ from the declared help: run `nmt params-yaml`"


def test_a_drifted_comment_is_rewritten_and_the_values_kept():
    text = (ROOT / "params.yaml").read_text(encoding="utf-8")
    drifted = text.replace(
        "  src_vocab: 50000     # the top K source words; the rest become <unk>",
        "  src_vocab: 50000     # top-K words per side\n                       # the rest -> <unk>",
    )
    assert drifted != text
    assert render(drifted) == text
    assert yaml.safe_load(render(drifted)) == yaml.safe_load(drifted)


def test_comments_no_declaration_owns_are_kept():
    text = (
        "# the file's own header\n\n"
        "prepare:\n"
        "  # an old note on max_len\n"
        "  max_len: 50  # old\n"
        "recipes:\n"
        "  mine:   # why this recipe\n"
        "    model: {layers: 2}\n"
    )
    assert render(text) == (
        "# the file's own header\n\n"
        "# How a corpus is prepared (nmt data prepare).\n"
        "prepare:\n"
        "  max_len: 50          # drop training pairs longer than this (either side)\n"
        "# named training recipes a table file picks with `recipe:`, merged over model/train "
        "before the table's own system\n"
        "# overrides, so a preset can size one paper's models without touching another's\n"
        "recipes:\n"
        "  mine:   # why this recipe\n"
        "    model: {layers: 2}\n"
    )
