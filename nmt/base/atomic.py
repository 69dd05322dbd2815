"""The one way nmt writes a file: whole or not at all (a temporary file beside it, fsync'ed, renamed over it), so a
kill or a full disk never leaves half a file under the final name. The writers of every format build on
:func:`write_atomic`; nmt.base.files is their reading side.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import sys
import tempfile
from pathlib import Path
from typing import IO, Any, Callable

PathLike = str | os.PathLike

STDOUT = "-"  # an --out of "-": the standard output, as fairseq's and joeynmt's users pipe translations


def _default_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def write_atomic(path: PathLike, write: Callable[[IO[bytes]], None]) -> None:
    """Run ``write`` on a temporary file next to ``path``, fsync it, then rename it over ``path``.

    If ``write`` raises, the temporary file is removed and ``path`` is left exactly as it was. The parent directory
    is created if needed. The new file keeps the permission bits of the file it replaces (or the umask default).
    A symlink is followed (the file it names is replaced, the link kept). What cannot be replaced by a rename is
    written through: ``-`` (the standard output) and a target that is not a regular file (/dev/stdout, a terminal, a
    named pipe), which a reader takes as it comes.
    """
    if os.fspath(path) == STDOUT:
        _write_through(sys.stdout.buffer, write)
        return
    try:
        kind = os.stat(path).st_mode  # through a symlink: /dev/stdout names the process's own output
    except OSError:
        kind = None
    if kind is not None and not stat.S_ISREG(kind) and not stat.S_ISDIR(kind):  # a device, a pipe, a socket
        with open(path, "wb") as handle:
            _write_through(handle, write)
        return
    final = Path(os.path.realpath(path)) if os.path.islink(path) else Path(path)
    try:
        _write_atomic(final, write)
    except OSError as err:  # name the file asked for, not the temporary one (a full disk names none)
        if err.filename is not None and Path(err.filename).parent != final.parent:
            raise
        raise OSError(err.errno, err.strerror or str(err), str(final)) from None


def _write_through(handle: IO[bytes], write: Callable[[IO[bytes]], None]) -> None:
    try:
        write(handle)
        handle.flush()
    except BrokenPipeError:  # the reader stopped (`| head`): what it took is what it wanted
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), handle.fileno())  # no second error at exit
        except (OSError, ValueError):
            pass


def _write_atomic(final: Path, write: Callable[[IO[bytes]], None]) -> None:
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
    except FileExistsError as err:  # a file where a directory of the path should be
        raise NotADirectoryError(errno.ENOTDIR, "a file where a directory should be", err.filename) from None
    try:
        mode = final.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = _default_mode()
    fd, tmp_name = tempfile.mkstemp(prefix=f".{final.name}.", suffix=".tmp", dir=final.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp_name, mode)
        os.replace(tmp_name, final)
    except BaseException:
        try:
            os.unlink(tmp_name)
        except FileNotFoundError:
            pass
        raise
    fsync_directory(final.parent)  # the rename itself made durable


def fsync_directory(path: PathLike) -> None:
    """fsync a directory, so that a rename into it survives a crash (best effort: not every platform or file system
    can fsync a directory)."""
    try:
        dir_fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)


def write_bytes_atomic(path: PathLike, data: bytes) -> None:
    """``data`` to ``path``, whole or not at all (:func:`write_atomic`)."""
    write_atomic(path, lambda fh: fh.write(data))


def write_text_atomic(path: PathLike, text: str) -> None:
    """``text`` (UTF-8, as given) to ``path``, whole or not at all (:func:`write_atomic`)."""
    write_bytes_atomic(path, text.encode("utf-8"))


def write_json_atomic(path: PathLike, obj: Any) -> None:
    """Write ``obj`` as JSON (sorted keys, indent 2, UTF-8, trailing newline) replacing ``path`` atomically.
    NaN/Infinity are refused (``ValueError``): they are not valid JSON."""
    text = json.dumps(obj, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    write_text_atomic(path, text)
