"""vaultkit archive: verified moves into memory/archive/, links kept resolving."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import subprocess

import pytest

from vaultkit.cli import main
from vaultkit.vault.loader import load_vault

TODAY = dt.date(2026, 3, 1)


def day(n: int) -> str:
    return (TODAY - dt.timedelta(days=n)).isoformat()


# beyond the default window (the profile's budgets.journal-keep-days, 30), and inside it
OLD, OLDER, RECENT = day(40), day(50), day(3)

FILES = {
    "AGENTS.md": "# AGENTS\n",
    f"memory/{OLD}.md": f"# {OLD}\n\n### 10:00 — Work\n\n- see [the decision](decisions/pick.md)\n"
                        f"- and [[{OLDER}]]\n- and [[decisions/pick#Context|why]]\n",
    f"memory/{OLDER}.md": f"# {OLDER}\n\n### 09:00 — Start\n\n- began ^start\n",
    f"memory/{RECENT}.md": f"# {RECENT}\n\n### 08:00 — Now\n\n- recent [[{OLD}]]\n",
    "memory/decisions/pick.md": (
        "---\ntype: decision\nsource: \"[[memory/" + OLD + "]]\"\n---\n# Pick\n\n## Context\n\n"
        f"Plain [[{OLD}]] stays. Path [[memory/{OLD}|that day]] and embed "
        f"![[memory/{OLDER}#^start]].\n"
        f"Relative [md](../{OLD}.md#1000--work) and <{OLDER}> [angle](<../{OLDER}.md>).\n"
        "| a | [[memory/" + OLD + "\\|cell]] |\n"
        "```\n[[memory/" + OLD + "]] in code stays\n```\n"),
}


@pytest.fixture
def vault_dir(make_vault, monkeypatch):
    monkeypatch.setattr("vaultkit.memory.memset.today", lambda settings: TODAY)
    root = make_vault(FILES)
    monkeypatch.chdir(root)  # archive prints paths from the current folder
    return root


def tree_hash(root) -> dict:
    out = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            path = os.path.join(folder, name)
            with open(path, "rb") as fh:
                out[os.path.relpath(path, root)] = (hashlib.sha256(fh.read()).hexdigest(),
                                                    os.stat(path).st_mtime_ns)
        for d in dirs:
            out[os.path.relpath(os.path.join(folder, d), root) + "/"] = None
    return out


def cli(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_dry_run_changes_nothing(vault_dir, capsys):
    before = tree_hash(vault_dir)
    code, out, err = cli(capsys, "archive", "--dry-run", "--root", str(vault_dir))
    assert code == 0
    assert f"would move  memory/{OLD}.md -> memory/archive/{OLD}.md" in out
    assert "would rewrite" in out
    assert tree_hash(vault_dir) == before  # not a byte, not an mtime, not a cache file


def test_dry_run_json(vault_dir, capsys):
    code, out, _ = cli(capsys, "archive", "--dry-run", "--json", "--root", str(vault_dir))
    data = json.loads(out)
    assert data["dryRun"] is True and data["cutoff"] == day(30)
    assert {m["from"] for m in data["moves"]} == {f"memory/{OLD}.md", f"memory/{OLDER}.md"}


def test_moves_and_keeps_links_resolving(vault_dir, capsys):
    vault = load_vault(vault_dir, root=vault_dir, use_cache=False)
    broken_before = _broken(vault)
    originals = {p: (vault_dir / p).read_bytes()
                 for p in (f"memory/{OLD}.md", f"memory/{OLDER}.md")}
    code, out, err = cli(capsys, "archive", "--root", str(vault_dir))
    assert code == 0, err
    assert not (vault_dir / f"memory/{OLD}.md").exists()
    assert (vault_dir / f"memory/{RECENT}.md").exists()
    for p, data in originals.items():
        new = vault_dir / p.replace("memory/", "memory/archive/")
        assert new.exists()
    # the moved journal with no links to rewrite is byte-identical
    moved_bytes = (vault_dir / f"memory/archive/{OLDER}.md").read_bytes()
    assert moved_bytes == originals[f"memory/{OLDER}.md"]
    pick = (vault_dir / "memory/decisions/pick.md").read_text()
    assert f"Plain [[{OLD}]] stays." in pick
    assert f"[[memory/archive/{OLD}|that day]]" in pick
    assert f"![[memory/archive/{OLDER}#^start]]" in pick
    assert f"[md](../archive/{OLD}.md#1000--work)" in pick
    assert f"[angle](<../archive/{OLDER}.md>)" in pick
    assert f"[[memory/archive/{OLD}\\|cell]]" in pick
    assert f'source: "[[memory/archive/{OLD}]]"' in pick
    assert f"[[memory/{OLD}]] in code stays" in pick
    moved = (vault_dir / f"memory/archive/{OLD}.md").read_text()
    assert f"[[{OLDER}]]" in moved  # resolved by name, still unique: untouched
    after = load_vault(vault_dir, root=vault_dir, use_cache=False)
    assert _broken(after) == broken_before == []


def _broken(vault):
    out = []
    for note in vault.notes.values():
        for link, res in zip(note.links, vault.resolver.resolve_all(note)):
            if not link.external and res.path is None:
                out.append((note.path, link.raw))
    return out


def test_copy_is_verified_before_the_original_goes(vault_dir, monkeypatch, capsys):
    def bad_write(path, data, mode=None, **_):
        with open(path, "wb") as fh:
            fh.write(data[:-1])

    monkeypatch.setattr("vaultkit.core.atomic.write_atomic", bad_write)
    code, out, err = cli(capsys, "archive", "--root", str(vault_dir))
    assert code == 2 and "does not match" in err
    assert (vault_dir / f"memory/{OLD}.md").exists() and (vault_dir / f"memory/{OLDER}.md").exists()


def test_existing_archive_name_is_skipped(make_vault, monkeypatch, capsys):
    monkeypatch.setattr("vaultkit.memory.memset.today", lambda settings: TODAY)
    root = make_vault({f"memory/{OLD}.md": f"# {OLD}\n", f"memory/archive/{OLD}.md": "# other\n"})
    code, out, err = cli(capsys, "archive", "--root", str(root))
    assert code == 0 and "already exists" in err
    assert (root / f"memory/{OLD}.md").read_text() == f"# {OLD}\n"
    assert (root / f"memory/archive/{OLD}.md").read_text() == "# other\n"


def test_keep_days_window(vault_dir, capsys):
    code, out, _ = cli(capsys, "archive", "--keep-days", "45", "--dry-run", "--root",
                       str(vault_dir))
    assert f"memory/{OLDER}.md" in out and f"memory/{OLD}.md ->" not in out


def test_nothing_to_archive(make_vault, monkeypatch, capsys):
    monkeypatch.setattr("vaultkit.memory.memset.today", lambda settings: TODAY)
    root = make_vault({f"memory/{RECENT}.md": "# x\n"})
    code, out, err = cli(capsys, "archive", "--root", str(root))
    assert code == 0 and "Nothing to archive" in err and out == ""


def test_git_mv_inside_a_repo(vault_dir, capsys):
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e"}
    subprocess.run(["git", "init", "-q", str(vault_dir)], check=True)
    subprocess.run(["git", "-C", str(vault_dir), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(vault_dir), "commit", "-qm", "init"], check=True, env=env)
    code, out, err = cli(capsys, "archive", "--root", str(vault_dir))
    assert code == 0, err
    status = subprocess.run(["git", "-C", str(vault_dir), "status", "--porcelain"],
                            capture_output=True, text=True, check=True).stdout
    assert f"R  memory/{OLDER}.md -> memory/archive/{OLDER}.md" in status
    assert f"memory/archive/{OLD}.md" in status
    # the git rules see moves into the archive, not rewritten or deleted journals
    subprocess.run(["git", "-C", str(vault_dir), "add", "-A"], check=True)
    code, out, err = cli(capsys, "check", str(vault_dir), "--staged", "--select",
                         "journal-append-only,mass-deletion")
    assert code == 0, out + err
    assert "VK601" not in out and "VK602" not in out


def test_index_is_refreshed_when_present(vault_dir, capsys):
    from vaultkit.links.indexgen import write_index

    write_index(load_vault(vault_dir, root=vault_dir, use_cache=False))
    index = vault_dir / "memory/INDEX.md"
    assert index.exists()
    code, out, err = cli(capsys, "archive", "--root", str(vault_dir))
    assert code == 0
    fresh = load_vault(vault_dir, root=vault_dir, use_cache=False)
    from vaultkit.links.indexgen import render_index

    assert index.read_text() == render_index(fresh)


def test_negative_keep_days(vault_dir, capsys):
    code, out, err = cli(capsys, "archive", "--keep-days", "-1", "--root", str(vault_dir))
    assert code == 2 and "--keep-days" in err


def test_journal_lines_are_never_rewritten(make_vault, monkeypatch, capsys):
    """A move that would need an edit inside a journal does not happen (append-only)."""
    monkeypatch.setattr("vaultkit.memory.memset.today", lambda settings: TODAY)
    root = make_vault({
        "memory/decisions/pick.md": "---\ntype: decision\n---\n# Pick\n",
        # an old journal whose own relative link would break if it moved
        f"memory/{OLD}.md": f"# {OLD}\n\n### 10:00 — W\n\n- [pick](./decisions/pick.md)\n",
        # a recent journal linking by path to an old one: that one must stay
        f"memory/{OLDER}.md": f"# {OLDER}\n\n### 09:00 — S\n\n- start\n",
        f"memory/{RECENT}.md": f"# {RECENT}\n\n### 08:00 — N\n\n- [then](./{OLDER}.md)\n",
        f"memory/{day(45)}.md": f"# {day(45)}\n",
    })
    before = {p: (root / p).read_bytes() for p in (f"memory/{OLD}.md", f"memory/{OLDER}.md",
                                                   f"memory/{RECENT}.md")}
    monkeypatch.chdir(root)
    code, out, err = cli(capsys, "archive", "--root", str(root))
    assert code == 0, err
    assert f"memory/{day(45)}.md -> memory/archive/{day(45)}.md" in out
    for p, data in before.items():
        assert (root / p).read_bytes() == data
    assert "append-only" in err and f"memory/{OLD}.md" in err and f"memory/{OLDER}.md" in err
    assert "rewrote" not in out
