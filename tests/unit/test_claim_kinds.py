"""Claim kinds are registry entries (nmt.config.claim_kinds): the registry and the claims schema name the same kinds,
and a kind registered here alone, with its key in the schema, is parsed, judged and shown."""

import importlib
import json
import random
import shutil
from pathlib import Path

import pytest
import yaml

from nmt.config.claim_files import load_claims
from nmt.config.claim_kinds import CLAIM_KINDS, ClaimKind, one_sided
from nmt.config.table_files import load_table
from nmt.report.claims import SINGLE_RUN, ClaimJudge, adjust, claims_json
from nmt.report.claims_view import claim_row, claims_markdown
from nmt.scoring import significance

WORDS = [f"w{i}" for i in range(40)]
schemas = importlib.import_module("nmt.config.schema")  # the module: nmt.config's `schema` is a function


def test_the_registry_and_the_schema_name_the_same_kinds():
    """Each kind is a property of its schema definition, and every property of those definitions beyond the
    fields all claims share is a registered kind."""
    defs = schemas.validator("claims").schema["$defs"]
    common = set(defs["common"])
    for definition in {kind.definition for kind in CLAIM_KINDS.values()}:
        in_schema = set(defs[definition]["properties"]) - common
        registered = {name for name, kind in CLAIM_KINDS.items() if kind.definition == definition}
        assert in_schema == registered, definition


def test_every_kind_can_be_parsed_judged_and_shown():
    for name, kind in CLAIM_KINDS.items():
        assert kind.name == name and kind.evidence in ("table", "benchmark")
        if kind.evidence == "table":
            assert kind.pairs and kind.p_values and kind.paper_effect, name
        assert kind.delta_format.format(1.0)


# -- a kind of our own: A beats B by more than the margin ------------------------------------------------------------


def _beats_by_p(difference, direction, margin):
    return one_sided(difference, direction, margin)


def _beats_by_effect(direction, paper_delta, margin):
    return (paper_delta if direction == "higher" else -paper_delta) - margin


BEATS_BY = ClaimKind(
    "beats_by",
    "table",
    "compared",
    lambda spec, parse, at: [tuple(parse(t, f"{at}.values[{j}]") for j, t in enumerate(spec["values"], start=1))],
    margin=True,
    p_values=_beats_by_p,
    paper_effect=_beats_by_effect,
    delta_format="{:+.1f} BLEU",
)


@pytest.fixture()
def beats_by(tmp_path, monkeypatch):
    """The new kind registered, and its key in a copy of the claims schema (as a contributor adds it)."""
    copied = tmp_path / "schemas"
    shutil.copytree(schemas.SCHEMAS_DIR, copied)
    claims_schema = copied / "claims.schema.yaml"
    data = yaml.safe_load(claims_schema.read_text(encoding="utf-8"))
    data["$defs"]["compared"]["properties"]["beats_by"] = {"$ref": "#/$defs/margin_pair"}
    claims_schema.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    monkeypatch.setattr(schemas, "SCHEMAS_DIR", copied)
    monkeypatch.setitem(CLAIM_KINDS, "beats_by", BEATS_BY)
    schemas.validator.cache_clear()
    yield BEATS_BY
    schemas.validator.cache_clear()


def _lines(path: Path, lines: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _toy_run(tmp_path: Path) -> tuple[Path, dict]:
    """Two systems' scores files on one test set (strong: 5% of the words wrong, weak: 45%), and their table."""
    rng = random.Random(7)
    refs = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 14))) for _ in range(120)]
    ref = _lines(tmp_path / "data" / "test.tgt", refs)
    results = tmp_path / "results" / "toy"
    for system, rate in (("strong", 0.05), ("weak", 0.45)):
        hyps = [" ".join(w if rng.random() > rate else "zz" for w in line.split()) for line in refs]
        hyp = _lines(tmp_path / "out" / f"{system}.txt", hyps)
        stats = significance.bleu_statistics(hyps, refs, "none")
        scores = results / "en-de" / "scores" / f"{system}.test.json"
        scores.parent.mkdir(parents=True, exist_ok=True)
        scores.write_text(
            json.dumps(
                {
                    "system": system,
                    "testset": "test",
                    "preset": "toy",
                    "pair": "en-de",
                    "hyp": str(hyp),
                    "ref": str(ref),
                    "bleu_tok": significance.bleu_of(stats, "none"),
                }
            )
        )
    table = {
        "id": "toy_table",
        "title": "Toy",
        "paper": "Toy et al.",
        "task": "en-de",
        "testset": "test",
        "columns": ["bleu_tok"],
        "systems": {"strong": {}, "weak": {}},
        "rows": [
            {"label": "strong", "system": "strong", "paper": {"bleu_tok": 30.0}},
            {"label": "weak", "system": "weak", "paper": {"bleu_tok": 20.0}},
        ],
    }
    table_file = tmp_path / "toy_table.yaml"
    table_file.write_text(yaml.safe_dump(table))
    return results, {"toy_table": load_table(table_file)}


def _claim(margin: float) -> dict:
    return {
        "id": f"strong-by-{margin:g}",
        "claim": f"strong beats weak by more than {margin:g}",
        "where": "T1",
        "table": "toy_table",
        "metric": "bleu_tok",
        "beats_by": {
            "values": ["strong", "weak"],
            "margin": margin,
            "margin_basis": "derived",
            "margin_why": "a test of the registry",
        },
    }


def test_a_kind_registered_alone_is_parsed_judged_and_shown(beats_by, tmp_path):
    results, tables = _toy_run(tmp_path)
    claims_file = tmp_path / "claims.yaml"
    claims_file.write_text(yaml.safe_dump({"paper": "Toy et al.", "claims": [_claim(1.0), _claim(1000.0)]}))

    # parsed: its pairs, its margin and the paper's difference from the table
    near, far = load_claims(claims_file, tables)["claims"]
    assert near["kind"] == "beats_by" and near["margin"] == 1.0 and near["margin_basis"] == "derived"
    assert [(p["a"]["text"], p["b"]["text"], p["paper_delta"]) for p in near["pairs"]] == [("strong", "weak", 10.0)]

    # judged by its own test: strong beats weak by far more than 1 BLEU, and by less than 1000
    judge = ClaimJudge(results_dir=results, preset="toy", tables_by_id=tables, pair_for_task={"en-de": "en-de"})
    records = adjust([judge.judge(near), judge.judge(far)])
    assert [r["verdict"] for r in records] == [SINGLE_RUN, SINGLE_RUN]  # one run per system: which way it points
    assert [r["points"] for r in records] == ["for", "against"]
    assert records[0]["paper_effect"] == pytest.approx(9.0)  # the kind's own distance from its threshold

    # shown with the kind's format
    row = claim_row(records[0], set())
    assert row["comparison"] == "strong vs weak (margin 1, ours)"
    assert row["paper_delta"] == "+10.0 BLEU" and row["ours_delta"].endswith(" BLEU")
    ledger = claims_markdown({**claims_json("toy", records), "run": {}})
    assert "strong-by-1" in ledger and "+10.0 BLEU" in ledger


def test_a_claim_of_an_unregistered_kind_is_refused(tmp_path):
    from nmt.base.errors import ConfigError

    _, tables = _toy_run(tmp_path)
    claims_file = tmp_path / "claims.yaml"
    claims_file.write_text(yaml.safe_dump({"paper": "Toy et al.", "claims": [_claim(1.0)]}))
    with pytest.raises(
        ConfigError, match="a claim has exactly one of better, best, order, each_better, within, equal, speedup"
    ):
        load_claims(claims_file, tables)
