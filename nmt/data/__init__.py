"""Corpus handling: reading and writing text files, tokenisation, vocabularies and mini-batches."""
