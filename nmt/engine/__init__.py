"""How updates and decodings are computed, apart from what the models are (docs/engine.md).
Details: docs/internals/engine.md."""
