"""Seeded synthetic language pair (the "demo corpus") that stands in for WMT En-De in the offline demo preset.
Details: docs/internals/data.md."""

from __future__ import annotations

import json
import random
from bisect import bisect_right
from dataclasses import dataclass, field
from itertools import accumulate
from pathlib import Path

from ..base.errors import ConfigError
from ..base.atomic import write_text_atomic

__all__ = ["Lexicon", "build_lexicon", "generate", "generate_pairs", "describe"]

# --------------------------------------------------------------------------------------------------------
# word forms
_SRC_CONS = "bdfgklmnprstvz"
_SRC_VOWELS = "aeiou"
_TGT_ONSETS = ("w", "h", "j", "c", "sch", "st", "br", "kr", "tr", "gr", "pf", "fl", "sp", "dr", "ch")
_TGT_VOWELS = ("ei", "au", "ie", "a", "o", "u", "e")
_TGT_CODAS = ("", "", "", "", "n", "r", "t", "ch")

# lexicon sizes
_N = {
    "det": 6, "pron": 6, "noun": 70, "adj": 35, "verb_t": 30, "verb_i": 12, "adv": 18, "prep": 12,
    "conj1": 5, "conj2": 2, "part": 4,
}
_N_NOUN_1TOM = 14
_N_CLF = 4
_N_VERB_1TOM = 8  # spread over transitive and intransitive verbs
_N_SUPPORT = 2
_N_GENDERS = 3

# generation probabilities
_CLAUSE_WEIGHTS = (0.25, 0.23, 0.17, 0.13, 0.10, 0.07, 0.05)  # 1..7 clauses
_P_PART = 0.15
_P_PRON_SUBJ = 0.3
_P_TRANSITIVE = 0.7
_PP_WEIGHTS = (0.5, 0.35, 0.15)
_ADJ_WEIGHTS = (0.5, 0.35, 0.15)
_P_ADV = 0.4
_P_DROPPED_DET = 0.12
_P_CONJ2 = 0.25
_MAX_TRIES = 1000

# test2 comes last so that adding it leaves the other splits' sentences unchanged
_SPLITS = ("train", "dev", "test", "align", "test2")


def _src_word(rng: random.Random, n_syll: int) -> str:
    return "".join(rng.choice(_SRC_CONS) + rng.choice(_SRC_VOWELS) for _ in range(n_syll))


def _tgt_word(rng: random.Random, n_syll: int) -> str:
    return "".join(rng.choice(_TGT_ONSETS) + rng.choice(_TGT_VOWELS) + rng.choice(_TGT_CODAS)
                   for _ in range(n_syll))


class _Forms:
    """Draws unique word forms (no form used twice on a side)."""

    def __init__(self, rng: random.Random, maker) -> None:
        self.rng, self.maker, self.used = rng, maker, set()

    def draw(self, n: int, syll: tuple[int, ...]) -> list[str]:
        out = []
        while len(out) < n:
            w = self.maker(self.rng, self.rng.choice(syll))
            if w not in self.used:
                self.used.add(w)
                out.append(w)
        return out


class _Picker:
    """Weighted choice with precomputed cumulative weights (fast, deterministic)."""

    def __init__(self, items, weights) -> None:
        self.items = list(items)
        self.cum = list(accumulate(weights))
        self.total = self.cum[-1]

    def __call__(self, rng: random.Random):
        return self.items[bisect_right(self.cum, rng.random() * self.total)]


def _zipf(items, rng: random.Random, s: float = 0.7, offset: float = 3.0) -> _Picker:
    items = list(items)
    rng.shuffle(items)
    return _Picker(items, [1.0 / (r + offset) ** s for r in range(len(items))])


@dataclass
class Lexicon:
    """The seeded bilingual lexicon. Target entries are tuples of target tokens ("" never occurs)."""

    dets: list[str]                    # source determiners; dets[0] is the dropped one
    det_tgt: dict[tuple[str, int], str]  # (source det, target gender) -> target determiner
    pron: dict[str, str]
    noun: dict[str, tuple[str, ...]]   # 1 or 2 target tokens (noun [+ classifier])
    gender: dict[str, int]             # source noun -> gender of its target noun
    adj: dict[str, str]
    verb_t: dict[str, tuple[str, ...]]  # 1 or 2 target tokens (verb stem [+ support verb])
    verb_i: dict[str, tuple[str, ...]]
    adv: dict[str, str]
    prep: dict[str, str]
    conj1: dict[str, str]
    conj2: dict[tuple[str, str], str]  # two source words -> one target word
    part: list[str]
    dropped: frozenset[str] = field(default_factory=frozenset)
    one_to_many: frozenset[str] = field(default_factory=frozenset)
    many_to_one: frozenset[str] = field(default_factory=frozenset)

    @property
    def src_words(self) -> set[str]:
        s = set(self.dets) | set(self.pron) | set(self.noun) | set(self.adj) | set(self.verb_t)
        s |= set(self.verb_i) | set(self.adv) | set(self.prep) | set(self.conj1) | set(self.part)
        for a, b in self.conj2:
            s |= {a, b}
        return s

    @property
    def tgt_words(self) -> set[str]:
        s = set(self.det_tgt.values()) | set(self.pron.values()) | set(self.adj.values())
        s |= set(self.adv.values()) | set(self.prep.values()) | set(self.conj1.values())
        s |= set(self.conj2.values())
        for d in (self.noun, self.verb_t, self.verb_i):
            for toks in d.values():
                s |= set(toks)
        return s


def build_lexicon(seed: int = 1) -> Lexicon:
    """The lexicon for ``seed`` (independent of the corpus sizes)."""
    rng = random.Random(f"nmt-synth:{seed}:lexicon")
    src = _Forms(rng, _src_word)
    tgt = _Forms(rng, _tgt_word)
    fn, content = (1,), (2, 2, 3)

    dets = src.draw(_N["det"], fn)
    det_tgt = {(d, g): w for d, ws in zip(dets[1:], [tgt.draw(_N_GENDERS, fn) for _ in dets[1:]])
               for g, w in enumerate(ws)}
    pron = dict(zip(src.draw(_N["pron"], fn), tgt.draw(_N["pron"], fn)))
    prep = dict(zip(src.draw(_N["prep"], fn), tgt.draw(_N["prep"], fn)))
    conj1 = dict(zip(src.draw(_N["conj1"], fn), tgt.draw(_N["conj1"], fn)))
    c2 = src.draw(2 * _N["conj2"], fn)
    conj2 = dict(zip(zip(c2[0::2], c2[1::2]), tgt.draw(_N["conj2"], (2,))))
    part = src.draw(_N["part"], fn)
    clfs = tgt.draw(_N_CLF, fn)
    supports = tgt.draw(_N_SUPPORT, (1, 2))

    noun_src = src.draw(_N["noun"], content)
    noun_tgt = tgt.draw(_N["noun"], content)
    noun = {s: (t,) for s, t in zip(noun_src, noun_tgt)}
    for s in rng.sample(noun_src, _N_NOUN_1TOM):
        noun[s] = noun[s] + (rng.choice(clfs),)
    gender = {s: rng.randrange(_N_GENDERS) for s in noun_src}

    adj = dict(zip(src.draw(_N["adj"], content), tgt.draw(_N["adj"], content)))
    adv = dict(zip(src.draw(_N["adv"], content), tgt.draw(_N["adv"], content)))
    verb_t = {s: (t,) for s, t in zip(src.draw(_N["verb_t"], content), tgt.draw(_N["verb_t"], content))}
    verb_i = {s: (t,) for s, t in zip(src.draw(_N["verb_i"], content), tgt.draw(_N["verb_i"], content))}
    n_vt = round(_N_VERB_1TOM * _N["verb_t"] / (_N["verb_t"] + _N["verb_i"]))
    for d, k in ((verb_t, n_vt), (verb_i, _N_VERB_1TOM - n_vt)):
        for s in rng.sample(sorted(d), k):
            d[s] = d[s] + (rng.choice(supports),)

    assert not src.used & tgt.used, "source and target word forms must be disjoint"
    one_to_many = frozenset(w for d in (noun, verb_t, verb_i) for w, t in d.items() if len(t) > 1)
    many_to_one = frozenset(w for pair in conj2 for w in pair)
    return Lexicon(dets=dets, det_tgt=det_tgt, pron=pron, noun=noun, gender=gender, adj=adj, verb_t=verb_t,
                   verb_i=verb_i, adv=adv, prep=prep, conj1=conj1, conj2=conj2, part=part,
                   dropped=frozenset([dets[0], *part]), one_to_many=one_to_many, many_to_one=many_to_one)


# --------------------------------------------------------------------------------------------------------
# sentence generation
# A target fragment is a list of (target token, ((source index, sure?), ...)) entries.

class _Grammar:
    def __init__(self, lex: Lexicon, rng: random.Random, clause_weights: tuple[float, ...] | None = None) -> None:
        self.lex = lex
        pr = rng  # word-frequency ranks, drawn once per seed
        self.noun = _zipf(sorted(lex.noun), pr)
        self.adj = _zipf(sorted(lex.adj), pr)
        self.verb_t = _zipf(sorted(lex.verb_t), pr)
        self.verb_i = _zipf(sorted(lex.verb_i), pr)
        self.adv = _zipf(sorted(lex.adv), pr)
        self.prep = _zipf(sorted(lex.prep), pr)
        self.pron = _zipf(sorted(lex.pron), pr, s=0.3)
        self.det = _zipf(lex.dets[1:], pr, s=0.3)
        self.conj1 = _zipf(sorted(lex.conj1), pr, s=0.3)
        self.conj2 = _zipf(sorted(lex.conj2), pr, s=0.3)
        self.part = _zipf(lex.part, pr, s=0.3)
        weights = tuple(clause_weights or _CLAUSE_WEIGHTS)
        self.n_clauses = _Picker(range(1, len(weights) + 1), weights)
        self.n_pp = _Picker(range(len(_PP_WEIGHTS)), _PP_WEIGHTS)
        self.n_adj = _Picker(range(len(_ADJ_WEIGHTS)), _ADJ_WEIGHTS)

    def np(self, rng, src: list[str]) -> list:
        lex = self.lex
        det = lex.dets[0] if rng.random() < _P_DROPPED_DET else self.det(rng)
        i_det = len(src)
        src.append(det)
        adjs = []
        for _ in range(self.n_adj(rng)):
            a = self.adj(rng)
            adjs.append((lex.adj[a], ((len(src), True),)))
            src.append(a)
        noun = self.noun(rng)
        i_noun = len(src)
        src.append(noun)
        frag = []
        if det != lex.dets[0]:
            frag.append((lex.det_tgt[det, lex.gender[noun]], ((i_det, True),)))
        toks = lex.noun[noun]
        frag.append((toks[0], ((i_noun, True),)))
        frag.extend((t, ((i_noun, False),)) for t in toks[1:])
        frag.extend(adjs)  # local reordering: adjectives after the noun
        return frag

    def clause(self, rng, src: list[str]) -> list:
        lex = self.lex
        if rng.random() < _P_PART:
            src.append(self.part(rng))  # dropped
        if rng.random() < _P_PRON_SUBJ:
            p = self.pron(rng)
            subj = [(lex.pron[p], ((len(src), True),))]
            src.append(p)
        else:
            subj = self.np(rng, src)
        transitive = rng.random() < _P_TRANSITIVE
        if transitive:
            v = self.verb_t(rng)
            toks = lex.verb_t[v]
        else:
            v = self.verb_i(rng)
            toks = lex.verb_i[v]
        i_v = len(src)
        src.append(v)
        verb = [(toks[0], ((i_v, True),))] + [(t, ((i_v, False),)) for t in toks[1:]]
        obj = self.np(rng, src) if transitive else []
        pps = []
        for _ in range(self.n_pp(rng)):
            p = self.prep(rng)
            pps.append((lex.prep[p], ((len(src), True),)))
            src.append(p)
            pps.extend(self.np(rng, src))
        adv = []
        if rng.random() < _P_ADV:
            a = self.adv(rng)
            adv = [(lex.adv[a], ((len(src), True),))]
            src.append(a)
        # long-distance reordering: SUBJ ADV OBJ PP* VERB
        return subj + adv + obj + pps + verb

    def sentence(self, rng) -> tuple[list[str], list]:
        src: list[str] = []
        tgt = self.clause(rng, src)
        for _ in range(self.n_clauses(rng) - 1):
            if rng.random() < _P_CONJ2:
                a, b = self.conj2(rng)
                i = len(src)
                tgt.append((self.lex.conj2[a, b], ((i, True), (i + 1, False))))  # many-to-one
                src.extend((a, b))
            else:
                c = self.conj1(rng)
                tgt.append((self.lex.conj1[c], ((len(src), True),)))
                src.append(c)
            tgt.extend(self.clause(rng, src))
        return src, tgt


def _finish(src: list[str], frag: list) -> tuple[str, str, str]:
    """Turn a derivation into (source line, target line, alignment line)."""
    links = sorted((i, j, sure) for j, (_, ls) in enumerate(frag) for i, sure in ls)
    align = " ".join(f"{i}{'-' if s else '?'}{j}" for i, j, s in links)
    return " ".join(src), " ".join(t for t, _ in frag), align


def generate_pairs(seed: int, split: str, n: int, max_len: int = 50, min_len: int = 3,
                   exclude: set[str] | None = None, unique: bool = False, lexicon: Lexicon | None = None,
                   clause_weights: tuple[float, ...] | None = None):
    """Yield ``n`` (src line, tgt line, alignment line) triples of ``split`` (its own random stream).

    Pairs whose source or target length is outside ``[min_len, max_len]`` are redrawn, as are sources in
    ``exclude``; with ``unique`` a source string is not repeated (and is added to ``exclude``).
    ``clause_weights``: relative frequencies of sentences of 1, 2, ... clauses (default _CLAUSE_WEIGHTS).
    """
    lex = lexicon or build_lexicon(seed)
    rng = random.Random(f"nmt-synth:{seed}:{split}")
    gram = _Grammar(lex, random.Random(f"nmt-synth:{seed}:frequencies"), clause_weights)
    exclude = exclude if exclude is not None else set()
    made = 0
    while made < n:
        for _ in range(_MAX_TRIES):
            src, frag = gram.sentence(rng)
            n_tgt = len(frag)
            if not (min_len <= len(src) <= max_len and min_len <= n_tgt <= max_len):
                continue
            line = " ".join(src)
            if line in exclude:
                continue
            break
        else:
            raise RuntimeError(f"synth: could not draw a new {split} sentence in {_MAX_TRIES} tries "
                               f"(max_len={max_len}, min_len={min_len} too restrictive?)")
        if unique:
            exclude.add(line)
        made += 1
        yield _finish(src, frag)


# --------------------------------------------------------------------------------------------------------
# files

def _lines(xs: list[str]) -> str:
    return "".join(x + "\n" for x in xs)


def _swap_link(link: str) -> str:
    sep = "-" if "-" in link else "?"
    i, j = link.split(sep)
    return f"{j}{sep}{i}"


def generate(out_dir: str | Path, seed: int = 1, n_train: int = 20000, n_dev: int = 500, n_test: int = 500,
             n_align: int = 200, max_len: int = 50, min_len: int = 3, n_test2: int = 0,
             swap: bool = False, clause_weights: list[float] | None = None) -> dict:
    """Write {train,dev,test,align}.{src,tgt} (and test2 when ``n_test2`` > 0) and align.gold into out_dir
    (created if needed) and return a summary dict: {"seed":..., "splits": {"train": {"sentences": n,
    "src_tokens": .., "tgt_tokens": ..}, ...}, "src_vocab": n_distinct_src_words, "tgt_vocab": ..., "max_len": ...}.
    Also write that summary as out_dir/stats.json.

    ``swap`` writes the same pairs the other way round (the generated target language becomes the source,
    gold links become ``j-i``): the reverse direction of the demo pair, as De->En is of En->De.
    ``clause_weights``: relative frequencies of sentences of 1, 2, ... clauses (default: 0.25, 0.23, 0.17, 0.13,
    0.10, 0.07, 0.05; fewer long sentences make a corpus quicker to learn, the longest still reach max_len)."""
    if clause_weights is not None and (not clause_weights or min(clause_weights) < 0 or sum(clause_weights) <= 0):
        raise ConfigError(f"clause_weights must be non-negative with a positive sum, got {clause_weights}")
    if not 1 <= min_len <= max_len:
        raise ConfigError(f"need 1 <= min_len <= max_len, got min_len={min_len}, max_len={max_len}")
    if max_len < 3:
        raise ConfigError("max_len must be at least 3 (the shortest clause has 3 source tokens)")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    lex = build_lexicon(seed)
    sizes = {"train": n_train, "dev": n_dev, "test": n_test, "align": n_align, "test2": n_test2}
    splits_made = [s for s in _SPLITS if s != "test2" or n_test2 > 0]
    seen: set[str] = set()
    data: dict[str, tuple[list[str], list[str], list[str]]] = {}
    for split in splits_made:
        triples = list(generate_pairs(seed, split, sizes[split], max_len=max_len, min_len=min_len,
                                      exclude=seen, unique=split != "train", lexicon=lex,
                                      clause_weights=tuple(clause_weights) if clause_weights else None))
        if split == "train":
            seen.update(t[0] for t in triples)
        data[split] = tuple(list(x) for x in zip(*triples)) if triples else ([], [], [])
        if swap:
            src, tgt, align = data[split]
            data[split] = (tgt, src, [" ".join(_swap_link(x) for x in line.split()) for line in align])

    src_vocab: set[str] = set()
    tgt_vocab: set[str] = set()
    splits = {}
    for split in splits_made:
        src, tgt, align = data[split]
        write_text_atomic(out / f"{split}.src", _lines(src))
        write_text_atomic(out / f"{split}.tgt", _lines(tgt))
        if split == "align":
            write_text_atomic(out / "align.gold", _lines(align))
        s_toks = [s.split() for s in src]
        t_toks = [t.split() for t in tgt]
        for ts in s_toks:
            src_vocab.update(ts)
        for ts in t_toks:
            tgt_vocab.update(ts)
        splits[split] = {"sentences": len(src), "src_tokens": sum(map(len, s_toks)),
                         "tgt_tokens": sum(map(len, t_toks))}
    summary = {"seed": seed, "swap": swap, "splits": splits, "src_vocab": len(src_vocab), "tgt_vocab": len(tgt_vocab),
               "max_len": max_len, "min_len": min_len}
    write_text_atomic(out / "stats.json", json.dumps(summary, indent=2) + "\n")
    return summary


def describe() -> str:
    """A short human-readable description of the demo language pair (for the HTML report)."""
    return ("The demo corpus is a seeded synthetic language pair: source sentences of 1-7 clauses "
            "(subject, verb, object, prepositional phrases, adverb) joined by conjunctions, about 3 to 50 tokens "
            "long, over a made-up vocabulary of about 200 words per side. "
            "The target side moves the verb of every clause to the clause end and the adverb after the "
            "subject (long-distance reordering), puts adjectives after their noun (local reordering), and "
            "inflects determiners for the gender of their noun. "
            "The lexicon includes one-to-many words (nouns with a classifier particle, verbs with a support "
            "verb), two-word conjunctions translated by one word, and particles and a determiner that are "
            "dropped; the generator writes gold sure/possible word alignments from its derivations.")
