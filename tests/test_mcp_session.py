"""vaultkit mcp without the SDK: the install hint, the lazy import, the warm vault state.

These run whether or not the ``mcp`` extra is installed: the server's state
(:class:`vaultkit.cli.mcp_server.VaultSession`) and its path confinement need no SDK.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from vaultkit.cli.mcp_server import TOOLS, ToolFailure, VaultSession, tool_specs, vault_path

SEARCH = Path(__file__).parent / "fixtures" / "search" / "vault"
OLD = 1_700_000_000  # an mtime far older than any listing: warm state is trusted for it


@pytest.fixture
def vault(tmp_path):
    root = tmp_path / "vault"
    shutil.copytree(SEARCH, root)
    for p in root.rglob("*"):
        os.utime(p, (OLD, OLD))
    return root


def test_without_the_sdk_the_command_says_how_to_install_it(tmp_path):
    code = ("import sys; sys.modules['mcp'] = None; sys.modules['mcp_types'] = None\n"
            "from vaultkit.cli import main; sys.exit(main(['mcp', '.']))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1  # one line
    assert "pip install 'vaultkit-lint[mcp]'" in proc.stderr


def test_the_cli_never_imports_the_sdk_unless_serving(tmp_path):
    code = ("import sys; from vaultkit.cli import build_parser, main\n"
            "build_parser(); main(['mcp', '--help'])\n"
            "print(sorted(m for m in sys.modules if m == 'mcp' or m.startswith(('mcp.', "
            "'mcp_types', 'starlette', 'anyio'))))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60)
    assert proc.stdout.strip().splitlines()[-1] == "[]"
    assert "--read-only" in proc.stdout


def test_a_missing_vault_is_a_usage_error(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "vaultkit", "mcp", str(tmp_path / "nope")],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2
    assert "no such file or folder" in proc.stderr and "Traceback" not in proc.stderr


def test_read_only_keeps_only_tools_that_write_nothing():
    assert {t.name for t in tool_specs(read_only=True)} == {
        "memory_search", "memory_recall", "memory_get", "vault_check", "vault_audit"}
    assert [t.name for t in tool_specs()] == [t.name for t in TOOLS]
    assert all(t.read_only != (t.name in ("memory_log", "memory_promote", "vault_index")) for t in TOOLS)


def test_the_vault_stays_warm_until_a_file_changes(vault):
    session = VaultSession(vault)
    first = session.vault()
    assert session.vault() is first  # nothing changed: no listing-driven reload
    note = vault / "memory" / "people" / "li-na.md"
    note.write_text(note.read_text(encoding="utf-8") + "\nLikes green tea.\n", encoding="utf-8")
    second = session.vault()
    assert second is not first
    assert "Likes green tea." in second.notes["memory/people/li-na.md"].text
    # the unchanged notes are the very objects parsed before: nothing was read again
    same = [p for p in first.notes if p != "memory/people/li-na.md"]
    assert same and all(second.notes[p] is first.notes[p] for p in same)
    note.unlink()
    third = session.vault()
    assert "memory/people/li-na.md" not in third.notes
    session.close()


def test_a_note_edited_within_the_same_clock_tick_is_read_again(vault):
    session = VaultSession(vault)
    note = vault / "memory" / "people" / "ray-wang.md"
    note.write_text("# Ray\n\nfirst version\n", encoding="utf-8")
    stamp = note.stat().st_mtime_ns
    first = session.vault()
    assert "first version" in first.notes["memory/people/ray-wang.md"].text
    # same size, same mtime: only the racy-window rule can notice this edit
    note.write_text("# Ray\n\nnewer version\n", encoding="utf-8")
    os.utime(note, ns=(stamp, stamp))
    assert "newer version" in session.vault().notes["memory/people/ray-wang.md"].text
    session.close()


def test_search_reuses_the_open_index_and_never_serves_a_deleted_note(vault):
    session = VaultSession(vault)
    hits = session.memory_search({"query": "refund policy"})["results"]
    assert hits[0]["path"] == "memory/projects/payment-gateway.md"
    index = session.workspace._index
    (vault / "memory" / "projects" / "payment-gateway.md").unlink()
    hits = session.memory_search({"query": "refund policy"})["results"]
    assert session.workspace._index is index
    assert "memory/projects/payment-gateway.md" not in {h["path"] for h in hits}
    session.close()


@pytest.mark.parametrize("path,why", [
    ("/etc", "absolute"), ("~/x", "absolute"), ("C:/x", "absolute"), ("..", "'..'"),
    ("memory/../../x", "'..'"), ("memory\\x", "backslash"), ("memory/\x00x", "control"),
    ("memory/\nx", "control"),
])
def test_vault_paths_outside_are_refused(vault, path, why):
    with pytest.raises(ToolFailure, match=why):
        vault_path(vault, path)


def test_a_symlink_out_of_the_vault_is_refused(vault, tmp_path):
    (tmp_path / "outside").mkdir()
    (vault / "memory" / "out").symlink_to(tmp_path / "outside")
    with pytest.raises(ToolFailure, match="outside the vault"):
        vault_path(vault, "memory/out")
    assert vault_path(vault, "./memory//people/") == "memory/people"
    assert vault_path(vault, ".") == ""


def _parse_records(root) -> bool:
    """Whether the vault's store holds the parse cache's records."""
    from parse_store import sql

    try:
        return bool(sql(root, "SELECT 1 FROM sqlite_master WHERE name = 'notes'"))
    except StopIteration:  # (no store yet)
        return False


def test_the_parse_cache_is_written_at_most_once_a_minute_and_at_close(vault):
    session = VaultSession(vault)
    session.memory_search({"query": "refund policy"})
    note = vault / "memory" / "people" / "li-na.md"
    note.write_text(note.read_text(encoding="utf-8") + "\nMore.\n", encoding="utf-8")
    session.vault_check({})
    assert not _parse_records(vault)  # not after every call
    session.close()
    assert _parse_records(vault)
    # the CLI reads the vault as the server left it
    from vaultkit.vault.loader import load_vault

    again = load_vault(vault, root=vault)
    assert "More." in again.notes["memory/people/li-na.md"].text


# -- a warm call does not list the vault again ---------------------------------------------

def _counting_walks(monkeypatch):
    import vaultkit.vault.loader as loader

    calls = []
    real = loader.walk

    def walk(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(loader, "walk", walk)
    return calls


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="file events: inotify")
def test_warm_calls_do_not_list_the_vault_until_something_changes(vault, monkeypatch):
    walks = _counting_walks(monkeypatch)
    session = VaultSession(vault)
    session.memory_search({"query": "refund policy"})
    session.memory_search({"query": "refund policy"})  # the folders are watched from here on
    listed = len(walks)
    for _ in range(3):
        session.memory_search({"query": "refund policy"})
    assert len(walks) == listed
    folder = vault / "memory" / "new-topic"
    folder.mkdir()
    (folder / "tea.md").write_text("# Tea\n\nOolong refund policy notes.\n", encoding="utf-8")
    hits = session.memory_search({"query": "oolong"})["results"]
    assert len(walks) == listed + 1
    assert [h["path"] for h in hits] == ["memory/new-topic/tea.md"]
    session.memory_search({"query": "oolong"})  # the new folder is watched after one more
    listed = len(walks)
    (folder / "tea.md").write_text("# Tea\n\nGreen only.\n", encoding="utf-8")
    (vault / "memory" / "coffee.md").write_text("# Coffee\n\nArabica.\n", encoding="utf-8")
    # a note written and one added: the events name them, so only they are listed again
    assert "Green only." in session.vault().notes["memory/new-topic/tea.md"].text
    assert "Arabica." in session.vault().notes["memory/coffee.md"].text
    assert len(walks) == listed
    session.close()


def test_without_file_events_every_call_lists_the_vault(vault, monkeypatch):
    import vaultkit.vault.freshness as freshness

    monkeypatch.setattr(freshness, "_libc", lambda: None)
    walks = _counting_walks(monkeypatch)
    session = VaultSession(vault)
    for _ in range(3):
        session.memory_search({"query": "refund policy"})
    assert len(walks) == 3
    session.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="file events: inotify")
def test_freshness_needs_every_folder_watched_before_the_listing(tmp_path):
    from vaultkit.vault.freshness import Freshness

    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    fresh = Freshness()
    fresh.before_listing([])
    fresh.after_listing([str(a), str(b)])
    assert not fresh.unchanged()  # watched only after the listing: a change may be missed
    fresh.before_listing([str(a), str(b)])
    fresh.after_listing([str(a), str(b)])
    assert fresh.unchanged()
    (b / "x.md").write_text("x")
    assert not fresh.unchanged()
    fresh.before_listing([str(a), str(b / "gone")])  # a folder that cannot be watched
    assert not fresh.unchanged()
    fresh.close()
