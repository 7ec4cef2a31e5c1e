"""No cache answers for a file it never read: an edit that keeps the size and puts the mtime
back (``cp -p``, ``rsync -t``, tar, Syncthing, ``os.utime``), a write through a hard link
made elsewhere, a rename-save: each is seen by the ctime and inode beside the size and
mtime, and a file changed in the racy margin of a cache entry by its bytes' blob id."""

from __future__ import annotations

import os
import shutil

from cli_invoke import invoke
from test_git import commit_all, git, init_repo
from vault_files import age_files
from vaultkit.vault.loader import load_vault

# a credential the detector recognises, and a clean line of the very same length
SECRET = "token: ghp_R8x2Lq9ZtVb4Nw7Kc1Md5Yp0Hs3Jf6Ga8Ue2\n"
CLEAN = "token: kept in the password manager, not here!!\n"
assert len(SECRET) == len(CLEAN)


def _put_back(path, text: str) -> None:
    """Write ``text`` (the same length as what ``path`` holds) and set the old mtime back,
    as ``cp -p`` over it would."""
    st = os.stat(path)
    path.write_text(text)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def _hook_vault(make_vault):
    root = make_vault({"memory/semantic/keys.md": "# Keys\n\n" + CLEAN,
                       "memory/semantic/other.md": "# Other\n\n[[keys]]\n"})
    init_repo(root)
    commit_all(root, "first")
    age_files(root)
    return root


def test_the_hook_refuses_a_staged_credential_written_with_the_old_mtime(make_vault):
    root = _hook_vault(make_vault)
    target = root / "memory/semantic/keys.md"
    hook = ["check", "--hook", "--format", "json", "memory/semantic/keys.md"]
    assert invoke(hook, root)[0] == 0  # the caches hold the clean note now
    _put_back(target, "# Keys\n\n" + SECRET)
    git(root, "add", "memory/semantic/keys.md")
    fresh = invoke([*hook, "--no-cache"], root)
    assert fresh[0] == 1 and "secret-in-memory" in fresh[1]
    assert invoke(hook, root)[:2] == fresh[:2]
    assert invoke(["check", "--format", "json"], root)[:2] == \
        invoke(["check", "--format", "json", "--no-cache"], root)[:2]


def test_a_write_through_a_hard_link_from_elsewhere_is_read(make_vault, tmp_path):
    root = make_vault({"memory/semantic/a.md": "# A [[X]]\n"})
    outside = tmp_path / "elsewhere.md"
    os.link(root / "memory/semantic/a.md", outside)
    age_files(root)
    load_vault(root)
    _put_back(outside, "# A [[Y]]\n")  # (the vault's name of it raised no event, no mtime)
    vault = load_vault(root)
    assert [lk.target for lk in vault.notes["memory/semantic/a.md"].links] == ["Y"]


def test_a_copy_that_keeps_the_mtime_and_size_is_read(make_vault, tmp_path):
    root = make_vault({"memory/semantic/a.md": "# A [[X]]\n"})
    age_files(root)
    load_vault(root)
    target = root / "memory/semantic/a.md"
    st = os.stat(target)
    new = tmp_path / "a.md"
    new.write_text("# A [[Y]]\n")
    os.utime(new, ns=(st.st_atime_ns, st.st_mtime_ns))
    shutil.copy2(new, target)  # (cp -p: in place, the mtime copied)
    vault = load_vault(root)
    assert [lk.target for lk in vault.notes["memory/semantic/a.md"].links] == ["Y"]


def test_a_rename_save_that_keeps_the_mtime_and_size_is_read(make_vault):
    root = make_vault({"memory/semantic/a.md": "# A [[X]]\n"})
    age_files(root)
    load_vault(root)
    target = root / "memory/semantic/a.md"
    st = os.stat(target)
    temp = root / "memory/semantic/.a.md.swp"
    temp.write_text("# A [[Y]]\n")
    os.utime(temp, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(temp, target)  # (an editor's save: a new inode under the old name)
    vault = load_vault(root)
    assert [lk.target for lk in vault.notes["memory/semantic/a.md"].links] == ["Y"]


def test_a_note_in_the_racy_margin_is_known_by_its_bytes(make_vault, counting):
    # written just now: its ctime is in the racy margin of the run that stores it, so the
    # next run reads and hashes it (no parse when the bytes are the same; parsed when not)
    root = make_vault({"memory/semantic/a.md": "# A [[X]]\n"})
    age_files(root)
    load_vault(root)
    counting.clear()
    assert [lk.target for lk in load_vault(root).notes["memory/semantic/a.md"].links] == ["X"]
    assert counting == []
    _put_back(root / "memory/semantic/a.md", "# A [[Y]]\n")
    assert [lk.target for lk in load_vault(root).notes["memory/semantic/a.md"].links] == ["Y"]
    assert counting == ["memory/semantic/a.md"]


def test_the_results_cache_reuses_findings_only_for_the_same_bytes(make_vault):
    root = make_vault({"memory/semantic/a.md": "# A\n[[missing]]\n",
                       "memory/semantic/b.md": "# B\n[[a]]\n"})
    age_files(root)
    args = ["check", "--format", "json"]
    first = invoke(args, root)
    assert "broken-link" in first[1]
    assert len("# A\n[[b]]      \n") == len("# A\n[[missing]]\n")
    _put_back(root / "memory/semantic/a.md", "# A\n[[b]]      \n")
    again = invoke(args, root)
    assert again[:2] == invoke([*args, "--no-cache"], root)[:2]
    assert "broken-link" not in again[1]


def test_the_hook_knows_a_staged_file_by_its_bytes_not_its_stat(make_vault):
    # a record that claims the staged file's very stat (as one the stat cannot tell from
    # it would: a clock set back, a file system without a ctime) is not taken for it: the
    # hook takes a staged file's record only for the same bytes (their blob id)
    from parse_store import sql

    root = _hook_vault(make_vault)
    target = root / "memory/semantic/keys.md"
    hook = ["check", "--hook", "--format", "json", "memory/semantic/keys.md"]
    assert invoke(hook, root)[0] == 0
    (oid,), = sql(root, "SELECT oid FROM notes WHERE path = 'memory/semantic/keys.md'")
    assert oid == git(root, "hash-object", "memory/semantic/keys.md").strip()
    _put_back(target, "# Keys\n\n" + SECRET)
    git(root, "add", "memory/semantic/keys.md")
    st = os.stat(target)
    sql(root, "UPDATE notes SET mtime_ns = ?, ctime_ns = ?, ino = ?, seen_ns = ? "
        "WHERE path = 'memory/semantic/keys.md'", st.st_mtime_ns, st.st_ctime_ns, st.st_ino,
        2 ** 62)
    code, out, _ = invoke(hook, root)
    assert code == 1 and "secret-in-memory" in out


def test_a_snapshot_records_an_edit_that_put_the_size_and_mtime_back(tmp_path):
    from test_snapshots import make, store_of

    root = make(tmp_path)
    age_files(root)
    store = store_of(root)
    store.snapshot()
    target = root / "memory/semantic/deploys.md"
    text = target.read_text()
    _put_back(target, text.replace("fact 3", "fact X"))
    result = store.snapshot()
    assert result.changed == ["memory/semantic/deploys.md"]


def test_search_finds_an_edit_that_put_the_size_and_mtime_back(make_vault):
    import json

    root = make_vault({"memory/semantic/cron.md": "# Cron\n\nThe backup cron runs at night.\n"})
    age_files(root)
    args = ["search", "--json", "--min-score", "0"]
    found = json.loads(invoke([*args, "backup"], root)[1])["results"]
    assert [r["path"] for r in found] == ["memory/semantic/cron.md"]
    _put_back(root / "memory/semantic/cron.md", "# Cron\n\nThe restic cron runs at night.\n")
    assert json.loads(invoke([*args, "backup"], root)[1])["results"] == []
    found = json.loads(invoke([*args, "restic"], root)[1])["results"]
    assert [r["path"] for r in found] == ["memory/semantic/cron.md"]


def test_the_mcp_session_keeps_its_vault_only_for_the_same_bytes(make_vault):
    # the listing cannot tell a second write in the clock tick of the first (the same size,
    # mtime, ctime and inode: here, the listing handed back as it was); the session keeps
    # its vault only while the notes written in the racy margin of its load hold the bytes
    # it read
    from vaultkit.cli.mcp_server import VaultSession

    root = make_vault({"memory/semantic/a.md": "# A [[X]]\n"})
    age_files(root)
    session = VaultSession(root)
    try:
        scan = session.scan()
        first = session.vault(scan)
        assert [lk.target for lk in first.notes["memory/semantic/a.md"].links] == ["X"]
        _put_back(root / "memory/semantic/a.md", "# A [[Y]]\n")
        again = session.vault(scan)
        assert [lk.target for lk in again.notes["memory/semantic/a.md"].links] == ["Y"]
    finally:
        session.close()


def test_a_record_found_fresh_by_its_bytes_is_trusted_by_its_stat_once_settled(
        make_vault, monkeypatch):
    # a vault listed within the racy margin of its files' writes (a check right after a
    # clone or a copy) stores records that only the files' bytes can confirm; once the
    # files are older than a run by that margin, the run that hashed them stamps the records
    # with itself, as git's index does, so later runs stop reading all the notes again
    import time

    import vaultkit.vault.loader as loader_mod

    root = make_vault({f"memory/semantic/n{i}.md": f"# N{i}\n\n[[n{i + 1}]]\n"
                       for i in range(5)})
    load_vault(root)  # (the records: written in the racy margin of the files' ctimes)
    hashed: list[str] = []
    real = loader_mod.content_id

    def counted(path, size):
        hashed.append(os.path.basename(path))
        return real(path, size)

    monkeypatch.setattr(loader_mod, "content_id", counted)
    time.sleep(2.2)  # (past the racy margin: RACY_NS)
    assert load_vault(root).notes["memory/semantic/n0.md"].links[0].target == "n1"
    assert sorted(hashed) == [f"n{i}.md" for i in range(5)]  # confirmed by their bytes
    hashed.clear()
    load_vault(root)
    assert hashed == []  # settled: known by their stat now
    # and a later write that keeps the size and puts the mtime back is still read
    _put_back(root / "memory/semantic/n0.md", "# N0\n\n[[n4]]\n")
    assert load_vault(root).notes["memory/semantic/n0.md"].links[0].target == "n4"
