"""One translation's scores file (`nmt evaluate`): its BLEU and chrF (nmt.scoring.bleu), those of the translation after
unk replacement (nmt.decode.unk), and the perplexity of the system's model on the reference (nmt.scoring.likelihood).

Apart from nmt.scoring.bleu, which the report reads too: the report's code then does not include the models and the
engine that perplexity loads (what a DVC stage depends on is read off the imports, nmt.cli.code_deps).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .. import config as cfg
from ..data.text import PathLike, read_lines, read_parallel, write_lines_atomic
from ..decode.unk import replace_file
from ..records.scores import write_scores
from .bleu import evaluate_files, require_sentences


def score_translation(
    hyp: PathLike,
    ref: PathLike,
    out: PathLike,
    *,
    meta: dict[str, Any],
    lang: str | None = None,
    src: PathLike | None = None,
    raw_ref: PathLike | None = None,
    lowercase: bool = False,
    model: PathLike | None = None,
    device: str | None = None,
    threads: int | None = None,
    positions: PathLike | None = None,
    unk_dict: PathLike | None = None,
    unk_out: PathLike | None = None,
    params: PathLike | None = None,
    preset: str | None = None,
) -> dict[str, Any]:
    """Score ``hyp`` against ``ref`` into ``out`` (the Scores dict of docs/formats.md, returned).

    ``model``: its perplexity on ``src`` -> ``ref``, and the target language when ``lang`` is not given; else the
    language of ``meta["pair"]`` in the ``params`` file (``preset``). ``positions`` (nmt translate's
    --positions-out), with ``unk_dict`` and ``src``: also the translation after unk replacement, written to
    ``unk_out``.
    """
    require_sentences(ref, hyp)  # empty files: one line, before the perplexity or unk_out
    ppl = None
    if model:
        ppl, model_config = _perplexity(model, src, ref, device=device, threads=threads)
        lang = lang or cfg.corpus_for_task(model_config, meta["pair"])["tgt_lang"]
    if not lang and meta["pair"] and params and Path(params).is_file():  # e.g. an ensemble: the preset says
        lang = cfg.corpus_for_task(cfg.load_params(params, preset), meta["pair"])["tgt_lang"]
    if not lang:
        raise cfg.ConfigError(
            "nmt evaluate: give --lang, --model or --pair (with the params file) to take the target language from"
        )
    unk = _replace_unks(hyp, positions, src, unk_dict, unk_out) if positions else None
    scores = evaluate_files(
        hyp, ref, lang=lang, ppl=ppl, meta=meta, unk=unk, src_path=src, raw_ref_path=raw_ref, lowercase=lowercase
    )
    write_scores(out, scores)
    return scores


def _perplexity(
    model: PathLike, src: PathLike | None, ref: PathLike, *, device: str | None, threads: int | None
) -> tuple[float, dict]:
    """The model's perplexity on the reference, and the model's config."""
    # torch is imported only here: scoring an ensemble's translation (no model of its own) does without it
    from ..base.devices import set_threads
    from ..engine.fast import load_for_decoding
    from .likelihood import corpus_nll, perplexity

    set_threads(threads)
    net, src_vocab, tgt_vocab, config = load_for_decoding([str(model)], device)
    sources, refs = read_parallel(src, ref)
    nll, tokens = corpus_nll(
        net,
        [src_vocab.encode(s) for s in sources],
        [tgt_vocab.encode(r) for r in refs],
        64,
        next(net.parameters()).device,
    )
    return perplexity(nll, tokens), config


def _replace_unks(
    hyp: PathLike, positions: PathLike, src: PathLike | None, unk_dict: PathLike | None, unk_out: PathLike | None
) -> dict[str, Any] | None:
    """The unk-replaced translation, written to ``unk_out``, and what was replaced (None: nothing could be)."""
    if not (unk_dict and src and unk_out):
        raise cfg.ConfigError("nmt evaluate --positions needs --unk-dict, --src and --unk-out too")
    # A model without attention writes no positions: there is nothing to replace with. A translation without a
    # word (a model that learnt nothing yet) has nothing to replace either: its replacement is itself.
    if any(line.strip() for line in read_lines(positions, allow_empty=True)) or not any(
        line.strip() for line in read_lines(hyp, allow_empty=True)
    ):
        return {"hyp": unk_out, "dict": unk_dict, **replace_file(hyp, positions, src, unk_dict, unk_out)}
    # the translation as it is, so that unk_out always exists (the workflow declares it)
    write_lines_atomic(unk_out, read_lines(hyp, allow_empty=True))
    return None
