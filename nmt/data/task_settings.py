"""The `data` section of params.yaml, declared where it is read (nmt.base.declare): which corpus plays each task of the
tables, how its splits are named and read, how its training pairs are cleaned; where corpora come from. nmt.settings
takes these classes into the whole configuration's declaration and schema."""
from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal, Mapping

from ..base.declare import Section, json_schema, setting

SOURCE_FILE = {"type": "object", "additionalProperties": False, "required": ["corpus", "file"],
                "properties": {"corpus": {"type": "string"}, "file": {"type": "string"}}}

@dataclass(frozen=True)
class SplitSource(Section):
    """A split of a registry corpus given by its files: {corpus (default: the task's), src, tgt, ...} for files named
    otherwise than STEM.SRC_LANG / STEM.TGT_LANG, or taken from another corpus of the registry."""
    src: str | None = setting(None, "the source side's file", schema={"type": "string"})
    tgt: str | None = setting(None, "the target side's file", schema={"type": "string"})
    corpus: str | None = setting(None, "the registry corpus the files belong to (default: the task's)", optional=True,
                                 schema={"type": "string"})
    encoding: str = setting("utf-8", "of src/tgt (the RWTH texts are latin-1)", optional=True)
    gold: str | None = setting(None, "a gold word-alignment file of the same corpus for these pairs: written as "
                               "{split}.gold (Pharaoh, source index first) for the AER tables and heat maps",
                               optional=True, schema={"type": "string"})
    gold_format: Literal["pharaoh", "talp", "rwth"] = setting("pharaoh", "the gold file's format", optional=True)
    gold_reverse: bool = setting(False, "the gold file lists the target index first", optional=True)
    tokenized: bool = setting(False, "the split's text is already tokenised as its gold links count words (the RWTH "
                              "set): kept as it is when the task's prepare tokenises the rest", optional=True)
    raw_ref: Mapping | None = setting(
        None, "the raw (untokenised) reference of a test split, the same sentences in the same order as its tgt: "
        "written as {split}.raw_ref and scored against by detokenised BLEU (bleu_detok, sacreBLEU 13a)", optional=True,
        schema=SOURCE_FILE)


@dataclass(frozen=True)
class CorpusSize(Section):
    """A training split's published size, for `nmt estimate` before the data is prepared."""
    train_pairs: int = setting(help="training pairs", minimum=1)
    train_tgt_words: int = setting(help="target words of the training pairs", minimum=1)
    source: str = setting(help="where the counts come from")


@dataclass(frozen=True)
class CleanTrain(Section):
    """Cleaning of a raw training corpus by `nmt data get` (Europarl), each dropped pair counted in stats.json."""
    max_ratio: float | None = setting(None, "drop pairs whose word counts differ by more than this many times "
                                      "(misaligned sentences; Moses' clean-corpus-n.perl uses 9); none: no such test",
                                      optional=True, schema={"type": "number", "exclusiveMinimum": 1})
    exclude: tuple[str, ...] = setting((), "drop pairs with a side equal, letters and digits compared, to a sentence "
                                       "of one of these splits (Peter et al.: the RWTH test sentences)", optional=True)


@dataclass(frozen=True)
class PrepareOverrides(Section):
    """A task's own overrides of the preset's prepare section (e.g. a pre-tokenised corpus)."""
    max_len: int = setting(50, minimum=1, optional=True)
    src_vocab: int = setting(50000, minimum=1, optional=True)
    tgt_vocab: int = setting(50000, minimum=1, optional=True)
    tokenize: bool = setting(False, optional=True)
    lowercase: bool = setting(False, optional=True)


@dataclass(frozen=True)
class TaskCorpus(Section):
    """The corpus that plays one task of the tables in a preset: a corpus, or `same_as: TASK` alone (played by that
    task's corpus, its systems trained and stored once under that task)."""
    EXTRA_SCHEMA = MappingProxyType({"oneOf": [
        {"required": ["same_as"], "maxProperties": 1},
        {"required": ["corpus", "src_lang", "tgt_lang"], "not": {"required": ["same_as"]}}]})
    same_as: str | None = setting(None, "the task whose corpus and results play this one", optional=True,
                                  schema={"type": "string"})
    corpus: str | None = setting(None, "synth, or a corpus of nmt/data/corpora.yaml", optional=True,
                                 schema={"type": "string"})
    src_lang: str | None = setting(None, optional=True, schema={"type": "string"})
    tgt_lang: str | None = setting(None, optional=True, schema={"type": "string"})
    splits: Mapping | None = setting(
        None, "registry corpora: split (train, dev, test) -> a file stem of the task's corpus (files STEM.SRC_LANG "
        "and STEM.TGT_LANG, e.g. val), or {corpus (default: the task's), src: FILE, tgt: FILE} for files named "
        "otherwise or taken from another corpus of the registry", optional=True,
        schema={"type": "object", "additionalProperties": {"oneOf": [{"type": "string"}, json_schema(SplitSource)]}})
    size: CorpusSize | None = setting(None, "the training split's published size, for `nmt estimate` before the "
                                      "data is prepared (prepared data's own counts are used once they exist)",
                                      optional=True, schema=json_schema(CorpusSize))
    drop_empty_train: bool = setting(False, "drop training pairs with an empty side (counted in stats.json) instead "
                                     "of stopping with file:line; dev and test files must never have empty lines",
                                     optional=True)
    unk_dictionary: Mapping | None = setting(
        None, "the unk-replacement dictionary the corpus releases (registry corpus and file), used with "
        "unk.dictionary: stanford (Stanford's dict.en-de for WMT'14 En-De)", optional=True, schema=SOURCE_FILE)
    clean_train: CleanTrain | None = setting(None, CleanTrain.__doc__, optional=True, schema=json_schema(CleanTrain))
    prepare: PrepareOverrides | None = setting(None, PrepareOverrides.__doc__, optional=True,
                                               schema=json_schema(PrepareOverrides))
    max_train: int | None = setting(None, "use only the first N training pairs (a slice, for quick runs)",
                                    optional=True, schema={"type": "integer", "minimum": 1})
    seed: int | None = setting(None, "synth: the generator's seed", optional=True, schema={"type": "integer"})
    n_train: int | None = setting(None, optional=True, schema={"type": "integer", "minimum": 1})
    n_dev: int | None = setting(None, optional=True, schema={"type": "integer", "minimum": 1})
    n_test: int | None = setting(None, optional=True, schema={"type": "integer", "minimum": 1})
    n_align: int | None = setting(None, optional=True, schema={"type": "integer", "minimum": 1})
    n_test2: int | None = setting(None, "synth: a second test set (Luong et al.'s newstest2015 role)", optional=True,
                                  schema={"type": "integer", "minimum": 1})
    swap: bool = setting(False, "synth: the pair the other way round (generated target language as the source)",
                         optional=True)
    clause_weights: tuple[float, ...] | None = setting(
        None, "synth: relative frequencies of sentences of 1, 2, ... clauses (default 0.25 0.23 0.17 0.13 0.10 0.07 "
        "0.05)", optional=True, schema={"type": "array", "minItems": 1, "items": {"type": "number", "minimum": 0}})
    max_len: int | None = setting(None, "synth: the longest sentence", optional=True,
                                  schema={"type": "integer", "minimum": 3})


@dataclass(frozen=True)
class DataSettings(Section):
    """Where the corpora come from."""
    SECTION = "data"
    tasks: Mapping[str, TaskCorpus] = setting({}, "for each task a table names (e.g. en-de), the corpus that plays "
                                              "it in this preset (each preset says)")
    mirror: str | None = setting(None, "a directory consulted before the network, laid out like ../shared/data "
                                 "(relative to params.yaml)", optional=True)
    accept_rwth_licence: bool = setting(False, "true states that you accepted the RWTH gold alignment licence, so "
                                        "the pipeline may fetch it", optional=True)
