"""Hostile folders for every writer: symlinks out of the vault, into .git/, onto other files.

Each case builds a vault (a git repository) with one hostile link, runs one writer as a
separate process under a timeout (a hang fails the test), and checks that nothing
outside the vault and nothing in ``.git/`` changed, and that the file a link points to
was not written through it. Writers: ``log``, ``check --fix``, ``index``, ``archive``,
``init``, ``graph --write-colors``, ``search`` (its database).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

TIMEOUT = 60  # seconds; every command here takes well under two
TODAY = dt.date.today().isoformat()
OLD = (dt.date.today() - dt.timedelta(days=60)).isoformat()
TOKEN = "ghp_" + "Q" * 36  # a token in a remote URL that must never be served
GIT_CONFIG = ("[core]\n\trepositoryformatversion = 0\n\tbare = false\n"
              f"[remote \"origin\"]\n\turl = https://x:{TOKEN}@example.com/r.git\n")


def run(argv: list[str], cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess:
    """vaultkit in its own process; a hang fails the test (TimeoutExpired)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return subprocess.run([sys.executable, "-m", "vaultkit", *argv], cwd=cwd, input=stdin,
                          capture_output=True, text=True, timeout=TIMEOUT, env=env)


def snapshot(folder: Path) -> dict[str, str]:
    """Every entry below ``folder``: its kind and content hash (links not followed)."""
    out: dict[str, str] = {}
    if not os.path.lexists(folder):
        return out
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                out[str(p)] = "link:" + os.readlink(p)
            elif stat.S_ISREG(st.st_mode):
                out[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest()
            else:
                out[str(p)] = f"mode:{stat.S_IFMT(st.st_mode)}"
    return out


@pytest.fixture
def world(tmp_path) -> dict[str, Path]:
    """A vault that is a git repository, and a folder outside it."""
    root = tmp_path / "vault"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.md").write_text("# Outside\n")
    files = {
        "vaultkit.toml": "",
        "AGENTS.md": "# Agents\n",
        "NOW.md": "# Now\n\nfocus\n",
        "MEMORY.md": "# Memory\n\n- [[memory/semantic/fact]]\n",
        "memory/INDEX.md": "# Index\n",
        "memory/semantic/fact.md": "---\ntag: x\n---\n# Fact\n\nA fact.\n",
        f"memory/{OLD}.md": f"# {OLD}\n\n### 10:00 — Work\n\n- did it\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / ".obsidian").mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".git" / "config").write_text(GIT_CONFIG)
    (root / ".git" / "notes.md").write_text("---\ntag: y\n---\n# In git\n")
    return {"root": root, "outside": outside, "tmp": tmp_path}


def link(path: Path, target: str | Path) -> None:
    if os.path.lexists(path):
        if path.is_dir() and not path.is_symlink():
            import shutil

            shutil.rmtree(path)
        else:
            path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, path)


def lose_then_link(w, rel: str, target) -> None:
    """Commit the vault, then a loss (the old journal rewritten, the fact note deleted),
    then put a link at ``rel``: where `recover` would write."""
    root = w["root"]

    def git(*args):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@x", *args], cwd=root,
                       check=True, capture_output=True)

    git("add", "-A")
    git("commit", "-qm", "first")
    (root / f"memory/{OLD}.md").write_text(f"# {OLD}\n\n### 11:00 — Summary\n\n- all done\n")
    (root / "memory/semantic/fact.md").unlink()
    git("add", "-A")
    git("commit", "-qm", "cron: rewrite")
    link(root / rel, target)


# (id, setup(world), argv, files that must stay byte-identical (vault paths))
CASES = [
    ("log: journal linked to .git/config",
     lambda w: link(w["root"] / f"memory/{TODAY}.md", "../.git/config"),
     ["log", "--root", ".", "--title", "T", "[core]\n\tfsmonitor = \"touch pwned\""],
     [".git/config"]),
    ("log: journal linked to NOW.md",
     lambda w: link(w["root"] / f"memory/{TODAY}.md", "../NOW.md"),
     ["log", "--root", ".", "--title", "T", "text"], ["NOW.md"]),
    ("log: dangling journal link out of the vault",
     lambda w: link(w["root"] / f"memory/{TODAY}.md", w["outside"] / "new.md"),
     ["log", "--root", ".", "--title", "T", "text"], []),
    ("log: memory folder linked into .git",
     lambda w: link(w["root"] / "memory", ".git"),
     ["log", "--root", ".", "--title", "T", "text"], [".git/config"]),
    ("log: memory folder linked out of the vault",
     lambda w: link(w["root"] / "memory", w["outside"]),
     ["log", "--root", ".", "--title", "T", "text"], []),
    ("fix: note linked to a note in .git",
     lambda w: link(w["root"] / "memory/semantic/evil.md", "../../.git/notes.md"),
     ["check", "--fix", "--no-cache", "."], [".git/notes.md"]),
    ("index: INDEX.md linked to .git/config",
     lambda w: link(w["root"] / "memory/INDEX.md", "../.git/config"),
     ["index", "."], [".git/config"]),
    ("index: INDEX.md linked to NOW.md",
     lambda w: link(w["root"] / "memory/INDEX.md", "../NOW.md"),
     ["index", "."], ["NOW.md"]),
    ("index: memory folder linked out of the vault",
     lambda w: link(w["root"] / "memory", w["outside"]),
     ["index", "."], []),
    ("archive: archive folder linked out of the vault",
     lambda w: link(w["root"] / "memory/archive", w["outside"]),
     ["archive", "--root", ".", "--keep-days", "7"], [f"memory/{OLD}.md"]),
    ("archive: archive folder linked into .git",
     lambda w: link(w["root"] / "memory/archive", "../.git"),
     ["archive", "--root", ".", "--keep-days", "7"], [f"memory/{OLD}.md", ".git/config"]),
    ("archive: old journal linked to NOW.md",
     lambda w: link(w["root"] / f"memory/{OLD}.md", "../NOW.md"),
     ["archive", "--root", ".", "--keep-days", "7"], ["NOW.md"]),
    ("graph colours: graph.json linked to .git/config",
     lambda w: link(w["root"] / ".obsidian/graph.json", "../.git/config"),
     ["graph", "--write-colors", "."], [".git/config"]),
    ("graph colours: .obsidian linked into .git",
     lambda w: link(w["root"] / ".obsidian", ".git"),
     ["graph", "--write-colors", "."], [".git/config"]),
    ("graph colours: .obsidian linked out of the vault",
     lambda w: link(w["root"] / ".obsidian", w["outside"]),
     ["graph", "--write-colors", "."], []),
    ("search: database linked to .git/config",
     lambda w: (w["root"] / ".vaultkit").mkdir() or
     link(w["root"] / ".vaultkit/search.sqlite", "../.git/config"),
     ["search", "--root", ".", "fact"], [".git/config"]),
    ("search: database log linked out of the vault",
     lambda w: (w["root"] / ".vaultkit").mkdir() or
     link(w["root"] / ".vaultkit/search.sqlite-wal", w["outside"] / "wal"),
     ["search", "--root", ".", "fact"], []),
    ("init: memory folder linked into .git",
     lambda w: (link(w["root"] / "memory", ".git")),
     ["init", "."], [".git/config"]),
    ("init: .obsidian linked out of the vault",
     lambda w: link(w["root"] / ".obsidian", w["outside"]),
     ["init", "."], []),
    ("recover: rewritten journal linked to .git/config",
     lambda w: lose_then_link(w, f"memory/{OLD}.md", "../.git/config"),
     ["recover", ".", "--all"], [".git/config"]),
    ("recover: deleted note's folder linked out of the vault",
     lambda w: lose_then_link(w, "memory/semantic", w["outside"]),
     ["recover", ".", "--all"], []),
    ("recover: deleted note's folder linked into .git",
     lambda w: lose_then_link(w, "memory/semantic", "../.git"),
     ["recover", ".", "--all"], [".git/config"]),
]


@pytest.mark.parametrize("setup,argv,kept", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_writers_stay_in_the_vault(world, setup, argv, kept):
    root, outside = world["root"], world["outside"]
    setup(world)
    git_before, outside_before = snapshot(root / ".git"), snapshot(outside)
    kept_before = {rel: (root / rel).read_bytes() for rel in kept}
    proc = run(argv, root)
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    assert snapshot(root / ".git") == git_before, proc.stderr
    assert snapshot(outside) == outside_before, proc.stderr
    for rel, data in kept_before.items():
        assert (root / rel).read_bytes() == data, (rel, proc.stderr)
    assert not (root / "pwned").exists()


@pytest.mark.parametrize("argv,says", [
    (["log", "--root", ".", "--title", "T", "x"], "symlink"),
])
def test_log_refuses_a_linked_journal_with_a_clear_error(world, argv, says):
    root = world["root"]
    link(root / f"memory/{TODAY}.md", "../NOW.md")
    proc = run(argv, root)
    assert proc.returncode == 2 and says in proc.stderr
    assert proc.stderr.count("\n") == 1 and "not written" in proc.stderr
    assert os.path.islink(root / f"memory/{TODAY}.md")


def test_fix_still_fixes_the_real_note_and_warns_about_the_link(world):
    root = world["root"]
    link(root / "memory/semantic/alias.md", "fact.md")
    proc = run(["check", "--fix", "--no-cache", "--select", "deprecated-property", "."], root)
    assert "alias.md: is a symlink" in proc.stderr and "not fixed" in proc.stderr
    assert proc.stderr.count("alias.md: is a symlink") == 1  # once, not once per pass
    assert (root / "memory/semantic/fact.md").read_text().startswith("---\ntags: [x]\n")
    assert os.path.islink(root / "memory/semantic/alias.md")


def test_archive_refuses_before_moving_anything(world):
    root = world["root"]
    link(root / "memory/archive", world["outside"])
    proc = run(["archive", "--root", ".", "--keep-days", "7"], root)
    assert proc.returncode == 2 and "leads out of the vault" in proc.stderr
    assert "nothing moved" in proc.stderr
    assert (root / f"memory/{OLD}.md").is_file()


def test_search_serves_nothing_from_git_through_a_journal_link(world):
    """Regression: a journal linked to .git/config was indexed and served with its token."""
    root = world["root"]
    link(root / f"memory/{TODAY}.md", "../.git/config")
    for argv in (["search", "--root", ".", "--json", "--min-score", "0", "origin"],
                 ["search", "--root", ".", "--json", "--min-score", "0", "example"]):
        proc = run(argv, root)
        assert proc.returncode in (0, 1), proc.stderr
        assert TOKEN not in proc.stdout + proc.stderr
        assert all(h["path"] != f"memory/{TODAY}.md" for h in json.loads(proc.stdout)["results"])
    proc = run(["get", "--root", ".", f"memory/{TODAY}.md"], root)
    assert proc.returncode == 2 and TOKEN not in proc.stdout + proc.stderr
    proc = run(["check", "--format", "json", "--select", "file-unreadable", "."], root)
    found = [f for f in json.loads(proc.stdout) if f["path"] == f"memory/{TODAY}.md"]
    assert found and "symlink into .git/" in found[0]["message"]


def test_a_link_to_a_note_inside_the_vault_is_still_read(world):
    """What must not be refused: a symlink to an ordinary note stays a readable note."""
    root = world["root"]
    link(root / "memory/semantic/alias.md", "fact.md")
    proc = run(["get", "--root", ".", "memory/semantic/alias.md"], root)
    assert proc.returncode == 0 and "A fact." in proc.stdout


def test_search_database_is_still_written_in_an_ordinary_vault(world):
    root = world["root"]
    proc = run(["search", "--root", ".", "fact"], root)
    assert proc.returncode == 0, proc.stderr
    assert (root / ".vaultkit" / "search.sqlite").is_file()


def test_log_and_init_still_write_through_a_folder_link_inside_the_vault(world):
    """A memory folder that is a link to another folder of the vault is the vault's own."""
    root = world["root"]
    (root / "memory").rename(root / "store")
    link(root / "memory", "store")
    proc = run(["log", "--root", ".", "--title", "T", "a line"], root)
    assert proc.returncode == 0, proc.stderr
    assert "### " in (root / "store" / f"{TODAY}.md").read_text()
    proc = run(["init", ".", "--full"], root)
    assert proc.returncode == 0, proc.stderr
    assert (root / "store" / "lessons" / ".gitkeep").is_file()


def test_log_onto_a_fifo_journal_is_refused_without_hanging(world):
    root = world["root"]
    fifo = root / "memory" / f"{TODAY}.md"
    os.mkfifo(fifo)
    proc = run(["log", "--root", ".", "--title", "T", "text"], root)
    assert proc.returncode == 2 and "not a regular file" in proc.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_writers_never_replace_a_device_or_fifo_in_the_vault(world):
    from vaultkit.core.confine import write_target
    from vaultkit.core.errors import VaultkitError

    root = world["root"]
    os.mkfifo(root / "memory" / "pipe.md")
    with pytest.raises(VaultkitError, match="not a regular file"):
        write_target(root, "memory/pipe.md")
    with pytest.raises(VaultkitError, match="not a regular file"):
        write_target(root, "memory")
    assert write_target(root, "memory/new.md") == Path(os.path.realpath(root)) / "memory/new.md"


@pytest.mark.parametrize("rel,part", [(".git/config", ".git"), ("notes/.git/x", ".git"),
                                      (".GIT/config", ".GIT"), ("./.obsidian/a.json", ".obsidian"),
                                      (".vaultkit/x", ".vaultkit"), ("notes/.obsidian/x", None),
                                      (".github/x.md", None), ("memory/x.md", None)])
def test_protected_part(rel, part):
    from vaultkit.core.confine import protected_part

    assert protected_part(rel) == part


def test_make_folders_checks_every_step_and_allows_owned_files(world):
    from vaultkit.core.confine import make_folders, write_target
    from vaultkit.core.errors import VaultkitError

    root = world["root"]
    link(root / "memory" / "deep", "../.git")
    with pytest.raises(VaultkitError, match=r"lies in \.git/"):
        make_folders(root, root / "memory" / "deep" / "more")
    assert not (root / ".git" / "more").exists()
    link(root / "memory" / "away", world["outside"])
    with pytest.raises(VaultkitError, match="leads out of the vault"):
        make_folders(root, root / "memory" / "away" / "new")
    assert not (world["outside"] / "new").exists()
    with pytest.raises(VaultkitError, match=r"lies in \.obsidian/"):
        write_target(root, ".obsidian/app.json")
    assert write_target(root, ".obsidian/graph.json", owned={".obsidian/graph.json"}).name \
        == "graph.json"
    assert make_folders(root, root / "memory" / "a" / "b").is_dir()


READERS = [
    ["check", "--select", "ALL", "--format", "json", "--no-cache", "."],
    ["check", "--hook", "--no-cache"],
    ["search", "--root", ".", "--json", "--min-score", "0", "origin example url"],
    ["graph", "--format", "json", "."],
    ["distill", "--root", ".", "--days", "400"],
    ["audit", "--root", "."],
    ["index", "--check", "."],
    ["archive", "--root", ".", "--dry-run"],
    ["get", "--root", ".", "memory/gitdir/config"],
    ["get", "--root", ".", f"memory/{TODAY}.md"],
]


@pytest.mark.parametrize("argv", READERS, ids=lambda a: " ".join(a[:2]))
def test_readers_never_serve_git_through_links(world, argv):
    """A journal linked to .git/config and a folder linked to .git/: every command runs,
    within the timeout, and the token in the remote URL never appears."""
    root = world["root"]
    link(root / f"memory/{TODAY}.md", "../.git/config")
    link(root / "memory" / "gitdir", "../.git")
    before = snapshot(root / ".git")
    proc = run(argv, root)
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    assert TOKEN not in proc.stdout + proc.stderr
    assert snapshot(root / ".git") == before


def test_archive_leaves_a_linked_alias_note_alone_and_edits_the_real_one(world):
    root = world["root"]
    (root / "memory/semantic/fact.md").write_text(f"# Fact\n\nsee [[memory/{OLD}]]\n")
    link(root / "memory/semantic/alias.md", "fact.md")
    proc = run(["archive", "--root", ".", "--keep-days", "7"], root)
    assert proc.returncode == 0, proc.stderr
    assert (root / "memory" / "archive" / f"{OLD}.md").is_file()
    assert os.path.islink(root / "memory/semantic/alias.md")
    assert f"[[memory/archive/{OLD}]]" in (root / "memory/semantic/fact.md").read_text()
