"""Run the eflomal word aligner (PyPI) reproducibly.
Details: docs/internals/base.md."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

from .compiled import compile_to, compiler

_SEED_SHIM = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static unsigned long long seed_value;
FILE *fopen(const char *path, const char *mode) {
    static FILE *(*real_fopen)(const char *, const char *) = NULL;
    if (!real_fopen) real_fopen = (FILE *(*)(const char *, const char *))dlsym(RTLD_NEXT, "fopen");
    const char *seed = getenv("NMT_EFLOMAL_SEED");
    if (seed && path && strcmp(path, "/dev/urandom") == 0) {
        seed_value = strtoull(seed, NULL, 10);
        return fmemopen(&seed_value, sizeof seed_value, "rb");
    }
    return real_fopen(path, mode);
}
"""


def build_seed_shim(directory: Path) -> Path | None:
    """Compile the seeding library into `directory`; None where it cannot be built or preloaded."""
    if not sys.platform.startswith("linux"):
        return None
    cc = compiler()
    if not cc:
        return None
    source, library = directory / "seed.c", directory / "seed.so"
    source.write_text(_SEED_SHIM)
    done = compile_to(cc, ["-shared", "-fPIC", "-O2", str(source), "-ldl"], library)
    return library if done.returncode == 0 else None


@contextmanager
def _environment(**values: str):
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


DEFAULT_SAMPLERS = 3  # eflomal's own default
MODEL_LABELS = {  # eflomal's models (-m), as a table names a baseline
    1: "eflomal -m 1 (IBM-1)",
    2: "eflomal -m 2 (IBM-1 + HMM; fast_align analogue)",
    3: "eflomal -m 3 (IBM-1 + HMM + fertility; GIZA++/Berkeley analogue)",
}
DEFAULT_MODEL = 3  # IBM-1 + HMM + fertility: the baseline closest to the papers' GIZA++/Berkeley aligners
DEFAULT_SEED = 1  # `nmt align eflomal --seed`'s default


def samplers_argument(text: str) -> int:
    """argparse type of --samplers (nmt align eflomal, nmt unk dict): a whole number of samplers, at least 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of samplers (a whole number, at least 1)")
    return value


def add_samplers_argument(parser: argparse.ArgumentParser) -> None:
    """--samplers of the commands that run eflomal (nmt align eflomal, nmt unk dict)."""
    parser.add_argument(
        "--samplers",
        type=samplers_argument,
        default=DEFAULT_SAMPLERS,
        help="eflomal's independent samplers, averaged; each costs a full run (default: %(default)s)",
    )


def align(
    src_lines: list[str],
    tgt_lines: list[str],
    workdir: Path,
    *,
    seed: int = 1,
    model: int = DEFAULT_MODEL,
    samplers: int = DEFAULT_SAMPLERS,
) -> tuple[Path, Path, bool]:
    """Forward and reverse Pharaoh link files of eflomal, and whether the run was seeded (reproducible).
    `samplers`: eflomal's independent samplers (its default 3), whose link marginals it averages; each one costs a
    full run."""
    import eflomal  # only the alignment steps need it

    workdir = Path(workdir)
    forward, reverse = workdir / "forward.links", workdir / "reverse.links"
    with tempfile.TemporaryDirectory(prefix="nmt-eflomal-") as tmp:
        shim = build_seed_shim(Path(tmp))
        env = {"OMP_NUM_THREADS": "1"}
        if shim is not None:
            preload = os.environ.get("LD_PRELOAD")
            env.update(NMT_EFLOMAL_SEED=str(seed), LD_PRELOAD=f"{shim}:{preload}" if preload else str(shim))
        with _environment(**env):  # eflomal runs its core as a child process, which inherits this
            aligner = eflomal.Aligner(model=model, n_samplers=samplers)
            aligner.align(
                src_lines, tgt_lines, links_filename_fwd=str(forward), links_filename_rev=str(reverse), quiet=True
            )
    return forward, reverse, shim is not None
