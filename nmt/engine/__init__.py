"""How updates and decodings are computed, apart from what the models are (docs/engine.md).

nmt.models holds the reference architectures; this package computes the same numbers faster. Its interface:
- `fast.use(model, engine)`: "fast" hands a model (an ensemble's members too) the fast kernels (compiled LSTM/GRU
  loops, the step-by-step decoders with hand-written backward passes, cheaper dropout masks); "eager" gives it back
  its reference code. Decoding (`nmt translate`, alignment extraction, heat maps, perplexity) runs a loaded model on
  the fast engine, inside `decoding_cache.decoding_cache`.
- `train_step.TrainingStep`: one update of a model for its TrainSettings, on either engine, in fp32 or bf16, the
  output layer fused with its loss (fused_loss), CUDA graphs where they serve (cuda_graphs).
- `cpu_precision`: the precision a CPU training takes; `mkl_on_amd`: MKL's code paths on AMD processors.

This file imports nothing, so that a command that needs one part (every `nmt` command sets up MKL first) loads only
that part.
"""
