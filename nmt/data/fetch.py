"""`nmt data fetch`: get the real corpora of the registry (``corpora.yaml``) into a directory, verified by sha256.
Details: docs/internals/data.md."""
from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import logging
import os
import posixpath
import re
import shutil
import sys
import tarfile
import tempfile
import urllib.parse
import urllib.request
import zlib
from pathlib import Path
from typing import Iterator, Mapping

from ..base.atomic import write_text_atomic
from ..base.errors import ConfigError, UserError
from ..base.files import read_text
from .corpus_registry import SHA256_PATTERN, Corpus, CorpusFile, Registry, load_registry

log = logging.getLogger(__name__)

COMMITTED_CHECKSUMS = Path(__file__).with_name("checksums.tsv")  # the repository's, read only


def recorded_checksums_file() -> Path:
    """Where first downloads record the sums the registry lacks: a file of this user's, outside the package, so that
    fetching a corpus changes nothing that a pipeline stage depends on (``NMT_CHECKSUMS``, else
    ``$XDG_DATA_HOME/nmt/checksums.tsv``, else ``~/.local/share/nmt/checksums.tsv``)."""
    if os.environ.get("NMT_CHECKSUMS"):
        return Path(os.environ["NMT_CHECKSUMS"])
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "nmt" / "checksums.tsv"
DOWNLOAD_DIR = ".download"

_SHA256 = re.compile(SHA256_PATTERN)
_CHUNK = 1 << 16


class FetchError(UserError, RuntimeError):
    """A corpus file could not be provided. The message names the corpus and file, where it was looked for, and what
    to do about it."""


# --------------------------------------------------------------------------------------------------------------------
# registry entries

def _resolve_registry(registry: Registry | str | os.PathLike | None) -> Registry:
    if isinstance(registry, Mapping):
        return registry
    return load_registry(registry)


def _entry(registry: Registry, corpus: str, name: str) -> tuple[Corpus, CorpusFile]:
    if corpus not in registry:
        raise FetchError(f"unknown corpus {corpus!r}: the registry has {', '.join(sorted(registry))}")
    spec = registry[corpus]
    if name not in spec.files:
        raise FetchError(f"unknown file {name!r} in corpus {corpus}: it has {', '.join(spec.files)}")
    return spec, spec.files[name]


# --------------------------------------------------------------------------------------------------------------------
# checksum file

def read_checksums(path: str | os.PathLike) -> dict[tuple[str, str], str]:
    """Read ``corpus<TAB>name<TAB>sha256`` lines (``#`` comments and blank lines allowed). A missing file is empty."""
    path = Path(path)
    if not path.exists():
        return {}
    text = read_text(path, "a checksum file", error=ConfigError)
    sums: dict[tuple[str, str], str] = {}
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.rstrip("\r").split("\t")
        if len(parts) != 3 or not _SHA256.match(parts[2]):
            raise ConfigError(f"{path}:{number}: expected 'corpus<TAB>name<TAB>sha256' (64 lowercase hex digits), "
                             f"got {line!r}")
        key = (parts[0], parts[1])
        if key in sums and sums[key] != parts[2]:
            raise ConfigError(f"{path}:{number}: {parts[0]}/{parts[1]} is listed twice with different sums")
        sums[key] = parts[2]
    return sums


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive lock on ``path``'s directory, so that parallel fetch jobs sharing one checksum file do not lose
    each other's records (the file itself is replaced atomically, so it cannot carry the lock). No-op where flock
    is unavailable."""
    try:
        import fcntl
        fd = os.open(path.parent, os.O_RDONLY)
    except (ImportError, OSError):  # pragma: no cover - Windows
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def record_checksum(path: str | os.PathLike, corpus: str, name: str, sha256: str) -> None:
    """Add ``corpus/name -> sha256`` to the checksum file: comment header kept, entries sorted, written atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _locked(path):
        try:
            lines = path.read_text(encoding="utf-8").split("\n")
        except FileNotFoundError:
            lines = ["# sha256 of corpus files whose registry entry (nmt/data/corpora.yaml) says sha256: null,",
                     "# recorded by their first download on this machine. corpus<TAB>name<TAB>sha256."]
        header = [line for line in lines if line.lstrip().startswith("#")]
        sums = read_checksums(path)
        old = sums.get((corpus, name))
        if old is not None and old != sha256:
            raise FetchError(f"{path}: already lists {corpus}/{name} as {old}; refusing to overwrite it with {sha256}")
        sums[(corpus, name)] = sha256
        body = [f"{c}\t{n}\t{s}" for (c, n), s in sorted(sums.items())]
        write_text_atomic(path, "\n".join(header + body) + "\n")


# --------------------------------------------------------------------------------------------------------------------
# hashing, temporary files

def sha256_file(path: str | os.PathLike) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@contextlib.contextmanager
def _temporary_beside(final: Path) -> Iterator[Path]:
    """A temporary file in ``final``'s directory (same file system, so ``os.replace`` is atomic); removed unless it
    was moved away."""
    fd, tmp = tempfile.mkstemp(dir=final.parent, prefix=f".{final.name}.", suffix=".part")
    os.close(fd)
    try:
        yield Path(tmp)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def _copy_hashing(src_handle, dst: Path) -> str:
    digest = hashlib.sha256()
    with open(dst, "wb") as out:
        for block in iter(lambda: src_handle.read(1 << 20), b""):
            digest.update(block)
            out.write(block)
    return digest.hexdigest()


def _mismatch(expected: str, got: str, where: str) -> FetchError:
    return FetchError(f"sha256 mismatch: expected {expected}, got {got} for {where} (corrupt or truncated copy?)")


# --------------------------------------------------------------------------------------------------------------------
# downloading

class ResumableDownloader:
    """A pooch downloader that keeps what it received in ``part`` and, on the next attempt, asks for the rest with an
    HTTP Range request (servers that ignore Range send the whole file again, which is handled). ``file://`` URLs are
    copied. After a complete transfer the part file is moved to pooch's temporary output file, which pooch verifies
    against ``known_hash`` before renaming it into its cache."""

    def __init__(self, part: Path, progress: bool, timeout: tuple[float, float] = (30.0, 120.0)):
        self.part = Path(part)
        self.progress = progress
        self.timeout = timeout
        self.resumed_from = 0

    def __call__(self, url: str, output_file, pooch=None, check_only: bool = False):
        if check_only:  # pooch's availability check; not used by retrieve
            return True
        self.part.parent.mkdir(parents=True, exist_ok=True)
        if urllib.parse.urlsplit(url).scheme == "file":
            source = urllib.request.url2pathname(urllib.parse.urlsplit(url).path)
            shutil.copyfile(source, self.part)
        else:
            self._http(url)
        shutil.move(str(self.part), str(output_file))

    def _http(self, url: str) -> None:
        import requests

        have = self.part.stat().st_size if self.part.exists() else 0
        headers = {"Range": f"bytes={have}-"} if have else {}
        with requests.get(url, headers=headers, stream=True, timeout=self.timeout) as response:
            if have and response.status_code == 416:  # the part is longer than the file: start again
                self.part.unlink()
                return self._http(url)
            response.raise_for_status()
            mode, start = "wb", 0
            if have and response.status_code == 206:
                match = re.match(r"bytes (\d+)-", response.headers.get("Content-Range", ""))
                if match and int(match.group(1)) == have:
                    mode, start = "ab", have
            self.resumed_from = start
            length = response.headers.get("Content-Length")
            expected = int(length) if length and length.isdigit() else None
            total = start + expected if expected is not None else None
            bar = None
            if self.progress:
                from tqdm import tqdm
                bar = tqdm(total=total, initial=start, unit="B", unit_scale=True, unit_divisor=1024,
                           desc=self.part.name.removesuffix(".part"), file=sys.stderr, leave=False)
            received = 0
            try:
                with open(self.part, mode) as out:
                    for chunk in response.iter_content(chunk_size=_CHUNK):
                        out.write(chunk)
                        received += len(chunk)
                        if bar is not None:
                            bar.update(len(chunk))
            finally:
                if bar is not None:
                    bar.close()
            if expected is not None and received != expected:
                raise OSError(f"transfer interrupted after {start + received} of {total} bytes "
                              "(run again to resume)")


@contextlib.contextmanager
def _quiet_pooch() -> Iterator[None]:
    import pooch
    logger = pooch.get_logger()
    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        logger.setLevel(level)


def _download_name(url: str) -> str:
    base = os.path.basename(urllib.parse.urlsplit(url).path) or "download"
    return f"{hashlib.sha1(url.encode()).hexdigest()[:10]}-{base}"


def _reason(exc: BaseException) -> str:
    """A short human reason for a failed download."""
    response = getattr(exc, "response", None)
    if response is not None and getattr(response, "status_code", None):
        return f"HTTP {response.status_code} {response.reason or ''}".strip()
    text = str(exc)
    match = re.search(r"\[Errno -?\d+\] ([^'\")\]]+)", text)
    if match:
        return match.group(1).strip()
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    text = text or type(exc).__name__
    return text if len(text) <= 240 else text[:237] + "..."


def _download(corpus: str, name: str, entry: CorpusFile, dest_dir: Path, known: str | None, progress: bool) -> Path:
    """Download ``entry.url`` into ``dest_dir/.download`` with pooch and return the downloaded (still compressed) file.
    ``known`` is passed to pooch as ``known_hash`` for uncompressed files, so pooch verifies the transfer."""
    import pooch

    cache = dest_dir / DOWNLOAD_DIR
    cache.mkdir(parents=True, exist_ok=True)
    fname = _download_name(entry.url)
    downloader = ResumableDownloader(cache / (fname + ".part"), progress=progress)
    known_hash = f"sha256:{known}" if known and entry.compression is None else None
    with _quiet_pooch():
        path = pooch.retrieve(entry.url, known_hash=known_hash, fname=fname, path=cache,
                              downloader=downloader, progressbar=progress)
    return Path(path)


def _download_sacrebleu(entry: CorpusFile, dest_dir: Path) -> Path:
    """Have sacreBLEU's test-set loader download (md5-verified) and extract one side of a test set, inside
    ``dest_dir/.download/sacrebleu`` rather than ~/.sacrebleu, and return the plain-text file it wrote."""
    import copy

    from sacrebleu.dataset import DATASETS

    sb = entry.sacrebleu
    if sb.testset not in DATASETS:
        raise ConfigError(f"sacreBLEU {_sacrebleu_version()} has no test set {sb['testset']!r}")
    dataset = copy.copy(DATASETS[sb.testset])
    if sb.langpair not in dataset.langpairs:
        raise ConfigError(f"sacreBLEU test set {sb['testset']} has no language pair {sb['langpair']}")
    dataset._outdir = str(dest_dir / DOWNLOAD_DIR / "sacrebleu" / dataset.name)
    dataset._rawdir = os.path.join(dataset._outdir, "raw")
    try:
        dataset.process_to_text(sb.langpair)
    except SystemExit:  # sacreBLEU exits on an md5 mismatch or an SSL error after logging why
        shutil.rmtree(dataset._rawdir, ignore_errors=True)  # never reuse a rejected archive
        raise OSError("sacreBLEU rejected the download (md5 mismatch or SSL error; its log above says which); "
                      "the archive was deleted") from None
    if sb.side == "src":
        return Path(dataset.get_source_file(sb.langpair))
    return Path(dataset.get_reference_files(sb.langpair)[0])


def _sacrebleu_version() -> str:
    import sacrebleu
    return sacrebleu.__version__


def _materialise(download: Path, entry: CorpusFile, tmp: Path) -> str:
    """Write the final file (decompressed / extracted) to ``tmp``; return its sha256."""
    compression = entry.compression
    if compression is None:  # pooch already verified it when the sum is known; no second copy of a large file
        os.replace(download, tmp)
        return sha256_file(tmp)
    if compression == "gzip":
        with gzip.open(download, "rb") as src:
            return _copy_hashing(src, tmp)
    with tarfile.open(download, "r:*") as archive:
        src = archive.extractfile(_regular_member(archive, entry.member))
        with src:
            if entry.segments == "xml":
                return _copy_hashing(io.BytesIO(xml_segments(src.read(), entry.member)), tmp)
            return _copy_hashing(src, tmp)


def _regular_member(archive: tarfile.TarFile, name: str) -> tarfile.TarInfo:
    """The archive's regular file `name`, a link inside the archive followed to the member it names (read from the
    archive, never from the disk). A link that points outside the archive (an absolute path, '..' past its top), to a
    member it does not have, or round in a loop, and anything but a file, is an OSError that names the member."""
    members = {posixpath.normpath(m.name): m for m in archive.getmembers()}  # the last of a name, as tar extracts
    info = members.get(posixpath.normpath(name))
    if info is None:
        raise OSError(f"the archive has no member {name!r}")
    followed: list[str] = []
    while info.issym() or info.islnk():
        link = info.linkname
        if info.name in followed or len(followed) > 32:
            raise OSError(f"archive member {name!r} is a link in a loop ({' -> '.join(followed + [info.name])})")
        followed.append(info.name)
        # a symbolic link is relative to its own directory, a hard link to the archive's top
        target = posixpath.normpath(posixpath.join(posixpath.dirname(info.name), link) if info.issym() else link)
        if posixpath.isabs(link) or target == ".." or target.startswith("../"):
            raise OSError(f"archive member {name!r} is a link to {link!r}, outside the archive")
        info = members.get(target)
        if info is None:
            raise OSError(f"archive member {name!r} is a link to {link!r}, which the archive does not have")
    if not info.isfile():
        raise OSError(f"archive member {name!r} is not a regular file")
    return info


_SEG = re.compile(rb"<seg\b[^>]*>(.*?)</seg>", re.DOTALL)


def xml_segments(data: bytes, where: str) -> bytes:
    """The text of each <seg> element of a WIT3 (IWSLT) XML file, in document order, one per line, its XML entities
    decoded and inner whitespace collapsed: the sentences of a dev or test set. A segment that is not UTF-8 is an
    OSError naming `where`, its line and the segment."""
    import html
    segments = []
    for number, match in enumerate(_SEG.finditer(data), start=1):
        try:
            text = match.group(1).decode("utf-8")
        except UnicodeDecodeError as err:
            line = data.count(b"\n", 0, match.start(1) + err.start) + 1
            raise OSError(f"{where}:{line}: <seg> {number} is not valid UTF-8 (byte "
                          f"{err.object[err.start]:#04x})") from None
        segments.append(" ".join(html.unescape(text).split()))
    if not segments:
        raise OSError(f"{where} has no <seg> elements: not a WIT3 XML file")
    return ("\n".join(segments) + "\n").encode("utf-8")


# --------------------------------------------------------------------------------------------------------------------
# the API

def fetch_file(corpus: str, name: str, dest_dir: str | os.PathLike, *, mirror: str | os.PathLike | None,
               checksums: str | os.PathLike | None = None, allow_network: bool = True, accept_licence: bool = False,
               progress: bool | None = None, registry: Registry | str | os.PathLike | None = None) -> Path:
    """Provide ``dest_dir/name`` for one registry file, verified; return its path.

    ``mirror``: a directory laid out like ../shared/data (or None); ``checksums``: the checksum file consulted (with
    the repository's) for sums the registry does not give and where first downloads record theirs (default:
    :func:`recorded_checksums_file`); ``allow_network``: False = never
    download; ``accept_licence``: needed to download a licence-gated corpus; ``progress``: show a download progress
    bar (None = when stderr is a terminal); ``registry``: a loaded registry or a registry file (default: packaged).
    Raises :class:`FetchError` when the file cannot be provided, with what was tried and how to provide it.
    """
    registry = _resolve_registry(registry)
    spec, entry = _entry(registry, corpus, name)
    label = f"{corpus}/{name}"
    dest_dir = Path(dest_dir)
    dest_dir.mkdir(parents=True, exist_ok=True)
    final = dest_dir / name
    checksums = Path(checksums) if checksums is not None else recorded_checksums_file()
    if progress is None:
        progress = sys.stderr.isatty()

    recorded = read_checksums(COMMITTED_CHECKSUMS).get((corpus, name)) or read_checksums(checksums).get((corpus, name))
    expected = entry.sha256 or recorded
    if entry.sha256 and recorded and recorded != entry.sha256:
        log.warning("%s: %s lists sha256 %s for %s, the registry %s; the registry wins",
                    checksums, label, recorded, label, entry.sha256)

    def record(sha: str, source: str) -> None:
        record_checksum(checksums, corpus, name, sha)
        log.warning("recorded sha256 %s for %s in %s (first fetch, from %s; it is verified from now on - to share "
                    "it, give it in the registry, nmt/data/corpora.yaml)", sha, label, checksums, source)

    if _verified_already(final, expected, label):  # 1. already there
        return final
    mirror_path = Path(mirror) / entry.mirror if mirror is not None and entry.mirror is not None else None
    if mirror_path is not None and mirror_path.is_file():  # 2. the mirror
        _copy_from_mirror(mirror_path, final, expected, label, record)
        return final
    # 3. download
    looked, provide, how = _how_to_provide(mirror, mirror_path, entry, final)
    if spec.licence_gated and not accept_licence:
        flag = spec.accept_flag or "accept_licence=True"
        raise FetchError(
            f"cannot get {label}: {corpus} is licence-gated ({spec.licence.strip()}) and is never downloaded "
            f"without your consent, and {looked}. Read and accept the licence at "
            f"{spec.homepage or entry.url}, then either set the config flag `{flag}: true` to let the "
            f"pipeline download it from {entry.url}, or {provide}.")
    if not allow_network:
        raise FetchError(f"cannot get {label}: {looked} and downloads are disabled (allow_network=False; "
                         f"the URL is {entry.url}). {how}")
    download = _download_any(corpus, name, entry, dest_dir, expected, progress, label, looked, how)
    _materialise_verified(download, entry, final, expected, label, record)
    log.info("%s: downloaded from %s", label, entry.url)
    _clean_download(download, registry[corpus], entry.url, dest_dir)
    return final


def _verified_already(final: Path, expected: str | None, label: str) -> bool:
    """Whether ``final`` is there and matches its checksum; one that does not is moved aside to NAME.rejected."""
    if not final.is_file():
        return False
    if expected is None:
        log.warning("%s exists but no sha256 is known for %s to verify it; fetching it again", final, label)
        return False
    got = sha256_file(final)
    if got == expected:
        log.info("%s: reusing verified %s", label, final)
        return True
    rejected = final.with_name(final.name + ".rejected")
    os.replace(final, rejected)  # never leave a file that fails verification under the final name
    log.warning("%s fails verification (expected %s, got %s): moved to %s; fetching it again",
                final, expected, got, rejected)
    return False


def _copy_from_mirror(mirror_path: Path, final: Path, expected: str | None, label: str, record) -> None:
    got = sha256_file(mirror_path)
    if expected is not None and got != expected:
        raise _mismatch(expected, got, str(mirror_path))
    with _temporary_beside(final) as tmp:
        with open(mirror_path, "rb") as src:
            copied = _copy_hashing(src, tmp)
        if copied != got:
            raise FetchError(f"{mirror_path} changed while it was copied for {label} "
                             f"(sha256 {got}, then {copied}); try again")
        if expected is None:
            record(copied, str(mirror_path))
        os.replace(tmp, final)
    log.info("%s: copied from the mirror %s", label, mirror_path)


def _how_to_provide(mirror, mirror_path: Path | None, entry: CorpusFile, final: Path) -> tuple[str, str, str]:
    """For the messages of a file that must be downloaded: where it was looked for, where a copy may be put, and
    the sentence that says what to do."""
    if mirror is None:
        looked = "no mirror directory is set (data.mirror)"
    elif entry.mirror is None:
        looked = f"the registry gives no mirror path for it (mirror directory {mirror})"
    else:
        looked = f"not in the mirror (looked for {mirror_path})"
    if mirror_path is not None:
        provide = f"put a copy you obtained at {mirror_path}"
    elif entry.mirror is not None:
        provide = f"set data.mirror to a directory that holds {entry.mirror}"
    else:
        provide = f"put a copy you obtained at {final} (its sha256 is checked)"
    if mirror_path is not None:
        how = "Put the file there, set data.mirror to a directory that has it, or run with network access."
    else:
        how = f"{provide[0].upper()}{provide[1:]}, or run with network access."
    return looked, provide, how


def _download_any(corpus: str, name: str, entry: CorpusFile, dest_dir: Path, expected: str | None, progress: bool,
                  label: str, looked: str, how: str) -> Path:
    """The downloaded file (sacreBLEU's test sets through sacreBLEU, the rest with pooch)."""
    try:
        if entry.sacrebleu is not None:
            return _download_sacrebleu(entry, dest_dir)
        return _download(corpus, name, entry, dest_dir, expected, progress)
    except ValueError as exc:
        match = re.search(r"does not match the known hash: expected \S+ but got ([0-9a-fA-F]+)", str(exc))
        if match is None:
            raise FetchError(f"cannot get {label}: the download from {entry.url} failed ({_reason(exc)}). "
                             f"{how}") from exc
        raise _mismatch(expected, match.group(1).lower(), f"{entry.url} (downloaded)") from None
    except Exception as exc:  # network, HTTP, file system
        raise FetchError(f"cannot get {label}: {looked} and the download from {entry.url} failed "
                         f"({_reason(exc)}). {how}") from exc


def _materialise_verified(download: Path, entry: CorpusFile, final: Path, expected: str | None, label: str,
                          record) -> None:
    """The file out of the download (decompressed or extracted as the registry says), verified, at ``final``."""
    with _temporary_beside(final) as tmp:
        try:
            got = _materialise(download, entry, tmp)
        except (OSError, EOFError, tarfile.TarError, zlib.error) as exc:  # (gzip's BadGzipFile is an OSError)
            download.unlink(missing_ok=True)  # never reused: the next run downloads it again
            raise FetchError(f"cannot get {label}: the download from {entry.url} could not be "
                             f"{'decompressed' if entry.compression == 'gzip' else 'read'} ({_reason(exc)}); "
                             f"it was deleted ({download}), run again to download it afresh") from exc
        if expected is not None and got != expected:
            download.unlink(missing_ok=True)
            raise _mismatch(expected, got, f"{entry.url} (downloaded)")
        if expected is None:
            record(got, entry.url)
        os.replace(tmp, final)


def _clean_download(download: Path, spec: Corpus, url: str, dest_dir: Path) -> None:
    """Remove the downloaded file once every registry file that comes from it is in ``dest_dir``."""
    needed = [n for n, e in spec.files.items() if e.url == url]
    if all((dest_dir / n).is_file() for n in needed):
        download.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            download.parent.rmdir()  # only when empty


def fetch_corpus(corpus: str, names: list[str] | None, dest_dir: str | os.PathLike, **kwargs) -> dict[str, Path]:
    """Fetch several files of one corpus (all of them when ``names`` is None) with :func:`fetch_file`; same keyword
    arguments. Returns ``{name: path}`` in registry order."""
    registry = _resolve_registry(kwargs.pop("registry", None))
    if corpus not in registry:
        raise FetchError(f"unknown corpus {corpus!r}: the registry has {', '.join(sorted(registry))}")
    wanted = list(registry[corpus].files) if names is None else list(names)
    for name in wanted:
        _entry(registry, corpus, name)
    return {name: fetch_file(corpus, name, dest_dir, registry=registry, **kwargs) for name in wanted}
