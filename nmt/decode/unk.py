"""unk replacement (Luong et al. 2015, section 5.1, after Jean et al. and Luong et al. 2015b).
Details: docs/internals/decode.md."""

from __future__ import annotations

import tempfile
from collections import Counter, defaultdict
from pathlib import Path

from ..base import eflomal_runner
from ..base.errors import UserError
from ..data.alignments import read_pharaoh
from ..data.text import CorpusError, read_lines, write_lines_atomic
from ..data.vocab import UNK

DICT_HEADER = "# source\ttarget\tlinks"
RELEASE_HEADER = "# source\ttarget\tprobability"  # a dictionary converted from a release (unk.dictionary: stanford)


class UnkError(UserError, ValueError):
    """A dictionary, alignment, positions or hypothesis file that unk replacement cannot use."""


def read_links(path: str | Path) -> list[set[tuple[int, int]]]:
    """The sure Pharaoh links `i-j` (0-based source i, target j) of each line of an aligner's output; eflomal
    writes no possible-only links, so an `i?j` is as malformed here as any other token."""
    try:
        alignments = read_pharaoh(path)
    except CorpusError as err:
        raise UnkError(str(err)) from None
    for n, alignment in enumerate(alignments, start=1):
        for i, j in sorted(alignment.possible - alignment.sure):
            raise UnkError(f"{path}:{n}: malformed alignment link '{i}?{j}' (expected i-j)")
    return [alignment.sure for alignment in alignments]


def count_links(src_lines: list[str], tgt_lines: list[str], link_files: list[Path]) -> dict[str, Counter]:
    """For each source word, how often each target word is linked to it, over the union of the link files
    (a link that several directions found counts once)."""
    src_tokens = [line.split() for line in src_lines]
    tgt_tokens = [line.split() for line in tgt_lines]
    union: set[tuple[int, int, int]] = set()
    for path in link_files:
        lines = read_links(path)  # a sentence pair may have no links
        if len(lines) != len(src_tokens):
            raise UnkError(f"{path}: {len(lines)} lines of links for {len(src_tokens)} sentence pairs")
        for n, links in enumerate(lines, start=1):
            n_src, n_tgt = len(src_tokens[n - 1]), len(tgt_tokens[n - 1])
            for i, j in links:
                if i >= n_src or j >= n_tgt:
                    raise UnkError(
                        f"{path}:{n}: link {i}-{j} outside the sentence pair ({n_src} source, {n_tgt} target words)"
                    )
                union.add((n - 1, i, j))
    counts: dict[str, Counter] = defaultdict(Counter)
    for n, i, j in union:
        counts[src_tokens[n][i]][tgt_tokens[n][j]] += 1
    return counts


def best_translations(counts: dict[str, Counter]) -> dict[str, tuple[str, int]]:
    """Each source word's most frequently linked target word (ties: alphabetically first)."""
    out = {}
    for word, targets in counts.items():
        target, links = min(targets.items(), key=lambda tc: (-tc[1], tc[0]))
        out[word] = (target, links)
    return out


def build_dictionary(
    src_path: str | Path,
    tgt_path: str | Path,
    out_path: str | Path,
    *,
    seed: int = 1,
    samplers: int = eflomal_runner.DEFAULT_SAMPLERS,
    progress=print,
) -> dict:
    src_lines, tgt_lines = read_lines(src_path), read_lines(tgt_path)  # empty lines are refused with file:line
    if len(src_lines) != len(tgt_lines):
        raise UnkError(f"{src_path} has {len(src_lines)} lines but {tgt_path} has {len(tgt_lines)}")
    progress(f"aligning {len(src_lines):,} sentence pairs with eflomal (both directions)")
    with tempfile.TemporaryDirectory(prefix="nmt-unk-") as tmp:
        forward, reverse, seeded = eflomal_runner.align(src_lines, tgt_lines, Path(tmp), seed=seed, samplers=samplers)
        dictionary = best_translations(count_links(src_lines, tgt_lines, [forward, reverse]))
    if not seeded:
        progress(
            "warning: eflomal could not be seeded here (no C compiler or not Linux): this dictionary is not "
            "reproducible"
        )
    write_dictionary(out_path, dictionary)
    progress(f"{len(dictionary):,} source words in {out_path}")
    return {"pairs": len(src_lines), "entries": len(dictionary), "seed": seed, "reproducible": seeded}


def write_dictionary(path: str | Path, dictionary: dict[str, tuple[str, int]]) -> None:
    lines = [DICT_HEADER] + [f"{s}\t{t}\t{c}" for s, (t, c) in sorted(dictionary.items())]
    write_lines_atomic(path, lines)


def read_dictionary(path: str | Path) -> dict[str, str]:
    out = {}
    for n, line in enumerate(read_lines(path), start=1):
        if n == 1 and line in (DICT_HEADER, RELEASE_HEADER):
            continue
        fields = line.split("\t")
        if len(fields) != 3 or not fields[0] or not fields[1] or not _is_number(fields[2]):
            raise UnkError(f"{path}:{n}: expected 'source<TAB>target<TAB>count or probability', got {line!r}")
        out[fields[0]] = fields[1]
    return out


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def read_release_dictionary(path: str | Path) -> dict[str, tuple[str, float]]:
    """{source word: (its most probable translation, probability)} from a released unk dictionary, in either of
    the two layouts such files have:
    - the Berkeley aligner's translation table (what Luong et al.'s dictionary came from): after the line
      "# Translation probabilities", a line per source word starting with the word and a tab, then its
      translations on lines indented by spaces, "target: probability";
    - one entry per line: "source target [probability]" separated by whitespace (no probability: the first entry
      of a source word wins).
    Anything else is an UnkError naming the file and line."""
    lines = read_lines(path, allow_empty=True)
    berkeley = any(line.startswith("# Translation probabilities") for line in lines)
    best: dict[str, tuple[str, float]] = {}

    def keep(src: str, tgt: str, prob: float) -> None:
        if src not in best or prob > best[src][1]:
            best[src] = (tgt, prob)

    source, started = None, not berkeley
    for n, line in enumerate(lines, start=1):
        if not started:
            started = line.startswith("# Translation probabilities")
            continue
        if not line.strip() or line.startswith("#"):
            continue
        if berkeley and not line[0].isspace():
            source = line.split("\t")[0].strip()
            continue
        fields = line.split()
        if berkeley and source and len(fields) == 2 and fields[0].endswith(":") and _is_number(fields[1]):
            keep(source, fields[0][:-1], float(fields[1]))
        elif not berkeley and len(fields) in (2, 3) and (len(fields) == 2 or _is_number(fields[2])):
            keep(fields[0], fields[1], float(fields[2]) if len(fields) == 3 else -n)
        else:
            expected = "'  target: probability' under a source word" if berkeley else "'source target [probability]'"
            raise UnkError(f"{path}:{n}: expected {expected}, got {line!r}")
    if not best:
        raise UnkError(
            f"{path}: no dictionary entries (neither a Berkeley translation table nor 'source target' lines)"
        )
    return best


def convert_release_dictionary(release: str | Path, out_path: str | Path) -> dict:
    """Write a released dictionary (read_release_dictionary) in this module's format, the probability as the score."""
    best = read_release_dictionary(release)
    lines = [RELEASE_HEADER] + [f"{s}\t{t}\t{max(p, 0.0):g}" for s, (t, p) in sorted(best.items())]
    write_lines_atomic(out_path, lines)
    return {"release": str(release), "entries": len(best)}


def replace_unks(hyp: list[str], positions: list[int], src: list[str], dictionary: dict[str, str]) -> list[str]:
    """Each <unk> of hyp becomes the dictionary translation of its attended source word, or that word."""
    out = []
    for token, pos in zip(hyp, positions):
        if token == UNK:
            word = src[pos]
            out.append(dictionary.get(word, word))
        else:
            out.append(token)
    return out


def replace_file(hyp_path, positions_path, src_path, dict_path, out_path) -> dict:
    """Replace the <unk>s of a translation file; counts what was replaced and how."""
    hyps, positions = read_lines(hyp_path, allow_empty=True), read_lines(positions_path, allow_empty=True)
    srcs = read_lines(src_path)
    if not (len(hyps) == len(positions) == len(srcs)):
        raise UnkError(
            f"line counts differ: {hyp_path} {len(hyps)}, {positions_path} {len(positions)}, {src_path} {len(srcs)}"
        )
    dictionary = read_dictionary(dict_path)
    out, stats = [], {"unks": 0, "from_dictionary": 0, "copied": 0}
    for n, (hyp, pos_line, src) in enumerate(zip(hyps, positions, srcs), start=1):
        tokens, src_tokens = hyp.split(), src.split()
        try:
            pos = [int(p) for p in pos_line.split()]
        except ValueError:
            raise UnkError(f"{positions_path}:{n}: positions must be integers, got {pos_line!r}") from None
        if len(pos) != len(tokens):
            raise UnkError(f"{positions_path}:{n}: {len(pos)} positions for {len(tokens)} words of {hyp_path}:{n}")
        if any(not 0 <= p < len(src_tokens) for p in pos):
            raise UnkError(
                f"{positions_path}:{n}: a position lies outside the {len(src_tokens)}-word source "
                f"sentence {src_path}:{n}"
            )
        for token, p in zip(tokens, pos):
            if token == UNK:
                stats["unks"] += 1
                stats["from_dictionary" if src_tokens[p] in dictionary else "copied"] += 1
        out.append(" ".join(replace_unks(tokens, pos, src_tokens, dictionary)))
    write_lines_atomic(out_path, out)
    return stats
