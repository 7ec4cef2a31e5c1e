"""SHA-1, SHA-256 and BLAKE2b for the digests every run computes (the vault's state, the
settings and results caches' keys, the output boundary's verified texts).

BLAKE2b hashes the listing (~0.7 MB at 10,000 files) three times as fast as SHA-1 here.

``hashlib`` loads OpenSSL's library on import (~2.5 ms, a warm check's whole budget for
one small step); the interpreter's own implementations give the same digests and load
nothing. ``hashlib``'s are used where they are missing (a Python built without them).
"""

from __future__ import annotations

try:
    from _sha1 import sha1
except ImportError:  # pragma: no cover (a Python built without its own SHA-1)
    from hashlib import sha1

try:
    from _sha256 import sha256  # Python 3.11
except ImportError:  # pragma: no cover
    try:
        from _sha2 import sha256  # Python 3.12 and later
    except ImportError:
        from hashlib import sha256

try:
    from _blake2 import blake2b
except ImportError:  # pragma: no cover
    from hashlib import blake2b

__all__ = ["blake2b", "blob_id", "sha1", "sha256"]


def blob_id(data: bytes) -> str:
    """git's blob id of ``data`` (``git hash-object --no-filters``): the id the index and
    the snapshots hold for a file with these bytes."""
    digest = sha1(b"blob %d\0" % len(data))
    digest.update(data)
    return digest.hexdigest()
