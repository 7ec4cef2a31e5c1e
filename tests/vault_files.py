"""Write a small vault's files for a test: ``{relpath: text | bytes}`` under a root."""

from __future__ import annotations

from pathlib import Path


def write_files(root: Path, files: dict) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


def age_files(root: Path, seconds: int = 30) -> None:
    """Move every file's mtime (but the cache's) ``seconds`` into the past: older than the
    caches' racy margin, so a warm run trusts what it kept."""
    import os

    for path in root.rglob("*"):
        if path.is_file() and ".vaultkit" not in path.parts:
            st = path.stat()
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - seconds * 1_000_000_000))
