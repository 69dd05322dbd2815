"""The scoring layer: BLEU and chrF, a translation's scores file, perplexity, the paired bootstrap and a difference's interval over seeds and sentences."""
