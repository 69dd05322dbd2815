"""Every `nmt.x.y` name and every repository path that the prose mentions (nmt's comments and docstrings, the
Snakemake files, params.yaml, README.md, docs/*.md) names something that exists, so that a rename or a move cannot
leave a stale pointer behind. A path with a placeholder ({preset}, STEP) or a glob must match at least one file."""

import ast
import importlib
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROSE_FILES = ("workflow/**/*.smk", "Snakefile", "params.yaml", "README.md", "docs/*.md", "docs/internals/*.md")
NAME = re.compile(r"(?<![\w./-])nmt(?:\.[A-Za-z_]\w*)+")
PATH = re.compile(
    r"(?<![\w./-])(?:docs|tests|workflow|benchmarks|nmt|requirements|profiles)/"
    r"(?:\{[^}\s]*\}|[\w./*?-])*"
)
PLACEHOLDER = re.compile(r"\{[^}]*\}|(?<![A-Za-z])[A-Z][A-Z0-9_]+(?![a-z])")  # {preset}, PRESET, STEP


def python_prose(path: Path) -> list[str]:
    """A module's comments and docstrings."""
    text = path.read_text(encoding="utf-8")
    prose = [
        token.string for token in tokenize.generate_tokens(io.StringIO(text).readline) if token.type == tokenize.COMMENT
    ]
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            docstring = ast.get_docstring(node, clean=False)
            if docstring:
                prose.append(docstring)
    return prose


def prose() -> dict[str, list[str]]:
    """{file: its prose} of every file whose mentions are checked."""
    texts = {str(path.relative_to(ROOT)): python_prose(path) for path in sorted(ROOT.glob("nmt/**/*.py"))}
    for pattern in PROSE_FILES:
        for path in sorted(ROOT.glob(pattern)):
            texts[str(path.relative_to(ROOT))] = [path.read_text(encoding="utf-8")]
    return texts


def name_exists(name: str) -> bool:
    """A module, or an attribute (of an attribute ...) of the longest module the name starts with."""
    parts = name.split(".")
    for split in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:split]))
        except ModuleNotFoundError as error:
            if error.name and not name.startswith(error.name):  # a module that exists failed to import: say so
                raise
            continue
        for attribute in parts[split:]:
            if not hasattr(found, attribute):
                return False
            found = getattr(found, attribute)
        return True
    return False


def path_exists(path: str) -> bool:
    path = path.rstrip(".,:;")
    if (ROOT / path).exists():
        return True
    pattern = PLACEHOLDER.sub("*", path).rstrip("/")
    return any(char in pattern for char in "*?") and any(ROOT.glob(pattern))


def mentions(pattern: re.Pattern) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for file, texts in prose().items():
        for text in texts:
            for match in pattern.finditer(text):
                found.setdefault(match.group(), set()).add(file)
    return found


def test_every_nmt_name_mentioned_exists():
    missing = {name: sorted(files) for name, files in mentions(NAME).items() if not name_exists(name)}
    assert not missing, f"names that do not exist (name: the files that mention it): {missing}"


def test_every_repository_path_mentioned_exists():
    missing = {path: sorted(files) for path, files in mentions(PATH).items() if not path_exists(path)}
    assert not missing, f"paths that do not exist (path: the files that mention it): {missing}"


def test_the_checks_see_a_stale_name_and_path():
    assert name_exists("nmt.base.declare.setting") and name_exists("nmt.settings")
    assert not name_exists("nmt.schedule") and not name_exists("nmt.base.declare.describe")
    assert path_exists("docs/contributing.md") and path_exists("workflow/presets/{preset}.yaml")
    assert path_exists("workflow/dvc/STEP/dvc.yaml")
    assert not path_exists("docs/quickstart.md") and not path_exists("workflow/presets/{preset}.json")
