"""Decoding a trained model: batched greedy and beam search over single models and ensembles, with the attended
source position of every output word (translate), the step-by-step searches the tests and benchmarks hold them
to (search_reference), and the attention of a forced reference translation for the heat maps (attention_map)."""
