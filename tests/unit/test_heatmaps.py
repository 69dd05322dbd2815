"""Attention heat maps: a PNG, the same bytes for the same inputs, a size that grows with the sentences."""

import struct

import numpy as np
import pytest

from nmt.data.alignments import links_to_matrix
from nmt.report.heatmaps import attention_heatmaps

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_size(data: bytes) -> tuple[int, int]:
    """(width, height) from the IHDR chunk, which follows the signature."""
    return struct.unpack(">II", data[16:24])


def panels(src_len=6, tgt_len=5, count=4):
    src = [f"src{i}" for i in range(src_len)]
    tgt = [f"tgt{j}" for j in range(tgt_len)]
    rng = np.random.default_rng(0)
    out = []
    for k in range(count - 1):
        weights = rng.random((tgt_len, src_len))
        out.append((f"model {k}", src, tgt, weights / weights.sum(1, keepdims=True)))
    gold = links_to_matrix({(0, 0), (1, 1)}, {(0, 0), (1, 1), (2, 1)}, src_len, tgt_len)
    out.append(("gold alignment", src, tgt, gold.tolist()))  # nested lists work too
    return out


@pytest.mark.parametrize("count", [1, 3, 4])
def test_writes_the_same_png_bytes_for_the_same_inputs(tmp_path, count):
    attention_heatmaps(panels(count=count), tmp_path / "a.png", "Figure 7")
    attention_heatmaps(panels(count=count), tmp_path / "b.png", "Figure 7")
    data = (tmp_path / "a.png").read_bytes()
    assert data.startswith(PNG_SIGNATURE) and len(data) > 1000
    assert data == (tmp_path / "b.png").read_bytes()


def test_the_figure_grows_with_the_sentences(tmp_path):
    attention_heatmaps(panels(6, 5), tmp_path / "short.png", "short")
    attention_heatmaps(panels(40, 35), tmp_path / "long.png", "long")
    (short_w, short_h), (long_w, long_h) = (png_size((tmp_path / n).read_bytes()) for n in ("short.png", "long.png"))
    assert long_w > short_w * 2 and long_h > short_h * 2


def test_four_panels_make_a_two_by_two_grid(tmp_path):
    attention_heatmaps(panels(count=3), tmp_path / "row.png", "t")
    attention_heatmaps(panels(count=4), tmp_path / "grid.png", "t")
    (row_w, row_h), (grid_w, grid_h) = (png_size((tmp_path / n).read_bytes()) for n in ("row.png", "grid.png"))
    assert grid_w < row_w and grid_h > row_h


def test_a_matrix_that_does_not_fit_its_words_is_refused(tmp_path):
    label, src, tgt, _ = panels(count=1)[0]
    with pytest.raises(ValueError, match=r"panel 'gold alignment': matrix is 6x5, expected 5x6"):
        attention_heatmaps([(label, src, tgt, np.zeros((6, 5)))], tmp_path / "x.png", "t")
    with pytest.raises(ValueError, match="no panels"):
        attention_heatmaps([], tmp_path / "x.png", "t")
    assert not (tmp_path / "x.png").exists()
