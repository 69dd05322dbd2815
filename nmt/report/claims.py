"""The claims ledger: a verdict on each of the papers' claims (workflow/claims/*.yaml) from this run's results.

One rule for every claim. Each comparison A vs B gets our difference (A - B on the whole test set) and its 95%
interval from a paired bootstrap over the test sentences (nmt.significance: sacreBLEU's resampling for BLEU, the
same resamples of each sentence's link counts for AER/SAER). With ``s`` = +1 where higher is better and -1 where
lower is, and [lo, hi] the interval of s * (A - B):

- better / best / order  reproduced: lo > 0 (same direction, interval excludes 0); contradicted: hi < 0
                         (opposite direction, interval excludes 0); else inconclusive;
- within (margin m)      reproduced: lo > -m (A is worse than B by less than m); contradicted: hi < -m;
- equal (margin m)       reproduced: the interval of A - B lies inside (-m, m); contradicted: it lies wholly
                         outside; else inconclusive;
- speedup                reproduced: the benchmark's speed-up exceeds 1 in every cell of its grid within the
                         claim's lengths; contradicted: it is below 1 in every one; else inconclusive.

A claim made of several comparisons (best, order) is reproduced when all are, contradicted when any is, and shows
its weakest comparison (the smallest lo). A claim whose table the preset cannot measure, or whose systems have
no scores file, is "not run" with the reason, never guessed. The claims come checked from
nmt.pipeline.plan.collect_claims.
"""
from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import kendalltau

from .. import layout
from ..data.text import read_parallel
from ..data.tokenize import detokenize
from ..errors import InputError
from ..significance import (DEFAULT_SAMPLES, bleu_of, bleu_resamples, bleu_statistics, bootstrap_seed, error_rate,
                            error_rate_resamples, percentile_interval, resample_indices)
from .tables import read_json_object

REPRODUCED, CONTRADICTED, INCONCLUSIVE, NOT_RUN = "reproduced", "contradicted", "inconclusive", "not run"
VERDICTS = (REPRODUCED, CONTRADICTED, INCONCLUSIVE, NOT_RUN)
#: claims.csv's columns, in order (claims.json has these and the comparisons of each claim)
CSV_FIELDS = ("id", "paper", "claim", "where", "table", "metric", "kind", "paper_delta", "ours_delta", "ci_low",
              "ci_high", "margin", "verdict", "reason")

#: scores field -> (the translation it scores, sacreBLEU tokenisation, detokenise first)
BLEU_FIELDS = {"bleu_tok": ("plain", "none", False), "bleu_tok_unk": ("unk", "none", False),
               "bleu_detok": ("plain", "13a", True), "bleu_detok_unk": ("unk", "13a", True)}
#: scores field -> (its per-sentence counts in an alignment scores file, scale)
RATE_FIELDS = {"aer": ("aer", 1.0), "aer_pct": ("aer", 100.0), "aer_predicted": ("aer_predicted", 1.0),
               "aer_predicted_pct": ("aer_predicted", 100.0), "saer": ("saer", 1.0), "saer_pct": ("saer", 100.0),
               "saer_hard": ("saer_hard", 1.0), "saer_hard_pct": ("saer_hard", 100.0)}


class NotRun(Exception):
    """A claim this run cannot judge: why."""


class ClaimJudge:
    """Judges claims against one run: ``results_dir`` (results/PRESET), ``pair_for_task`` as the report has it,
    ``languages`` {pair: target language} for detokenised BLEU, ``unavailable`` {table id: why the preset cannot
    measure it}, ``benchmarks`` {name: JSON file of `nmt bench NAME`}, ``runs`` {task: {system: [system,
    system_seedB, ...]}} for the systems trained with several seeds (their mean is compared)."""

    def __init__(self, *, results_dir: Path, preset: str, tables_by_id: dict[str, dict], pair_for_task: dict[str, str],
                 languages: dict[str, str] | None = None, unavailable: dict[str, str] | None = None,
                 benchmarks: dict[str, Path] | None = None, runs: dict[str, dict[str, list[str]]] | None = None,
                 n_samples: int = DEFAULT_SAMPLES):
        self.results_dir, self.preset, self.tables = Path(results_dir), preset, tables_by_id
        self.pair_for_task, self.languages = pair_for_task, languages or {}
        self.unavailable, self.benchmarks = unavailable or {}, benchmarks or {}
        self.runs, self.n_runs = runs or {}, 1  # {task: {system: [its seed runs]}} (nmt.pipeline.plan.collect_runs)
        self.n_samples, self.seed = n_samples, bootstrap_seed()
        self.sources: list[Path] = []  # the files the verdicts were computed from

    def judge(self, claim: dict) -> dict:
        record = {key: claim.get(key) for key in ("id", "paper", "claim", "where", "table", "metric", "kind",
                                                   "paper_delta", "paper_note", "margin")}
        record.update({"direction": claim["direction"], "ours_delta": None, "ci_low": None, "ci_high": None,
                       "verdict": NOT_RUN, "reason": None, "comparisons": [], "weakest": None, "interval": None,
                       "runs": None})
        try:
            if claim["kind"] == "speedup":
                record.update(self._speedup(claim))
            else:
                record.update(self._compared(claim))
        except NotRun as why:
            record["reason"] = str(why)
        return record

    # -- comparisons of systems on a table's test set ------------------------------------------------------------
    def _compared(self, claim: dict) -> dict:
        if claim.get("absent"):
            raise NotRun(claim["absent"])
        table = self.tables[claim["table"]]
        if claim["table"] in self.unavailable:
            raise NotRun(f"preset {self.preset!r} cannot measure {claim['table']}: {self.unavailable[claim['table']]}")
        pair = self.pair_for_task.get(table["task"])
        if pair is None:
            raise NotRun(f"preset {self.preset!r} has no corpus for task {table['task']}")
        values = {value for pair_ in claim["pairs"] for term in (pair_["a"], pair_["b"]) for value in term["values"]}
        full, samples, n_sentences = self._resampled(values, table, pair)
        comparisons = []
        for comparison in claim["pairs"]:
            a, b = (self._term(term, full, samples) for term in (comparison["a"], comparison["b"]))
            delta, deltas = a[0] - b[0], a[1] - b[1]
            low, high = percentile_interval(deltas)
            verdict = pair_verdict(claim["kind"], claim["direction"], low, high, claim.get("margin"))
            comparisons.append({"a": comparison["a"]["text"], "b": comparison["b"]["text"],
                                "paper_delta": comparison["paper_delta"], "ours_delta": delta, "ci_low": low,
                                "ci_high": high, "verdict": verdict})
        weakest_index = min(range(len(comparisons)), key=lambda i: _improvement_low(
            claim["direction"], comparisons[i]["ci_low"], comparisons[i]["ci_high"]))
        weakest = comparisons[weakest_index]
        paper_delta = claim["paper_delta"] if len(comparisons) == 1 or claim["paper_delta"] is not None \
            else weakest["paper_delta"]
        return {"verdict": combine_verdicts([c["verdict"] for c in comparisons]), "ours_delta": weakest["ours_delta"],
                "ci_low": weakest["ci_low"], "ci_high": weakest["ci_high"], "paper_delta": paper_delta,
                "comparisons": comparisons, "weakest": weakest_index,
                "runs": self.n_runs,
                "interval": f"95%, paired bootstrap over the {n_sentences} sentences of {table['testset']} "
                            f"({self.n_samples} resamples, seed {self.seed})"
                            + (f" and over each system's {self.n_runs} seed runs" if self.n_runs > 1 else "")}

    def _term(self, term: dict, full: dict, samples: dict) -> tuple[float, np.ndarray]:
        value = sum(sign * full[v] for sign, v in zip(term["signs"], term["values"]))
        resampled = sum(sign * samples[v] for sign, v in zip(term["signs"], term["values"]))
        return value, resampled

    def _resampled(self, values: set[tuple[str, str]], table: dict, pair: str
                   ) -> tuple[dict, dict, int]:
        """{value: whole-test-set score}, {value: [n_samples] resampled scores} on one set of resampled sentences,
        and the number of sentences. A system trained with several seeds (its runs: self.runs) scores the mean of
        its runs, and each resample also draws its runs with replacement (the same draw for all of a system's
        values, so that a gain compares the same runs): the interval then holds the spread between seeds too."""
        scores_dir = layout.under(self.results_dir, layout.RESULTS_ROOT, layout.SCORES_DIR, pair=pair)
        per_run = {}  # (run, field) -> ("bleu", (tokenize, stats)) | ("rate", (counts, scale, reported))
        runs_of = {system: (self.runs.get(pair) or {}).get(system, [system]) for system, _ in values}
        for system, field in sorted(values):
            for run in runs_of[system]:
                per_run[(run, field)] = self._statistics(scores_dir, run, field, table, pair)
        sizes = {len(data[1]) if kind == "bleu" else len(data[0]) for kind, data in per_run.values()}
        if len(sizes) != 1:
            raise InputError(f"{table['id']}: the scores files of {', '.join(sorted({r for r, _ in per_run}))} count "
                             f"different numbers of sentences of {table['testset']}")
        n_sentences = sizes.pop()
        indices = resample_indices(n_sentences, self.n_samples, self.seed)
        run_full, run_samples = {}, {}
        for (run, field), (kind, data) in per_run.items():
            if kind == "bleu":
                tokenize, stats = data
                run_full[(run, field)] = bleu_of(stats, tokenize)
                run_samples[(run, field)] = bleu_resamples(stats, indices, tokenize)
            else:
                counts, scale, reported = data
                run_full[(run, field)] = scale * error_rate(counts.sum(axis=0))
                if not math.isclose(run_full[(run, field)], reported, rel_tol=1e-9, abs_tol=1e-12):
                    raise InputError(f"{table['id']}: {run}'s sentence counts give {field} {run_full[(run, field)]}, "
                                     f"its scores file says {reported}")
                run_samples[(run, field)] = scale * error_rate_resamples(counts, indices)
        seed_rng = np.random.default_rng(None if self.seed is None else self.seed + 1)
        draws = {system: seed_rng.choice(len(runs), size=(self.n_samples, len(runs)), replace=True)
                 for system, runs in sorted(runs_of.items())}
        full, samples = {}, {}
        for system, field in values:
            runs = runs_of[system]
            full[(system, field)] = float(np.mean([run_full[(run, field)] for run in runs]))
            matrix = np.stack([run_samples[(run, field)] for run in runs])  # [runs, n_samples]
            samples[(system, field)] = matrix[draws[system], np.arange(self.n_samples)[:, None]].mean(axis=1)
        self.n_runs = max(len(runs) for runs in runs_of.values())
        return full, samples, n_sentences

    def _statistics(self, scores_dir: Path, run: str, field: str, table: dict, pair: str) -> tuple[str, Any]:
        sfile = scores_dir / layout.relative(layout.SCORES_DIR, layout.SCORES, system=run, testset=table["testset"])
        if not sfile.is_file():
            raise NotRun(f"no scores for {run} on {table['testset']} (results/{self.preset}/{pair}/scores)")
        scores = read_json_object(sfile, "a scores file")
        self.sources.append(sfile)
        if field in BLEU_FIELDS:
            return "bleu", self._bleu_statistics(scores, field, sfile, pair)
        if field in RATE_FIELDS:
            return "rate", self._rate_counts(scores, field, sfile)
        raise InputError(f"{sfile}: a claim compares {field!r}, which has no per-sentence statistics for an interval "
                         f"(BLEU and alignment error rates have)")

    def _bleu_statistics(self, scores: dict, field: str, sfile: Path, pair: str) -> tuple[str, np.ndarray]:
        which, tokenize, detok = BLEU_FIELDS[field]
        if scores.get(field) is None:
            raise NotRun(f"{sfile.name} has no {field}")
        hyp = scores["hyp"] if which == "plain" else (scores.get("unk") or {}).get("hyp")
        if not hyp or not scores.get("ref"):
            raise InputError(f"{sfile}: no translation file recorded for {field}")
        hyps, refs = read_parallel(Path(hyp), Path(scores["ref"]), allow_empty_src=True)
        if detok:
            lang = self.languages.get(pair)
            if not lang:
                raise NotRun(f"no target language known for {pair} (detokenised BLEU)")
            hyps, refs = detokenize(hyps, lang), detokenize(refs, lang)
        stats = bleu_statistics(hyps, refs, tokenize)
        recomputed = bleu_of(stats, tokenize)
        if not math.isclose(recomputed, scores[field], rel_tol=1e-9, abs_tol=1e-9):
            raise InputError(f"{sfile}: {field} is {scores[field]}, but {hyp} scores {recomputed} against "
                             f"{scores['ref']}: the translation changed after it was scored")
        self.sources.extend([Path(hyp), Path(scores["ref"])])
        return tokenize, stats

    def _rate_counts(self, scores: dict, field: str, sfile: Path) -> tuple[np.ndarray, float, float]:
        key, scale = RATE_FIELDS[field]
        rows = (scores.get("sentence_counts") or {}).get(key)
        if scores.get(field) is None or rows is None:
            raise NotRun(f"{sfile.name} has no {field} with per-sentence counts")
        counts = np.asarray(rows, dtype=np.float64)
        if counts.ndim != 2 or counts.shape[1] != 4:
            raise InputError(f"{sfile}: sentence_counts.{key} must be one [a, s, a_s, a_p] row per sentence")
        return counts, scale, float(scores[field])

    # -- a benchmark's speed-up --------------------------------------------------------------------------------
    def _speedup(self, claim: dict) -> dict:
        spec = claim["speedup"]
        bench_file = self.benchmarks.get(spec["benchmark"])
        if bench_file is None or not Path(bench_file).is_file():
            raise NotRun(f"no {spec['benchmark']} benchmark in this run")
        bench = read_json_object(Path(bench_file), "a benchmark file")
        self.sources.append(Path(bench_file))
        low_len, high_len = spec["lengths"]
        ratios = [cell["speedup"] for cell in bench["contexts"]["cells"]
                  if low_len <= cell["T"] <= high_len and low_len <= cell["U"] <= high_len]
        if not ratios:
            raise NotRun(f"the {spec['benchmark']} benchmark has no cell with lengths in {low_len}..{high_len}")
        low, high = float(min(ratios)), float(max(ratios))
        verdict = REPRODUCED if low > 1 else CONTRADICTED if high < 1 else INCONCLUSIVE
        return {"verdict": verdict, "ours_delta": float(np.median(ratios)), "ci_low": low, "ci_high": high,
                "interval": f"range of the speed-up over the {len(ratios)} cells of the benchmark's grid with input "
                            f"and output lengths in {low_len}..{high_len}"}


def _improvement_low(direction: str, low: float, high: float) -> float:
    return low if direction == "higher" else -high


def pair_verdict(kind: str, direction: str, low: float, high: float, margin: float | None) -> str:
    """The verdict on one comparison whose A - B has the interval [low, high] (see the module docstring)."""
    if kind == "equal":
        if -margin < low and high < margin:
            return REPRODUCED
        return CONTRADICTED if low >= margin or high <= -margin else INCONCLUSIVE
    better_low, better_high = (low, high) if direction == "higher" else (-high, -low)
    threshold = -margin if kind == "within" else 0.0
    if better_low > threshold:
        return REPRODUCED
    return CONTRADICTED if better_high < threshold else INCONCLUSIVE


def combine_verdicts(verdicts: list[str]) -> str:
    if verdicts and all(v == REPRODUCED for v in verdicts):
        return REPRODUCED
    return CONTRADICTED if CONTRADICTED in verdicts else INCONCLUSIVE


def summary(records: list[dict]) -> dict[str, int]:
    counts = {verdict.replace(" ", "_"): sum(r["verdict"] == verdict for r in records) for verdict in VERDICTS}
    return {"claims": len(records), **counts}


def claims_json(preset: str, records: list[dict]) -> dict:
    """What reports/PRESET/claims.json holds: the counts (DVC metrics) and every claim with its comparisons."""
    return {"preset": preset, "summary": summary(records), "claims": records}


def claims_csv(records: list[dict]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_FIELDS, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    for record in records:
        writer.writerow({key: "" if record.get(key) is None else record[key] for key in CSV_FIELDS})
    return out.getvalue()


def kendall_tau(paper: list[float], ours: list[float]) -> tuple[float | None, int]:
    """Kendall's tau-b (scipy) between the paper's and our values of the same rows, and how many rows: None with
    fewer than 2 rows or where one side has no variation."""
    pairs = [(p, o) for p, o in zip(paper, ours) if _finite(p) and _finite(o)]
    if len(pairs) < 2:
        return None, len(pairs)
    tau = kendalltau([p for p, _ in pairs], [o for _, o in pairs]).statistic
    return (None if math.isnan(tau) else float(tau)), len(pairs)


def _finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def dumps(obj: Any) -> str:
    return json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
