"""Which of a preset's planned runs a results directory holds.
Details: docs/internals/report.md."""

from __future__ import annotations

from ..config.plan import seed_of


def scored_runs(expected: dict[tuple[str, str, str], bool]) -> set[tuple[str, str]]:
    """{(task, run)} of the runs with at least one scores file, from {(task, run, testset): whether its scores file
    exists} (every scores file the preset's tables and figures read)."""
    return {(task, run) for (task, run, _), found in expected.items() if found}


def runs_in(runs: dict[str, dict[str, list[str]]], scored: set[tuple[str, str]]) -> dict[str, dict[str, list[str]]]:
    """``runs`` ({task: {name: [name, name_seedB, ...]}}, nmt.config.plan.collect_runs) less the runs without a
    scores file. A name none of whose runs is scored keeps them all: it is missing, which is said where it is read."""
    out: dict[str, dict[str, list[str]]] = {}
    for task, by_name in runs.items():
        for name, planned in by_name.items():
            present = [run for run in planned if (task, run) in scored]
            out.setdefault(task, {})[name] = present or planned
    return out


def partial_record(expected: dict[tuple[str, str, str], bool], seeds: list[int]) -> dict | None:
    """How much of the planned run is in, or None when every planned run has a scores file: {"runs_in",
    "runs_planned", "seeds_in" (the seeds with at least one run in), "seeds_planned", "text"}."""
    planned = {(task, run) for task, run, _ in expected}
    scored = scored_runs(expected)
    if not planned or scored >= planned:
        return None
    seeds_in = sorted({seed_of(run, seeds) for _, run in scored})
    shown = ", ".join(map(str, seeds_in)) or "none"
    text = f"a partial run: {len(scored)} of its {len(planned)} planned runs have scores"
    if len(seeds) > 1:  # a run made one seed at a time: which seeds are in
        text += f" (seed{'s' if len(seeds_in) != 1 else ''} {shown} of {', '.join(map(str, seeds))})"
    return {
        "runs_in": len(scored),
        "runs_planned": len(planned),
        "seeds_in": seeds_in,
        "seeds_planned": list(seeds),
        "text": text,
    }


def runs_text(k: int, n: int) -> str:
    """A row's or a claim's share of its planned runs, as the report, its CSV and `nmt compare` say it."""
    return f"{k} of {n} runs"
