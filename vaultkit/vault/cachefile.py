"""The files under ``.vaultkit/``: read with a size bound, written without following symlinks.

The parse cache (:mod:`vaultkit.vault.loader`), the settings cache (:mod:`vaultkit.vault.profile`)
and the results cache (:mod:`vaultkit.lint.engine`) all go through here.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

CACHE_DIR = ".vaultkit"

MAX_CACHE_BYTES = 1 << 31  # far above any real vault's cache; only a device is that big


def read_cache_file(path: Path) -> bytes:
    """The bytes of a cache file under ``.vaultkit/``; OSError when it is missing, a symlink,
    not a regular file or absurdly big (a cloned repository could ship any of these)."""
    from vaultkit.core.bounded import read_regular

    return read_regular(path, MAX_CACHE_BYTES, follow_symlinks=False)


def write_cache_file(path: Path, data: bytes) -> bool:
    """Replace a file under ``.vaultkit/`` (creating the folder); False when it cannot.

    A cache that cannot be written is not an error: a read-only vault is still checked.
    """
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    try:
        ensure_cache_dir(path.parent.parent if path.parent.name != CACHE_DIR else path.parent)
        path.parent.mkdir(exist_ok=True)
        if os.path.islink(path.parent) or os.path.islink(path):
            raise OSError(errno.ELOOP, "a symlink in the cache; not used", str(path))
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0),
                     0o644)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
        return True
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False


def ensure_cache_dir(path: Path) -> None:
    """Create ``.vaultkit/`` with a CACHEDIR.TAG and a .gitignore that ignores it all.

    Raises OSError when it is a symlink: caches are never written outside the vault. Nor
    are the two files written through a symlink: a cloned repository could ship them as
    links to anywhere.
    """
    if os.path.islink(path):
        raise OSError(errno.ELOOP, "the cache folder is a symlink; not used", str(path))
    path.mkdir(exist_ok=True)
    _create_new(path / "CACHEDIR.TAG", b"Signature: 8a477f597d28d172789f06886806bc55\n"
                b"# This file is a cache directory tag created by vaultkit.\n")
    _create_new(path / ".gitignore", b"# Automatically created by vaultkit.\n*\n")


def _create_new(path: Path, data: bytes) -> None:
    """Write ``data`` to a file that must not exist yet (and is never a symlink)."""
    if os.path.lexists(path):
        return
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0),
                     0o644)
    except FileExistsError:
        return
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
