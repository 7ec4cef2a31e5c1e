"""`vaultkit watch`: each round's judgement and restore (Watcher.step), the loop's fallbacks,
and the service files that keep it running."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from cli_invoke import invoke
from vaultkit.memory.watch import Watcher, read_events, service_text
from vaultkit.vault.outbound import has_control
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


CURATED = ("# MEMORY\n\n## People\n- Ana owns billing\n- Bo reviews infra changes\n"
           "- Cy is on call in March\n\n## Rules\n- Deploys go through staging first\n"
           "- Backups run at 02:00\n- Secrets live in the vault, never in notes\n"
           "- Retros happen on Fridays\n")


def test_memory_md_consolidation_cut_past_the_allowance_is_restored(tmp_path):
    """A consolidation rewrite keeps 6 of MEMORY.md's 10 durable lines (40%, past the
    quarter allowed): the 4 dropped lines go back where they stood, once; another writer
    cutting them again makes watch back off."""
    root = make(tmp_path)
    (root / "MEMORY.md").write_text(CURATED, encoding="utf-8")
    w, lines = watcher(root)
    rewrite = ("# MEMORY\n\n## People\n- Ana owns billing\n\n## Rules\n"
               "- Deploys go through staging first\n- Retros happen on Fridays\n"
               "- New: standups are async\n")
    (root / "MEMORY.md").write_text(rewrite, encoding="utf-8")
    events = w.step()
    assert [(e.kind, e.path, e.lines) for e in events] == [("memory-restored", "MEMORY.md", 4)]
    assert (root / "MEMORY.md").read_text(encoding="utf-8") == (
        "# MEMORY\n\n## People\n- Ana owns billing\n- Bo reviews infra changes\n"
        "- Cy is on call in March\n\n## Rules\n- Deploys go through staging first\n"
        "- Backups run at 02:00\n- Secrets live in the vault, never in notes\n"
        "- Retros happen on Fridays\n- New: standups are async\n")
    assert "4 dropped lines put back where they stood" in lines[-1]
    assert w.step() == []  # the restored file is the new baseline: nothing to judge
    (root / "MEMORY.md").write_text(rewrite, encoding="utf-8")
    assert [e.kind for e in w.step()] == ["memory-restore-undone"]
    assert (root / "MEMORY.md").read_text(encoding="utf-8") == rewrite
    kinds = [e["kind"] for e in read_events(w.store)]
    assert "memory-restored" in kinds and "memory-restore-undone" in kinds


def test_memory_md_one_folder_up_is_restored_in_the_workspace(tmp_path):
    """A memory-only vault (`memory-dir = "."`): MEMORY.md sits in the workspace above it,
    and a cut past the allowance is put back there."""
    ws = tmp_path / "ws"
    (ws / "memory" / ".obsidian").mkdir(parents=True)
    (ws / "MEMORY.md").write_text(CURATED, encoding="utf-8")
    (ws / "memory" / "vaultkit.toml").write_text('memory-dir = "."\n', encoding="utf-8")
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    w, _ = watcher(ws / "memory")
    (ws / "MEMORY.md").write_text("# MEMORY\n\n- Ana owns billing\n", encoding="utf-8")
    assert [(e.kind, e.path, e.lines) for e in w.step()] == [
        ("memory-restored", "../MEMORY.md", 8)]
    now = (ws / "MEMORY.md").read_text(encoding="utf-8")
    assert [line for line in now.splitlines() if line.strip()] == \
        [line for line in CURATED.splitlines() if line.strip()]


def test_memory_md_cut_past_the_allowance_without_restore_is_reported(tmp_path):
    root = make(tmp_path)
    (root / "MEMORY.md").write_text(CURATED, encoding="utf-8")
    w, _ = watcher(root, restore=False)
    (root / "MEMORY.md").write_text("# MEMORY\n\n- Ana owns billing\n", encoding="utf-8")
    assert [(e.kind, e.lines) for e in w.step()] == [("memory-cut", 8)]
    assert (root / "MEMORY.md").read_text(encoding="utf-8") == "# MEMORY\n\n- Ana owns billing\n"


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
    # undone in place: the old lines where they stood, then what was written since, as an
    # append would have left it; no heading or marker of vaultkit's
    assert text == "".join(entries).lstrip("\n") + "\n# Summary\n- fine\n"
    assert "Restored by vaultkit watch" not in text and "vaultkit" not in text
    assert w.step() == []  # the restored journal is recorded whole: nothing more to do
    assert [e["kind"] for e in read_events(w.store)] == ["journal-restored"]
    assert "9 lost lines put back where they stood" in lines[0]
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


def test_lines_a_running_pre_commit_took_out_are_not_restored(tmp_path, monkeypatch):
    """A plain `git commit` holds no index.lock while its hooks run, and pre-commit has a
    partly staged journal's unstaged lines in its patch (`patch<time>-<pid>`) meanwhile:
    putting them back would fail the hook. The journal pre-commit puts back is what it
    holds and the patch's lines, so a line held twice before ("## Summary") is kept too."""
    root = make(tmp_path)
    home = tmp_path / "pre-commit-home"
    home.mkdir()
    monkeypatch.setenv("PRE_COMMIT_HOME", str(home))
    staged = f"# {TODAY}\n\n## Summary\n- Morning summary\n\n### 10:00 — Release\n- Deployed\n"
    unstaged = "\n## Summary\n- Evening summary of the release\n"
    (root / JOURNAL).parent.mkdir(parents=True, exist_ok=True)
    (root / JOURNAL).write_text(staged + unstaged, encoding="utf-8")
    w, lines = watcher(root)
    patch = (f"diff --git a/{JOURNAL} b/{JOURNAL}\n--- a/{JOURNAL}\n+++ b/{JOURNAL}\n"
             "@@ -7,0 +8,3 @@\n+\n+## Summary\n+- Evening summary of the release\n")
    (home / f"patch{int(time.time())}-{os.getpid()}").write_text(patch, encoding="utf-8")
    (root / JOURNAL).write_text(staged, encoding="utf-8")  # pre-commit checked it out
    assert w.step() == [] and lines == []
    assert (root / JOURNAL).read_text(encoding="utf-8") == staged  # nothing written
    # a patch left by a pre-commit run that ended is no holder: the lines are lost then
    (root / JOURNAL).write_text(staged + unstaged, encoding="utf-8")
    w.step()
    for name in os.listdir(home):
        os.rename(home / name, home / (name.rpartition("-")[0] + "-999999999"))
    (root / JOURNAL).write_text(staged, encoding="utf-8")
    assert [e.kind for e in w.step()] == ["journal-restored"]


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="a process's start is read "
                    "from /proc (elsewhere a live pid is taken for the patch's writer)")
def test_a_patch_whose_pid_a_later_process_took_holds_no_commit_open(tmp_path, monkeypatch):
    """pre-commit keeps its patches (`patch<time>-<pid>`) after a run, and the kernel gives
    the pid to a later process in time: a process that started after the patch was saved
    did not save it. Taken for a running pre-commit, it kept the watcher from snapshotting
    or restoring anything as long as that process lived."""
    from vaultkit.vault import gitstate

    root = make(tmp_path)
    home = tmp_path / "pre-commit-home"
    home.mkdir()
    monkeypatch.setenv("PRE_COMMIT_HOME", str(home))
    diff = (f"diff --git a/{JOURNAL} b/{JOURNAL}\n--- a/{JOURNAL}\n+++ b/{JOURNAL}\n"
            "@@ -1,0 +2,1 @@\n+- held\n")
    old = home / f"patch1000000000-{os.getpid()}"  # saved in 2001, before this process began
    old.write_text(diff, encoding="utf-8")
    assert not gitstate.pre_commit_running()
    assert gitstate._running_pre_commit_patches() == []
    monkeypatch.setenv(gitstate.CALLER_PARENT, str(os.getpid()))  # as a hook's parent
    assert gitstate._pre_commit_patch() is None
    w, _ = watcher(root)  # its first round snapshots the vault
    assert subprocess.run(["git", "rev-parse", "-q", "--verify", w.store.ref], cwd=root,
                          capture_output=True).returncode == 0
    # the same pid's patch saved after the process began is its run's
    now = home / f"patch{int(time.time())}-{os.getpid()}"
    now.write_text(diff, encoding="utf-8")
    assert gitstate.pre_commit_running()
    assert gitstate._running_pre_commit_patches() == [diff.encode()]
    assert gitstate._pre_commit_patch() == diff.encode()


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="a process's start is read "
                    "from /proc (elsewhere a live pid is taken for the watcher)")
def test_the_audit_takes_no_later_process_with_a_killed_watchers_pid_for_the_watcher(tmp_path):
    """A watcher killed outright logs no `stopped`; the process the kernel later gives its
    pid is not a watcher, and the audit must not say snapshots are being kept."""
    from vaultkit.audit.snapshots import _watch_running
    from vaultkit.core.processes import started
    from vaultkit.memory.watch import log_event

    root = make(tmp_path)
    w, _ = watcher(root)
    began = started(os.getpid())
    log_event(w.store, {"time": round(began - 3600, 3), "kind": "started", "path": "",
                        "detail": f"pid {os.getpid()}"})  # an hour before this process began
    assert not _watch_running(w.store)
    log_event(w.store, {"time": round(time.time(), 3), "kind": "started", "path": "",
                        "detail": f"pid {os.getpid()}"})
    assert _watch_running(w.store)


def test_nothing_is_written_while_a_commits_hooks_run_then_the_loss_is_restored(
        tmp_path, monkeypatch):
    """While a pre-commit run with a patch is alive its hooks run on the staged versions,
    and when they are done it checks the work tree out and applies its patch again (a
    write meanwhile is rolled back as a hook's fix, or fails the hook): lines lost then,
    that the patch does not hold (an entry appended during the hooks and rolled back),
    are put back by the first round after the run, not during it."""
    root = make(tmp_path)
    home = tmp_path / "pre-commit-home"
    home.mkdir()
    monkeypatch.setenv("PRE_COMMIT_HOME", str(home))
    (root / JOURNAL).parent.mkdir(parents=True, exist_ok=True)
    staged = f"# {TODAY}\n\n### 10:00 — Agent 1\n- Agent 1: reviewed\n"
    during = "\n### 10:01 — Agent 2\n- Agent 2: reviewed and closed\n"
    (root / JOURNAL).write_text(staged + during, encoding="utf-8")
    w, lines = watcher(root)
    patch = (f"diff --git a/{JOURNAL} b/{JOURNAL}\n--- a/{JOURNAL}\n+++ b/{JOURNAL}\n"
             "@@ -4,0 +5,2 @@\n+\n+- Agent 3: written before the commit\n")
    (home / f"patch{int(time.time())}-{os.getpid()}").write_text(patch, encoding="utf-8")
    (root / JOURNAL).write_text(staged, encoding="utf-8")  # pre-commit rolled Agent 2 back
    assert w.step() == [] and lines == []
    assert (root / JOURNAL).read_text(encoding="utf-8") == staged  # nothing written
    for name in os.listdir(home):  # the run ended
        os.rename(home / name, home / (name.rpartition("-")[0] + "-999999999"))
    assert [e.kind for e in w.step()] == ["journal-restored"]
    assert (root / JOURNAL).read_text(encoding="utf-8") == staged + during


def test_a_restore_held_back_by_hooks_starting_is_made_after_them(tmp_path, monkeypatch):
    """The hooks start between a round's start and its write: nothing is written, and the
    first round after them puts the lines back, though the file did not change since."""
    import vaultkit.vault.gitstate as gitstate

    root = make(tmp_path)
    (root / JOURNAL).parent.mkdir(parents=True, exist_ok=True)
    staged = f"# {TODAY}\n\n### 10:00 — Agent 1\n- Agent 1: reviewed\n"
    lost = "\n### 10:01 — Agent 2\n- Agent 2: reviewed and closed\n"
    (root / JOURNAL).write_text(staged + lost, encoding="utf-8")
    w, lines = watcher(root)
    (root / JOURNAL).write_text(staged, encoding="utf-8")
    calls = []

    def running():  # no run when the round starts, one when it is about to write
        calls.append(1)
        return len(calls) == 2

    monkeypatch.setattr(gitstate, "pre_commit_running", running)
    assert w.step() == [] and (root / JOURNAL).read_text(encoding="utf-8") == staged
    assert len(calls) == 2
    assert [e.kind for e in w.step()] == ["journal-restored"]
    assert (root / JOURNAL).read_text(encoding="utf-8") == staged + lost


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
    assert rc == 0 and "put back 3 lines where they stood" in out, out
    assert (root / JOURNAL).read_text(encoding="utf-8") == \
        "### 10:00 — A\n- one\n- two\n\n# Summary\n"  # in place, as watch would


def test_memory_md_prune_and_note_deleted_are_reported_moves_are_not(tmp_path):
    root = make(tmp_path)
    w, lines = watcher(root)
    # two rules moved into a lesson in one round: no loss
    (root / "MEMORY.md").write_text("# MEMORY\n\n- rule 0\n- rule 1\n- rule 2\n- rule 3\n",
                                    encoding="utf-8")
    with open(root / "memory/lessons/cron.md", "a", encoding="utf-8") as fh:
        fh.write("- rule 4\n- rule 5\n")
    assert w.step() == []
    # one durable line cut, not moved: within the pruning allowance (1 of 5), logged
    (root / "MEMORY.md").write_text("# MEMORY\n\n- rule 0\n- rule 1\n- rule 2\n",
                                    encoding="utf-8")
    events = w.step()
    assert [(e.kind, e.path, e.lines) for e in events] == [("memory-pruned", "MEMORY.md", 1)]
    assert "(the pruning allowance is 1: 25%, " in events[0].detail  # and where it comes from
    assert (root / "MEMORY.md").read_text(encoding="utf-8").endswith("- rule 2\n")
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


def test_service_keeps_the_profile_it_was_given(tmp_path, monkeypatch):
    """`watch --profile X --service ...` used to write a service that ran without it: the
    watcher then judged the vault with another rule pack than the one asked for."""
    import shlex

    root = make(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    rc, out, _ = invoke(["watch", "--profile", "obsidian", "--service", "systemd"], root)
    assert rc == 0 and " -m vaultkit watch --profile obsidian " in out, out
    rc, out, _ = invoke(["watch", "--profile", "obsidian", "--service", "launchd"], root)
    assert rc == 0 and ("<string>watch</string>\n    <string>--profile</string>\n"
                        "    <string>obsidian</string>\n") in out, out
    rc, out, _ = invoke(["watch", "--profile", "obsidian", "--service", "cron"], root)
    assert rc == 0 and " -m vaultkit snapshot --quiet --profile obsidian " in out, out
    # a pack file is relative to the vault: the service gets its absolute path, escaped
    shutil.copy(Path(__file__).parents[1] / "rules" / "openclaw.yaml", root / "my pack.yaml")
    rc, out, _ = invoke(["watch", "--profile", "my pack.yaml", "--service", "cron"], root)
    line = next(line for line in out.splitlines() if "snapshot" in line)
    words = shlex.split(line.split("  # ")[0])
    assert words[words.index("--profile") + 1] == str(root / "my pack.yaml"), line
    rc, out, _ = invoke(["watch", "--service", "cron"], root)
    assert rc == 0 and "--profile" not in out  # none given: none written


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


def test_recover_puts_lines_back_as_watch_does_and_not_twice(tmp_path):
    """One undo of a deletion: `recover` after `watch --no-restore` leaves the journal
    byte for byte as watch's restore does (old lines, then the summary; no heading), and
    `recover` after watch's restore finds nothing to write."""
    roots = [make(tmp_path / "restored"), make(tmp_path / "recovered")]
    watchers = [watcher(roots[0])[0], watcher(roots[1], restore=False)[0]]
    for root, w in zip(roots, watchers):
        append(root, "\n### 10:00 — Release\n- Deployed v1.2\n- Smoke tests green\n")
        append(root, "\n### 11:00 — Review\n- Two comments, both fixed\n")
        w.step()
        (root / JOURNAL).write_text(f"# {JOURNAL[7:17]}\n\n## Summary\n- A good day\n",
                                    encoding="utf-8")
    assert [e.kind for e in watchers[0].step()] == ["journal-restored"]
    assert [e.kind for e in watchers[1].step()] == ["journal-lines-lost"]
    rc, out, _ = invoke(["recover", "--all"], roots[1])
    assert rc == 0 and "put back 5 lines where they stood" in out, out
    texts = [(root / JOURNAL).read_text(encoding="utf-8") for root in roots]
    assert texts[0] == texts[1], texts
    assert texts[1] == ("### 10:00 — Release\n- Deployed v1.2\n- Smoke tests green\n\n"
                        "### 11:00 — Review\n- Two comments, both fixed\n\n"
                        f"# {JOURNAL[7:17]}\n\n## Summary\n- A good day\n"), texts[1]
    rc, out, _ = invoke(["recover", "--all"], roots[0])
    assert rc == 0 and "nothing to recover" in out, out
    assert (roots[0] / JOURNAL).read_text(encoding="utf-8") == texts[0]


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

    def blobs(self, oids, *names):
        oids = list(oids)
        read.append(oids)
        return real(self, oids, *names)

    monkeypatch.setattr(Store, "blobs", blobs)
    assert w.step() == [] and read == []  # the first round: every file new
    append(root, "\n### 09:00 — Morning\n- one\n- two\n- three\n")
    assert w.step() == [] and read == []  # a new journal: new too
    (root / JOURNAL).write_text("# Summary\n", encoding="utf-8")
    events = w.step()
    assert [e.kind for e in events] == ["journal-restored"] and read  # a loss: judged


# -- what a service file holds is what runs: nothing injected, nothing expanded -------------

# a folder name with each character a service file's format reads on its own: specifiers
# and variables (systemd), % (cron), quotes, backslashes (one before a %, one at the end:
# a unit file joins the next line there), a shell comment, XML's markup
AWKWARD = "v 100% \\%n %h $HOME ${USER} $$ \"q\" 'q' ; #x <a>&amp;]]> \\"


def _python_at(folder: Path) -> str:
    """A real program (this Python) at an awkward path: ``systemd-analyze verify`` checks
    that the program it reads from ``ExecStart=`` exists."""
    folder.mkdir(parents=True)
    (folder / "python").symlink_to(sys.executable)
    return str(folder / "python")


def test_the_systemd_unit_runs_exactly_the_vault_path(tmp_path):
    from service_formats import exec_argv, specifiers, systemd_unit

    root = tmp_path / AWKWARD
    python = _python_at(tmp_path / "py 50% %h $HOME ${USER} ;")
    unit, _ = service_text("systemd", root, interval=15, python=python)
    parsed = systemd_unit(unit)
    assert set(parsed) == {("Unit", "Description"), ("Service", "ExecStart"),
                           ("Service", "Restart"), ("Service", "RestartSec"),
                           ("Install", "WantedBy")}  # no directive of the path's own
    assert exec_argv(parsed["Service", "ExecStart"][0]) == [
        python, "-m", "vaultkit", "watch", str(root)]
    assert specifiers(parsed["Unit", "Description"][0]) == \
        f'vaultkit watch: snapshots of the memory in "{root}"'
    # and systemd's own reader, where it is installed: the program it resolves must exist
    # (a $ doubled in the program's path, or a % specifier expanded there, names another)
    analyze = shutil.which("systemd-analyze")
    if analyze:
        (tmp_path / "units").mkdir()
        path = tmp_path / "units" / "vaultkit-watch-test.service"
        path.write_text(unit, encoding="utf-8")
        proc = subprocess.run([analyze, "verify", "--man=no", str(path)], capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode == 0 and path.name not in proc.stderr, proc.stderr
    # systemd takes no quote or backslash in a program's path (systemd-analyze verify:
    # "Executable name contains special characters"): refused before anything is written
    from vaultkit.core.errors import VaultkitError

    for bad in ('/opt/py "3"/python', "/opt/py 'x'/python", "/opt/py\\3/python"):
        with pytest.raises(VaultkitError, match="holds a quote or a backslash"):
            service_text("systemd", root, interval=15, python=bad)


def test_the_crontab_line_runs_exactly_the_vault_path(tmp_path):
    from service_formats import crontab_job

    root = tmp_path / AWKWARD
    for python in ("/opt/py%1/python", str(tmp_path / "py 50% \\%d 'q'" / "python")):
        line, _ = service_text("cron", root, interval=15, python=python)
        fields, argv = crontab_job(line)
        assert fields == ["*/15", "*", "*", "*", "*"]
        assert argv == [python, "-m", "vaultkit", "snapshot", "--quiet", str(root)]
    # the shell itself reads the same words (cron's % rule applied first, as above)
    probe = tmp_path / "probe %"
    probe.mkdir()
    (probe / "python").write_text('#!/bin/sh\nprintf "%s\\0" "$@" > "$0.args"\n')
    (probe / "python").chmod(0o755)
    line, _ = service_text("cron", root, interval=15, python=str(probe / "python"))
    command = line.split(None, 5)[5].replace("\\%", "%")
    subprocess.run(["sh", "-c", command], check=True, timeout=30)
    assert (probe / "python.args").read_text().split("\0")[:-1] == [
        "-m", "vaultkit", "snapshot", "--quiet", str(root)]


def test_the_launchd_agent_runs_exactly_the_vault_path(tmp_path):
    import plistlib

    root = tmp_path / AWKWARD
    plist, _ = service_text("launchd", root, interval=15, python="/opt/py & <3>/python")
    agent = plistlib.loads(plist.encode("utf-8"))
    assert agent["ProgramArguments"] == ["/opt/py & <3>/python", "-m", "vaultkit", "watch",
                                         str(root)]
    assert agent["RunAtLoad"] is True and agent["KeepAlive"] is True


@pytest.mark.parametrize("kind", ["systemd", "cron", "launchd"])
def test_a_value_with_a_control_character_is_refused(tmp_path, kind):
    from vaultkit.core.errors import VaultkitError

    for root, python in ((tmp_path / "v\nExecStartPre=/bin/touch pwned", "/usr/bin/python3"),
                         (tmp_path / "v\r* * * * * touch pwned", "/usr/bin/python3"),
                         (tmp_path / "v\x1b[2J", "/usr/bin/python3"),
                         (tmp_path / "v", "/usr/bin/py\nthon3")):
        with pytest.raises(VaultkitError) as exc:
            service_text(kind, root, interval=15, python=python)
        message = str(exc.value)
        assert "holds a control character" in message and "nothing written" in message
        assert not has_control(message)  # shown as escapes: one line
    with pytest.raises(VaultkitError, match="not valid UTF-8"):  # a name of raw bytes
        service_text(kind, tmp_path / "v\udcff", interval=15, python="/usr/bin/python3")
    with pytest.raises(VaultkitError, match="no absolute path"):
        service_text(kind, tmp_path / "v", interval=15, python="python3")


def test_install_refuses_a_vault_path_that_would_inject_a_job(tmp_path, monkeypatch):
    """A folder name holding a line break would add a crontab job, or unit directives, of
    its own: --install --yes refuses it in one line, exit 2, and installs nothing."""
    made = make(tmp_path)
    root = made.rename(tmp_path / "vault\n* * * * * touch pwned #")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    table, calls = tmp_path / "crontab.txt", tmp_path / "calls.log"
    for tool in ("crontab", "systemctl"):
        (bin_dir / tool).write_text(f'#!/bin/sh\necho "{tool} $@" >> "{calls}"\n'
                                    f'cat > /dev/null\n')
        (bin_dir / tool).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    table.write_text("0 23 * * * nightly-backup\n")
    for kind in ("cron", "systemd", "launchd"):
        rc, out, err = invoke(["watch", "--service", kind, "--install", "--yes"], root)
        assert rc == 2 and out == "", out
        assert err.count("\n") == 1 and "holds a control character" in err, err
        assert "\\n* * * * * touch pwned" in err  # the name, shown with its escape
    assert not calls.exists()  # neither crontab nor systemctl ran
    assert not (tmp_path / "home").exists()  # no unit or agent written
    assert table.read_text() == "0 23 * * * nightly-backup\n"


# -- one model of loss: edits, git's own moves, two writers -------------------------------

DAY = ("# Day\n\n### 09:00 — Standup\n- talked to Ada about the invoice\n- paid 120 EUR for "
       "hosting\n\n### 11:00 — Deploy\n- shipped 1.2 to staging\n- watched the graphs\n")


def _git(root: Path, *args: str) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com",
               GIT_CONFIG_GLOBAL=os.devnull)
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True,
                          text=True, env=env).stdout


def _committed_day(tmp_path: Path) -> Path:
    """A vault whose today's journal (DAY) is committed."""
    root = make(tmp_path)
    (root / JOURNAL).write_text(DAY, encoding="utf-8")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "day")
    return root


def _append_checkpoint(root: Path) -> None:
    with open(root / JOURNAL, "a", encoding="utf-8") as fh:
        fh.write("\n### 13:00 — Checkpoint\n- uncommitted work\n")


def _journal(root: Path) -> str:
    return (root / JOURNAL).read_text(encoding="utf-8")


@pytest.mark.parametrize("old, new", [
    ("- talked to Ada about the invoice", "- talked to Ada about the invoices"),  # a typo
    ("- paid 120 EUR for hosting", "- paid 150 EUR for hosting"),  # a wrong number
    ("- shipped 1.2 to staging", "- shipped 1.2 to production"),  # a clause reworded
])
def test_an_edit_in_obsidian_is_not_a_loss(tmp_path, old, new):
    root = make(tmp_path)
    (root / JOURNAL).write_text(DAY, encoding="utf-8")
    w, _ = watcher(root)
    (root / JOURNAL).write_text(DAY.replace(old, new), encoding="utf-8")
    assert w.step() == []
    assert _journal(root) == DAY.replace(old, new)  # left as the person made it


def test_a_line_whose_content_is_gone_is_put_back_where_it_stood(tmp_path):
    root = make(tmp_path)
    (root / JOURNAL).write_text(DAY, encoding="utf-8")
    w, _ = watcher(root)
    # an entry deleted, a line cut short by a partial write, an entry appended
    cut = DAY.replace("### 09:00 — Standup\n- talked to Ada about the invoice\n"
                      "- paid 120 EUR for hosting\n\n", "").replace("- watched the graphs\n",
                                                                     "- watched")
    (root / JOURNAL).write_text(cut + "\n\n### 12:00 — Lunch\n- pasta\n", encoding="utf-8")
    events = w.step()
    assert [(e.kind, e.lines) for e in events] == [("journal-restored", 4)]
    assert _journal(root) == DAY + "- watched\n\n### 12:00 — Lunch\n- pasta\n"
    assert w.step() == []
    # recover after watch's restore writes nothing: every line is there once
    before = _journal(root)
    rc, out, _ = invoke(["recover", "--all"], root)
    assert rc == 0 and _journal(root) == before


def test_two_watchers_write_each_line_once(tmp_path):
    root = make(tmp_path)
    (root / JOURNAL).write_text(DAY, encoding="utf-8")
    first, _ = watcher(root)
    second, _ = watcher(root)
    (root / JOURNAL).write_text("# Day\n\nSummary: calm.\n", encoding="utf-8")
    first.step()
    second.step()
    text = _journal(root)
    assert text == DAY + "\nSummary: calm.\n"
    for line in DAY.splitlines():
        if line.strip():
            assert text.count(line + "\n") == 1, line


def test_a_writer_that_keeps_removing_the_lines_gets_one_report(tmp_path):
    root = make(tmp_path)
    (root / JOURNAL).write_text(DAY, encoding="utf-8")
    w, lines = watcher(root)
    kinds = []
    for _ in range(4):  # a summariser rewriting the day every few seconds
        (root / JOURNAL).write_text("# Day\n\nSummary: calm.\n", encoding="utf-8")
        kinds += [e.kind for e in w.step()]
    assert kinds == ["journal-restored", "journal-restore-undone"]
    assert _journal(root) == "# Day\n\nSummary: calm.\n"  # backed off: no growth, no nesting
    assert sum("another writer removed" in line for line in lines) == 1


def test_a_checkout_or_stash_is_a_new_baseline_not_a_loss(tmp_path):
    root = _committed_day(tmp_path)
    _git(root, "checkout", "-qb", "other")
    (root / JOURNAL).write_text("# Day\n\nOn the other branch.\n", encoding="utf-8")
    _git(root, "commit", "-qam", "other")
    _git(root, "checkout", "-q", "-")
    w, _ = watcher(root)
    _git(root, "checkout", "-q", "other")  # the branch's journal: git keeps both versions
    assert w.step() == []
    assert _journal(root) == "# Day\n\nOn the other branch.\n"  # not polluted
    _git(root, "checkout", "-q", "-")
    assert w.step() == [] and _journal(root) == DAY
    with open(root / JOURNAL, "a", encoding="utf-8") as fh:
        fh.write("\n### 13:00 — Uncommitted\n- a checkpoint\n")
    assert w.step() == []
    _git(root, "stash", "-q")  # the lines are in the stash, not lost
    assert w.step() == [] and _journal(root) == DAY
    _git(root, "stash", "pop", "-q")
    assert w.step() == [] and _journal(root).endswith("- a checkpoint\n")


def test_no_round_runs_while_git_is_mid_operation(tmp_path):
    root = _committed_day(tmp_path)
    w, _ = watcher(root)
    (root / ".git" / "index.lock").write_text("")
    (root / JOURNAL).write_text("# Day\n", encoding="utf-8")  # git writing the work tree
    assert w.step() == []
    (root / ".git" / "index.lock").unlink()
    _git(root, "checkout", "--", JOURNAL)
    assert w.step() == [] and _journal(root) == DAY


def test_lines_git_discards_uncommitted_are_put_back(tmp_path):
    # `git checkout -- journal` over uncommitted lines: a real loss, only a snapshot held them
    root = _committed_day(tmp_path)
    w, _ = watcher(root)
    _append_checkpoint(root)
    assert w.step() == []
    _git(root, "checkout", "--", JOURNAL)
    assert [e.kind for e in w.step()] == ["journal-restored"]
    assert _journal(root) == DAY + "\n### 13:00 — Checkpoint\n- uncommitted work\n"


def test_a_committed_journal_overwritten_comes_back_whole_and_commits(tmp_path):
    # committed earlier (Obsidian Git, init --git), checkpoints appended since, then a
    # summary run overwrites the file: every line comes back in place, the commit passes
    root = _committed_day(tmp_path)
    w, _ = watcher(root)
    _append_checkpoint(root)
    assert w.step() == []
    (root / JOURNAL).write_text("# Day\n\nSummary: calm.\n", encoding="utf-8")
    assert [e.kind for e in w.step()] == ["journal-restored"]
    assert _journal(root) == (DAY + "\n### 13:00 — Checkpoint\n- uncommitted work\n"
                              "\nSummary: calm.\n")
    _git(root, "add", JOURNAL)
    rc, out, err = invoke(["check", "--hook", JOURNAL], root)
    assert rc == 0, out + err
    assert "VK601" not in out
    rc, out, _ = invoke(["history", "--format", "json"], root)
    assert all(e["recovered"] for e in json.loads(out)["events"])


def test_a_journal_overwritten_in_the_round_of_a_commit_comes_back(tmp_path):
    """A commit moves git's tips, which makes the round's changes git's new baseline; but no
    git command leaves a journal without the lines of the commit it now holds: a summary
    written a second after the commit, before the next round, is a loss put back."""
    root = _committed_day(tmp_path)
    w, _ = watcher(root)
    _append_checkpoint(root)
    assert w.step() == []
    with open(root / JOURNAL, "a", encoding="utf-8") as fh:  # written and committed at once
        fh.write("\n### 14:00 — Late\n- no snapshot saw this\n")
    _git(root, "commit", "-qam", "checkpoint")
    (root / JOURNAL).write_text("# Day\n\nSummary: calm.\n", encoding="utf-8")
    assert [e.kind for e in w.step()] == ["journal-restored"]
    assert _journal(root) == (DAY + "\n### 13:00 — Checkpoint\n- uncommitted work\n"
                              "\n### 14:00 — Late\n- no snapshot saw this\n"
                              "\nSummary: calm.\n")
    # a commit alone in a round, and a branch switch, stay the new baseline
    _git(root, "commit", "-qam", "summary")
    assert w.step() == []


def test_memory_md_lines_a_running_pre_commit_took_out_are_not_restored(tmp_path,
                                                                        monkeypatch):
    # a partly staged MEMORY.md under a pre-commit run lacks its unstaged lines until the
    # hooks are done: putting them back would fail the hook, as for a journal
    from vaultkit.vault import gitstate

    root = make(tmp_path)
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "memory")
    w, _ = watcher(root)
    full = (root / "MEMORY.md").read_text(encoding="utf-8")
    (root / "MEMORY.md").write_text("# MEMORY\n\n- rule 0\n", encoding="utf-8")
    taken = "".join(f"- rule {i}\n" for i in range(1, 6))
    monkeypatch.setattr(gitstate.GitState, "unstaged_by_running_pre_commit",
                        lambda self, path: [taken] if path == "MEMORY.md" else [])
    assert [e.kind for e in w.step()] == []
    assert (root / "MEMORY.md").read_text(encoding="utf-8") == "# MEMORY\n\n- rule 0\n"
    monkeypatch.setattr(gitstate.GitState, "unstaged_by_running_pre_commit",
                        lambda self, path: [])
    (root / "MEMORY.md").write_text(full, encoding="utf-8")  # pre-commit put them back
    assert w.step() == []


def test_lines_accepted_as_removed_are_not_restored_others_are(tmp_path):
    """A removal a commit accepted (VAULTKIT_ACCEPT_DELETION, recorded) is not undone by
    watch; a line lost beside it that was not accepted is put back."""
    from vaultkit.vault.loss import AcceptedRemovals

    root = make(tmp_path)
    (root / JOURNAL).parent.mkdir(parents=True, exist_ok=True)
    head = f"# {TODAY}\n\n"
    gone = "### 10:00 — Draft\n- a draft cut on purpose\n"
    (root / JOURNAL).write_text(head + gone, encoding="utf-8")
    AcceptedRemovals(root).record({JOURNAL: gone.splitlines()})
    w, lines = watcher(root)
    (root / JOURNAL).write_text(head, encoding="utf-8")
    assert w.step() == [] and (root / JOURNAL).read_text(encoding="utf-8") == head, lines
    (root / JOURNAL).write_text(head + "- kept for now\n", encoding="utf-8")
    w.step()
    (root / JOURNAL).write_text(head, encoding="utf-8")
    assert [e.kind for e in w.step()] == ["journal-restored"]
    text = (root / JOURNAL).read_text(encoding="utf-8")
    assert "- kept for now" in text and "draft" not in text, text
