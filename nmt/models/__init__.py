"""Model components: attention variants and the stacked-LSTM encoder-decoder."""
from .seq2seq import Seq2Seq, build_model

__all__ = ["Seq2Seq", "build_model"]
