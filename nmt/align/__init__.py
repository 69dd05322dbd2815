"""Word alignments: file formats, AER/SAER, symmetrisation, statistical baselines (eflomal), alignments
extracted from attention, and the `nmt align` commands.
Details: docs/internals/align.md."""
