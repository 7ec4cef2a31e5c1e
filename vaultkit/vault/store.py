"""One store per vault: every cache under ``.vaultkit/`` in one SQLite file.

``.vaultkit/cache/store-<FORMAT>.sqlite`` holds one namespace per cache:

- ``notes`` and ``notes_meta``: the parse cache's per-note records
  (:class:`vaultkit.vault.loader._Cache` owns their layout);
- ``entries(name, stamp, value)``: the caches that are one value each, a marshal stream
  (packed or not: :func:`vaultkit.vault.cachefile.packed`) under a name: ``aliases``,
  ``resolver``, ``settings``, ``results``, ``index-memo``, ``git-diff``,
  ``outbound-verified``. Each value carries its own key, as its file did; ``stamp`` is
  drawn anew at each write, so a value is known without reading it.

The rules every cache follows are here, once:

- **version**: ``store_meta`` names the release that wrote the file (the format and
  vaultkit's version). A store of another release is read as empty and rebuilt whole at
  the first write, so an upgrade never reads a value an older release wrote. Files of
  the caches before the store (0.3.0's ``*.marshal``, ``notes-*.sqlite``, other formats
  of this file) are removed when the store is made.
- **damage**: a file SQLite cannot read as a database, or one that is not a regular file
  (a symlink, a FIFO, a folder: a cloned repository could ship any), is removed (never
  what a symlink points to) and rebuilt, with one warning line; never a traceback.
- **symlinks**: nothing is read or written through a symlinked ``.vaultkit/`` or
  ``.vaultkit/cache/`` (:func:`vaultkit.vault.cachefile.open_cache_db`).
- **racy entries**: a value keyed by a listing is trusted only for files older than that
  listing by :data:`RACY_NS` (:func:`racy`; else their bytes tell: :func:`content_id`).
  Every cache keys on it here, the snapshot store's memo files too; a value that keeps its
  notes' numbers as arrays (the index memo, the alias index) finds the notes changed since
  with :func:`changed_since`.
- **two processes**: SQLite's locking (one writer, readers beside it); a lock held too
  long makes a run go without the store, never wait for ever or fail.
- **read-only**: a store that cannot be written is still read (a read-only vault); with
  ``--no-cache`` :data:`NULL` stands in, which holds nothing and writes nothing.

The search index stays its own file (``.vaultkit/search.sqlite``): docs/architecture.md
says why.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable
from pathlib import Path

from vaultkit import __version__
from vaultkit.vault.cachefile import CACHE_DIR, MAX_CACHE_BYTES, unmarshal

FORMAT = 1
NAME = f"store-{FORMAT}.sqlite"
RELEASE = f"{FORMAT}:{__version__}"
LOCK_TIMEOUT_S = 5.0  # seconds to wait for another vaultkit's write to finish
# of the values an answering process keeps parsed at once (objects take ~5x that)
KEEP_AT_MOST_BYTES = 48 << 20


# -- the racy rule ------------------------------------------------------------------------
# A file whose mtime or ctime is this close to (or after) when a cache entry was made from
# it may have changed again in the same clock tick without either moving: every cache
# reads it again, or compares its content's digest (git's "racy" rule). One margin for the
# parse cache, every cache keyed on a listing and the snapshot store's memo files.
RACY_NS = 2_000_000_000


def racy(changed_ns: int, seen_ns: int) -> bool:
    """Whether a file whose later of mtime and ctime is ``changed_ns`` may have changed
    since a cache entry made from the listing of ``seen_ns`` without its stat changing:
    then only its content tells (:func:`content_id`)."""
    return changed_ns >= seen_ns - RACY_NS


def content_id(path: str, size: int) -> str | None:
    """git's blob id of the file at ``path`` (vaultkit.core.digests.blob_id), read
    without following a FIFO and never past ``size`` + 1 bytes; None when it cannot be
    read or does not hold ``size`` bytes (then it is not what a cache entry describes)."""
    from vaultkit.core.bounded import ReadRefused, read_regular
    from vaultkit.core.digests import blob_id

    try:
        data = read_regular(path, size + 1)
    except (ReadRefused, OSError):
        return None
    return blob_id(data) if len(data) == size else None


def note_numbers(vault) -> tuple[list[str], tuple]:
    """The vault's note paths in order and their sizes, mtimes, ctimes and inodes, four
    ``array("q")`` in that order: a hook's vault, not loaded, gives its listing's arrays
    (with what the notes made saw); a loaded vault goes through its notes."""
    numbers = getattr(vault, "listed_numbers", lambda: None)()
    if numbers is not None:
        return vault.note_paths(), numbers
    from array import array

    states = vault.listed_states()
    paths = [s[0] for s in states]
    if paths != sorted(paths):
        states.sort()
        paths = [s[0] for s in states]
    return paths, tuple(array("q", [s[i] for s in states]) for i in (1, 2, 3, 4))


def changed_since(vault, kept: tuple, limit: int, oids: dict, listed: tuple | None = None
                  ) -> tuple[list[str], list[int], set[int]]:
    """The notes' paths in order, the positions of those whose size, mtime, ctime or
    inode is not the one kept (``kept``: four arrays in that order) or whose mtime is not
    older than ``limit`` (a same-tick change would not show), or whose ctime is not and
    whose bytes are not those of the blob id ``oids`` kept for it, and the positions of
    the first kind (changed by their stats). ``listed``: :func:`note_numbers`' answer,
    when the caller has it. Compared as arrays, a slice at a time, not note by note."""
    paths, numbers = listed if listed is not None else note_numbers(vault)
    if any(len(a) != len(b) for a, b in zip(kept, numbers)):
        return paths, [], set()  # (the caller sees the lengths differ)
    changed = set()
    for old, new in zip(kept, numbers):
        changed.update(differing(old, new))
    by_stats = set(changed)
    mtimes, ctimes = numbers[1], numbers[2]
    if mtimes and max(mtimes) >= limit:
        changed.update(i for i, t in enumerate(mtimes) if t >= limit)
    if ctimes and max(ctimes) >= limit:
        root, sizes = vault.root, numbers[0]
        for i, t in enumerate(ctimes):
            if t >= limit and i not in changed and (
                    oids.get(paths[i]) is None
                    or content_id(str(root / paths[i]), sizes[i]) != oids[paths[i]]):
                changed.add(i)
    return paths, sorted(changed), by_stats


def differing(old, new, step: int = 512) -> list[int]:
    """The positions where two arrays of the same length differ."""
    if old == new:
        return []
    out = []
    for start in range(0, len(old), step):
        end = start + step
        if old[start:end] != new[start:end]:
            out += [i for i in range(start, min(end, len(old))) if old[i] != new[i]]
    return out


class Later:
    """The cache writes a process answering a request makes once the answer is sent (the
    caller does not wait on them): held from :meth:`hold` until :meth:`run`, else made at
    once. Its owner decides: a :class:`~vaultkit.session.workspace.Workspace` has one and
    hands it with its store and its snapshot memo; the answering process of ``vaultkit
    watch`` holds it in each child it forks. Anything else has its own, never held."""

    def __init__(self):
        self.held: list | None = None  # None: not answering a request

    @property
    def holding(self) -> bool:
        """Whether this process answers a request (its writes wait for the answer)."""
        return self.held is not None

    def hold(self) -> None:
        """From now on, the writes wait for :meth:`run`."""
        self.held = []

    def __call__(self, write) -> None:
        """Call ``write()`` now, or, while held, once the answer is sent."""
        if self.held is None:
            write()
        else:
            self.held.append(write)

    def run(self) -> None:
        """Make the writes held (a write that fails loses a cache value, nothing else)."""
        held, self.held = self.held or [], None
        for write in held:
            try:
                write()
            except Exception:  # (as any cache write: the next run reads or computes again)
                pass


class Store:
    """The store of the vault at ``root`` (opened on first use, created on first write).
    ``later``: when its writes are made (:class:`Later`; the owner's, or its own)."""

    caching = True

    def __init__(self, root: Path | str, timeout: float | None = None,
                 later: Later | None = None):
        import threading

        self.root = Path(root)
        self.later = later if later is not None else Later()
        self.dir = self.root / CACHE_DIR / "cache"
        self.path = self.dir / NAME
        self.timeout = timeout  # None: LOCK_TIMEOUT_S as it is when the file is opened
        self.db = None
        self._pid = 0  # the process the connection was opened in
        self.usable = True  # False: a symlinked cache folder, never read nor written
        self.current = False  # the file is this release's (else read as empty)
        # what the process that answers checks keeps parsed (:meth:`keep`): name ->
        # (stamp, value), handed out once each; and the names this process read
        self.kept: dict[str, tuple[int, object]] = {}
        self.read: list[str] = []
        # every explicit transaction on the one connection holds it: two threads of a
        # server (a load beside a deferred write) never nest one in the other's
        self.lock = threading.RLock()

    # -- the file ----------------------------------------------------------------------

    def connection(self, create: bool = False):
        """The open connection, or None (no store yet and not ``create``, or none to be
        had). A damaged file is removed here (and made anew when ``create``)."""
        import sqlite3

        from vaultkit.vault.cachefile import open_cache_db

        if self.db is not None and self._pid != os.getpid():
            # (a connection is never used across a fork: the parent's is left as it is)
            self._inherited, self.db = self.db, None
        if self.db is not None:
            return self.db
        if not self.usable:
            return None
        for _attempt in (1, 2):
            try:
                db = open_cache_db(self.path, create=create, timeout=LOCK_TIMEOUT_S
                                   if self.timeout is None else self.timeout)
            except FileNotFoundError:
                return None
            except OSError as exc:
                if exc.errno == errno.ELOOP:  # a symlinked cache folder: never used
                    self.usable = False
                    return None
                if exc.errno != errno.EINVAL:  # (cannot be made here: a read-only vault)
                    return None
                self.damaged(exc.strerror or "not usable")  # (not a regular file: EINVAL)
                continue
            except sqlite3.Error:
                if create:  # (a file that cannot be made or opened for writing: not damage;
                    return None  # a damaged one opens, and fails at the first read below)
                self.damaged("damaged")
                continue
            try:
                row = db.execute("SELECT value FROM store_meta WHERE key = 'release'") \
                    .fetchone() if _has_table(db, "store_meta") else None
            except sqlite3.OperationalError as exc:
                db.close()
                if busy(exc):  # another vaultkit holds it: this run goes without
                    return None
                self.damaged("damaged")
                continue
            except sqlite3.Error:
                db.close()
                self.damaged("damaged")
                continue
            self.db, self._pid = db, os.getpid()
            self.current = row is not None and row[0] == RELEASE
            return db
        return None

    def begin_write(self, db) -> None:
        """Open a write transaction on ``db`` with this release's tables in place: a store
        of another release (or a new file) is emptied and set up first, in the same
        transaction. Raises sqlite3.Error as SQLite does."""
        # a cache: a crash of vaultkit cannot damage it (the journal is written first); an
        # OS crash could, and is then seen as damage and rebuilt. Not waiting for the disk
        # saves a hook run two fsyncs (~8-20 ms here).
        db.execute("PRAGMA synchronous=OFF")
        db.execute("BEGIN IMMEDIATE")
        row = db.execute("SELECT value FROM store_meta WHERE key = 'release'").fetchone() \
            if _has_table(db, "store_meta") else None
        if row is not None and row[0] == RELEASE:
            self.current = True
            return
        made = row is None
        for (table,) in db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
            db.execute(f'DROP TABLE IF EXISTS "{table}"')
        db.execute("CREATE TABLE store_meta (key TEXT PRIMARY KEY, value) WITHOUT ROWID")
        db.execute("CREATE TABLE entries (name TEXT PRIMARY KEY, stamp INTEGER, value BLOB)"
                   " WITHOUT ROWID")
        db.execute("INSERT INTO store_meta VALUES ('release', ?)", (RELEASE,))
        self.current = True
        if made:
            self.remove_old_caches()

    def damaged(self, why: str) -> None:
        """The file cannot be used: remove it (and its sidecars; never what a symlink
        points to), say so once; the next write makes it anew."""
        import sys

        from vaultkit.vault.cachefile import remove_cache_db

        self.close()
        self.kept = {}
        remove_cache_db(self.path)
        print(f"vaultkit: warning: {CACHE_DIR}/cache/{NAME} is {why}; every note is read "
              "again and the cache rebuilt", file=sys.stderr)

    def close(self) -> None:
        if self.db is not None and self._pid == os.getpid():
            try:
                self.db.close()
            except Exception:  # closing a damaged file: nothing to keep
                pass
        self.db = None

    def remove_old_caches(self) -> None:
        """Remove the cache files of earlier releases (0.3.0 kept one file per cache) and
        other formats of the store: never read again."""
        from vaultkit.vault.cachefile import remove_cache_db

        try:
            names = os.listdir(self.dir)
        except OSError:
            return
        for name in names:
            if name == NAME or name.startswith(NAME + "-"):
                continue
            if name.endswith(".sqlite") and (name.startswith(("notes-", "store-"))):
                remove_cache_db(self.dir / name)
            elif name.endswith(".marshal") or name == "outbound-verified":
                try:
                    os.unlink(self.dir / name)
                except OSError:
                    pass

    # -- the entries -------------------------------------------------------------------

    def get(self, name: str, limit: int = MAX_CACHE_BYTES):
        """The value stored under ``name`` (unmarshalled, unpacked), or None when there is
        none, it is another release's, damaged, over ``limit`` bytes or locked away. A
        value :meth:`keep` kept is handed out as it is, once (the caller may change it)."""
        import sqlite3

        self.read.append(name)
        db = self.connection()
        if db is None or not self.current:
            return None
        try:
            row = db.execute("SELECT stamp, length(value) FROM entries WHERE name = ?",
                             (name,)).fetchone()
            if row is None or row[1] is None or row[1] > limit:
                return None
            kept = self.kept.pop(name, None)
            if kept is not None and kept[0] == row[0]:
                return kept[1]
            row = db.execute("SELECT value FROM entries WHERE name = ? AND stamp = ?",
                             (name, row[0])).fetchone()
        except sqlite3.OperationalError as exc:
            if not busy(exc):
                self.damaged("damaged")
            return None
        except sqlite3.Error:
            self.damaged("damaged")
            return None
        if row is None or not isinstance(row[0], bytes):
            return None  # (replaced meanwhile: read again next time)
        try:
            return unmarshal(row[0], limit)
        except (EOFError, ValueError, TypeError):
            return None  # a damaged value: computed and written again

    def put(self, name: str, data: bytes) -> bool:
        """Store ``data`` (marshal bytes, packed or not) under ``name``; False when it
        cannot be written (a read-only vault, a lock held too long): not an error."""
        import sqlite3

        with self.lock:
            db = self.connection(create=True)
            if db is None:
                return False
            try:
                self.begin_write(db)
                db.execute("INSERT OR REPLACE INTO entries VALUES (?, ?, ?)",
                           (name, _stamp(), bytes(data)))
                db.execute("COMMIT")
                return True
            except sqlite3.Error:
                try:
                    if db.in_transaction:
                        db.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
                return False

    def delete(self, name: str) -> None:
        """Remove the value under ``name`` (if the store can be written)."""
        import sqlite3

        db = self.connection()
        if db is None or not self.current:
            return
        try:
            db.execute("DELETE FROM entries WHERE name = ?", (name,))
        except sqlite3.Error:
            pass

    # -- what a long-running process keeps parsed ---------------------------------------
    # ``vaultkit watch`` answers each check in a child forked from one long-running
    # process (vaultkit.cli.commands._check_server), which holds this vault's store. The
    # values a child read (:meth:`read_names`), that process parses again once the child
    # is done (:meth:`keep`), so the next child starts with them parsed; a kept value is
    # handed out only while the entry's stamp is the one it was read with.

    def read_names(self) -> list[str]:
        """The names this process read (:meth:`get`), each once."""
        return list(dict.fromkeys(self.read))

    def keep(self, names: Iterable[str]) -> None:
        """Parse the values under ``names`` now and keep them for :meth:`get`. The
        connection is closed after: a process about to fork holds none open."""
        import sqlite3

        before, self.kept = self.kept, {}
        total = 0
        try:
            db = self.connection()
            if db is None or not self.current:
                return
            for name in names:
                row = db.execute("SELECT stamp, length(value) FROM entries WHERE name = ?",
                                 (name,)).fetchone()
                if row is None or row[1] is None or total + row[1] > KEEP_AT_MOST_BYTES:
                    continue
                same = before.get(name)
                if same is not None and same[0] == row[0]:  # (not parsed again)
                    self.kept[name] = same
                    total += row[1]
                    continue
                value = db.execute("SELECT value FROM entries WHERE name = ? AND stamp = ?",
                                   (name, row[0])).fetchone()
                if value is None or not isinstance(value[0], bytes):
                    continue
                try:
                    self.kept[name] = (row[0], unmarshal(value[0]))
                except (EOFError, ValueError, TypeError):
                    continue
                total += row[1]
        except sqlite3.Error:
            self.kept = {}
        finally:
            self.close()
            self.read = []


class _NullStore(Store):
    """The store of ``--no-cache``: holds nothing, writes nothing."""

    caching = False

    def __init__(self):
        super().__init__(Path("."))
        self.usable = False

    def connection(self, create: bool = False):
        return None

    def get(self, name: str, limit: int = MAX_CACHE_BYTES):
        return None

    def put(self, name: str, data: bytes) -> bool:
        return False

    def keep(self, names: Iterable[str]) -> None:
        return None


NULL = _NullStore()


def _stamp() -> int:
    return int.from_bytes(os.urandom(7), "big")


def _has_table(db, name: str) -> bool:
    return db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                      (name,)).fetchone() is not None


def busy(exc: Exception) -> bool:
    """Whether an SQLite error says another process holds the lock."""
    text = str(exc).lower()
    return "locked" in text or "busy" in text
