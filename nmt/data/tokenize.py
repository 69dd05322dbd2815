"""Moses tokenisation and detokenisation (thin wrappers over ``sacremoses``).
Details: docs/internals/data.md."""
from __future__ import annotations

from functools import lru_cache
from typing import Iterable

from sacremoses import MosesDetokenizer, MosesTokenizer


@lru_cache(maxsize=None)
def _tokenizer(lang: str) -> MosesTokenizer:
    return MosesTokenizer(lang=lang)


@lru_cache(maxsize=None)
def _detokenizer(lang: str) -> MosesDetokenizer:
    return MosesDetokenizer(lang=lang)


def tokenize(lines: Iterable[str], lang: str, escape: bool = False,
             aggressive_dash_splits: bool = False) -> list[str]:
    """Moses-tokenise each line; returns the tokens of each line joined by single spaces.

    ``lang`` is an ISO code (``en``, ``de``, ``vi``, ...); it selects the non-breaking prefixes (``Mr.``, ``z.B.``)
    and language-specific apostrophe rules. ``aggressive_dash_splits=True`` is ``tokenizer.perl -a``
    (``3-4`` -> ``3 @-@ 4``). An empty line gives an empty string. Casing is not changed.
    """
    tok = _tokenizer(lang)
    return [tok.tokenize(line, aggressive_dash_splits=aggressive_dash_splits, return_str=True, escape=escape)
            for line in lines]


def detokenize(lines: Iterable[str], lang: str, *, unescape: bool = True) -> list[str]:
    """Moses-detokenise each whitespace-tokenised line (``detokenizer.perl`` equivalent).

    With ``unescape=True`` (the default, like ``detokenizer.perl``) Moses entities such as ``&apos;`` and ``&amp;``
    are turned back into characters, so escaped and unescaped tokenisations give the same text; the only cost is
    that a literal ``&amp;`` written in an unescaped tokenisation also becomes ``&``.
    ``@-@`` from aggressive dash splitting is rejoined.
    """
    detok = _detokenizer(lang)
    return [detok.detokenize(line.split(), return_str=True, unescape=unescape) for line in lines]

