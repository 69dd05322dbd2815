"""The claims as the report shows them: the rows of the page's Claims section (:func:`claims_view`, for the HTML
template) and the same ledger as Markdown (:func:`claims_markdown`, the report's claims.md, for a reproduction's
README), both from the records of nmt.report.claims, so the page and the Markdown never say different things."""
from __future__ import annotations

from typing import Any

from ..config.table_files import is_number
from .claims import NOT_RUN, VERDICTS, claims_json

DASH = "\u2013"  # en dash: empty cell


def fmt_delta(value: Any, kind: str) -> str:
    if not is_number(value):
        return DASH
    return f"{float(value):.2f}x" if kind == "speedup" else f"{float(value):+.2f}"


def fmt_p(value: Any, resamples: Any) -> str:
    """A bootstrap p-value; 0 (no resample crossed) as below the resolution of the resamples, 2 / n."""
    if not is_number(value):
        return DASH
    if value == 0 and is_number(resamples):
        return f"< {2 / resamples:.1g}"
    return f"{value:.3f}" if value >= 0.001 else f"{value:.1e}"


def claims_view(preset: str, claims: list[dict], claim_files: list[str], table_ids: set[str],
               synthetic: bool, trainings: list[dict]) -> dict:
    """The Claims section: the tally and one row per claim (its weakest comparison for best/order/each_better), with
    its raw and adjusted verdicts, whether the paper's difference lies in our interval, the runs and convergence it
    rests on and its scope."""
    rows = [claim_row(c, table_ids) for c in claims]
    gate = [gate_row(t) for t in trainings]
    return {"summary": claims_json(preset, claims)["summary"], "rows": [r for r in rows if not r["check"]],
            "checks": [r for r in rows if r["check"]], "sources": claim_files,
            "synthetic": synthetic, "paper_preset": preset == "paper",
            "single_run": bool(rows) and all(r["runs"] in ("1", DASH) for r in rows),
            "trainings": gate, "n_converged": sum(t["converged"] for t in trainings),
            "windows": sorted({t["window"] for t in trainings})}


def gate_row(training: dict) -> dict:
    """One training's row of the convergence gate (nmt.report.claims.training_convergence's record)."""
    last = training["last_improvement"]
    return {"pair": training["pair"], "system": training["system"], "epochs": training["epochs"],
            "halvings": training["halvings"], "last": DASH if last is None else f"{100 * last:+.2f}%",
            "gain": window_gain_text(training["window_gain"], training["window"]),
            "converged": "yes" if training["converged"] else "no"}


def claim_row(c: dict, table_ids: set[str]) -> dict:
    """One claim's row of the Claims section (or of our checks)."""
    if c["comparisons"]:
        weakest = c["comparisons"][c["weakest"]]
        comparison = f"{weakest['a']} vs {weakest['b']}"
    else:
        comparison = c["kind"]
    if c.get("margin") is not None:
        basis = "the paper's" if c.get("margin_basis") == "paper" else "ours"
        comparison += f" (margin {c['margin']:g}, {basis})"
    paper_delta = fmt_delta(c["paper_delta"], c["kind"])
    if c.get("paper_note"):
        paper_delta = c["paper_note"] if paper_delta == DASH else f"{paper_delta} ({c['paper_note']})"
    interval = (f"[{fmt_delta(c['ci_low'], c['kind'])}, {fmt_delta(c['ci_high'], c['kind'])}]"
                if is_number(c["ci_low"]) else DASH)
    unconverged = [name for name, s in (c.get("systems_convergence") or {}).items() if s["converged"] is False]
    runs = c.get("n_runs") or {}
    return {"id": c["id"], "paper": c["paper"], "claim": c["claim"], "where": c["where"],
            "table_link": c["table"] if c.get("table") in table_ids else None, "comparison": comparison,
            "paper_delta": paper_delta, "ours_delta": fmt_delta(c["ours_delta"], c["kind"]),
            "interval": interval,
            "paper_inside": {True: "inside", False: "outside", None: DASH}[c.get("paper_inside")],
            "verdict": c["verdict"], "verdict_class": c["verdict"].replace(" ", "-"),
            "label": c.get("verdict_label") or c["verdict"], "raw": c.get("verdict_raw", c["verdict"]),
            "p": fmt_p(c.get("p_adjusted"), c.get("resamples")),
            "runs": ", ".join(sorted({str(n) for n in runs.values()})) if runs else DASH,
            "unconverged": ", ".join(unconverged), "scope": (c.get("scope") or {}).get("text"),
            "operationalisation": c.get("operationalisation"), "substitute": c.get("substitute"),
            "margin_why": c.get("margin_why"), "margin_basis": c.get("margin_basis"),
            "reason": c.get("reason"), "check": c.get("check"),
            "power": c.get("power_note"),
            "method": c.get("interval_method")}


def window_gain_text(gain: float | None, window: int) -> str:
    """The convergence gate's figure (nmt.settings.schedule.window_gain) in words: "-0.40% over the last 2 evaluations";
    with too few evaluations, says so."""
    if gain is None:
        return f"{DASH} (no more than {window} evaluations)"
    return f"{100 * gain:+.2f}% over the last {window} evaluation{'s' if window != 1 else ''}"


# -- claims.md ---------------------------------------------------------------------------------------------------
def claims_markdown(record: dict) -> str:
    """A rendered report's claims.json (``record``) as a Markdown ledger: the rule, the tally, the papers' claims
    grouped by verdict with their intervals and what the runs could detect, our checks, and the convergence gate on
    every training."""
    rows = [claim_row(c, set()) for c in record["claims"]]
    checks = [claim_row(c, set()) for c in record["checks"]]
    tally = record["summary"]
    partial = (record.get("run") or {}).get("partial")
    lines = [f"# The claims of the {record['preset']} run", ""]
    if partial:
        lines += [f"**{partial['text'][0].upper()}{partial['text'][1:]}.**", ""]
    lines += [f"{tally['claims']} claims of the papers: " + ", ".join(
                  f"{tally[verdict.replace(' ', '_')]} {verdict}" for verdict in VERDICTS)
              + f" ({tally['not_converged']} of the judged ones capped by the convergence gate); "
              + f"{tally['checks']} checks of ours beside them.", "",
              _rule_text(record["rule"]), ""]
    for verdict in VERDICTS:
        group = [r for r in rows if r["verdict"] == verdict]
        lines += [f"## {verdict.capitalize()} ({len(group)})", ""]
        if not group:
            continue
        lines += _not_run_table(group) if verdict == NOT_RUN else _claims_table(group)
        lines.append("")
    if checks:
        lines += [f"## Our checks ({len(checks)}, outside Holm's family)", "", *_claims_table(checks), ""]
    if record["trainings"]:
        trainings = record["trainings"]
        converged = sum(t["converged"] for t in trainings)
        lines += [f"## The convergence gate ({converged} of {len(trainings)} trainings converged)", "",
                  "| pair | system | epochs | halvings | last gain | window gain | converged |",
                  "| --- | --- | --: | --: | --: | --- | --- |"]
        lines += [_row(*gate_row(t).values()) for t in trainings]
        lines.append("")
    return "\n".join(lines)


def _rule_text(rule: dict) -> str:
    return (f"The rule: a claim is judged at the {100 * rule['alpha']:g}% level, {rule['correction']}; the intervals "
            f"are {rule['interval']}. Power: {rule['power']}.")


def _claims_table(rows: list[dict]) -> list[str]:
    out = ["| claim | where | comparison | paper | ours | 95% interval | p (adjusted) | runs | verdict | what the runs "
           "could detect |", "| --- | --- | --- | --: | --: | --- | --: | --: | --- | --- |"]
    for r in rows:
        detect = r["power"] or DASH
        if r["unconverged"]:
            detect = f"not converged: {r['unconverged']}; {detect}"
        out.append(_row(f"**{r['id']}**: {r['claim']}", r["where"], r["comparison"], r["paper_delta"], r["ours_delta"],
                        r["interval"], r["p"], r["runs"], r["label"], detect))
    return out


def _not_run_table(rows: list[dict]) -> list[str]:
    return (["| claim | where | why |", "| --- | --- | --- |"]
            + [_row(f"**{r['id']}**: {r['claim']}", r["where"], r["reason"] or DASH) for r in rows])


def _row(*cells: Any) -> str:
    """A Markdown table row, each cell on one line with its pipes escaped."""
    return "| " + " | ".join(" ".join(str(cell).split()).replace("|", "\\|") for cell in cells) + " |"
