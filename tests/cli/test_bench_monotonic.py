"""`nmt bench monotonic` (Raffel et al. 2017, appendix F) and the report's section for it."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from nmt import config as cfg
from nmt.bench.monotonic_speed import (
    BASELINE,
    DECODERS,
    attended_positions,
    attention_growth,
    bench_contexts,
    bench_decoding,
    blas_threads,
    growth,
    hard_monotonic_contexts,
    softmax_contexts,
)
from nmt.report.inputs import ReportInputs
from nmt.report.render import render_report

ROOT = Path(__file__).resolve().parents[2]


def random_inputs(length, steps, dim, seed):
    rng = np.random.default_rng(seed)
    return (rng.uniform(-1, 1, (length, dim)).astype(np.float32), rng.uniform(-1, 1, (steps, dim)).astype(np.float32))


def reference_hard(memory, states):
    """Algorithm 1 written out in float64: the attended entry of each step, None once the memory ran out."""
    energies = states.astype(np.float64) @ memory.astype(np.float64).T
    chosen, j = [], 0
    for i in range(len(states)):
        stops = [k for k in range(j, len(memory)) if 1 / (1 + np.exp(-energies[i, k])) >= 0.5]
        if not stops:
            return chosen + [None] * (len(states) - i)
        j = stops[0]
        chosen.append(j)
    return chosen


def test_softmax_kernel_is_softmax_attention():
    memory, states = random_inputs(7, 5, 16, seed=3)
    m, s = memory.astype(np.float64), states.astype(np.float64)
    e = s @ m.T
    weights = np.exp(e - e.max(axis=1, keepdims=True))
    weights /= weights.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(softmax_contexts(memory, states), weights @ m, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("length, steps, seed", [(6, 4, 1), (20, 20, 2), (3, 12, 3), (40, 5, 4)])
def test_hard_kernel_is_algorithm_1(length, steps, seed):
    memory, states = random_inputs(length, steps, 16, seed)
    assert np.abs(states.astype(np.float64) @ memory.T.astype(np.float64)).min() > 1e-3  # no sign in doubt
    chosen = reference_hard(memory, states)
    expected = np.stack([memory[j] if j is not None else np.zeros(16, np.float32) for j in chosen])
    np.testing.assert_array_equal(hard_monotonic_contexts(memory, states), expected)
    assert attended_positions(memory, states) == [-1 if j is None else j for j in chosen]


def test_hard_kernel_exhausted_memory_gives_zero_contexts_from_then_on():
    memory = np.array([[1, 0], [0, 1]], dtype=np.float32)
    states = np.array(
        [
            [0, 0],  # e = 0 at entry 0: p = 0.5 stops there
            [-1, 1],  # entry 0: e = -1, moves on; entry 1: e = 1, stops
            [0, -1],  # entry 1: e = -1; no entry left: exhausted, c = 0
            [1, 1],
        ],  # would stop anywhere, but the memory has run out: c = 0
        dtype=np.float32,
    )
    np.testing.assert_array_equal(hard_monotonic_contexts(memory, states), [[1, 0], [0, 1], [0, 0], [0, 0]])
    assert attended_positions(memory, states) == [0, 1, -1, -1]


def test_context_benchmark_measures_every_cell():
    with blas_threads(1) as threads:
        cells = bench_contexts(
            input_lengths=[3, 9], output_lengths=[2, 7], dim=8, min_time=0.0, progress=lambda _m: None
        )
    assert threads in (1, None)
    assert [(c["T"], c["U"]) for c in cells] == [(3, 2), (3, 7), (9, 2), (9, 7)]
    for c in cells:
        assert c["softmax_ms"] > 0 and c["hard_ms"] > 0 and c["speedup"] == c["softmax_ms"] / c["hard_ms"]
        assert 0 <= c["attended_steps"] <= c["U"] and c["hard_energies"] <= c["T"] + c["U"]
        assert c["softmax_energies"] == c["T"] * c["U"] and c["softmax_calls"] >= 3 and c["hard_calls"] >= 3


def test_growth_tells_linear_from_quadratic():
    linear = growth([{"length": n, "ms": 3.0 * n + 10} for n in (100, 200, 400)])
    assert linear["slope_ms_per_word"] == pytest.approx(3.0) and linear["r2"] == pytest.approx(1.0)
    assert (linear["from_length"], linear["to_length"]) == (200, 400) and linear["ratio"] == pytest.approx(1210 / 610)
    quadratic = growth([{"length": n, "ms": n * n} for n in (100, 200, 400)])
    assert quadratic["ratio"] == pytest.approx(4.0) and quadratic["exponent"] == pytest.approx(2.0)


def test_attention_growth_is_the_growth_over_the_baseline():
    rows = [
        {"length": n, "method": m, "ms": ms}
        for n in (100, 200)
        for m, ms in (("softmax", 5.0 * n + n * n / 100), ("hard-monotonic", 5.0 * n + n / 10), (BASELINE, 5.0 * n))
    ]
    own = attention_growth(rows, ["softmax", "hard-monotonic", BASELINE])
    assert own["softmax"]["exponent"] == pytest.approx(2.0) and own["hard-monotonic"]["exponent"] == pytest.approx(1.0)
    assert attention_growth(rows, ["softmax", "hard-monotonic"]) == {}


def test_decoding_benchmark_with_softmax_attention():
    base = cfg.load_params(ROOT / "params.yaml", "tiny")["model"]
    result = bench_decoding(
        base_model=base,
        lengths=[4, 8],
        hidden=16,
        layers=1,
        vocab=20,
        repeats=1,
        decoders=DECODERS[:1],
        progress=lambda _m: None,
    )
    assert result["methods"] == ["softmax"] and [r["length"] for r in result["rows"]] == [4, 8]
    for r in result["rows"]:
        assert r["ms"] > 0 and r["ms_per_word"] == r["ms"] / r["length"]
        assert r["attended_steps"] == r["length"] and r["energies"] == r["length"] ** 2
    assert result["growth"]["softmax"]["to_length"] == 8
    assert result["baseline"] is None and result["attention_growth"] == {}


def test_decoding_benchmark_with_hard_monotonic_attention():
    base = cfg.load_params(ROOT / "params.yaml", "tiny")["model"]
    result = bench_decoding(
        base_model=base, lengths=[5, 10], hidden=16, layers=1, vocab=20, repeats=1, progress=lambda _m: None
    )
    assert result["methods"] == ["softmax", "hard-monotonic", BASELINE] and result["baseline"] == BASELINE
    hard = [r for r in result["rows"] if r["method"] == "hard-monotonic"]
    for r in hard:
        assert r["ms"] > 0 and r["attended_steps"] <= r["length"]
        assert r["energies"] <= 2 * r["length"]  # one pass over the memory: at most L + U energies
    assert all(r["energies"] == r["attended_steps"] == 0 for r in result["rows"] if r["method"] == BASELINE)
    assert set(result["attention_growth"]) == {"softmax", "hard-monotonic"}


def test_cli_writes_the_file_and_the_report_shows_it(tmp_path):
    out = tmp_path / "results" / "benchmarks" / "monotonic.json"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "nmt.cli",
            "bench",
            "monotonic",
            "--params",
            str(ROOT / "params.yaml"),
            "--preset",
            "tiny",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    bench = json.loads(out.read_text())
    settings = cfg.load_params(ROOT / "params.yaml", "tiny")["bench"]["monotonic"]
    grid = {(c["T"], c["U"]) for c in bench["contexts"]["cells"]}
    assert grid == {(t, u) for t in settings["input_lengths"] for u in settings["output_lengths"]}
    assert all(c["softmax_ms"] > 0 and c["hard_ms"] > 0 for c in bench["contexts"]["cells"])
    assert bench["threads"] == 1 and bench["blas_threads"] in (1, None) and bench["contexts"]["dim"] == settings["dim"]
    assert {r["length"] for r in bench["decoding"]["rows"]} == set(settings["decode_lengths"])

    def render():
        return render_report(
            ReportInputs(
                preset="tiny",
                preset_description="",
                tables=[],
                results_dir=tmp_path / "results",
                pair_for_task={},
                context={},
                speed={"monotonic": out},
            ),
            tmp_path / "report",
        )

    html = render().read_text()
    pngs = [tmp_path / "report" / name for name in ("monotonic_speedup.png", "monotonic_decoding.png")]
    first = [png.read_bytes() for png in pngs]
    assert all(data.startswith(b"\x89PNG") and len(data) > 1000 for data in first)
    assert 'id="monotonic-speed"' in html and 'src="monotonic_speedup.png"' in html
    assert "Raffel et al. measured hard monotonic attention 4x-40x faster than softmax attention" in html
    assert "C++/Eigen, dot energy, d = 256, lengths 4..128" in html
    assert bench["torch"] in html and bench["date"] in html
    cell = bench["contexts"]["cells"][-1]
    assert f"{cell['speedup']:.1f}x" in html or f"{cell['speedup']:.0f}x" in html  # the measured number
    render()
    assert [png.read_bytes() for png in pngs] == first  # deterministic figures
    render_report(
        ReportInputs(
            preset="tiny",
            preset_description="",
            tables=[],
            results_dir=tmp_path / "results",
            pair_for_task={},
            context={},
            speed={},
        ),
        tmp_path / "report",
    )
    assert not any(png.exists() for png in pngs)  # no benchmark, no stale figure
