"""Reading and writing one-sentence-per-line corpora, with errors that say where the problem is.
Details: docs/internals/data.md."""
from __future__ import annotations

import codecs
import os
from typing import IO, Iterable

from ..base.atomic import write_atomic
from ..base.errors import UserError

_BOM = b"\xef\xbb\xbf"

PathLike = str | os.PathLike


class CorpusError(UserError, ValueError):
    """A corpus file cannot be used. The message always names the file, the 1-based line (when there is one) and
    the problem; the parts are also available as attributes ``path``, ``line`` (``None`` for whole-file problems)
    and ``problem``."""

    def __init__(self, path: PathLike, line: int | None, problem: str):
        self.path = str(path)
        self.line = line
        self.problem = problem
        where = self.path if line is None else f"{self.path}:{line}"
        super().__init__(f"{where}: {problem}")


def _read_bytes(path: PathLike) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        raise CorpusError(path, None, "no such file") from None
    except IsADirectoryError:
        raise CorpusError(path, None, "is a directory, not a file") from None
    except OSError as exc:
        raise CorpusError(path, None, f"cannot be read ({exc.strerror or exc})") from None


_FORBIDDEN_BYTES = ((b"\x00", "NUL byte (a binary or UTF-16 file?)"),
                    (b"\r", "carriage return inside the line (old Mac line endings? lines must end with \\n or \\r\\n)"))


def read_lines(path: PathLike, *, allow_empty: bool = False, encoding: str = "utf-8") -> list[str]:
    """Read a text file (UTF-8 unless ``encoding`` names another codec) as a list of lines without their line endings.

    - Decoding is strict: invalid UTF-8 raises ``CorpusError('path:LINE: invalid UTF-8 (byte 0x.. at column C)')``
      where C is the 1-based character column of the offending byte within its line (another codec: ``invalid
      ascii (...)`` etc.). Some corpora are not UTF-8 (the RWTH gold alignment texts are latin-1); they are read
      with the same line rules. Lines are split on the raw bytes before decoding, so the codec must be
      ASCII-compatible (UTF-8, latin-1, ...); UTF-16 and the like raise ``ValueError``.
    - Line endings ``\\n`` and ``\\r\\n`` are both removed; a final line without a newline is kept; a file that
      ends with a newline does not get an extra empty last line.
    - A NUL byte (a binary file, or UTF-16 text) or a carriage return inside a line (a file with old Mac line
      endings, where every "line" is one whole file) raises ``CorpusError('path:LINE: ... at column C')``.
    - A UTF-8 byte order mark at the very start of a UTF-8 file is dropped (it would otherwise stick to the first word).
    - Unless ``allow_empty`` is true, an empty line, or one made only of whitespace (it has no tokens, so it is just
      as unusable), raises ``CorpusError('path:LINE: empty line')``.
    - A missing file raises ``CorpusError('path: no such file')``.
    """
    codec = codecs.lookup(encoding).name  # an unknown encoding is a programming error: LookupError
    if "\n".encode(codec) != b"\n":  # UTF-16 and the like: lines cannot be split on the raw bytes
        raise ValueError(f"read_lines: encoding {encoding!r} is not ASCII-compatible")
    label = "UTF-8" if codec == "utf-8" else codec
    data = _read_bytes(path)
    if codec == "utf-8" and data.startswith(_BOM):
        data = data[len(_BOM):]
    if not data:
        return []
    raw_lines = data.split(b"\n")
    if raw_lines[-1] == b"":  # the file ends with a newline
        raw_lines.pop()
    lines: list[str] = []
    forbidden = [(byte, what) for byte, what in _FORBIDDEN_BYTES if byte in data]  # one pass over the file
    for number, raw in enumerate(raw_lines, start=1):
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        for byte, what in forbidden:
            if byte in raw:  # the same column rule as for invalid bytes: characters before it, plus one
                column = len(raw[: raw.index(byte)].decode(codec, errors="replace")) + 1
                raise CorpusError(path, number, f"{what} at column {column}")
        try:
            text = raw.decode(codec, errors="strict")
        except UnicodeDecodeError as exc:
            column = len(raw[: exc.start].decode(codec, errors="replace")) + 1
            raise CorpusError(path, number,
                              f"invalid {label} (byte 0x{raw[exc.start]:02x} at column {column})") from None
        if not allow_empty and not text.strip():
            problem = "empty line" if not text else "empty line (only whitespace)"
            raise CorpusError(path, number, problem)
        lines.append(text)
    return lines


def read_parallel(src_path: PathLike, tgt_path: PathLike, *, allow_empty_src: bool = False,
                  allow_empty_tgt: bool = False) -> tuple[list[str], list[str]]:
    """Read a sentence-aligned pair of files (line i of one is the translation of line i of the other).

    Both files are read with :func:`read_lines`. Different line counts raise a ``CorpusError`` naming both files,
    both counts and the first line number that exists in only one of them (reported against the longer file).
    """
    src = read_lines(src_path, allow_empty=allow_empty_src)
    tgt = read_lines(tgt_path, allow_empty=allow_empty_tgt)
    if len(src) != len(tgt):
        longer = src_path if len(src) > len(tgt) else tgt_path
        other = tgt_path if longer is src_path else src_path
        first_unpaired = min(len(src), len(tgt)) + 1
        raise CorpusError(
            longer, first_unpaired,
            f"no partner line in {other} (line counts differ: {src_path} has {len(src)} lines, "
            f"{tgt_path} has {len(tgt)} lines)")
    return src, tgt


def write_lines_atomic(path: PathLike, lines: Iterable[str]) -> None:
    """Write ``lines`` as UTF-8, each followed by ``\\n``, replacing ``path`` atomically.

    The data goes to a temporary file in the same directory, is fsync'ed and then ``os.replace``'d onto ``path``,
    so a reader never sees a half-written file under the final name; if ``lines`` raises midway (or a line is
    invalid) the previous file is untouched. A line containing ``\\n`` or ``\\r`` would break the line alignment
    of the corpus and raises ``CorpusError`` naming the line.
    """
    def write(fh: IO[bytes]) -> None:
        for number, line in enumerate(lines, start=1):
            if not isinstance(line, str):
                raise TypeError(f"{path}:{number}: expected str, got {type(line).__name__}")
            if "\n" in line or "\r" in line:
                raise CorpusError(path, number, "line contains a line break character")
            fh.write(line.encode("utf-8"))
            fh.write(b"\n")

    write_atomic(path, write)


_ENTITIES = {"&apos;": "'", "&quot;": '"', "&amp;": "&", "&lt;": "<", "&gt;": ">", "&#91;": "[", "&#93;": "]",
             "&#124;": "|", "@-@": "-"}


def sentence_key(line: str) -> str:
    """What tokenising a sentence does not change: its letters and digits in order, lowercased (Moses entities and
    @-@ undone first), so that a raw sentence and its tokenised form have the same key."""
    for entity, char in _ENTITIES.items():
        line = line.replace(entity, char)
    return "".join(c for c in line.lower() if c.isalnum())


def check_same_sentences(raw: list[str], tokenised: list[str], raw_path, tokenised_path,
                         tolerance: float = 0.02) -> None:
    """A CorpusError naming both files unless ``raw`` holds the sentences of ``tokenised``, in the same order: as
    many lines, and at most ``tolerance`` of them with another sentence key (:func:`sentence_key`; a release may
    have normalised a few characters, such as quotes). The raw reference of a test set must be in the order of the
    tokenised test set the hypotheses translate, or detokenised BLEU compares the wrong sentences."""
    if len(raw) != len(tokenised):
        raise CorpusError(raw_path, None, f"{len(raw)} lines, but the tokenised test set {tokenised_path} has "
                                          f"{len(tokenised)}: not the same sentences")
    differ = [i for i, (r, t) in enumerate(zip(raw, tokenised), start=1) if sentence_key(r) != sentence_key(t)]
    if len(differ) > tolerance * len(raw):
        raise CorpusError(raw_path, differ[0], f"not the sentence of line {differ[0]} of {tokenised_path} "
                                               f"({len(differ)} of {len(raw)} lines differ): the raw reference is "
                                               f"not in the order of the tokenised test set")
