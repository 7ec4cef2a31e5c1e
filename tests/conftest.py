import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from vault_files import write_files  # noqa: E402  (tests/ is on the path from here)


@pytest.fixture(autouse=True)
def _no_openclaw_install(monkeypatch):
    """The OpenClaw limits follow the version installed on the machine: tests see none
    unless they install one (an openclaw on the developer's PATH changes no expectation)."""
    from vaultkit.vault import openclaw

    monkeypatch.setattr(openclaw, "_which_openclaw", lambda: None)
    monkeypatch.setattr(openclaw, "_npm_prefixes", lambda: [])


@pytest.fixture
def make_vault(tmp_path):
    """Write ``{relpath: text|bytes}`` under a vault root (with .obsidian/) and return the root."""

    def make(files: dict, root_name: str = "vault") -> Path:
        root = tmp_path / root_name
        (root / ".obsidian").mkdir(parents=True, exist_ok=True)
        write_files(root, files)
        return root

    return make


@pytest.fixture
def counting(monkeypatch):
    """The paths the parser reads in this test, in order (``parse_note`` spied on)."""
    import vaultkit.vault.parse as parse_mod

    calls = []
    real = parse_mod.parse_note

    def spy(path, data, **kw):
        calls.append(path)
        return real(path, data, **kw)

    monkeypatch.setattr(parse_mod, "parse_note", spy)
    return calls


def pytest_collection_modifyitems(session, config, items):
    """A test id is printed in every run and CI log: it must never hold a credential-shaped
    string (parametrize a credential with ``ids=``). Checked by the detector itself, so a
    run that collects such a test fails before it starts."""
    from vaultkit.vault.secretscan import has_candidates, scan_text

    ids = "\n".join(item.nodeid for item in items)
    if not has_candidates(ids):
        return
    bad = [item for item in items if has_candidates(item.nodeid) and scan_text(item.nodeid)]
    if bad:
        names = sorted({f"{item.nodeid.split('[', 1)[0]}" for item in bad})
        raise pytest.UsageError("test ids hold a credential-shaped string (give the "
                                f"parametrize ids=): {', '.join(names)}")
