"""The names of the word-alignment file formats and of the merges of two directions' links: plain constants, which the
command line offers as choices without importing what reads the files (nmt.data.alignments, numpy)."""

FORMATS = ("pharaoh", "talp", "rwth")
# The merges of two directions' links that nmt.align.symmetrize implements (Och & Ney's refined, Koehn's grow-diag*)
SYMMETRIZE_METHODS = ("intersection", "union", "grow-diag", "grow-diag-final", "grow-diag-final-and", "refined")
DEFAULT_SYMMETRIZE = "grow-diag-final-and"  # the statistical baselines' merge (Moses' default)
