"""Regressions of issue 12 (hardening): config folders in .git, -o onto special files,
oversized log entries, --fix on committed journals, interrupted writes, index links."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from cli_invoke import invoke


TIMEOUT = 60



def run(argv, cwd: Path) -> subprocess.CompletedProcess:
    """vaultkit in its own process, under a timeout: a hang fails the test."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return subprocess.run([sys.executable, "-m", "vaultkit", *argv], cwd=cwd,
                          capture_output=True, text=True, timeout=TIMEOUT, env=env)


# -- item 4: configured folders inside .git, .obsidian or .vaultkit ------------------------

PROTECTED_CONFIG = [
    ("memory-dir in .git", 'memory-dir = ".git"\n', "memory-dir", ".git"),
    ("memory-dir below .git", 'memory-dir = ".git/hooks"\n', "memory-dir", ".git"),
    ("memory-dir in .obsidian", 'memory-dir = ".obsidian"\n', "memory-dir", ".obsidian"),
    ("memory-dir in .vaultkit", 'memory-dir = "./.vaultkit/x"\n', "memory-dir", ".vaultkit"),
    ("memory-dir in .GIT", 'memory-dir = ".GIT"\n', "memory-dir", ".GIT"),
    ("nested repository", 'memory-dir = "notes/.git"\n', "memory-dir", ".git"),
    ("index path in .git", '[index]\npath = ".git/INDEX.md"\n', "index.path", ".git"),
    ("type folder in .obsidian", '[types.t]\nfolder = ".obsidian/t"\n', "types.t.folder",
     ".obsidian"),
    ("layer path in .vaultkit", '[[layers]]\nname = "x"\npaths = [".vaultkit/*.md"]\n',
     "layers.0.paths", ".vaultkit"),
]


@pytest.mark.parametrize("config,field,part", [c[1:] for c in PROTECTED_CONFIG],
                         ids=[c[0] for c in PROTECTED_CONFIG])
def test_configured_folders_in_protected_folders_are_config_errors(make_vault, config, field,
                                                                   part):
    root = make_vault({"vaultkit.toml": config, "MEMORY.md": "# M\n"})
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    git_before = sorted(p.name for p in (root / ".git").rglob("*"))
    for argv in (["check", "."], ["log", "--root", ".", "x"], ["index", "."],
                 ["archive", "--root", "."]):
        rc, out, err = invoke(argv, root)
        assert rc == 2, (argv, err)
        assert field in err and f"lies in {part}/" in err and err.count("\n") == 1, err
    assert sorted(p.name for p in (root / ".git").rglob("*")) == git_before


@pytest.mark.parametrize("config", ['memory-dir = "notes/.github"\n',
                                    'memory-dir = "my.obsidian"\n',
                                    '[index]\npath = "memory/.vaultkit-index.md"\n'])
def test_folders_that_only_look_protected_are_fine(make_vault, config):
    root = make_vault({"vaultkit.toml": config, "MEMORY.md": "# M\n"})
    rc, out, err = invoke(["check", "."], root)
    assert rc in (0, 1) and "lies in" not in err, err


# -- item 5: -o onto a symlink, FIFO or device --------------------------------------------

@pytest.fixture
def small(make_vault):
    return make_vault({"MEMORY.md": "# Memory\n\n- [[missing]]\n"})


@pytest.mark.parametrize("command", [["graph", "--format", "json", "."],
                                     ["check", "--format", "json", "."]],
                         ids=["graph", "check"])
def test_output_through_a_symlink_keeps_the_link(small, tmp_path, command):
    real = tmp_path / "real.json"
    real.write_text("old\n")
    os.symlink(real, tmp_path / "out.json")
    proc = run([*command, "-o", str(tmp_path / "out.json")], small)
    assert proc.returncode in (0, 1), proc.stderr
    assert os.path.islink(tmp_path / "out.json")
    assert real.read_text().lstrip().startswith(("{", "["))


@pytest.mark.parametrize("command", [["graph", "--format", "json", "."],
                                     ["check", "--format", "json", "."]],
                         ids=["graph", "check"])
def test_output_onto_a_fifo_is_written_in_place(small, tmp_path, command):
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []

    def reader():
        with open(fifo, "rb") as fh:
            got.append(fh.read())

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    proc = run([*command, "-o", str(fifo)], small)
    thread.join(TIMEOUT)
    assert proc.returncode in (0, 1), proc.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)  # still a FIFO, not a regular file
    assert got and got[0].lstrip().startswith((b"{", b"["))


def test_output_onto_a_fifo_nobody_reads_is_an_error_not_a_hang(small, tmp_path):
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    proc = run(["graph", "--format", "json", ".", "-o", str(fifo)], small)
    assert proc.returncode == 2 and "nobody reads" in proc.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def _null_device(folder: Path) -> Path:
    """A private null device node (never /dev/null itself: a regression that replaced the
    target would replace the system's); skipped where device nodes cannot be made."""
    node = folder / "null"
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except (PermissionError, AttributeError, OSError) as exc:
        pytest.skip(f"cannot create a character device node here ({exc})")
    return node


@pytest.mark.parametrize("command", [["graph", "--format", "json", "."],
                                     ["check", "--format", "json", "."]],
                         ids=["graph", "check"])
def test_output_onto_a_character_device_keeps_the_device(small, tmp_path, command):
    node = _null_device(tmp_path)
    before = os.lstat(node)
    proc = run([*command, "-o", str(node)], small)
    assert proc.returncode in (0, 1), proc.stderr
    after = os.lstat(node)
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev
    assert after.st_ino == before.st_ino


def test_output_through_a_symlink_to_a_device_keeps_both(small, tmp_path):
    node = _null_device(tmp_path)
    os.symlink(node, tmp_path / "sink")
    before = os.lstat(node)
    proc = run(["graph", "--format", "json", ".", "-o", str(tmp_path / "sink")], small)
    assert proc.returncode == 0, proc.stderr
    assert os.path.islink(tmp_path / "sink") and os.lstat(node).st_ino == before.st_ino
    assert stat.S_ISCHR(os.lstat(node).st_mode)


def test_output_onto_a_regular_file_is_still_replaced(small, tmp_path):
    out = tmp_path / "report.json"
    out.write_text("stale\n")
    proc = run(["check", "--format", "json", ".", "-o", str(out)], small)
    assert proc.returncode in (0, 1), proc.stderr
    assert out.read_text().startswith("[") and "broken-link" in out.read_text()


def test_output_onto_a_folder_is_a_clear_error(small, tmp_path):
    proc = run(["graph", "--format", "json", ".", "-o", str(tmp_path)], small)
    assert proc.returncode == 2 and "is a folder" in proc.stderr
    assert "Traceback" not in proc.stderr


# -- item 14: an entry that would take the journal over the size limit --------------------

def test_log_refuses_an_entry_that_would_pass_the_size_limit(make_vault):
    root = make_vault({"vaultkit.toml": "[budgets]\nmax-file-bytes = 2000\n",
                       "MEMORY.md": "# M\n",
                       "memory/2026-03-01.md": "# 2026-03-01\n\n### 09:00 — A\n\n- a\n"})
    journal = root / "memory" / "2026-03-01.md"
    before = journal.read_bytes()
    rc, out, err = invoke(["log", "--root", ".", "--date", "2026-03-01", "--title", "Big",
                           "x" * 1990], root)
    assert rc == 2 and "over the 2,000-byte limit" in err and "nothing written" in err
    assert journal.read_bytes() == before
    rc, out, err = invoke(["log", "--root", ".", "--date", "2026-03-01", "--title", "Ok",
                           "fits\nand\nmore"], root)
    assert rc == 0, err
    assert journal.read_bytes().startswith(before) and b"### " in journal.read_bytes()[len(before):]


def test_log_refuses_an_oversized_entry_into_a_new_journal_and_creates_nothing(make_vault):
    root = make_vault({"vaultkit.toml": "[budgets]\nmax-file-bytes = 2000\n",
                       "MEMORY.md": "# M\n"})
    rc, out, err = invoke(["log", "--root", ".", "--date", "2026-03-02", "--title", "Big",
                           "word " * 396], root)
    assert rc == 2 and "nothing written" in err
    assert not (root / "memory" / "2026-03-02.md").exists()


def test_a_50_mb_entry_is_refused_quickly(make_vault, tmp_path):
    root = make_vault({"MEMORY.md": "# M\n"})
    big = tmp_path / "big.txt"
    big.write_text("Title\n" + ("y" * 99 + "\n") * 500_000)
    with open(big) as fh:
        proc = subprocess.run([sys.executable, "-m", "vaultkit", "log", "--root", ".", "-"],
                              cwd=root, stdin=fh, capture_output=True, text=True, timeout=TIMEOUT)
    assert proc.returncode == 2 and "limit" in proc.stderr
    assert not any((root / "memory").glob("*.md")) if (root / "memory").exists() else True


# -- item 15: --fix never rewrites committed journal lines ---------------------------------

JOURNAL = "---\ntag: daily\n---\n# 2026-03-01\n\n### 09:00 — Start\n\n- began\n"


def _git(root: Path, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@e", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@e")
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=env)


def test_fix_leaves_a_committed_journal_alone(make_vault):
    """Regression: --fix renamed `tag:` in a committed journal; journal-append-only then
    refused the commit."""
    root = make_vault({"MEMORY.md": "# M\n", "memory/2026-03-01.md": JOURNAL,
                       "memory/semantic/fact.md": "---\ntag: x\n---\n# Fact\n\nA fact.\n"})
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "init")
    with open(root / "memory/2026-03-01.md", "a") as fh:
        fh.write("\n### 10:00 — More\n\n- appended, not committed\n")
    before = (root / "memory/2026-03-01.md").read_text()
    rc, out, err = invoke(["check", "--fix", "--no-cache", "--select", "deprecated-property",
                           "."], root)
    assert (root / "memory/2026-03-01.md").read_text() == before
    assert "memory/2026-03-01.md: 1 fix(es) not applied" in err and "append-only" in err
    assert (root / "memory/semantic/fact.md").read_text().startswith("---\ntags: [x]\n")
    rc, out, err = invoke(["check", "--no-cache", "--select", "journal-append-only", "."],
                          root)
    assert rc == 0 and "VK601" not in out


def test_fix_still_fixes_a_journal_that_is_not_committed(make_vault):
    root = make_vault({"MEMORY.md": "# M\n", "memory/2026-03-01.md": "# Old\n",
                       "memory/2026-03-02.md": JOURNAL})
    _git(root, "init", "-q")
    _git(root, "add", "MEMORY.md", "memory/2026-03-01.md")
    _git(root, "commit", "-qm", "init")
    rc, out, err = invoke(["check", "--fix", "--no-cache", "--select", "deprecated-property",
                           "."], root)
    assert (root / "memory/2026-03-02.md").read_text().startswith("---\ntags: [daily]\n")
    assert "not applied" not in err


def test_fix_still_fixes_journals_outside_git(make_vault):
    root = make_vault({"MEMORY.md": "# M\n", "memory/2026-03-01.md": JOURNAL})
    rc, out, err = invoke(["check", "--fix", "--no-cache", "--select", "deprecated-property",
                           "."], root)
    assert (root / "memory/2026-03-01.md").read_text().startswith("---\ntags: [daily]\n")


def test_diff_shows_no_change_to_committed_journal_lines(make_vault):
    root = make_vault({"MEMORY.md": "# M\n", "memory/2026-03-01.md": JOURNAL})
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "init")
    rc, out, err = invoke(["check", "--diff", "--no-cache", "--select", "deprecated-property",
                           "."], root)
    assert "2026-03-01" not in out


# -- item 16: temporary files of a killed write --------------------------------------------

KILLED_WRITER = """
import os, sys, time
import vaultkit.core.atomic as atomic
real_fsync = os.fsync
def slow_fsync(fd):
    print("writing", flush=True)
    time.sleep(60)
os.fsync = slow_fsync
atomic.write_atomic(sys.argv[1], b"new content\\n")
"""


def _killed_write(target: Path) -> Path:
    """Start a write of ``target``, SIGKILL it mid-way; returns the temporary file left."""
    proc = subprocess.Popen([sys.executable, "-c", KILLED_WRITER, str(target)],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == "writing\n"
        proc.kill()
    finally:
        proc.wait(TIMEOUT)
    left = [p for p in target.parent.iterdir() if p.name.endswith(".vaultkit-tmp")]
    assert len(left) == 1 and left[0].name.startswith(f".{target.name}.")
    return left[0]


def _age(path: Path, seconds: int = 3600) -> None:
    old = path.stat().st_mtime - seconds
    os.utime(path, (old, old))


def test_a_killed_writes_temporary_file_is_removed_on_the_next_run(make_vault):
    root = make_vault({"MEMORY.md": "# M\n", "memory/semantic/fact.md": "# Fact\n\nold\n"})
    target = root / "memory/semantic/fact.md"
    tmp = _killed_write(target)
    assert target.read_text() == "# Fact\n\nold\n"  # the original is intact
    _age(tmp)
    rc, out, err = invoke(["check", "."], root)
    assert not tmp.exists()
    assert target.read_text() == "# Fact\n\nold\n"
    assert ".vaultkit-tmp" not in out + err


def test_a_fresh_or_locked_temporary_file_is_left_alone(make_vault):
    import fcntl

    root = make_vault({"MEMORY.md": "# M\n"})
    fresh = root / ".MEMORY.md.abc123.vaultkit-tmp"
    fresh.write_text("being written\n")
    held = root / ".NOW.md.def456.vaultkit-tmp"
    held.write_text("being written slowly\n")
    _age(held)
    fd = os.open(held, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        invoke(["check", "."], root)
        assert fresh.exists() and held.exists()
    finally:
        os.close(fd)
    invoke(["check", "."], root)
    assert fresh.exists() and not held.exists()


def test_a_symlink_named_like_a_temporary_file_is_not_followed_or_removed(make_vault, tmp_path):
    root = make_vault({"MEMORY.md": "# M\n"})
    victim = tmp_path / "victim.txt"
    victim.write_text("keep\n")
    link = root / ".x.md.abc.vaultkit-tmp"
    os.symlink(victim, link)
    os.utime(link, (1, 1), follow_symlinks=False)
    invoke(["check", "."], root)
    assert os.path.islink(link) and victim.read_text() == "keep\n"


def test_a_killed_graph_colours_write_is_cleaned_up(make_vault):
    root = make_vault({"MEMORY.md": "# M\n"})
    tmp = _killed_write(root / ".obsidian" / "graph.json")
    _age(tmp)
    rc, out, err = invoke(["graph", "--write-colors", "."], root)
    assert rc == 0, err
    assert not tmp.exists() and (root / ".obsidian" / "graph.json").is_file()


def test_temporary_files_stay_out_of_git_in_the_starter_vault(tmp_path):
    root = tmp_path / "v"
    rc, out, err = invoke(["init", "--git", str(root)], tmp_path)
    assert rc == 0, err
    (root / ".NOW.md.abc123.vaultkit-tmp").write_text("half\n")
    status = subprocess.run(["git", "-C", str(root), "status", "--porcelain"],
                            capture_output=True, text=True, check=True).stdout
    assert "vaultkit-tmp" not in status


# -- item 17: index links for awkward file names -------------------------------------------

AWKWARD = [" lead", "trail ", "a#b", "[[x]]", "new\nline", "a|b", "a^b", "x]y", "per%20cent",
           "ang<le>", "par(en)", "ex!cl", "  "]


def test_index_writes_only_links_that_resolve(make_vault):
    """Regression: index wrote [[ lead]], [[trail ]], [a#b.md](<...>) and the like, which
    its own broken-link rule then reported."""
    files = {"MEMORY.md": "# M\n", "memory/semantic/plain name.md":
             "---\ntype: knowledge\n---\n# Plain\n\ntext\n"}
    for name in AWKWARD:
        files[f"memory/semantic/{name}.md"] = "---\ntype: knowledge\n---\n# T\n\ntext\n"
    root = make_vault(files)
    rc, out, err = invoke(["index", "."], root)
    assert rc == 0, err
    index = (root / "memory/INDEX.md").read_text()
    assert "[[plain name]]" in index  # plain names keep their short wikilink
    rc, out, err = invoke(["check", "--no-cache", "--format", "json", "--select",
                           "broken-link,index-stale", "."], root)
    import json

    found = json.loads(out)
    assert [f for f in found if f["rule"] == "broken-link"] == []
    left = sorted(f["path"] for f in found if f["rule"] == "index-stale")
    # '#' cannot be written in any link Obsidian reads as a file name; the rest can
    assert left == ["memory/semantic/a#b.md"], left
    assert all(f["severity"] == "warning" for f in found)
    assert index.count("\n- ") >= len(AWKWARD)  # every other note is listed


def test_index_warns_about_each_note_it_leaves_out(make_vault):
    root = make_vault({"MEMORY.md": "# M\n", "memory/semantic/a#b.md":
                       "---\ntype: knowledge\n---\n# T\n\ntext\n"})
    rc, out, err = invoke(["index", "."], root)
    assert rc == 0
    assert "'memory/semantic/a#b.md': left out of the index" in err
    assert "a#b" not in (root / "memory/INDEX.md").read_text()
    rc, out, err = invoke(["index", "--check", "."], root)
    assert rc == 0 and "left out of the index" in err


def test_the_committed_journal_warning_is_given_on_every_run(make_vault):
    """Once per run, not once per process: a second run in the same process says it too."""
    root = make_vault({"MEMORY.md": "# M\n", "memory/2026-03-01.md": JOURNAL})
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "init")
    for _ in range(2):
        rc, out, err = invoke(["check", "--fix", "--no-cache", "--select", "deprecated-property",
                               "."], root)
        assert err.count("memory/2026-03-01.md: 1 fix(es) not applied") == 1, err
