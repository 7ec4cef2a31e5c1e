"""`vaultkit snapshot` with nothing changed, said from the last run's record
(vaultkit.vault.quicksnap): never when anything changed, and the same line as the full run."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cli_invoke import invoke
from vaultkit.core.digests import blob_id
from vaultkit.vault import quicksnap, snapshots
from vaultkit.vault.profile import load_settings
from vaultkit.vault.snapshots import memory_files, open_store

MARGIN_NS = 60_000_000  # the racy margin in these tests (2 s in a real run)
ENV = {"GIT_AUTHOR_NAME": "Agent", "GIT_AUTHOR_EMAIL": "agent@example.com",
       "GIT_COMMITTER_NAME": "Agent", "GIT_COMMITTER_EMAIL": "agent@example.com"}


def git(root: Path, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(ENV, GIT_CONFIG_NOSYSTEM="1")
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, env=env)


def make(base: Path) -> Path:
    root = base / "vault"
    (root / ".obsidian").mkdir(parents=True)
    (root / "MEMORY.md").write_text("# MEMORY\n\n- Deploys go through staging first\n")
    (root / "memory" / "semantic").mkdir(parents=True)
    (root / "memory" / "people").mkdir(parents=True)
    (root / "memory" / "semantic" / "deploys.md").write_text("# Deploys\n\n- fact 1\n")
    (root / "memory" / "people" / "ana.md").write_text("# Ana\n\n- likes tea\n")
    (root / "memory" / "2026-12-07.md").write_text("# 2026-12-07\n\n- 09:00 started\n")
    (root / "vaultkit.toml").write_text('exclude = ["memory/peoplX/**"]\n')
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "first")
    return root


def settle() -> None:
    """Past the racy margin of everything written so far."""
    time.sleep(MARGIN_NS / 1e9 + 0.02)


def full(root: Path, *args: str) -> tuple[int, str, str]:
    """`vaultkit snapshot` run whole (the record not read; it is written)."""
    with mock.patch.object(quicksnap, "answer", lambda argv: None):
        return invoke(["snapshot", *args, str(root)], root)


def quick(root: Path, *args: str) -> tuple[int | None, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = quicksnap.answer(["snapshot", *args, str(root)])
    return code, out.getvalue()


def nothing_changed(root: Path) -> bool:
    """The full comparison: every memory file, read and hashed now with the settings of
    now, is the newest snapshot's version, and no other file is in it."""
    store = open_store(root, load_settings(root, use_cache=False))
    current = {path: blob_id((root / path).read_bytes())
               for path in memory_files(root, store.settings)}
    return current == store.recorded()


@pytest.fixture(autouse=True)
def margin():
    with mock.patch.object(snapshots, "RACY_NS", MARGIN_NS):
        yield


def settled_vault(base: Path) -> Path:
    root = make(base)
    full(root, "-q")
    settle()
    full(root, "-q")  # (settled: this one leaves the record)
    return root


def test_nothing_changed_is_said_from_the_record_as_the_full_run_says_it(tmp_path):
    root = settled_vault(tmp_path)
    expected = full(root)
    assert expected[0] == 0 and expected[1].startswith("nothing changed since the last "
                                                       "snapshot (4 files on refs/"), expected
    code, out = quick(root)
    assert (code, out) == (0, expected[1])
    assert quick(root, "-q", "--no-prune") == (0, "")
    # the whole command takes it: no parser, no settings, no git process
    with mock.patch("vaultkit.vault.profile.load_settings", side_effect=AssertionError), \
            mock.patch("subprocess.Popen", side_effect=AssertionError):
        assert invoke(["snapshot", str(root)], root) == (0, expected[1], "")


def test_the_record_is_written_only_once_the_files_are_out_of_the_racy_margin(tmp_path):
    root = make(tmp_path)
    full(root, "-q")  # (every file was written a moment ago)
    assert quick(root)[0] is None
    settle()
    full(root, "-q")
    assert quick(root)[0] == 0


def test_a_run_that_finds_nothing_changed_touches_when_snapshots_last_ran(tmp_path):
    root = settled_vault(tmp_path)
    store = open_store(root, load_settings(root))
    before = store.last_run()
    time.sleep(0.02)
    assert quick(root, "-q")[0] == 0
    assert store.last_run() > before


@pytest.mark.parametrize("change", ["same size and mtime", "rename-save", "hard link",
                                    "added", "removed", "config", "pack", "marker",
                                    "snapshot by another"])
def test_each_change_runs_the_full_command(tmp_path, change):
    """Never "nothing changed" when something did: each of these is seen, and the full
    run then records it."""
    root = settled_vault(tmp_path)
    note = root / "memory" / "semantic" / "deploys.md"
    st_ = note.stat()
    if change == "same size and mtime":  # (cp -p, rsync -t, tar: the ctime tells)
        note.write_text(note.read_text().replace("fact 1", "fact 2"))
        os.utime(note, ns=(st_.st_atime_ns, st_.st_mtime_ns))
        assert note.stat().st_size == st_.st_size
    elif change == "rename-save":  # (an editor's save: a new file renamed over the note)
        (note.parent / ".deploys.md.tmp").write_text("# Deploys\n\n- fact 3\n")
        os.replace(note.parent / ".deploys.md.tmp", note)
    elif change == "hard link":
        os.link(note, note.parent / "deploys-link.md")
    elif change == "added":
        (root / "memory" / "people" / "bo.md").write_text("# Bo\n")
    elif change == "removed":
        (root / "memory" / "people" / "ana.md").unlink()
    elif change == "config":  # the same size, in place, its mtime put back: ana.md excluded
        config = root / "vaultkit.toml"
        cst = config.stat()
        with open(config, "r+b") as fh:
            fh.write(b'exclude = ["memory/people/**"]\n')
        os.utime(config, ns=(cst.st_atime_ns, cst.st_mtime_ns))
    elif change == "pack":  # the bundled pack changed under the same version
        with mock.patch.object(quicksnap, "_digest", lambda path: "0" * 40):
            assert quick(root)[0] is None
        return
    elif change == "marker":  # a vaultkit.toml in the folder named makes it the vault
        full(root / "memory", "-q")
        settle()
        full(root / "memory", "-q")
        assert quick(root / "memory")[0] == 0
        (root / "memory" / "vaultkit.toml").write_text("")
        assert quick(root / "memory")[0] is None
        return
    elif change == "snapshot by another":  # (`vaultkit watch` moved the chain on)
        store = open_store(root, load_settings(root))
        (root / "memory" / "people" / "ana.md").write_text("# Ana\n\n- likes coffee\n")
        store.snapshot(prune=False)
        (root / "memory" / "people" / "ana.md").write_text("# Ana\n\n- likes tea\n")
        os.utime(root / "memory" / "people" / "ana.md", ns=(1, 1))
    assert quick(root)[0] is None
    assert not nothing_changed(root)
    code, out, _ = invoke(["snapshot", str(root)], root)
    assert code == 0 and out.startswith("snapshot "), out
    assert nothing_changed(root)


def test_other_command_lines_are_parsed_as_before(tmp_path):
    root = settled_vault(tmp_path)
    for argv in (["--help"], ["-h"], ["--report"], ["--format", "json"], ["--json"],
                 ["a", "b"], ["--no-p"], ["-qq"], [""], ["--root", str(root)],
                 ["--profile", "openclaw"], ["-o", "x"], ["--"]):
        assert quicksnap.answer(["snapshot", *argv]) is None, argv
    rc, _, err = invoke(["snapshot", "--no-p", str(root)], root)  # (argparse's prefix)
    assert rc == 0 and err == ""
    rc, _, err = invoke(["snapshot", "a", "b"], root)
    assert rc == 2 and "unrecognized arguments: b" in err


def test_a_variable_that_moves_the_repository_runs_the_full_command(tmp_path, monkeypatch):
    root = settled_vault(tmp_path)
    monkeypatch.setenv("GIT_DIR", str(root / ".git"))
    assert quick(root)[0] is None


def test_another_user_runs_the_full_command(tmp_path):
    # git refuses a repository another user owns ("dubious ownership"), so the full run
    # fails for them: the record, written by the owner, must not answer "nothing changed"
    root = settled_vault(tmp_path)
    assert quick(root)[0] == 0
    with mock.patch.object(os, "geteuid", lambda: os.getuid() + 1):
        assert quick(root)[0] is None


def test_a_damaged_record_runs_the_full_command(tmp_path):
    root = settled_vault(tmp_path)
    record = root / ".git" / "vaultkit" / quicksnap.record_name(os.path.realpath(root))
    record.write_bytes(b"\0garbage")
    assert quick(root)[0] is None
    assert full(root)[0] == 0
    settle()
    full(root, "-q")
    assert quick(root)[0] == 0


# -- over random sequences of edits --------------------------------------------------------

NOTES = ["MEMORY.md", "memory/semantic/deploys.md", "memory/people/ana.md",
         "memory/2026-12-07.md", "memory/people/bo.md", "memory/new/found.md"]
EDITS = st.lists(st.tuples(st.sampled_from(["append", "same size and mtime", "rename-save",
                                            "hard link", "add", "remove", "config", "touch",
                                            "nothing"]),
                           st.sampled_from(NOTES)), min_size=1, max_size=5)


def edit(root: Path, what: str, rel: str, step: int) -> None:
    path = root / rel
    if what == "config":
        config = root / "vaultkit.toml"
        cst = config.stat()
        text = config.read_bytes()
        new = text.replace(b"peoplX", b"people") if b"peoplX" in text \
            else text.replace(b"people", b"peoplX")
        with open(config, "r+b") as fh:
            fh.write(new)
        os.utime(config, ns=(cst.st_atime_ns, cst.st_mtime_ns))
        return
    if what == "add" or not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# Added {step}\n")
        return
    if what == "append":
        with open(path, "a") as fh:
            fh.write(f"- step {step}\n")
    elif what == "same size and mtime":
        pst = path.stat()
        data = path.read_bytes()
        path.write_bytes(data[:-2] + (b"x\n" if data[-2:] != b"x\n" else b"y\n"))
        os.utime(path, ns=(pst.st_atime_ns, pst.st_mtime_ns))
    elif what == "rename-save":
        tmp = path.parent / f".{path.name}.tmp"
        tmp.write_bytes(path.read_bytes() + f"- saved {step}\n".encode())
        os.replace(tmp, path)
    elif what == "hard link":
        link = path.parent / f"link-{step}.md"
        if not link.exists():
            os.link(path, link)
    elif what == "remove":
        path.unlink()
    elif what == "touch":
        os.utime(path)


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(edits=EDITS)
def test_nothing_changed_from_the_record_is_what_the_full_comparison_says(edits):
    """After each edit, the record's "nothing changed" is said only when reading every
    file says so; and the command (record or full run) leaves the chain holding every
    file as it is."""
    with tempfile.TemporaryDirectory() as tmp:
        root = settled_vault(Path(tmp))
        assert quick(root)[0] == 0
        for step, (what, rel) in enumerate(edits):
            edit(root, what, rel, step)
            said = quick(root, "-q", "--no-prune")[0]
            if said == 0:
                assert nothing_changed(root), (step, what, rel)
            code, _, err = invoke(["snapshot", "-q", "--no-prune", str(root)], root)
            assert (code, err) == (0, "")
            assert nothing_changed(root), (step, what, rel)
            settle()
            full(root, "-q", "--no-prune")
            assert quick(root, "-q", "--no-prune")[0] == 0, (step, what, rel)


def test_the_fast_path_imports_no_parser_and_no_settings(tmp_path):
    """What the answer costs to load: the interpreter's own modules and these two."""
    root = settled_vault(tmp_path)
    probe = ("import sys\nfrom vaultkit.cli import main\n"
             f"assert main(['snapshot', '-q', {str(root)!r}]) == 0\n"
             "print(' '.join(sorted(sys.modules)))")
    mods = set(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                              check=True, cwd=root).stdout.split())
    assert not {"argparse", "pathlib", "subprocess", "dataclasses", "vaultkit.vault.profile",
                "vaultkit.vault.snapshots", "sqlite3"} & mods


def test_a_memory_only_vault_sees_the_bootstrap_files_one_folder_up(tmp_path):
    """`memory-dir = "."`: the workspace's MEMORY.md one folder up is recorded too, so a
    change to it is seen (the `cd memory && git commit` layout)."""
    workspace = tmp_path / "ws"
    memory = workspace / "memory"
    memory.mkdir(parents=True)
    (workspace / "AGENTS.md").write_text("# Agents\n")
    (workspace / "MEMORY.md").write_text("# MEMORY\n\n- one\n")
    (memory / "vaultkit.toml").write_text('memory-dir = "."\n')
    (memory / "2026-12-07.md").write_text("# 2026-12-07\n\n- 09:00 started\n")
    git(memory, "init", "-q")
    git(memory, "add", "-A")
    git(memory, "commit", "-q", "-m", "first")
    full(memory, "-q")
    settle()
    full(memory, "-q")
    code, out = quick(memory)
    assert code == 0 and "(3 files on" in out, out  # (AGENTS.md, MEMORY.md above)
    above = workspace / "MEMORY.md"
    ast = above.stat()
    above.write_text("# MEMORY\n\n- two\n")
    os.utime(above, ns=(ast.st_atime_ns, ast.st_mtime_ns))
    assert quick(memory)[0] is None
    code, out, _ = invoke(["snapshot", str(memory)], memory)
    assert code == 0 and out.startswith("snapshot ") and "../MEMORY.md" in out, out


def test_a_symlinked_marker_gets_no_record(tmp_path):
    """A marker that is a symlink may change (its target) with no folder changing: such a
    vault's runs are all full runs."""
    root = make(tmp_path)
    (tmp_path / "elsewhere.toml").write_text('exclude = ["memory/peoplX/**"]\n')
    (root / "vaultkit.toml").unlink()
    (root / "vaultkit.toml").symlink_to(tmp_path / "elsewhere.toml")
    full(root, "-q")
    settle()
    assert full(root)[1].startswith("nothing changed")
    assert quick(root)[0] is None
