"""The corpus registry (``corpora.yaml``): every real corpus the pipeline can fetch, each of its files with where it
comes from and its sha256. Its keys are declared once, here (nmt.base.declare): the registry's JSON schema is derived
from these classes, :func:`load_registry` checks the file against it (one line naming the file, the corpus, the file
and the key) and returns typed entries, and `nmt data list` and nmt.data.fetch read those."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Literal, Mapping

from ..base.declare import Section, json_schema, setting
from ..base.errors import ConfigError
from ..base.files import read_yaml

DEFAULT_REGISTRY = Path(__file__).with_name("corpora.yaml")
SHA256_PATTERN = "^[0-9a-f]{64}$"
_NAME = "^[A-Za-z0-9][A-Za-z0-9_.-]*$"
_FILE_NAME = r"^[^./\\][^/\\]*$"  # a plain file name: no directory, not hidden
_URL = "^(https?|ftp|file)://"
_TEXT = {"type": "string", "pattern": r"\S"}


@dataclass(frozen=True)
class SacrebleuSource(Section):
    """A file that sacreBLEU's own test-set loader makes (it verifies the upstream archive by md5 and extracts the
    plain text from the SGML); the file's ``url`` names that archive."""
    SECTION = "sacrebleu"
    testset: str = setting(help="sacreBLEU's name of the test set (e.g. wmt14/full)")
    langpair: str = setting(help="its language pair (e.g. en-de)")
    side: Literal["src", "ref"] = setting(help="which side of the pair the file is")


@dataclass(frozen=True)
class CorpusFile(Section):
    """One file of a corpus, written into the destination directory under its key in ``files:``."""
    SECTION = "file"
    url: str = setting(help="the real upstream URL (http, https, ftp or file)", pattern=_URL)
    mirror: str | None = setting(
        help="its path relative to a mirror directory (data.mirror), in the layout of ../shared/data: <folder>/<file>; "
        "null: no mirror location")
    sha256: str | None = setting(
        help="of the final file (after decompression or extraction); null: not known yet, the first download records "
        "it in the user's checksum file and it is verified from then on", schema={"type": ["string", "null"],
                                                                                  "pattern": SHA256_PATTERN})
    compression: Literal[None, "gzip", "tar.gz", "tar"] = setting(
        None, "null: the url is the file; gzip: decompressed after the download; tar.gz or tar: an archive, `member` "
        "names the file in it", optional=True)
    member: str | None = setting(None, "the file's path in a tar archive", optional=True)
    segments: Literal["xml"] | None = setting(
        None, "xml: the final file is the text of each <seg> element of the member, one per line (WIT3's IWSLT dev "
        "and test files)", optional=True)
    sacrebleu: SacrebleuSource | None = setting(None, "made by sacreBLEU's test-set loader", optional=True)
    encoding: str | None = setting(None, "documentation only", optional=True)
    lines: int | None = setting(None, "its line count (documentation, and `nmt estimate` before a download)",
                                optional=True, minimum=0)
    notes: str | None = setting(None, "free text", optional=True)


@dataclass(frozen=True)
class Corpus(Section):
    """A corpus of the registry."""
    SECTION = "corpus"
    description: str = setting(help="what it is", schema=_TEXT)
    licence: str = setting(help="its licence and how to cite it", schema=_TEXT)
    languages: tuple[str, ...] = setting(help="its language codes", minItems=1,
                                         schema={"type": "array", "items": {"type": "string", "minLength": 1}})
    files: Mapping[str, CorpusFile] = setting(help="file name -> where it comes from", minProperties=1,
                                              propertyNames={"pattern": _FILE_NAME})
    licence_gated: bool = setting(False, "never downloaded unless its licence is accepted (accept_flag)",
                                  optional=True)
    accept_flag: str | None = setting(None, "the config flag that accepts a gated licence", optional=True,
                                      schema=_TEXT)
    homepage: str | None = setting(None, "where its licence can be read", optional=True, schema=_TEXT)
    citation: str | None = setting(None, "free text", optional=True, schema=_TEXT)
    notes: str | None = setting(None, "free text", optional=True, schema=_TEXT)

    @classmethod
    def parse(cls, values: Mapping) -> "Corpus":
        """A validated entry as a typed one, each key it leaves out at its declared default."""
        files = {}
        for name, entry in values["files"].items():
            source = entry.get("sacrebleu")
            files[name] = CorpusFile.read({**entry, "sacrebleu": source and SacrebleuSource.read(source)})
        return cls.read({**values, "files": MappingProxyType(files)})


REGISTRY_SCHEMA = {"type": "object", "minProperties": 1, "propertyNames": {"pattern": _NAME},
                   "additionalProperties": json_schema(Corpus)}
Registry = Mapping[str, Corpus]


def load_registry(path: str | os.PathLike | None = None) -> dict[str, Corpus]:
    """The registry (default: the packaged ``corpora.yaml``), checked: any problem (an unknown or missing key, a
    malformed sha256, a path that leaves the mirror, an archive without a member, a key given twice) is one
    ConfigError naming the registry file and the key (`CORPUS.files.FILE.KEY`)."""
    path = Path(path) if path is not None else DEFAULT_REGISTRY
    # nmt.base.files: strict UTF-8, a key given twice refused (the registry is edited by hand: a duplicate would
    # silently win), a schema violation one line with its key path
    data = read_yaml(path, "the corpus registry", schema=REGISTRY_SCHEMA, error=ConfigError)
    registry = {corpus: Corpus.parse(values) for corpus, values in data.items()}
    for corpus, spec in registry.items():
        for name, entry in spec.files.items():
            problem = _file_problem(entry)
            if problem:
                raise ConfigError(f"{path}: {corpus}.files.{name}: {problem}")
    return registry


def _file_problem(entry: CorpusFile) -> str | None:
    """What the schema cannot say about a file entry: how its keys go together, and paths that stay inside."""
    for what, value in (("mirror", entry.mirror), ("member", entry.member)):
        if value is not None and not is_relative_inside(value):
            return (f"{what} {value!r} must be a relative path inside the directory (no leading '/', no '..', "
                    "no empty parts)")
    if entry.sacrebleu is not None and entry.compression is not None:
        return "a sacrebleu file takes no compression (sacreBLEU extracts it)"
    if entry.compression in ("tar.gz", "tar") and entry.member is None:
        return f"compression {entry.compression} needs `member:` (the file's path in the archive)"
    if entry.compression not in ("tar.gz", "tar") and entry.member is not None:
        return "`member:` is only meaningful with compression tar.gz or tar"
    return None


def is_relative_inside(value: str) -> bool:
    """A relative path that stays inside its directory: no leading '/', no drive, no '..', no empty part."""
    parts = value.replace("\\", "/").split("/")
    return bool(value.strip()) and not (value.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", value)
                                        or ".." in parts or "" in parts)
