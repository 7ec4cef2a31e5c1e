"""Atomic writes: a temporary file in the same folder, fsync, ``os.replace``, mode kept.

A crash at any point leaves either the old file or the new one, never a mix, and
the temporary file is removed on every error path.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from vaultkit.errors import VaultkitError
from vaultkit.scan import TEMP_SUFFIX


def write_atomic(path: Path | str, data: bytes, *, mode: int | None = None,
                 root: Path | str | None = None, owned=()) -> None:
    """Replace ``path`` with ``data`` atomically, keeping its permission bits.

    With ``root`` (every write into a vault), the folders are created and the target
    checked by :mod:`vaultkit.confine`: nothing is written outside the vault, through a
    symlink, or into ``.git/``, ``.obsidian/`` or ``.vaultkit/`` (but ``owned`` files).
    """
    if root is not None:
        from vaultkit.confine import prepare

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
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TEMP_SUFFIX, dir=folder)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
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
