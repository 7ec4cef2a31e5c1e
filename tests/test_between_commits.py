"""The headline loss, end to end with the real pre-commit hooks: six hourly checkpoints
appended to today's journal (never committed), the journal overwritten by a summary run,
then the nightly `git add -A && git commit`. Without `watch` the commit is refused and
`vaultkit recover` brings the six back; with `watch` running they are back within seconds
and the commit passes with every line in it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from test_precommit import (BACKUP, TODAY, YESTERDAY, YESTERDAY_JOURNAL, _pin,  # noqa: F401
                            _readme_configs, _run, hook_repo, make_repo, pre_commit_home)

pytestmark = pytest.mark.integration

JOURNAL = f"memory/{TODAY.isoformat()}.md"
SUMMARY = f"# {TODAY.isoformat()}\n\n## Summary\n- A quiet day; the deploy went out.\n"


def _vault(make_repo):
    """A whole-workspace vault with the README's hooks, committed without today's journal."""
    vault = make_repo(config=_pin(_readme_configs()["whole workspace"]), first_commit=False)
    (vault.path / JOURNAL).unlink(missing_ok=True)  # today's journal: never committed
    vault.write(f"memory/{YESTERDAY}.md", YESTERDAY_JOURNAL)
    vault.index()
    vault.git("add", "-A")
    vault.git("commit", "-q", "--no-verify", "-m", "backup: yesterday")
    return vault


def _checkpoint(vault, n: int) -> str:
    text = (f"\n### {9 + n:02d}:00 — Checkpoint {n}\n- Reviewed queue item {n} and closed it\n"
            f"- Wrote the follow-up for item {n}\n- Next: item {n + 1}\n")
    with open(vault.path / JOURNAL, "a", encoding="utf-8") as fh:
        fh.write(text)
    return text


def _vaultkit(vault, *args, check=True):
    return _run([sys.executable, "-m", "vaultkit", *args], vault.path, vault.env, check=check)


def test_nightly_commit_of_an_overwritten_journal_is_refused_and_recovered(make_repo):
    vault = _vault(make_repo)
    texts = []
    for n in range(1, 7):  # the hourly checkpoint job, and a cron `vaultkit snapshot`
        texts.append(_checkpoint(vault, n))
        _vaultkit(vault, "snapshot", "--quiet")
    vault.write(JOURNAL, SUMMARY)  # the summary run's Write
    before = vault.head()
    proc = _run(["sh", "-c", BACKUP], vault.path, vault.env, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and vault.head() == before, out
    assert f"{JOURNAL}:1:1: VK601 journal-append-only error: 24 lines lost since the snapshot at " \
           in out, out
    assert "`vaultkit recover --all`" in out
    # the snapshots are the only copy; nothing of the user's repository moved
    assert vault.git("stash", "list").stdout == ""
    assert vault.git("branch", "--format=%(refname)").stdout.split() in (
        ["refs/heads/master"], ["refs/heads/main"])

    assert "journal-rewrite" in _vaultkit(vault, "history").stdout
    out = _vaultkit(vault, "recover", "--all").stdout
    assert "put back 24 lines where they stood in " + JOURNAL in out, out
    journal = vault.read(JOURNAL)
    assert "".join(texts).lstrip("\n") in journal  # all six, byte for byte, in order
    # in place: the checkpoints, then the summary written over them, as an append leaves it
    assert journal.endswith(SUMMARY.split("\n\n", 1)[1]), journal
    assert journal.index("Checkpoint 6") < journal.index(SUMMARY.split("\n\n", 1)[1])
    assert "nothing to recover" in _vaultkit(vault, "recover", "--all").stdout
    assert vault.read(JOURNAL) == journal  # once

    proc = _run(["sh", "-c", BACKUP], vault.path, vault.env, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    committed = vault.git("show", f"HEAD:{JOURNAL}").stdout
    assert all(t.strip() in committed for t in texts)


def test_without_snapshots_the_nightly_commit_still_passes_as_before(make_repo):
    vault = _vault(make_repo)
    for n in range(1, 3):
        _checkpoint(vault, n)
    vault.write(JOURNAL, SUMMARY)
    proc = _run(["sh", "-c", BACKUP], vault.path, vault.env, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr  # nothing to compare with


def _wait(predicate, seconds=30.0):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


@pytest.mark.parametrize("poll", [None, "0.5"], ids=["file-events", "polling"])
def test_with_watch_running_the_checkpoints_come_back_and_the_commit_passes(make_repo, poll):
    vault = _vault(make_repo)
    args = [sys.executable, "-m", "vaultkit", "watch"] + (["--poll", poll] if poll else [])
    watcher = subprocess.Popen(args, cwd=vault.path, env=vault.env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    try:
        ref = "refs/vaultkit/snapshots"

        def snapshots():
            proc = vault.git("rev-list", "--count", ref, check=False)
            return int(proc.stdout.strip() or 0) if proc.returncode == 0 else 0

        assert _wait(lambda: snapshots() >= 1)
        texts = []
        for n in range(1, 7):
            count = snapshots()
            texts.append(_checkpoint(vault, n))
            assert _wait(lambda: snapshots() > count)  # each checkpoint recorded
        vault.write(JOURNAL, SUMMARY)
        assert _wait(lambda: all(t.strip() in vault.read(JOURNAL) for t in texts))
        journal = vault.read(JOURNAL)
        # undone in place: the checkpoints where they stood, then the summary written since
        assert journal == "".join(texts).lstrip("\n") + "\n" + SUMMARY
        assert "Restored by vaultkit watch" not in journal
        proc = _run(["sh", "-c", BACKUP], vault.path, vault.env, check=False)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        committed = vault.git("show", f"HEAD:{JOURNAL}").stdout
        assert all(t.strip() in committed for t in texts)
        history = _vaultkit(vault, "history").stdout
        assert "journal-rewrite" in history and "0 not recovered" in history
    finally:
        os.kill(watcher.pid, signal.SIGTERM)
        out, _ = watcher.communicate(timeout=30)
    assert watcher.returncode == 0, out
    assert "lost lines put back where they stood" in out, out


def test_topic_note_and_memory_md_cut_within_a_day_are_refused_listed_and_recovered(make_repo):
    vault = _vault(make_repo)
    topic = "memory/semantic/payments.md"
    findings = [f"- Finding {i}: card retries are capped at three per hour\n" for i in range(8)]
    vault.write(topic, "# Payments\n\n" + "".join(findings))
    memory = vault.read("MEMORY.md")
    rules = [f"- Durable rule {i}: deploys go through staging first\n" for i in range(12)]
    vault.write("MEMORY.md", memory + "".join(rules))
    _vaultkit(vault, "snapshot", "--quiet")  # the morning's cron snapshot
    vault.write(topic, "# Payments\n\n" + findings[0])  # the evening's Write
    vault.write("MEMORY.md", memory)
    proc = _run(["sh", "-c", BACKUP], vault.path, vault.env, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert f"{topic}:1:1: VK602 mass-deletion error: lost 7 of its 9 non-blank lines since the " \
           "snapshot at" in out, out
    # MEMORY.md is back to its committed text, so the commit does not stage it: it seals
    # nothing there (the model of loss), and says so without refusing for it
    assert ("MEMORY.md:1:1: VK602 mass-deletion warning: dropped 12 of its 24 durable lines "
            "since the snapshot") in out, out
    assert "this commit does not stage it, so it passes" in out, out
    history = _vaultkit(vault, "history").stdout
    assert "mass-deletion  " + topic in history and "memory-shrink  MEMORY.md" in history
    _vaultkit(vault, "recover", "--all")
    assert vault.read(topic) == "# Payments\n\n" + "".join(findings)  # back where they stood
    kept = vault.read("memory/semantic/recovered.md")  # MEMORY.md's cut: the recovery note
    assert all(r.strip() in kept for r in rules)
    proc = _run(["sh", "-c", BACKUP], vault.path, vault.env, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _vault_with_todays_journal(make_repo):
    """Like :func:`_vault`, but today's journal (init's one entry) is committed: the
    overwrite then also loses the journal's committed start."""
    vault = make_repo(config=_pin(_readme_configs()["whole workspace"]), first_commit=False)
    vault.write(f"memory/{YESTERDAY}.md", YESTERDAY_JOURNAL)
    vault.index()
    vault.git("add", "-A")
    vault.git("commit", "-q", "--no-verify", "-m", "backup: yesterday and this morning")
    return vault


def _overwritten_after_checkpoints(vault):
    texts = []
    for n in range(1, 7):
        texts.append(_checkpoint(vault, n))
        _vaultkit(vault, "snapshot", "--quiet")
    vault.write(JOURNAL, SUMMARY)
    return texts


def test_an_overwritten_committed_journal_gets_its_committed_start_back_and_commits(make_repo):
    vault = _vault_with_todays_journal(make_repo)
    committed = vault.git("show", f"HEAD:{JOURNAL}").stdout
    assert committed.count("\n### ") == 1  # init's entry
    texts = _overwritten_after_checkpoints(vault)
    proc = _run(["sh", "-c", BACKUP], vault.path, vault.env, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert "differs from the committed journal" in out and "lost since the snapshot" in out

    _vaultkit(vault, "snapshot", "--quiet")  # the cron snapshot records the overwrite
    shown = _vaultkit(vault, "recover", "--all", "--dry-run").stdout
    assert f"would put the committed lines (HEAD) back at the start of {JOURNAL}, then 24 " \
           "lines brought back, then what was written since" in shown, shown
    assert vault.read(JOURNAL) == SUMMARY  # the dry run wrote nothing

    out = _vaultkit(vault, "recover", "--all").stdout
    assert f"put the committed lines (HEAD) back at the start of {JOURNAL}" in out, out
    journal = vault.read(JOURNAL)
    assert journal.startswith(committed)  # byte for byte, first
    restored = journal[len(committed):]
    assert "".join(texts).lstrip("\n") in restored  # all six, in order, after it
    # init's entry is not repeated in the restored block; the summary comes last, whole
    assert restored.count("Memory vault created") == 0
    assert journal.endswith("\n" + SUMMARY.split("\n\n", 1)[1])
    assert restored.index("Checkpoint 6") < restored.index("## Summary")
    assert "vaultkit-recovered" not in journal and "Restored lines" not in journal
    assert "nothing to recover" in _vaultkit(vault, "recover", "--all").stdout
    assert vault.read(JOURNAL) == journal  # once

    proc = _run(["sh", "-c", BACKUP], vault.path, vault.env, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert vault.git("show", f"HEAD:{JOURNAL}").stdout == journal


def test_a_journal_left_without_its_committed_start_by_an_earlier_recover_is_unstuck(
        make_repo):
    """The state an older `recover` left: every line back, after the summary. Nothing is
    lost (the committed lines moved), so the hook passes it; `recover --all` puts the
    committed start back, as an append would have left the journal, each line once."""
    vault = make_repo(config=_pin(_readme_configs()["whole workspace"]), first_commit=False)
    vault.write(f"memory/{YESTERDAY}.md", YESTERDAY_JOURNAL)
    vault.index()
    vault.git("add", "-A")
    vault.git("commit", "-q", "--no-verify", "-m", "backup: yesterday and this morning")
    committed = vault.git("show", f"HEAD:{JOURNAL}").stdout
    texts = _overwritten_after_checkpoints(vault)
    _vaultkit(vault, "snapshot", "--quiet")  # (the earlier recover recorded the overwrite)
    stuck = SUMMARY + "\n### 23:05 — Restored by hand\n\n" + committed + "".join(texts)
    vault.write(JOURNAL, stuck)
    vault.git("add", "-A")
    proc = _run([sys.executable, "-m", "vaultkit", "check", "--staged", "--select",
                 "journal-append-only"], vault.path, vault.env, check=False)
    assert proc.returncode == 0 and "VK601" not in proc.stdout, proc.stdout + proc.stderr

    shown = _vaultkit(vault, "recover", "--all", "--dry-run").stdout
    assert "would put the committed lines (HEAD) back at the start of" in shown, shown
    assert vault.read(JOURNAL) == stuck
    _vaultkit(vault, "recover", "--all")
    journal = vault.read(JOURNAL)
    title = SUMMARY.split("\n", 1)[0] + "\n\n"  # the line it shares with HEAD's start
    # HEAD's text first, then the rest of what the file held without a second copy of the
    # committed lines: each line once
    assert journal.startswith(committed)
    kept = stuck[len(title):].replace(committed, "", 1)  # every other line, in its order
    assert [x for x in journal[len(committed):].splitlines() if x.strip()] == \
        [x for x in kept.splitlines() if x.strip()]
    for line in committed.splitlines():
        if line.strip():
            assert journal.count(line + "\n") == 1, line
    assert "nothing to recover" in _vaultkit(vault, "recover", "--all").stdout
    assert vault.read(JOURNAL) == journal
    proc = _run(["sh", "-c", BACKUP], vault.path, vault.env, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_a_journal_deleted_before_its_first_commit_is_refused_and_recovered(make_repo):
    """Today's journal exists only in the snapshots (never committed); deleting it and
    running the nightly backup is refused, naming the journal, the snapshot and `vaultkit
    recover`; recover brings it back byte for byte and the commit then passes."""
    vault = _vault(make_repo)
    for n in range(1, 4):
        _checkpoint(vault, n)
        _vaultkit(vault, "snapshot", "--quiet")
    journal = vault.read(JOURNAL)
    (vault.path / JOURNAL).unlink()  # a clean-up run removed it
    before = vault.head()
    env = dict(vault.env, VAULTKIT_ACCEPT_DELETION="memory/some-other-note.md")
    proc = _run(["sh", "-c", BACKUP], vault.path, env, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and vault.head() == before, out
    assert f"{JOURNAL}:1:1: VK601 journal-append-only error: journal deleted since the snapshot " \
           "at " in out, out
    assert "which holds its 12 lines (first: '### 10:00 — Checkpoint 1')" in out, out
    assert "`vaultkit recover --all`" in out
    assert f"VAULTKIT_ACCEPT_DELETION={JOURNAL} git commit" in out

    assert "note-deleted  " + JOURNAL in _vaultkit(vault, "history").stdout
    _vaultkit(vault, "recover", "--all")
    assert vault.read(JOURNAL) == journal  # byte for byte
    assert "nothing to recover" in _vaultkit(vault, "recover", "--all").stdout
    proc = _run(["sh", "-c", BACKUP], vault.path, vault.env, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert vault.git("show", f"HEAD:{JOURNAL}").stdout == journal


def test_an_intended_journal_deletion_is_accepted_for_one_commit(make_repo):
    vault = _vault(make_repo)
    _checkpoint(vault, 1)
    _vaultkit(vault, "snapshot", "--quiet")
    (vault.path / JOURNAL).unlink()
    vault.write("memory/semantic/deploys.md", "# Deploys\n\n- Staging first, always\n")
    before = vault.head()
    proc = _run(["sh", "-c", BACKUP], vault.path, vault.env, check=False)
    assert proc.returncode != 0 and vault.head() == before, proc.stdout + proc.stderr
    env = dict(vault.env, VAULTKIT_ACCEPT_DELETION=JOURNAL)
    proc = _run(["sh", "-c", BACKUP], vault.path, env, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert vault.head() != before
    assert vault.git("ls-tree", "HEAD", JOURNAL).stdout == ""
    assert not (vault.path / JOURNAL).exists()


def test_a_journal_archived_or_not_staged_is_not_a_deletion(make_repo):
    """Moved into the archive with its lines, or on disk but left out of a partial
    commit: neither seals a loss, so neither is refused."""
    vault = _vault(make_repo)
    texts = [_checkpoint(vault, n) for n in (1, 2)]
    _vaultkit(vault, "snapshot", "--quiet")
    vault.write("memory/semantic/deploys.md", "# Deploys\n\n- Staging first, always\n")
    vault.git("add", "memory/semantic/deploys.md")
    proc = _run(["git", "commit", "-q", "-m", "a note"], vault.path, vault.env, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr  # the journal: on disk, not staged
    _vaultkit(vault, "snapshot", "--quiet")
    archived = f"memory/archive/{TODAY.isoformat()}.md"
    (vault.path / "memory/archive").mkdir(exist_ok=True)
    os.replace(vault.path / JOURNAL, vault.path / archived)
    proc = _run(["sh", "-c", BACKUP], vault.path, vault.env, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    committed = vault.git("show", f"HEAD:{archived}").stdout
    assert all(t.strip() in committed for t in texts)
