"""What the `nmt` commands do (their options: nmt.cli.parser): one function per command, which nmt.cli imports when
the command runs. Each imports the modules that do its work when it runs, so that `nmt systems` and the workflow
engines' many small calls do not pay for importing torch."""
from __future__ import annotations

import functools
import json
import sys
from pathlib import Path

from .. import config as cfg
from .. import layout
from ..data.tasks import data_task
from ..data.text import write_json_atomic
from ..pipeline import plan
from ..settings import SystemSettings
from .common import load_config, system_models, table_file
from .parser import build_parser


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
    parser = build_parser()

    @functools.lru_cache(maxsize=None)  # every stage of a step runs the same command: its files once
    def files_of(words: tuple[str, ...]) -> list[str]:
        return code_deps.as_dependencies(code_deps.command_files(code_deps.handler(parser, words)))

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
    if bool(args.table) != bool(args.system):
        raise cfg.ConfigError("nmt config: --table and --system go together (one system of one table)")
    if args.table:
        path = table_file(config, Path(args.params).parent, args.table)
        table = cfg.load_table(path)
        resolved = cfg.system_config(config, table, args.system, path)
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
    path = table_file(config, Path(args.params).parent, args.table)
    system_cfg = cfg.system_config(config, cfg.load_table(path), args.system, path)
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
def _expected_scores(config: dict, root: Path, results: Path) -> dict[tuple[str, str, str], Path]:
    """{(task, run, testset): its scores file below ``results``} of every scores file the preset's tables and figures
    read (translations' and alignments')."""
    wanted = dict.fromkeys([*plan.collect_evaluations(config, root),
                            *((a["task"], a["name"], a["split"]) for a in plan.collect_alignments(config, root))])
    return {(task, name, testset): layout.under(results, layout.RESULTS_ROOT, layout.SCORES, pair=task, system=name,
                                                testset=testset)
            for task, name, testset in wanted}


def cmd_report(args) -> None:
    from ..pipeline.identity import run_identity
    from ..report.claims import ClaimJudge, VerdictRule, adjust, training_convergence
    from ..report.deviations import claim_scopes, deviations
    from ..report.context import report_context
    from ..report.partial import partial_record, runs_in, scored_runs
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
    missing = check_scores(list(expected.values()), Path(args.results), config["preset"], partial=args.partial)
    found = {key: path.is_file() for key, path in expected.items()}
    partial = partial_record(found, plan.preset_seeds(config))  # how much of the planned run is in (None: all)
    # --partial on a run made one seed at a time: its rows are the means of the seed runs there are ("1 of 3 runs")
    by_seeds = partial if args.partial and len(plan.preset_seeds(config)) > 1 else None
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
    differ = deviations(config, paper, config["tables"], root)
    rule = VerdictRule.from_config(config)
    # --partial: the claims are judged on the runs there are (fewer than planned: the verdicts say how many)
    judged_runs = runs_in(runs, scored_runs(found)) if by_seeds else runs
    judge = ClaimJudge(results_dir=Path(args.results), preset=config["preset"], tables_by_id=tables_by_id,
                       pair_for_task=pairs, benchmarks=speed, runs=judged_runs, planned=runs, rule=rule,
                       scopes=claim_scopes(config, paper, config["tables"], differ, root),
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
                          deviations=differ, synthetic=synthetic,
                          trainings=training_convergence(Path(args.results), trained, rule.converged_within,
                                                         rule.converged_window),
                          run={**run_identity(config, root), **({"partial": partial} if partial else {})},
                          problems=problems, partial=by_seeds)
    if missing:
        shown = f"{partial['text']}; each row is the mean of the runs it has" if by_seeds else "their rows say MISSING"
        print(f"nmt: warning: a partial report: {len(missing)} of its {len(expected)} scores files are missing "
              f"({shown})", file=sys.stderr)
    if problems:
        print(f"nmt: warning: {len(problems)} training{'s' if len(problems) > 1 else ''} with incomplete records "
              f"(listed at the top of the page): {'; '.join(problems)}", file=sys.stderr)
    print(index)


def cmd_compare(args) -> None:
    from ..report.compare import compare, format_comparison
    result = compare(Path(args.run), Path(args.reference), across_presets=args.across_presets)
    print(format_comparison(result, everything=args.all))
    if args.json:
        write_json_atomic(args.json, result)
