"""`nmt bench attention` and the report's speed section."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from nmt.bench.attention_speed import METHODS, bench_attention, build_layer, shared_keys, speedups
from nmt.report.inputs import ReportInputs
from nmt.report.render import render_report

ROOT = Path(__file__).resolve().parents[2]


def test_bench_measures_every_method_at_every_length():
    result = bench_attention(
        lengths=[5, 40],
        hidden=8,
        batch=2,
        window=2,
        score="general",
        min_time=0.0,
        device=torch.device("cpu"),
        progress=lambda _m: None,
    )
    assert [(r["src_len"], r["method"]) for r in result["rows"]] == [(s, m) for s in (5, 40) for m in METHODS]
    for r in result["rows"]:
        assert r["context_ms"] > 0 and r["layer_ms"] > 0 and r["calls"] >= 3
    assert result["device_type"] == "cpu" and result["window"] == 2


@pytest.mark.parametrize("score", ["dot", "general", "concat", "location"])
def test_the_methods_share_one_set_of_keys_that_each_layer_would_compute(score):
    """The keys (a [B*S, H] x [H, H] product at the paper's sizes) are computed once for the three methods: every layer
    gets the first one's score parameters, so the shared keys are each layer's own."""
    layers = {method: build_layer(method, 8, score, 2, 12).eval() for method in METHODS}
    memory = torch.randn(2, 12, 8)
    keys = shared_keys(layers, memory)
    for method, layer in layers.items():
        own = layer.keys(memory)
        assert (own is None and keys[method] is None) or torch.equal(own, keys[method]), method


def test_speedups_are_global_time_over_local_time():
    rows = [
        {"src_len": 10, "method": "global", "context_ms": 6.0, "layer_ms": 9.0},
        {"src_len": 10, "method": "local-m", "context_ms": 2.0, "layer_ms": 3.0},
        {"src_len": 10, "method": "local-p", "context_ms": 3.0, "layer_ms": 4.5},
    ]
    assert speedups(rows) == [
        {"src_len": 10, "local-m_context": 3.0, "local-m_layer": 3.0, "local-p_context": 2.0, "local-p_layer": 2.0}
    ]


def test_cli_writes_the_file_and_the_report_shows_it(tmp_path):
    out = tmp_path / "results" / "benchmarks" / "attention.json"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "nmt.cli",
            "bench",
            "attention",
            "--params",
            str(ROOT / "params.yaml"),
            "--preset",
            "tiny",
            "--lengths",
            "6",
            "12",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    bench = json.loads(out.read_text())
    assert bench["hidden"] == 64 and {r["src_len"] for r in bench["rows"]} == {6, 12}  # tiny preset's settings
    inputs = ReportInputs(
        preset="tiny",
        preset_description="",
        tables=[ROOT / "workflow/tables/luong2015_table1.yaml"],
        results_dir=tmp_path / "results",
        pair_for_task={"en-de": "en-de"},
        context={},
        speed={"attention": out},
    )
    index = render_report(inputs, tmp_path / "report")
    html = index.read_text()
    assert 'id="attention-speed"' in html and 'src="attention_speed.png"' in html
    assert (tmp_path / "report" / "attention_speed.png").stat().st_size > 1000
    g = next(r for r in bench["rows"] if r["src_len"] == 12 and r["method"] == "global")
    assert f"{g['context_ms']:.2f}" in html  # the measured number, not a typed one
    with pytest.raises(ValueError, match="unknown benchmark 'nonesuch'"):
        render_report(
            ReportInputs(
                preset="tiny",
                preset_description="",
                tables=[],
                results_dir=tmp_path / "results",
                pair_for_task={},
                context={},
                speed={"nonesuch": out},
            ),
            tmp_path / "report",
        )
