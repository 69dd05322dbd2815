"""The `nmt` command line: one subcommand per pipeline stage. Workflow rules call these; so can people.

Each command imports the modules that do its work when it runs, so that `nmt --help`, `nmt systems` and the
workflow engines' many small calls do not pay for importing torch."""
from __future__ import annotations

import argparse
import functools
import json
import sys
import traceback
from pathlib import Path

from .. import config as cfg
from .. import eflomal_runner, layout
from ..data.tasks import data_task
from ..data.text import write_json_atomic
from ..errors import UserError
from ..pipeline import plan
from ..settings import SystemSettings
from . import align, common
from .common import add_config_args, add_system_args, load_config, system_models


# -- data -----------------------------------------------------------------------------------------------------
def cmd_data_get(args) -> None:
    from ..data.corpus import get_task_corpus
    config = load_config(args)
    summary = get_task_corpus(config, args.task, args.out, root=Path(args.params).parent,
                              downloads=args.downloads, allow_network=not args.offline)
    print(json.dumps(summary["splits"], sort_keys=True))


def cmd_data_list(args) -> None:
    """The registry: every corpus, its files, where a mirror keeps them, and its licence."""
    from ..data.fetch import load_registry
    for name, spec in load_registry().items():
        gated = " [licence-gated]" if spec["licence_gated"] else ""
        print(f"{name}{gated}: {' '.join(spec['description'].split())}")
        print(f"  licence: {' '.join(spec['licence'].split())}")
        for fname, entry in spec["files"].items():
            source = f"sacreBLEU {entry['sacrebleu']['testset']}" if "sacrebleu" in entry else entry["url"]
            print(f"  {fname:<34} mirror: {entry['mirror'] or '-':<48} from: {source}")


def cmd_data_fetch(args) -> None:
    """Fetch registry files into a directory (e.g. to fill a mirror, or to get the raw WMT newstests)."""
    from ..data.fetch import fetch_corpus
    dest = Path(args.dest) if args.dest else Path(args.downloads) / args.corpus
    paths = fetch_corpus(args.corpus, args.files or None, dest, mirror=args.mirror,
                         allow_network=not args.offline, accept_licence=args.accept_licence)
    for path in paths.values():
        print(path)


def cmd_data_prepare(args) -> None:
    from ..data.prepare import prepare
    config = load_config(args)
    spec = cfg.corpus_for_task(config, args.task)
    prep = cfg.prepare_for_task(config, args.task)
    stats = prepare(args.raw, args.out, splits=args.splits or cfg.task_splits(config, args.task), src_lang=spec["src_lang"],
                    tgt_lang=spec["tgt_lang"], max_len=prep["max_len"], src_vocab=prep["src_vocab"],
                    tgt_vocab=prep["tgt_vocab"], tokenize=prep["tokenize"], lowercase=prep.get("lowercase", False),
                    tokenized_splits=tuple(cfg.tokenized_splits(config, args.task)))
    print(json.dumps({"src_vocab": stats["src_vocab"], "tgt_vocab": stats["tgt_vocab"],
                      "train_dropped_by_length": stats["train_dropped_by_length"]}))


# -- cost -----------------------------------------------------------------------------------------------------
def _data_root(args, config: dict) -> Path:
    return Path(args.data) if args.data else Path("data") / config["preset"]


def cmd_bench_train(args) -> None:
    from ..bench.estimate import bench_train
    from ..devices import pick_device, set_threads
    config = load_config(args)
    set_threads(args.threads)
    result = bench_train(config, Path(args.params).parent, _data_root(args, config), updates=args.updates,
                         warmup=args.warmup, device=pick_device(args.device), compare_eager=args.compare_eager,
                         systems=args.systems, epoch_check_systems=args.epoch_check,
                         epoch_check_seeds=args.epoch_check_seeds, threads=args.threads, precision=args.precision,
                         progress=lambda m: print(m, file=sys.stderr))
    out = Path(args.out) if args.out else Path("benchmarks") / f"throughput-{config['preset']}-{result['device_type']}.json"
    write_json_atomic(out, result)
    print(out)


def cmd_bench_translate(args) -> None:
    from ..bench.translate import bench_translate
    from ..devices import pick_device, set_threads
    config = load_config(args)
    set_threads(args.threads)
    result = bench_translate(config, Path(args.params).parent, _data_root(args, config), device=pick_device(args.device),
                             beam=args.beam, compare_eager=args.compare_eager, systems=args.systems,
                             min_time=args.min_time, progress=lambda m: print(m, file=sys.stderr))
    out = Path(args.out) if args.out else Path("benchmarks") / f"translate-{config['preset']}-{result['device_type']}.json"
    write_json_atomic(out, result)
    print(out)


def cmd_bench_attention(args) -> None:
    from ..bench.attention import bench_attention
    from ..devices import pick_device, set_threads
    config = load_config(args)
    options = dict(config["bench"]["attention"])
    if args.lengths:
        options["lengths"] = args.lengths
    set_threads(args.threads)
    result = bench_attention(**options, device=pick_device(args.device), progress=lambda m: print(m, file=sys.stderr))
    write_json_atomic(args.out, result)
    print(args.out)


def cmd_bench_monotonic(args) -> None:
    from ..bench.monotonic import bench_monotonic
    from ..devices import set_threads
    config = load_config(args)
    set_threads(args.threads)
    result = bench_monotonic(**config["bench"]["monotonic"], base_model=config["model"], threads=args.threads,
                             progress=lambda m: print(m, file=sys.stderr))
    write_json_atomic(args.out, result)
    print(args.out)


def cmd_estimate(args) -> None:
    from ..bench.estimate import (claim_costs, estimate, format_claim_costs, format_estimate, read_report_claims,
                                  read_throughput)
    config = load_config(args)
    bench = read_throughput(args.throughput)  # nmt.files: every problem one line naming the file and the key
    claims_doc = read_report_claims(args.claims) if args.claims else None  # both read before anything is said
    result = estimate(config, Path(args.params).parent, _data_root(args, config), bench)
    print(format_estimate(result))
    if claims_doc is not None:
        result["claim_costs"] = claim_costs(result, claims_doc)
        unit = "GPU-hours" if result["device_type"] == "cuda" else "CPU-hours"
        print("\nwhat the seeds that would decide the inconclusive claims cost (claims.json: seeds_needed):")
        print(format_claim_costs(result["claim_costs"], unit))
    if args.json:
        write_json_atomic(args.json, result)


# -- systems --------------------------------------------------------------------------------------------------
def cmd_systems(args) -> None:
    config = load_config(args)
    for pair, systems in plan.collect_systems(config, Path(args.params).parent).items():
        for system in systems:
            print(f"{pair}\t{system}" if args.with_pair else system)


def cmd_seed_targets(args) -> None:
    """The files of one seed's part of the run, one a line: `snakemake $(nmt seed-targets --seed 2)` makes them."""
    for path in plan.seed_part(load_config(args), Path(args.params).parent, args.seed):
        print(path)


def cmd_export_run(args) -> None:
    from ..pipeline.export import export_run
    config = load_config(args)
    results = Path(args.results or layout.path(layout.RESULTS_ROOT, preset=config["preset"]))
    done = export_run(config, Path(args.params).parent, results, Path(args.out), seeds=args.seed, replace=args.replace)
    print(f"{args.out}: {done['copied']} files copied, {done['unchanged']} already there")


def cmd_dvc_yaml(args) -> None:
    from ..data.text import write_text_atomic
    from ..pipeline.dvc_yaml import DEFAULT_PATH, planned_preset, render, stale_files
    from . import code_deps  # grimp: only this command reads the import graph
    config = load_config(args)
    root = Path(args.params).parent
    parser, loaded = build_parser(), (sys.modules[__name__], common, align)

    @functools.lru_cache(maxsize=None)  # every stage of a step runs the same command: its files once
    def files_of(words: tuple[str, ...]) -> list[str]:
        return code_deps.as_dependencies(code_deps.command_files(code_deps.handler(parser, words), loaded))

    files = render(config, root, files_of)
    stale = stale_files(root, files)
    if args.check:
        top = root / DEFAULT_PATH
        # errors="replace": a damaged stage file (a byte that is not UTF-8) just does not match, and is said so
        planned = planned_preset(top.read_text(encoding="utf-8", errors="replace") if top.is_file() else "")
        if planned and planned != config["preset"]:
            raise cfg.ConfigError(f"{top}: plans preset {planned!r}, params.yaml names {config['preset']!r}; "
                                  "regenerate it with `nmt dvc-yaml`, then run `dvc repro` again")
        for path, text in files.items():
            current = (root / path).read_text(encoding="utf-8", errors="replace") if (root / path).is_file() else None
            if current != text:
                raise cfg.ConfigError(f"{root / path}: does not match the preset's table and figure files or the "
                                      "code's imports; regenerate it with `nmt dvc-yaml`, then run `dvc repro` again")
        if stale:
            raise cfg.ConfigError(f"{root / stale[0]}: a step the preset's plan does not have; regenerate the stage "
                                  "files with `nmt dvc-yaml`, then run `dvc repro` again")
        if args.stamp:
            write_text_atomic(args.stamp, f"dvc.yaml plans preset {config['preset']}\n")
        print(f"{root / DEFAULT_PATH} and the {len(files) - 1} step files under it are current")
        return
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(root / path, text)
    for path in stale:
        (root / path).unlink()
    print(f"{root / DEFAULT_PATH} and {len(files) - 1} step files: the stages of preset {config['preset']}")


def cmd_config(args) -> None:
    config = load_config(args)
    if args.table and args.system:
        table = cfg.load_table(args.table)
        resolved = cfg.system_config(config, table, args.system, args.table)
        # the system as its table's task trains it: that task's corpus and preparation (e.g. 30K vocabularies)
        resolved["prepare"] = cfg.prepare_for_task(resolved, table["task"])
        resolved["task"] = {"name": table["task"], "played_by": data_task(config, table["task"]),
                            "corpus": cfg.corpus_for_task(config, table["task"])["corpus"]}
        # its settings as training reads them (typed, every key), and what it trains by, whichever keys that comes
        # from (train.epochs gives way to the others)
        resolved.update(SystemSettings.from_config(resolved).as_dict())
        config = resolved
    print(json.dumps(config, indent=2, sort_keys=True))


# -- train / translate / evaluate -----------------------------------------------------------------------------
def cmd_train(args) -> None:
    from ..train import train
    config = load_config(args)
    system_cfg = cfg.system_config(config, cfg.load_table(args.table), args.system, args.table)
    # Files from other steps (a baseline to start from, aligned training pairs): given on the command line, or
    # where the workflow puts them among --out's task results (--out: results/{preset}/{task}/models/{system}).
    found = cfg.training_inputs(system_cfg, Path(args.out).parent.parent)
    init_from, links = args.init_from or found.get("init_from"), args.guided_links or found.get("links")
    if init_from:
        system_cfg["train"]["init_from"] = str(init_from)
    if links:
        system_cfg["train"]["guided_alignment"] = {**system_cfg["train"]["guided_alignment"],
                                                   "file": str(Path(links).resolve())}
    train(system_cfg, args.data, args.out, system=args.system, threads=args.threads, device=args.device,
          replace=args.replace)


def cmd_translate(args) -> None:
    from ..data.text import read_lines, write_lines_atomic
    from ..devices import set_threads
    from ..decode.translate import translate_ids
    from ..engine.fast import load_for_decoding
    set_threads(args.threads)
    paths, combine = system_models(args, "nmt translate")
    model, src_vocab, tgt_vocab, config = load_for_decoding(paths, args.device, combine)
    options = config.get("translate") or {}
    missing = [key for key in cfg.schema()["properties"]["translate"]["required"] if key not in options]
    if missing:  # every model file nmt train writes has them (params.yaml's translate section, resolved)
        raise cfg.ConfigError(f"{paths[0]}: its config has no translate.{', translate.'.join(missing)}: "
                              "not a model file written by nmt train")
    decode = {}
    if args.system:  # a table's `decodings:` entry says how this one is decoded (beam, monotonic)
        decode = plan.decode_options(plan.collect_ensembles(load_config(args), Path(args.params).parent).get(args.task, {}),
                                    args.system)
    beam = args.beam or decode.get("beam") or options["beam"]
    monotonic = args.monotonic or decode.get("monotonic")
    if monotonic:
        from ..models.monotonic import set_monotonic_mode
        try:
            set_monotonic_mode(model, monotonic)
        except ValueError as e:
            raise cfg.ConfigError(f"{', '.join(paths)}: {e}") from e
    lines = read_lines(args.src)
    device = next(model.parameters()).device
    sources = [src_vocab.encode(line) for line in lines]
    batch_size = args.batch_size or options["batch_size"]
    hyps = translate_ids(model, sources, beam=beam, batch_size=batch_size,
                         max_len_ratio=options["max_len_ratio"], device=device)
    if args.positions_out:
        # the source word credited with each output word, for unk replacement: by the rule alignment extraction
        # credits attention with (each model's own, Luong et al.'s footnote 14, unless --credit says otherwise)
        from ..align.extract import credited_positions
        positions = credited_positions(model, sources, [h.tokens for h in hyps], credit=args.credit,
                                       batch_size=batch_size, device=device)
    write_lines_atomic(args.out, (" ".join(tgt_vocab.decode(h.tokens)) for h in hyps))
    if args.positions_out:
        write_lines_atomic(args.positions_out, (" ".join(map(str, p)) for p in positions))


def cmd_attention(args) -> None:
    from ..decode.attention_map import attention_map, links_map
    from ..devices import set_threads
    set_threads(args.threads)
    where = {"line": args.line, "length": tuple(args.length) if args.length else None,
             "system": args.system_name or args.system}
    if args.links:
        result = links_map(args.links, args.src, args.tgt, **where, label=args.label)
    else:
        paths, combine = system_models(args, "nmt attention")
        result = attention_map(paths, args.src, args.tgt, **where, device=args.device, combine=combine)
    write_json_atomic(args.out, result)
    print(json.dumps({"line": result["line"], "attention": result["attention"], "src_words": len(result["src"]),
                      "tgt_words": len(result["tgt"])}))


def cmd_unk_dict(args) -> None:
    from ..unk import build_dictionary, convert_release_dictionary
    config = load_config(args) if args.task else None
    release = cfg.unk_dictionary_release(config, args.task) if args.task else None
    if release is not None:  # the task corpus' own dictionary (Luong et al.'s, from the Berkeley aligner)
        from ..data.fetch import fetch_file
        mirror = (config["data"].get("mirror") and Path(args.params).parent / config["data"]["mirror"]) or None
        path = fetch_file(release["corpus"], release["file"], Path(args.downloads) / release["corpus"], mirror=mirror)
        print(json.dumps(convert_release_dictionary(path, args.out)))
        return
    if not (args.src and args.tgt):
        raise cfg.ConfigError("nmt unk dict needs --src and --tgt (the training pairs eflomal aligns), or --task "
                              "with unk.dictionary: stanford and a task whose corpus releases a dictionary")
    stats = build_dictionary(args.src, args.tgt, args.out, seed=args.seed, samplers=args.samplers,
                             progress=lambda m: print(m, file=sys.stderr))
    print(json.dumps(stats))


def cmd_unk_replace(args) -> None:
    from ..unk import replace_file
    print(json.dumps(replace_file(args.hyp, args.positions, args.src, args.dict, args.out)))


def cmd_evaluate(args) -> None:
    from ..evaluate import evaluate_files, require_sentences
    require_sentences(args.ref, args.hyp)  # empty files: one line, before the perplexity or --unk-out
    ppl, lang = None, args.lang
    if args.models_dir:  # the system's own model for perplexity; an ensemble of the preset's tables has none
        paths, combine = plan.decoding_models(load_config(args), Path(args.params).parent, args.pair, args.system,
                                             args.models_dir)
        if combine is None:
            args.model = str(paths[0])
    if args.model:
        from ..data.text import read_parallel
        from ..engine.fast import load_for_decoding
        from ..likelihood import corpus_nll, perplexity
        from ..devices import set_threads
        set_threads(args.threads)
        model, src_vocab, tgt_vocab, config = load_for_decoding([args.model], args.device)
        lang = lang or cfg.corpus_for_task(config, args.pair)["tgt_lang"]
        src, ref = read_parallel(args.src, args.ref)
        nll, tokens = corpus_nll(model, [src_vocab.encode(s) for s in src], [tgt_vocab.encode(r) for r in ref],
                                 64, next(model.parameters()).device)
        ppl = perplexity(nll, tokens)
    meta = {"system": args.system, "testset": args.testset, "preset": args.preset_name, "pair": args.pair}
    if not lang and args.pair and Path(args.params).is_file():  # e.g. an ensemble: the preset names the language
        lang = cfg.corpus_for_task(load_config(args), args.pair)["tgt_lang"]
    if not lang:
        raise cfg.ConfigError("nmt evaluate: give --lang, --model or --pair (with the params file) to take the "
                              "target language from")
    unk = None
    if args.positions:
        from ..data.text import read_lines
        from ..unk import replace_file
        if not (args.unk_dict and args.src and args.unk_out):
            raise cfg.ConfigError("nmt evaluate --positions needs --unk-dict, --src and --unk-out too")
        # A model without attention writes no positions: there is nothing to replace with. A translation without a
        # word (a model that learnt nothing yet) has nothing to replace either: its replacement is itself.
        if (any(line.strip() for line in read_lines(args.positions, allow_empty=True))
                or not any(line.strip() for line in read_lines(args.hyp, allow_empty=True))):
            unk = {"hyp": args.unk_out, "dict": args.unk_dict,
                   **replace_file(args.hyp, args.positions, args.src, args.unk_dict, args.unk_out)}
        else:  # the translation as it is, so that --unk-out always exists (the workflow declares it)
            from ..data.text import write_lines_atomic
            write_lines_atomic(args.unk_out, read_lines(args.hyp, allow_empty=True))
    scores = evaluate_files(args.hyp, args.ref, lang=lang, ppl=ppl, meta=meta, unk=unk, src_path=args.src,
                            raw_ref_path=args.raw_ref, lowercase=args.lowercase)
    write_json_atomic(args.out, scores)
    print(json.dumps({k: scores[k] for k in ("bleu_tok", "bleu_detok", "ppl", "bleu_tok_unk")}))


# -- report ---------------------------------------------------------------------------------------------------
def _expected_scores(config: dict, root: Path, results: Path) -> list[Path]:
    """Every scores file the preset's tables and figures read (translations' and alignments'), below ``results``."""
    wanted = dict.fromkeys([*plan.collect_evaluations(config, root),
                            *((a["task"], a["name"], a["split"]) for a in plan.collect_alignments(config, root))])
    return [layout.under(results, layout.RESULTS_ROOT, layout.SCORES, pair=task, system=name, testset=testset)
            for task, name, testset in wanted]


def cmd_report(args) -> None:
    from ..pipeline.identity import run_identity
    from ..report.claims import ClaimJudge, VerdictRule, adjust, training_convergence
    from ..report.deviations import claim_scopes, deviations
    from ..report.context import report_context
    from ..report.render import SPEED_VIEWS, check_scores, render_report, training_problems
    config = load_config(args)
    root = Path(args.params).parent
    tables = [root / t for t in config["tables"]]
    # Outputs are namespaced by task (results/{preset}/{task}/...); the preset says which corpus plays it.
    pairs = {task: data_task(config, task) for task in config["data"]["tasks"]}
    trained = plan.collect_systems(config, root)  # the trainings whose records the report reads
    claim_specs = plan.collect_claims(config, root)  # a bad claims file is said before the results are looked at
    # a mistyped --results or a run not made yet: refused rather than a page of MISSING over a good report
    expected = _expected_scores(config, root, Path(args.results))
    missing = check_scores(expected, Path(args.results), config["preset"], partial=args.partial)
    problems = training_problems(Path(args.results), trained)
    context = report_context(config, Path(args.data), Path(args.results), trained)
    speed = {}
    for name in SPEED_VIEWS:  # benchmarks/NAME.json: written by `nmt bench NAME` (the DAG's bench_NAME step)
        bench_file = Path(args.results) / "benchmarks" / f"{name}.json"
        if bench_file.is_file():
            speed[name] = bench_file
    unavailable = plan.unavailable_tables(config, root)
    tables_by_id = {cfg.load_table(path)["id"]: cfg.load_table(path) for path in tables}
    runs = plan.collect_runs(config, root)
    paper = cfg.load_params(args.params, "paper")
    found = deviations(config, paper, config["tables"], root)
    rule = VerdictRule.from_config(config)
    judge = ClaimJudge(results_dir=Path(args.results), preset=config["preset"], tables_by_id=tables_by_id,
                       pair_for_task=pairs, benchmarks=speed, runs=runs, rule=rule,
                       scopes=claim_scopes(config, paper, config["tables"], found, root),
                       ensembles=plan.collect_ensembles(config, root),
                       languages={task: cfg.corpus_for_task(config, task)["tgt_lang"] for task in pairs},
                       unavailable={cfg.load_table(root / t)["id"]: why for t, why in unavailable.items()})
    claims = adjust([judge.judge(claim) for claim in claim_specs])
    synthetic = all(cfg.corpus_for_task(config, task)["corpus"] == "synth" for task in pairs)
    index = render_report(preset=config["preset"], preset_description=config.get("description", ""),
                          tables=tables, results_dir=Path(args.results), pair_for_task=pairs,
                          context=context, out_dir=Path(args.out), speed=speed,
                          figures=plan.collect_figures(config, root), data_dir=Path(args.data),
                          unavailable={root / t: why for t, why in unavailable.items()},
                          claims=claims, claim_files=config.get("claims") or [], runs=runs,
                          deviations=found, synthetic=synthetic,
                          trainings=training_convergence(Path(args.results), trained, rule.converged_within,
                                                         rule.converged_window),
                          run=run_identity(config, root), problems=problems)
    if missing:
        print(f"nmt: warning: a partial report: {len(missing)} of its {len(expected)} scores files are missing "
              "(their rows say MISSING)", file=sys.stderr)
    if problems:
        print(f"nmt: warning: {len(problems)} training{'s' if len(problems) > 1 else ''} with incomplete records "
              f"(listed at the top of the page): {'; '.join(problems)}", file=sys.stderr)
    print(index)


def cmd_compare(args) -> None:
    from ..report.compare import compare, format_comparison
    for report in (args.run, args.reference):
        for name in ("summary.json", "claims.json"):
            if not (Path(report) / name).is_file():
                raise UserError(f"{Path(report) / name}: missing; give the directories `nmt report` wrote "
                                "(reports/PRESET, docs/reproductions/PRESET)")
    result = compare(Path(args.run), Path(args.reference), across_presets=args.across_presets)
    print(format_comparison(result, everything=args.all))
    if args.json:
        write_json_atomic(args.json, result)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="nmt", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    for add_commands in (_data_commands, _bench_commands, _plan_commands, _model_commands, _unk_commands,
                         align.register, _scoring_commands):  # the order of `nmt --help`
        add_commands(sub)
    return parser


def _data_commands(sub) -> None:
    """`nmt data get|list|fetch|prepare`: corpora."""
    data = sub.add_parser("data", help="corpora: list, fetch, get, prepare").add_subparsers(dest="data_command", required=True)
    p = data.add_parser("get", help="the raw corpus of a task: generated (synth) or fetched and verified")
    add_config_args(p)
    p.add_argument("--task", required=True, help="the table task (e.g. en-de); the preset names its corpus")
    p.add_argument("--out", required=True, help="directory for {split}.src / {split}.tgt")
    p.add_argument("--downloads", default="data/downloads", help="where fetched files are kept (default: %(default)s)")
    p.add_argument("--offline", action="store_true", help="use only the mirror and earlier downloads")
    p.set_defaults(func=cmd_data_get)
    p = data.add_parser("list", help="the corpus registry: corpora, files, mirror paths, licences")
    p.set_defaults(func=cmd_data_list)
    p = data.add_parser("fetch", help="fetch files of a registry corpus, verified by sha256 (mirror first)")
    p.add_argument("corpus", help="a corpus of the registry (`nmt data list`)")
    p.add_argument("files", nargs="*", help="file names (default: all of the corpus)")
    p.add_argument("--dest", help="destination directory (default: DOWNLOADS/CORPUS)")
    p.add_argument("--downloads", default="data/downloads", help="default: %(default)s")
    p.add_argument("--mirror", help="a directory laid out like ../shared/data, consulted before the network")
    p.add_argument("--offline", action="store_true", help="never download")
    p.add_argument("--accept-licence", action="store_true",
                   help="you read and accepted the licence of a licence-gated corpus (RWTH gold alignments)")
    p.set_defaults(func=cmd_data_fetch)
    p = data.add_parser("prepare", help="tokenise, length-filter, build vocabularies, binarise")
    add_config_args(p)
    p.add_argument("--task", required=True)
    p.add_argument("--raw", required=True, help="directory with {split}.src / {split}.tgt")
    p.add_argument("--out", required=True)
    p.add_argument("--splits", nargs="+", default=None, help="default: every split of the task's corpus")
    p.set_defaults(func=cmd_data_prepare)


def _bench_commands(sub) -> None:
    """`nmt bench train|translate|attention|monotonic`: measurements of this code's speed."""
    bench = sub.add_parser("bench", help="measurements of this code's speed").add_subparsers(
        dest="bench_command", required=True)
    p = bench.add_parser("train", help="training throughput of each distinct model of the preset (for nmt estimate)")
    add_config_args(p)
    p.add_argument("--data", help="prepared data root, for real sizes (default: data/PRESET)")
    p.add_argument("--updates", type=int, default=20, help="timed updates per model (default: %(default)s)")
    p.add_argument("--warmup", type=int, default=3, help="untimed updates first (default: %(default)s)")
    p.add_argument("--device", help="cpu or cuda (default: cuda when available)")
    p.add_argument("--threads", type=int, default=None, help="CPU threads (default: torch's)")
    p.add_argument("--compare-eager", action="store_true",
                   help="also time the plain eager fp32 path, in turn with the fast one (eager_tokens_per_s)")
    p.add_argument("--systems", nargs="+", metavar="SYSTEM", help="measure only these systems (default: all)")
    p.add_argument("--epoch-check", nargs="+", metavar="SYSTEM", default=[],
                   help="also train one epoch of each on its prepared data, fast and eager fp32: dev perplexity "
                        "and throughput of both")
    p.add_argument("--epoch-check-seeds", nargs="+", type=int, metavar="SEED",
                   help="train each --epoch-check system once per seed, both paths (default: the preset's seed); "
                        "the paths' dropout masks differ, and the seeds show how much that alone moves the result")
    p.add_argument("--precision", help="the fast path's train.precision for every system: auto, fp32 or bf16 "
                                       "(default: each system's own)")
    p.add_argument("--out", help="JSON file (default: benchmarks/throughput-PRESET-DEVICE.json)")
    p.set_defaults(func=cmd_bench_train)
    p = bench.add_parser("translate", help="decoding speed of each distinct model of the preset: greedy and beam "
                                           "search, sentences/s at batch 1 and 64")
    add_config_args(p)
    p.add_argument("--data", help="prepared data root, for real sentences (default: data/PRESET)")
    p.add_argument("--beam", type=int, help="beam size (default: the preset's translate.beam)")
    p.add_argument("--device", help="cpu or cuda (default: cuda when available)")
    p.add_argument("--threads", type=int, default=None, help="CPU threads (default: torch's)")
    p.add_argument("--compare-eager", action="store_true",
                   help="also time the plain path (eager engine, step-by-step reference searches), in turn")
    p.add_argument("--systems", nargs="+", metavar="SYSTEM", help="only these systems (default: all)")
    p.add_argument("--min-time", type=float, default=1.0, help="seconds of timed decoding per model and batch size "
                                                               "(default: %(default)s)")
    p.add_argument("--out", help="JSON file (default: benchmarks/translate-PRESET-DEVICE.json)")
    p.set_defaults(func=cmd_bench_translate)
    p = bench.add_parser("attention", help="time per decoder step of global vs local attention, by source length")
    add_config_args(p)
    p.add_argument("--out", required=True, help="JSON file for the report")
    p.add_argument("--lengths", type=int, nargs="+", help="source lengths (default: bench.attention.lengths)")
    p.add_argument("--device", default="cpu", help="cpu or cuda (default: %(default)s)")
    p.add_argument("--threads", type=int, default=1, help="CPU threads (default: %(default)s)")
    p.set_defaults(func=cmd_bench_attention)
    p = bench.add_parser("monotonic", help="softmax vs hard monotonic attention (Raffel et al. 2017, appendix F): "
                                           "context vectors over a T x U grid, and whole greedy decoding by length")
    add_config_args(p)
    p.add_argument("--out", required=True, help="JSON file for the report")
    p.add_argument("--threads", type=int, default=1, help="CPU threads, torch's and numpy's (default: %(default)s)")
    p.set_defaults(func=cmd_bench_monotonic)


def _plan_commands(sub) -> None:
    """`nmt estimate`, `nmt systems`, `nmt dvc-yaml`, `nmt config`: what the preset plans."""
    p = sub.add_parser("estimate", help="device-hours to train every system of the preset, from measured throughput")
    add_config_args(p)
    p.add_argument("--throughput", required=True, help="the JSON file `nmt bench train` wrote")
    p.add_argument("--data", help="prepared data root, for real sizes (default: data/PRESET)")
    p.add_argument("--claims", help="a report's claims.json (reports/PRESET/claims.json): also what training every "
                                     "inconclusive claim's systems with the seeds that would decide it costs")
    p.add_argument("--json", help="also write the estimate as JSON")
    p.set_defaults(func=cmd_estimate)

    p = sub.add_parser("systems", help="list the systems the preset's tables train")
    add_config_args(p)
    p.add_argument("--with-pair", action="store_true")
    p.set_defaults(func=cmd_systems)
    p = sub.add_parser("seed-targets", help="the files of one seed's part of the run (a run made one seed at a time: "
                                            "`snakemake $(nmt seed-targets --seed 2)`)")
    add_config_args(p)
    p.add_argument("--seed", type=int, required=True, help="one of the preset's train.seeds")
    p.set_defaults(func=cmd_seed_targets)
    p = sub.add_parser("export-run", help="copy a run's small files (no models) into another directory, e.g. a "
                                          "published reference; one seed's part at a time with --seed")
    add_config_args(p)
    p.add_argument("--results", help="the run's results directory (default: results/PRESET)")
    p.add_argument("--out", required=True, help="e.g. docs/reproductions/PRESET/results")
    p.add_argument("--seed", type=int, action="append", help="only this seed's part (repeatable; default: every seed)")
    p.add_argument("--replace", action="store_true", help="overwrite files already there with other content")
    p.set_defaults(func=cmd_export_run)
    p = sub.add_parser("dvc-yaml", help="write dvc.yaml and workflow/dvc/*/dvc.yaml beside the params file: the "
                                        "stages of the preset params.yaml names, from its table and figure files "
                                        "(run it after changing the preset)")
    add_config_args(p)
    p.add_argument("--check", action="store_true", help="only check that the file is current (exit 2 if not)")
    p.add_argument("--stamp", help="with --check: write this file once the check passes (dvc.yaml's plan stage)")
    p.set_defaults(func=cmd_dvc_yaml)

    p = sub.add_parser("config", help="print the resolved configuration (of one system with --table/--system)")
    add_config_args(p)
    p.add_argument("--table")
    p.add_argument("--system")
    p.set_defaults(func=cmd_config)


def _model_commands(sub) -> None:
    """`nmt train`, `nmt translate`, `nmt attention`: the commands that run a model."""
    p = sub.add_parser("train", help="train one system of a table (resumes from its checkpoint)")
    add_config_args(p)
    p.add_argument("--table", required=True)
    p.add_argument("--system", required=True)
    p.add_argument("--data", required=True, help="prepared data directory")
    p.add_argument("--out", required=True, help="model directory")
    p.add_argument("--init-from", help="model.pt to start from (train.init_from {system: NAME} default: "
                                       "OUT/../NAME/model.pt)")
    p.add_argument("--guided-links", help="links of the prepared training pairs for guided alignment "
                                          "(train.guided_alignment.from ALIGNER default: "
                                          "OUT/../../alignments/aligners/ALIGNER.train.links)")
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--device", default=None, help="cpu, cuda, cuda:1 (default: cuda when available)")
    p.add_argument("--replace", action="store_true",
                   help="train even where --out holds another system's (or other settings') finished model.pt, "
                        "removing that training's files first (without it: refused, nothing touched)")
    p.set_defaults(func=cmd_train)

    p = sub.add_parser("translate", help="translate a tokenised source file (several --model: an ensemble)")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--model", nargs="+", help="model.pt; more than one decodes them as an ensemble")
    which.add_argument("--system", help="a system or ensemble that the preset's tables define for --task, "
                       "its model.pt (or its members') taken from --models-dir")
    add_system_args(p)
    p.add_argument("--positions-out", help="also write, per output word, the source position credited with it "
                   "(the largest attention weight of the step credited to the word), for unk replacement")
    p.add_argument("--credit", choices=["read", "predicted"], default=None,
                   help="which step's attention is credited to an output word: the step that reads it or the one "
                   "that predicts it (default: each model's own rule, Luong et al.'s footnote 14, as in alignment "
                   "extraction)")
    p.add_argument("--src", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--beam", type=int, default=None, help="beam size (1 = greedy; default from the config)")
    p.add_argument("--monotonic", choices=["soft", "hard"], default=None,
                   help="monotonic attention: its expected alignment (soft, as trained; the default) or the hard "
                   "linear-time process (Raffel et al. 2017)")
    p.add_argument("--batch-size", type=int, default=None)
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--device", default=None)
    p.set_defaults(func=cmd_translate)

    p = sub.add_parser("attention", help="attention matrix of a model for one reference translation (forced "
                       "decoding; the data of Luong et al.'s Figure 7), or an aligner's links of that sentence pair")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--model", nargs="+", help="model.pt (with attention); several = an ensemble (their average)")
    source.add_argument("--system", help="a system or ensemble that the preset's tables define for --task")
    source.add_argument("--links", help="a word aligner's links (Pharaoh, source first, one line per sentence pair "
                                        "of --src/--tgt), drawn in place of attention")
    add_system_args(p)
    p.add_argument("--label", default="word alignment links", help="with --links: what the links are")
    p.add_argument("--device", default=None, help="cpu, cuda, cuda:1 (default: a free GPU when there is one)")
    p.add_argument("--src", required=True, help="tokenised source file")
    p.add_argument("--tgt", required=True, help="tokenised reference file, line by line parallel to --src")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--line", type=int, help="the 1-based line to use")
    which.add_argument("--length", type=int, nargs=2, metavar=("MIN", "MAX"),
                       help="use the first line whose source has MIN to MAX words")
    p.add_argument("--out", required=True, help="JSON file: words, weights (target x source), models or links")
    p.add_argument("--name", dest="system_name", help="the name recorded in the JSON (default: --system)")
    p.add_argument("--threads", type=int, default=None)
    p.set_defaults(func=cmd_attention)


def _unk_commands(sub) -> None:
    """`nmt unk dict|replace`: unknown-word replacement."""
    unk = sub.add_parser("unk", help="unk replacement: dictionary from word alignments, replacement by attention"
                         ).add_subparsers(dest="unk_command", required=True)
    p = unk.add_parser("dict", help="align the training corpus with eflomal; most frequent target word per source word "
                                    "(or, with --task and unk.dictionary: stanford, the task corpus' own dictionary)")
    p.add_argument("--src", help="tokenised training source (eflomal)")
    p.add_argument("--tgt", help="tokenised training target (eflomal)")
    p.add_argument("--out", required=True, help="dictionary TSV (source, target, links or probability)")
    add_config_args(p)
    p.add_argument("--task", help="with unk.dictionary: stanford, the task whose corpus' released dictionary "
                                  "(data.tasks.TASK.unk_dictionary) is fetched and converted")
    p.add_argument("--downloads", default="data/downloads", help="where fetched files are kept (default: %(default)s)")
    p.add_argument("--seed", type=int, default=1, help="seed of eflomal's sampler (default: %(default)s)")
    eflomal_runner.add_samplers_argument(p)
    p.set_defaults(func=cmd_unk_dict)
    p = unk.add_parser("replace", help="replace each <unk> by the dictionary entry of its attended source word")
    p.add_argument("--hyp", required=True)
    p.add_argument("--positions", required=True, help="the --positions-out file of nmt translate")
    p.add_argument("--src", required=True, help="the source the translation was made from")
    p.add_argument("--dict", required=True, help="the dictionary of nmt unk dict")
    p.add_argument("--out", required=True)
    p.set_defaults(func=cmd_unk_replace)


def _scoring_commands(sub) -> None:
    """`nmt evaluate`, `nmt report`: scores and the report."""
    p = sub.add_parser("evaluate", help="BLEU (tokenised and sacreBLEU 13a) and perplexity -> JSON")
    add_config_args(p)
    p.add_argument("--hyp", required=True)
    p.add_argument("--ref", required=True)
    p.add_argument("--raw-ref", help="the test set's raw reference (same sentences and order as --ref, checked): "
                   "detokenised BLEU is scored against it instead of the detokenised --ref")
    p.add_argument("--lowercase", action="store_true",
                   help="the text was lowercased when it was prepared (prepare.lowercase): score BLEU and chrF "
                        "case-insensitively, so that their signatures say case:lc")
    p.add_argument("--src", help="source file (for perplexity, with --model; for unk replacement)")
    p.add_argument("--positions", help="attended source positions (nmt translate --positions-out): also score "
                                       "the translation after unk replacement")
    p.add_argument("--unk-dict", help="the dictionary of nmt unk dict")
    p.add_argument("--unk-out", help="where the unk-replaced translation goes")
    p.add_argument("--model", help="model for test perplexity")
    p.add_argument("--models-dir", help="instead of --model: perplexity from DIR/SYSTEM/model.pt when the preset's "
                                        "tables train SYSTEM; none when they define it as an ensemble")
    p.add_argument("--lang", help="target language for detokenisation (default: the model's corpus setting)")
    p.add_argument("--out", required=True)
    p.add_argument("--system", required=True)
    p.add_argument("--testset", required=True)
    p.add_argument("--preset-name", dest="preset_name", required=True)
    p.add_argument("--pair", required=True)
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--device", default=None, help="for perplexity: cpu, cuda, cuda:1 (default: a free GPU when there "
                                                  "is one; the workflow's CPU jobs pass cpu)")
    p.set_defaults(func=cmd_evaluate)

    p = sub.add_parser("report", help="render the preset's tables into HTML + CSV + JSON")
    add_config_args(p)
    p.add_argument("--results", required=True, help="results/{preset}")
    p.add_argument("--data", required=True, help="data/{preset}")
    p.add_argument("--out", required=True, help="reports/{preset}")
    p.add_argument("--partial", action="store_true",
                   help="render even when fewer than half of the expected scores files exist (a run not finished, "
                        "one seed's part of a reference); without it, such a report is refused")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("compare", help="a run's report against a reference's (docs/reproductions/PRESET): the "
                                       "numbers that differ by more than the seeds' spread, the claims that differ")
    p.add_argument("run", help="the run's report directory (reports/PRESET)")
    p.add_argument("reference", help="the reference's report directory")
    p.add_argument("--all", action="store_true", help="show every number and claim, not only those that differ")
    p.add_argument("--across-presets", action="store_true",
                   help="compare reports of different presets or corpora anyway (the first line says so)")
    p.add_argument("--json", help="also write the comparison as JSON")
    p.set_defaults(func=cmd_compare)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        args.func(args)
    except UserError as err:  # (nmt.errors) its message already names the file, line or key
        print(f"nmt: error: {err}", file=sys.stderr)
        return 2
    except OSError as err:  # reading or writing: a missing or read-only path, a full disk, a directory for a file
        print(f"nmt: error: {os_error_line(err)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C outside a training (a training checkpoints and exits on its own)
        print("nmt: interrupted", file=sys.stderr)
        return 130
    except Exception:  # not something a user can cause: our bug, shown whole
        traceback.print_exc()
        print("nmt: internal error: the traceback above is a bug in nmt; please report it with the command that "
              "gave it", file=sys.stderr)
        return 1
    return 0


def os_error_line(err: OSError) -> str:
    """An OSError as one line: the path(s) it names and the system's reason."""
    reason = err.strerror or str(err)
    if err.filename is None:
        return reason
    if err.filename2 is not None:
        return f"{err.filename} -> {err.filename2}: {reason}"
    return f"{err.filename}: {reason}"
