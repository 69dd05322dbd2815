"""Model components: attention variants, the stacked-LSTM encoder-decoder (luong) and RNNsearch."""
from .rnnsearch import RNNSearch
from .seq2seq import Seq2Seq, build_model

__all__ = ["RNNSearch", "Seq2Seq", "build_model"]
