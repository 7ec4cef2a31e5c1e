"""The cache files: read with a size bound, opened and made without following symlinks.

The vault's store (:mod:`vaultkit.vault.store`, the one SQLite file of every cache under
``.vaultkit/cache/``, and its rules) opens its file here (:func:`open_cache_db`); the search
index opens its own the same way, and the snapshot store's memos (in the git directory) are
read with :func:`load_marshal` (or through their owner's :class:`KeptFiles`). Nothing here
keeps state: what outlives a call is its owner's (docs/architecture.md, "Where state
lives").
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable
from pathlib import Path

CACHE_DIR = ".vaultkit"

MAX_CACHE_BYTES = 1 << 31  # far above any real vault's cache; only a device is that big


def load_marshal(path: Path, limit: int = MAX_CACHE_BYTES):
    """``marshal.loads`` of the cache file at ``path`` (a regular file, read with a size
    bound and never through a symlink); a packed file (:func:`packed`) is unpacked.
    Raises what reading or parsing it raises."""
    from vaultkit.core.bounded import read_regular

    return unmarshal(read_regular(path, limit, follow_symlinks=False), limit)


def _identity(st: os.stat_result) -> tuple:
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


class KeptFiles:
    """Cache files (the snapshot store's memo files, in the git directory: the vault's
    store keeps its own values, ``Store.keep``) parsed ahead by a long-running process
    for the next process it forks. ``vaultkit watch`` answers each check in a child forked
    from one answering process (vaultkit.cli.commands._check_server): the files a child
    parsed (:meth:`read_names`), that process parses again once the child is done
    (:meth:`keep`), so the next child starts with them parsed. A kept file is known by its
    identity (device, inode, size, mtime, ctime): every cache file is replaced whole, a new
    inode, never written in place. Its owner holds it (a workspace's snapshot memo,
    ``BlobMemo.files``); one never handed any reads and parses as :func:`load_marshal`."""

    def __init__(self):
        self.kept: dict[str, tuple[tuple, object]] = {}
        self.read: dict[str, None] = {}  # the files parsed through it, each once

    def load(self, path: Path, limit: int = MAX_CACHE_BYTES):
        """:func:`load_marshal` of ``path``, or what was kept of that very file (once: the
        caller may change what it gets)."""
        name = os.fspath(path)
        self.read[name] = None  # (handed or read: the answering process keeps it for the next)
        kept = self.kept.pop(name, None)
        if kept is not None:
            try:
                if _identity(os.lstat(name)) == kept[0]:
                    return kept[1]
            except OSError:
                pass
        return load_marshal(path, limit)

    def read_names(self) -> list[str]:
        """The cache files parsed through :meth:`load`, each once."""
        return list(self.read)

    def keep(self, paths: Iterable[str]) -> None:
        """Parse the cache files ``paths`` now and keep them for :meth:`load` (what a
        long-running process does between requests). Read from one open file, so what is
        kept is what that identity holds; a file that cannot be read is not kept, nor past
        :data:`KEEP_AT_MOST_BYTES` in all."""
        import stat

        from vaultkit.core.bounded import read_open

        before, self.kept = self.kept, {}  # (a file unchanged since it was kept: not parsed again)
        total = 0
        for name in paths:
            flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) \
                | getattr(os, "O_CLOEXEC", 0)
            try:
                fd = os.open(name, flags)
            except OSError:
                continue
            try:
                st = os.fstat(fd)
                if not stat.S_ISREG(st.st_mode) or total + st.st_size > KEEP_AT_MOST_BYTES:
                    continue
                same = before.get(name)
                if same is not None and same[0] == _identity(st):
                    self.kept[name] = same
                    total += st.st_size
                    continue
                data = read_open(fd, st.st_size + 1)
                if len(data) != st.st_size:  # (written meanwhile: not this identity's)
                    continue
                self.kept[name] = (_identity(st), unmarshal(data))
                total += st.st_size
            except (OSError, EOFError, ValueError, TypeError):
                continue
            finally:
                os.close(fd)


KEEP_AT_MOST_BYTES = 48 << 20  # of cache files kept at once (objects take ~5x that)


# A cache value of mostly paths is stored packed (:func:`packed`): this mark, then its
# marshal bytes deflated at zlib's fastest level, about a fifth of the size (the alias index
# and the name tables were 2 MB of a 10,000-note vault's 8 MB of caches). No marshal stream
# starts with "V", so a value is read packed or not by its first bytes.
PACKED = b"VKz1"


def packed(data: bytes) -> bytes:
    """``data`` (marshal bytes) as a packed cache file holds them."""
    import zlib

    return PACKED + zlib.compress(data, 1)


def unmarshal(data: bytes, limit: int = MAX_CACHE_BYTES):
    """``marshal.loads`` of a cache file's bytes, unpacked first when packed (never past
    ``limit`` bytes: a crafted file cannot make it inflate without bound). ValueError for
    a packed file that does not inflate."""
    import marshal

    if data[:len(PACKED)] == PACKED:
        import zlib

        inflate = zlib.decompressobj()
        try:
            data = inflate.decompress(memoryview(data)[len(PACKED):], limit)
        except zlib.error as exc:
            raise ValueError(f"a packed cache file that does not inflate: {exc}") from None
        if inflate.unconsumed_tail or not inflate.eof:
            raise ValueError("a packed cache file too big or cut short")
    return marshal.loads(data)


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


# The files SQLite opens beside a database: none may lead elsewhere.
DB_SIDECARS = ("-journal", "-wal", "-shm")


def cache_db_problem(path: Path) -> str | None:
    """Why the SQLite file at ``path`` (or a file SQLite opens beside it) cannot be used:
    a symlink, a FIFO, a folder, absurdly big; None when it is a regular file or absent.

    SQLite follows symlinks and would block on a FIFO, so this is asked before it opens
    anything (a cloned repository could ship any of these under ``.vaultkit/``).
    """
    import stat

    if _folder_is_link(path):
        return "in a folder that is a symlink"
    for candidate in (str(path), *(str(path) + s for s in DB_SIDECARS)):
        try:
            st = os.lstat(candidate)
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode):
            return "not a regular file"
        if st.st_size > MAX_CACHE_BYTES:
            return "too big"
    return None


def remove_cache_db(path: Path) -> None:
    """Remove the SQLite file at ``path`` and its sidecars (never what a symlink points to;
    an empty folder in their place too); what cannot be removed is left. Nothing is
    removed through a folder that is a symlink."""
    if _folder_is_link(path):
        return
    for candidate in (str(path), *(str(path) + s for s in DB_SIDECARS)):
        try:
            if os.path.isdir(candidate) and not os.path.islink(candidate):
                os.rmdir(candidate)
            else:
                os.unlink(candidate)
        except OSError:
            pass


def _folder_is_link(path: Path) -> bool:
    return os.path.islink(path.parent) or os.path.islink(path.parent.parent)


def open_cache_db(path: Path, *, create: bool = False, timeout: float = 5.0):
    """A connection to the SQLite file at ``path`` under ``.vaultkit/`` (autocommit: the
    caller opens its transactions); ``create`` makes the folders and the file.

    Raises OSError when the file, a sidecar or a folder is not what it should be (see
    :func:`cache_db_problem`) or, without ``create``, when there is no file; sqlite3.Error
    when SQLite cannot open it. Locking is SQLite's: readers and one writer at a time,
    waiting up to ``timeout`` seconds for a lock. (A server may load in one thread and
    save in another: the module serialises the calls on one connection.)
    """
    import sqlite3

    if create:
        ensure_cache_dir(path.parent.parent if path.parent.name != CACHE_DIR else path.parent)
        if os.path.islink(path.parent):
            raise OSError(errno.ELOOP, "the cache folder is a symlink; not used", str(path))
        path.parent.mkdir(exist_ok=True)
    if _folder_is_link(path):  # never read nor written: like the other caches, not used
        raise OSError(errno.ELOOP, "the cache folder is a symlink; not used", str(path))
    problem = cache_db_problem(path)
    if problem:
        raise OSError(errno.EINVAL, problem, str(path))
    if not create and not os.path.lexists(path):
        raise FileNotFoundError(errno.ENOENT, "no cache yet", str(path))
    uri = path.absolute().as_uri() + ("?mode=rwc" if create else "?mode=rw")
    try:
        db = sqlite3.connect(uri, uri=True, timeout=timeout, isolation_level=None,
                             check_same_thread=False)
    except sqlite3.OperationalError:
        if create:
            raise
        # a read-only file (or vault): still read, never written
        db = sqlite3.connect(uri.replace("mode=rw", "mode=ro"), uri=True, timeout=timeout,
                             isolation_level=None, check_same_thread=False)
    return db
