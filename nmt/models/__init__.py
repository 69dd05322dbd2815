"""Model components: attention variants, the stacked-LSTM encoder-decoder (luong) and RNNsearch.

nmt.models.registry says what a model is (architectures, attention variants, building, crediting, labels)."""

from .registry import ARCHITECTURES, build_model, credit_rule, label
from .rnnsearch import RNNSearch
from .seq2seq import Seq2Seq
from .variants import VARIANTS

__all__ = ["ARCHITECTURES", "RNNSearch", "Seq2Seq", "VARIANTS", "build_model", "credit_rule", "label"]
