"""The source files an `nmt` command runs: what a DVC stage that calls it must depend on, so that a code change
reruns every stage it can change (a missing one is a silent reproducibility bug).
Details: docs/internals/cli.md."""

from __future__ import annotations

import argparse
import ast
import inspect
import re
import sys
from functools import lru_cache
from importlib import import_module
from pathlib import Path

import grimp

from .options import resolve

ENTRY = ("nmt.cli", "nmt.cli.parser")  # what every `nmt` command loads before its handler's module

PACKAGE_ROOT = Path(__file__).resolve().parents[1]  # .../nmt
# Files a module reads besides its own source (tests/pipeline/test_dvc_pipeline.py checks that every such file of
# the package is named here).
READS = {
    "nmt.config.figure_files": ["nmt/config/schemas/figures.schema.yaml"],
    "nmt.config.table_files": ["nmt/config/schemas/tables.schema.yaml"],
    "nmt.config.claim_files": ["nmt/config/schemas/claims.schema.yaml"],
    "nmt.data.corpus_registry": ["nmt/data/corpora.yaml"],
    "nmt.data.fetch": ["nmt/data/checksums.tsv"],
    "nmt.engine.native": ["nmt/engine/native/kernels.c"],
    "nmt.report.render": ["nmt/report/templates/index.html.j2", "nmt/config/schemas/model.schema.yaml"],
    # the formats of the files the report, the export and the estimate read (nmt.config.schema.validator)
    "nmt.report.plots": ["nmt/config/schemas/metrics.schema.yaml"],
    "nmt.report.speed": ["nmt/config/schemas/benchmark.schema.yaml"],
    "nmt.report.tables": ["nmt/config/schemas/scores.schema.yaml"],
    "nmt.report.claims": ["nmt/config/schemas/model.schema.yaml", "nmt/config/schemas/benchmark.schema.yaml"],
    "nmt.report.cost": ["nmt/config/schemas/model.schema.yaml"],
    "nmt.report.figures": ["nmt/config/schemas/attention.schema.yaml"],
    "nmt.report.context": ["nmt/config/schemas/data-stats.schema.yaml", "nmt/config/schemas/model.schema.yaml"],
    "nmt.pipeline.export": ["nmt/config/schemas/scores.schema.yaml", "nmt/config/schemas/model.schema.yaml"],
    "nmt.bench.estimate": ["nmt/config/schemas/data-stats.schema.yaml", "nmt/config/schemas/throughput.schema.yaml"],
}


@lru_cache(maxsize=1)
def _graph() -> grimp.ImportGraph:
    return grimp.build_graph("nmt", cache_dir=None)


def _absolute(package: str, dots: int, name: str | None) -> str:
    base = package.rsplit(".", dots - 1)[0] if dots > 1 else package
    return f"{base}.{name}" if name else base


def imported_at_load(module) -> set[str]:
    """The nmt modules a module imports at its top level (the graph also has those imported in functions)."""
    package = module.__package__  # what its relative imports start from (a package's __init__: the package)
    found = set()
    for node in ast.parse(inspect.getsource(module)).body:
        if isinstance(node, ast.ImportFrom) and node.level:
            target = _absolute(package, node.level, node.module)
            for alias in node.names:  # `from . import align` imports a module, `from .x import y` a name of x
                found.add(f"{target}.{alias.name}" if f"{target}.{alias.name}" in _graph().modules else target)
    return found


def imported_at_run_time(function) -> set[str]:
    """The nmt modules a command handler imports in its body (`from ..x import y` inside nmt.cli)."""
    package = function.__module__.rsplit(".", 1)[0]
    return {
        _absolute(package, len(dots), name or None)
        for dots, name in re.findall(r"^\s+from (\.+)([\w.]*) import", inspect.getsource(function), re.M)
    }


def handler(parser: argparse.ArgumentParser, words: list[str]):
    """The function `nmt WORDS...` runs (WORDS: the command, e.g. ["align", "extract"], before its options)."""
    for word in words:
        parser = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[word]
    return resolve(parser.get_default("func"))


def cli_modules(function) -> list:
    """The modules of nmt.cli that running ``function``'s command loads: the entry's and the handler's module, with
    the nmt.cli modules they import at their top, at any depth."""
    found, todo = {}, [*ENTRY, function.__module__]
    while todo:
        name = todo.pop()
        if name not in found:
            found[name] = sys.modules.get(name) or import_module(name)
            todo += [m for m in imported_at_load(found[name]) if m.startswith("nmt.cli.") or m == "nmt.cli"]
    return list(found.values())


def module_file(module: str) -> str:
    path = PACKAGE_ROOT.parent / Path(*module.split("."))
    return (
        (path / "__init__.py" if path.is_dir() else path.with_suffix(".py")).relative_to(PACKAGE_ROOT.parent).as_posix()
    )


def command_files(function) -> list[str]:
    """Every source and data file of nmt that the command handled by ``function`` runs or reads, outside the
    command line (the modules of nmt.cli), sorted."""
    graph = _graph()
    modules = set().union(*map(imported_at_load, cli_modules(function))) | imported_at_run_time(function)
    # the command line's own modules are left out with what they import only in other commands' handlers
    modules = {m for m in modules if m in graph.modules and m.split(".")[:2] != ["nmt", "cli"]}
    for module in list(modules):
        modules |= graph.find_upstream_modules(module)
    # importing nmt.data.text runs nmt/__init__.py and nmt/data/__init__.py first
    modules |= {module.rsplit(".", depth)[0] for module in modules for depth in range(1, module.count(".") + 1)}
    # none of them is the command line's: nothing below it imports it (the layers contract in .importlinter)
    files = {module_file(module) for module in modules}
    files.update(f for module in modules for f in READS.get(module, []))
    return sorted(files)


def package_files() -> set[str]:
    """Every file of the package a command can run or read: its modules and the files in READS."""
    return {module_file(m) for m in _graph().modules} | {f for files in READS.values() for f in files}


def as_dependencies(files: list[str]) -> list[str]:
    """``files`` with each directory whose every package file is among them named once instead: DVC hashes a
    directory as one dependency, and nmt/models is shorter to read than its 19 modules."""
    every = package_files()
    chosen = set(files)
    directories = sorted({str(Path(f).parent) for f in files}, key=lambda d: d.count("/"))
    for directory in directories:
        inside = {f for f in every if f.startswith(directory + "/")}
        if directory != "nmt" and inside and inside <= chosen:
            chosen = (chosen - inside) | {directory}
    # a directory kept above another already covers it
    return sorted(d for d in chosen if not any(d.startswith(o + "/") for o in chosen if o != d))
