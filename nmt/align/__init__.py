"""Word alignments: file formats, AER/SAER, symmetrisation, statistical baselines (eflomal), alignments
extracted from attention, and the `nmt align` commands.

Every module here stores a link as (source index, target index), 0-based, whatever the file it came from
wrote: the readers of `nmt.data.alignments` convert 1-based files and swap target-first files on the way in, so
that the metrics and the symmetrisation never have to know where a link was read. The submodules are
imported where they are used; this package module imports nothing, so that `nmt` commands that need no
alignments (and no torch) stay fast.
"""
