"""The parse cache is a store of per-note records: a run reads the records it uses, writes
the ones that changed, and two processes can use it at once."""

import os
import sqlite3
import subprocess
import sys
import textwrap

import pytest

import vaultkit.vault.loader as vault_mod
import vaultkit.vault.store as store_mod
from vaultkit.vault.loader import Lent, load_vault
from parse_store import age as _age, sql as _sql, store as _store


def _vault(make_vault, count=6):
    files = {f"memory/semantic/n{i}.md": f"# N{i}\n[[n{i + 1}]] #t{i}\n" for i in range(count)}
    root = make_vault(files)
    for p in root.rglob("*.md"):
        _age(p)
    return root


@pytest.fixture
def fetched(monkeypatch):
    """The records a run decodes from the store."""
    seen = []
    real = vault_mod._Cache._record

    def spy(self, path, key):
        seen.append(path)
        return real(self, path, key)

    monkeypatch.setattr(vault_mod._Cache, "_record", spy)
    return seen


def test_a_run_reads_only_the_records_it_uses(make_vault, fetched):
    root = _vault(make_vault)
    first = load_vault(root, save=False)
    first.fact("memory/semantic/n2.md", "k", lambda: "stored")
    first.save_cache()
    fetched.clear()
    vault = load_vault(root)
    assert fetched == []  # the stat columns only
    assert [lk.target for lk in vault.notes["memory/semantic/n2.md"].links] == ["n3"]
    assert vault.fact("memory/semantic/n2.md", "k", lambda: pytest.fail("recomputed")) == "stored"
    assert set(fetched) == {"memory/semantic/n2.md"}  # its parse and facts: one record


def test_facts_are_kept_per_note_and_read_with_it(make_vault):
    root = _vault(make_vault)
    vault = load_vault(root, save=False)
    vault.fact("memory/semantic/n1.md", "k", lambda: ["value"])
    vault.save_cache()
    again = load_vault(root)
    assert again.fact("memory/semantic/n1.md", "k", lambda: pytest.fail("recomputed")) == ["value"]
    # a note with no facts stores none
    (facts,), = _sql(root, "SELECT length(record) FROM notes WHERE path = 'memory/semantic/n3.md'")
    assert facts < 200


def test_facts_of_a_changed_note_are_not_reused(make_vault):
    root = _vault(make_vault)
    vault = load_vault(root, save=False)
    vault.fact("memory/semantic/n1.md", "k", lambda: "old")
    vault.save_cache()
    path = root / "memory/semantic/n1.md"
    path.write_text("# N1 changed\n")
    _age(path, 5)
    again = load_vault(root)
    assert again.fact("memory/semantic/n1.md", "k", lambda: "new") == "new"


def test_one_changed_note_rewrites_its_record_only(make_vault, counting):
    root = _vault(make_vault)
    load_vault(root)
    before = dict(((p, (w, r)) for p, w, r in _sql(root, "SELECT path, seen_ns, record FROM notes")))
    inode = _store(root).stat().st_ino
    path = root / "memory/semantic/n3.md"
    path.write_text("# N3 changed\n[[n0]]\n")
    _age(path, 5)
    counting.clear()
    load_vault(root)
    assert counting == ["memory/semantic/n3.md"]
    after = dict(((p, (w, r)) for p, w, r in _sql(root, "SELECT path, seen_ns, record FROM notes")))
    assert {p for p in after if after[p] != before[p]} == {"memory/semantic/n3.md"}
    assert _store(root).stat().st_ino == inode  # changed in place, not replaced


def test_added_and_removed_notes_add_and_remove_records(make_vault):
    root = _vault(make_vault)
    load_vault(root)
    (root / "memory/semantic/n0.md").unlink()
    (root / "memory/semantic/new.md").write_text("# New\n")
    load_vault(root)
    paths = [p for p, in _sql(root, "SELECT path FROM notes ORDER BY path")]
    assert "memory/semantic/n0.md" not in paths and "memory/semantic/new.md" in paths


def test_an_unchanged_vault_writes_nothing(make_vault):
    root = _vault(make_vault)
    load_vault(root)
    before = _store(root).stat().st_mtime_ns
    vault = load_vault(root)
    _ = vault.notes["memory/semantic/n1.md"].links  # used, but unchanged
    vault.save_cache()
    assert _store(root).stat().st_mtime_ns == before


def test_a_run_that_uses_many_notes_reads_them_in_one_go(make_vault, monkeypatch):
    root = _vault(make_vault, count=80)
    load_vault(root)
    vault = load_vault(root)
    cache = vault._cache
    for note in vault.notes.values():
        _ = note.links
    assert cache._singles == vault_mod._SINGLE_FETCHES and cache._bulk is not None  # then one
    fresh = load_vault(root, use_cache=False)
    assert [n.to_plain() for n in vault.notes.values()] == \
        [n.to_plain() for n in fresh.notes.values()]


def test_records_written_under_another_key_are_never_used(make_vault, counting):
    # another process rebuilds the store (another config) after this one listed it
    root = _vault(make_vault)
    load_vault(root)
    vault = load_vault(root)
    other = vault_mod._Cache(store_mod.Store(root), "another-config")
    lied = load_vault(root, use_cache=False)
    changed = lied.notes["memory/semantic/n1.md"]
    changed.links = []  # what the other config's record says
    other.started_ns = vault.started_ns
    other.save(lied.notes, {})
    counting.clear()
    assert [lk.target for lk in vault.notes["memory/semantic/n1.md"].links] == ["n2"]
    assert counting == ["memory/semantic/n1.md"]  # read again from the file, not taken
    vault.fact("memory/semantic/n2.md", "k", lambda: 1)
    vault.save_cache()  # and nothing written into the other's store
    (key,), = _sql(root, "SELECT value FROM notes_meta WHERE key = 'key'")
    assert key.endswith(":another-config")


@pytest.mark.parametrize("kind", ["symlink", "fifo", "folder", "journal symlink"])
def test_a_store_that_is_not_a_file_is_never_followed_and_is_rebuilt(make_vault, tmp_path,
                                                                     capsys, counting, kind):
    root = _vault(make_vault)
    load_vault(root)
    store = _store(root)
    outside = tmp_path / "outside.sqlite"
    outside.write_bytes(b"keep me")
    if kind == "journal symlink":
        os.symlink(outside, str(store) + "-journal")
    else:
        store.unlink()
        if kind == "symlink":
            store.symlink_to(outside)
        elif kind == "fifo":
            os.mkfifo(store)
        else:
            store.mkdir()
    capsys.readouterr()
    counting.clear()
    vault = load_vault(root)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "warning:" in err and store.name in err, err
    assert "Traceback" not in err
    assert len(counting) == 6 and len(vault.notes) == 6
    assert outside.read_bytes() == b"keep me"
    assert store.is_file() and not store.is_symlink()
    assert not os.path.lexists(str(store) + "-journal")
    counting.clear()
    load_vault(root)  # rebuilt: used without a word
    assert counting == [] and capsys.readouterr().err == ""


def test_a_locked_store_is_waited_for_then_left_alone(make_vault, monkeypatch, capsys, counting):
    root = _vault(make_vault)
    load_vault(root)
    monkeypatch.setattr(store_mod, "LOCK_TIMEOUT_S", 0.2)
    holder = sqlite3.connect(_store(root), isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        counting.clear()
        vault = load_vault(root)
        assert len(vault.notes) == 6 and len(counting) == 6  # checked without the cache
        assert capsys.readouterr().err == ""
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    counting.clear()
    load_vault(root)  # and the store was neither removed nor damaged
    assert counting == []


def test_a_read_only_vault_reads_its_cache(make_vault, counting, capsys):
    root = _vault(make_vault)
    load_vault(root)
    paths = [root / ".vaultkit" / "cache", root / ".vaultkit", root]
    os.chmod(_store(root), 0o444)
    for p in paths:
        os.chmod(p, 0o555)
    try:
        counting.clear()
        vault = load_vault(root)
        assert counting == []
        assert [lk.target for lk in vault.notes["memory/semantic/n1.md"].links] == ["n2"]
        vault.fact("memory/semantic/n1.md", "k", lambda: 1)
        vault.save_cache()  # cannot be written: not an error
        assert capsys.readouterr().err == ""
    finally:
        for p in reversed(paths):
            os.chmod(p, 0o755)
        os.chmod(_store(root), 0o644)


_WRITER = textwrap.dedent("""
    import os, sys
    from vaultkit.vault.loader import load_vault
    root, name, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
    for i in range(rounds):
        path = os.path.join(root, "memory", "semantic", name + ".md")
        with open(path, "w") as fh:
            fh.write(f"# {name} {i}\\n[[n{i % 5}]]\\n" + "x" * (i % 7))
        vault = load_vault(root)
        for note in list(vault.notes.values())[:: 3]:
            vault.fact(note.path, "round", lambda: i)
        vault.save_cache()
""")


def test_two_processes_at_once_never_damage_it(make_vault, tmp_path):
    root = _vault(make_vault, count=30)
    load_vault(root)
    script = tmp_path / "writer.py"
    script.write_text(_WRITER)
    procs = [subprocess.Popen([sys.executable, str(script), str(root), name, "25"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for name in ("w1", "w2", "w3")]
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0 and err == b"", err.decode()
    assert _sql(root, "PRAGMA integrity_check") == [("ok",)]
    for p in root.rglob("*.md"):
        _age(p)
    vault = load_vault(root, save=False)
    fresh = load_vault(root, use_cache=False)
    assert [n.to_plain() for n in vault.notes.values()] == \
        [n.to_plain() for n in fresh.notes.values()]


def test_a_server_keeps_the_store_across_loads(make_vault, counting, fetched):
    root = _vault(make_vault)
    first = load_vault(root, save=False)
    first.fact("memory/semantic/n1.md", "k", lambda: "kept")
    first.save_cache()
    vault = load_vault(root)
    path = root / "memory/semantic/n4.md"
    path.write_text("# N4 changed\n")
    _age(path, 5)
    counting.clear()
    fetched.clear()
    again = load_vault(root, lent=Lent(previous=vault))
    assert again._cache is vault._cache and counting == ["memory/semantic/n4.md"]
    # (taken over as it is: not decoded for it)
    assert again.notes.entry("memory/semantic/n1.md") is vault.notes.entry("memory/semantic/n1.md")
    assert again.fact("memory/semantic/n1.md", "k", lambda: pytest.fail("recomputed")) == "kept"
    assert fetched == ["memory/semantic/n1.md"]
    (seen,), = _sql(root, "SELECT seen_ns FROM notes WHERE path = 'memory/semantic/n4.md'")
    assert seen == again.started_ns  # the changed note's record, written by the second load


def test_a_symlinked_cache_folder_is_neither_read_nor_written(make_vault, tmp_path, capsys,
                                                                counting):
    root = _vault(make_vault)
    load_vault(root)
    elsewhere = tmp_path / "elsewhere"
    (root / ".vaultkit" / "cache").rename(elsewhere)
    (root / ".vaultkit" / "cache").symlink_to(elsewhere)
    before = {p.name: p.stat().st_mtime_ns for p in elsewhere.iterdir()}
    capsys.readouterr()
    counting.clear()
    vault = load_vault(root)
    vault.fact("memory/semantic/n1.md", "k", lambda: 1)
    vault.save_cache()
    assert len(counting) == 6  # not read through the link
    assert {p.name: p.stat().st_mtime_ns for p in elsewhere.iterdir()} == before
    assert capsys.readouterr().err == ""


def test_a_hook_run_rewrites_only_the_changed_note_s_record(make_vault, monkeypatch, capsys):
    from vaultkit.cli import main

    files = {f"memory/semantic/n{i}.md": f"# N{i}\n\nSee [[n{(i + 1) % 120}]].\n"
             for i in range(120)}
    root = make_vault({**files, "MEMORY.md": "# Memory\n\n- [[n0]]\n"})
    for p in root.rglob("*.md"):
        _age(p, 30)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    git = lambda *a: subprocess.run(["git", *a], cwd=root, check=True, capture_output=True,  # noqa: E731
                                    env=env)
    monkeypatch.chdir(root)
    main(["index", "-q"])  # an INDEX.md, as a maintained vault has
    git("init", "-q")
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--no-verify", "-m", "c")
    main(["check", "-q"])
    main(["check", "-q"])
    before = dict(_sql(root, "SELECT path, seen_ns FROM notes"))
    note = root / "memory/semantic/n7.md"
    note.write_text(note.read_text() + "\nOne more line.\n")
    _age(note, 5)
    git("add", "memory/semantic/n7.md")
    inode = _store(root).stat().st_ino
    main(["check", "--hook", "memory/semantic/n7.md", "-q"])
    assert _store(root).stat().st_ino == inode
    after = dict(_sql(root, "SELECT path, seen_ns FROM notes"))
    assert {p for p in after if after[p] != before[p]} == {"memory/semantic/n7.md"}


def test_facts_a_lent_vault_computed_are_written_by_the_load_that_took_them(make_vault):
    # the workspace once marked the new vault dirty from outside; the load does it itself
    root = _vault(make_vault)
    first = load_vault(root)
    first.fact("memory/semantic/n1.md", "k", lambda: "kept")  # (not saved)
    again = load_vault(root, save=False, lent=Lent(previous=first))
    assert again.notes["memory/semantic/n1.md"] is first.notes["memory/semantic/n1.md"]
    again.save_cache()
    fresh = load_vault(root, save=False)
    assert fresh.fact("memory/semantic/n1.md", "k", lambda: "recomputed") == "kept"
