"""The README's headline of the reference run says what docs/reproductions/small-gpu/claims.json holds: a new seed
there makes this fail until the README says what it found."""

import collections
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "docs" / "reproductions" / "small-gpu"


def headline() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(r"\*\*What the reference run found so far\.\*\*(.*?)\n\n", text, re.S)
    assert match, "README.md has no headline of the reference run"
    return " ".join(match.group(1).split())


def test_the_readme_headline_is_the_reference_runs():
    ledger = json.loads((REFERENCE / "claims.json").read_text(encoding="utf-8"))
    partial, summary = ledger["run"]["partial"], ledger["summary"]
    claims = {claim["id"]: claim for claim in ledger["claims"]}
    points = collections.Counter(claim["points"] for claim in claims.values() if claim["verdict"] == "single run")
    text = headline()
    assert (
        f"holds seed {', '.join(map(str, partial['seeds_in']))} of {len(partial['seeds_planned'])} "
        f"({partial['runs_in']} of its {partial['runs_planned']} runs)"
    ) in text
    assert summary["judged"] == 0 and "no claim has a verdict yet" in text
    assert f"Of the {summary['single_run']} claims its tables test" in text
    assert (
        f"points the paper's way on {points['for']} " in text
        and f"the other way on {points['against']} " in text
        and f"neither way on {points['neither']};" in text
    )
    assert f"the other {summary['not_run']} are of tables it does not run" in text
    for claim_id, words in [
        ("luong-attention", "attention over none"),
        ("luong-ensemble", "the ensemble over the best"),
        ("luong-input-feeding", "input feeding"),
    ]:
        claim = claims[claim_id]
        ours, paper = f"{claim['ours_delta']:+.1f}", f"{claim['paper_delta']:+.1f}"
        assert re.search(rf"{words}[^,;]*: {re.escape(ours)}( BLEU)?, the paper {re.escape(paper)}", text), claim_id
    assert "[claims.md](docs/reproductions/small-gpu/claims.md)" in text
