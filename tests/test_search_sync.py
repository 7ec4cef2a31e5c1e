"""Keeping the search index current costs what changed: one edited note re-derives that
note, not the vault; and the relative-date scan of a chunk runs only the patterns the
chunk could match, with the same answer."""

from __future__ import annotations

import datetime as dt
import os
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import vaultkit.memory.search as search_mod
from vaultkit.memory import dates
from vaultkit.memory.memset import memory_notes
from vaultkit.memory.search import SearchIndex
from vaultkit.vault.loader import load_vault


def _age(root, seconds=60):
    for p in root.rglob("*.md"):
        _back(p, seconds)


def _back(path, seconds):
    """``path``'s mtime ``seconds`` in the past (out of the index's racy window)."""
    st_ = path.stat()
    os.utime(path, ns=(st_.st_atime_ns, st_.st_mtime_ns - seconds * 1_000_000_000))


@pytest.fixture
def vault(make_vault):
    files = {f"memory/semantic/topic-{i}.md": f"# Topic {i}\n\nSome text about item {i}.\n"
             for i in range(12)}
    files["memory/INDEX.md"] = ("# Index\n\n- [[topic-3]] — the third topic\n"
                                "- [[topic-5]] — the fifth topic\n")
    root = make_vault(files)
    _age(root)
    return root


def _sync(index, root):
    loaded = load_vault(root, root=root)
    return index.sync(loaded, memory_notes(loaded))


def _count_level1(monkeypatch) -> list[str]:
    seen: list[str] = []
    real = search_mod.level1_text

    def counting(note, lines):
        seen.append(note.path)
        return real(note, lines)
    monkeypatch.setattr(search_mod, "level1_text", counting)
    return seen


def test_one_edited_note_derives_that_note_only(vault, monkeypatch):
    index = SearchIndex(vault)
    try:
        _sync(index, vault)
        seen = _count_level1(monkeypatch)
        note = vault / "memory/semantic/topic-7.md"
        note.write_text("# Topic 7\n\nRewritten: now about zeppelins.\n")
        _back(note, 30)
        stats = _sync(index, vault)
        assert stats == {"added": 0, "updated": 1, "removed": 0}
        assert seen == ["memory/semantic/topic-7.md"]  # not the other 12 notes
        assert [h.path for h in index.search("zeppelins")] == ["memory/semantic/topic-7.md"]
        seen.clear()
        assert _sync(index, vault) == {"added": 0, "updated": 0, "removed": 0}
        assert seen == []
    finally:
        index.close()


def test_a_changed_index_line_updates_the_level1_text_of_its_notes_only(vault, monkeypatch):
    index = SearchIndex(vault)
    try:
        _sync(index, vault)
        assert index.search("marzipan") == []
        seen = _count_level1(monkeypatch)
        (vault / "memory/INDEX.md").write_text(
            "# Index\n\n- [[topic-3]] — the third topic\n- [[topic-5]] — marzipan recipes\n")
        _back(vault / "memory/INDEX.md", 30)
        _sync(index, vault)
        # INDEX.md itself was edited; topic-5's INDEX line changed; topic-3's did not
        assert sorted(seen) == ["memory/INDEX.md", "memory/semantic/topic-5.md"]
        # topic-5 holds no "marzipan": only its level-1 text (its INDEX.md line) does
        assert "memory/semantic/topic-5.md" in [h.path for h in index.search("marzipan")]
        # the line is gone again: topic-5 no longer matches by it
        seen.clear()
        (vault / "memory/INDEX.md").write_text("# Index\n\n- [[topic-3]] — the third topic\n")
        _back(vault / "memory/INDEX.md", 20)
        _sync(index, vault)
        assert sorted(seen) == ["memory/INDEX.md", "memory/semantic/topic-5.md"]
        assert "memory/semantic/topic-5.md" not in [h.path for h in index.search("marzipan")]
    finally:
        index.close()


def test_the_kept_file_table_is_read_again_after_another_writer(vault):
    # a long-lived index keeps the files table between syncs; a sync by another connection
    # (a `vaultkit search` process) must not be undone or duplicated by it
    mine, other = SearchIndex(vault), SearchIndex(vault)
    try:
        _sync(mine, vault)
        (vault / "memory/semantic/topic-2.md").write_text("# Topic 2\n\nNow about gliders.\n")
        _back(vault / "memory/semantic/topic-2.md", 30)
        (vault / "memory/semantic/topic-9.md").unlink()
        assert _sync(other, vault) == {"added": 0, "updated": 1, "removed": 1}
        assert _sync(mine, vault) == {"added": 0, "updated": 0, "removed": 0}
        assert [h.path for h in mine.search("gliders")] == ["memory/semantic/topic-2.md"]
        count = mine.db.execute("SELECT count(*) FROM files").fetchone()[0]
        assert count == 12  # 11 topics and INDEX.md
    finally:
        mine.close()
        other.close()


# -- relative dates: the prefilter changes nothing ----------------------------------------

_PHRASES = ["yesterday", "day before yesterday", "last night", "today", "tonight",
            "this morning", "tomorrow", "last weekend", "this week", "next month", "last year",
            "3 days ago", "a couple of weeks ago", "last Friday", "前天", "昨晚", "上个星期",
            "本月", "明年", "позавчера", "вчера", "послезавтра", "на прошлой неделе",
            "в этом году", "Yesterday", "LAST WEEK", "yeſterday", "la\u017ft week",
            "this mo\u0433ning", "tonıght", "la\u0455t week", "ᲀчера", "\u212aago", "weeks ago",
            "\ud800", "—", "ago"]


def _unfiltered(text, ref):
    real = dates._may_match
    dates._may_match = lambda _text: (lambda _needs: True)
    try:
        return dates.relative_dates(text, ref)
    finally:
        dates._may_match = real


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PHRASES + [" ", "\n", "x", "night", "week"]), max_size=12),
       st.randoms(use_true_random=False))
def test_relative_dates_find_what_every_pattern_finds(parts, rnd: random.Random):
    text = "".join(p if rnd.random() < 0.7 else p.upper() for p in parts)
    ref = dt.date(2024, 2, 29)
    assert dates.relative_dates(text, ref) == _unfiltered(text, ref)


def test_every_english_phrase_holds_an_anchor_and_each_pattern_has_its_needs():
    for phrases in dates._ASCII_NEEDS.values():
        for phrase in phrases:
            assert any(a.decode() in phrase for a in dates._ASCII_ANCHORS), phrase
    kinds = [needs[0] for _rx, _kind, _off, needs in dates._RELATIVE_RE]
    assert "any" not in kinds  # a pattern without its needs would run on every chunk
    for _rx, _kind, _off, (what, phrases) in dates._RELATIVE_RE:
        if what == "cjk":
            assert all("\u4e00" <= ch <= "\u9fff" for p in phrases for ch in p)


# -- the BM25 ranking on the helper connection ---------------------------------------------

def _bm25_on_main(index, query, **kw) -> tuple[list, bool]:
    """The hits of ``query`` and whether the query's own connection ranked by BM25."""
    statements: list[str] = []
    index.db.set_trace_callback(statements.append)
    try:
        hits = index.search(query, **kw)
    finally:
        index.db.set_trace_callback(None)
    return [(h.path, h.start_line, h.score, h.snippet) for h in hits], \
        any("bm25(chunk_fts)" in s for s in statements)


def test_the_helper_ranks_and_its_ranking_is_used_only_for_the_same_state(vault, monkeypatch):
    index = SearchIndex(vault, helper=True)
    try:
        _sync(index, vault)
        hits, on_main = _bm25_on_main(index, "topic item")
        assert hits and not on_main  # ranked on the helper's connection
        # a ranking read from another state of the index (another process wrote meanwhile)
        # is not used: the query ranks again on its own connection, with the same answer
        real = search_mod._Bm25Helper._rank

        def stale(self, match, limit):
            got_match, _generation, ranked, rows = real(self, match, limit)
            return got_match, "another state", ranked, rows
        monkeypatch.setattr(search_mod._Bm25Helper, "_rank", stale)
        assert _bm25_on_main(index, "topic item") == (hits, True)
    finally:
        index.close()


def test_a_respelled_term_is_ranked_on_the_query_connection(vault):
    index = SearchIndex(vault, helper=True)
    try:
        _sync(index, vault)
        # "topicz" is in no note: it is respelled, so the helper ranked another match
        hits, on_main = _bm25_on_main(index, "topicz")
        assert on_main and hits and hits[0][0].startswith("memory/semantic/topic-")
    finally:
        index.close()


def test_every_change_writes_a_new_generation(vault):
    index = SearchIndex(vault)
    try:
        _sync(index, vault)
        first = index._generation()
        assert first
        _sync(index, vault)  # nothing changed
        assert index._generation() == first
        note = vault / "memory/semantic/topic-1.md"
        note.write_text("# Topic 1\n\nAbout kites.\n")
        _back(note, 30)
        _sync(index, vault)
        assert index._generation() not in (None, first)
    finally:
        index.close()


def test_a_one_query_index_ranks_on_its_own_connection(vault):
    index = SearchIndex(vault)  # (a `vaultkit search` process: no thread, no second connection)
    try:
        _sync(index, vault)
        hits, on_main = _bm25_on_main(index, "topic item")
        assert hits and on_main and index._helper is None
    finally:
        index.close()


def test_the_mcp_session_keeps_a_helper_for_its_index(vault):
    from vaultkit.cli.mcp_server import VaultSession

    session = VaultSession(vault)
    try:
        assert session.memory_search({"query": "topic item"})["results"]
        assert session.search_index()._helper is not None
    finally:
        session.close()
    assert session.workspace._index is None


# -- the MCP session's memory set ----------------------------------------------------------

@pytest.mark.parametrize("layout", ["workspace", "memory-only"])
def test_the_session_memory_set_is_memory_notes_and_decided_once(tmp_path, layout, monkeypatch):
    from vaultkit.cli.mcp_server import VaultSession
    from vaultkit.memory import memset

    ws = tmp_path / "ws"
    if layout == "workspace":
        root = ws
        files = {"MEMORY.md": "# Memory\n", "AGENTS.md": "# Agents\n",
                 "memory/2026-01-05.md": "# 2026-01-05\n\n- one\n", "notes/other.md": "# Other\n"}
    else:  # the vault is memory/ and MEMORY.md lies one folder up
        root = ws / "memory"
        files = {"memory/vaultkit.toml": 'memory-dir = "."\n', "MEMORY.md": "# Memory\n",
                 "memory/2026-01-05.md": "# 2026-01-05\n\n- one\n"}
    for rel, text in files.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    (root / ".obsidian").mkdir(exist_ok=True)
    session = VaultSession(root)
    try:
        loaded = session.vault()
        assert session.memory_notes(loaded) == memset.memory_notes(loaded)
        assert "MEMORY.md" in session.memory_notes(loaded)
        calls: list[str] = []
        real = memset.in_memory_set
        monkeypatch.setattr(memset, "in_memory_set",
                            lambda settings, rel: calls.append(rel) or real(settings, rel))
        session.memory_notes(loaded)
        assert calls == []  # every path was decided by the first call
    finally:
        session.close()


def test_notes_read_for_the_racy_window_are_read_once_not_by_every_search(vault, monkeypatch):
    # a sync right after the notes changed (a checkout, a copy): the next search reads and
    # compares those notes, then records that, so the searches after it read none while
    # nothing changes; an edit that keeps the size and mtime is still seen
    import time

    import vaultkit.core.bounded as bounded
    from vaultkit.vault.loader import scan_vault

    monkeypatch.setattr(search_mod, "_RACY_NS", 300_000_000)
    index = SearchIndex(vault)
    try:
        first = search_mod.search_scan(scan_vault(vault, root=vault), "topic", index=index)
        key, _when = index.synced_with()
        newest_ctime = max(p.stat().st_ctime_ns for p in vault.rglob("*.md"))
        index.mark_synced(key, newest_ctime + 1)  # synced right after the last change
        time.sleep(0.4)
        reads: list[str] = []
        real = bounded.read_regular

        def counting(path, *a, **kw):
            if str(path).endswith(".md"):
                reads.append(str(path))
            return real(path, *a, **kw)
        monkeypatch.setattr(bounded, "read_regular", counting)
        again = search_mod.search_scan(scan_vault(vault, root=vault), "topic", index=index)
        assert reads and again == first
        assert index.synced_with()[1] > newest_ctime + 1
        reads.clear()
        third = search_mod.search_scan(scan_vault(vault, root=vault), "topic", index=index)
        assert reads == [] and third == first
        # an edit moves the ctime: read again, and found
        note = vault / "memory/semantic/topic-4.md"
        st_ = note.stat()
        note.write_text(note.read_text().replace("item 4", "zebra"))
        os.utime(note, ns=(st_.st_atime_ns, st_.st_mtime_ns))
        hits = search_mod.search_scan(scan_vault(vault, root=vault), "zebra", index=index)
        assert [h.path for h in hits] == ["memory/semantic/topic-4.md"]
    finally:
        index.close()
