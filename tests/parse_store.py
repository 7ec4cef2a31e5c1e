"""Read and age the vault's store (the parse cache's records and the other caches'
entries) from a test, as the cache tests share."""

from __future__ import annotations

import marshal
import os
import sqlite3


def age(path, seconds=10):
    """Move a file's mtime into the past: the cache trusts only files older than its run."""
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - seconds * 1_000_000_000))


def store(root):
    """The vault's store (``.vaultkit/cache/store-*.sqlite``)."""
    return next((root / ".vaultkit" / "cache").glob("store-*.sqlite"))


def sql(root, statement, *args):
    """The rows of one statement run on the store (autocommit)."""
    db = sqlite3.connect(store(root), isolation_level=None)
    try:
        return db.execute(statement, args).fetchall()
    finally:
        db.close()


def has_entry(root, name) -> bool:
    """Whether the store holds a value under ``name`` (a cache that was written)."""
    try:
        return bool(sql(root, "SELECT 1 FROM entries WHERE name = ?", name))
    except StopIteration:
        return False


def entry(root, name):
    """The value the store holds under ``name``, unmarshalled (unpacked when packed)."""
    from vaultkit.vault.cachefile import unmarshal

    (raw,), = sql(root, "SELECT value FROM entries WHERE name = ?", name)
    return unmarshal(raw)


def set_entry(root, name, value) -> None:
    """Replace the value under ``name`` (as another process, or a tamperer, would); bytes
    are stored as they are, anything else marshalled."""
    raw = value if isinstance(value, bytes) else marshal.dumps(value)
    sql(root, "UPDATE entries SET value = ?, stamp = stamp + 1 WHERE name = ?", raw, name)


class StoreEntry:
    """One entry of the vault's store, read and written as the tests read and wrote the
    cache file it replaced (``is_file``, ``exists``, ``read_bytes``, ``write_bytes``:
    the raw value, marshal bytes, packed or not)."""

    def __init__(self, root, name):
        self.root, self.name = root, name

    def is_file(self) -> bool:
        return has_entry(self.root, self.name)

    exists = is_file

    def read_bytes(self) -> bytes:
        (raw,), = sql(self.root, "SELECT value FROM entries WHERE name = ?", self.name)
        return raw

    def write_bytes(self, data: bytes) -> None:
        set_entry(self.root, self.name, bytes(data))

    def read_text(self) -> str:
        """A value that is a marshalled string (the verified texts' list)."""
        return marshal.loads(self.read_bytes())

    def write_text(self, text: str) -> None:
        self.write_bytes(marshal.dumps(text))

    def stamp(self) -> int:
        """Drawn anew at each write of the entry: the same stamp, not written since."""
        (stamp,), = sql(self.root, "SELECT stamp FROM entries WHERE name = ?", self.name)
        return stamp
