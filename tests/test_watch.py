"""`vaultkit watch`: each round's judgement and restore (Watcher.step), the loop's fallbacks,
and the service files that keep it running."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from cli_invoke import invoke
from vaultkit.memory.watch import Watcher, read_events, service_text
from vaultkit.vault.profile import load_settings

TODAY = dt.date.today().isoformat()
JOURNAL = f"memory/{TODAY}.md"


def make(tmp_path: Path, git: bool = True) -> Path:
    root = tmp_path / "vault"
    (root / ".obsidian").mkdir(parents=True)
    (root / "MEMORY.md").write_text("# MEMORY\n\n" + "".join(f"- rule {i}\n" for i in range(6)),
                                    encoding="utf-8")
    (root / "memory" / "lessons").mkdir(parents=True)
    (root / "memory" / "lessons" / "cron.md").write_text(
        "# Cron\n\n" + "".join(f"- lesson {i}\n" for i in range(6)), encoding="utf-8")
    if git:
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root


def watcher(root: Path, **kw) -> tuple[Watcher, list[str]]:
    lines: list[str] = []
    w = Watcher(root, load_settings(root), out=lines.append, **kw)
    w.step()
    return w, lines


def append(root: Path, text: str) -> None:
    with open(root / JOURNAL, "a", encoding="utf-8") as fh:
        fh.write(text)


def test_a_journal_that_lost_lines_gets_them_back_once(tmp_path):
    root = make(tmp_path)
    w, lines = watcher(root)
    entries = [f"\n### 1{n}:00 — Checkpoint {n}\n- did {n}\n- next {n + 1}\n" for n in range(3)]
    for e in entries:
        append(root, e)
        assert w.step() == []  # appends are no loss
    (root / JOURNAL).write_text("# Summary\n- fine\n", encoding="utf-8")
    events = w.step()
    assert [(e.kind, e.path, e.lines) for e in events] == [("journal-restored", JOURNAL, 9)]
    text = (root / JOURNAL).read_text(encoding="utf-8")
    assert text.startswith("# Summary\n- fine\n\n### ")
    assert "Restored by vaultkit watch" in text
    assert "".join(entries).lstrip("\n") in text  # byte for byte, in order
    assert w.step() == []  # the restored journal is recorded whole: nothing more to do
    assert [e["kind"] for e in read_events(w.store)] == ["journal-restored"]
    assert "9 lost lines restored" in lines[0]
    # history sees the loss between commits, recovered
    rc, out, _ = invoke(["history", "--format", "json"], root)
    data = json.loads(out)
    assert [(e["kind"], e["recovered"]) for e in data["events"]] == [("journal-rewrite", True)]
    assert data["watch"][0]["kind"] == "journal-restored"


def test_an_edit_is_not_restored_and_a_line_replaced_is(tmp_path):
    """The model of loss: a typo fixed keeps most of its line, an edit; a line replaced
    by an unrelated one is lost and comes back."""
    root = make(tmp_path)
    w, lines = watcher(root)
    append(root, "\n### 10:00 — Release\n- Deployed v1.2 to production after the tests\n"
                 "- Rollback plan written down in the runbook\n- Next: watch the errors\n")
    assert w.step() == []
    text = (root / JOURNAL).read_text(encoding="utf-8")
    fixed = text.replace("v1.2", "v1.3").replace("runbook", "run book")
    (root / JOURNAL).write_text(fixed, encoding="utf-8")
    assert w.step() == []  # nothing appended back
    assert (root / JOURNAL).read_text(encoding="utf-8") == fixed
    (root / JOURNAL).write_text(fixed.replace("- Next: watch the errors", "- Lunch at noon"),
                                encoding="utf-8")
    events = w.step()
    assert [(e.kind, e.lines) for e in events] == [("journal-restored", 1)]
    assert "- Next: watch the errors\n" in (root / JOURNAL).read_text(encoding="utf-8")


def test_lines_git_stash_took_are_not_restored(tmp_path):
    """`git stash` keeps the day's uncommitted lines: writing them back would make
    `git stash pop` find them twice (a conflict)."""
    root = make(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_AUTHOR_NAME="A", GIT_AUTHOR_EMAIL="a@example.com", GIT_COMMITTER_NAME="A",
               GIT_COMMITTER_EMAIL="a@example.com", GIT_CONFIG_NOSYSTEM="1")

    def git(*args):
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)

    append(root, f"# {TODAY}\n\n### 08:00 — Start\n- Read the queue\n- Planned\n- Go\n")
    git("add", "-A")
    git("commit", "-q", "-m", "morning")
    w, lines = watcher(root)
    append(root, "\n### 10:00 — Release\n- Deployed v1.2\n- Smoke tests green\n- Next: docs\n")
    assert w.step() == []
    git("stash", "-q")
    assert w.step() == []  # the lines are in the stash, not lost
    git("stash", "pop", "-q")  # and come back from it, once
    assert (root / JOURNAL).read_text(encoding="utf-8").count("- Deployed v1.2\n") == 1


def test_no_restore_only_reports_and_recover_brings_them_back(tmp_path):
    root = make(tmp_path, git=False)  # the store under .vaultkit/ works the same
    w, lines = watcher(root, restore=False)
    append(root, "\n### 10:00 — A\n- one\n- two\n")
    w.step()
    (root / JOURNAL).write_text("# Summary\n", encoding="utf-8")
    events = w.step()
    assert [e.kind for e in events] == ["journal-lines-lost"]
    assert (root / JOURNAL).read_text(encoding="utf-8") == "# Summary\n"
    rc, out, _ = invoke(["recover", "--all"], root)
    assert rc == 0 and "appended 3 lines" in out
    assert "- one\n- two\n" in (root / JOURNAL).read_text(encoding="utf-8")


def test_memory_md_cut_and_note_deleted_are_reported_moves_are_not(tmp_path):
    root = make(tmp_path)
    w, lines = watcher(root)
    # two rules moved into a lesson in one round: no loss
    (root / "MEMORY.md").write_text("# MEMORY\n\n- rule 0\n- rule 1\n- rule 2\n- rule 3\n",
                                    encoding="utf-8")
    with open(root / "memory/lessons/cron.md", "a", encoding="utf-8") as fh:
        fh.write("- rule 4\n- rule 5\n")
    assert w.step() == []
    # one durable line cut, not moved: reported though far from half the file
    (root / "MEMORY.md").write_text("# MEMORY\n\n- rule 0\n- rule 1\n- rule 2\n",
                                    encoding="utf-8")
    events = w.step()
    assert [(e.kind, e.path, e.lines) for e in events] == [("memory-cut", "MEMORY.md", 1)]
    # a lesson cut by one line is an edit; cut past half it is reported
    (root / "memory/lessons/cron.md").write_text("# Cron\n\n- lesson 0\n", encoding="utf-8")
    assert [e.kind for e in w.step()] == ["memory-cut"]
    (root / "memory/lessons/cron.md").unlink()
    assert [(e.kind, e.path) for e in w.step()] == [("note-deleted", "memory/lessons/cron.md")]
    # a journal archived (moved) is not deleted
    append(root, "\n### 10:00 — A\n- one\n")
    w.step()
    (root / "memory/archive").mkdir()
    os.rename(root / JOURNAL, root / "memory/archive" / Path(JOURNAL).name)
    assert w.step() == []


def test_editor_saving_by_rename_is_judged_like_any_write(tmp_path):
    root = make(tmp_path)
    w, _ = watcher(root)
    append(root, "\n### 10:00 — A\n- one\n- two\n")
    w.step()
    tmp = root / "memory" / ".journal.swp"
    tmp.write_text(f"# {TODAY}\n", encoding="utf-8")
    os.replace(tmp, root / JOURNAL)
    assert [e.kind for e in w.step()] == ["journal-restored"]
    assert "- one\n- two\n" in (root / JOURNAL).read_text(encoding="utf-8")


def _run_loop(w: Watcher, **kw) -> tuple[threading.Thread, threading.Event, list]:
    stop = threading.Event()
    code: list = []
    thread = threading.Thread(target=lambda: code.append(w.run(stop=stop, **kw)))
    thread.start()
    return thread, stop, code


def _wait(predicate, seconds=30.0):
    end = time.monotonic() + seconds
    while time.monotonic() < end and not predicate():
        time.sleep(0.05)
    return predicate()


def test_without_watchfiles_it_says_so_and_polls(tmp_path, monkeypatch):
    root = make(tmp_path)
    monkeypatch.setitem(sys.modules, "watchfiles", None)  # import fails
    monkeypatch.setattr("vaultkit.memory.watch.Watcher._signals", staticmethod(lambda stop: None))
    lines: list[str] = []
    w = Watcher(root, load_settings(root), out=lines.append)
    thread, stop, code = _run_loop(w)
    try:
        assert _wait(lambda: any("watchfiles is not installed" in x for x in lines))
        append(root, "\n### 10:00 — A\n- one\n")
        assert _wait(lambda: JOURNAL in w.store.recorded())
    finally:
        stop.set()
        thread.join(30)
    assert code == [0]


def test_file_event_limit_falls_back_to_polling(tmp_path, monkeypatch):
    import watchfiles

    root = make(tmp_path)

    def refuse(*a, **kw):
        raise OSError(28, "OS file watch limit reached")
        yield  # (a generator, like watchfiles.watch)

    monkeypatch.setattr(watchfiles, "watch", refuse)
    monkeypatch.setattr("vaultkit.memory.watch.Watcher._signals", staticmethod(lambda stop: None))
    lines: list[str] = []
    w = Watcher(root, load_settings(root), out=lines.append)
    thread, stop, code = _run_loop(w)
    try:
        assert _wait(lambda: any("file events unavailable" in x and "max_user_watches" in x
                                 for x in lines))
        append(root, "\n### 10:00 — A\n- one\n")
        assert _wait(lambda: JOURNAL in w.store.recorded())
    finally:
        stop.set()
        thread.join(30)
    assert code == [0]


def test_vault_deleted_stops_the_watch_with_a_message(tmp_path, monkeypatch):
    import shutil

    root = make(tmp_path, git=False)
    monkeypatch.setattr("vaultkit.memory.watch.Watcher._signals", staticmethod(lambda stop: None))
    lines: list[str] = []
    w = Watcher(root, load_settings(root), out=lines.append)
    thread, stop, code = _run_loop(w, poll=0.2)
    try:
        assert _wait(lambda: w.store.head() is not None)
        shutil.rmtree(root)
        thread.join(30)
    finally:
        stop.set()
    assert code == [1] and any("is gone (moved or deleted)" in x for x in lines)


def test_a_burst_of_writes_loses_nothing(tmp_path):
    root = make(tmp_path)
    w, _ = watcher(root)
    writers = [subprocess.Popen([sys.executable, "-m", "vaultkit", "log", str(root),
                                 f"burst {i}: the entry says what, why and what next in "
                                 "one long enough line"]) for i in range(8)]
    rounds = 0
    while any(p.poll() is None for p in writers) and rounds < 500:
        w.step()
        rounds += 1
    for p in writers:
        assert p.wait(60) == 0
    w.step()
    text = (root / JOURNAL).read_text(encoding="utf-8")
    assert all(f"burst {i}:" in text for i in range(8))
    assert "Restored by vaultkit watch" not in text  # appends never look like a loss


# -- services -----------------------------------------------------------------------------

def test_service_texts_quote_the_paths(tmp_path):
    root = tmp_path / "my vault"
    unit, path = service_text("systemd", root, interval=15, python="/opt/py 3/python")
    assert 'ExecStart="/opt/py 3/python" -m vaultkit watch "' + str(root) + '"' in unit
    assert path.endswith(".config/systemd/user/" + Path(path).name) and "Restart=" in unit
    plist, path = service_text("launchd", root, interval=15, python="/usr/bin/python3")
    assert f"<string>{root}</string>" in plist and path.endswith(".plist")
    line, path = service_text("cron", root, interval=15, python="/usr/bin/python3")
    assert path is None
    assert line.startswith("*/15 * * * * /usr/bin/python3 -m vaultkit snapshot --quiet '")
    assert f"'{root}'" in line


def test_service_command_prints_and_install_asks(tmp_path, monkeypatch):
    root = make(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    rc, out, _ = invoke(["watch", "--service", "systemd"], root)
    assert rc == 0 and "[Service]" in out and "systemctl --user enable --now" in out
    assert not (tmp_path / "home").exists()  # printed, not installed
    rc, _, err = invoke(["watch", "--service", "cron", "--install"], root)
    assert rc == 2 and "confirm with --yes" in err
    rc, _, err = invoke(["watch", "--install"], root)
    assert rc == 2 and "--install goes with --service" in err


def test_watch_and_snapshot_beside_log_fix_archive_and_commit_lose_nothing(tmp_path):
    root = make(tmp_path)
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com")
    old = (dt.date.today() - dt.timedelta(days=60)).isoformat()
    old_text = f"# {old}\n\n### 09:00 — Old day\n- kept through the archive move\n- and this\n"
    (root / "memory" / f"{old}.md").write_text(old_text, encoding="utf-8")
    (root / "memory" / "INDEX.md").write_text("# Index\n\nstale\n", encoding="utf-8")
    subprocess.run(["git", "add", "-A"], cwd=root, env=env, check=True)
    subprocess.run(["git", "commit", "-qm", "first"], cwd=root, env=env, check=True)
    watch = subprocess.Popen([sys.executable, "-m", "vaultkit", "watch", "--poll", "0.2",
                              str(root)], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
    try:
        vk = [sys.executable, "-m", "vaultkit"]
        jobs = [subprocess.Popen([*vk, "log", str(root), f"entry {i}: what happened, why it "
                                  "mattered and what comes next, in one line"], env=env)
                for i in range(4)]
        jobs.append(subprocess.Popen([*vk, "check", "--fix", "--select", "index-stale",
                                      str(root)], env=env, stdout=subprocess.DEVNULL))
        jobs.append(subprocess.Popen([*vk, "archive", str(root)], env=env,
                                     stdout=subprocess.DEVNULL))
        jobs += [subprocess.Popen([*vk, "snapshot", "-q", str(root)], env=env)
                 for _ in range(2)]
        for job in jobs:
            job.wait(120)
        subprocess.run(["git", "add", "-A"], cwd=root, env=env, check=True)
        subprocess.run(["git", "commit", "-qm", "nightly"], cwd=root, env=env, check=True)
        time.sleep(1.5)  # a few more polling rounds
    finally:
        watch.terminate()
        out, _ = watch.communicate(timeout=30)
    assert watch.returncode == 0, out
    journal = (root / JOURNAL).read_text(encoding="utf-8")
    assert all(f"entry {i}:" in journal for i in range(4))
    archived = next((root / "memory" / "archive").rglob(f"{old}.md"))
    assert archived.read_text(encoding="utf-8") == old_text
    every = [p.read_text(encoding="utf-8") for p in root.rglob("*.md") if ".git" not in p.parts]
    assert not any("Restored by vaultkit watch" in t for t in every), out  # nothing was lost
    # --fix writes INDEX.md whole or not at all (it refuses when a note changed meanwhile)
    assert (root / "memory" / "INDEX.md").read_text(encoding="utf-8").startswith(
        "# Index\n\nstale\n")
    committed = subprocess.run(["git", "show", f"HEAD:{JOURNAL}"], cwd=root,
                               capture_output=True, text=True).stdout
    assert committed == journal
    store = Watcher(root, load_settings(root), out=lambda line: None).store
    store.snapshot()
    recorded = store.recorded()
    assert store.blobs([recorded[JOURNAL]])[recorded[JOURNAL]].decode() == journal


def test_a_lost_line_holding_a_credential_comes_back_as_a_placeholder(tmp_path):
    root = make(tmp_path)
    w, _ = watcher(root)
    key = "5145683452:AAbeuEchsVEoR7TJYHSDATOCN1D61_k7U4O"  # a Telegram bot token's shape
    append(root, f"\n### 10:00 — Bot\n- set up the alerts bot\n- token {key}\n")
    w.step()
    (root / JOURNAL).write_text("# Summary\n", encoding="utf-8")
    assert [e.kind for e in w.step()] == ["journal-restored"]
    text = (root / JOURNAL).read_text(encoding="utf-8")
    assert "- set up the alerts bot" in text and key not in text
    assert "is not brought back; credentials stay out of memory" in text
    rc, out, _ = invoke(["check", "--select", "journal-append-only"], root)
    assert rc == 0, out  # the withheld line is not a loss the commit would seal


def test_install_writes_the_service_and_runs_its_manager(tmp_path, monkeypatch):
    """--install --yes, with stand-ins for crontab and systemctl on PATH (the real ones are
    the user's: a test never touches them)."""
    root = make(tmp_path)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    table = tmp_path / "crontab.txt"
    calls = tmp_path / "systemctl.log"
    (bin_dir / "crontab").write_text(
        f'#!/bin/sh\nif [ "$1" = "-l" ]; then cat "{table}" 2>/dev/null || exit 1; '
        f'else cat > "{table}"; fi\n')
    (bin_dir / "systemctl").write_text(f'#!/bin/sh\necho "$@" >> "{calls}"\n')
    for tool in ("crontab", "systemctl"):
        (bin_dir / tool).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    table.write_text("0 23 * * * nightly-backup\n")
    rc, out, err = invoke(["watch", "--service", "cron", "--install", "--yes"], root)
    assert rc == 0, err
    lines = table.read_text().splitlines()
    assert lines[0] == "0 23 * * * nightly-backup"  # the user's own lines are kept
    assert "vaultkit snapshot --quiet" in lines[1] and len(lines) == 2
    rc, out, _ = invoke(["watch", "--service", "cron", "--install", "--yes"], root)
    assert "already holds this line" in out and len(table.read_text().splitlines()) == 2
    rc, out, err = invoke(["watch", "--service", "systemd", "--install", "--yes"], root)
    assert rc == 0, err
    units = list((tmp_path / "home/.config/systemd/user").glob("vaultkit-watch-*.service"))
    assert len(units) == 1 and "-m vaultkit watch" in units[0].read_text()
    assert calls.read_text().splitlines() == [
        "--user daemon-reload", f"--user enable --now {units[0].name}"]
    # and the audit now sees what keeps the snapshots running
    invoke(["snapshot", "-q"], root)
    from vaultkit.audit import run_audit
    from vaultkit.vault.loader import load_vault

    check = next(c for c in run_audit(load_vault(root, use_cache=False)) if c.id == "snapshots")
    assert check.status == "pass" and "systemd unit" in check.found and "crontab" in check.found


def test_a_round_of_only_new_files_reads_none_of_them(tmp_path, monkeypatch):
    """The first snapshot records every memory file as new: nothing can have been lost, so
    the round reads no blob (on a 10,000-note vault it kept the watcher busy for seconds,
    and the checks it answers waited on it)."""
    from vaultkit.vault.snapshots import Store

    root = make(tmp_path)
    w, lines = watcher(root)
    read = []
    real = Store.blobs

    def blobs(self, oids):
        oids = list(oids)
        read.append(oids)
        return real(self, oids)

    monkeypatch.setattr(Store, "blobs", blobs)
    assert w.step() == [] and read == []  # the first round: every file new
    append(root, "\n### 09:00 — Morning\n- one\n- two\n- three\n")
    assert w.step() == [] and read == []  # a new journal: new too
    (root / JOURNAL).write_text("# Summary\n", encoding="utf-8")
    events = w.step()
    assert [e.kind for e in events] == ["journal-restored"] and read  # a loss: judged
