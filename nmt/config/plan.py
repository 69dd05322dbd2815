"""The plan: what the preset's table and figure files ask the workflow to make, read by both engines (the
Snakefile's rules and the generated DVC stages), the report and the estimates, so that neither keeps a list.
Details: docs/internals/config.md."""

from __future__ import annotations

from pathlib import Path

from ..base import layout
from ..base.errors import ConfigError
from ..data.tasks import corpus_for_task, data_task
from .claim_files import load_claims
from .figure_files import figure_systems
from .resolve import SEED_RUN, load_figures, load_table, seed_run, seed_runs, system_config
from .task_inputs import task_splits


def _table(config: dict, root: str | Path, table_path: str) -> dict:
    """A table file as this preset plays it: its task (and reverse task) named by the task whose corpus and results
    play it (data.tasks.{task}.same_as), so that what the plan collects is keyed by the directories it lives in."""
    table = load_table(Path(root) / table_path)
    played = {**table, "task": data_task(config, table["task"])}
    if table["alignment"] and table["alignment"]["reverse_task"]:
        played["alignment"] = {
            **table["alignment"],
            "reverse_task": data_task(config, table["alignment"]["reverse_task"]),
        }
    return played


def collect_systems(config: dict, root: str | Path = ".") -> dict[str, dict[str, str]]:
    """{task: {system: table path}} over the preset's tables: what the workflow trains.

    A system id may appear in several tables (the paper reuses systems across tables) only with the same
    overrides; a conflicting second definition is an error.
    """
    found: dict[str, dict[str, str]] = {}
    definitions: dict[tuple[str, str], tuple[str, dict]] = {}
    unavailable = unavailable_tables(config, root)
    needed = _needed_tables(config, root, unavailable)
    for table_path in config["tables"]:
        if table_path in unavailable and table_path not in needed:
            continue  # an alignment table without gold links here: nothing would use its models
        table = _table(config, root, table_path)
        pair = table["task"]
        corpus_for_task(config, pair)  # fail early when the preset has no corpus for it
        # An alignment table that merges both translation directions trains its systems for both tasks (one that
        # cannot be scored here but whose systems another table needs: its own task only).
        reverse = (table["alignment"] or {}).get("reverse_task") if table_path not in unavailable else None
        tasks = [pair] + ([reverse] if reverse else [])
        for task in tasks[1:]:
            corpus_for_task(config, task)
        for task in tasks:
            for system, overrides in table["systems"].items():
                key = (task, system)
                if key in definitions and definitions[key][1] != overrides:
                    raise ConfigError(
                        f"{table_path}: system {system!r} is also defined differently in {definitions[key][0]}"
                    )
                definitions.setdefault(key, (table_path, overrides))
                found.setdefault(task, {})[system] = definitions[key][0]
    for by_system in found.values():  # each system's runs with its other seeds, trained like it
        for system, table_path in list(by_system.items()):
            resolved = system_config(config, _table(config, root, table_path), system, table_path)
            for run in seed_runs(resolved, system)[1:]:
                by_system[run] = table_path
    return found


def _needed_tables(config: dict, root: str | Path, unavailable: dict[str, str]) -> set[str]:
    """The table files that another table of the preset, one that can be measured here, `needs` for its systems:
    their systems are trained even where their own rows cannot be measured (Peter et al.'s guided-BLEU follow-up
    needs Table 1's TF + guided alignment system, not the RWTH gold set)."""
    tables = {table_path: load_table(Path(root) / table_path) for table_path in config["tables"]}
    by_id = {table["id"]: table_path for table_path, table in tables.items()}
    return {
        by_id[table["needs"]]
        for table_path, table in tables.items()
        if table["needs"] in by_id and table_path not in unavailable
    }


def runs_of(known: dict, name: str) -> list[str]:
    """[name, name_seedB, ...]: ``name`` and its seed runs among ``known`` (one task's systems or ensembles)."""
    return [name] + sorted(
        (run for run in known if (m := SEED_RUN.match(run)) and m["system"] == name),
        key=lambda run: int(SEED_RUN.match(run)["seed"]),
    )


def collect_runs(config: dict, root: str | Path = ".") -> dict[str, dict[str, list[str]]]:
    """{task: {name: [name, name_seedB, ...]}} for every trained system, ensemble, decoding and statistical aligner
    of an alignment table that has seed runs (train.seeds): the runs whose scores a table row averages and a claim's
    interval resamples (run N of every system, ensemble and aligner made with seed N)."""
    systems, ensembles = collect_systems(config, root), collect_ensembles(config, root)
    aligners: dict[str, dict[str, None]] = {}
    for entry in collect_alignments(config, root):
        if entry["kind"] == "aligner":
            aligners.setdefault(entry["task"], {})[entry["name"]] = None
    out: dict[str, dict[str, list[str]]] = {}
    for task in dict.fromkeys([*systems, *aligners]):
        known = {**systems.get(task, {}), **ensembles.get(task, {}), **aligners.get(task, {})}
        for name in known:
            if SEED_RUN.match(name) and SEED_RUN.match(name)["system"] in known:
                continue
            runs = runs_of(known, name)
            if len(runs) > 1:
                out.setdefault(task, {})[name] = runs
    return out


def collect_ensembles(config: dict, root: str | Path = ".") -> dict[str, dict[str, dict]]:
    """{task: {ensemble: {"members": [...], "combine": ...}}} over the preset's tables: what the
    workflow decodes as ensembles of trained systems (they train nothing themselves), and tables' decodings of one
    system (``decode``: how).

    Every member must be a system that some table of the preset trains for the same task; an ensemble id
    used by several tables must mean the same ensemble everywhere. Where the members were trained with several
    seeds (train.seeds), an ensemble (or decoding) is there once per seed: NAME with the members themselves (the
    first seed's runs) and NAME_seedN with each member's run of seed N (MEMBER_seedN), for every seed N that all
    its members have; collect_runs gives it those runs, as it gives a system its seed runs.
    """
    systems = collect_systems(config, root)
    found: dict[str, dict[str, dict]] = {}
    defined_in: dict[tuple[str, str], str] = {}
    for table_path in config["tables"]:
        table = _table(config, root, table_path)
        task = table["task"]
        for name, spec in table["ensembles"].items():
            if name in systems.get(task, {}):
                raise ConfigError(
                    f"{table_path}: {name!r} is an ensemble here and a trained system in {systems[task][name]}"
                )
            missing = [m for m in spec["members"] if m not in systems.get(task, {})]
            if missing:
                kind = "decodings" if spec.get("decode") else "ensembles"
                raise ConfigError(
                    f"{table_path}: {kind}.{name}: member(s) {', '.join(map(repr, missing))} "
                    f"are not trained by any table of preset {config['preset']!r} for task {task}"
                )
            previous = found.get(task, {}).get(name)
            if previous is not None and previous != spec:
                raise ConfigError(
                    f"{table_path}: ensemble {name!r} is also defined differently in {defined_in[(task, name)]}"
                )
            defined_in.setdefault((task, name), table_path)
            found.setdefault(task, {})[name] = spec
            # with each seed that all its members were trained with: the same ensemble (or decoding) of that seed's
            # runs, NAME_seedN, so that it has runs like a system, run N made of the systems' seed-N runs
            for seed in _seeds_of_all(systems.get(task, {}), spec["members"]):
                found[task][seed_run(name, seed)] = {**spec, "members": [seed_run(m, seed) for m in spec["members"]]}
    return found


def _seeds_of_all(known: dict, members: list[str]) -> list[int]:
    """The seeds after the first that every one of ``members`` has a seed run with among ``known`` (one task's
    systems), in the first member's order."""
    seeds = [[int(SEED_RUN.match(run)["seed"]) for run in runs_of(known, member)[1:]] for member in members]
    return [seed for seed in seeds[0] if all(seed in other for other in seeds[1:])] if seeds else []


def collect_figures(config: dict, root: str | Path = ".") -> list[tuple[str, dict]]:
    """[(task, figure)] over the preset's figure files, every system a figure reads checked to be trained or
    ensembled by the preset's tables for that task (an attention-map figure may also draw an aligner of an
    alignment table on its split), and a learning-curve figure's table to be one of them."""
    systems = collect_systems(config, root)
    ensembles = collect_ensembles(config, root)
    table_ids = {load_table(Path(root) / t)["id"] for t in config["tables"]}
    aligners = statistical_aligners(config, root)
    out = []
    for path in config.get("figures") or []:
        figures = load_figures(Path(root) / path)
        task = data_task(config, figures["task"])
        known = {*systems.get(task, {}), *ensembles.get(task, {})}
        for fig in figures["figures"]:
            fig = {**fig, "paper": figures["paper"]}
            if fig["kind"] == "attention_maps" and fig["split"] not in task_splits(config, task):
                # e.g. no gold-aligned sentences in this preset (whose alignment tables then train nothing)
                out.append(
                    (
                        task,
                        {
                            **fig,
                            "unavailable": f"the {task} corpus of preset {config['preset']!r} has no "
                            f"{fig['split']!r} split",
                        },
                    )
                )
                continue
            drawable = known | (
                {name for t, name, split in aligners if t == task and split == fig["split"]}
                if fig["kind"] == "attention_maps"
                else set()
            )
            unknown = [s for s in figure_systems(fig) if s not in drawable]
            if unknown:
                also = " (nor an aligner of an alignment table on its split)" if fig["kind"] == "attention_maps" else ""
                raise ConfigError(
                    f"{path}: figure {fig['id']}: {', '.join(map(repr, unknown))} not trained or "
                    f"ensembled by any table of preset {config['preset']!r} for task {task}{also}"
                )
            if fig["kind"] == "learning_curves" and fig["table"] not in table_ids:
                raise ConfigError(
                    f"{path}: figure {fig['id']}: table {fig['table']!r} is not one of the preset's "
                    f"tables ({', '.join(sorted(table_ids))})"
                )
            out.append((task, fig))
    return out


def collect_evaluations(config: dict, root: str | Path = ".") -> list[tuple[str, str, str]]:
    """[(task, system or ensemble, testset)]: every translation the preset's tables and figures show, each
    once, in a stable order. Ensemble members are decoded only inside their ensembles unless shown alone."""
    wanted: dict[tuple[str, str, str], None] = {}
    unavailable = unavailable_tables(config, root)
    systems, ensembles = collect_systems(config, root), collect_ensembles(config, root)
    for table_path in config["tables"]:
        table = _table(config, root, table_path)
        if table["alignment"] or table_path in unavailable:  # alignments: collect_alignments
            continue
        task = table["task"]
        known = {**systems.get(task, {}), **ensembles.get(task, {})}
        for row in table["rows"]:
            if row["system"] is not None:
                for run in runs_of(known, row["system"]):
                    wanted[(task, run, table["testset"])] = None
    for task, fig in collect_figures(config, root):
        if "testset" in fig:
            for system in figure_systems(fig):
                wanted[(task, system, fig["testset"])] = None
    return list(wanted)


def learning_curve_tables(config: dict, root: str | Path = ".") -> list[str]:
    """The ids of the tables whose report draws learning curves: those with a system of their own that the preset
    trains (its training records the curve)."""
    trained = collect_systems(config, root)
    tables = (_table(config, root, table_path) for table_path in config["tables"])
    return [table["id"] for table in tables if set(table["systems"] or {}) & set(trained.get(table["task"], {}))]


def collect_training_alignments(config: dict, root: str | Path = ".") -> dict[tuple[str, str], dict]:
    """{(task, aligner): settings}: the statistical alignments of a task's prepared training pairs that guided
    alignment training asks for (train.guided_alignment.from names an aligner of the system's table)."""
    wanted: dict[tuple[str, str], dict] = {}
    for task, by_system in collect_systems(config, root).items():
        for system, table_path in by_system.items():
            table = _table(config, root, table_path)
            guided = system_config(config, table, system, table_path)["train"].get("guided_alignment") or {}
            name = guided.get("from")
            if not guided.get("weight") or not name or isinstance(name, dict):  # dict: a system's, see below
                continue
            aligners = task_aligners(config, root, task)
            if name not in aligners:
                raise ConfigError(
                    f"{table_path}: system {system}: train.guided_alignment.from {name!r} is not an "
                    f"aligner of any {task} table of preset {config['preset']!r} "
                    f"(alignment.aligners: {', '.join(aligners) or 'none'})"
                )
            wanted[(task, name)] = aligners[name]
    return wanted


def task_aligners(config: dict, root: str | Path, task: str) -> dict[str, dict]:
    """{aligner id: settings} over the alignment tables of the preset for `task` (or whose reverse_task it is); one
    id, one meaning."""
    found: dict[str, dict] = {}
    for table_path in config["tables"]:
        table = _table(config, root, table_path)
        # a table that trains its systems for the reverse task too guides them there by its own aligners
        if not table["alignment"] or task not in (table["task"], table["alignment"]["reverse_task"]):
            continue
        for name, settings in table["alignment"]["aligners"].items():
            if found.setdefault(name, settings) != settings:
                raise ConfigError(f"{table_path}: aligner {name!r} is also defined differently by another {task} table")
    return found


def collect_training_model_alignments(config: dict, root: str | Path = ".") -> set[tuple[str, str]]:
    """{(task, system)}: trained systems whose forced-decoding links of the task's training pairs guide another
    system's training (train.guided_alignment.from {system: NAME}; Peter et al.'s follow-up experiment)."""
    systems = collect_systems(config, root)
    wanted: set[tuple[str, str]] = set()
    for task, by_system in systems.items():
        for system, table_path in by_system.items():
            table = _table(config, root, table_path)
            guided = system_config(config, table, system, table_path)["train"].get("guided_alignment") or {}
            source = guided.get("from")
            if guided.get("weight") and isinstance(source, dict):
                if source["system"] not in by_system:
                    raise ConfigError(
                        f"{table_path}: system {system}: train.guided_alignment.from "
                        f"{{system: {source['system']}}} is not trained for task {task}"
                    )
                wanted.add((task, source["system"]))
    return wanted


def unavailable_tables(config: dict, root: str | Path = ".") -> dict[str, str]:
    """{table file: why its rows cannot be measured in this preset}: alignment tables whose task corpus (or
    reverse task corpus) has no split with gold alignments, e.g. Multi30k, or the RWTH set before its licence
    is accepted. Their rows are reported as not run, with this reason; nothing is scheduled for them."""
    out = {}
    tables = {table_path: _table(config, root, table_path) for table_path in config["tables"]}
    for table_path, table in tables.items():
        spec = table["alignment"]
        if not spec:
            continue
        for task in [table["task"]] + ([spec["reverse_task"]] if spec["reverse_task"] else []):
            if table["testset"] not in task_splits(config, task):
                source = (corpus_for_task(config, task).get("splits") or {}).get(table["testset"])
                if source is not None:  # configured, but licence-gated and not accepted
                    out[table_path] = (
                        f"gold alignments: the {source['corpus']} licence (accept it on the corpus' "
                        f"page, then set data.accept_rwth_licence: true, or put your copy in the mirror)"
                    )
                else:
                    out[table_path] = (
                        f"gold alignments (the {task} corpus of preset {config['preset']!r} has no "
                        f"{table['testset']!r} split)"
                    )
                break
    by_id = {table["id"]: table_path for table_path, table in tables.items()}
    for table_path, table in tables.items():
        needed = table["needs"]
        if needed is None:
            continue
        if needed not in by_id:
            raise ConfigError(
                f"{table_path}: needs table {needed!r}, which is not one of preset {config['preset']!r}'s tables"
            )
    return out


def collect_alignments(config: dict, root: str | Path = ".") -> list[dict]:
    """Every alignment the preset's alignment tables score, each once, in a stable order:
    {task, name, split, kind, ...} with kind
      model     a trained system or an ensemble of the task, force-decoded on the split (nmt align extract);
                with ``reverse_task`` the same-named model of that task aligns the swapped split too and the two
                directions are merged with ``symmetrize``;
      aligner   a statistical baseline (``aligner``: its settings), trained on the task's training data plus
                the split's sentences, with ``seed`` (its sampler's).
    Every run is there: a model's seed runs (a trained system's, an ensemble's: collect_ensembles) and an aligner's
    run per seed of the preset (aligner_runs), each under its own name. A table's split must exist in its task's
    corpus, and a used system must be trained or ensembled by the preset's tables for that task."""
    systems = collect_systems(config, root)
    ensembles = collect_ensembles(config, root)
    wanted: dict[tuple[str, str, str], dict] = {}
    for table_path in config["tables"]:
        table = _table(config, root, table_path)
        spec = table["alignment"]
        if not spec:
            continue
        if table_path in unavailable_tables(config, root):
            continue  # shown as "not run" with the reason (no gold alignments in this preset)
        task, split = table["task"], table["testset"]
        known = {*systems.get(task, {}), *ensembles.get(task, {})}
        for row in table["rows"]:
            name = row["system"]
            if name is None:
                continue
            if name in spec["aligners"]:
                entry = {
                    "task": task,
                    "name": name,
                    "split": split,
                    "kind": "aligner",
                    "aligner": spec["aligners"][name],
                }
            else:
                if name not in known:
                    raise ConfigError(
                        f"{table_path}: {name!r} is not trained or ensembled by any table of preset "
                        f"{config['preset']!r} for task {task}"
                    )
                entry = {
                    "task": task,
                    "name": name,
                    "split": split,
                    "kind": "model",
                    "reverse_task": spec["reverse_task"],
                    "symmetrize": spec["symmetrize"],
                }
                if spec["reverse_task"] and name not in {
                    *systems.get(spec["reverse_task"], {}),
                    *ensembles.get(spec["reverse_task"], {}),
                }:
                    raise ConfigError(
                        f"{table_path}: {name!r} is not trained for the reverse task {spec['reverse_task']}"
                    )
            if entry["kind"] == "model":  # a trained system's (or an ensemble's) seed runs align too
                runs = {run: {} for run in runs_of({**systems.get(task, {}), **ensembles.get(task, {})}, name)}
                reverse = spec["reverse_task"]
                unknown = [
                    run
                    for run in runs
                    if reverse and run not in {*systems.get(reverse, {}), *ensembles.get(reverse, {})}
                ]
                if unknown:
                    raise ConfigError(
                        f"{table_path}: {unknown[0]!r} (a seed run of {name!r}) is not trained for the "
                        f"reverse task {reverse}"
                    )
            else:  # a statistical aligner is a sampler: run once per seed of the preset, as a system is trained
                runs = {run: {"seed": seed} for run, seed in aligner_runs(config, name)}
            for run, more in runs.items():
                key = (task, run, split)
                run_entry = {**entry, "name": run, **more}
                if key in wanted and wanted[key] != run_entry:
                    raise ConfigError(f"{table_path}: {name!r} is aligned differently by another table of task {task}")
                wanted[key] = run_entry
    return list(wanted.values())


def aligner_runs(config: dict, name: str) -> list[tuple[str, int]]:
    """[(run, seed)]: the runs of a statistical aligner of an alignment table, one per seed of the preset
    (preset_seeds): the aligner itself with the first seed, ALIGNER_seedN with seed N (nmt align eflomal --seed)."""
    seeds = preset_seeds(config)
    return [(name, seeds[0])] + [(seed_run(name, seed), seed) for seed in seeds[1:]]


def statistical_aligners(config: dict, root: str | Path = ".") -> dict[tuple[str, str, str], dict]:
    """{(task, aligner, split): settings}: the statistical aligners whose links of a split the preset's alignment
    tables produce (an attention-map figure may draw them beside the models)."""
    return {
        (a["task"], a["name"], a["split"]): a["aligner"]
        for a in collect_alignments(config, root)
        if a["kind"] == "aligner"
    }


def collect_attention_maps(config: dict, root: str | Path = ".") -> dict[tuple[str, str, str], list[int]]:
    """{(task, system, split): [min, max] source length of the sentence}: the matrices the preset's figures draw
    (the first figure that asks for one decides its sentence): a trained system's or an ensemble's attention when
    the reference is forced through it, or a statistical aligner's links (statistical_aligners)."""
    wanted: dict[tuple[str, str, str], list[int]] = {}
    for task, fig in collect_figures(config, root):
        if fig["kind"] == "attention_maps" and not fig.get("unavailable"):
            for system in figure_systems(fig):
                wanted.setdefault((task, system, fig["split"]), fig["length"])
    return wanted


def model_files(ensembles: dict[str, dict], name: str, models_dir: str | Path) -> tuple[list[Path], str | None]:
    """The model files that decode ``name``: its members' model.pt and their combination when ``ensembles`` (one
    task's, from collect_ensembles) defines it, else its own model.pt and None. A table's decoding of one system
    (``decodings:``) gives that system's model.pt and None."""

    def model(system: str) -> Path:
        return layout.under(models_dir, layout.MODELS, layout.MODEL, system=system)

    ensemble = ensembles.get(name)
    if ensemble:
        return [model(m) for m in ensemble["members"]], ensemble["combine"]
    return [model(name)], None


def decode_options(ensembles: dict[str, dict], name: str) -> dict:
    """How ``name`` is decoded when a table's ``decodings:`` defines it ({beam, monotonic}); {} otherwise."""
    return dict((ensembles.get(name) or {}).get("decode") or {})


def is_ensemble(ensembles: dict[str, dict], name: str) -> bool:
    """True when ``name`` combines several trained systems (not a decoding of one): it has no perplexity."""
    return name in ensembles and len(ensembles[name]["members"]) > 1


def decoding_models(
    config: dict, root: str | Path, task: str, name: str, models_dir: str | Path
) -> tuple[list[Path], str | None]:
    """model_files of ``name`` for ``task``, which the preset's tables must train or ensemble; else a
    ConfigError."""
    ensembles = collect_ensembles(config, root).get(task, {})
    if name in ensembles or name in collect_systems(config, root).get(task, {}):
        return model_files(ensembles, name, models_dir)
    raise ConfigError(f"preset {config['preset']!r}: no table trains or ensembles a system {name!r} for task {task}")


def collect_claims(config: dict, root: str | Path = ".") -> list[dict]:
    """Every claim of the preset's claims files (params.yaml `claims:`), in file order, each checked against the
    rows of its table (nmt.config.claim_files), so that a claim naming an unknown system stops the workflow when it is
    planned, not at its report; claim ids are unique across the files. A claim on a table file beside the preset's
    that the preset does not list is kept, as not run."""
    tables = {}
    for table_path in config["tables"]:
        table = load_table(Path(root) / table_path)
        tables[table["id"]] = table
    # the other table files beside the preset's: a claim on one of them is not run here (not an unknown table)
    beside = {path for table_path in config["tables"] for path in (Path(root) / table_path).parent.glob("*.yaml")}
    others = {load_table(path)["id"] for path in beside} - set(tables)
    claims, seen = [], {}
    for path in config.get("claims") or []:
        try:
            parsed = load_claims(Path(root) / path, tables, others)
        except ValueError as err:
            raise ConfigError(str(err)) from None
        for claim in parsed["claims"]:
            if claim["id"] in seen:
                raise ConfigError(f"{path}: claim id {claim['id']!r} is also used in {seen[claim['id']]}")
            seen[claim["id"]] = path
            claims.append(claim)
    return claims


def preset_seeds(config: dict) -> list[int]:
    """The seeds the preset trains every system with: train.seeds, or the one train.seed."""
    return list(config["train"].get("seeds") or [config["train"]["seed"]])


def seed_of(run: str, seeds: list[int]) -> int:
    """The seed a run was made with: N for NAME_seedN, else the preset's first seed (the system itself)."""
    match = SEED_RUN.match(run)
    return int(match["seed"]) if match else seeds[0]


def seed_part(config: dict, root: str | Path, seed: int) -> list[str]:
    """Every file of the run that belongs to one seed (a whole part of a run made piece by piece: one seed on one
    machine, the next later): the trainings' model info and metrics, and the translations, attention maps and
    scores of the runs with that seed. Every run is its seed's: a system's, an ensemble's or a decoding's run
    NAME_seedN (collect_ensembles: of the members' seed-N runs) and a statistical aligner's ALIGNER_seedN
    (aligner_runs) belong to seed N, and NAME itself to the preset's first seed, as does whatever has one run only
    (an ensemble whose members lack seed runs). The statistical alignments of the training data that trainings
    read (guided alignment's links, the unk dictionary's) are one run, an input that every part makes alike and none
    holds. What is left is the report, made from every part."""
    seeds = preset_seeds(config)
    if seed not in seeds:
        raise ConfigError(
            f"preset {config['preset']!r}: seed {seed} is not one of train.seeds ({', '.join(map(str, seeds))})"
        )
    preset = config["preset"]
    systems = collect_systems(config, root)
    seed_runs_of = {
        (task, run): int(SEED_RUN.match(run)["seed"])
        for task, by_name in collect_runs(config, root).items()
        for runs in by_name.values()
        for run in runs[1:]
    }

    def of_seed(task: str, name: str) -> bool:
        return seed_runs_of.get((task, name), seeds[0]) == seed

    files: dict[str, None] = {}
    for task, names in systems.items():
        for name in names:
            if of_seed(task, name):
                for template in (layout.MODEL_INFO, layout.METRICS):
                    files[layout.path(template, preset=preset, pair=task, system=name)] = None
    for task, name, testset in collect_evaluations(config, root):
        if of_seed(task, name):
            for template in (layout.TRANSLATION, layout.UNK_TRANSLATION, layout.SCORES):
                files[layout.path(template, preset=preset, pair=task, system=name, testset=testset)] = None
    for task, name, split in collect_attention_maps(config, root):
        if of_seed(task, name):
            files[layout.path(layout.ATTENTION, preset=preset, pair=task, system=name, split=split)] = None
    for alignment in collect_alignments(config, root):
        if of_seed(alignment["task"], alignment["name"]):
            files[
                layout.path(
                    layout.SCORES,
                    preset=preset,
                    pair=alignment["task"],
                    system=alignment["name"],
                    testset=alignment["split"],
                )
            ] = None
    return list(files)
