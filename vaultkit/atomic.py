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


def write_atomic(path: Path | str, data: bytes, *, mode: int | None = None) -> None:
    """Replace ``path`` with ``data`` atomically, keeping its permission bits."""
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
