"""Every command that README.md and docs/ show in a bash code block runs, so that the docs cannot drift from the
code: each block is run as one shell script in a finished tiny run (the Snakemake run, or for DVC's commands a copy of
the DVC run), with each command rewritten by the first of RULES that matches it. A command that no rule matches fails
the test: a new kind of command in the docs needs a rule here, saying how it is checked.

How a command is checked, in brief: Snakemake's commands run as they are written with `-n` (a dry run plans the whole
DAG of the preset they name, with its profile, in seconds); a command that does real work runs at the tiny preset; the
installation and test commands are the ones `.ci/run` runs (this test runs inside them); the RWTH commands run on the
gold set in ../shared (licence-bound, so only where it is).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import required

ROOT = Path(__file__).resolve().parents[2]
CI_SCRIPT = ROOT / ".ci" / "run"
BLOCK = re.compile(r"^```([\w-]*)[ \t]*\n(.*?)^```", re.S | re.M)
SHELL_LANGUAGES = {"bash", "sh", "shell", "console"}
# The first word of a line that is a command (an unlabelled block starting with one should be labelled bash).
COMMAND_WORDS = ("nmt", "snakemake", "dvc", "pip", "python", "lint-imports", "sed", "export", "bash", "tensorboard")
RWTH = ROOT.parent / "shared" / "data" / "rwth_de_en_gold_alignment"
TINY = "tiny"


@dataclass
class Command:
    where: str  # file:line
    text: str


@dataclass
class Block:
    where: str
    commands: list[Command] = field(default_factory=list)


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def logical_lines(body: str, first_line: int, name: str) -> list[Command]:
    """The block's commands: continuation lines joined, comments and blank lines dropped."""
    commands, pending, start = [], "", first_line
    for offset, raw in enumerate(body.splitlines()):
        if not pending:
            start = first_line + offset
        line = raw.rstrip()
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        text = strip_comment(pending + line).strip()
        pending = ""
        if text:
            commands.append(Command(f"{name}:{start}", text))
    return commands


def strip_comment(line: str) -> str:
    """The line without a trailing `# ...` comment (a # inside quotes is kept)."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=False)
    lexer.whitespace_split, lexer.commenters = True, "#"
    try:
        words = list(lexer)
    except ValueError:  # unbalanced quotes: not ours to judge here; the shell will
        return line
    if not words:
        return ""
    # Keep the original spelling up to where the comment starts.
    hash_at = [m.start() for m in re.finditer(r"(^|\s)#", line)]
    for at in hash_at:
        try:
            if shlex.split(line[:at]) == words:
                return line[:at]
        except ValueError:
            continue
    return line


def doc_blocks() -> list[Block]:
    blocks = []
    for path in documents():
        text = path.read_text(encoding="utf-8")
        name = str(path.relative_to(ROOT))
        for match in BLOCK.finditer(text):
            language, body = match.group(1).lower(), match.group(2)
            first_line = text.count("\n", 0, match.start(2)) + 1
            if language not in SHELL_LANGUAGES:
                continue
            blocks.append(Block(f"{name}:{first_line}", logical_lines(body, first_line, name)))
    return blocks


def unlabelled_command_blocks() -> list[str]:
    """Blocks without a language whose first line is a command (they would escape this test)."""
    found = []
    for path in documents():
        text = path.read_text(encoding="utf-8")
        for match in BLOCK.finditer(text):
            first = match.group(2).lstrip().split(maxsplit=1)
            if not match.group(1) and first and first[0] in COMMAND_WORDS:
                found.append(f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, match.start(2)) + 1}")
    return found


# -- how each command is checked ----------------------------------------------------------------------------------


def ci_text() -> str:
    return CI_SCRIPT.read_text(encoding="utf-8")


def check_install(command: Command) -> str:
    """`pip install ...`: what .ci/run installs (it runs the same packages, pinned by the lock)."""
    for part in command.text.split("&&"):
        words = shlex.split(part)
        if words[:2] != ["pip", "install"]:
            continue
        for word in words[2:]:
            if not word.startswith("-"):
                assert word in ci_text() or f"'{word}'" in ci_text(), (
                    f"{command.where}: {word} is not what .ci/run installs"
                )
    return ":"


def check_test_command(command: Command) -> str:
    """The test command: .ci/run's last line (this test runs inside it)."""
    last = [line for line in ci_text().splitlines() if line.strip() and not line.startswith("#")][-1]
    assert command.text == last.strip(), f"{command.where}: the test command differs from .ci/run's: {last!r}"
    return ":"


def collect_only(command: Command) -> str:
    """A narrower pytest run (the fast tier): its selection is collected here, in this checkout, not run again."""
    return f"cd {shlex.quote(str(ROOT))} && {command.text} --collect-only -p no:cacheprovider > /dev/null"


def dry_snakemake(command: Command) -> str:
    words = shlex.split(command.text)
    at = next(i for i, w in enumerate(words) if w == "snakemake")
    if not {"-n", "--dry-run", "--dryrun"} & set(words):
        words.insert(at + 1, "-n")
    return shlex.join(words)


def at_tiny(command: Command) -> str:
    """A command that does real work, at the tiny preset (and a file named after its preset likewise)."""
    text = re.sub(r"(--preset[ =])[\w-]+", rf"\g<1>{TINY}", command.text)
    text = re.sub(r"(preset=)[\w-]+", rf"\g<1>{TINY}", text)
    text = re.sub(r"(preset: )[\w-]+", rf"\g<1>{TINY}", text)
    return re.sub(r"throughput-[\w-]+?-(cpu|cuda)\.json", rf"throughput-{TINY}-\1.json", text)


def cheap_bench(command: Command) -> str:
    """`nmt bench train`: at the tiny preset, a few updates per model (the timing is not the point here)."""
    return at_tiny(command) + " --updates 2 --warmup 1"


def compare_with_reference(command: Command) -> str:
    """`nmt compare reports/PRESET REFERENCE`: the tiny run's report against the shipped reference; a run of another
    preset is refused in one line naming both (exit 2), which is what the README promises too."""
    words = shlex.split(command.text)
    words = [re.sub(r"^reports/[\w-]+$", f"reports/{TINY}", w) for w in words]
    words = [str(ROOT / w) if w.startswith("docs/") else w for w in words]
    return (
        f'set +e; out=$({shlex.join(words)} 2>&1); rc=$?; set -e; echo "$out"; '
        f'[ $rc -eq 0 ] || {{ [ $rc -eq 2 ] && [ $(echo "$out" | wc -l) -eq 1 ] && echo "$out" | grep -q preset; }}'
    )


def as_written(command: Command) -> str:
    return command.text


@dataclass
class Rule:
    pattern: str
    rewrite: object
    context: str = "snakemake"  # the finished run it runs in: snakemake, dvc (a copy), rwth (the gold set)

    def matches(self, command: Command) -> bool:
        return re.search(self.pattern, command.text) is not None


RULES = [
    Rule(r"^pip install ", check_install),
    Rule(r"^ruff check && ruff format --check && lint-imports && python -m pytest", check_test_command),
    Rule(r"^python -m pytest -q -m ", collect_only),
    Rule(r"^sed -i 's/\^preset: \.\*/preset: [\w-]+/' params\.yaml && nmt dvc-yaml$", at_tiny, "dvc"),
    Rule(r"^dvc ", as_written, "dvc"),
    Rule(r"^(NMT_\w+=\S+ )*snakemake ", dry_snakemake),
    Rule(r"^export NMT_\w+=\S+$", as_written),
    Rule(r"^nmt bench train ", cheap_bench),
    Rule(r"^nmt estimate ", at_tiny),
    Rule(r"^nmt compare reports/[\w-]+ docs/reproductions/", compare_with_reference),
    Rule(r"^nmt align (eflomal|score) ", as_written, "rwth"),
    Rule(r"^nmt (--version|--help|[\w-]+ --help)$", as_written),
    Rule(r"^nmt config ", at_tiny),
    Rule(r"^tensorboard --logdir ", lambda c: "python -c 'import tensorboard'"),  # a server: checked installed
]


def rule_for(command: Command) -> Rule | None:
    return next((rule for rule in RULES if rule.matches(command)), None)


def test_every_shell_command_in_the_docs_has_a_rule():
    blocks = doc_blocks()
    assert sum(len(b.commands) for b in blocks) >= 15, "the docs' code blocks were not found"
    unmatched = [f"{c.where}: {c.text}" for b in blocks for c in b.commands if rule_for(c) is None]
    assert unmatched == [], (
        "commands in the docs that tests/pipeline/test_docs_commands.py does not know how to check:\n"
        + "\n".join(unmatched)
    )
    assert unlabelled_command_blocks() == [], "label these code blocks ```bash so that their commands are checked"
    for block in blocks:
        contexts = {rule_for(c).context for c in block.commands} - {"snakemake"}
        assert len(contexts) <= 1, f"{block.where}: one block runs in one place, not {sorted(contexts)}"


def test_comment_stripping_keeps_quoted_hashes():
    assert strip_comment("dvc repro   # same stages").strip() == "dvc repro"
    assert strip_comment("sed -i 's/#x/y/' f # edit").strip() == "sed -i 's/#x/y/' f"
    assert strip_comment("# only a comment") == ""


def run_block(block: Block, cwd: Path) -> subprocess.CompletedProcess:
    lines = [rule_for(c).rewrite(c) for c in block.commands]
    script = "set -euo pipefail\n" + "\n".join(lines) + "\n"
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(["bash", "-c", script], cwd=cwd, capture_output=True, text=True, timeout=900, env=env)


@pytest.mark.pipeline("snakemake")
@pytest.mark.pipeline("dvc")
def test_every_shell_command_in_the_docs_runs(tiny_runs, tmp_path):
    snakemake_run = tiny_runs["snakemake"].workdir
    dvc_run = tiny_runs["dvc"].workdir
    failures = []
    for number, block in enumerate(doc_blocks()):
        context = ({rule_for(c).context for c in block.commands} - {"snakemake"} or {"snakemake"}).pop()
        if context == "rwth":
            if not RWTH.is_dir():
                required.unavailable(f"{RWTH} is absent (the RWTH gold alignments, licence-bound)")
            cwd = tmp_path / f"rwth-{number}"
            cwd.mkdir()
            for name in ("de", "en", "alignmentDeEn.talp"):
                (cwd / name).symlink_to(RWTH / name)
        elif context == "dvc":
            cwd = tmp_path / f"dvc-{number}"
            shutil.copytree(dvc_run, cwd, symlinks=True)
        else:
            cwd = snakemake_run
        done = run_block(block, cwd)
        if done.returncode != 0:
            failures.append(
                f"{block.where} (run in {cwd}) exited {done.returncode}:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
            )
    assert failures == [], "\n\n".join(failures)


def leaf_commands(parser, path=()) -> list[tuple[str, ...]]:
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return [leaf for name, sub in action.choices.items() for leaf in leaf_commands(sub, (*path, name))]
    return [path]


def test_every_command_is_in_the_pipeline_docs_command_table():
    from nmt.cli import build_parser

    text = (ROOT / "docs" / "pipeline.md").read_text(encoding="utf-8")
    first_cells = [line.split("|")[1] for line in text.splitlines() if line.startswith("| `nmt ")]
    missing = []
    for words in leaf_commands(build_parser()):
        group, *rest = words
        rows = [cell for cell in first_cells if f"`nmt {group}" in cell]
        if not any(not rest or f"nmt {group} {rest[0]}" in cell or f"`{rest[0]}`" in cell for cell in rows):
            missing.append("nmt " + " ".join(words))
    assert missing == [], f"docs/pipeline.md's command table lacks {missing}"
