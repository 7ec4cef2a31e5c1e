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
    assert "appended 24 lines to " + JOURNAL in out, out
    journal = vault.read(JOURNAL)
    assert journal.startswith(SUMMARY)
    assert "".join(texts).lstrip("\n") in journal  # all six, byte for byte, in order
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
        assert journal.startswith(SUMMARY) and "Restored by vaultkit watch" in journal
        assert "".join(texts).lstrip("\n") in journal
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
    assert "lost lines restored at the end" in out, out


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
    assert "MEMORY.md:1:1: VK602 mass-deletion error: lost 12 of its" in out, out
    history = _vaultkit(vault, "history").stdout
    assert "mass-deletion  " + topic in history and "memory-shrink  MEMORY.md" in history
    _vaultkit(vault, "recover", "--all")
    kept = vault.read("memory/semantic/recovered.md")
    assert all(f.strip() in kept for f in findings[1:]) and all(r.strip() in kept for r in rules)
    proc = _run(["sh", "-c", BACKUP], vault.path, vault.env, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
