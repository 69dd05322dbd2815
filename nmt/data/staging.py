"""An output directory replaced whole: written beside its destination and moved into place only when complete.
Details: docs/internals/data.md."""
from __future__ import annotations

import ctypes
import errno
import os
import shutil
import socket
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

from ..base.atomic import fsync_directory
from ..base.errors import InputError

STAGING, OLD = "staging", "old"
_AT_FDCWD, _RENAME_EXCHANGE = -100, 2


def _host() -> str:
    return socket.gethostname().replace("-", "_") or "host"


def _name(dest: Path, kind: str, pid: int | None = None) -> Path:
    return dest.parent / f".{dest.name}.{kind}-{_host()}-{os.getpid() if pid is None else pid}"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def _leftovers(dest: Path) -> list[tuple[str, Path]]:
    """(kind, path) of the staging and old directories of ``dest`` left by processes of this host that are gone."""
    out = []
    if not dest.parent.is_dir():
        return out
    for kind in (STAGING, OLD):
        prefix = f".{dest.name}.{kind}-{_host()}-"
        for entry in dest.parent.iterdir():
            pid = entry.name[len(prefix):]
            if entry.name.startswith(prefix) and pid.isdigit() and not _alive(int(pid)):
                out.append((kind, entry))
    return out


def _tidy(dest: Path) -> None:
    """Repair what a killed run left: an old directory whose replacement never came is put back; staging
    directories are deleted."""
    for kind, path in _leftovers(dest):
        if kind == OLD and not os.path.lexists(dest):
            os.rename(path, dest)
        else:
            shutil.rmtree(path, ignore_errors=True)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one step (renameat2 RENAME_EXCHANGE); False where the system cannot."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def _link_tree(source: Path, target: Path) -> None:
    """Everything under ``source`` that ``target`` lacks, as hard links (copies where links fail) and symlinks."""
    if source.is_symlink():
        if not os.path.lexists(target):
            os.symlink(os.readlink(source), target)
        return
    if source.is_dir():
        target.mkdir(exist_ok=True)
        for entry in source.iterdir():
            _link_tree(entry, target / entry.name)
        return
    if os.path.lexists(target):  # the command wrote a new one
        return
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def _refuse_unsafe(dest: Path) -> None:
    if dest.exists() and not dest.is_dir():
        raise InputError(f"{dest}: a file where a directory should be")
    real, here = Path(os.path.realpath(dest)), Path.cwd().resolve()
    if real == here or real in here.parents or real == Path(real.anchor):
        raise InputError(f"{dest}: the current directory or one above it; give the output a directory of its own")


@contextmanager
def staged_directory(dest: str | os.PathLike, own: Callable[[Path], bool] = lambda entry: True) -> Iterator[Path]:
    """A fresh directory to write ``dest``'s new content into; when the block ends without an exception, the
    entries of ``dest`` that are not ``own`` (a predicate on its top-level entries; subdirectories are never the
    command's own) are carried into it where it lacks them, and it replaces ``dest`` whole. On an exception
    (KeyboardInterrupt and SystemExit included) it is deleted and ``dest`` is left as it was.

    ``dest`` may not be the current directory or one above it (InputError), nor a file; a symlink to a directory
    is followed (the directory it names is replaced, the link kept)."""
    dest = Path(dest)
    _refuse_unsafe(dest)
    real = Path(os.path.realpath(dest))
    real.parent.mkdir(parents=True, exist_ok=True)
    _tidy(real)
    staging = _name(real, STAGING)
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    try:
        yield staging
        if real.is_dir():
            for entry in real.iterdir():
                if entry.is_dir() and not entry.is_symlink() or not own(entry):
                    _link_tree(entry, staging / entry.name)
        _replace(staging, real)
    except OSError as err:  # a full disk while writing: named as the file of the destination it was to become
        shutil.rmtree(staging, ignore_errors=True)
        raise _renamed(err, staging, dest) from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _renamed(err: OSError, staging: Path, dest: Path) -> OSError:
    """``err`` with a path inside the staging directory given as the same path inside ``dest``."""
    def shown(name):
        if name is None:
            return None
        try:
            return str(dest / Path(os.fsdecode(name)).relative_to(staging))
        except ValueError:
            return name
    if not err.filename or shown(err.filename) == err.filename:
        return err
    return type(err)(err.errno, err.strerror or str(err), shown(err.filename), None, shown(err.filename2))


def _replace(staging: Path, dest: Path) -> None:
    if not os.path.lexists(dest):
        os.rename(staging, dest)
    elif _exchange(staging, dest):
        shutil.rmtree(staging)  # the old content, now under the staging name
    else:
        old = _name(dest, OLD)
        os.rename(dest, old)
        try:
            os.rename(staging, dest)
        except BaseException:
            os.rename(old, dest)
            raise
        shutil.rmtree(old)
    fsync_directory(dest.parent)
