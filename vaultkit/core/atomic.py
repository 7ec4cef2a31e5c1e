"""Atomic writes: a temporary file in the same folder, fsync, ``os.replace``, mode kept.

A crash at any point leaves either the old file or the new one, never a mix, and
the temporary file is removed on every error path. One left by a writer that was
killed outright (``.NAME.XXXX.vaultkit-tmp``) is removed by the next run that lists
the folder (:func:`remove_stale_temp`); the starter's ``.gitignore`` keeps such files
out of git meanwhile.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from vaultkit.core.errors import VaultkitError

TEMP_SUFFIX = ".vaultkit-tmp"  # the scan skips these: an interrupted write is not content


def write_atomic(path: Path | str, data: bytes, *, mode: int | None = None,
                 root: Path | str | None = None, owned=()) -> None:
    """Replace ``path`` with ``data`` atomically, keeping its permission bits.

    With ``root`` (every write into a vault), the folders are created and the target
    checked by :mod:`vaultkit.core.confine`: nothing is written outside the vault, through a
    symlink, or into ``.git/``, ``.obsidian/`` or ``.vaultkit/`` (but ``owned`` files).
    """
    if root is not None:
        from vaultkit.core.confine import prepare

        path = prepare(root, path, owned=owned)
    path = Path(path)
    folder = path.parent
    if mode is None:
        try:
            mode = stat.S_IMODE(os.stat(path).st_mode)
        except FileNotFoundError:
            mode = 0o666 & ~_umask()
        except OSError as exc:
            raise VaultkitError(f"{path}: cannot write: {exc.strerror or exc}") from None
    if path.exists() and not os.access(path, os.W_OK):
        raise VaultkitError(f"{path}: cannot write: file is read-only; left unchanged")
    if not folder.is_dir():  # one clear line, not "the original is unchanged" of no original
        raise VaultkitError(f"{path}: cannot write: the folder {folder} does not exist; "
                            "create it first")
    import fcntl
    import tempfile  # here, not at the top: the scan imports this module for TEMP_SUFFIX

    tmp = None
    fd = -1
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TEMP_SUFFIX, dir=folder)
        # locked while it exists: a later run removes only temporary files nobody holds
        fcntl.flock(fd, fcntl.LOCK_EX)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
        os.fchmod(fd, mode)
        os.replace(tmp, path)
        tmp = None
        _fsync_dir(folder)
    except OSError as exc:
        raise VaultkitError(f"{path}: cannot write: {exc.strerror or exc}; "
                            "the original is unchanged") from None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        if fd >= 0:
            os.close(fd)


STALE_AFTER_S = 60  # a temporary file this old, and unlocked, was left by a killed writer


def is_temp_name(name: str) -> bool:
    """``.NAME.XXXX.vaultkit-tmp``: the temporary file of an atomic write."""
    return name.startswith(".") and name.endswith(TEMP_SUFFIX)


def remove_stale_temp(path: str) -> bool:
    """Remove one temporary file left by a writer that was killed (SIGKILL, power loss).

    Only a regular file (never through a symlink), older than :data:`STALE_AFTER_S`
    and not locked: a writer holds an exclusive lock on its temporary file until it
    is renamed into place. True when it was removed.
    """
    import fcntl
    import time

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return False
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or time.time() - st.st_mtime < STALE_AFTER_S:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False  # a live writer holds it
        if not os.path.samestat(st, os.lstat(path)):
            return False
        os.unlink(path)
        return True
    except OSError:
        return False  # a read-only vault: left for a run that may write
    finally:
        os.close(fd)


def remove_stale_temps(folder: Path | str, prefix: str = ".") -> None:
    """:func:`remove_stale_temp` for every temporary file in ``folder`` named ``prefix*``."""
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        if name.startswith(prefix) and is_temp_name(name):
            remove_stale_temp(os.path.join(folder, name))


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def write_output(path: Path | str, data: bytes) -> None:
    """Write a command's output file (``-o FILE``) the way the user means it.

    A regular file (or a new one) is replaced atomically; through a symlink, the file
    it points to is replaced and the link stays. Anything else (a FIFO, a character
    device such as ``/dev/null`` or a terminal) is written in place, never replaced by
    a regular file: as root, replacing would swap out a device node. A FIFO nobody reads
    is an error, not a hang.
    """
    import errno
    import fcntl

    path = Path(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise VaultkitError(f"{path}: cannot write: {exc.strerror or exc}") from None
    if st is None or stat.S_ISREG(st.st_mode):
        write_atomic(os.path.realpath(path), data)  # (realpath: a link stays a link)
        return
    if stat.S_ISDIR(st.st_mode):
        raise VaultkitError(f"{path}: is a folder; give a file to write the output to")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise VaultkitError(f"{path}: a FIFO that nobody reads; nothing written") from None
        raise VaultkitError(f"{path}: cannot write: {exc.strerror or exc}") from None
    try:
        flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        fcntl.fcntl(fd, fcntl.F_SETFL, flags & ~os.O_NONBLOCK)  # now block like any writer
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    except OSError as exc:
        raise VaultkitError(f"{path}: cannot write: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
