import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture
def make_vault(tmp_path):
    """Write ``{relpath: text|bytes}`` under a vault root (with .obsidian/) and return the root."""

    def make(files: dict, root_name: str = "vault") -> Path:
        root = tmp_path / root_name
        (root / ".obsidian").mkdir(parents=True, exist_ok=True)
        for rel, content in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content, encoding="utf-8")
        return root

    return make
