"""The parse cache never serves a stale result and never runs code."""

import os

import pytest

import vaultkit.vault.loader as vault_mod
from vaultkit.vault.loader import load_vault
from parse_store import age as _age, sql as _sql, store as _store


def _records(root) -> dict:
    """``{path: (size, mtime_ns, seen_ns, parse, facts)}`` as the store holds them (the
    ctime, inode and blob id columns are left out)."""
    import sqlite3

    db = sqlite3.connect(_store(root))
    try:
        zdict = dict(db.execute("SELECT key, value FROM notes_meta"))["zdict"]
        cache = object.__new__(vault_mod._Cache)
        cache.zdict = zdict
        return {p: (s, m, w, *cache._decode(r)) for p, s, m, w, r in
                db.execute("SELECT path, size, mtime_ns, seen_ns, record FROM notes")}
    finally:
        db.close()


def _vault(make_vault):
    root = make_vault({"memory/2026-01-01.md": "# 2026-01-01\n[[A]]\n",
                       "memory/semantic/a.md": "# A\n"})
    for p in root.rglob("*.md"):
        _age(p)
    return root


def test_second_run_parses_nothing(make_vault, counting):
    root = _vault(make_vault)
    load_vault(root)
    assert sorted(counting) == ["memory/2026-01-01.md", "memory/semantic/a.md"]
    counting.clear()
    vault = load_vault(root)
    assert counting == []
    assert [lk.target for lk in vault.notes["memory/2026-01-01.md"].links] == ["A"]
    assert (root / ".vaultkit" / "CACHEDIR.TAG").read_text().startswith(
        "Signature: 8a477f597d28d172789f06886806bc55")
    assert (root / ".vaultkit" / ".gitignore").read_text().endswith("*\n")


def test_changed_file_is_reparsed(make_vault, counting):
    root = _vault(make_vault)
    load_vault(root)
    counting.clear()
    target = root / "memory/semantic/a.md"
    target.write_text("# A changed\n[[B]]\n")
    _age(target, 5)
    vault = load_vault(root)
    assert counting == ["memory/semantic/a.md"]
    assert [lk.target for lk in vault.notes["memory/semantic/a.md"].links] == ["B"]


def test_same_size_edit_in_the_same_tick_is_not_trusted(make_vault, counting):
    root = make_vault({"memory/semantic/a.md": "# A [[X]]\n"})
    target = root / "memory/semantic/a.md"
    load_vault(root)  # cache written within the same second as the file
    before = os.stat(target)
    target.write_text("# A [[Y]]\n")  # same size
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))  # and same mtime
    vault = load_vault(root)
    assert [lk.target for lk in vault.notes["memory/semantic/a.md"].links] == ["Y"]


def test_deleted_and_new_files(make_vault, counting):
    root = _vault(make_vault)
    load_vault(root)
    (root / "memory/semantic/a.md").unlink()
    (root / "memory/semantic/b.md").write_text("# B\n")
    vault = load_vault(root)
    assert sorted(vault.notes) == ["memory/2026-01-01.md", "memory/semantic/b.md"]


@pytest.mark.parametrize("change", ["config", "version"])
def test_config_or_version_change_discards_cache(make_vault, counting, monkeypatch, change):
    root = _vault(make_vault)
    load_vault(root)
    counting.clear()
    if change == "config":
        (root / "vaultkit.toml").write_text("ignore = ['orphan-note']\n")
    else:
        monkeypatch.setattr(vault_mod, "__version__", "999.0")
    load_vault(root)
    assert len(counting) == 2


def test_garbage_cache_is_ignored(make_vault, counting):
    root = _vault(make_vault)
    load_vault(root)
    for f in (root / ".vaultkit" / "cache").iterdir():
        f.write_bytes(b"\x00garbage\xff" * 10)  # (a "SQLite format 3" header would not help)
    counting.clear()
    vault = load_vault(root)
    assert len(counting) == 2 and len(vault.notes) == 2


def test_no_cache_writes_nothing(make_vault):
    root = _vault(make_vault)
    load_vault(root, use_cache=False)
    assert not (root / ".vaultkit").exists()


def test_read_only_vault_still_loads(make_vault, tmp_path):
    root = _vault(make_vault)
    os.chmod(root, 0o555)
    try:
        vault = load_vault(root)
        assert len(vault.notes) == 2
    finally:
        os.chmod(root, 0o755)


def test_parallel_parse_matches_serial(make_vault, monkeypatch):
    files = {f"memory/semantic/n{i}.md": f"# N{i}\n[[n{i + 1}]] #t{i}\n" for i in range(500)}
    root = make_vault(files)
    serial = load_vault(root, use_cache=False)
    monkeypatch.setattr(vault_mod, "_PARALLEL_MIN", 10)
    parallel = load_vault(root, use_cache=False)
    assert [n.to_plain() for n in serial.notes.values()] == [n.to_plain() for n in parallel.notes.values()]


def test_a_note_a_worker_parsed_is_decoded_once_and_the_cache_stores_its_parse(make_vault,
                                                                              monkeypatch):
    import marshal

    from vaultkit.vault.model import Note

    files = {f"memory/semantic/n{i}.md": f"# N{i}\n[[n{i + 1}]] #t{i}\n" for i in range(60)}
    root = make_vault(files)
    monkeypatch.setattr(vault_mod, "_PARALLEL_MIN", 10)
    decoded = []
    real = Note.from_plain.__func__
    monkeypatch.setattr(Note, "from_plain", classmethod(
        lambda cls, t: decoded.append(t[0]) or real(cls, t)))
    vault = load_vault(root)
    assert sorted(decoded) == sorted(files)  # each note decoded once, as it arrived
    for path, note in vault.notes.items():
        # every field is set (not a lazy note decoded again on first use) ...
        assert object.__getattribute__(note, "headings")[0].text == path[16:-3].upper()
        assert note.text == files[path]
    assert sorted(decoded) == sorted(files)  # reading every field decoded nothing again
    # the cache stores each note's parse (marshalled again when written: the worker's
    # bytes are not held to the end of the run) ...
    records = _records(root)
    for path, note in vault.notes.items():
        assert marshal.loads(records[path][3]) == note.to_plain(with_text=False)
    # ... and serves it to the next run, which parses nothing
    decoded.clear()
    again = load_vault(root)
    assert [n.to_plain() for n in again.notes.values()] == \
        [n.to_plain() for n in vault.notes.values()]


def test_a_run_without_the_cache_keeps_no_worker_bytes(make_vault, monkeypatch):
    # nothing will write them: the notes of a big vault would hold them to the end
    files = {f"memory/semantic/n{i}.md": f"# N{i}\n[[n{i + 1}]] #t{i}\n" for i in range(60)}
    root = make_vault(files)
    monkeypatch.setattr(vault_mod, "_PARALLEL_MIN", 10)
    vault = load_vault(root, use_cache=False)
    assert len(vault.notes) == 60
    for path, note in vault.notes.items():
        assert note.record is None
        assert note.headings[0].text == path[16:-3].upper() and note.text == files[path]


def test_a_run_with_the_cache_keeps_no_worker_bytes_either(make_vault, monkeypatch):
    files = {f"memory/semantic/n{i}.md": f"# N{i}\n[[n{i + 1}]] #t{i}\n" for i in range(60)}
    root = make_vault(files)
    monkeypatch.setattr(vault_mod, "_PARALLEL_MIN", 10)
    vault = load_vault(root, save=False)
    assert not [p for p, n in vault.notes.items() if n.record is not None]
    vault.save_cache()
    assert len(_records(root)) == 60
    # written once: a second save of the same notes writes nothing
    writes = []
    monkeypatch.setattr(vault_mod._Cache, "_deflater",
                        staticmethod(lambda zdict: writes.append(1) or 1 / 0))
    vault._dirty = True
    vault.save_cache()
    assert writes == []


def test_a_cold_cache_write_keeps_no_tuple_per_note_it_parsed(make_vault, monkeypatch):
    # the write ends a cold check, at its peak of memory: for the notes this run parsed it
    # keeps one shared marker (the vault holds their parse and facts), no tuple each, and
    # still never asks the store for them
    import sqlite3

    files = {f"memory/semantic/n{i}.md": f"# N{i}\n[[n{i + 1}]] #t{i}\n" for i in range(60)}
    root = make_vault(files)
    monkeypatch.setattr(vault_mod, "_PARALLEL_MIN", 10)
    vault = load_vault(root, save=False)
    for path in vault.notes:
        vault.fact(path, "x", lambda: 1)
    vault.save_cache()
    cache = vault._cache
    assert len(_records(root)) == 60
    assert len(cache._fetched) == 60 and len({id(v) for v in cache._fetched.values()}) == 1
    assert next(iter(cache._fetched.values())) is vault_mod._OWN
    assert len(cache.stats) == 60 and all(cache.stored[p] is n for p, n in vault.notes.items())
    real_db, cache.db = cache.db, None  # (a read of the store would find nothing now)
    note = vault.notes["memory/semantic/n3.md"]
    key = vault_mod._key(note)
    assert cache.facts_for(note) == b"" and cache._record(note.path, key) == (b"", b"")
    assert cache._record(note.path, (key[0] + 1, *key[1:])) is None  # not as stored
    cache.db = real_db
    assert isinstance(cache.db, sqlite3.Connection)
    monkeypatch.setattr(vault_mod._Cache, "_deflater",
                        staticmethod(lambda zdict: 1 / 0))
    vault._dirty = True
    vault.save_cache()  # nothing to write again
    assert vault.fact("memory/semantic/n3.md", "x", lambda: 2) == 1


def test_leftover_temp_file_of_an_interrupted_write_is_not_scanned(make_vault):
    root = make_vault({"memory/semantic/a.md": "# A\n",
                       "memory/semantic/.a.md.x1y2.vaultkit-tmp": "# half written\n"})
    vault = load_vault(root, use_cache=False)
    assert list(vault.notes) == ["memory/semantic/a.md"] and vault.attachments == {}


def test_cache_records_when_the_files_were_listed_not_when_it_was_written(make_vault):
    # a command that finishes long after it read a note must not make an edit made in the
    # same clock tick as the read look older than the cache
    root = make_vault({"memory/semantic/a.md": "# A\n"})
    vault = load_vault(root, save=False)
    _ = vault.notes["memory/semantic/a.md"].links
    vault._dirty = True
    vault.save_cache()
    assert _records(root)["memory/semantic/a.md"][2] == vault.started_ns
    assert vault.started_ns <= os.stat(root / "memory/semantic/a.md").st_atime_ns + 10**9


def test_same_size_edit_after_a_slow_run_is_still_seen(make_vault):
    import time

    root = make_vault({"memory/semantic/a.md": "# A [[X]]\n"})
    target = root / "memory/semantic/a.md"
    vault = load_vault(root, save=False)
    assert [lk.target for lk in vault.notes["memory/semantic/a.md"].links] == ["X"]
    st = target.stat()
    target.write_text("# A [[Y]]\n")
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    time.sleep(2.1)  # the command is slow: it saves its cache well after reading
    vault.save_cache()
    again = load_vault(root)
    assert [lk.target for lk in again.notes["memory/semantic/a.md"].links] == ["Y"]


@pytest.mark.parametrize("damage", ["cut", "not deflate", "code object", "wrong shape"])
def test_damaged_note_in_the_cache_is_read_from_disk_again(make_vault, counting, damage):
    import marshal
    import zlib

    root = _vault(make_vault)
    load_vault(root)
    bad = {"cut": lambda r: r[: len(r) // 2], "not deflate": lambda r: b"\xff" * 40,
           "code object": lambda r: _deflate(root, marshal.dumps(compile("1", "x", "eval"))),
           "wrong shape": lambda r: _deflate(root, marshal.dumps((1, 2)))}[damage]
    (record,), = _sql(root, "SELECT record FROM notes WHERE path = 'memory/2026-01-01.md'")
    _sql(root, "UPDATE notes SET record = ? WHERE path = 'memory/2026-01-01.md'", bad(record))
    counting.clear()
    vault = load_vault(root)
    assert [lk.target for lk in vault.notes["memory/2026-01-01.md"].links] == ["A"]
    assert counting == ["memory/2026-01-01.md"]
    vault.save_cache()
    counting.clear()
    vault = load_vault(root)  # and the cache was mended
    assert [lk.target for lk in vault.notes["memory/2026-01-01.md"].links] == ["A"]
    assert counting == []


def _deflate(root, payload: bytes) -> bytes:
    import zlib

    (zdict,), = _sql(root, "SELECT value FROM notes_meta WHERE key = 'zdict'")
    z = zlib.compressobj(1, zlib.DEFLATED, -14, 5, zlib.Z_DEFAULT_STRATEGY, zdict)
    return z.compress(payload) + z.flush()


def test_unreadable_file_does_not_make_every_run_rewrite_the_cache(make_vault):
    root = _vault(make_vault)
    (root / "memory/semantic/latin1.md").write_bytes(b"caf\xe9\n")
    _age(root / "memory/semantic/latin1.md")
    load_vault(root)
    cache = _store(root)
    before = cache.stat().st_mtime_ns
    load_vault(root)
    load_vault(root)
    assert cache.stat().st_mtime_ns == before


def test_cache_files_are_never_written_through_dangling_symlinks(make_vault, tmp_path):
    root = _vault(make_vault)
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / ".vaultkit").mkdir()
    (root / ".vaultkit" / "CACHEDIR.TAG").symlink_to(outside / "tag")
    (root / ".vaultkit" / ".gitignore").symlink_to(outside / "ignore")
    load_vault(root)
    assert list(outside.iterdir()) == []


def test_findings_of_a_file_that_became_readable_are_not_reused(make_vault, monkeypatch, capsys):
    import json

    from vaultkit.cli import main

    root = _vault(make_vault)
    real_open = open

    def no_access(path, *a, **k):
        if str(path).endswith("semantic/a.md"):
            raise PermissionError(13, "Permission denied")
        return real_open(path, *a, **k)

    real_os_open = os.open

    def no_os_access(path, *a, **k):  # notes are read with os.open (vaultkit.core.bounded)
        if str(path).endswith("semantic/a.md"):
            raise PermissionError(13, "Permission denied")
        return real_os_open(path, *a, **k)

    monkeypatch.setattr("builtins.open", no_access)
    monkeypatch.setattr(os, "open", no_os_access)
    main(["check", str(root), "--format", "json"])
    first = json.loads(capsys.readouterr().out)
    assert any(d["rule"] == "file-unreadable" for d in first)
    monkeypatch.setattr("builtins.open", real_open)  # the permission is fixed: same size, mtime
    monkeypatch.setattr(os, "open", real_os_open)
    main(["check", str(root), "--format", "json"])
    assert not any(d["rule"] == "file-unreadable" for d in json.loads(capsys.readouterr().out))


def test_the_cache_keeps_no_note_text_and_reads_it_from_the_file(make_vault):
    import marshal

    root = _vault(make_vault)
    (root / "memory/semantic/bom.md").write_bytes(b"\xef\xbb\xbf# B\r\nNUL\x00 here [[A]]\r\n")
    _age(root / "memory/semantic/bom.md")
    fresh = load_vault(root, use_cache=False).notes["memory/semantic/bom.md"]
    load_vault(root)
    records = _records(root)
    assert sorted(records) == ["memory/2026-01-01.md", "memory/semantic/a.md",
                               "memory/semantic/bom.md"]
    assert all(marshal.loads(blob)[4] is None for _, _, _, blob, _ in records.values())
    assert not any(b"NUL" in blob for _, _, _, blob, _ in records.values())
    note = load_vault(root).notes["memory/semantic/bom.md"]
    assert note.record is not None  # from the cache
    assert (note.text, note.bom, note.crlf, note.nul, note.lines) == \
        (fresh.text, fresh.bom, fresh.crlf, fresh.nul, fresh.lines)


def test_a_note_changed_after_the_listing_is_parsed_again_not_mixed(make_vault):
    root = _vault(make_vault)
    load_vault(root)
    vault = load_vault(root)
    path = root / "memory/2026-01-01.md"
    path.write_text("# 2026-01-01\nnow [[B]] and [[C]]\n")  # after the listing, before use
    note = vault.notes["memory/2026-01-01.md"]
    assert "[[B]]" in note.text
    assert [lk.target for lk in note.links] == ["B", "C"]  # text and parse agree


def test_an_older_cache_format_is_removed_not_read(make_vault, counting):
    root = _vault(make_vault)
    cache_dir = root / ".vaultkit" / "cache"
    cache_dir.mkdir(parents=True)
    # the notes caches of older formats, and 0.3.0's file per cache
    old = [cache_dir / "notes-1.marshal", cache_dir / "notes-7.2.marshal",
           cache_dir / "notes-6.3.sqlite", cache_dir / "notes-6.3.sqlite-journal",
           cache_dir / "notes-3.5.sqlite", cache_dir / "aliases.marshal",
           cache_dir / "resolver.marshal", cache_dir / "results.marshal",
           cache_dir / "index-memo.marshal", cache_dir / "git-diff.marshal",
           cache_dir / "settings-0123456789abcdef.marshal", cache_dir / "outbound-verified",
           cache_dir / "store-0.sqlite"]
    for path in old:
        path.write_bytes(b"an old format")
    load_vault(root)
    assert len(counting) == 2  # nothing read from them
    assert not any(path.exists() for path in old)
    assert sorted(p.name for p in cache_dir.iterdir()) == [_store(root).name]


def test_a_damaged_cache_is_rebuilt_with_a_warning_once(make_vault, capsys, counting):
    root = _vault(make_vault)
    load_vault(root)
    cache = _store(root)
    cache.write_bytes(b"\x00garbage\xff" * 10)
    capsys.readouterr()
    counting.clear()
    vault = load_vault(root)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "warning:" in err and cache.name in err and "Traceback" not in err
    assert len(counting) == 2 and len(vault.notes) == 2
    load_vault(root)  # rebuilt: read without a word
    assert capsys.readouterr().err == ""


def test_two_installs_of_one_version_share_the_cache(make_vault, tmp_path, monkeypatch):
    """The bundled pack is known by its bytes, not by where the install put it: pre-commit's
    environment and a pip install of the same vaultkit do not rebuild each other's cache.
    A pack whose bytes differ is another key."""
    import shutil

    import vaultkit.core.resources as resources
    from vaultkit.vault.profile import load_settings

    root = _vault(make_vault)
    here = load_settings(root, use_cache=False).fingerprint
    other = tmp_path / "other-install" / "rules"
    shutil.copytree(resources.rules_dir(), other)
    monkeypatch.setattr(resources, "rules_dir", lambda: other)
    assert load_settings(root, use_cache=False).fingerprint == here
    packs = ("openclaw", "obsidian")
    before = {name: load_settings(root, name, use_cache=False).fingerprint for name in packs}
    assert before["openclaw"] == here and before["obsidian"] != here
    pack = other / "openclaw.yaml"
    pack.write_bytes(pack.read_bytes() + b"\n# changed\n")
    # obsidian's pack takes the runtimes of openclaw's: a change there is a change of both
    assert all(load_settings(root, name, use_cache=False).fingerprint != before[name]
               for name in packs)


def test_settings_are_built_once_per_content_in_a_process(make_vault, monkeypatch):
    """A process that loads a vault's settings for every request (the MCP server, the
    watcher's answering process) builds them once while the files are the same, and anew
    when vaultkit.toml changes."""
    import vaultkit.vault.profile as profile_mod

    root = make_vault({"memory/semantic/a.md": "# A\n"})
    (root / "vaultkit.toml").write_text('exclude = ["drafts/"]\n', encoding="utf-8")
    built = []
    real = profile_mod._settings
    monkeypatch.setattr(profile_mod, "_settings",
                        lambda *a, **k: built.append(1) or real(*a, **k))
    first = profile_mod.load_settings(root)
    assert profile_mod.load_settings(root) is first and len(built) == 1
    (root / "vaultkit.toml").write_text('exclude = ["drafts/", "old/"]\n', encoding="utf-8")
    second = profile_mod.load_settings(root)
    assert second is not first and len(built) == 2
    assert list(second.config.exclude) == ["drafts/", "old/"]
    assert profile_mod.load_settings(root, use_cache=False) is not second  # (validated)
