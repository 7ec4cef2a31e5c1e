"""A search whose index cannot be brought up to date (another writer holds its lock, the
file or its folder is read-only, the disk is full) answers from an up-to-date copy of it in
memory, the same answer a synced index gives, and says that the index is stale."""

from __future__ import annotations

import json
import sqlite3

import pytest

import vaultkit.memory.search as search_mod
from vaultkit.cli import main
from vaultkit.cli.mcp_server import VaultSession
from vaultkit.memory.search import SearchIndex, index_path, search_scan
from vaultkit.vault.loader import scan_vault

NOTE = "memory/2026-03-02.md"


@pytest.fixture
def vault(make_vault):
    root = make_vault({
        NOTE: "# 2026-03-02\n\n## 09:10\n\n- reviewed the build pipeline\n",
        "memory/semantic/tools.md": "# Tools\n\nThe build pipeline runs on every push.\n",
    })
    assert main(["search", "-C", str(root), "--format", "json", "pipeline"]) == 0  # indexed
    with open(root / NOTE, "a", encoding="utf-8") as f:  # a word the index has not seen
        f.write("- the zeppelin demo moved to Thursday\n")
    return root


@pytest.fixture
def locked(vault, monkeypatch):
    """Another writer holds the index's write lock for the whole test."""
    monkeypatch.setattr(search_mod, "BUSY_TIMEOUT_S", 0.2)
    holder = sqlite3.connect(index_path(vault), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    yield vault
    holder.execute("ROLLBACK")
    holder.close()


def _json(capsys, *argv):
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_a_locked_index_answers_from_an_up_to_date_copy_and_says_stale(locked, capsys):
    got = _json(capsys, "search", "-C", str(locked), "--format", "json", "zeppelin")
    assert [r["path"] for r in got["results"]] == [NOTE]
    assert "zeppelin" in got["results"][0]["snippet"]
    assert got["stale"] is True and "database is locked" in got["note"]


def test_the_copy_answers_as_the_synced_index_does(vault, capsys, monkeypatch):
    monkeypatch.setattr(search_mod, "BUSY_TIMEOUT_S", 0.2)
    holder = sqlite3.connect(index_path(vault), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        stale = _json(capsys, "search", "-C", str(vault), "--format", "json", "build zeppelin")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    fresh = _json(capsys, "search", "-C", str(vault), "--format", "json", "build zeppelin")
    assert "stale" not in fresh and "note" not in fresh
    assert stale.pop("stale") is True and stale.pop("note")
    assert json.dumps(stale) == json.dumps(fresh)  # byte for byte


def test_the_text_output_says_stale_in_one_line(locked, capsys):
    assert main(["search", "-C", str(locked), "zeppelin"]) == 0
    out = capsys.readouterr()
    assert "zeppelin" in out.out and "No results" not in out.err
    notes = [line for line in out.err.splitlines() if "older than the notes" in line]
    assert len(notes) == 1 and notes[0].startswith("vaultkit: note: ")


def test_an_index_that_cannot_be_written_answers_with_the_changed_file(vault, monkeypatch):
    # (the tests run as root, who may write a read-only file: SQLite's refusal is simulated)
    real = SearchIndex.sync

    def refused(self, *args, **kw):
        if self.path is not None:
            raise sqlite3.OperationalError("attempt to write a readonly database")
        return real(self, *args, **kw)
    monkeypatch.setattr(SearchIndex, "sync", refused)
    status: dict = {}
    hits = search_scan(scan_vault(vault, root=vault), "zeppelin", status=status)
    assert [h.path for h in hits] == [NOTE]
    assert "readonly" in status["stale"]


def test_another_sqlite_error_is_not_taken_for_a_stale_index(vault, monkeypatch):
    def broken(self, *args, **kw):
        raise sqlite3.OperationalError("no such column: nonsense")
    monkeypatch.setattr(SearchIndex, "sync", broken)
    with pytest.raises(sqlite3.OperationalError):
        search_scan(scan_vault(vault, root=vault), "zeppelin", status={})


def test_memory_search_and_recall_say_stale(locked):
    session = VaultSession(locked)
    try:
        for answer in (session.memory_search({"query": "zeppelin"}),
                       session.memory_recall({"query": "zeppelin"})):
            assert [r["path"] for r in answer["results"]] == [NOTE]
            assert answer["stale"] is True and "database is locked" in answer["note"]
    finally:
        session.close()


def test_an_index_brought_up_to_date_says_nothing(vault):
    session = VaultSession(vault)
    try:
        answer = session.memory_search({"query": "zeppelin"})
        assert [r["path"] for r in answer["results"]] == [NOTE]
        assert "stale" not in answer and "note" not in answer
    finally:
        session.close()


def test_no_cache_searches_an_index_built_in_memory_and_leaves_the_file_alone(vault, capsys):
    # the file on disk is behind (it has not seen "zeppelin"); --no-cache neither reads it
    # nor brings it up to date: the answer comes from an index built from the notes alone
    before = index_path(vault).read_bytes()
    cached = _json(capsys, "search", "-C", str(vault), "--format", "json", "--no-cache",
                   "zeppelin")
    assert [r["path"] for r in cached["results"]] == [NOTE]
    assert index_path(vault).read_bytes() == before
    fresh = _json(capsys, "search", "-C", str(vault), "--format", "json", "zeppelin")
    assert fresh == cached  # the same answer the file index gives once brought up to date


def test_no_cache_on_a_vault_never_searched_writes_no_index(make_vault, capsys):
    root = make_vault({NOTE: "# 2026-03-02\n\n- the zeppelin demo moved to Thursday\n"})
    answer = _json(capsys, "search", "-C", str(root), "--format", "json", "--no-cache",
                   "zeppelin")
    assert [r["path"] for r in answer["results"]] == [NOTE]
    assert not index_path(root).exists()


def test_an_mcp_session_without_cache_keeps_its_index_in_memory(make_vault):
    root = make_vault({NOTE: "# 2026-03-02\n\n- the zeppelin demo moved to Thursday\n"})
    session = VaultSession(root, use_cache=False)
    try:
        answer = session.memory_search({"query": "zeppelin"})
        assert [r["path"] for r in answer["results"]] == [NOTE]
    finally:
        session.close()
    assert not index_path(root).exists()
