"""The claims ledger: a verdict on each of the papers' claims (workflow/claims/*.yaml) from this run's results.
Details: docs/internals/report.md."""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import kendalltau

from ..base import layout
from ..base.errors import InputError
from ..config.claim_kinds import CLAIM_KINDS, claim_kind
from ..config.table_files import is_number
from ..data.text import read_parallel
from ..data.tokenize import detokenize
from ..records.benchmarks import read_benchmark
from ..records.metrics import metrics_path, read_metrics
from ..records.model_info import model_info_path, read_model_info
from ..records.scores import read_scores, scores_dir, scores_path
from ..scoring.bleu import is_lowercased
from ..scoring.difference import SystemPart, estimate, fit_pool, seeds_range_text
from ..scoring.significance import (
    bleu_of,
    bleu_resamples,
    bleu_statistics,
    bootstrap_seed,
    error_rate,
    error_rate_resamples,
    holm,
    resample_indices,
)
from ..settings import VerdictSettings
from ..settings.schedule import convergence
from .partial import runs_text

REPRODUCED, CONTRADICTED, INCONCLUSIVE, NOT_RUN = "reproduced", "contradicted", "inconclusive", "not run"
#: a claim resting on a single run on a side of any comparison: no verdict (the spread between seeds is not measured),
#: outside Holm's family and the tally of verdicts; ``points`` says which way its two models differ
SINGLE_RUN = "single run"
VERDICTS = (REPRODUCED, CONTRADICTED, INCONCLUSIVE, SINGLE_RUN, NOT_RUN)
JUDGED = (REPRODUCED, CONTRADICTED, INCONCLUSIVE)  # the verdicts (the 5% family-wise promise covers the tested ones)
#: a single-run claim's ``points`` (its sentence bootstrap's 95% interval on the paper's side of the threshold, on the
#: other side, or across it) -> the words its label says
POINTS = {"for": "points the paper's way", "against": "points the other way", "neither": "no direction"}
#: how a comparison's interval was made (nmt.scoring.difference), as the claims file and the report name it
TWO_LEVEL = (
    "two-level: each system's seed variance (moderated by its table's systems) and the test sentences' "
    "shared variance, fiducial interval"
)
SENTENCE_LEVEL = "sentence bootstrap: a single run on one side at least"
ALPHA = 0.05  # each verdict's level, and the family-wise level of the adjusted verdicts (the 95% intervals)
#: claims.csv's columns, in order (the claims file has these and the comparisons of each claim)
CSV_FIELDS = (
    "id",
    "paper",
    "claim",
    "where",
    "table",
    "metric",
    "kind",
    "paper_delta",
    "ours_delta",
    "ci_low",
    "ci_high",
    "ours_delta_chrf",
    "paper_inside",
    "margin",
    "margin_basis",
    "p_for",
    "p_against",
    "p_adjusted",
    "verdict_raw",
    "verdict_adjusted",
    "verdict",
    "verdict_label",
    "converged",
    "interval_method",
    "n_runs",
    "n_planned",
    "min_detectable",
    "seeds_needed",
    "power_note",
    "substitute",
    "scope",
    "reason",
    "paper_position",
    "points",
    "deciding",
    "seeds_needed_range",
    "assumed_seed_ratio",
)

#: scores field -> (the translation it scores, sacreBLEU tokenisation, detokenise first)
BLEU_FIELDS = {
    "bleu_tok": ("plain", "none", False),
    "bleu_tok_unk": ("unk", "none", False),
    "bleu_detok": ("plain", "13a", True),
    "bleu_detok_unk": ("unk", "13a", True),
}
#: BLEU field -> the chrF field of the same translation, whose difference a claim shows beside BLEU's (no interval:
#: BLEU is the papers' metric and the verdict's)
CHRF_OF = {"bleu_tok": "chrf", "bleu_detok": "chrf", "bleu_tok_unk": "chrf_unk", "bleu_detok_unk": "chrf_unk"}
#: scores field -> (its per-sentence counts in an alignment scores file, scale)
RATE_FIELDS = {
    "aer": ("aer", 1.0),
    "aer_pct": ("aer", 100.0),
    "aer_predicted": ("aer_predicted", 1.0),
    "aer_predicted_pct": ("aer_predicted", 100.0),
    "saer": ("saer", 1.0),
    "saer_pct": ("saer", 100.0),
    "saer_hard": ("saer_hard", 1.0),
    "saer_hard_pct": ("saer_hard", 100.0),
}


class NotRun(Exception):
    """A claim this run cannot judge: why."""


class ClaimJudge:
    """Judges claims against one run: ``results_dir`` (results/PRESET), ``pair_for_task`` as the report has it,
    ``languages`` {pair: target language} for detokenised BLEU, ``unavailable`` {table id: why the preset cannot
    measure it}, ``benchmarks`` {name: JSON file of `nmt bench NAME`}, ``runs`` {pair: {system: [system,
    system_seedB, ...]}} for the systems trained with several seeds (their mean is compared), ``rule`` the
    verdict settings, ``scopes`` {table id: scope} (nmt.report.deviations.claim_scopes) and ``ensembles`` {pair:
    {name: spec}} (nmt.config.plan.collect_ensembles: the preset's ensembles and decodings, whose models the
    convergence gate checks) and ``planned`` (as ``runs``; default ``runs``) the runs the preset plans, where a
    partial run's ``runs`` are fewer (nmt.report.partial.runs_in): each claim records both counts (``n_runs``,
    ``n_planned``). :meth:`judge` judges one claim on its own; :func:`adjust` then adjusts the verdicts of
    all of a report's claims together."""

    def __init__(
        self,
        *,
        results_dir: Path,
        preset: str,
        tables_by_id: dict[str, dict],
        pair_for_task: dict[str, str],
        languages: dict[str, str] | None = None,
        unavailable: dict[str, str] | None = None,
        benchmarks: dict[str, Path] | None = None,
        runs: dict[str, dict[str, list[str]]] | None = None,
        rule: VerdictSettings = VerdictSettings(),
        scopes: dict[str, dict] | None = None,
        ensembles: dict[str, dict[str, dict]] | None = None,
        planned: dict[str, dict[str, list[str]]] | None = None,
    ):
        self.results_dir, self.preset, self.tables = Path(results_dir), preset, tables_by_id
        self.pair_for_task, self.languages = pair_for_task, languages or {}
        self.unavailable, self.benchmarks = unavailable or {}, benchmarks or {}
        self.runs, self.rule, self.scopes, self.ensembles = runs or {}, rule, scopes or {}, ensembles or {}
        self.planned = planned or self.runs
        self.n_samples, self.seed = rule.resamples, bootstrap_seed()
        self.sources: list[Path] = []  # the files the verdicts were computed from
        self._run_samples: dict[tuple, tuple[float, np.ndarray]] = {}  # (pair, testset, run, field) -> resampled
        self._convergence: dict[tuple[str, str], dict | None] = {}
        self._pools: dict[tuple, Any] = {}  # (pair, testset, quantity) -> nmt.scoring.difference.SeedPool

    def judge(self, claim: dict) -> dict:
        record = {
            key: claim.get(key)
            for key in (
                "id",
                "paper",
                "claim",
                "where",
                "table",
                "metric",
                "kind",
                "paper_delta",
                "paper_note",
                "margin",
                "margin_basis",
                "margin_why",
                "operationalisation",
                "substitute",
                "check",
            )
        }
        record.update(
            {
                "direction": claim["direction"],
                "ours_delta": None,
                "ci_low": None,
                "ci_high": None,
                "ours_delta_chrf": None,
                "paper_inside": None,
                "p_for": None,
                "p_against": None,
                "p_adjusted": None,
                "verdict_raw": NOT_RUN,
                "verdict_adjusted": NOT_RUN,
                "verdict": NOT_RUN,
                "verdict_label": None,
                "reason": None,
                "comparisons": [],
                "weakest": None,
                "deciding": None,
                "interval": None,
                "interval_method": None,
                "resamples": None,
                "n_runs": None,
                "n_planned": None,
                "converged": None,
                "systems_convergence": None,
                "trained": [],
                "min_detectable": None,
                "paper_effect": None,
                "seeds_needed": None,
                "seeds_needed_range": None,
                "assumed_seed_ratio": None,
                "power_note": None,
                "paper_position": None,
                "points": None,
                "scope": self.scopes.get(claim.get("table")) or {"preset": self.preset},
                "paper_preset": self.preset == "paper",
            }
        )
        try:
            judge = {"table": self._compared, "benchmark": self._benchmark}[CLAIM_KINDS[claim["kind"]].evidence]
            record.update(judge(claim))
        except NotRun as why:
            record["reason"] = str(why)
        record["verdict_adjusted"] = record["verdict"] = record["verdict_raw"]
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
        pairs = [
            {**comparison, "a": self._chosen(comparison["a"], pair), "b": self._chosen(comparison["b"], pair)}
            for comparison in claim["pairs"]
        ]
        values = {value for pair_ in pairs for term in (pair_["a"], pair_["b"]) for value in term["values"]}
        runs, n_sentences, n_runs = self._resampled(values, table, pair)
        planned = {system: len((self.planned.get(pair) or {}).get(system, [system])) for system in n_runs}
        if len(pairs) > 1 and claim["paper_delta"] is not None:  # the claim's number where the table has none
            pairs = [{**p, "paper_delta": claim["paper_delta"]} if p["paper_delta"] is None else p for p in pairs]
        comparisons = [
            {
                **self._comparison(claim, comparison, runs, table, pair),
                "ours_delta_chrf": self._chrf_delta(comparison, pair, table["testset"]),
            }
            for comparison in pairs
        ]
        weakest_index = deciding_index(comparisons, REPRODUCED)  # the largest p_for: the claim's
        p_for, p_against = claim_p_values([(c["p_for"], c["p_against"]) for c in comparisons])
        gate = self._gate(values, table, pair)
        single = any(c["method"] != "two-level" for c in comparisons)
        method = SENTENCE_LEVEL if single else TWO_LEVEL
        record = {
            "verdict_raw": SINGLE_RUN if single else verdict_of(p_for, p_against),
            "p_for": p_for,
            "p_against": p_against,
            "points": points_of(p_for, p_against) if single else None,
            "paper_delta": claim["paper_delta"],
            "comparisons": comparisons,
            "weakest": weakest_index,
            "n_runs": n_runs,
            "n_planned": planned,
            **claim_power(
                comparisons, n_runs, claim["kind"], planned, self.rule.assumed_seed_ratio if single else None
            ),
            "converged": gate["converged"],
            "systems_convergence": gate["systems"],
            "trained": gate["trained"],
            "interval_method": method,
            "resamples": self.n_samples,
            "interval": f"95%, {method} ({n_sentences} sentences of {table['testset']}; "
            f"{self.n_samples} resamples, seed {self.seed})",
        }
        return show_deciding(record, record["verdict_raw"])

    def _comparison(self, claim: dict, comparison: dict, runs: dict, table: dict, pair: str) -> dict:
        """One comparison A vs B: our difference, its 95% interval and p-values (nmt.scoring.difference: over seeds and
        sentences where both sides have several runs, over sentences where one has a single run) and how large a
        difference the run could detect."""
        terms = [(value, sign) for value, sign in zip(comparison["a"]["values"], comparison["a"]["signs"])] + [
            (value, -sign) for value, sign in zip(comparison["b"]["values"], comparison["b"]["signs"])
        ]
        parts, names = [], []
        for system, fields in system_terms(terms).items():
            if not fields:
                continue  # its values cancel out
            full = sum(weight * runs[(system, field)].full for field, weight in fields.items())
            resampled = sum(weight * runs[(system, field)].resampled for field, weight in fields.items())
            parts.append(
                SystemPart(full=full, resampled=resampled, prior=self._prior(table, pair, quantity(fields), system))
            )
            names.append(system)
        difference = estimate(parts)
        # the systems more likely to vary more between seeds than their pool than as it does (nmt.scoring.difference)
        outlying = [name for name, odd in zip(names, difference.outlying) if odd]
        low, high = difference.interval
        kind, margin = claim["kind"], claim.get("margin")
        p_for, p_against = comparison_p_values(kind, claim["direction"], difference, margin)
        effect = paper_effect(kind, claim["direction"], comparison["paper_delta"], margin)
        single = difference.method != "two-level"
        if effect is None:
            needed = needed_range = None
        elif single:  # from an assumed spread between seeds (verdicts.assumed_seed_ratio), not a measured one
            needed, needed_range = difference.seeds_needed_assuming(effect, self.rule.assumed_seed_ratio), None
        else:
            needed, needed_range = difference.seeds_needed(effect), None
            if needed is not None:
                needed_range = list(difference.seeds_needed_range(effect))
        return {
            "a": comparison["a"]["text"],
            "b": comparison["b"]["text"],
            "paper_delta": comparison["paper_delta"],
            "ours_delta": difference.delta,
            "ci_low": low,
            "ci_high": high,
            "p_for": p_for,
            "p_against": p_against,
            "paper_inside": inside(comparison["paper_delta"], low, high),
            "paper_position": position(comparison["paper_delta"], low, high),
            "verdict": SINGLE_RUN if single else verdict_of(p_for, p_against),
            "points": points_of(p_for, p_against) if single else None,
            "method": difference.method,
            "df": None if math.isinf(difference.df) else difference.df,
            "min_detectable": difference.min_detectable(),
            "paper_effect": effect,
            "seeds_needed": needed,
            "seeds_needed_range": needed_range,
            "outlying": outlying,
        }

    def _chrf_delta(self, comparison: dict, pair: str, testset: str) -> float | None:
        """The chrF difference of the comparison's two terms, as BLEU's is taken (each system the mean of its runs);
        None where a value is not BLEU or a scores file has no chrF (one written before it existed)."""
        a, b = (self._chrf_term(comparison[side], pair, testset) for side in ("a", "b"))
        return None if a is None or b is None else a - b

    def _chrf_term(self, term: dict, pair: str, testset: str) -> float | None:
        total = 0.0
        for sign, (system, field) in zip(term["signs"], term["values"]):
            if field not in CHRF_OF:
                return None
            values = []
            for run in self._runs(pair, system):
                sfile = self._scores_file(pair, run, testset)
                values.append(read_scores(sfile).get(CHRF_OF[field]) if sfile.is_file() else None)
            if any(value is None for value in values):
                return None
            total += sign * float(np.mean(values))
        return total

    def _chosen(self, term: dict, pair: str) -> dict:
        """A term as compared: a ``best_on_dev`` term resolved to the ensemble member with the lowest dev
        perplexity (the mean over its seed runs of the dev perplexity of the model each training kept)."""
        choose = term.get("choose")
        if not choose:
            return term
        ppl = {member: self._kept_dev_ppl(pair, member) for member in choose["members"]}
        missing = [member for member, value in ppl.items() if value is None]
        if missing:
            raise NotRun(
                f"no dev perplexity recorded for {', '.join(missing)} (to choose the best member of "
                f"{choose['ensemble']} on dev)"
            )
        best = min(ppl, key=lambda member: (ppl[member], member))
        return {
            **term,
            "values": [(best, choose["field"])],
            "text": f"{best}{choose['suffix']} (best of {choose['ensemble']} on dev: ppl {ppl[best]:.2f})",
        }

    def _kept_dev_ppl(self, pair: str, system: str) -> float | None:
        values = []
        for run in self._runs(pair, system):
            mfile, jfile = metrics_path(self.results_dir, pair, run), model_info_path(self.results_dir, pair, run)
            kept = (read_model_info(jfile).get("kept") or {}) if jfile.is_file() else {}
            records = read_metrics(mfile) if mfile.is_file() else []
            value = kept.get("dev_ppl") if kept else (records[-1]["dev_ppl"] if records else None)
            if value is None:
                return None
            self.sources.extend(p for p in (mfile, jfile) if p.is_file())
            values.append(float(value))
        return float(np.mean(values))

    def _runs(self, pair: str, system: str) -> list[str]:
        return (self.runs.get(pair) or {}).get(system, [system])

    def _resampled(
        self, values: set[tuple[str, str]], table: dict, pair: str
    ) -> tuple[dict[tuple[str, str], "ValueRuns"], int, dict[str, int]]:
        """{value: its runs' scores (ValueRuns)}, the number of sentences and {system: its number of runs}. Every
        run is scored on the same resamples of the test sentences (paired by sentence)."""
        runs_of = {system: self._runs(pair, system) for system, _ in values}
        out, sizes = {}, set()
        for system, field in sorted(values):
            fulls, resampled = [], []
            for run in runs_of[system]:
                (full, samples), n = self._run_resamples(pair, table, run, field)
                fulls.append(full)
                resampled.append(samples)
                sizes.add(n)
            out[(system, field)] = ValueRuns(full=np.asarray(fulls), resampled=np.stack(resampled))
        if len(sizes) != 1:
            raise InputError(
                f"{table['id']}: the scores files of {', '.join(sorted(runs_of))} count "
                f"different numbers of sentences of {table['testset']}"
            )
        return out, sizes.pop(), {system: len(runs) for system, runs in sorted(runs_of.items())}

    def _prior(self, table: dict, pair: str, measured: tuple[tuple[str, float], ...], system: str):
        """``system``'s prior from the seed variances of every system with several runs that the preset's tables score
        on this test set (of this pair) for this quantity (nmt.scoring.difference.fit_pool): what its own variance from
        a few seeds is moderated towards, unless it stands out of the others'. Read from the scores files'
        whole-test-set values."""
        key = (pair, table["testset"], measured)
        if key not in self._pools:
            variances, dfs = {}, set()
            for pooled in self._pool_systems(pair, table["testset"]):
                values = []
                for run in self._runs(pair, pooled):
                    sfile = self._scores_file(pair, run, table["testset"])
                    scores = read_scores(sfile) if sfile.is_file() else {}
                    parts = [scores.get(field) for field, _ in measured]
                    if any(not isinstance(v, (int, float)) or isinstance(v, bool) for v in parts):
                        break
                    values.append(sum(weight * float(v) for v, (_, weight) in zip(parts, measured)))
                else:
                    if len(values) >= 2:
                        variances[pooled] = float(np.var(values, ddof=1))
                        dfs.add(len(values) - 1)
            # one pool per number of seeds: the preset trains every system with the same seeds
            self._pools[key] = fit_pool(variances, dfs.pop()) if len(dfs) == 1 else fit_pool({}, 0)
        return self._pools[key].prior_for(system)

    def _pool_systems(self, pair: str, testset: str) -> list[str]:
        """Every row system of the preset's tables that is scored on ``testset`` of ``pair``."""
        systems = {}
        for table in self.tables.values():
            if table.get("testset") == testset and self.pair_for_task.get(table["task"]) == pair:
                for row in table["rows"]:
                    if row.get("system"):
                        systems[row["system"]] = None
        return sorted(systems)

    def _run_resamples(self, pair: str, table: dict, run: str, field: str) -> tuple[tuple[float, np.ndarray], int]:
        """One run's whole-test-set score of ``field`` and its score on every resample of the test sentences
        (computed once per run and field: many claims compare the same systems)."""
        key = (pair, table["testset"], run, field)
        if key not in self._run_samples:
            statistic, data = self._statistics(run, field, table, pair)
            if statistic == "bleu":
                tokenize, stats = data
                indices = resample_indices(len(stats), self.n_samples, self.seed)
                self._run_samples[key] = (
                    (bleu_of(stats, tokenize), bleu_resamples(stats, indices, tokenize)),
                    len(stats),
                )
            else:
                counts, scale, reported = data
                full = scale * error_rate(counts.sum(axis=0))
                if not math.isclose(full, reported, rel_tol=1e-9, abs_tol=1e-12):
                    raise InputError(
                        f"{table['id']}: {run}'s sentence counts give {field} {full}, its scores file says {reported}"
                    )
                indices = resample_indices(len(counts), self.n_samples, self.seed)
                self._run_samples[key] = ((full, scale * error_rate_resamples(counts, indices)), len(counts))
        return self._run_samples[key]

    def _scores_file(self, pair: str, run: str, testset: str) -> Path:
        return scores_path(scores_dir(self.results_dir, pair), run, testset)

    def _statistics(self, run: str, field: str, table: dict, pair: str) -> tuple[str, Any]:
        sfile = self._scores_file(pair, run, table["testset"])
        if not sfile.is_file():
            raise NotRun(
                f"no scores for {run} on {table['testset']} "
                f"({layout.path(layout.SCORES_DIR, preset=self.preset, pair=pair)})"
            )
        scores = read_scores(sfile)
        self.sources.append(sfile)
        if field in BLEU_FIELDS:
            return "bleu", self._bleu_statistics(scores, field, sfile, pair)
        if field in RATE_FIELDS:
            return "rate", self._rate_counts(scores, field, sfile)
        raise InputError(
            f"{sfile}: a claim compares {field!r}, which has no per-sentence statistics for an interval "
            f"(BLEU and alignment error rates have)"
        )

    def _bleu_statistics(self, scores: dict, field: str, sfile: Path, pair: str) -> tuple[str, np.ndarray]:
        which, tokenize, detok = BLEU_FIELDS[field]
        if scores.get(field) is None:
            raise NotRun(f"{sfile.name} has no {field}")
        hyp = scores.get("hyp") if which == "plain" else (scores.get("unk") or {}).get("hyp")
        if not hyp or not scores.get("ref"):
            raise InputError(f"{sfile}: no translation file recorded for {field}")
        hyp = self._translation(hyp, which, pair, scores)
        hyps, refs = read_parallel(Path(hyp), Path(scores["ref"]), allow_empty_src=True)
        if detok:
            lang = self.languages.get(pair)
            if not lang:
                raise NotRun(f"no target language known for {pair} (detokenised BLEU)")
            hyps, refs = detokenize(hyps, lang), detokenize(refs, lang)
        # scored as the scores file says it was: case-insensitively where the text was lowercased (case:lc)
        stats = bleu_statistics(hyps, refs, tokenize, is_lowercased(scores.get(f"{field}_signature")))
        recomputed = bleu_of(stats, tokenize)
        if not math.isclose(recomputed, scores[field], rel_tol=1e-9, abs_tol=1e-9):
            raise InputError(
                f"{sfile}: {field} is {scores[field]}, but {hyp} scores {recomputed} against "
                f"{scores['ref']}: the translation changed after it was scored"
            )
        self.sources.extend([Path(hyp), Path(scores["ref"])])
        return tokenize, stats

    def _translation(self, recorded: str, which: str, pair: str, scores: dict) -> str:
        """The scored translation: where the layout puts it in this results directory when it is there (a run
        exported elsewhere, e.g. a published reference, keeps the paths it was scored at), else as recorded."""
        template = layout.TRANSLATION if which == "plain" else layout.UNK_TRANSLATION
        if scores.get("system") and scores.get("testset"):
            here = layout.under(
                self.results_dir,
                layout.RESULTS_ROOT,
                template,
                pair=pair,
                system=scores["system"],
                testset=scores["testset"],
            )
            if here.is_file():
                return str(here)
        return recorded

    def _rate_counts(self, scores: dict, field: str, sfile: Path) -> tuple[np.ndarray, float, float]:
        key, scale = RATE_FIELDS[field]
        rows = (scores.get("sentence_counts") or {}).get(key)
        if scores.get(field) is None or rows is None:
            raise NotRun(f"{sfile.name} has no {field} with per-sentence counts")
        counts = np.asarray(rows, dtype=np.float64)
        if counts.ndim != 2 or counts.shape[1] != 4:
            raise InputError(f"{sfile}: sentence_counts.{key} must be one [a, s, a_s, a_p] row per sentence")
        return counts, scale, float(scores[field])

    # -- the convergence gate ------------------------------------------------------------------------------------
    def _gate(self, values: set[tuple[str, str]], table: dict, pair: str) -> dict:
        """{converged, systems: {system: {converged, runs: {run: convergence record, or None without metrics}}},
        trained: [{pair, system}]} over the trainings the values rest on (``trained``: what retraining with more
        seeds would train again: `nmt estimate --claims` prices it). ``converged`` is False when any of them did not
        converge, None when none was trained (statistical aligners) or one has no training record, else True. An
        alignment table that merges both directions rests on the systems of its reverse task too."""
        pairs = [pair]
        reverse = (table.get("alignment") or {}).get("reverse_task")
        if reverse and self.pair_for_task.get(reverse):
            pairs.append(self.pair_for_task[reverse])
        systems, trainings = {}, []
        for name in sorted({system for system, _ in values}):
            for trained in self._trained(table, name, pair):
                for where in pairs:
                    runs = {run: self._run_convergence(where, run) for run in self._runs(where, trained)}
                    if all(record is None for record in runs.values()) and where != pair:
                        continue  # not trained for the reverse task
                    label = trained if where == pair else f"{trained} ({where})"
                    systems[label] = {
                        "converged": all_converged([r and r["converged"] for r in runs.values()]),
                        "runs": runs,
                    }
                    trainings.append({"pair": where, "system": trained})
        return {
            "converged": all_converged([s["converged"] for s in systems.values()]) if systems else None,
            "systems": systems,
            "trained": trainings,
        }

    def _trained(self, table: dict, name: str, pair: str) -> list[str]:
        """The trained systems a row's values rest on: the system itself, an ensemble's members or the system a
        decoding decodes; none for a statistical aligner."""
        ensemble = (self.ensembles.get(pair) or {}).get(name) or (table.get("ensembles") or {}).get(name)
        if ensemble is not None:
            return list(ensemble["members"])
        if name in ((table.get("alignment") or {}).get("aligners") or {}):
            return []
        return [name]

    def _run_convergence(self, pair: str, run: str) -> dict | None:
        """The convergence gate on one training run's metrics file; None when it has none."""
        key = (pair, run)
        if key not in self._convergence:
            mfile = metrics_path(self.results_dir, pair, run)
            records = read_metrics(mfile) if mfile.is_file() else []
            if records:
                self.sources.append(mfile)
            self._convergence[key] = (
                convergence(records, self.rule.converged_within, self.rule.converged_window) if records else None
            )
        return self._convergence[key]

    # -- a benchmark's speed-up --------------------------------------------------------------------------------
    def _benchmark(self, claim: dict) -> dict:
        spec = claim[claim["kind"]]
        bench_file = self.benchmarks.get(spec["benchmark"])
        if bench_file is None or not Path(bench_file).is_file():
            raise NotRun(f"no {spec['benchmark']} benchmark in this run")
        bench = read_benchmark(Path(bench_file), "monotonic")
        self.sources.append(Path(bench_file))
        low_len, high_len = spec["lengths"]
        ratios = [
            cell["speedup"]
            for cell in bench["contexts"]["cells"]
            if low_len <= cell["T"] <= high_len and low_len <= cell["U"] <= high_len
        ]
        if not ratios:
            raise NotRun(f"the {spec['benchmark']} benchmark has no cell with lengths in {low_len}..{high_len}")
        low, high = float(min(ratios)), float(max(ratios))
        verdict = REPRODUCED if low > 1 else CONTRADICTED if high < 1 else INCONCLUSIVE
        return {
            "verdict_raw": verdict,
            "ours_delta": float(np.median(ratios)),
            "ci_low": low,
            "ci_high": high,
            "interval_method": "range over the benchmark's grid (a measurement, not a test)",
            "interval": f"range of the speed-up over the {len(ratios)} cells of the benchmark's grid with input "
            f"and output lengths in {low_len}..{high_len}",
        }


def all_converged(flags: list[bool | None]) -> bool | None:
    """False when any is False, else None when any is unknown (no training record), else True."""
    if any(flag is False for flag in flags):
        return False
    return None if any(flag is None for flag in flags) else True


def training_convergence(results_dir: Path, trained: dict[str, dict], within: float, window: int) -> list[dict]:
    """The convergence gate (threshold ``within``, a line through the last ``window`` evaluations) on every training
    the plan made (``trained``: {task: {system: ...}}, seed runs included: nmt.config.plan.collect_systems) that left
    its metrics file under ``results_dir`` (results/PRESET): [{pair, system, **nmt.settings.schedule.convergence's
    record: epochs, halvings, last_improvement, window, horizon, fit_from, slope, slope_bound, scatter,
    projected_left, converged}], by pair and system."""
    out = []
    for mfile in sorted(
        metrics_path(results_dir, pair, system) for pair, systems in trained.items() for system in systems
    ):
        records = read_metrics(mfile) if mfile.is_file() else []
        if records:
            out.append(
                {
                    "pair": mfile.parent.parent.parent.name,
                    "system": mfile.parent.name,
                    **convergence(records, within, window),
                }
            )
    return out


@dataclass(frozen=True)
class ValueRuns:
    """One value of a claim (a system's field) over its runs: ``full`` [n_runs] the whole test set's score of each
    run, ``resampled`` [n_runs, n_samples] each run on every resample of the test sentences."""

    full: np.ndarray
    resampled: np.ndarray


def system_terms(terms: list[tuple[tuple[str, str], float]]) -> dict[str, dict[str, float]]:
    """A comparison's signed values (``terms``: [((system, field), sign)], A's with +, B's with -) by system: {system:
    {field: sign}}, each system's part of the difference (one field; two for an unk gain, run by run)."""
    out: dict[str, dict[str, float]] = {}
    for (system, field), sign in terms:
        fields = out.setdefault(system, {})
        fields[field] = fields.get(field, 0.0) + sign
    return {system: {f: w for f, w in fields.items() if w} for system, fields in out.items()}


def quantity(fields: dict[str, float]) -> tuple[tuple[str, float], ...]:
    """What a system's part measures, whatever its sign (a field, or an unk gain): the key of the pool whose systems'
    seed variances moderate each other's."""
    ordered = sorted(fields.items())
    sign = 1.0 if ordered[0][1] > 0 else -1.0
    return tuple((field, sign * weight) for field, weight in ordered)


def comparison_p_values(kind: str, direction: str, difference, margin: float | None) -> tuple[float, float]:
    """(p_for, p_against) of one comparison from its estimated difference A - B (nmt.scoring.difference; see the module
    docstring): ``p_for`` that the difference lies on the claim's side of its threshold, ``p_against`` on the other
    (the kind's test: nmt.config.claim_kinds)."""
    return CLAIM_KINDS[kind].p_values(difference, direction, margin)


def claim_p_values(comparisons: list[tuple[float, float]]) -> tuple[float, float]:
    """(p_for, p_against) of a claim made of k comparisons' (p_for, p_against): it holds when all of them do (the
    intersection-union test: the largest p_for) and is contradicted when any is (Bonferroni: k times the smallest
    p_against)."""
    k = len(comparisons)
    return max(p for p, _ in comparisons), min(1.0, k * min(p for _, p in comparisons))


def paper_effect(kind: str, direction: str, paper_delta: float | None, margin: float | None) -> float | None:
    """How far the paper's difference lies from the claim's threshold, on the claim's side: what a run must be able
    to detect to decide the claim at the paper's size (None where the paper gives no number)."""
    if paper_delta is None:
        return None
    return CLAIM_KINDS[kind].paper_effect(direction, paper_delta, margin)


def claim_power(
    comparisons: list[dict],
    n_runs: dict[str, int],
    kind: str,
    planned: dict[str, int] | None = None,
    assumed_seed_ratio: float | None = None,
) -> dict:
    """What a claim's run could detect: ``min_detectable`` (the largest of its comparisons': the claim needs them
    all), ``paper_effect`` (the smallest distance of a paper's difference from the claim's threshold), ``seeds_needed``
    where the paper's difference is closer to it than the run could detect (the largest of its comparisons'; None
    where no number of seeds would do), ``seeds_needed_range`` (the seeds needed at the 10th and 90th percentiles of
    the seed variance they were projected from, each the largest of its comparisons': nmt.scoring.difference.TwoLevel.
    seeds_needed_range) and ``power_note``, the sentence the report shows under the verdict. A claim resting on a
    single run has no measured spread between seeds: its ``seeds_needed`` is projected from ``assumed_seed_ratio``
    (verdicts.assumed_seed_ratio, recorded beside it as ``assumed_seed_ratio``: an assumption, not a measurement),
    with no range. ``planned``: the runs the preset plans per system, where a partial run has fewer
    (nmt.report.partial)."""
    detectable = max(c["min_detectable"] for c in comparisons)
    runs = max(n_runs.values()) if n_runs else 1
    with_paper = [c for c in comparisons if c["paper_effect"] is not None]
    closest = min(with_paper, key=lambda c: c["paper_effect"], default=None)
    out = {
        "min_detectable": detectable,
        "paper_effect": closest and closest["paper_effect"],
        "seeds_needed": None,
        "seeds_needed_range": None,
        "assumed_seed_ratio": None,
    }
    single = any(c["method"] != "two-level" for c in comparisons)
    if single:
        partial = any(n < (planned or {}).get(system, n) for system, n in n_runs.items())
        measures = "the seed runs not in yet measure it" if partial else "train.seeds: [1, 2, 3] measures it"
        detect = (
            f"one run: the spread between seeds is not measured (the test sentences alone detect "
            f"{detectable:.2g}; {measures})"
        )
        # its single-run comparisons need seeds whatever the test sentences detect; the others where they fall short
        short = [c for c in with_paper if c["method"] != "two-level" or c["paper_effect"] < c["min_detectable"]]
    else:
        detect = f"{runs} seeds detect {detectable:.2g}"
        short = [c for c in with_paper if c["paper_effect"] < c["min_detectable"]]
    if closest is None or (single and not short):
        out["power_note"] = f"{detect}; the paper gives no number to size it by"
        return out
    paper = f"the paper's {closest['paper_delta']:+.2g}"
    if CLAIM_KINDS[kind].margin:
        paper += f" ({closest['paper_effect']:.2g} inside the margin)"
    assumed = (
        ""
        if not single
        else " at the assumed spread between seeds"
        if assumed_seed_ratio is None
        else f" were seeds to vary {assumed_seed_ratio:g}x as much as test sets (verdicts.assumed_seed_ratio: an "
        f"assumption, not a measurement)"
    )
    if not short:
        out["power_note"] = f"{detect}: {paper} included"
    elif closest["paper_effect"] <= 0:
        out["power_note"] = f"{detect}; {paper} sits at the claim's threshold: no number of seeds decides it"
    elif any(c["seeds_needed"] is None for c in short):
        out["power_note"] = f"{detect}; {paper} is below what any number of seeds detects on this test set{assumed}"
    else:
        out["seeds_needed"] = max(c["seeds_needed"] for c in short)
        if single:
            out["assumed_seed_ratio"] = assumed_seed_ratio
            out["power_note"] = f"{detect};{assumed}, {paper} would need about {out['seeds_needed']} seeds"
        else:
            ranges = [c.get("seeds_needed_range") for c in short]
            if all(ranges):
                out["seeds_needed_range"] = [
                    max(r[0] for r in ranges),
                    None if any(r[1] is None for r in ranges) else max(r[1] for r in ranges),
                ]
            out["power_note"] = (
                f"{detect}; {paper} needs about {out['seeds_needed']}{range_text(out['seeds_needed_range'])}"
            )
    return out


def range_text(needed_range: list | None) -> str:
    """ " (10-44)": the seeds needed at the seed variance's 10th and 90th percentiles; "" without a range."""
    text = seeds_range_text(needed_range)
    return f" ({text})" if text else ""


def points_of(p_for: float, p_against: float, alpha: float = ALPHA) -> str:
    """Which way a single run's comparison points (its sentence bootstrap's 95% interval): "for" (wholly on the paper's
    side of the threshold), "against" (wholly on the other) or "neither" (across it). About these two models, not
    the techniques: no verdict."""
    return {REPRODUCED: "for", CONTRADICTED: "against", INCONCLUSIVE: "neither"}[verdict_of(p_for, p_against, alpha)]


def single_run_text(points: str | None) -> str:
    """A single-run claim's words in place of a verdict: "one run: points the paper's way" (``points``: for, against,
    neither; an unknown one, from another file, as it is)."""
    return f"one run: {POINTS.get(points or 'neither', points)}"


def position(value: float | None, low: float | None, high: float | None) -> str | None:
    """Where the paper's difference lies relative to our interval: "inside", "above" or "below" (None where either is
    missing): the size beside a verdict that tests the direction."""
    if value is None or low is None or high is None:
        return None
    return "inside" if low <= value <= high else "above" if value > high else "below"


def deciding_index(comparisons: list[dict], verdict: str, points: str | None = None) -> int | None:
    """The comparison that decided a claim's ``verdict``: for "contradicted" (and a single run pointing the other way)
    the strongest against it (the smallest p_against, which the claim's Bonferroni p_against is k times); otherwise
    the weakest for it (the largest p_for: for "reproduced" the one whose p_for is the claim's, for "inconclusive"
    the one that kept it from "reproduced"). The first of equals; None without comparisons."""
    if not comparisons:
        return None
    if verdict == CONTRADICTED or (verdict == SINGLE_RUN and points == "against"):
        return min(range(len(comparisons)), key=lambda i: (comparisons[i]["p_against"], i))
    return max(range(len(comparisons)), key=lambda i: (comparisons[i]["p_for"], -i))


def show_deciding(record: dict, verdict: str) -> dict:
    """A claim's record showing the comparison that decided ``verdict`` (:func:`deciding_index`, ``deciding``): its
    difference, interval and chrF difference, and for a claim of several comparisons its paper's difference; where
    the paper's difference lies relative to that interval (``paper_position``, ``paper_inside``). Updated in place
    and returned."""
    comparisons = record.get("comparisons") or []
    index = deciding_index(comparisons, verdict, record.get("points"))
    if index is None:
        return record
    shown = comparisons[index]
    record.update(
        {
            "deciding": index,
            "ours_delta": shown["ours_delta"],
            "ci_low": shown["ci_low"],
            "ci_high": shown["ci_high"],
            "ours_delta_chrf": shown.get("ours_delta_chrf"),
        }
    )
    if len(comparisons) > 1:
        record["paper_delta"] = shown["paper_delta"]
    record["paper_inside"] = inside(record["paper_delta"], shown["ci_low"], shown["ci_high"])
    record["paper_position"] = position(record["paper_delta"], shown["ci_low"], shown["ci_high"])
    return record


def verdict_of(p_for: float, p_against: float, alpha: float = ALPHA) -> str:
    if p_for <= alpha:
        return REPRODUCED
    return CONTRADICTED if p_against <= alpha else INCONCLUSIVE


def inside(value: float | None, low: float | None, high: float | None) -> bool | None:
    """Whether the paper's difference lies inside our interval (None where either is missing)."""
    if value is None or low is None or high is None:
        return None
    return bool(low <= value <= high)


def adjust(records: list[dict]) -> list[dict]:
    """The report's verdicts: each of the papers' claims' raw verdict adjusted by Holm's method across every claim
    with a test (``p_adjusted``, ``verdict_adjusted``), capped by the convergence gate (``verdict``), with the
    comparison that decided it shown (:func:`show_deciding`) and the words the report shows (``verdict_label``). Our
    checks (a ``check``: a test the papers do not state) stay outside the family: their verdict is the raw one, capped
    by the gate. A claim resting on a single run (``single run``) has no verdict to adjust or cap: it stays outside
    the family too, and Holm's m does not count it. Records are updated in place and returned."""
    tested = [r for r in records if r["p_for"] is not None and not r.get("check") and r["verdict_raw"] != SINGLE_RUN]
    adjusted = holm([min(r["p_for"], r["p_against"]) for r in tested])
    for record, p in zip(tested, adjusted):
        record["p_adjusted"] = p
        if p > ALPHA:
            record["verdict_adjusted"] = INCONCLUSIVE
        else:
            record["verdict_adjusted"] = REPRODUCED if record["p_for"] <= record["p_against"] else CONTRADICTED
    for record in records:
        if record["p_for"] is None or record.get("check") or record["verdict_raw"] == SINGLE_RUN:
            record["verdict_adjusted"] = record["verdict_raw"]
        capped = record["converged"] is False and record["verdict_adjusted"] in JUDGED
        record["verdict"] = INCONCLUSIVE if capped else record["verdict_adjusted"]
        show_deciding(record, record["verdict"])
        record["verdict_label"] = verdict_label(record, capped)
    return records


def verdict_label(record: dict, capped: bool) -> str:
    """What the report says of a claim: its verdict in words ("reproduced (direction)": a difference's claim tests the
    direction only; a single run's "one run: points the paper's way", no verdict), the size beside it (where the
    paper's difference lies relative to our interval), and what limits it."""
    verdict = record["verdict"]
    if verdict == NOT_RUN:
        return NOT_RUN
    if verdict == SINGLE_RUN:
        text = single_run_text(record.get("points"))
    elif capped:
        text = "inconclusive (not converged)"
    elif verdict == CONTRADICTED and not record["paper_preset"]:
        text = "not reproduced at this scale"
    else:
        text = verdict
    kind = claim_kind(record.get("kind"))
    if verdict == REPRODUCED and kind and kind.directional:  # a margin claim tests its margin
        text += " (direction)"
    notes = []
    if record.get("paper_position"):  # a benchmark's claim has none (no comparisons)
        notes.append(f"the paper's {record['paper_delta']:+.2f} lies {record['paper_position']} our interval")
    if verdict == SINGLE_RUN and record.get("converged") is False:
        notes.append("not converged")
    planned = record.get("n_planned") or {}
    short = sorted((k, planned[system]) for system, k in (record["n_runs"] or {}).items() if k < planned.get(system, k))
    if short:  # a partial run (nmt.report.partial): judged on the runs there are
        notes.append(runs_text(*short[0]))
    if record.get("substitute"):
        notes.append("with a stand-in tool")  # which one: the record's `substitute`, shown beside the claim
    return text + "".join(f"; {note}" for note in notes)


def summary(records: list[dict]) -> dict[str, Any]:
    """The counts the report's headline and DVC's metrics show (of the papers' claims; ``checks`` counts our checks
    apart): by verdict (after adjustment and the gate; ``single_run``: the claims resting on a single run, which get
    no verdict), how many were judged (``judged``: reproduced, contradicted or inconclusive) and how many of those
    Holm's adjustment covers (``family``: its m; a speed-up is a measurement, outside it), how many of the judged
    ones the gate capped and how many rest on a stand-in tool, and the raw (unadjusted) counts beside them."""
    checks = [r for r in records if r.get("check")]
    records = [r for r in records if not r.get("check")]

    def count(key: str) -> dict[str, int]:
        return {verdict.replace(" ", "_"): sum(r[key] == verdict for r in records) for verdict in VERDICTS}

    judged = [r for r in records if r["verdict"] in JUDGED]
    return {
        "claims": len(records),
        **count("verdict"),
        "judged": len(judged),
        "family": sum(r.get("p_adjusted") is not None for r in records),
        "not_converged": sum(r["converged"] is False for r in judged),
        "with_stand_in": sum(bool(r.get("substitute")) for r in judged),
        "raw": count("verdict_raw"),
        "checks": len(checks),
    }


def claims_json(preset: str, records: list[dict], trainings: list[dict] | None = None) -> dict:
    """What a report's claims file (nmt.records.report_files) holds: the rule, the counts (DVC's metrics too:
    nmt.records.headline), the papers'
    claims with their comparisons, our checks apart (outside Holm's family), and the convergence gate on every training
    (:func:`training_convergence`)."""
    rule = {
        "alpha": ALPHA,
        "correction": "holm, over the papers' judged claims (not our checks, not the single-run claims): the 5% "
        "family-wise error covers those verdicts only",
        "interval": f"95%; {TWO_LEVEL} (a generalised pivotal quantity); {SENTENCE_LEVEL} (its percentiles)",
        "single_run": "a claim with a single run on a side of any comparison gets no verdict (its spread between "
        "seeds is not measured): 'single run', with which way its sentence bootstrap points "
        "(points: for, against, neither), outside Holm's family and the tally",
        "power": "min_detectable: the smallest distance from the claim's threshold detected with 80% power by the "
        "two-sided 5% test; seeds_needed: the seeds that would detect the paper's difference, with "
        "seeds_needed_range at the 10th and 90th percentiles of the seed variance it was projected "
        "from; for a single-run claim projected from assumed_seed_ratio (an assumption, not a "
        "measurement)",
    }
    return {
        "preset": preset,
        "rule": rule,
        "summary": summary(records),
        "claims": [r for r in records if not r.get("check")],
        "checks": [r for r in records if r.get("check")],
        "trainings": trainings or [],
    }


def claims_csv(records: list[dict]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_FIELDS, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    for record in records:
        row = {}
        for key in CSV_FIELDS:
            value = record.get(key)
            if key in ("n_runs", "n_planned") and isinstance(value, dict):
                value = " ".join(f"{system}={n}" for system, n in value.items())
            elif key == "scope" and isinstance(value, dict):
                value = value.get("text") or value.get("preset")
            elif key == "seeds_needed_range" and isinstance(value, list):
                value = seeds_range_text(value)
            row[key] = "" if value is None else value
        writer.writerow(row)
    return out.getvalue()


def kendall_tau(paper: list[float], ours: list[float]) -> tuple[float | None, int]:
    """Kendall's tau-b (scipy) between the paper's and our values of the same rows, and how many rows: None with
    fewer than 2 rows or where one side has no variation."""
    pairs = [(p, o) for p, o in zip(paper, ours) if is_number(p) and is_number(o)]
    if len(pairs) < 2:
        return None, len(pairs)
    tau = kendalltau([p for p, _ in pairs], [o for _, o in pairs]).statistic
    return (None if math.isnan(tau) else float(tau)), len(pairs)


def dumps(obj: Any) -> str:
    return json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
