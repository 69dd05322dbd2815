"""Figure sections of the report: a figure file's entries (nmt.config.figure_files) -> PNGs and views for the template.

Every number and every sentence on these sections is read from files the DAG wrote: scores files (BLEU by
source length), translations, the prepared test sets, forced-decoding attention matrices and the corpus' gold
alignments. The only typed-in text is the figure file's title and its note on what the paper showed.
"""

from __future__ import annotations

from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..base import layout
from ..base.errors import InputError
from ..base.files import read_json
from ..config.schema import validator
from ..data.alignments import links_to_matrix, read_pharaoh
from ..data.text import read_lines
from ..records.scores import read_scores
from .heatmaps import attention_heatmaps
from .plots import save_png

DASH = "\u2013"


class MissingInput(Exception):
    """A file a figure draws is not there; ``kind`` says what it is (a key of nmt.report.render's MISSING_KINDS)."""

    def __init__(self, path: Path, kind: str):
        super().__init__(str(path))
        self.path, self.kind = path, kind


class NotDrawable(Exception):
    """A figure's inputs are there but cannot give it (e.g. a scores file without BLEU by length): the report says
    why it is not drawn instead of failing."""


class FigureInputs:
    """Where a figure's inputs are among a task's results and data (nmt.base.layout, below results/{preset} and
    data/{preset})."""

    def __init__(self, results_dir: Path, data_dir: Path, pair: str, add_source):
        self.results_dir, self.data_dir, self.pair = Path(results_dir), Path(data_dir), pair
        self.add_source = add_source  # records a file the page was built from; returns its shown path

    def result(self, template: str, **fields) -> Path:
        return layout.under(self.results_dir, layout.RESULTS_ROOT, template, pair=self.pair, **fields)

    def data(self, template: str, **fields) -> Path:
        return layout.under(self.data_dir, layout.DATA_ROOT, template, pair=self.pair, **fields)

    def present(self, path: Path, kind: str) -> Path:
        """``path`` (a file of ``kind``), which the DAG writes before the report; MissingInput where it has not (yet):
        a report made by hand from part of the results draws the figures it can."""
        if not path.is_file():
            raise MissingInput(path, kind)
        return path

    def scores(self, system: str, testset: str) -> dict:
        path = self.present(self.result(layout.SCORES, system=system, testset=testset), "scores")
        self.add_source(path, "scores")
        return read_scores(path)

    def translation(self, system: str, testset: str, unk: bool) -> list[str]:
        path = self.present(
            self.result(layout.UNK_TRANSLATION if unk else layout.TRANSLATION, system=system, testset=testset),
            "translation",
        )
        self.add_source(path, "translation")
        return read_lines(path, allow_empty=True)

    def prepared(self, split: str, side: str) -> list[str]:
        return read_lines(self.present(self.data(layout.PREPARED_SIDE, split=split, side=side), "prepared"))

    def attention(self, system: str, split: str) -> dict:
        path = self.present(self.result(layout.ATTENTION, system=system, split=split), "attention")
        self.add_source(path, "attention")
        matrix = read_json(path, "an attention matrix", schema=validator("attention"))
        src, tgt, weights = matrix["src"], matrix["tgt"], matrix["weights"]
        if len(weights) != len(tgt) or any(len(row) != len(src) for row in weights):
            raise InputError(
                f"{path}: weights: must be one row per target word ({len(tgt)}) of one weight per "
                f"source word ({len(src)})"
            )
        return matrix

    def gold(self, split: str) -> Path:
        return self.data(layout.GOLD, split=split)


# -- Figure 6 -----------------------------------------------------------------------------------------------
def _bucket_label(bucket: dict) -> str:
    if bucket["max_len"] is None:
        return f">{bucket['min_len'] - 1}"
    return f"{bucket['min_len']}-{bucket['max_len']}"


def bleu_by_length_view(fig: dict, inputs: FigureInputs, out_dir: Path) -> dict:
    lines = []
    for ref in fig["lines"]:
        scores = inputs.scores(ref["system"], fig["testset"])
        by_length = (scores.get("by_length") or {}).get("unk" if ref["unk"] else "plain")
        if by_length is None:
            raise NotDrawable(
                f"{inputs.result(layout.SCORES, system=ref['system'], testset=fig['testset'])}: no "
                f"{'unk-replaced ' if ref['unk'] else ''}BLEU by length (evaluated without --src, "
                f"or a model without attention asked for 'unk: true')"
            )
        overall = scores.get("bleu_tok_unk" if ref["unk"] else "bleu_tok")
        if overall is None:
            raise NotDrawable(
                f"{inputs.result(layout.SCORES, system=ref['system'], testset=fig['testset'])}: BLEU by "
                f"length without {'bleu_tok_unk' if ref['unk'] else 'bleu_tok'}"
            )
        lines.append({"label": f"{ref['label']} (BLEU {overall:.2f})", "buckets": by_length})

    labels = [_bucket_label(b) for b in lines[0]["buckets"]]
    if any([_bucket_label(b) for b in line["buckets"]] != labels for line in lines):
        raise InputError(
            f"{fig['id']}: the scores files of {', '.join(r['system'] for r in fig['lines'])} bucket "
            f"BLEU by length differently; evaluate them again with the same nmt"
        )
    figure = f"{fig['id']}.png"
    plot = Figure(figsize=(8.0, 4.5), dpi=100)
    FigureCanvasAgg(plot)
    ax = plot.add_subplot(1, 1, 1)
    for i, line in enumerate(lines):
        pts = [(k, b["bleu_tok"]) for k, b in enumerate(line["buckets"]) if b["bleu_tok"] is not None]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="os^Dv"[i % 5], color=f"C{i}", label=line["label"])
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels)
    ax.set_xlabel("source sentence length (words)")
    ax.set_ylabel("BLEU (tokenised)")
    ax.set_title(fig["title"], fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    plot.tight_layout()
    save_png(plot, out_dir / figure)

    rows = []
    for k, label in enumerate(labels):
        cells = []
        for line in lines:
            b = line["buckets"][k]
            cells.append(DASH if b["bleu_tok"] is None else f"{b['bleu_tok']:.2f} ({b['n_sentences']})")
        rows.append({"name": label, "cells": cells})
    return {
        "figure": figure,
        "caption": f"Tokenised BLEU of the sentences of {fig['testset']} whose source "
        "length falls in each bucket (sentences per bucket in brackets in the table).",
        "table": {"columns": ["source length", *(line["label"] for line in lines)], "rows": rows},
    }


# -- Figure 7 -----------------------------------------------------------------------------------------------
def attention_maps_view(fig: dict, inputs: FigureInputs, out_dir: Path) -> dict:
    panels, line, aligners = [], None, []
    for ref in fig["maps"]:
        matrix = inputs.attention(ref["system"], fig["split"])
        if line is not None and matrix["line"] != line:
            raise InputError(
                f"{fig['id']}: the attention maps are of different sentences ({line} and "
                f"{matrix['line']}); they must come from the same split and length rule"
            )
        line = matrix["line"]
        panels.append((ref["label"], matrix["src"], matrix["tgt"], matrix["weights"]))
        if "links" in matrix:  # a statistical aligner: its links, not attention
            aligners.append(ref["label"])
    src, tgt = panels[0][1], panels[0][2]
    gold_note = "no gold alignment for this split"
    gold_path = inputs.gold(fig["split"])
    if fig["gold"] and gold_path.is_file():
        sure, possible = read_pharaoh(gold_path)[line - 1]
        panels.append(("gold alignment", src, tgt, links_to_matrix(sure, possible, len(src), len(tgt))))
        inputs.add_source(gold_path, "gold alignment")
        gold_note = "gold: black = sure link, grey = possible link"
    figure = f"{fig['id']}.png"
    attention_heatmaps(panels, out_dir / figure, f"{fig['split']} sentence {line}")
    return {
        "figure": figure,
        "table": None,
        "caption": f"Attention weights when the reference is forced through each model (row: the target word "
        f"being predicted; column: source word as written; white = 0, black = 1); sentence {line} of "
        f"the {fig['split']} split; {gold_note}"
        + (f"; {', '.join(aligners)}: the aligner's links (black = link, grey = possible link)" if aligners else "")
        + ".",
    }


# -- Table 5 ------------------------------------------------------------------------------------------------
def pick_samples(sources: list[str], count: int, length: list[int]) -> list[int]:
    """``count`` indices at even intervals among the sentences whose source length is within ``length``."""
    eligible = [i for i, s in enumerate(sources) if length[0] <= len(s.split()) <= length[1]]
    if len(eligible) <= count:
        return eligible
    if count == 1:
        return [eligible[len(eligible) // 2]]
    return [eligible[round(k * (len(eligible) - 1) / (count - 1))] for k in range(count)]


def samples_view(fig: dict, inputs: FigureInputs, out_dir: Path) -> dict:
    src, ref = inputs.prepared(fig["testset"], "src"), inputs.prepared(fig["testset"], "tgt")
    outputs = [(c["label"], inputs.translation(c["system"], fig["testset"], c["unk"])) for c in fig["columns"]]
    samples = []
    for i in pick_samples(src, fig["count"], fig["length"]):
        samples.append(
            {"line": i + 1, "rows": [("src", src[i]), ("ref", ref[i]), *((label, hyps[i]) for label, hyps in outputs)]}
        )
    return {
        "figure": None,
        "table": None,
        "samples": samples,
        "caption": f"Sentences of {fig['testset']} (line numbers given) as the models saw and wrote them "
        f"(tokenised, <unk> for words outside the vocabulary).",
    }


def figure_view(fig: dict, inputs: FigureInputs | None, out_dir: Path, learning_curves: dict[str, str | None]) -> dict:
    """One figure section (``fig`` as nmt.config.plan.collect_figures gives it, with its file's ``paper``).
    ``learning_curves``: table id -> its learning-curve PNG (None: none drawn)."""
    view = {
        "id": fig["id"],
        "title": fig["title"],
        "paper": fig["paper"],
        "paper_note": fig["paper_note"],
        "kind": fig["kind"],
        "figure": None,
        "table": None,
        "samples": None,
        "caption": "",
        "unavailable": fig.get("unavailable"),
    }
    if view["unavailable"]:
        (out_dir / f"{fig['id']}.png").unlink(missing_ok=True)
        return view
    if fig["kind"] == "learning_curves":
        view["figure"] = learning_curves.get(fig["table"])
        view["caption"] = (
            f"The learning curves of {fig['table']}: dev-set perplexity (log scale) after each "
            "epoch, one curve per system."
        )
        if view["figure"] is None:
            view["unavailable"] = f"no training metrics found for the systems of {fig['table']}"
        return view
    build = {"bleu_by_length": bleu_by_length_view, "attention_maps": attention_maps_view, "samples": samples_view}[
        fig["kind"]
    ]
    try:
        view.update(build(fig, inputs, out_dir))
    except MissingInput as missing:
        (out_dir / f"{fig['id']}.png").unlink(missing_ok=True)
        view["unavailable"] = f"MISSING results: no {missing.path}"
        view["missing"], view["missing_kind"] = missing.path, missing.kind
    except NotDrawable as why:
        (out_dir / f"{fig['id']}.png").unlink(missing_ok=True)
        view["unavailable"] = str(why)
    return view
