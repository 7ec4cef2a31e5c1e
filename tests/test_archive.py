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


def _status(root) -> str:
    return subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--", "memory/INDEX.md"],
                          capture_output=True, text=True, check=True).stdout


@pytest.mark.parametrize("edited", [False, True], ids=["clean", "owner-edit-unstaged"])
def test_a_tracked_index_is_staged_with_the_move_unless_the_owner_edits_it(vault_dir, capsys,
                                                                          edited):
    """`git commit` right after `vaultkit archive` passes the index hook: the INDEX.md the
    run regenerated is staged with the moves it lists; an INDEX.md with an edit of the
    owner's not staged is left unstaged (a run stages only what it writes)."""
    from vaultkit.links.indexgen import write_index

    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e"}
    write_index(load_vault(vault_dir, root=vault_dir, use_cache=False))
    subprocess.run(["git", "init", "-q", str(vault_dir)], check=True)
    subprocess.run(["git", "-C", str(vault_dir), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(vault_dir), "commit", "-qm", "init"], check=True, env=env)
    index = vault_dir / "memory/INDEX.md"
    if edited:
        index.write_text("My own line.\n" + index.read_text(encoding="utf-8"), encoding="utf-8")
    code, out, err = cli(capsys, "archive", "--root", str(vault_dir))
    assert code == 0 and "updated  INDEX.md" in out, out + err
    if edited:
        assert _status(vault_dir) == " M memory/INDEX.md\n"
        return
    assert _status(vault_dir) == "M  memory/INDEX.md\n"
    code, out, err = cli(capsys, "check", str(vault_dir), "--staged", "--no-cache",
                         "--select", "index-stale")
    assert code == 0 and "VK504" not in out, out + err


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


# -- MEMORY.md lines moved into the archive note (vaultkit archive MEMORY.md:LINES) -------

CURATED = ("# MEMORY\n\n## People\n- Ana owns billing\n- Bo reviews infra changes\n"
           "- Cy is currently on call\n\n## Rules\n- Deploys go through staging first\n"
           "- Backups run at 02:00\n- Secrets live in the vault, never in notes\n"
           "- Retros happen on Fridays\n- Staging is on v1.2 for now\n")
NOTE = "memory/archive/MEMORY-archive.md"
MDAY = dt.date(2026, 12, 7)


def note_text(root) -> str:
    """The archive note, each marker's digest of MEMORY.md as its run left it dropped."""
    import re

    return re.sub(r" left:[0-9a-f]{12}", "", (root / NOTE).read_bytes().decode())


def run_cli(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.fixture
def curated(tmp_path, monkeypatch):
    from vaultkit.cli.starter import init_vault

    root = tmp_path / "v"
    init_vault(root)
    (root / "MEMORY.md").write_text(CURATED, encoding="utf-8")
    monkeypatch.setattr("vaultkit.memory.memset.today", lambda settings: MDAY)
    monkeypatch.chdir(root)
    return root


def _git(root, *args):
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com",
               GIT_CONFIG_NOSYSTEM="1")
    env.pop("GIT_INDEX_FILE", None)
    env.pop("GIT_DIR", None)
    proc = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_memory_lines_move_into_the_archive_note_under_a_dated_heading(curated, capsys):
    code, out, err = run_cli(capsys, "archive", "MEMORY.md:6,13")
    assert code == 0, err
    assert out.splitlines() == [
        f"MEMORY.md:6: moved to {NOTE}:6: - Cy is currently on call",
        f"MEMORY.md:13: moved to {NOTE}:8: - Staging is on v1.2 for now",
        "updated  INDEX.md"]  # (it lists the archive)
    assert "1 note in archive/" in (curated / "memory/INDEX.md").read_text(encoding="utf-8")
    assert (curated / "MEMORY.md").read_text(encoding="utf-8") == CURATED.replace(
        "- Cy is currently on call\n", "").replace("- Staging is on v1.2 for now\n", "")
    assert note_text(curated) == (
        "# MEMORY.md archive\n\n## Archived from MEMORY.md (2026-12-07)\n\n"
        "<!-- vaultkit-archived:MEMORY.md:6 -->\n- Cy is currently on call\n"
        "<!-- vaultkit-archived:MEMORY.md:13 -->\n- Staging is on v1.2 for now\n")
    # each marker holds a digest of MEMORY.md as the run left it (how a rerun is known)
    left = hashlib.sha256((curated / "MEMORY.md").read_bytes()).hexdigest()[:12]
    assert (curated / NOTE).read_text(encoding="utf-8").count(f" left:{left} -->") == 2
    # a later run the same day goes under the same heading
    assert run_cli(capsys, "archive", "MEMORY.md:4")[0] == 0
    assert note_text(curated).endswith(
        "- Staging is on v1.2 for now\n<!-- vaultkit-archived:MEMORY.md:4 -->\n"
        "- Ana owns billing\n")


def test_memory_md_keeps_every_other_byte_bom_crlf_and_no_final_newline(curated, capsys):
    raw = b"\xef\xbb\xbf" + CURATED.rstrip("\n").replace("\n", "\r\n").encode() + b"  "
    (curated / "MEMORY.md").write_bytes(raw)
    (curated / "memory/archive").mkdir(parents=True, exist_ok=True)
    (curated / NOTE).write_bytes(b"# Old\r\n\r\n- kept")  # CRLF, no final newline
    assert run_cli(capsys, "archive", "MEMORY.md:5,13")[0] == 0
    assert (curated / "MEMORY.md").read_bytes() == raw.replace(
        b"- Bo reviews infra changes\r\n", b"").replace(
        b"\r\n- Staging is on v1.2 for now  ", b"")
    assert note_text(curated).encode() == (
        b"# Old\r\n\r\n- kept\r\n\r\n## Archived from MEMORY.md (2026-12-07)\r\n\r\n"
        b"<!-- vaultkit-archived:MEMORY.md:5 -->\r\n- Bo reviews infra changes\r\n"
        b"<!-- vaultkit-archived:MEMORY.md:13 -->\r\n- Staging is on v1.2 for now  \r\n")


def test_a_promoted_lines_marker_moves_with_it(curated, capsys):
    text = CURATED + "<!-- vaultkit-promoted:memory/2026-12-06.md:5 -->\n- Postgres for the shop\n"
    (curated / "MEMORY.md").write_text(text, encoding="utf-8")
    assert run_cli(capsys, "archive", "MEMORY.md:15")[0] == 0
    assert (curated / "MEMORY.md").read_text(encoding="utf-8") == CURATED
    assert note_text(curated).endswith(
        "<!-- vaultkit-archived:MEMORY.md:15 -->\n"
        "<!-- vaultkit-promoted:memory/2026-12-06.md:5 -->\n- Postgres for the shop\n")


def test_a_crash_between_the_two_writes_duplicates_and_the_rerun_finishes(curated, capsys,
                                                                          monkeypatch):
    """The archive note is written first: a crash before MEMORY.md is rewritten leaves the
    lines in both; the same command again appends nothing and only removes them."""
    import vaultkit.memory.memarchive as memarchive

    rewrite = memarchive._rewrite

    def crash(*a, **kw):
        raise KeyboardInterrupt

    monkeypatch.setattr(memarchive, "_rewrite", crash)
    assert run_cli(capsys, "archive", "MEMORY.md:5-6")[0] == 130
    assert (curated / "MEMORY.md").read_text(encoding="utf-8") == CURATED  # not lost
    archived = (curated / NOTE).read_text(encoding="utf-8")
    assert archived.count("- Bo reviews infra changes") == 1
    monkeypatch.setattr(memarchive, "_rewrite", rewrite)
    code, out, _ = run_cli(capsys, "archive", "MEMORY.md:5-6")
    assert code == 0
    assert "(already in memory/archive/MEMORY-archive.md: removed from MEMORY.md only)" in out
    assert (curated / NOTE).read_text(encoding="utf-8") == archived  # nothing twice
    assert "Bo reviews" not in (curated / "MEMORY.md").read_text(encoding="utf-8")
    # the same command once more: the lines now there are others, moved up; skipped
    code, out, err = run_cli(capsys, "archive", "MEMORY.md:5-6")
    assert code == 0 and out == ""
    assert "MEMORY.md:5: skipped: already archived: the same lines were moved by a run " \
           "that left MEMORY.md as it is now" in err
    assert "MEMORY.md:6: skipped: already archived" in err
    assert (curated / NOTE).read_text(encoding="utf-8") == archived
    # other lines named on that MEMORY.md are a new choice: line 6 (now "## Rules") goes
    assert run_cli(capsys, "archive", "MEMORY.md:5")[0] == 1  # (now blank: refused)
    assert run_cli(capsys, "archive", "MEMORY.md:6")[0] == 0
    assert "## Rules" not in (curated / "MEMORY.md").read_text(encoding="utf-8")
    assert "- Deploys go through staging first" in \
        (curated / "MEMORY.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("argv,code,said", [
    (["MEMORY.md:40"], 1, "refused: MEMORY.md:40: past the end of MEMORY.md (13 lines); "
                          "nothing written"),
    (["MEMORY.md:4,2"], 1, "refused: MEMORY.md:2: a blank line"),
    (["MEMORY.md:0"], 2, "lines are numbered from 1"),
    (["MEMORY.md:4", "--keep-days", "3"], 2, "--keep-days archives journals"),
    (["memory/2026-12-06.md:3"], 2, "archive names MEMORY.md lines"),
    (["MEMORY.md:4", "nope"], 2, "'nope': name the lines as MEMORY.md:LINES"),
])
def test_refusals_write_nothing(curated, capsys, argv, code, said):
    def notes():  # (the settings cache in .vaultkit/ aside)
        return {k: v for k, v in tree_hash(curated).items() if not k.startswith(".vaultkit")}

    before = notes()
    got, out, err = run_cli(capsys, "archive", *argv)
    assert got == code and said in err and len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err
    assert notes() == before


def test_dry_run_and_json(curated, capsys):
    before = tree_hash(curated)
    code, out, _ = run_cli(capsys, "archive", "MEMORY.md:6", "--dry-run", "--format", "json")
    assert code == 0 and tree_hash(curated) == before
    assert json.loads(out) == {
        "dryRun": True, "source": "MEMORY.md", "archive": NOTE,
        "heading": "## Archived from MEMORY.md (2026-12-07)",
        "moved": [{"line": 6, "text": "- Cy is currently on call", "archiveLine": None,
                   "appended": True}], "skipped": [], "indexUpdated": False, "snapshot": None}
    code, out, _ = run_cli(capsys, "archive", "MEMORY.md:6", "--json")
    data = json.loads(out)
    assert data["moved"][0]["archiveLine"] == 6 and data["snapshot"]
    code, out, _ = run_cli(capsys, "archive", "MEMORY.md:5", "--json", "--dry-run")
    assert json.loads(out)["moved"][0]["text"] == "- Bo reviews infra changes"


def test_a_credential_moves_as_is_but_is_never_printed(curated, capsys):
    token = "5145683452:AAbeuEchsVEoR7TJYHSDATOCN1D61_k7U4O"  # the docs' made-up example
    (curated / "MEMORY.md").write_text(CURATED + f"- alerts bot token {token}\n",
                                       encoding="utf-8")
    for fmt in ("text", "json"):
        code, out, err = run_cli(capsys, "archive", "MEMORY.md:14", "--dry-run",
                                 "--format", fmt)
        assert code == 0 and token not in out + err and "alerts bot token" in out
    code, out, err = run_cli(capsys, "archive", "MEMORY.md:14")
    assert code == 0 and token not in out + err
    assert f"- alerts bot token {token}\n" in (curated / NOTE).read_text(encoding="utf-8")


def test_archived_memory_lines_are_moved_for_the_hook_watch_and_history(curated, capsys):
    """40% of a committed MEMORY.md archived (past the quarter pruning allows): the hook
    passes the commit, watch puts nothing back, history lists no loss."""
    from vaultkit.memory.history import scan_history
    from vaultkit.memory.memarchive import archive_lines
    from vaultkit.memory.watch import Watcher
    from vaultkit.vault.profile import load_settings

    _git(curated, "init", "-q", "-b", "main")
    _git(curated, "add", "-A")
    _git(curated, "commit", "-q", "--no-verify", "-m", "first")
    settings = load_settings(curated)
    w = Watcher(curated, settings, out=lambda line: None)
    w.step()
    lines = [4, 5, 9, 10]  # 4 of its 10 durable lines
    archive_lines(curated, settings, "MEMORY.md", lines)
    assert w.step() == []  # watch's judgement: moved, nothing restored
    assert "Ana owns billing" not in (curated / "MEMORY.md").read_text(encoding="utf-8")
    # a plain check of the work tree, before anything is staged: the untracked archive
    # note holds the lines, so no mass-deletion
    code, out, err = run_cli(capsys, "check", "--no-cache", "--select", "mass-deletion")
    assert code == 0 and "mass-deletion" not in out, out + err
    hook = ["check", "--hook", "--no-cache"]  # every rule: INDEX.md lists the new note too
    # the same cut without the archive note staged is refused: the test can tell
    _git(curated, "add", "MEMORY.md")
    assert run_cli(capsys, *hook)[0] == 1
    _git(curated, "add", "-A")
    code, out, err = run_cli(capsys, *hook)
    assert code == 0, out + err
    _git(curated, "commit", "-q", "--no-verify", "-m", "archive")
    events = scan_history(curated, load_settings(curated)).events
    assert [e for e in events if e.path == "MEMORY.md"] == []


def test_memory_only_vault_archives_the_workspace_memory_md(tmp_path, capsys, monkeypatch):
    """A memory-only vault (`memory-dir = "."`): MEMORY.md sits one folder up, and the
    archive note is the vault's archive/MEMORY-archive.md."""
    ws = tmp_path / "ws"
    (ws / "memory" / ".obsidian").mkdir(parents=True)
    (ws / "MEMORY.md").write_text(CURATED, encoding="utf-8")
    (ws / "memory" / "vaultkit.toml").write_text('memory-dir = "."\n', encoding="utf-8")
    monkeypatch.setattr("vaultkit.memory.memset.today", lambda settings: MDAY)
    monkeypatch.chdir(ws / "memory")
    code, out, err = run_cli(capsys, "archive", "MEMORY.md:5")
    assert code == 0, err
    assert (ws / "MEMORY.md").read_text(encoding="utf-8") == CURATED.replace(
        "- Bo reviews infra changes\n", "")
    note = (ws / "memory" / "archive" / "MEMORY-archive.md").read_text(encoding="utf-8")
    assert "<!-- vaultkit-archived:../MEMORY.md:5 left:" in note
    assert note.endswith("\n- Bo reviews infra changes\n")
