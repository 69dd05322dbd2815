"""The claims as the report shows them: the rows of the page's Claims section (:func:`claims_view`, for the HTML
template) and the same ledger as Markdown (:func:`claims_markdown`, the report's claims.md, for a reproduction's
README), both from the records of nmt.report.claims, so the page and the Markdown never say different things."""

from __future__ import annotations

import math
from typing import Any

from ..config.claim_kinds import DIFFERENCE_FORMAT, claim_kind
from ..config.table_files import is_number
from .claims import CONTRADICTED, JUDGED, NOT_RUN, SINGLE_RUN, VERDICTS, claims_json, single_run_text

DASH = "\u2013"  # en dash: empty cell


def fmt_delta(value: Any, kind: str) -> str:
    """A difference (or a ratio) as its claim's kind shows it (nmt.config.claim_kinds; an unknown kind, from another
    version's claims file, as a difference)."""
    if not is_number(value):
        return DASH
    known = claim_kind(kind)
    return (known.delta_format if known else DIFFERENCE_FORMAT).format(float(value))


def fmt_p(value: Any, resamples: Any) -> str:
    """A bootstrap p-value; 0 (no resample crossed) as below the resolution of the resamples, 2 / n."""
    if not is_number(value):
        return DASH
    if value == 0 and is_number(resamples):
        return f"< {2 / resamples:.1g}"
    return f"{value:.3f}" if value >= 0.001 else f"{value:.1e}"


def claims_view(
    preset: str, claims: list[dict], claim_files: list[str], table_ids: set[str], synthetic: bool, trainings: list[dict]
) -> dict:
    """The Claims section: the tally and one row per claim (for best/order/each_better the comparison that decided its
    verdict, the others a click away), with its raw and adjusted verdicts, where the paper's difference lies relative
    to our interval, the runs and convergence it rests on and its scope."""
    rows = [claim_row(c, table_ids) for c in claims]
    gate = [gate_row(t) for t in trainings]
    return {
        "summary": claims_json(preset, claims)["summary"],
        "rows": [r for r in rows if not r["check"]],
        "checks": [r for r in rows if r["check"]],
        "sources": claim_files,
        "synthetic": synthetic,
        "paper_preset": preset == "paper",
        "single_run": bool(rows) and all(r["runs"] in ("1", DASH) for r in rows),
        "trainings": gate,
        "n_converged": sum(t["converged"] for t in trainings),
        "windows": sorted({t["window"] for t in trainings}),
    }


def gate_row(training: dict) -> dict:
    """One training's row of the convergence gate (nmt.report.claims.training_convergence's record)."""
    last = training["last_improvement"]
    return {
        "pair": training["pair"],
        "system": training["system"],
        "epochs": training["epochs"],
        "halvings": training["halvings"],
        "last": DASH if last is None else f"{100 * last:+.2f}%",
        "left": (
            projected_left_text(training)
            if "projected_left" in training  # a record before the projection:
            else window_gain_text(training["window_gain"], training["window"])
        ),  # the old gate's figure
        "converged": "yes" if training["converged"] else "no",
    }


def claim_row(c: dict, table_ids: set[str]) -> dict:
    """One claim's row of the Claims section (or of our checks): the comparison that decided its verdict
    (nmt.report.claims.deciding_index; a claims file written before ``deciding`` existed: its ``weakest``), and each
    of its other comparisons in a line (``others``)."""
    comparisons = c.get("comparisons") or []
    deciding = c.get("deciding", c.get("weakest"))
    if comparisons:
        deciding = deciding if deciding is not None else 0
        shown = comparisons[deciding]
        comparison = f"{shown['a']} vs {shown['b']}"
    else:
        comparison = c["kind"]
    others = (
        [
            comparison_line(other, c["kind"], c.get("paper_preset", False))
            for i, other in enumerate(comparisons)
            if i != deciding
        ]
        if len(comparisons) > 1
        else []
    )
    if c.get("margin") is not None:
        basis = "the paper's" if c.get("margin_basis") == "paper" else "ours"
        comparison += f" (margin {c['margin']:g}, {basis})"
    paper_delta = fmt_delta(c["paper_delta"], c["kind"])
    if c.get("paper_note"):
        paper_delta = c["paper_note"] if paper_delta == DASH else f"{paper_delta} ({c['paper_note']})"
    interval = (
        f"[{fmt_delta(c['ci_low'], c['kind'])}, {fmt_delta(c['ci_high'], c['kind'])}]"
        if is_number(c["ci_low"])
        else DASH
    )
    unconverged = [name for name, s in (c.get("systems_convergence") or {}).items() if s["converged"] is False]
    runs = c.get("n_runs") or {}
    where = c.get("paper_position") or {True: "inside", False: "outside", None: DASH}[c.get("paper_inside")]
    return {
        "id": c["id"],
        "paper": c["paper"],
        "claim": c["claim"],
        "where": c["where"],
        "table_link": c["table"] if c.get("table") in table_ids else None,
        "comparison": comparison,
        "paper_delta": paper_delta,
        "ours_delta": fmt_delta(c["ours_delta"], c["kind"]),
        "interval": interval,
        "paper_inside": where,
        "others": others,
        "verdict": c["verdict"],
        "verdict_class": c["verdict"].replace(" ", "-"),
        "label": c.get("verdict_label") or c["verdict"],
        "raw": c.get("verdict_raw", c["verdict"]),
        "p": fmt_p(c.get("p_adjusted"), c.get("resamples")),
        "runs": ", ".join(sorted({str(n) for n in runs.values()})) if runs else DASH,
        "unconverged": ", ".join(unconverged),
        "scope": (c.get("scope") or {}).get("text"),
        "operationalisation": c.get("operationalisation"),
        "substitute": c.get("substitute"),
        "margin_why": c.get("margin_why"),
        "margin_basis": c.get("margin_basis"),
        "reason": c.get("reason"),
        "check": c.get("check"),
        "power": c.get("power_note"),
        "method": c.get("interval_method"),
    }


def comparison_line(comparison: dict, kind: str, paper_preset: bool) -> str:
    """One comparison of a claim of several, in a line: its terms, our difference and interval, the paper's, and its
    own (unadjusted) outcome."""
    if comparison.get("verdict") == SINGLE_RUN:
        outcome = single_run_text(comparison.get("points"))
    elif comparison.get("verdict") == CONTRADICTED and not paper_preset:
        outcome = "not reproduced on its own"
    else:
        outcome = f"{comparison.get('verdict')} on its own"
    interval = f"[{fmt_delta(comparison['ci_low'], kind)}, {fmt_delta(comparison['ci_high'], kind)}]"
    return (
        f"{comparison['a']} vs {comparison['b']}: ours {fmt_delta(comparison['ours_delta'], kind)} {interval}, "
        f"paper {fmt_delta(comparison.get('paper_delta'), kind)} ({outcome})"
    )


def projected_left_text(training: dict) -> str:
    """The convergence gate's figure (nmt.settings.schedule.convergence's projected_left) in words, with what it was
    fitted on: "0.35% in 10 epochs (line through epochs 3-13: -0.02%/epoch, at steepest -0.04%)" (a claims file
    written before the gate bounded the slope from below, without its `level`: "at most", its upper bound); with too
    few evaluations, says so."""
    window = training["window"]
    if training.get("projected_left") is None:
        return f"{DASH} (fewer than {window} evaluations)"
    slope, bound = (100 * (math.exp(training[key]) - 1) for key in ("slope", "slope_bound"))
    return (
        f"{100 * training['projected_left']:.2f}% in {training['horizon']} epochs (line through epochs "
        f"{training['fit_from']}-{training['epochs']}: {slope:+.2f}%/epoch, "
        f"{'at steepest' if training.get('level') else 'at most'} {bound:+.2f}%)"
    )


def window_gain_text(gain: float | None, window: int) -> str:
    """The figure of the gate before the projection (a claims file written before it: how much the best of the last
    ``window`` evaluations lowered the best before them) in words: "-0.40% over the last 2 evaluations"."""
    if gain is None:
        return f"{DASH} (no more than {window} evaluations)"
    return f"{100 * gain:+.2f}% over the last {window} evaluation{'s' if window != 1 else ''}"


# -- claims.md ---------------------------------------------------------------------------------------------------
def claims_markdown(record: dict) -> str:
    """A rendered report's claims file (``record``) as a Markdown ledger: the rule, the tally, the papers' claims
    grouped by verdict with their intervals and what the runs could detect, our checks, and the convergence gate on
    every training."""
    rows = [claim_row(c, set()) for c in record["claims"]]
    checks = [claim_row(c, set()) for c in record["checks"]]
    tally = record["summary"]
    partial = (record.get("run") or {}).get("partial")
    lines = [f"# The claims of the {record['preset']} run", ""]
    if partial:
        lines += [f"**{partial['text'][0].upper()}{partial['text'][1:]}.**", ""]
    lines += [_tally_text(tally), "", _rule_text(record["rule"]), ""]
    for verdict in VERDICTS:
        group = [r for r in rows if r["verdict"] == verdict]
        lines += [f"## {verdict.capitalize()} ({len(group)})", ""]
        if not group:
            continue
        if verdict == SINGLE_RUN:
            lines += [
                "No verdict: a single run on a side of a comparison measures no spread between seeds, so its "
                "interval is about these two models, not the techniques. Outside Holm's family and the tally; "
                "which way it points, and the seeds that would decide it at an assumed spread between seeds.",
                "",
            ]
        lines += _not_run_table(group) if verdict == NOT_RUN else _claims_table(group)
        lines.append("")
        lines += _others_lines(group)
    if checks:
        lines += [f"## Our checks ({len(checks)}, outside Holm's family)", "", *_claims_table(checks), ""]
    if record["trainings"]:
        trainings = record["trainings"]
        converged = sum(t["converged"] for t in trainings)
        lines += [
            f"## The convergence gate ({converged} of {len(trainings)} trainings converged)",
            "",
            "| pair | system | epochs | halvings | last gain | "
            + ("projected left" if "projected_left" in trainings[0] else "window gain")
            + " | converged |",
            "| --- | --- | --: | --: | --: | --- | --- |",
        ]
        lines += [_row(*gate_row(t).values()) for t in trainings]
        lines.append("")
    return "\n".join(lines)


def _tally_text(tally: dict) -> str:
    """The Markdown ledger's tally: the judged claims by verdict, then the single-run and unrun ones apart (a
    claims file written before ``judged`` and ``single_run`` existed: counted from its verdicts)."""
    judged = tally.get("judged", sum(tally.get(v.replace(" ", "_"), 0) for v in JUDGED))
    counts = ", ".join(f"{tally.get(v.replace(' ', '_'), 0)} {v}" for v in JUDGED)
    family = f"; Holm's adjustment over {tally['family']} of them" if "family" in tally else ""
    return (
        f"{tally['claims']} claims of the papers: {judged} judged ({counts}; {tally.get('not_converged', 0)} "
        f"of them capped by the convergence gate{family}), {tally.get('single_run', 0)} resting on a single run "
        f"(no verdict), {tally.get('not_run', 0)} not run; {tally.get('checks', 0)} checks of ours beside them. "
        f"The 5% family-wise error rate covers the judged claims' verdicts only."
    )


def _rule_text(rule: dict) -> str:
    single = f" Single runs: {rule['single_run']}." if rule.get("single_run") else ""
    return (
        f"The rule: a claim is judged at the {100 * rule['alpha']:g}% level, {rule['correction']}; the intervals "
        f"are {rule['interval']}.{single} Power: {rule['power']}."
    )


def _others_lines(rows: list[dict]) -> list[str]:
    """The other comparisons of each claim of several, a line each under its group's table (the table shows the one
    that decided the verdict)."""
    out = [
        f"- **{r['id']}**, its other comparisons: " + "; ".join(" ".join(o.split()) for o in r["others"])
        for r in rows
        if r["others"]
    ]
    return out + [""] if out else []


def _claims_table(rows: list[dict]) -> list[str]:
    out = [
        "| claim | where | comparison | paper | ours | 95% interval | p (adjusted) | runs | verdict | what the runs "
        "could detect |",
        "| --- | --- | --- | --: | --: | --- | --: | --: | --- | --- |",
    ]
    for r in rows:
        detect = r["power"] or DASH
        if r["unconverged"]:
            detect = f"not converged: {r['unconverged']}; {detect}"
        out.append(
            _row(
                f"**{r['id']}**: {r['claim']}",
                r["where"],
                r["comparison"],
                r["paper_delta"],
                r["ours_delta"],
                r["interval"],
                r["p"],
                r["runs"],
                r["label"],
                detect,
            )
        )
    return out


def _not_run_table(rows: list[dict]) -> list[str]:
    return ["| claim | where | why |", "| --- | --- | --- |"] + [
        _row(f"**{r['id']}**: {r['claim']}", r["where"], r["reason"] or DASH) for r in rows
    ]


def _row(*cells: Any) -> str:
    """A Markdown table row, each cell on one line with its pipes escaped."""
    return "| " + " | ".join(" ".join(str(cell).split()).replace("|", "\\|") for cell in cells) + " |"
