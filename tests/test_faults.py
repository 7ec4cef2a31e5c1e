"""Fault injection on every writing command: nothing is ever lost.

For ``init``, ``index``, ``graph --write-colors``, ``check --fix``, ``log`` and ``archive``
each fault below is injected in-process (monkeypatching the OS calls vaultkit makes),
then: every file that existed is intact byte for byte, no temporary file is left, and
the command ends with one clear line (exit 2; 130 for an interrupt), no traceback.

Faults:
- ``replace``: the rename of the finished temp file fails (``os.replace`` raises EIO),
  i.e. a crash between writing the temp file and renaming it;
- ``interrupt``: the process is interrupted at that same point (KeyboardInterrupt);
- ``enospc``: the disk fills up half-way through writing (the file write puts half the
  bytes down, then raises ENOSPC); for ``log``, ``os.write`` does the same;
- ``readonly``: the file to change is read-only (``os.access`` says no, and opening it
  for writing raises EACCES: as root, chmod alone does not stop a write).
A separate test kills a real ``vaultkit index`` process with SIGKILL between the temp
write and the rename.
"""

from __future__ import annotations

import datetime as dt
import errno
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from cli_invoke import invoke


TODAY = dt.date.today()
OLD = (TODAY - dt.timedelta(days=40)).isoformat()
DAY = TODAY.isoformat()

BASE = {
    "AGENTS.md": "# Agents\n\nmy own rules\n",
    "MEMORY.md": "# Memory\n\n- see [[memory/" + OLD + "|the old day]]\n",
    f"memory/{OLD}.md": f"# {OLD}\n\n### 09:00 \u2014 Old\n\nline one\nline two\nline three\n",
    f"memory/{DAY}.md": f"# {DAY}\r\n\r\n### 08:00 \u2014 Earlier\r\n\r\na\r\nb\r\nc\r\n",
    "memory/people/alice.md": "---\ntype: person\ntag: [team]\n---\n# Alice\n",
    "memory/INDEX.md": "My preface, kept.\n\n<!-- vaultkit:index:start -->\nstale\n"
                       "<!-- vaultkit:index:end -->\n\nMy footer.\n",
    ".obsidian/graph.json": '{"showTags": true, "colorGroups": [{"query": "tag:#mine", '
                           '"color": {"a": 1, "rgb": 255}}]}',
}

# command -> (argv, the file it changes)
WRITERS = {
    "init": (["init", "-q", "."], "AGENTS.md"),
    "index": (["index", "."], "memory/INDEX.md"),
    "graph --write-colors": (["graph", "--write-colors", "."], ".obsidian/graph.json"),
    "check --fix": (["check", "--fix", "--select", "deprecated-property", "."],
                    "memory/people/alice.md"),
    "log": (["log", "--root", ".", "--time", "10:00", "--title", "Fault",
             "what happened\nwhy\nnext"], f"memory/{DAY}.md"),
    "archive": (["archive", "--root", ".", "--no-cache"], "MEMORY.md"),  # its link is rewritten
}


def snapshot(root: Path) -> dict[str, bytes]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".vaultkit"]
        for name in filenames:
            p = Path(dirpath, name)
            out[p.relative_to(root).as_posix()] = p.read_bytes()
    return out


def temp_files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*")
                  if "tmp" in p.name.lower() and p.is_file())



def _enospc() -> OSError:
    return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


class _HalfWriter:
    """A file object whose write puts half the bytes on disk, then fails with ENOSPC."""

    def __init__(self, fh):
        self._fh = fh

    def write(self, data):
        self._fh.write(bytes(data[:len(data) // 2]))
        self._fh.flush()
        raise _enospc()

    def __getattr__(self, name):
        return getattr(self._fh, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._fh.close()


def inject(mp, fault: str, target: Path) -> None:
    real_replace, real_fdopen, real_write = os.replace, os.fdopen, os.write
    real_access, real_open = os.access, os.open
    target_real = os.path.realpath(target)

    if fault == "replace":
        def replace(src, dst, *a, **k):
            if ".vaultkit/" in os.fspath(dst):  # the parse cache is not what is tested here
                return real_replace(src, dst, *a, **k)
            raise OSError(errno.EIO, "Input/output error (injected)")
        mp.setattr(os, "replace", replace)
    elif fault == "interrupt":
        def replace(src, dst, *a, **k):
            if ".vaultkit/" in os.fspath(dst):
                return real_replace(src, dst, *a, **k)
            raise KeyboardInterrupt
        mp.setattr(os, "replace", replace)
    elif fault == "enospc":
        mp.setattr(os, "fdopen", lambda fd, *a, **k: _HalfWriter(real_fdopen(fd, *a, **k)))

        def write(fd, data):
            if len(data) > 1:
                real_write(fd, bytes(data[:len(data) // 2]))
            raise _enospc()
        mp.setattr(os, "write", write)
    elif fault == "readonly":
        def access(path, mode, *a, **k):
            if os.path.realpath(path) == target_real and mode & os.W_OK:
                return False
            return real_access(path, mode, *a, **k)

        def os_open(path, flags, *a, **k):
            if os.path.realpath(path) == target_real and flags & (os.O_WRONLY | os.O_RDWR):
                raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))
            return real_open(path, flags, *a, **k)
        mp.setattr(os, "access", access)
        mp.setattr(os, "open", os_open)
    else:
        raise AssertionError(fault)


FAULTS = ["replace", "interrupt", "enospc", "readonly"]
CASES = [(cmd, fault) for cmd in WRITERS for fault in FAULTS
         if not (cmd == "log" and fault in ("replace", "interrupt"))]  # log renames nothing


@pytest.mark.parametrize("command,fault", CASES, ids=[f"{c}-{f}" for c, f in CASES])
def test_fault_loses_nothing(make_vault, command, fault):
    root = make_vault(BASE)
    argv, changed = WRITERS[command]
    if command == "init":  # init into a folder that has some files of its own
        for rel in list(BASE):
            if rel not in ("AGENTS.md", "memory/INDEX.md"):
                (root / rel).unlink()
    before = snapshot(root)
    with pytest.MonkeyPatch.context() as mp:
        inject(mp, fault, root / changed)
        rc, out, err = invoke(argv, root)
    after = snapshot(root)
    for rel, data in before.items():
        assert after.get(rel) == data, f"{rel} changed or vanished"
    assert temp_files(root) == []
    assert "Traceback" not in err and "internal error" not in err
    if command == "init" and fault == "readonly":
        assert rc == 0  # init never writes an existing file, so a read-only one is no fault
    elif fault == "interrupt":
        assert rc == 130
    else:
        assert rc == 2, err
        lines = [ln for ln in err.splitlines() if ln.startswith("vaultkit: error: ")]
        assert len(lines) == 1, err
    # whatever was added is complete: no empty placeholder, no half-written file
    for rel in set(after) - set(before):
        assert after[rel] or rel.endswith(".gitkeep"), f"{rel} left empty"


def test_init_failure_leaves_no_placeholder(tmp_path):
    """Regression: init claimed each name with an empty file first; a failed write left it."""
    with pytest.MonkeyPatch.context() as mp:
        inject(mp, "enospc", tmp_path / "x")
        rc, _, err = invoke(["init", "-q", str(tmp_path / "v")], tmp_path)
    assert rc == 2
    assert [p for p in (tmp_path / "v").rglob("*") if p.is_file()] == []
    rc, _, err = invoke(["init", "-q", str(tmp_path / "v")], tmp_path)  # the retry completes
    assert rc == 0 and (tmp_path / "v" / "AGENTS.md").read_bytes()


def test_log_short_write_then_enospc_leaves_no_partial_entry(make_vault):
    """A write that puts part of the entry down and then fails is rolled back."""
    root = make_vault(BASE)
    journal = root / f"memory/{DAY}.md"
    before = journal.read_bytes()
    real_write = os.write
    calls = []

    def write(fd, data):
        calls.append(len(data))
        if len(calls) == 1:
            return real_write(fd, bytes(data[:7]))  # a short write ...
        raise _enospc()  # ... then the disk is full

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(os, "write", write)
        rc, _, err = invoke(WRITERS["log"][0], root)
    assert rc == 2 and "No space left" in err
    assert journal.read_bytes() == before
    rc, _, _ = invoke(WRITERS["log"][0], root)  # and the next entry lands cleanly
    assert rc == 0
    assert journal.read_bytes().startswith(before)
    assert journal.read_bytes().count(b"### 10:00") == 1


def test_cache_write_failure_leaves_no_temp_file(make_vault):
    root = make_vault(BASE)
    real_replace = os.replace

    def replace(src, dst, *a, **k):
        if ".vaultkit/" in os.fspath(dst):
            raise _enospc()
        return real_replace(src, dst, *a, **k)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(os, "replace", replace)
        rc, _, err = invoke(["check", "."], root)
    assert rc in (0, 1) and "Traceback" not in err
    assert [p.name for p in (root / ".vaultkit").rglob("*tmp*")] == []


KILLER = """
import os, signal, sys
real = os.replace
def replace(src, dst, *a, **k):
    if ".vaultkit" not in os.fspath(dst):
        os.kill(os.getpid(), signal.SIGKILL)
    return real(src, dst, *a, **k)
os.replace = replace
from vaultkit.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("command", ["index", "graph --write-colors", "check --fix"])
def test_sigkill_before_rename_keeps_the_original(make_vault, command):
    root = make_vault(BASE)
    argv, changed = WRITERS[command]
    before = snapshot(root)
    proc = subprocess.run([sys.executable, "-c", KILLER, *argv], cwd=root, capture_output=True,
                          timeout=120)
    assert proc.returncode == -signal.SIGKILL
    after = snapshot(root)
    assert all(after.get(rel) == data for rel, data in before.items())
    leftovers = temp_files(root)
    assert len(leftovers) == 1 and leftovers[0].endswith(".vaultkit-tmp")
    # the next run is not confused by the leftover and completes the job
    rc, _, err = invoke(argv, root)
    assert rc in (0, 1), err
    assert (root / changed).read_bytes() != before[changed]


@pytest.mark.parametrize("fail_at", [1, 2, 3])
def test_archive_fault_midway_keeps_every_byte(make_vault, fail_at):
    """archive does several writes (the copy, the link edit, INDEX.md). Whichever one fails,
    every journal's bytes exist in full at its old or its new place, and each other file is
    either its old or its new self, never a mix."""
    root = make_vault(BASE)
    before = snapshot(root)
    real_replace = os.replace
    calls = []

    def replace(src, dst, *a, **k):
        if ".vaultkit/" not in os.fspath(dst):
            calls.append(dst)
            if len(calls) == fail_at:
                raise OSError(errno.EIO, "Input/output error (injected)")
        return real_replace(src, dst, *a, **k)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(os, "replace", replace)
        rc, out, err = invoke(WRITERS["archive"][0], root)
    after = snapshot(root)
    assert rc == 2 and "Traceback" not in err and err.count("vaultkit: error: ") == 1, err
    assert temp_files(root) == []
    journal = f"memory/{OLD}.md"
    moved = [rel for rel, data in after.items() if data == before[journal]]
    assert moved in ([journal], [f"memory/archive/{OLD}.md"], [f"memory/archive/{OLD[:4]}/{OLD}.md"]), moved
    for rel, data in before.items():
        if rel != journal:
            assert rel in after, rel
    assert after["AGENTS.md"] == before["AGENTS.md"]
