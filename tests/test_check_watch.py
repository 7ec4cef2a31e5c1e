"""`vaultkit check --watch`: a check now and after each batch of changes, on the event source
of `vaultkit watch` (vaultkit.vault.fswatch); Ctrl-C ends it with exit 0."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from cli_invoke import invoke
from vaultkit.vault.fswatch import Changes

HEADER = "vaultkit check: "


def interruptible() -> None:
    """Run in the child before exec: SIGINT back to its default. A shell without job control
    starts a background job (``pytest … &``) with SIGINT ignored, every child inherits that,
    and Python then installs no KeyboardInterrupt handler: the watcher, as designed for a
    background job, would not stop on the SIGINT these tests send for Ctrl-C."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def make(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    (root / ".obsidian").mkdir(parents=True)
    (root / "memory").mkdir()
    (root / "MEMORY.md").write_text("# MEMORY\n\n- a rule\n", encoding="utf-8")
    (root / "memory" / "topic.md").write_text("# Topic\n\nSee [[MEMORY]].\n", encoding="utf-8")
    return root


class Running:
    """``vaultkit check --watch ...`` in a subprocess, its output in files."""

    def __init__(self, root: Path, args, env=None):
        self.out = open(root.parent / "out.txt", "w+b")
        self.err = open(root.parent / "err.txt", "w+b")
        self.proc = subprocess.Popen([sys.executable, "-m", "vaultkit", "check", "--watch",
                                      *args], cwd=root, stdout=self.out, stderr=self.err,
                                     env=env or os.environ.copy(), preexec_fn=interruptible)

    def text(self) -> tuple[str, str]:
        read = lambda f: Path(f.name).read_text(encoding="utf-8")  # noqa: E731
        return read(self.out), read(self.err)

    def wait_for(self, check, what: str, timeout: float = 45) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if check(*self.text()):
                return
            assert self.proc.poll() is None, f"exited early: {self.text()}"
            time.sleep(0.1)
        pytest.fail(f"no {what} within {timeout} s: {self.text()}")

    def runs(self) -> int:
        return self.text()[1].count(HEADER)

    def interrupt(self) -> int:
        self.proc.send_signal(signal.SIGINT)
        try:
            return self.proc.wait(30)
        finally:
            self.out.close()
            self.err.close()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def _watch_through_a_finding(root: Path, running: Running) -> None:
    running.wait_for(lambda o, e: "watching" in e and "All checks passed!" in o, "first run")
    note = root / "memory" / "topic.md"
    note.write_text("# Topic\n\nSee [[nowhere-note]].\n", encoding="utf-8")
    running.wait_for(lambda o, e: "nowhere-note" in o and e.count("watching") == 2,
                     "the finding")
    note.write_text("# Topic\n\nSee [[MEMORY]].\n", encoding="utf-8")
    running.wait_for(lambda o, e: e.count("watching") == 3, "the run after the fix")
    out, err = running.text()
    runs = out.split("All checks passed!")
    assert len(runs) == 3 and "nowhere-note" in runs[1]  # passed, the finding, passed again
    assert "memory/topic.md changed" in err


@pytest.mark.parametrize("mode", [["--poll", "0.1"], []], ids=["polling", "file-events"])
def test_a_finding_comes_and_goes_then_ctrl_c_exits_0(tmp_path, mode):
    root = make(tmp_path)
    running = Running(root, [*mode, "--select", "broken-link"])
    try:
        _watch_through_a_finding(root, running)
        code = running.interrupt()
    finally:
        running.kill()
    out, err = running.text()
    assert code == 0, err
    assert "Traceback" not in err and "interrupted" not in err and "KeyboardInterrupt" not in err
    assert "watchfiles is not installed" not in err


def test_without_watchfiles_it_says_so_once_and_polls(tmp_path):
    root = make(tmp_path)
    block = tmp_path / "block"
    (block / "watchfiles").mkdir(parents=True)
    (block / "watchfiles" / "__init__.py").write_text("raise ImportError('not here')\n")
    env = os.environ.copy()
    env["PYTHONPATH"] = os.pathsep.join([str(block), env.get("PYTHONPATH", "")])
    running = Running(root, ["--select", "broken-link"], env=env)
    try:
        _watch_through_a_finding(root, running)
        code = running.interrupt()
    finally:
        running.kill()
    err = running.text()[1]
    assert code == 0 and "Traceback" not in err
    assert err.count("watchfiles is not installed") == 1


@pytest.mark.parametrize("mode", [["--poll", "0.1"], []], ids=["polling", "file-events"])
def test_fixes_and_cache_writes_start_no_run(tmp_path, mode):
    root = make(tmp_path)
    assert invoke(["index"], root)[0] == 0
    running = Running(root, [*mode, "--fix", "--select", "index-stale"])
    try:
        running.wait_for(lambda o, e: "watching" in e, "first run")
        index = root / "memory" / "INDEX.md"
        fresh = index.read_text(encoding="utf-8")
        index.write_text(fresh.replace("## Most linked", "## Stale"), encoding="utf-8")
        running.wait_for(lambda o, e: "Fixed 1 finding" in e and e.count("watching") == 2,
                         "the fix")
        assert running.text()[1].count("Fixed") == 1
        assert index.read_text(encoding="utf-8") == fresh
        assert (root / ".vaultkit" / "cache").is_dir()  # its own writes, as a real run makes
        # another change: the run after it is the next one (the fix's write of INDEX.md
        # and the cache writes in between started none)
        (root / "MEMORY.md").write_text("# MEMORY\n\n- a rule\n- another\n", encoding="utf-8")
        running.wait_for(lambda o, e: "MEMORY.md changed" in e and "watching" in
                         e.split("MEMORY.md changed")[1], "the run after MEMORY.md")
        err = running.text()[1]
        assert running.runs() == 3, err
        assert f"{HEADER}MEMORY.md changed\n" in err  # and not "MEMORY.md changed and 1 more"
        assert running.interrupt() == 0
    finally:
        running.kill()


def test_its_own_writes_are_no_change(tmp_path):
    root = make(tmp_path)
    stop = threading.Event()
    changes = Changes(root, watched=lambda rel: rel.endswith(".md"), stop=stop, poll=0.01)
    changes.begin()
    for rel in (".vaultkit/cache/results", ".git/index", ".ruff_cache/x", ".trash/a.md",
                "memory/topic.md.vaultkit-tmp"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x", encoding="utf-8")
    assert changes.walk() == changes.table  # caches, git and temporary files: no change
    note = root / "memory" / "topic.md"
    note.write_text("# Topic\n\nchanged by --fix\n", encoding="utf-8")
    changes.mark([note])  # what the run wrote itself
    assert changes.walk() == changes.table
    (root / "memory" / "other.md").write_text("# Other\n", encoding="utf-8")
    assert changes.wait() == ["memory/other.md"]
    (root / "image.png").write_bytes(b"png")  # an attachment appearing counts (links)
    assert changes.wait() == ["image.png"]


@pytest.mark.parametrize("extra,option", [
    (["--hook"], "--hook"), (["--write-baseline"], "--write-baseline"),
    (["--shrink-baseline"], "--shrink-baseline"), (["-o", "report.txt"], "-o/--output"),
    (["--diff"], "--diff"), (["--staged"], "--staged")])
def test_combinations_that_make_no_sense_are_refused(tmp_path, extra, option):
    root = make(tmp_path)
    code, out, err = invoke(["check", "--watch", *extra], root)
    assert code == 2 and out == ""
    assert err.startswith(f"vaultkit: error: --watch and {option} do not go together")
    assert err.count("\n") == 1
    assert not (root / "report.txt").exists()


def test_poll_needs_watch_and_a_positive_interval(tmp_path):
    root = make(tmp_path)
    code, _, err = invoke(["check", "--poll", "1"], root)
    assert code == 2 and err == "vaultkit: error: --poll goes with --watch\n"
    code, _, err = invoke(["check", "--watch", "--poll", "0"], root)
    assert code == 2 and err == "vaultkit: error: --poll: give a number of seconds above 0\n"


def test_a_run_that_cannot_check_is_reported_and_the_watch_goes_on(tmp_path):
    root = make(tmp_path)
    running = Running(root, ["--poll", "0.1", "--select", "broken-link"])
    try:
        running.wait_for(lambda o, e: "watching" in e, "first run")
        (root / "vaultkit.toml").write_text("[[[half-edited\n", encoding="utf-8")
        running.wait_for(lambda o, e: "exit 2: could not check" in e, "the config error")
        (root / "vaultkit.toml").write_text("", encoding="utf-8")
        running.wait_for(lambda o, e: e.count("watching") == 3, "the run after the repair")
        code = running.interrupt()
    finally:
        running.kill()
    out, err = running.text()
    assert code == 0 and "Traceback" not in err
    assert "vaultkit: error: " in err and "not valid TOML" in err
    assert out.count("All checks passed!") == 2  # before and after; none from the failed run


@pytest.mark.parametrize("mode", [["--poll", "0.1"], []], ids=["polling", "file-events"])
def test_a_memory_only_vault_watches_its_bootstrap_files_one_folder_up(tmp_path, mode):
    ws = tmp_path / "ws"
    (ws / "memory" / ".obsidian").mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# MEMORY\n\n- a rule\n", encoding="utf-8")
    (ws / "AGENTS.md").write_text("# AGENTS\n", encoding="utf-8")
    (ws / "memory" / "vaultkit.toml").write_text('memory-dir = "."\n', encoding="utf-8")
    (ws / "unrelated.md").write_text("# not the vault's\n", encoding="utf-8")
    root = ws / "memory"
    running = Running(root, [*mode, "--select", "broken-link"])
    try:
        running.wait_for(lambda o, e: "watching" in e, "first run")
        (ws / "unrelated.md").write_text("# still not\n", encoding="utf-8")  # no run
        (ws / "AGENTS.md").write_text("# AGENTS\n\nSee [[nowhere-note]].\n", encoding="utf-8")
        running.wait_for(lambda o, e: e.count("watching") == 2, "the run after AGENTS.md")
        err = running.text()[1]
        assert f"{HEADER}../AGENTS.md changed\n" in err, err
        assert running.interrupt() == 0
    finally:
        running.kill()


def test_the_screen_is_cleared_on_a_terminal_only(tmp_path):
    import pty
    import select

    root = make(tmp_path)
    master, slave = pty.openpty()
    err = open(tmp_path / "err.txt", "w+b")
    proc = subprocess.Popen([sys.executable, "-m", "vaultkit", "check", "--watch", "--poll",
                             "0.1", "--select", "broken-link"], cwd=root, stdout=slave,
                            stderr=err, env={**os.environ, "NO_COLOR": "1"},
                            preexec_fn=interruptible)
    os.close(slave)
    seen = b""
    try:
        end = time.monotonic() + 45
        while b"All checks passed!" not in seen and time.monotonic() < end:
            if select.select([master], [], [], 0.2)[0]:
                seen += os.read(master, 4096)
        assert seen.startswith(b"\x1b[2J\x1b[H") and b"All checks passed!" in seen, seen
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
        err.close()
    # and not into a file (the other tests' stdout)
    root2 = make(tmp_path / "b")
    running = Running(root2, ["--poll", "0.1", "--select", "broken-link"])
    try:
        running.wait_for(lambda o, e: "watching" in e, "first run")
        assert running.interrupt() == 0
    finally:
        running.kill()
    assert "\x1b" not in running.text()[0]
