"""Read and age the parse cache's SQLite store from a test, as the cache tests share."""

from __future__ import annotations

import os
import sqlite3


def age(path, seconds=10):
    """Move a file's mtime into the past: the cache trusts only files older than its run."""
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - seconds * 1_000_000_000))


def store(root):
    """The vault's parse store (``.vaultkit/cache/notes-*.sqlite``)."""
    return next((root / ".vaultkit" / "cache").glob("notes-*.sqlite"))


def sql(root, statement, *args):
    """The rows of one statement run on the store (autocommit)."""
    db = sqlite3.connect(store(root), isolation_level=None)
    try:
        return db.execute(statement, args).fetchall()
    finally:
        db.close()
