"""docs/contributing.md's "Adding an attention variant", followed step by step in a scratch copy of the finished tiny
Snakemake run: a layer module of its own (scaled dot-product scores), one entry in the variants' registry (and its
class in LAYERS), a new system and its row in one table file. The model.attention setting then offers the new name
(its values and help come from the registry), Snakemake plans that system's jobs and the report and nothing else
("What a change reruns"), and the run made to the end shows the new row measured, every other model file untouched."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pipelines import PRESET, jobs_of, run

pytestmark = pytest.mark.e2e

NAME = "scaled"  # model.attention: scaled
SYSTEM = "global_scaled_feed"
TABLE = "luong2015_table4"

# step 1: its layer, in a module of its own with GlobalAttention's interface (a subclass: only the score differs)
LAYER = '''"""Global attention with scaled dot-product scores, h_t . hbar_s / sqrt(d) (a contributor's variant)."""

from __future__ import annotations

import math

import torch

from .attention import GlobalAttention


class ScaledDotAttention(GlobalAttention):
    """Luong et al.'s global attention whose dot score is divided by sqrt(hidden), as in Vaswani et al. (2017)."""

    def __init__(self, hidden: int):
        super().__init__(hidden, "dot", max_src_len=0)  # the dot score: no location weights, keys are the memory
        self.scale = 1.0 / math.sqrt(hidden)

    def scores(self, query: torch.Tensor, keys: torch.Tensor | None, src_positions: int) -> torch.Tensor:
        """Unnormalised scores [B, T, S] for queries [B, T, H]."""
        return torch.bmm(query, keys.transpose(1, 2)) * self.scale
'''

# step 2: one entry in VARIANTS; no fast kernel yet (the fast engine runs the layer under autograd), not graphed
ENTRY = f"""        AttentionVariant(
            "{NAME}",
            "ScaledDotAttention",
            lambda m: {{"hidden": m.hidden}},
            lambda m: "read",
            lambda m: "{NAME} (dot / sqrt(d))",
            (),
            None,
            graphed=False,
        ),
"""

# step 4: the system and its row, a row of one's own (no `paper:`)
SYSTEM_LINES = f"""  {SYSTEM}:
    model: {{attention: {NAME}, reverse: true, dropout: 0.2, input_feed: true}}
"""
ROW = f'  - {{label: "{NAME} (dot / sqrt(d)): ours", system: {SYSTEM}}}\n'


def replaced(path: Path, old: str, new: str) -> None:
    """`old`, found once in the file, replaced by `new`."""
    text = path.read_text()
    assert text.count(old) == 1, f"{path}: {old!r} found {text.count(old)} times"
    path.write_text(text.replace(old, new))


def add_the_variant(copy: Path) -> None:
    """Steps 1 and 2: the layer's module, its registry entry and its class in LAYERS."""
    (copy / f"nmt/models/{NAME}_attention.py").write_text(LAYER)
    registry = copy / "nmt/settings/attention_variants.py"
    replaced(registry, "    )\n}\n\n\ndef attentions_help", f"{ENTRY}    )\n}}\n\n\ndef attentions_help")
    layers = copy / "nmt/models/variants.py"
    replaced(
        layers,
        "from .monotonic import MonotonicAttention\n",
        f"from .monotonic import MonotonicAttention\nfrom .{NAME}_attention import ScaledDotAttention\n",
    )
    replaced(layers, "MonotonicAttention)\n", "MonotonicAttention, ScaledDotAttention)\n")


def add_the_system_and_its_row(copy: Path) -> None:
    """Step 4: a new system under the table's `systems:` and its row at the end of `rows:` (the file's last lines)."""
    table = copy / f"workflow/tables/{TABLE}.yaml"
    replaced(table, "systems:\n", f"systems:\n{SYSTEM_LINES}")
    text = table.read_text()
    assert text.endswith("}\n") and text.rstrip().splitlines()[-1].startswith("  - {label:")
    table.write_text(text + ROW)


def models(copy: Path) -> dict[Path, tuple[int, bytes]]:
    """Every model file of the run: its time and bytes (a retraining rewrites it, with the same bytes or not)."""
    return {
        path: (path.stat().st_mtime_ns, path.read_bytes())
        for path in sorted(copy.glob(f"results/{PRESET}/*/models/*/model.pt"))
    }


@pytest.mark.pipeline("snakemake")
def test_a_new_attention_variant_added_as_documented_trains_its_system_alone_and_fills_its_row(tiny_runs, tmp_path):
    copy = tmp_path / "run"
    shutil.copytree(tiny_runs["snakemake"].workdir, copy, symlinks=True)  # with .snakemake: the jobs it finished
    env = {**os.environ, "PYTHONPATH": str(copy)}  # `nmt` and Snakemake's jobs import the copy's package
    nmt = [sys.executable, "-m", "nmt.cli"]
    before = models(copy)

    add_the_variant(copy)
    stale = subprocess.run([*nmt, "params-yaml", "--check"], cwd=copy, env=env, capture_output=True, text=True)
    assert stale.returncode != 0  # params.yaml's comment on model.attention lists the variants: rewritten next
    run([*nmt, "params-yaml"], copy, env=env)
    run([*nmt, "params-yaml", "--check"], copy, env=env)
    schema = json.loads(run([*nmt, "config", "--schema", "--preset", PRESET], copy, env=env).stdout)
    attention = schema["properties"]["model"]["properties"]["attention"]
    assert attention["enum"][-1] == NAME and attention["description"].split(" | ")[-1] == NAME, attention

    add_the_system_and_its_row(copy)
    explained = run([*nmt, "config", "--table", TABLE, "--system", SYSTEM, "--explain"], copy, env=env).stdout
    assert f'model.attention = "{NAME}"    # table (workflow/tables/{TABLE}.yaml: systems.{SYSTEM}.model' in explained
    dry_run = run(["snakemake", "-n", "--cores", "2"], copy, timeout=300, env=env).stdout
    new_jobs = {("train", SYSTEM), ("translate", SYSTEM), ("evaluate", SYSTEM), ("report", None), ("all", None)}
    assert jobs_of(dry_run) == new_jobs, dry_run[-3000:]

    done = run(["snakemake", "--cores", "2"], copy, timeout=600, env=env)
    assert jobs_of(done.stderr) == new_jobs, done.stderr[-3000:]
    rows = json.loads((copy / f"reports/{PRESET}/{TABLE}.json").read_text())
    row = next(r for r in rows if r["system"] == SYSTEM)
    scores = json.loads((copy / f"results/{PRESET}/en-de/scores/{SYSTEM}.test.json").read_text())
    assert row["status"] == "measured" and row["paper_ppl"] is None, row
    assert row["ours_ppl"] == scores["ppl"] > 1 and row["ours_bleu_tok"] == scores["bleu_tok"] is not None, row
    trained = json.loads((copy / f"results/{PRESET}/en-de/models/{SYSTEM}/model.json").read_text())
    assert trained["config"]["model"]["attention"] == NAME
    after = models(copy)
    assert [path for path in before if after[path] != before[path]] == []  # no other training ran
    assert set(after) - set(before) == {copy / f"results/{PRESET}/en-de/models/{SYSTEM}/model.pt"}
