"""One store per vault (vaultkit.vault.store): every cache under ``.vaultkit/`` is a
namespace of one SQLite file, with the version, damage, read-only and locking rules written
once; a cached answer is a fresh run's."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

from cli_invoke import invoke
from parse_store import entry, has_entry, sql, store as store_file
from vault_files import age_files
from vaultkit.vault import store as store_mod
from vaultkit.vault.store import NULL, RELEASE, Store

FILES = {"memory/semantic/a.md": "---\naliases: [Alpha]\n---\n# A\n[[missing]] [[b]]\n",
         "memory/semantic/b.md": "# B\n[[Alpha]] [[gone]]\n",
         "MEMORY.md": "# Memory\n\n- [[a]]\n"}
CACHES = ("settings", "results", "resolver", "aliases", "outbound-verified")


@pytest.fixture
def vault(make_vault):
    root = make_vault(FILES)
    age_files(root)
    return root


def _check(root, *extra):
    rc, out, err = invoke(["check", "--format", "json", *extra, "."], root)
    assert "Traceback" not in err and "internal error" not in err, err
    return rc, json.loads(out), err


def _run(root, *extra):
    """:func:`_check` in a process of its own (as the command line runs)."""
    proc = subprocess.run([sys.executable, "-m", "vaultkit", "check", "--format", "json",
                           *extra, "."], cwd=root, capture_output=True, text=True, timeout=120)
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    return proc.returncode, json.loads(proc.stdout), proc.stderr


def test_every_cache_is_a_namespace_of_one_file(vault):
    fresh = _check(vault, "--no-cache")
    assert not (vault / ".vaultkit").exists()  # --no-cache: nothing written
    assert _check(vault)[:2] == fresh[:2]
    assert sorted(p.name for p in (vault / ".vaultkit" / "cache").iterdir()) == [
        store_mod.NAME]
    assert all(has_entry(vault, name) for name in CACHES), \
        sql(vault, "SELECT name FROM entries")
    assert sql(vault, "SELECT count(*) FROM notes") == [(3,)]
    assert sql(vault, "SELECT value FROM store_meta WHERE key = 'release'") == [(RELEASE,)]
    assert _check(vault)[:2] == fresh[:2]  # warm: the same answer


@pytest.mark.parametrize("damage", ["truncated", "garbage", "empty", "zeroed header"])
def test_a_damaged_store_is_rebuilt_without_a_traceback(vault, damage):
    fresh = _run(vault, "--no-cache")
    _run(vault)
    path = store_file(vault)
    data = path.read_bytes()
    path.write_bytes({"truncated": data[:len(data) // 3], "garbage": os.urandom(len(data)),
                      "empty": b"", "zeroed header": b"\0" * 100 + data[100:]}[damage])
    rc, found, err = _run(vault)
    assert (rc, found) == fresh[:2]
    assert err.count("warning:") <= 1  # (said once at most, then rebuilt)
    again = _run(vault)
    assert again[:2] == fresh[:2] and "warning:" not in again[2]
    assert all(has_entry(vault, name) for name in CACHES)
    assert sql(vault, "PRAGMA integrity_check") == [("ok",)]


def test_a_store_of_another_release_is_never_read_and_is_rebuilt(vault):
    fresh = _check(vault, "--no-cache")
    _check(vault)
    # another release wrote findings that are not this vault's: never shown
    key, stamp, results, *rest = entry(vault, "results")
    results["broken-link"] = []
    from parse_store import set_entry

    set_entry(vault, "results", (key, stamp, results, *rest))
    assert _check(vault)[1] != fresh[1]  # (this release would trust its own store)
    sql(vault, "UPDATE store_meta SET value = '1:0.0.1' WHERE key = 'release'")
    assert Store(vault).get("results") is None
    assert _check(vault)[:2] == fresh[:2]
    assert sql(vault, "SELECT value FROM store_meta WHERE key = 'release'") == [(RELEASE,)]
    assert _check(vault)[:2] == fresh[:2]


def test_a_read_only_vault_reads_its_store_and_never_writes_it(vault, monkeypatch):
    import sqlite3

    fresh = _check(vault, "--no-cache")
    _check(vault)
    (vault / "memory/semantic/b.md").write_text("# B\n[[a]]\n")  # (a change to write)
    age_files(vault)
    fresh = _check(vault, "--no-cache")
    path = store_file(vault)
    before = path.read_bytes()
    # a read-only file system (or a vault of another user: root may write anything, so
    # the tests cannot make one with chmod): SQLite opens the file read-only, or not at all
    real = sqlite3.connect

    def read_only(database, *args, **kwargs):
        if "mode=rw" in str(database):
            raise sqlite3.OperationalError("attempt to write a readonly database")
        return real(database, *args, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", read_only)
    reads = []
    real_get = Store.get
    monkeypatch.setattr(Store, "get", lambda self, name, *a: reads.append(name)
                        or real_get(self, name, *a))
    rc, found, err = _check(vault)
    assert (rc, found) == fresh[:2] and "warning" not in err, err
    assert "results" in reads  # (read, not written)
    assert path.read_bytes() == before


_WRITER = textwrap.dedent("""
    import sys
    from vaultkit.vault.store import Store
    root, me, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
    store = Store(root)
    for i in range(rounds):
        assert store.put(me, __import__("marshal").dumps((me, i, "x" * (i * 97 % 5000))))
        for other in ("p0", "p1", "p2"):
            value = store.get(other)
            assert value is None or (value[0] == other and len(value[2]) == value[1] * 97 % 5000)
        if i % 10 == 0:
            store.close()
""")


def test_two_processes_at_once_never_damage_it(tmp_path):
    root = tmp_path / "vault"
    root.mkdir()
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, str(root), f"p{n}", "60"],
                              stderr=subprocess.PIPE) for n in range(3)]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
    store = Store(root)
    assert [store.get(f"p{n}")[1] for n in range(3)] == [59, 59, 59]
    assert sql(root, "PRAGMA integrity_check") == [("ok",)]


def test_a_kept_value_is_handed_out_once_and_only_while_it_is_the_stored_one(tmp_path,
                                                                            monkeypatch):
    """The answering process of ``vaultkit watch`` keeps parsed what its last child read:
    the next child gets it without reading the value, once (it may change it), and only
    while the entry holds what was kept."""
    import marshal

    root = tmp_path
    writer = Store(root)
    writer.put("results", marshal.dumps({"findings": [1, 2, 3]}))
    child = Store(root)
    assert child.get("results") == {"findings": [1, 2, 3]}
    server = Store(root)
    server.keep(child.read_names())
    assert server.db is None  # (no connection is carried across the fork)
    unmarshalled = []
    real = store_mod.unmarshal
    monkeypatch.setattr(store_mod, "unmarshal",
                        lambda *a: unmarshalled.append(1) or real(*a))
    kept = server.get("results")
    assert kept == {"findings": [1, 2, 3]} and unmarshalled == []
    kept["findings"].append(4)  # (its own to change)
    assert server.get("results") == {"findings": [1, 2, 3]} and unmarshalled == [1]
    server.keep(["results"])
    first = server.kept["results"][1]
    server.keep(["results"])
    assert server.kept["results"][1] is first  # unchanged: not parsed again
    writer.put("results", marshal.dumps({"findings": []}))  # replaced since it was kept
    assert server.get("results") == {"findings": []}
    monkeypatch.setattr(store_mod, "KEEP_AT_MOST_BYTES", 8)
    server.keep(["results", "absent"])
    assert server.kept == {}


def test_without_the_cache_nothing_is_held_nor_written(tmp_path):
    assert NULL.get("results") is None and NULL.put("results", b"x") is False
    NULL.keep(["results"])
    assert not NULL.caching and Store(tmp_path).caching
    assert Store(tmp_path).get("results") is None  # (no store yet: nothing made to read)
    assert not (tmp_path / ".vaultkit").exists()


def test_a_symlinked_cache_folder_is_neither_read_nor_written(tmp_path):
    root = tmp_path / "vault"
    (root / ".vaultkit").mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (root / ".vaultkit" / "cache").symlink_to(elsewhere)
    store = Store(root)
    assert store.put("results", b"\xe9\x00") is False and store.get("results") is None
    assert list(elsewhere.iterdir()) == []


def test_a_read_only_vault_without_a_cache_is_checked_without_a_word(vault, monkeypatch):
    """Nothing can be made under ``.vaultkit/`` (a read-only file system, another user's
    vault): the check runs without the store, and that is no damage to warn about."""
    import errno
    import sqlite3

    from vaultkit.vault import cachefile

    fresh = _check(vault, "--no-cache")

    def refuse(path):
        raise PermissionError(errno.EACCES, "Permission denied", str(path))

    monkeypatch.setattr(cachefile, "ensure_cache_dir", refuse)
    rc, found, err = _check(vault)
    assert (rc, found) == fresh[:2] and "warning" not in err, err
    monkeypatch.undo()
    real = sqlite3.connect

    def read_only(database, *args, **kwargs):  # (the folder exists; no file can be made)
        if "mode=rw" in str(database):
            raise sqlite3.OperationalError("unable to open database file")
        return real(database, *args, **kwargs)

    (vault / ".vaultkit" / "cache").mkdir(parents=True)
    monkeypatch.setattr(sqlite3, "connect", read_only)
    rc, found, err = _check(vault)
    assert (rc, found) == fresh[:2] and "warning" not in err, err
    assert not list((vault / ".vaultkit" / "cache").iterdir())
