"""Soft alignment files: one matrix per sentence pair, rows = target words, columns = source words (attention
weights, as `nmt align extract` writes them and `nmt align score --soft` reads them for SAER).

- ``.npz``: arrays ``arr_0``, ``arr_1``, ... in sentence order, exactly what ``numpy.savez(path, *matrices)``
  writes;
- ``.json``: a list of matrices, each a list of rows of numbers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

import numpy as np

from ..base.atomic import write_atomic
from ..base.errors import InputError
from ..base.files import read_json
from ..data.text import CorpusError


def save_soft(path: str | Path, matrices) -> None:
    """Write the matrices as .npz (arr_0, arr_1, ...), atomically: a temporary file renamed over `path`."""
    arrays = [np.asarray(m, dtype=np.float64) for m in matrices]
    write_atomic(Path(path), lambda fh: np.savez(fh, *arrays))


def load_soft(path: str | Path) -> list:
    """The matrices of a .npz or .json soft alignment file (see the module doc), in sentence order; rows and
    columns as scored (after any --gold-reverse)."""
    path = str(path)
    if path.endswith(".npz"):
        try:
            with np.load(path, allow_pickle=False) as archive:
                arrays = {name: archive[name] for name in archive.files}
        except FileNotFoundError:
            raise CorpusError(path, None, "no such file") from None
        except (OSError, ValueError) as err:
            raise CorpusError(path, None, f"not a readable .npz archive ({err})") from None
        expected = [f"arr_{k}" for k in range(len(arrays))]
        if sorted(arrays) != sorted(expected):
            odd = sorted(set(arrays) - set(expected))[:3]
            raise CorpusError(
                path,
                None,
                f"arrays must be named arr_0 .. arr_{len(arrays) - 1} (as "
                f"numpy.savez(path, *matrices) names them); found {odd}",
            )
        return [arrays[name] for name in expected]
    if path.endswith(".json"):
        # nmt.base.files: strict UTF-8, bad JSON one line naming the file, line and column
        data = read_json(
            path, "soft alignments (a JSON list of matrices, one per sentence pair)", top=list, error=InputError
        )
        matrices = []
        for k, item in enumerate(data, start=1):
            try:
                matrix = np.asarray(item, dtype=np.float64)
            except (TypeError, ValueError):
                raise CorpusError(path, None, f"sentence {k}: not a matrix of numbers (ragged rows?)") from None
            if matrix.size == 0:  # [] or [[]]: a sentence pair without words on one side
                matrix = matrix.reshape(0, 0) if matrix.ndim != 2 else matrix
            matrices.append(matrix)
        return matrices
    raise CorpusError(path, None, "soft alignments must be a .npz or a .json file")


def hard_matrix(links: Iterable[tuple[int, int]], src_len: int, tgt_len: int, *, normalise: bool = False) -> np.ndarray:
    """The [T, S] matrix of (source, target) links: 1 per link, or with `normalise` each target word's links
    sharing its unit of mass (rows sum to 1, like attention; unaligned words stay 0)."""
    matrix = np.zeros((tgt_len, src_len))
    for s, t in links:
        matrix[t, s] = 1.0
    if normalise:
        rows = matrix.sum(axis=1, keepdims=True)
        matrix = np.divide(matrix, rows, out=np.zeros_like(matrix), where=rows > 0)
    return matrix
