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
