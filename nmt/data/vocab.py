"""Word vocabularies: top-K by frequency, fixed special symbols, everything else -> <unk>."""
from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Iterable

from ..base.errors import InputError
from ..base.files import read_text
from ..base.atomic import write_text_atomic

PAD, UNK, BOS, EOS = "<pad>", "<unk>", "<s>", "</s>"
SPECIALS = (PAD, UNK, BOS, EOS)
PAD_ID, UNK_ID, BOS_ID, EOS_ID = range(4)


class Vocab:
    def __init__(self, words: Iterable[str]):
        self.itos = list(SPECIALS) + [w for w in words if w not in SPECIALS]
        self.stoi = {w: i for i, w in enumerate(self.itos)}

    @classmethod
    def build(cls, sentences: Iterable[str], size: int) -> "Vocab":
        """The `size` most frequent words (ties broken alphabetically, so the result is deterministic)."""
        counts = Counter(tok for line in sentences for tok in line.split())
        ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        return cls(w for w, _ in ranked[:size])

    def __len__(self) -> int:
        return len(self.itos)

    def encode(self, line: str) -> list[int]:
        return [self.stoi.get(tok, UNK_ID) for tok in line.split()]

    def decode(self, ids: Iterable[int]) -> list[str]:
        return [self.itos[i] for i in ids]

    def save(self, path: str | Path) -> None:
        write_text_atomic(path, "\n".join(self.itos) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> "Vocab":
        words = read_text(path, "a vocabulary file").splitlines()  # UTF-8 checked: one line naming a bad byte
        if tuple(words[: len(SPECIALS)]) != SPECIALS:
            raise InputError(f"{path}: a vocabulary file must start with {', '.join(SPECIALS)}")
        return cls(words)
