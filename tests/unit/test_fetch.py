"""The corpus registry and `nmt.data.fetch`: registry validity, the registry's sums against ../shared/data, mirror
copies (good, corrupted, truncated), downloads from a local HTTP server (gzip, tar members, resume, record-on-first-
download, tampered files), clear errors offline, and licence-gated corpora. No real network is used."""

from __future__ import annotations

import gzip
import hashlib
import http.server
import io
import logging
import re
import socket
import tarfile
import threading
from pathlib import Path

import pytest
import yaml

import nmt.data.corpus_registry as registry_module
import nmt.data.fetch as fetch_module
from nmt.data.corpus_registry import load_registry
from nmt.data.fetch import (
    COMMITTED_CHECKSUMS,
    FetchError,
    fetch_corpus,
    fetch_file,
    read_checksums,
    record_checksum,
    sha256_file,
)

import required

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"
needs_shared = required.skip_unless(SHARED.is_dir(), "../shared/data is not present")

REQUIRED_CORPORA = {
    "multi30k",
    "wmt14_en_de_stanford",
    "iwslt15_en_vi_stanford",
    "europarl_v7_de_en",
    "rwth_de_en_gold",
    "wmt_opennmt_sample",
}


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def final_names(directory: Path) -> list[str]:
    """Everything in a destination directory except the download cache."""
    return sorted(p.name for p in directory.iterdir() if p.name != ".download") if directory.exists() else []


# ------------------------------------------------------------------------------------------------------------------
# a local HTTP server: serves bytes from a dict, honours Range, can cut the first transfer of a path short


class _Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):  # keep the test output clean
        pass

    def do_GET(self):
        server = self.server
        server.requests.append((self.path, self.headers.get("Range")))
        data = server.files.get(self.path)
        if data is None:
            self.send_error(404, "Not Found")
            return
        if self.path in server.cut_once:
            server.cut_once.discard(self.path)
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        start = 0
        rng = self.headers.get("Range")
        if rng and rng.startswith("bytes=") and rng.endswith("-"):
            start = int(rng[len("bytes=") : -1])
            if start >= len(data):
                self.send_error(416, "Range Not Satisfiable")
                return
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        else:
            self.send_response(200)
        self.send_header("Content-Length", str(len(data) - start))
        self.end_headers()
        self.wfile.write(data[start:])


@pytest.fixture
def server():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.files, httpd.requests, httpd.cut_once = {}, [], set()
    httpd.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    # shutdown() waits for the loop's next poll: half a second at the default interval, for every test
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield httpd
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


def closed_port_url(path: str) -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}{path}"


def write_registry(path: Path, corpora: dict) -> dict:
    path.write_text(yaml.safe_dump(corpora, sort_keys=False), encoding="utf-8")
    return load_registry(path)


def corpus(files: dict, **extra) -> dict:
    return {"description": "a test corpus", "licence": "test data", "languages": ["en", "de"], **extra, "files": files}


TEXT_A = "".join(f"line {i} of file a, with ümlauts\n" for i in range(2000)).encode()
TEXT_B = "".join(f"Zeile {i} der Datei b\n" for i in range(1500)).encode()


# ------------------------------------------------------------------------------------------------------------------
# the registry


def test_registry_loads_and_every_entry_is_valid():
    registry = load_registry()
    assert REQUIRED_CORPORA <= set(registry)
    for name, spec in registry.items():
        assert spec.description.strip() and spec.licence.strip() and spec.languages, name
        for fname, entry in spec.files.items():
            assert entry.url.startswith(("https://", "http://")), (name, fname)
            assert entry.mirror is None or not entry.mirror.startswith("/"), (name, fname)
            assert entry.sha256 is None or len(entry.sha256) == 64, (name, fname)
            if entry.compression == "gzip":
                assert entry.url.endswith(".gz"), (name, fname)
    m30k = registry["multi30k"].files
    for split in ("train", "val", "test_2016_flickr", "test_2017_flickr", "test_2017_mscoco"):
        for lang in ("en", "de"):
            entry = m30k[f"{split}.{lang}"]
            assert entry.compression == "gzip" and entry.sha256 and "/data/task1/raw/" in entry.url
            assert "a3d2e0d26b56f3846f66a952536ffed4e401d05a" in entry.url
    wmt = registry["wmt14_en_de_stanford"].files
    assert {"train.en", "train.de", "vocab.50K.en", "vocab.50K.de", "dict.en-de"} <= set(wmt)
    assert {f"newstest{y}.{side}" for y in range(2012, 2016) for side in ("en", "de")} <= set(wmt)
    assert all(e.url.startswith("https://nlp.stanford.edu/projects/nmt/data/wmt14.en-de/") for e in wmt.values())
    assert registry["rwth_de_en_gold"].licence_gated is True
    assert {"de", "en", "alignmentDeEn.talp"} <= set(registry["rwth_de_en_gold"].files)
    assert all(not registry[c].licence_gated for c in registry if c != "rwth_de_en_gold")
    europarl = registry["europarl_v7_de_en"].files
    assert all(e.compression == "tar.gz" and e.member for e in europarl.values())
    # registry sums and the packaged checksum file never disagree
    packaged = read_checksums(COMMITTED_CHECKSUMS)
    for (c, n), s in packaged.items():
        assert registry[c].files[n].sha256 in (None, s), (c, n)


GOOD_FILE = {"url": "https://example.org/a.txt", "mirror": "test/a.txt", "sha256": "0" * 64}


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda f: f.update(colour="blue"), "('colour' was unexpected)"),
        (lambda f: f.pop("url"), ": 'url' is a required property"),
        (lambda f: f.pop("mirror"), ": 'mirror' is a required property"),
        (lambda f: f.pop("sha256"), ": 'sha256' is a required property"),
        (lambda f: f.update(sha256="abc123"), ".sha256: 'abc123' does not match"),
        (lambda f: f.update(sha256="A" * 64), ".sha256: 'AAAA"),
        (lambda f: f.update(url="ssh://example.org/a"), ".url: 'ssh://example.org/a' does not match"),
        (lambda f: f.update(mirror="../escape/a.txt"), ": mirror '../escape/a.txt' must be a relative path"),
        (lambda f: f.update(mirror="/abs/a.txt"), ": mirror '/abs/a.txt' must be a relative path"),
        (lambda f: f.update(compression="zip"), ".compression: 'zip' is not one of"),
        (lambda f: f.update(compression="tar.gz"), ": compression tar.gz needs `member:`"),
        (lambda f: f.update(compression="tar.gz", member="../a.txt"), ": member '../a.txt' must be a relative path"),
        (lambda f: f.update(member="x/a.txt"), ": `member:` is only meaningful with compression tar"),
        (lambda f: f.update(lines=-1), ".lines: -1 is less than the minimum of 0"),
        (
            lambda f: f.update(sacrebleu={"testset": "wmt14", "langpair": "en-de", "side": "both"}),
            ".sacrebleu.side: 'both'",
        ),
        (
            lambda f: f.update(sacrebleu={"testset": "wmt14", "langpair": "en-de", "side": "src"}, compression="gzip"),
            ": a sacrebleu file takes no compression",
        ),
    ],
)
def test_registry_errors_name_corpus_and_file(tmp_path, mutate, message):
    entry = dict(GOOD_FILE)
    mutate(entry)
    path = tmp_path / "corpora.yaml"
    path.write_text(yaml.safe_dump({"toy": corpus({"a.txt": entry})}), encoding="utf-8")
    with pytest.raises(ValueError) as err:
        load_registry(path)
    assert str(err.value).startswith(f"{path}: toy.files.a.txt") and message in str(err.value)


def test_registry_errors_at_corpus_level(tmp_path):
    path = tmp_path / "corpora.yaml"
    bad = corpus({"a.txt": GOOD_FILE}, licence_gated="yes")
    path.write_text(yaml.safe_dump({"toy": bad}), encoding="utf-8")
    with pytest.raises(ValueError, match="toy.licence_gated: 'yes' is not of type 'boolean'"):
        load_registry(path)
    no_licence = corpus({"a.txt": GOOD_FILE})
    del no_licence["licence"]
    path.write_text(yaml.safe_dump({"toy": no_licence}), encoding="utf-8")
    with pytest.raises(ValueError, match="toy: 'licence' is a required property"):
        load_registry(path)
    path.write_text("toy:\n  description: x\n  description: y\n", encoding="utf-8")
    with pytest.raises(ValueError, match="duplicate key 'description'"):
        load_registry(path)
    for data, message in (
        ({"toy": corpus({"sub/a.txt": GOOD_FILE})}, "toy.files: 'sub/a.txt' does not match"),
        ({"toy": corpus({})}, "toy.files: {} should be non-empty"),
        ({"to y": corpus({"a.txt": GOOD_FILE})}, "'to y' does not match"),
    ):
        path.write_text(yaml.safe_dump(data), encoding="utf-8")
        with pytest.raises(ValueError, match=re.escape(f"{path}: {message}")):
            load_registry(path)


def test_a_registry_entry_reads_every_key_it_leaves_out_at_its_declared_default(tmp_path):
    from nmt.data.corpus_registry import CorpusFile

    registry = write_registry(tmp_path / "corpora.yaml", {"toy": corpus({"a.txt": GOOD_FILE})})
    entry = registry["toy"].files["a.txt"]
    assert (entry.compression, entry.member, entry.sacrebleu, entry.lines) == (None, None, None, None)
    assert registry["toy"].licence_gated is False and registry["toy"].accept_flag is None
    assert entry == CorpusFile.read(GOOD_FILE)


def test_checksum_file_is_validated_and_kept_sorted(tmp_path):
    checks = tmp_path / "checksums.tsv"
    record_checksum(checks, "zeta", "b", "b" * 64)
    record_checksum(checks, "alpha", "a", "a" * 64)
    record_checksum(checks, "alpha", "a", "a" * 64)  # idempotent
    lines = [line for line in checks.read_text().splitlines() if not line.startswith("#")]
    assert lines == [f"alpha\ta\t{'a' * 64}", f"zeta\tb\t{'b' * 64}"]
    with pytest.raises(FetchError, match="refusing to overwrite"):
        record_checksum(checks, "alpha", "a", "c" * 64)
    checks.write_text("alpha a deadbeef\n")
    with pytest.raises(ValueError, match=r"checksums.tsv:1: expected 'corpus<TAB>name<TAB>sha256'"):
        read_checksums(checks)


# ------------------------------------------------------------------------------------------------------------------
# the registry against the real files in ../shared/data


@needs_shared
def test_registry_sums_match_the_shared_data_files():
    registry = load_registry()
    packaged = read_checksums(COMMITTED_CHECKSUMS)
    verified, mirrored = [], set()
    for name, spec in registry.items():
        for fname, entry in spec.files.items():
            if entry.mirror is None:
                continue
            path = SHARED / entry.mirror
            if not path.is_file():
                continue
            mirrored.add(entry.mirror)
            expected = entry.sha256 or packaged.get((name, fname))
            assert expected, f"{name}/{fname}: {path} exists but neither the registry nor checksums.tsv has its sum"
            assert sha256_file(path) == expected, f"{name}/{fname}: registry sum does not match {path}"
            verified.append(f"{name}/{fname}")
    assert len(verified) >= 30, verified
    # and every data file there is registered (so the whole folder can serve as data.mirror)
    on_disk = {
        p.relative_to(SHARED).as_posix()
        for p in SHARED.rglob("*")
        if p.is_file() and p.name not in ("README.md", "SOURCE.md")
    }
    assert on_disk - mirrored == set(), f"files in {SHARED} that no registry entry points at"


@needs_shared
def test_fetch_from_the_real_mirror(tmp_path):
    dest = tmp_path / "raw"
    got = fetch_corpus(
        "multi30k",
        ["test_2017_mscoco.en", "test_2017_mscoco.de"],
        dest,
        mirror=SHARED,
        checksums=tmp_path / "checksums.tsv",
        allow_network=False,
    )
    assert got == {name: dest / name for name in ("test_2017_mscoco.en", "test_2017_mscoco.de")}
    assert got["test_2017_mscoco.en"].read_bytes() == (SHARED / "multi30k/raw/test_2017_mscoco.en").read_bytes()
    assert final_names(dest) == ["test_2017_mscoco.de", "test_2017_mscoco.en"]
    assert not (tmp_path / "checksums.tsv").exists()  # nothing recorded: the registry knows the sums
    # a licence-gated corpus is fine from the mirror without accepting anything here (the copy was obtained by hand)
    talp = fetch_file(
        "rwth_de_en_gold",
        "alignmentDeEn.talp",
        dest,
        mirror=SHARED,
        checksums=tmp_path / "checksums.tsv",
        allow_network=False,
    )
    assert sha256_file(talp) == "ea038818e0dfd1ff777648071f12c7898c998a44ae4454d9ad280539a168993a"


@needs_shared
@pytest.mark.parametrize("damage", ["flip", "truncate"])
def test_corrupted_copy_of_a_real_file_is_refused(tmp_path, damage):
    mirror = tmp_path / "mirror"
    target = mirror / "multi30k/raw/test_2017_mscoco.en"
    target.parent.mkdir(parents=True)
    data = bytearray((SHARED / "multi30k/raw/test_2017_mscoco.en").read_bytes())
    if damage == "flip":
        data[1000] ^= 0x01
    else:
        data = data[: len(data) - 100]
    target.write_bytes(bytes(data))
    dest = tmp_path / "dest"
    with pytest.raises(FetchError) as err:
        fetch_file(
            "multi30k", "test_2017_mscoco.en", dest, mirror=mirror, checksums=tmp_path / "c.tsv", allow_network=False
        )
    msg = str(err.value)
    assert "sha256 mismatch: expected 43051fdfa86fd5395182e718a94ca67b1b227b9f7c79596ff0f6b813216981d2" in msg
    assert f"got {sha(bytes(data))} for {target} (corrupt or truncated copy?)" in msg
    assert final_names(dest) == []


# ------------------------------------------------------------------------------------------------------------------
# mirror copies with a fake registry


@pytest.fixture
def toy(tmp_path):
    """A fake registry whose file a.txt is in a tmp mirror; its URL points at a closed port."""
    mirror = tmp_path / "mirror"
    (mirror / "toy").mkdir(parents=True)
    (mirror / "toy/a.txt").write_bytes(TEXT_A)
    registry = write_registry(
        tmp_path / "corpora.yaml",
        {
            "toy": corpus(
                {
                    "a.txt": {"url": closed_port_url("/a.txt"), "mirror": "toy/a.txt", "sha256": sha(TEXT_A)},
                    "b.txt": {"url": closed_port_url("/b.txt"), "mirror": "toy/b.txt", "sha256": None},
                }
            )
        },
    )
    return registry, mirror


def test_mirror_copy_and_reuse(tmp_path, toy):
    registry, mirror = toy
    dest = tmp_path / "dest"
    kw = dict(mirror=mirror, checksums=tmp_path / "c.tsv", allow_network=False, registry=registry)
    path = fetch_file("toy", "a.txt", dest, **kw)
    assert path == dest / "a.txt" and path.read_bytes() == TEXT_A
    (mirror / "toy/a.txt").unlink()  # now only dest has it: it is reused after verification
    assert fetch_file("toy", "a.txt", dest, **kw).read_bytes() == TEXT_A
    assert final_names(dest) == ["a.txt"]


def test_mirror_file_with_unknown_sum_is_recorded(tmp_path, toy, caplog):
    registry, mirror = toy
    (mirror / "toy/b.txt").write_bytes(TEXT_B)
    checks = tmp_path / "c.tsv"
    with caplog.at_level(logging.INFO, logger="nmt.data.fetch"):
        fetch_file(
            "toy", "b.txt", tmp_path / "dest", mirror=mirror, checksums=checks, allow_network=False, registry=registry
        )
    assert read_checksums(checks) == {("toy", "b.txt"): sha(TEXT_B)}
    assert "recorded sha256 " + sha(TEXT_B) + " for toy/b.txt" in caplog.text
    # from now on the recorded sum is enforced
    (mirror / "toy/b.txt").write_bytes(TEXT_B + b"extra\n")
    with pytest.raises(FetchError, match="sha256 mismatch: expected " + sha(TEXT_B)):
        fetch_file(
            "toy", "b.txt", tmp_path / "dest2", mirror=mirror, checksums=checks, allow_network=False, registry=registry
        )


def test_a_first_fetch_records_its_sum_in_the_users_file_and_never_in_the_package(tmp_path, toy, monkeypatch):
    """The sum lands in the user's checksum file (NMT_CHECKSUMS here), so the package's checksums.tsv, a dependency
    of the pipeline's stages, is never written; a sum in the repository's file is enforced as well."""
    registry, mirror = toy
    (mirror / "toy/b.txt").write_bytes(TEXT_B)
    committed = COMMITTED_CHECKSUMS.read_bytes()
    monkeypatch.setenv("NMT_CHECKSUMS", str(tmp_path / "mine" / "checksums.tsv"))
    fetch_file("toy", "b.txt", tmp_path / "dest", mirror=mirror, allow_network=False, registry=registry)
    assert read_checksums(tmp_path / "mine" / "checksums.tsv") == {("toy", "b.txt"): sha(TEXT_B)}
    assert COMMITTED_CHECKSUMS.read_bytes() == committed
    repository = tmp_path / "repository.tsv"
    repository.write_text(f"toy\tb.txt\t{'0' * 64}\n")
    monkeypatch.setattr(fetch_module, "COMMITTED_CHECKSUMS", repository)
    with pytest.raises(FetchError, match="sha256 mismatch: expected " + "0" * 64):
        fetch_file("toy", "b.txt", tmp_path / "dest2", mirror=mirror, allow_network=False, registry=registry)


@pytest.mark.parametrize("damage", ["flip", "truncate"])
def test_corrupted_mirror_is_never_copied(tmp_path, toy, damage):
    registry, mirror = toy
    bad = bytearray(TEXT_A)
    if damage == "flip":
        bad[len(bad) // 2] ^= 0x20
    else:
        bad = bad[: len(bad) // 3]
    (mirror / "toy/a.txt").write_bytes(bytes(bad))
    dest = tmp_path / "dest"
    with pytest.raises(FetchError) as err:
        fetch_file("toy", "a.txt", dest, mirror=mirror, checksums=tmp_path / "c.tsv", registry=registry)
    assert str(err.value) == (
        f"sha256 mismatch: expected {sha(TEXT_A)}, got {sha(bytes(bad))} for "
        f"{mirror / 'toy/a.txt'} (corrupt or truncated copy?)"
    )
    assert final_names(dest) == []


def test_existing_file_that_fails_verification_is_replaced(tmp_path, toy):
    registry, mirror = toy
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "a.txt").write_bytes(TEXT_A[:100])  # e.g. a truncated copy from an old run
    path = fetch_file("toy", "a.txt", dest, mirror=mirror, checksums=tmp_path / "c.tsv", registry=registry)
    assert path.read_bytes() == TEXT_A
    assert (dest / "a.txt.rejected").read_bytes() == TEXT_A[:100]


# ------------------------------------------------------------------------------------------------------------------
# no mirror, no network


def test_offline_without_mirror_gives_one_clear_error(tmp_path, toy):
    registry, _ = toy
    empty = tmp_path / "empty_mirror"
    empty.mkdir()
    dest = tmp_path / "dest"
    with pytest.raises(FetchError) as err:
        fetch_file(
            "toy", "a.txt", dest, mirror=empty, checksums=tmp_path / "c.tsv", allow_network=False, registry=registry
        )
    msg = str(err.value)
    assert msg.startswith(f"cannot get toy/a.txt: not in the mirror (looked for {empty / 'toy/a.txt'})")
    assert "downloads are disabled" in msg
    assert "Put the file there, set data.mirror to a directory that has it, or run with network access." in msg
    assert final_names(dest) == []


def test_failed_download_gives_one_clear_error(tmp_path, toy):
    registry, _ = toy
    empty = tmp_path / "empty_mirror"
    empty.mkdir()
    url = registry["toy"].files["a.txt"].url
    dest = tmp_path / "dest"
    with pytest.raises(FetchError) as err:
        fetch_file("toy", "a.txt", dest, mirror=empty, checksums=tmp_path / "c.tsv", registry=registry)
    msg = str(err.value)
    assert msg.startswith(
        f"cannot get toy/a.txt: not in the mirror (looked for {empty / 'toy/a.txt'}) and the "
        f"download from {url} failed ("
    )
    assert "onnection refused" in msg  # the reason, shortened from the requests exception
    assert msg.endswith("Put the file there, set data.mirror to a directory that has it, or run with network access.")
    assert final_names(dest) == []
    # without any mirror directory the message says so
    with pytest.raises(
        FetchError,
        match=r"cannot get toy/a.txt: no mirror directory is set \(data.mirror\) .*"
        r"Set data.mirror to a directory that holds toy/a.txt, or run with",
    ):
        fetch_file(
            "toy", "a.txt", dest, mirror=None, checksums=tmp_path / "c.tsv", allow_network=False, registry=registry
        )


def test_unknown_corpus_or_file(tmp_path, toy):
    registry, mirror = toy
    with pytest.raises(FetchError, match="unknown corpus 'nope'"):
        fetch_file("nope", "a.txt", tmp_path, mirror=mirror, checksums=tmp_path / "c.tsv", registry=registry)
    with pytest.raises(FetchError, match="unknown file 'c.txt' in corpus toy: it has a.txt, b.txt"):
        fetch_corpus(
            "toy", ["a.txt", "c.txt"], tmp_path, mirror=mirror, checksums=tmp_path / "c.tsv", registry=registry
        )


# ------------------------------------------------------------------------------------------------------------------
# downloads from a local HTTP server


def test_download_gzip_record_then_tampered_server_file_fails(tmp_path, server, caplog):
    server.files["/a.txt"] = TEXT_A
    server.files["/b.txt.gz"] = gzip.compress(TEXT_B)
    registry = write_registry(
        tmp_path / "corpora.yaml",
        {
            "web": corpus(
                {
                    "a.txt": {"url": server.url + "/a.txt", "mirror": "web/a.txt", "sha256": None},
                    "b.txt": {
                        "url": server.url + "/b.txt.gz",
                        "compression": "gzip",
                        "mirror": "web/b.txt",
                        "sha256": None,
                    },
                }
            )
        },
    )
    checks = tmp_path / "checksums.tsv"
    kw = dict(mirror=tmp_path / "no_mirror", checksums=checks, registry=registry)
    dest = tmp_path / "dest"
    with caplog.at_level(logging.INFO, logger="nmt.data.fetch"):
        got = fetch_corpus("web", None, dest, progress=True, **kw)
    assert got["a.txt"].read_bytes() == TEXT_A and got["b.txt"].read_bytes() == TEXT_B  # decompressed
    assert read_checksums(checks) == {("web", "a.txt"): sha(TEXT_A), ("web", "b.txt"): sha(TEXT_B)}
    assert caplog.text.count("recorded sha256") == 2
    assert final_names(dest) == ["a.txt", "b.txt"] and not (dest / ".download").exists()

    # a second fetch reuses the verified files: no request
    before = len(server.requests)
    fetch_corpus("web", None, dest, **kw)
    assert len(server.requests) == before

    # the server's files change: a fresh fetch fails verification against the recorded sums
    server.files["/a.txt"] = TEXT_A.replace(b"line 7 ", b"line 8 ")
    server.files["/b.txt.gz"] = gzip.compress(TEXT_B[:-50])
    fresh = tmp_path / "fresh"
    with pytest.raises(FetchError) as err:
        fetch_file("web", "a.txt", fresh, **kw)
    assert str(err.value) == (
        f"sha256 mismatch: expected {sha(TEXT_A)}, got {sha(server.files['/a.txt'])} for "
        f"{server.url}/a.txt (downloaded) (corrupt or truncated copy?)"
    )
    with pytest.raises(FetchError) as err:
        fetch_file("web", "b.txt", fresh, **kw)
    expected = f"sha256 mismatch: expected {sha(TEXT_B)}, got {sha(TEXT_B[:-50])} for {server.url}/b.txt.gz"
    assert expected in str(err.value)
    assert final_names(fresh) == []
    assert not (fresh / ".download").exists() or not any((fresh / ".download").iterdir())


def test_download_with_registry_sum_verifies(tmp_path, server):
    server.files["/a.txt"] = TEXT_A
    registry = write_registry(
        tmp_path / "corpora.yaml",
        {"web": corpus({"a.txt": {"url": server.url + "/a.txt", "mirror": "web/a.txt", "sha256": sha(TEXT_A)}})},
    )
    checks = tmp_path / "checksums.tsv"
    dest = tmp_path / "dest"
    assert fetch_file("web", "a.txt", dest, mirror=None, checksums=checks, registry=registry).read_bytes() == TEXT_A
    assert not checks.exists()  # the registry knew the sum: nothing to record
    server.files["/a.txt"] = TEXT_A[:-1]  # truncated upstream
    with pytest.raises(FetchError, match="sha256 mismatch: expected " + sha(TEXT_A)):
        fetch_file("web", "a.txt", tmp_path / "dest2", mirror=None, checksums=checks, registry=registry)
    assert final_names(tmp_path / "dest2") == []


def test_interrupted_download_resumes(tmp_path, server):
    big = TEXT_A * 20  # ~750 KB
    server.files["/big.txt"] = big
    server.cut_once.add("/big.txt")
    registry = write_registry(
        tmp_path / "corpora.yaml",
        {"web": corpus({"big.txt": {"url": server.url + "/big.txt", "mirror": "web/big.txt", "sha256": sha(big)}})},
    )
    dest = tmp_path / "dest"
    kw = dict(mirror=None, checksums=tmp_path / "c.tsv", registry=registry)
    with pytest.raises(FetchError, match="the download from .*/big.txt failed"):
        fetch_file("web", "big.txt", dest, **kw)
    assert final_names(dest) == []
    parts = list((dest / ".download").glob("*.part"))
    assert len(parts) == 1 and 0 < parts[0].stat().st_size < len(big)
    have = parts[0].stat().st_size
    assert fetch_file("web", "big.txt", dest, **kw).read_bytes() == big
    assert server.requests[-1] == ("/big.txt", f"bytes={have}-")  # only the rest was asked for
    assert not (dest / ".download").exists()


def test_tar_members_share_one_download(tmp_path, server):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as archive:
        for member, data in (("DeEn/de", TEXT_B), ("DeEn/en", TEXT_A)):
            info = tarfile.TarInfo(member)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    server.files["/gold.tar.gz"] = buf.getvalue()
    url = server.url + "/gold.tar.gz"
    registry = write_registry(
        tmp_path / "corpora.yaml",
        {
            "gold": corpus(
                {
                    "de": {
                        "url": url,
                        "compression": "tar.gz",
                        "member": "DeEn/de",
                        "mirror": "gold/de",
                        "sha256": sha(TEXT_B),
                    },
                    "en": {
                        "url": url,
                        "compression": "tar.gz",
                        "member": "DeEn/en",
                        "mirror": "gold/en",
                        "sha256": None,
                    },
                }
            )
        },
    )
    dest = tmp_path / "dest"
    got = fetch_corpus("gold", None, dest, mirror=None, checksums=tmp_path / "c.tsv", registry=registry)
    assert got["de"].read_bytes() == TEXT_B and got["en"].read_bytes() == TEXT_A
    assert [path for path, _ in server.requests] == ["/gold.tar.gz"]  # downloaded once
    assert read_checksums(tmp_path / "c.tsv") == {("gold", "en"): sha(TEXT_A)}
    assert final_names(dest) == ["de", "en"] and not (dest / ".download").exists()


# ------------------------------------------------------------------------------------------------------------------
# broken downloads: one line naming the file, the download deleted, and the next run fetches it again


def tar_archive(*members) -> bytes:
    """A tar.gz of (name, bytes) regular files and (name, "symlink" | "hardlink", target) links."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as archive:
        for member in members:
            info = tarfile.TarInfo(member[0])
            if len(member) == 3:
                info.type = tarfile.SYMTYPE if member[1] == "symlink" else tarfile.LNKTYPE
                info.linkname = member[2]
                archive.addfile(info)
            else:
                info.size = len(member[1])
                archive.addfile(info, io.BytesIO(member[1]))
    return buf.getvalue()


def xml_file(*segments: bytes) -> bytes:
    body = b"".join(b'<seg id="%d"> %s </seg>\n' % (i, s) for i, s in enumerate(segments, start=1))
    return b'<?xml version="1.0" encoding="UTF-8"?>\n<mteval>\n<doc docid="1">\n' + body + b"</doc>\n</mteval>\n"


GOOD_XML = xml_file("Ein erster Satz.".encode(), "Zw\u00f6lf &amp; mehr.".encode())
BROKEN = {  # name: (what upstream serves first, the file's registry entry, what the one line says)
    "corrupt gzip": (
        gzip.compress(TEXT_B)[:20] + b"\x00" * 40 + gzip.compress(TEXT_B)[60:],
        {"compression": "gzip"},
        "could not be decompressed (Error -3 while decompressing data",
    ),
    "not gzip at all": (
        b"<html>Service unavailable</html>\n",
        {"compression": "gzip"},
        "could not be decompressed (Not a gzipped file",
    ),
    "truncated gzip": (gzip.compress(TEXT_B)[:-100], {"compression": "gzip"}, "could not be decompressed ("),
    "a link member pointing outside": (
        tar_archive(("DeEn/en", TEXT_A), ("DeEn/b", "symlink", "../../../etc/passwd")),
        {"compression": "tar.gz", "member": "DeEn/b"},
        "could not be read (archive member 'DeEn/b' is a link to '../../../etc/passwd', outside the archive)",
    ),
    "an absolute link member": (
        tar_archive(("DeEn/b", "symlink", "/etc/passwd")),
        {"compression": "tar.gz", "member": "DeEn/b"},
        "could not be read (archive member 'DeEn/b' is a link to '/etc/passwd', outside the archive)",
    ),
    "a hard link to a member the archive does not have": (
        tar_archive(("DeEn/b", "hardlink", "DeEn/gone")),
        {"compression": "tar.gz", "member": "DeEn/b"},
        "could not be read (archive member 'DeEn/b' is a link to 'DeEn/gone', which the archive does not have)",
    ),
    "a link in a loop": (
        tar_archive(("DeEn/b", "symlink", "c"), ("DeEn/c", "symlink", "b")),
        {"compression": "tar.gz", "member": "DeEn/b"},
        "could not be read (archive member 'DeEn/b' is a link in a loop (DeEn/b -> DeEn/c -> DeEn/b))",
    ),
    "an XML segment with invalid UTF-8": (
        tar_archive(("xml/test.de.xml", xml_file(b"Ein erster Satz.", b"Zw\xf6lf &amp; mehr."))),
        {"compression": "tar.gz", "member": "xml/test.de.xml", "segments": "xml"},
        "could not be read (xml/test.de.xml:5: <seg> 2 is not valid UTF-8 (byte 0xf6))",
    ),
}
FIXED = {
    "corrupt gzip": gzip.compress(TEXT_B),
    "not gzip at all": gzip.compress(TEXT_B),
    "truncated gzip": gzip.compress(TEXT_B),
    "a link member pointing outside": tar_archive(("DeEn/en", TEXT_B), ("DeEn/b", "symlink", "en")),
    "an absolute link member": tar_archive(("DeEn/b", TEXT_B)),
    "a hard link to a member the archive does not have": tar_archive(
        ("DeEn/gone", TEXT_B), ("DeEn/b", "hardlink", "DeEn/gone")
    ),
    "a link in a loop": tar_archive(("DeEn/c", TEXT_B), ("DeEn/b", "symlink", "c")),
    "an XML segment with invalid UTF-8": tar_archive(("xml/test.de.xml", GOOD_XML)),
}


@pytest.mark.parametrize("known_sum", [False, True], ids=["sum recorded on first fetch", "sum in the registry"])
@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_broken_download_is_one_line_deleted_and_fetched_again_once_upstream_is_fixed(
    tmp_path, server, case, known_sum
):
    served, entry, message = BROKEN[case]
    fixed = FIXED[case]
    expected_text = "Ein erster Satz.\nZw\u00f6lf & mehr.\n".encode() if "XML" in case else TEXT_B
    url_path = "/b.xml.tgz" if "XML" in case else ("/b.txt.gz" if entry["compression"] == "gzip" else "/b.tgz")
    server.files[url_path] = served
    registry = write_registry(
        tmp_path / "corpora.yaml",
        {
            "web": corpus(
                {
                    "b": {
                        "url": server.url + url_path,
                        "mirror": "web/b",
                        "sha256": sha(expected_text) if known_sum else None,
                        **entry,
                    }
                }
            )
        },
    )
    dest, checks = tmp_path / "dest", tmp_path / "checksums.tsv"
    kw = dict(mirror=None, checksums=checks, registry=registry)
    with pytest.raises(FetchError) as err:
        fetch_file("web", "b", dest, **kw)
    text = str(err.value)
    assert "\n" not in text and "b'/" not in text, text
    assert text.startswith(f"cannot get web/b: the download from {server.url}{url_path} {message}"), text
    assert text.endswith("), run again to download it afresh") and str(dest / ".download") in text, text
    assert final_names(dest) == [] and not list((dest / ".download").glob("*")), "kept for reuse"
    assert not checks.exists()  # nothing recorded of a broken file
    server.files[url_path] = fixed  # upstream fixed: the same call downloads it again and succeeds
    requests = len(server.requests)
    assert fetch_file("web", "b", dest, **kw).read_bytes() == expected_text
    assert len(server.requests) == requests + 1 and not (dest / ".download").exists()


def test_a_link_member_inside_the_archive_is_read_from_the_archive(tmp_path, server):
    server.files["/gold.tgz"] = tar_archive(
        ("DeEn/real/de", TEXT_B),
        ("DeEn/de", "symlink", "real/de"),
        ("DeEn/en", TEXT_A),
        ("DeEn/en2", "hardlink", "DeEn/en"),
    )
    registry = write_registry(
        tmp_path / "corpora.yaml",
        {
            "gold": corpus(
                {
                    name: {
                        "url": server.url + "/gold.tgz",
                        "compression": "tar.gz",
                        "member": member,
                        "mirror": None,
                        "sha256": None,
                    }
                    for name, member in (("de", "DeEn/de"), ("en", "./DeEn/en2"))
                }
            )
        },
    )
    got = fetch_corpus("gold", None, tmp_path / "dest", mirror=None, checksums=tmp_path / "c.tsv", registry=registry)
    assert got["de"].read_bytes() == TEXT_B and got["en"].read_bytes() == TEXT_A


def test_data_fetch_of_a_broken_download_is_one_line_exit_2_and_the_rerun_fetches_it_again(
    tmp_path, server, monkeypatch, capsys
):
    from nmt.cli import main

    served, entry, _ = BROKEN["corrupt gzip"]
    server.files["/b.txt.gz"] = served
    monkeypatch.setattr(registry_module, "DEFAULT_REGISTRY", tmp_path / "corpora.yaml")
    write_registry(
        tmp_path / "corpora.yaml",
        {"web": corpus({"b": {"url": server.url + "/b.txt.gz", "mirror": "web/b", "sha256": sha(TEXT_B), **entry}})},
    )
    monkeypatch.setenv("NMT_CHECKSUMS", str(tmp_path / "checksums.tsv"))
    dest = tmp_path / "dest"
    assert main(["data", "fetch", "web", "--dest", str(dest)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(
        f"nmt: error: cannot get web/b: the download from {server.url}/b.txt.gz could not be "
        "decompressed (Error -3 while decompressing data"
    ), err
    server.files["/b.txt.gz"] = gzip.compress(TEXT_B)
    assert main(["data", "fetch", "web", "--dest", str(dest)]) == 0
    assert capsys.readouterr().out.split() == [str(dest / "b")] and (dest / "b").read_bytes() == TEXT_B


def test_file_url(tmp_path):
    src = tmp_path / "upstream" / "a.txt.gz"
    src.parent.mkdir()
    src.write_bytes(gzip.compress(TEXT_A))
    registry = write_registry(
        tmp_path / "corpora.yaml",
        {
            "local": corpus(
                {"a.txt": {"url": src.as_uri(), "compression": "gzip", "mirror": None, "sha256": sha(TEXT_A)}}
            )
        },
    )
    path = fetch_file(
        "local", "a.txt", tmp_path / "dest", mirror=tmp_path, checksums=tmp_path / "c.tsv", registry=registry
    )
    assert path.read_bytes() == TEXT_A


# ------------------------------------------------------------------------------------------------------------------
# licence-gated corpora


def test_licence_gated_corpus_is_never_downloaded_silently(tmp_path, server):
    server.files["/gold/de"] = TEXT_B
    registry = write_registry(
        tmp_path / "corpora.yaml",
        {
            "gated": corpus(
                {"de": {"url": server.url + "/gold/de", "mirror": "gated/de", "sha256": sha(TEXT_B)}},
                licence_gated=True,
                accept_flag="data.accept_gated_licence",
                homepage="https://example.org/licence",
            )
        },
    )
    empty = tmp_path / "mirror"
    empty.mkdir()
    kw = dict(checksums=tmp_path / "c.tsv", registry=registry)
    dest = tmp_path / "dest"
    with pytest.raises(FetchError) as err:
        fetch_file("gated", "de", dest, mirror=empty, **kw)
    msg = str(err.value)
    assert "cannot get gated/de: gated is licence-gated" in msg
    assert "https://example.org/licence" in msg and "`data.accept_gated_licence: true`" in msg
    assert f"looked for {empty / 'gated/de'}" in msg and f"put a copy you obtained at {empty / 'gated/de'}" in msg
    assert server.requests == [] and final_names(dest) == []

    # a copy in the mirror is used without acceptance
    (empty / "gated").mkdir()
    (empty / "gated/de").write_bytes(TEXT_B)
    assert fetch_file("gated", "de", dest, mirror=empty, **kw).read_bytes() == TEXT_B
    assert server.requests == []

    # accepted: downloaded
    got = fetch_file("gated", "de", tmp_path / "dest2", mirror=None, accept_licence=True, **kw)
    assert got.read_bytes() == TEXT_B and [p for p, _ in server.requests] == ["/gold/de"]


def test_real_rwth_entry_refuses_without_acceptance(tmp_path):
    with pytest.raises(FetchError, match=r"licence-gated .*`data.accept_rwth_licence: true`"):
        fetch_file("rwth_de_en_gold", "de", tmp_path / "dest", mirror=tmp_path, checksums=tmp_path / "c.tsv")
    assert final_names(tmp_path / "dest") == []


# ------------------------------------------------------------------------------------------------------------------
# raw WMT test sets through sacreBLEU's own loader


def test_registry_sacrebleu_entries_name_real_sacrebleu_test_sets():
    from sacrebleu.dataset import DATASETS

    raw = load_registry()["wmt_newstest_raw"].files
    assert {f"newstest{y}-ende.{side}" for y in (2012, 2013, 2014, 2015) for side in ("en", "de")} <= set(raw)
    assert {"newstest2015-deen.de", "newstest2015-deen.en"} <= set(raw)
    for name, entry in raw.items():
        sb = entry.sacrebleu
        dataset = DATASETS[sb.testset]
        assert sb.langpair in dataset.langpairs, name
        assert entry.url in dataset.data, name  # the registry names the archive sacreBLEU downloads
        src_lang, tgt_lang = sb.langpair.split("-")
        assert name.endswith("." + (src_lang if sb.side == "src" else tgt_lang)), name


SGML_SRC = (
    '<srcset setid="newstest2015" srclang="any">\n<doc sysid="ref" docid="d1" genre="news" origlang="en">\n'
    '<seg id="1">A first sentence.</seg>\n<seg id="2">"Quoted" & more.</seg>\n</doc>\n</srcset>\n'
)
SGML_REF = (
    '<refset setid="newstest2015" srclang="any">\n<doc sysid="ref" docid="d1" genre="news" origlang="en">\n'
    '<seg id="1">Ein erster Satz.</seg>\n<seg id="2">"Zitiert" & mehr.</seg>\n</doc>\n</refset>\n'
)


@pytest.fixture
def fake_wmt15(tmp_path, monkeypatch):
    """sacreBLEU's real loader, pointed at a local archive laid out like WMT's (no network)."""
    import copy

    from sacrebleu.dataset import DATASETS

    archive = tmp_path / "upstream" / "test.tgz"
    archive.parent.mkdir()
    with tarfile.open(archive, "w:gz") as tar:
        for member, text in (
            ("test/newstest2015-ende-src.en.sgm", SGML_SRC),
            ("test/newstest2015-ende-ref.de.sgm", SGML_REF),
        ):
            data = text.encode()
            info = tarfile.TarInfo(member)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    dataset = copy.copy(DATASETS["wmt15"])
    dataset.data = [archive.as_uri()]
    dataset.md5 = [hashlib.md5(archive.read_bytes()).hexdigest()]
    dataset.langpairs = {"en-de": ["test/newstest2015-ende-src.en.sgm", "test/newstest2015-ende-ref.de.sgm"]}
    monkeypatch.setitem(DATASETS, "wmt15", dataset)
    registry = write_registry(
        tmp_path / "corpora.yaml",
        {
            "raw": corpus(
                {
                    f"nt15.{lang}": {
                        "url": archive.as_uri(),
                        "mirror": f"raw/nt15.{lang}",
                        "sha256": None,
                        "sacrebleu": {"testset": "wmt15", "langpair": "en-de", "side": side},
                    }
                    for lang, side in (("en", "src"), ("de", "ref"))
                }
            )
        },
    )
    return archive, dataset, registry


def test_sacrebleu_test_set_is_extracted_recorded_then_verified(tmp_path, fake_wmt15):
    archive, _, registry = fake_wmt15
    sums = tmp_path / "sums.tsv"
    kwargs = dict(mirror=None, checksums=sums, registry=registry)
    ref = fetch_file("raw", "nt15.de", tmp_path / "dest", **kwargs)
    src = fetch_file("raw", "nt15.en", tmp_path / "dest", **kwargs)
    # sacreBLEU's extraction: the segment text of WMT's (fake, unescaped) SGML, one per line
    assert src.read_text(encoding="utf-8") == 'A first sentence.\n"Quoted" & more.\n'
    assert ref.read_text(encoding="utf-8") == 'Ein erster Satz.\n"Zitiert" & mehr.\n'
    assert read_checksums(sums)[("raw", "nt15.de")] == sha256_file(ref)  # recorded by the first fetch
    # Later fetches verify against the recorded sum: a tampered copy is replaced, not used.
    ref.write_text("Ein erster Satz.\n", encoding="utf-8")
    again = fetch_file("raw", "nt15.de", tmp_path / "dest", **kwargs)
    assert again.read_text(encoding="utf-8") == 'Ein erster Satz.\n"Zitiert" & mehr.\n'


def test_sacrebleu_archive_that_fails_its_md5_is_rejected(tmp_path, fake_wmt15):
    _, dataset, registry = fake_wmt15
    dataset.md5 = ["0" * 32]
    with pytest.raises(FetchError, match="sacreBLEU rejected the download"):
        fetch_file("raw", "nt15.en", tmp_path / "dest", mirror=None, checksums=tmp_path / "s.tsv", registry=registry)
    assert final_names(tmp_path / "dest") == []
    assert not list((tmp_path / "dest" / ".download").rglob("*.tgz"))  # the rejected archive is not kept


def test_sacrebleu_test_set_offline_without_mirror_says_how_to_provide_it(tmp_path, fake_wmt15):
    _, _, registry = fake_wmt15
    with pytest.raises(FetchError) as err:
        fetch_file(
            "raw",
            "nt15.en",
            tmp_path / "dest",
            mirror=tmp_path / "mirror",
            checksums=tmp_path / "s.tsv",
            registry=registry,
            allow_network=False,
        )
    message = str(err.value)
    assert "raw/nt15.en" in message and "downloads are disabled" in message
    assert str(tmp_path / "mirror" / "raw" / "nt15.en") in message


@needs_shared
def test_data_fetch_and_list_commands(tmp_path, capsys):
    from nmt.cli import main

    assert (
        main(
            [
                "data",
                "fetch",
                "multi30k",
                "val.en",
                "val.de",
                "--mirror",
                str(SHARED),
                "--offline",
                "--dest",
                str(tmp_path / "m30k"),
            ]
        )
        == 0
    )
    assert capsys.readouterr().out.split() == [str(tmp_path / "m30k" / "val.en"), str(tmp_path / "m30k" / "val.de")]
    assert (tmp_path / "m30k" / "val.de").read_bytes() == (SHARED / "multi30k/raw/val.de").read_bytes()
    # offline, no mirror: exit status 2 and one line that says what is missing and how to provide it
    assert (
        main(
            ["data", "fetch", "wmt_newstest_raw", "newstest2015-ende.en", "--offline", "--dest", str(tmp_path / "raw")]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "wmt_newstest_raw/newstest2015-ende.en" in err and "data.mirror" in err
    assert main(["data", "list"]) == 0
    listing = capsys.readouterr().out
    assert "rwth_de_en_gold [licence-gated]" in listing and "sacreBLEU wmt15" in listing
