"""Tests for nmt.report: table files, DataFrames, plots and the HTML report."""

from __future__ import annotations

import csv
import html
import json
import math
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

from nmt.base.errors import UserError
from nmt.report import ReportInputs, build_table, learning_curves, load_table, render_report

REPO = Path(__file__).resolve().parents[2]
REAL_TABLE = REPO / "workflow" / "tables" / "luong2015_table1.yaml"

SIG_TOK = "nrefs:1|case:mixed|eff:no|tok:none|smooth:exp|version:2.4.3"
SIG_DETOK = "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.4.3"

TABLE = {
    "id": "toy_table",
    "title": "Toy table: EN->DE",
    "paper": "Luong, Pham, Manning (2015)",
    "task": "en-de",
    "testset": "test",
    "columns": ["ppl", "bleu_tok"],
    "systems": {
        "base": {"model": {"attention": "none"}},
        "attn": {"model": {"attention": "global"}},
        "gone": {"model": {"attention": "global", "input_feed": True}},
    },
    "rows": [
        {"label": "Winning WMT'14 system", "system": None, "paper": {"bleu_tok": 20.7}},
        {"label": "Base <b>bold</b> & co", "system": "base", "paper": {"ppl": 10.6, "bleu_tok": 11.3}},
        {"label": "Base + attention", "system": "attn", "paper": {"ppl": 7.3, "bleu_tok": 16.8}},
        {"label": "Base + attention + feed", "system": "gone", "paper": {"ppl": 6.4, "bleu_tok": 18.1}},
        {
            "label": "local-p",
            "system": None,
            "requires": "local-p attention (issue 4)",
            "paper": {"ppl": 5.9, "bleu_tok": 19.0},
        },
    ],
}

SCORES = {
    "base": {"ppl": 14.37, "bleu_tok": 3.21, "bleu_detok": 3.05},
    "attn": {"ppl": 9.83, "bleu_tok": 12.48, "bleu_detok": 11.96},
}


def write_yaml(path: Path, data: dict) -> Path:
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def make_results(root: Path, preset: str = "demo", pair: str = "synth") -> Path:
    """results/{preset} with scores for 'base' and 'attn' (none for 'gone'), metrics, model.json."""
    results = root / "results" / preset
    scores_dir = results / pair / "scores"
    scores_dir.mkdir(parents=True)
    for system, s in SCORES.items():
        data = {
            "system": system,
            "testset": "test",
            "preset": preset,
            "pair": pair,
            "n_sentences": 500,
            "bleu_tok": s["bleu_tok"],
            "bleu_tok_signature": SIG_TOK,
            "bleu_detok": s["bleu_detok"],
            "bleu_detok_signature": SIG_DETOK,
            "ppl": s["ppl"],
            "hyp": f"results/{preset}/{pair}/translations/{system}.test.txt",
            "ref": f"data/{preset}/{pair}/raw/test.tgt",
        }
        (scores_dir / f"{system}.test.json").write_text(json.dumps(data), encoding="utf-8")
    for k, system in enumerate(["base", "attn", "gone"]):
        mdir = results / pair / "models" / system
        mdir.mkdir(parents=True)
        lines = []
        for epoch in range(1, 6):
            dev_ppl = 200.0 / (epoch ** (1.0 + 0.3 * k)) + 3.0
            lines.append(
                json.dumps(
                    {
                        "epoch": epoch,
                        "updates": 100 * epoch,
                        "lr": 1.0,
                        "train_loss": 3.0,
                        "train_ppl": dev_ppl * 0.9,
                        "dev_loss": math.log(dev_ppl),
                        "dev_ppl": dev_ppl,
                        "tgt_tokens_per_s": 10523.0 + k,
                        "elapsed_s": 31.5 * epoch,
                    }
                )
            )
        (mdir / "metrics.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        (mdir / "model.json").write_text(
            json.dumps(
                {
                    "system": system,
                    "parameters": 123456 + k,
                    "src_vocab": 1000,
                    "tgt_vocab": 1100,
                    "config": {"model": {"layers": 2, "hidden": 64, "embed": 32, "attention": "global"}},
                }
            ),
            encoding="utf-8",
        )
    return results


def do_render(tmp_path: Path, out_name: str = "report", context: dict | None = None) -> tuple[Path, Path]:
    table_file = write_yaml(tmp_path / "toy_table.yaml", TABLE)
    results = tmp_path / "results" / "demo"
    if not results.exists():
        make_results(tmp_path)
    out = tmp_path / out_name
    ctx = (
        context
        if context is not None
        else {
            "corpus": {
                "name": "synthetic toy corpus",
                "description": "generated",
                "splits": {
                    "train": {"sentences": 5000, "src_tokens": 51234},
                    "test": {"sentences": 500, "src_tokens": 5120},
                },
            },
            "training": {"epochs": 5, "batch_size": 32, "optimizer": {"name": "sgd", "lr": 1.0}},
            "generated_by": "nmt 0.1.0 / abc1234",
            "notes": ["demo numbers"],
        }
    )
    index = render_report(
        ReportInputs(
            preset="demo",
            preset_description="tiny CPU demo",
            tables=[table_file],
            results_dir=results,
            pair_for_task={"en-de": "synth"},
            context=ctx,
        ),
        out,
    )
    return index, out


# --------------------------------------------------------------------------- load_table


def test_real_table_loads():
    t = load_table(REAL_TABLE)
    assert t["id"] == "luong2015_table1"
    assert t["columns"] == ["ppl", "bleu_tok", "chrf"]
    assert len(t["rows"]) == 12
    assert all(r["system"] is None or r["system"] in t["systems"] or r["system"] in t["ensembles"] for r in t["rows"])
    assert t["rows"][4]["paper"] == {"ppl": 10.6, "bleu_tok": 11.3}
    assert t["rows"][10]["values_from"] == {"bleu_tok": "bleu_tok_unk", "chrf": "chrf_unk", "ppl": None}
    # the paper's 8 attention models: this table's three and five of Table 4 (checked by collect_ensembles)
    assert len(t["ensembles"]["ensemble_attention"]["members"]) == 8


def test_values_from_and_ensembles_are_validated(tmp_path):
    bad = json.loads(json.dumps(TABLE))
    bad["rows"][2]["values_from"] = {"bleu_tok": "bleu_after"}
    with pytest.raises(ValueError, match=r"rows\[3\]\.values_from\.bleu_tok: 'bleu_after' is not one of"):
        load_table(write_yaml(tmp_path / "bad.yaml", bad))
    bad = json.loads(json.dumps(TABLE))
    bad["ensembles"] = {"ens": {"members": [next(iter(bad["systems"])), "not an id"]}}
    with pytest.raises(ValueError, match=r"ensembles\.ens\.members\[2\]: 'not an id' does not match"):
        load_table(write_yaml(tmp_path / "bad.yaml", bad))
    bad["ensembles"] = {"ens": {"members": ["base", "base"]}}
    with pytest.raises(ValueError, match="has non-unique elements"):
        load_table(write_yaml(tmp_path / "bad.yaml", bad))
    bad["ensembles"] = {"ens": {"members": [next(iter(bad["systems"]))]}}
    with pytest.raises(ValueError, match="is too short"):
        load_table(write_yaml(tmp_path / "bad.yaml", bad))


def test_row_values_from_another_scores_field(tmp_path):
    table = json.loads(json.dumps(TABLE))
    system = table["rows"][2]["system"] if table["rows"][2]["system"] else next(iter(table["systems"]))
    table["rows"].append(
        {
            "label": "+ unk replace",
            "system": system,
            "paper": {},
            "values_from": {c: ("bleu_tok_unk" if c == "bleu_tok" else None) for c in table["columns"]},
        }
    )
    tfile = write_yaml(tmp_path / "t.yaml", table)
    results = tmp_path / "results" / "demo"
    (results / "synth" / "scores").mkdir(parents=True)
    (results / "synth" / "scores" / f"{system}.test.json").write_text(
        json.dumps(
            {
                "system": system,
                "testset": "test",
                "ppl": 9.5,
                "bleu_tok": 10.0,
                "bleu_tok_unk": 12.5,
                "bleu_tok_unk_signature": "SIG-UNK",
                "bleu_tok_bp": 0.5,
                "bleu_tok_ratio": 0.6,
                "bleu_tok_unk_bp": 0.75,
                "bleu_tok_unk_ratio": 0.8,
            }
        )
    )
    index = render_report(
        ReportInputs(
            preset="demo",
            preset_description="",
            tables=[tfile],
            results_dir=results,
            pair_for_task={"en-de": "synth"},
            context={},
        ),
        tmp_path / "out",
    )
    rows = json.loads((tmp_path / "out" / f"{table['id']}.json").read_text())
    last = rows[-1]
    assert last["ours_bleu_tok"] == 12.5 and last.get("ours_ppl") is None
    assert last["ours_bleu_tok_bp"] == 0.75 and last["ours_bleu_tok_ratio"] == 0.8  # bleu_tok_unk's lengths
    assert "SIG-UNK" in index.read_text()


def test_load_table_unknown_system(tmp_path):
    bad = json.loads(json.dumps(TABLE))
    bad["rows"][2]["system"] = "nonexistent_sys"
    p = write_yaml(tmp_path / "bad.yaml", bad)
    with pytest.raises(ValueError) as e:
        load_table(p)
    msg = str(e.value)
    assert "bad.yaml" in msg and "nonexistent_sys" in msg and "row 3" in msg


@pytest.mark.parametrize("key", ["id", "testset", "rows", "systems", "columns"])
def test_load_table_missing_key(tmp_path, key):
    bad = json.loads(json.dumps(TABLE))
    del bad[key]
    p = write_yaml(tmp_path / "bad.yaml", bad)
    with pytest.raises(ValueError, match=rf"bad\.yaml: '{key}' is a required property"):
        load_table(p)


def test_load_table_row_errors(tmp_path):
    cases = [
        (lambda t: t["rows"][1].pop("label"), r"rows\[2\]: 'label' is a required property"),
        (lambda t: t["rows"][1].pop("system"), r"rows\[2\]: 'system' is a required property"),
        (
            lambda t: t["rows"][1].__setitem__("sytem", "base"),
            r"rows\[2\]: Additional properties .*'sytem' was unexpected",
        ),
        (lambda t: t["rows"][1]["paper"].__setitem__("bleu", 3.0), r"row 2.*'bleu'"),
        (
            lambda t: t["rows"][1]["paper"].__setitem__("ppl", "ten"),
            r"rows\[2\]\.paper\.ppl: 'ten' is not of type 'number'",
        ),
        (lambda t: t.__setitem__("columns", ["ppl", "rouge"]), r"columns\[2\]: 'rouge' is not one of"),
    ]
    for mutate, pattern in cases:
        bad = json.loads(json.dumps(TABLE))
        mutate(bad)
        p = write_yaml(tmp_path / "bad.yaml", bad)
        with pytest.raises(ValueError, match=pattern):
            load_table(p)


def test_load_table_not_a_mapping(tmp_path):
    p = tmp_path / "list.yaml"
    p.write_text("- 1\n- 2\n")
    with pytest.raises(ValueError, match="list.yaml"):
        load_table(p)


# --------------------------------------------------------------------------- build_table


def test_build_table_statuses_and_numbers(tmp_path):
    results = make_results(tmp_path)
    table = load_table(write_yaml(tmp_path / "t.yaml", TABLE))
    df = build_table(table, results / "synth" / "scores", "synth", "demo")
    assert list(df["label"]) == [r["label"] for r in TABLE["rows"]]  # paper order
    assert list(df["status"]) == ["reference", "measured", "measured", "missing", "not run"]
    assert list(df.columns[:3]) == ["label", "system", "status"]
    for c in ("ppl", "bleu_tok"):
        assert f"paper_{c}" in df.columns and f"ours_{c}" in df.columns
    by_sys = df.set_index("label")
    assert by_sys.loc["Base + attention", "ours_ppl"] == SCORES["attn"]["ppl"]
    assert by_sys.loc["Base + attention", "ours_bleu_tok"] == SCORES["attn"]["bleu_tok"]
    assert by_sys.loc["Base + attention", "paper_ppl"] == 7.3
    # missing / reference / not-run rows carry no reproduced numbers
    for label in ("Winning WMT'14 system", "Base + attention + feed", "local-p"):
        assert math.isnan(by_sys.loc[label, "ours_ppl"]) and math.isnan(by_sys.loc[label, "ours_bleu_tok"])
    assert "issue 4" in by_sys.loc["local-p", "note"]


def test_a_row_of_ones_own_needs_no_paper_numbers(tmp_path):
    """`paper:` is optional in a row (docs/formats.md): without it the row shows ours and no paper numbers."""
    results = make_results(tmp_path)
    table = json.loads(json.dumps(TABLE))
    table["rows"].append({"label": "My attention", "system": "attn"})
    loaded = load_table(write_yaml(tmp_path / "t.yaml", table))
    assert loaded["rows"][-1]["paper"] == {}
    mine = build_table(loaded, results / "synth" / "scores", "synth", "demo").set_index("label").loc["My attention"]
    assert mine["status"] == "measured" and mine["ours_bleu_tok"] == SCORES["attn"]["bleu_tok"]
    assert math.isnan(mine["paper_ppl"]) and math.isnan(mine["paper_bleu_tok"])


def _signature_rows(html: str) -> dict[tuple[str, str], list[str]]:
    """The signatures tables' rows: (system, metric) -> [BP, length ratio]."""
    out = {}
    for tr in re.findall(r"<tr>(<td><code>.*?)</tr>", html, flags=re.S):
        if 'class="sig"' in tr:
            system, metric, bp, ratio = re.findall(r"<td[^>]*>(.*?)</td>", tr)[:4]
            out[(system.replace("<code>", "").replace("</code>", ""), metric)] = [bp, ratio]
    return out


def test_bleu_columns_carry_the_brevity_penalty_and_length_ratio(tmp_path):
    """The table's CSV/JSON: ours_{column}_bp / _ratio from the scores file (BLEU columns only); the page: both
    with 3 decimals in the signatures table, and a dash for a scores file written before they existed."""
    results = make_results(tmp_path)  # base keeps the old scores file, without bp/ratio
    sfile = results / "synth" / "scores" / "attn.test.json"
    data = json.loads(sfile.read_text())
    data.update(
        {"bleu_tok_bp": 0.87654, "bleu_tok_ratio": 0.88321, "bleu_tok_hyp_len": 8832, "bleu_tok_ref_len": 10000}
    )
    sfile.write_text(json.dumps(data))
    index, out = do_render(tmp_path)
    with open(out / "toy_table.csv", newline="") as f:
        rows = {r["label"]: r for r in csv.DictReader(f)}
    attn, base = rows["Base + attention"], rows["Base <b>bold</b> & co"]
    assert float(attn["ours_bleu_tok_bp"]) == 0.87654 and float(attn["ours_bleu_tok_ratio"]) == 0.88321
    assert base["ours_bleu_tok_bp"] == base["ours_bleu_tok_ratio"] == ""  # an old scores file: nothing, no error
    assert "ours_ppl_bp" not in attn and "ours_ppl_ratio" not in attn
    records = {r["label"]: r for r in json.loads((out / "toy_table.json").read_text())}
    assert records["Base + attention"]["ours_bleu_tok_bp"] == 0.87654
    assert records["Base <b>bold</b> & co"]["ours_bleu_tok_ratio"] is None
    html = index.read_text()
    assert ">BP</th>" in html and ">length ratio</th>" in html
    assert _signature_rows(html) == {
        ("attn", "BLEU (tok)"): ["0.877", "0.883"],
        ("base", "BLEU (tok)"): ["\u2013", "\u2013"],
    }


def test_seed_runs_show_the_mean_brevity_penalty_and_length_ratio(tmp_path):
    results = make_results(tmp_path)
    scores_dir = results / "synth" / "scores"
    for run, bleu, bp, ratio in (("attn", 12.0, 0.9, 0.904), ("attn_seedB", 13.0, 0.8, 0.818)):
        (scores_dir / f"{run}.test.json").write_text(
            json.dumps(
                {
                    "system": run,
                    "testset": "test",
                    "preset": "demo",
                    "pair": "synth",
                    "ppl": 9.0,
                    "bleu_tok": bleu,
                    "bleu_tok_signature": SIG_TOK,
                    "bleu_tok_bp": bp,
                    "bleu_tok_ratio": ratio,
                }
            )
        )
    runs = {"attn": ["attn", "attn_seedB"]}
    table_file = write_yaml(tmp_path / "toy_table.yaml", TABLE)
    df = build_table(load_table(table_file), scores_dir, "synth", "demo", runs=runs).set_index("label")
    assert df.loc["Base + attention", "n_runs"] == 2
    assert df.loc["Base + attention", "ours_bleu_tok_bp"] == pytest.approx(0.85)
    assert df.loc["Base + attention", "ours_bleu_tok_ratio"] == pytest.approx(0.861)
    assert math.isnan(df.loc["Base <b>bold</b> & co", "ours_bleu_tok_bp"])
    index = render_report(
        ReportInputs(
            preset="demo",
            preset_description="",
            tables=[table_file],
            results_dir=results,
            pair_for_task={"en-de": "synth"},
            context={},
            runs={"synth": runs},
        ),
        tmp_path / "out",
    )
    assert _signature_rows(index.read_text())[("attn", "BLEU (tok)")] == ["0.850", "0.861"]


def test_a_value_some_runs_lack_is_missing_not_the_mean_of_the_others(tmp_path):
    """A seed run scored before chrF existed: the row's chrF is missing (its BLEU, which every run has, is the mean),
    never the mean of the runs that have it."""
    results = make_results(tmp_path)
    scores_dir = results / "synth" / "scores"
    for run, bleu, chrf in (("attn", 12.0, None), ("attn_seedB", 13.0, 40.0)):
        (scores_dir / f"{run}.test.json").write_text(
            json.dumps(
                {
                    "system": run,
                    "testset": "test",
                    "preset": "demo",
                    "pair": "synth",
                    "ppl": 9.0,
                    "bleu_tok": bleu,
                    "bleu_tok_signature": SIG_TOK,
                    **({"chrf": chrf} if chrf is not None else {}),
                }
            )
        )
    table = yaml.safe_load(yaml.safe_dump(TABLE))
    table["columns"] = [*table["columns"], "chrf"]
    table_file = write_yaml(tmp_path / "toy_table.yaml", table)
    df = build_table(
        load_table(table_file), scores_dir, "synth", "demo", runs={"attn": ["attn", "attn_seedB"]}
    ).set_index("label")
    assert df.loc["Base + attention", "ours_bleu_tok"] == pytest.approx(12.5)
    assert math.isnan(df.loc["Base + attention", "ours_chrf"])


def test_a_brevity_penalty_that_is_not_a_number_is_a_user_error(tmp_path):
    results = make_results(tmp_path)
    sfile = results / "synth" / "scores" / "base.test.json"
    sfile.write_text(json.dumps({**json.loads(sfile.read_text()), "bleu_tok_bp": "high"}))
    table = load_table(write_yaml(tmp_path / "t.yaml", TABLE))
    with pytest.raises(UserError, match=r"base\.test\.json: bleu_tok_bp: 'high' is not of type 'number', 'null'"):
        build_table(table, results / "synth" / "scores", "synth", "demo")


def test_build_table_rejects_mismatched_scores(tmp_path):
    results = make_results(tmp_path)
    f = results / "synth" / "scores" / "base.test.json"
    data = json.loads(f.read_text())
    data["system"] = "attn"
    f.write_text(json.dumps(data))
    table = load_table(write_yaml(tmp_path / "t.yaml", TABLE))
    with pytest.raises(ValueError, match="base.test.json"):
        build_table(table, results / "synth" / "scores", "synth", "demo")


def test_a_malformed_scores_file_is_a_user_error_naming_file_line_and_column(tmp_path):
    results = make_results(tmp_path)
    (results / "synth" / "scores" / "base.test.json").write_text('{"bleu_tok": 12.5,\n "ppl": }\n')
    table = load_table(write_yaml(tmp_path / "t.yaml", TABLE))
    with pytest.raises(UserError, match=r"base\.test\.json:2:9: invalid JSON: Expecting value"):
        build_table(table, results / "synth" / "scores", "synth", "demo")


# --------------------------------------------------------------------------- render_report


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> tuple[Path, Path, Path]:
    """(tmp dir, index.html, out dir) of one render shared by the read-only tests."""
    tmp = tmp_path_factory.mktemp("rendered")
    index, out = do_render(tmp)
    return tmp, index, out


def test_render_outputs_numbers_from_scores_files(rendered):
    tmp_path, index, out = rendered
    assert index == out / "index.html"
    for name in ("index.html", "toy_table.csv", "toy_table.json", "summary.json", "toy_table_learning_curves.png"):
        assert (out / name).is_file(), name
    assert not list(out.glob(".*.tmp"))

    records = json.loads((out / "toy_table.json").read_text())
    with open(out / "toy_table.csv", newline="") as f:
        csv_rows = list(csv.DictReader(f))
    assert len(records) == len(csv_rows) == len(TABLE["rows"])
    for rec, crow in zip(records, csv_rows):
        system = rec["system"]
        assert crow["status"] == rec["status"]
        for c in ("ppl", "bleu_tok"):
            if rec["status"] == "measured":
                assert rec[f"ours_{c}"] == SCORES[system][c]
                assert float(crow[f"ours_{c}"]) == SCORES[system][c]
            else:
                assert rec[f"ours_{c}"] is None
                assert crow[f"ours_{c}"] == ""
    assert [r["status"] for r in records] == ["reference", "measured", "measured", "missing", "not run"]

    summary = json.loads((out / "summary.json").read_text())
    assert set(summary["toy_table"]) == {"base", "attn"}
    assert summary["toy_table"]["attn"]["bleu_tok"] == SCORES["attn"]["bleu_tok"]
    assert summary["toy_table"]["base"]["ppl"] == SCORES["base"]["ppl"]

    html = index.read_text()
    for s in SCORES.values():
        assert f">{s['ppl']:.2f}<" in html and f">{s['bleu_tok']:.2f}<" in html
    assert ">10.60<" in html and ">20.70<" in html  # paper numbers, 2 decimals
    assert "MISSING results" in html
    assert "not run: requires local-p attention (issue 4)" in html
    assert "reference (paper only)" in html
    assert SIG_TOK in html
    assert '<img src="toy_table_learning_curves.png"' in html
    assert "NOT comparable in absolute value" in html and "synthetic toy corpus" in html
    assert "results/demo/synth/scores/base.test.json" in html
    assert "results/demo/synth/scores/gone.test.json" in html  # listed as missing
    assert str(tmp_path) not in html  # no absolute paths on the page
    assert "BLEU (tok)" in html and "paper ppl" in html and "ours ppl" in html


def _row_cells(html: str, label_fragment: str) -> list[str]:
    for tr in re.findall(r"<tr[^>]*>(.*?)</tr>", html, flags=re.S):
        if label_fragment in tr:
            return re.findall(r'<td class="num (?:paper|ours)">(.*?)</td>', tr)
    raise AssertionError(label_fragment)


def test_render_non_measured_rows_have_no_ours_numbers(rendered):
    _, index, _ = rendered
    html = index.read_text()
    dash = "\u2013"
    # cells: paper ppl, ours ppl, paper bleu, ours bleu
    assert _row_cells(html, "Winning WMT") == [dash, dash, "20.70", dash]
    assert _row_cells(html, "local-p") == ["5.90", dash, "19.00", dash]
    assert _row_cells(html, "Base + attention + feed") == ["6.40", dash, "18.10", dash]
    assert _row_cells(html, "Base + attention<") == ["7.30", "9.83", "16.80", "12.48"]


def test_render_is_deterministic(tmp_path):
    _, out1 = do_render(tmp_path, "r1")
    _, out2 = do_render(tmp_path, "r2")
    for name in ("index.html", "toy_table.csv", "toy_table.json", "summary.json", "toy_table_learning_curves.png"):
        assert (out1 / name).read_bytes() == (out2 / name).read_bytes(), name
    # rendering again into the same directory also gives the same bytes
    before = (out1 / "index.html").read_bytes()
    do_render(tmp_path, "r1")
    assert (out1 / "index.html").read_bytes() == before


def test_render_escapes_labels(rendered):
    _, index, _ = rendered
    html = index.read_text()
    assert "Base &lt;b&gt;bold&lt;/b&gt; &amp; co" in html
    assert "<b>bold</b>" not in html


class _Checker(HTMLParser):
    VOID = {"meta", "img", "br", "hr", "link", "input", "col", "wbr", "source"}

    def __init__(self):
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.ids: list[str] = []

    def handle_starttag(self, tag, attrs):
        d = dict(attrs)
        if "id" in d:
            self.ids.append(d["id"])
        if tag == "img" and "alt" not in d:
            self.errors.append("img without alt")
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"unbalanced </{tag}> (open: {self.stack[-3:]})")
        else:
            self.stack.pop()


def test_render_html_structure(rendered):
    _, index, _ = rendered
    html = index.read_text()
    assert html.startswith("<!DOCTYPE html>")
    assert '<html lang="en">' in html and '<meta charset="utf-8">' in html
    assert "<title>" in html and "demo" in html[html.index("<title>") : html.index("</title>")]
    assert "http://" not in html and "https://" not in html  # offline: no external assets
    checker = _Checker()
    checker.feed(html)
    checker.close()
    assert checker.errors == [] and checker.stack == []
    assert len(checker.ids) == len(set(checker.ids))


def test_render_tolerates_empty_context_and_paper_preset(tmp_path):
    table_file = write_yaml(tmp_path / "toy_table.yaml", TABLE)
    results = tmp_path / "results" / "paper"
    (results / "wmt14").mkdir(parents=True)  # no results at all
    out = tmp_path / "out"
    index = render_report(
        ReportInputs(
            preset="paper",
            preset_description="",
            tables=[table_file],
            results_dir=results,
            pair_for_task={"en-de": "wmt14"},
            context={},
        ),
        out,
    )
    html = index.read_text()
    assert "NOT comparable" not in html
    assert html.count("MISSING results: no ") == 3
    assert not (out / "toy_table_learning_curves.png").exists()
    assert json.loads((out / "summary.json").read_text()) == {"toy_table": {}}


def test_render_unknown_task(tmp_path):
    table_file = write_yaml(tmp_path / "toy_table.yaml", TABLE)
    with pytest.raises(ValueError, match="en-de"):
        render_report(
            ReportInputs(
                preset="demo",
                preset_description="",
                tables=[table_file],
                results_dir=tmp_path / "results" / "demo",
                pair_for_task={"en-fr": "x"},
                context={},
            ),
            tmp_path / "out",
        )


def test_render_real_table(tmp_path):
    results = tmp_path / "results" / "demo"
    scores = results / "synth" / "scores"
    scores.mkdir(parents=True)
    (scores / "base.test.json").write_text(
        json.dumps({"system": "base", "testset": "test", "ppl": 20.5, "bleu_tok": 1.25, "bleu_tok_signature": SIG_TOK})
    )
    index = render_report(
        ReportInputs(
            preset="demo",
            preset_description="demo",
            tables=[REAL_TABLE],
            results_dir=results,
            pair_for_task={"en-de": "synth"},
            context={"corpus": {"name": "toy"}},
        ),
        tmp_path / "out",
    )
    html = index.read_text()
    assert ">20.50<" in html and ">1.25<" in html
    # the other trained systems and the ensemble; the "+ unk replace" row reads a system listed already
    assert html.count("MISSING results: no ") == 7


# --------------------------------------------------------------------------- plots


def test_learning_curves_deterministic(tmp_path):
    results = make_results(tmp_path)
    files = {s: results / "synth" / "models" / s / "metrics.jsonl" for s in ("base", "attn")}
    learning_curves(files, tmp_path / "a.png", "t")
    learning_curves(files, tmp_path / "b.png", "t")
    a = (tmp_path / "a.png").read_bytes()
    assert a[:8] == b"\x89PNG\r\n\x1a\n"
    assert a == (tmp_path / "b.png").read_bytes()
    assert b"Software" not in a


def test_learning_curves_no_points(tmp_path):
    f = tmp_path / "metrics.jsonl"
    f.write_text("")
    with pytest.raises(ValueError):
        learning_curves({"x": f}, tmp_path / "x.png", "t")


def test_render_context_shapes(tmp_path):
    """The context shapes nmt.report.context produces: corpora per task, per-system dicts, extra keys."""
    ctx = {
        "corpus": {"name": "synth (synth, playing en-de)"},
        "corpora": {
            "en-de": {
                "name": "synth (synth, playing en-de)",
                "description": "toy <grammar>",
                "splits": {"train": {"sentences": 10}, "test": {"sentences": 2}},
                "vocabulary": {"src": 50, "tgt": 60},
            }
        },
        "training": {"base": {"optimizer": "sgd", "lr": 1.0, "epochs": 5, "device": None}},
        "decoding": {"beam": 5},
        "generated_by": "nmt 0.1.0 (git abc1234)",
        "notes": "single note",
    }
    index, _ = do_render(tmp_path, context=ctx)
    html = index.read_text()
    assert "toy &lt;grammar&gt;" in html
    assert "synth (synth, playing en-de)" in html and "NOT comparable" in html
    assert "Decoding" in html and "beam" in html and "single note" in html
    assert "nmt 0.1.0 (git abc1234)" in html
    assert "123,456" in html  # parameters from base's model.json


# --------------------------------------------------------------------------- environment and cost

CPU_ENV = {
    "hardware": {"cpu": "Test CPU 9000", "cpu_count": 8, "machine": "x86_64", "gpus": []},
    "software": {"torch": "2.13.0+cpu", "cuda": None, "cudnn": None},
    "code": {"commit": "1111111111111111111111111111111111111111", "dirty": False},
    "device": "cpu",
}
GPU_ENV = {
    "hardware": {
        "cpu": "Test CPU 9000",
        "cpu_count": 16,
        "machine": "x86_64",
        "gpus": [{"name": "NVIDIA Test GPU", "driver": "550.54.15"}],
    },
    "software": {"torch": "2.13.0+cu124", "cuda": "12.4", "cudnn": 90100},
    "code": {"commit": "2222222222222222222222222222222222222222", "dirty": True},
    "device": "NVIDIA Test GPU",
}
MACHINE = {
    "hardware": {"cpu": "Render CPU 1", "cpu_count": 2, "machine": "aarch64", "gpus": []},
    "software": {
        "os": "TestOS-1",
        "python": "3.11.7",
        "torch": "2.13.0+cpu",
        "cuda": None,
        "cudnn": None,
        "sacrebleu": "2.6.0",
        "sacremoses": "0.2.0",
        "eflomal": None,
        "numpy": "2.4.6",
        "nmt": "0.1.0",
    },
    "code": {"commit": "3333333333333333333333333333333333333333", "dirty": True},
}


def test_environment_and_cost_section_sums_each_tables_and_every_training(tmp_path):
    """Hand-made: toy_table trains base (CPU, 1 h), attn (GPU, 30 min) and gone (an older model.json: no wall_s and
    no environment, so its epochs' elapsed_s, 31.5 s x (1+...+5) = 472.5 s); a second table trains attn again and
    `seeded` with two seed runs (CPU, 900 s and 450 s). A system of two tables counts in each, once in the total."""
    results = make_results(tmp_path)
    models = results / "synth" / "models"
    for system, wall_s, env in (
        ("base", 3600.0, CPU_ENV),
        ("attn", 1800.0, GPU_ENV),
        ("seeded", 900.0, CPU_ENV),
        ("seeded_seed2", 450.0, CPU_ENV),
    ):
        (models / system).mkdir(exist_ok=True)
        meta_file = models / system / "model.json"
        meta = json.loads(meta_file.read_text()) if meta_file.exists() else {"system": system}
        meta_file.write_text(json.dumps({**meta, "wall_s": wall_s, "environment": env, "processes": 1}))
    second = {
        **TABLE,
        "id": "toy_table2",
        "title": "Second toy table",
        "systems": {"attn": TABLE["systems"]["attn"], "seeded": {"model": {"attention": "none"}}},
        "rows": [
            {"label": "attn again", "system": "attn", "paper": {}},
            {"label": "seeded", "system": "seeded", "paper": {}},
        ],
    }
    # a table that trains nothing itself: its numbers rest on an ensemble of the other tables' base and attn
    third = {
        **TABLE,
        "id": "toy_table3",
        "title": "Third toy table",
        "systems": {},
        "ensembles": {"both": {"members": ["base", "attn"], "combine": "prob"}},
        "rows": [{"label": "both", "system": "both", "paper": {}}],
    }
    tables = [
        write_yaml(tmp_path / "toy_table.yaml", TABLE),
        write_yaml(tmp_path / "toy_table2.yaml", second),
        write_yaml(tmp_path / "toy_table3.yaml", third),
    ]
    out = tmp_path / "out"
    index = render_report(
        ReportInputs(
            preset="demo",
            preset_description="",
            tables=tables,
            results_dir=results,
            pair_for_task={"en-de": "synth"},
            context={},
            machine=MACHINE,
            runs={"synth": {"seeded": ["seeded", "seeded_seed2"]}},
        ),
        out,
    )
    data = json.loads((out / "environment.json").read_text())
    assert json.loads((out / "claims.json").read_text())["environment"] == data
    assert data["report"] == MACHINE

    hours = {(s["pair"], s["run"]): (s["wall_s"], s["source"], s["device"]) for s in data["systems"]}
    assert hours == {
        ("synth", "base"): (3600.0, "model.json", "cpu"),
        ("synth", "attn"): (1800.0, "model.json", "NVIDIA Test GPU"),
        ("synth", "gone"): (472.5, "metrics.jsonl", None),
        ("synth", "seeded"): (900.0, "model.json", "cpu"),
        ("synth", "seeded_seed2"): (450.0, "model.json", "cpu"),
    }
    first, other, ensemble = data["tables"]
    assert (ensemble["table"], ensemble["trainings"]) == ("toy_table3", 2)
    assert ensemble["device_hours"] == pytest.approx(1.5)  # base (1 h) and attn (30 min)
    assert (first["table"], first["trainings"], first["timed"]) == ("toy_table", 3, 3)
    assert first["device_hours"] == pytest.approx((3600 + 1800 + 472.5) / 3600)  # 1.63125
    assert first["by_device"] == pytest.approx({"cpu": 1.0, "NVIDIA Test GPU": 0.5, "unknown": 0.13125})
    assert (other["table"], other["trainings"], other["device_hours"]) == ("toy_table2", 3, pytest.approx(0.875))
    total = data["total"]
    assert (total["trainings"], total["timed"]) == (5, 5)
    assert total["device_hours"] == pytest.approx((3600 + 1800 + 472.5 + 900 + 450) / 3600)  # 2.00625, attn once
    assert total["by_device"] == pytest.approx({"cpu": 1.375, "NVIDIA Test GPU": 0.5, "unknown": 0.13125})

    envs = [(g["environment"] and g["environment"]["device"], g["trainings"], g["systems"]) for g in data["trainings"]]
    assert envs == [
        ("cpu", 3, ["synth/base", "synth/seeded", "synth/seeded_seed2"]),
        ("NVIDIA Test GPU", 1, ["synth/attn"]),
        (None, 1, ["synth/gone"]),
    ]
    gpu = data["trainings"][1]["environment"]
    assert gpu == {
        "device": "NVIDIA Test GPU",
        "cpu": "Test CPU 9000",
        "driver": "550.54.15",
        "torch": "2.13.0+cu124",
        "cuda": "12.4",
        "cudnn": 90100,
        "commit": "2222222222222222222222222222222222222222",
        "dirty": True,
    }

    html = index.read_text()
    toc = html[html.index('<nav class="toc">') : html.index("</nav>")]
    assert toc.index('href="#claims"') < toc.index('href="#environment"') < toc.index('href="#deviations"')
    assert (
        html.index('<section id="claims">')
        < html.index('<section id="environment">')
        < html.index('<section id="deviations">')
    )
    section = html[html.index('<section id="environment">') : html.index('<section id="deviations">')]
    assert "Environment and cost" in section and "Render CPU 1" in section and "TestOS-1" in section
    assert "3333333333333333333333333333333333333333 with uncommitted changes" in section
    assert "NVIDIA Test GPU" in section and "550.54.15" in section and "90100" in section
    assert ">1.631<" in section and ">0.875<" in section and "<strong>2.006</strong>" in section
    assert "1h 00m 00s" in section and "7m 52s *" in section  # gone: the epochs' elapsed_s, marked
    # the systems section's training time is the same figure
    runs = html[html.index("<h3>Training runs</h3>") :]
    assert ">1h 00m 00s<" in runs and ">30m 00s<" in runs and ">7m 52s *<" in runs


def test_the_report_describes_the_machine_that_renders_it(rendered):
    """Without `machine` the report describes where it runs (nmt.base.environment.describe): no clock, no timestamp."""
    _, index, out = rendered
    data = json.loads((out / "environment.json").read_text())
    assert set(data["report"]) == {"hardware", "software", "code"}
    assert data["report"]["software"]["python"] in index.read_text()
    assert data["total"] == {
        "trainings": 3,
        "timed": 3,
        "wall_s": 3 * 472.5,
        "device_hours": 0.39375,
        "by_device": {"unknown": 0.39375},
    }


def test_the_report_says_what_it_could_not_include_and_keeps_no_stale_figure(tmp_path):
    """A training without metrics.jsonl loses its curve and a missing benchmark its section: the page says which,
    with the file it lacked, and an earlier report's speed figures do not stay beside it."""
    make_results(tmp_path)
    (tmp_path / "results/demo/synth/models/gone/metrics.jsonl").unlink()
    out = tmp_path / "report"
    out.mkdir()
    (out / "attention_speed.png").write_bytes(b"an earlier report's figure")
    (out / ".report-files.json").write_text('{"files": ["attention_speed.png"]}')  # the earlier report's manifest
    index, out = do_render(tmp_path)
    text = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", index.read_text())))
    assert "Not in this report: 3 parts whose input was not found." in text
    assert "the learning curve of synth/gone: no results/demo/synth/models/gone/metrics.jsonl" in text
    assert "the attention speed section: no results/demo/benchmarks/attention.json" in text
    assert "the monotonic speed section: no results/demo/benchmarks/monotonic.json" in text
    assert not (out / "attention_speed.png").exists()


def test_our_bleu_headers_name_the_case_their_signatures_say():
    from nmt.report.render import header_label

    lc = {"metric": "BLEU (tok)", "signature": "nrefs:1|case:lc|eff:no|tok:none|smooth:exp|version:2.6.0"}
    mixed = {"metric": "BLEU (tok)", "signature": "nrefs:1|case:mixed|eff:no|tok:none|smooth:exp|version:2.6.0"}
    assert header_label("bleu_tok", [lc, lc]) == "BLEU (tok, lowercased)"
    assert header_label("bleu_tok", [mixed]) == "BLEU (tok, cased)"
    assert header_label("bleu_tok", [lc, mixed]) == "BLEU (tok, case varies)"
    assert header_label("bleu_tok", []) == "BLEU (tok)"  # nothing measured: nothing to say
    assert (
        header_label("chrf", [{"metric": "chrF2", "signature": "nrefs:1|case:lc|eff:yes|nc:6"}]) == "chrF2 (lowercased)"
    )
    assert header_label("ppl", [lc]) == "ppl"
