"""Snapshots between commits (vaultkit.vault.snapshots, `vaultkit snapshot`): what they record,
what they never touch, and how the check, history and recover use them."""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cli_invoke import invoke
from vaultkit.vault.profile import load_settings
from vaultkit.vault.snapshots import REF, journal_losses, open_store

TODAY = dt.date.today().isoformat()
JOURNAL = f"memory/{TODAY}.md"
ENV = {"GIT_AUTHOR_NAME": "Agent", "GIT_AUTHOR_EMAIL": "agent@example.com",
       "GIT_COMMITTER_NAME": "Agent", "GIT_COMMITTER_EMAIL": "agent@example.com",
       "GIT_CONFIG_NOSYSTEM": "1"}


def git(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(ENV)
    proc = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, env=env)
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def make(tmp_path: Path, *, repo: bool = True, commit: bool = True) -> Path:
    root = tmp_path / "vault"
    (root / ".obsidian").mkdir(parents=True)
    (root / "MEMORY.md").write_text("# MEMORY\n\n- Deploys go through staging first\n",
                                    encoding="utf-8")
    (root / "memory" / "semantic").mkdir(parents=True)
    (root / "memory" / "semantic" / "deploys.md").write_text(
        "# Deploys\n\n" + "".join(f"- fact {i}\n" for i in range(8)), encoding="utf-8")
    (root / "notes.txt").write_text("not memory\n", encoding="utf-8")
    if repo:
        git(root, "init", "-q")
        if commit:
            git(root, "add", "-A")
            git(root, "commit", "-q", "-m", "first")
    return root


def store_of(root: Path, create: bool = True):
    return open_store(root, load_settings(root), create=create)


def checkpoint(root: Path, n: int) -> str:
    text = f"\n### {9 + n:02d}:00 — Checkpoint {n}\n- step {n} done\n- next: step {n + 1}\n"
    with open(root / JOURNAL, "a", encoding="utf-8") as fh:
        fh.write(text)
    return text


def state(root: Path) -> dict:
    """Everything of the user's repository a snapshot must leave alone."""
    return {
        "head": git(root, "rev-parse", "-q", "--verify", "HEAD", check=False).stdout,
        "symbolic": git(root, "symbolic-ref", "-q", "HEAD", check=False).stdout,
        "index": (root / ".git" / "index").read_bytes() if (root / ".git" / "index").exists()
        else None,
        "status": git(root, "status", "--porcelain=v2", "--untracked-files=all").stdout,
        "refs": git(root, "for-each-ref", "--format=%(refname) %(objectname)",
                    "refs/heads", "refs/tags", "refs/stash", "refs/remotes").stdout,
        "files": {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*")
                  if p.is_file() and not {".git", ".vaultkit"} & set(p.relative_to(root).parts)},
    }


# -- what a snapshot records --------------------------------------------------------------

def test_first_snapshot_records_memory_files_only(tmp_path):
    root = make(tmp_path)
    (root / "memory" / "big.md").write_bytes(b"x" * 400)
    (root / "vaultkit.toml").write_text("[budgets]\nmax-file-bytes = 300\n", encoding="utf-8")
    os.symlink("MEMORY.md", root / "memory" / "link.md")
    result = store_of(root).snapshot()
    assert result.commit is not None
    tree = git(root, "ls-tree", "-r", "--name-only", REF).stdout.split()
    assert "MEMORY.md" in tree and "memory/semantic/deploys.md" in tree
    assert "notes.txt" not in tree and "memory/big.md" not in tree
    assert "memory/link.md" not in tree  # a symlink is never followed into a snapshot
    assert not any(p.startswith((".obsidian", ".vaultkit", ".git/")) for p in tree)


def test_nothing_changed_writes_nothing(tmp_path):
    root = make(tmp_path)
    store = store_of(root)
    first = store.snapshot().commit
    again = store.snapshot()
    assert again.commit is None and again.changed == []
    assert git(root, "rev-parse", REF).stdout.strip() == first
    os.utime(root / "MEMORY.md")  # touched, same bytes: still nothing to record
    assert store.snapshot().commit is None


def test_changed_and_removed_files_make_one_commit(tmp_path):
    root = make(tmp_path)
    store = store_of(root)
    first = store.snapshot().commit
    (root / "MEMORY.md").write_text("# MEMORY\n\n- changed\n", encoding="utf-8")
    (root / "memory" / "semantic" / "deploys.md").unlink()
    result = store.snapshot()
    assert result.changed == ["MEMORY.md"]
    assert result.removed == ["memory/semantic/deploys.md"]
    assert git(root, "rev-parse", REF + "^").stdout.strip() == first
    assert git(root, "show", f"{REF}:MEMORY.md").stdout == "# MEMORY\n\n- changed\n"


def test_file_bytes_are_kept_exactly_without_filters(tmp_path):
    root = make(tmp_path)
    (root / ".gitattributes").write_text("*.md text eol=crlf\n", encoding="utf-8")
    data = "# MEMORY\r\n\r\n- kept as written\n\x1b[0m tail".encode()
    (root / "MEMORY.md").write_bytes(data)
    store_of(root).snapshot()
    blob = subprocess.run(["git", "cat-file", "blob", f"{REF}:MEMORY.md"], cwd=root,
                          capture_output=True).stdout
    assert blob == data


def test_lost_stat_table_is_rebuilt_from_the_ref(tmp_path):
    root = make(tmp_path)
    store = store_of(root)
    store.snapshot()
    store.table_path.unlink()
    assert store.snapshot().commit is None  # same bytes as the ref holds: nothing new
    (root / "MEMORY.md").write_text("# MEMORY\n\n- new\n", encoding="utf-8")
    store.table_path.write_text("{not json", encoding="utf-8")
    assert store.snapshot().changed == ["MEMORY.md"]


# -- what a snapshot never touches --------------------------------------------------------

def test_dirty_index_and_work_tree_stay_as_they_are(tmp_path):
    root = make(tmp_path)
    (root / "MEMORY.md").write_text("# MEMORY\n\n- staged\n", encoding="utf-8")
    git(root, "add", "MEMORY.md")
    (root / "MEMORY.md").write_text("# MEMORY\n\n- staged\n- unstaged\n", encoding="utf-8")
    (root / "memory" / "new.md").write_text("untracked\n", encoding="utf-8")
    git(root, "stash", "list")
    before = state(root)
    assert store_of(root).snapshot().commit is not None
    assert state(root) == before
    # the snapshot holds the work tree's bytes, not the index's
    assert git(root, "show", f"{REF}:MEMORY.md").stdout.endswith("- unstaged\n")


def test_empty_repository_before_the_first_commit(tmp_path):
    root = make(tmp_path, commit=False)
    before = state(root)
    assert store_of(root).snapshot().commit is not None
    assert state(root) == before
    assert git(root, "rev-parse", "-q", "--verify", "HEAD", check=False).returncode != 0


def test_detached_head_and_rebase_in_progress(tmp_path):
    root = make(tmp_path)
    git(root, "checkout", "-q", "-b", "side")
    (root / "MEMORY.md").write_text("# MEMORY\n\n- side\n", encoding="utf-8")
    git(root, "commit", "-q", "-am", "side")
    git(root, "checkout", "-q", "-")
    (root / "MEMORY.md").write_text("# MEMORY\n\n- main\n", encoding="utf-8")
    git(root, "commit", "-q", "-am", "main")
    git(root, "checkout", "-q", "side")
    assert git(root, "rebase", "-q", "master" if git(root, "rev-parse", "-q", "--verify",
                                                     "master", check=False).returncode == 0
               else "main", check=False).returncode != 0  # a conflict: rebase in progress
    assert (root / ".git" / "rebase-merge").is_dir() or (root / ".git" / "rebase-apply").is_dir()
    before = state(root)
    assert store_of(root).snapshot().commit is not None
    assert state(root) == before
    git(root, "rebase", "--abort")
    git(root, "checkout", "-q", "--detach", "HEAD")
    (root / "memory" / "semantic" / "deploys.md").write_text("# Deploys\n\n- one\n",
                                                             encoding="utf-8")
    before = state(root)
    assert store_of(root).snapshot().changed
    assert state(root) == before


def test_linked_worktree_has_its_own_chain(tmp_path):
    root = make(tmp_path)
    other = tmp_path / "other"
    git(root, "worktree", "add", "-q", "--detach", str(other))
    before = state(root)
    main_store, wt_store = store_of(root), store_of(other)
    assert main_store.ref == REF and wt_store.ref != REF
    (other / "MEMORY.md").write_text("# MEMORY\n\n- in the worktree\n", encoding="utf-8")
    assert wt_store.snapshot().commit and main_store.snapshot().commit
    assert state(root) == before
    assert "in the worktree" in git(root, "show", f"{wt_store.ref}:MEMORY.md").stdout
    assert "in the worktree" not in git(root, "show", f"{REF}:MEMORY.md").stdout


def test_folder_without_git_keeps_a_bare_store_under_dot_vaultkit(tmp_path):
    root = make(tmp_path, repo=False)
    store = store_of(root)
    assert store.bare and store.cwd == root / ".vaultkit" / "snapshots.git"
    assert store.snapshot().commit is not None
    assert not (root / ".git").exists()
    (root / JOURNAL).write_text(f"# {TODAY}\n\n### 09:00 — a\n- one\n- two\n", encoding="utf-8")
    store.snapshot()
    (root / JOURNAL).write_text(f"# {TODAY}\n\nsummary\n", encoding="utf-8")
    rc, out, _ = invoke(["check", "--select", "journal-append-only"], root)
    assert rc == 1 and "3 lines lost since the snapshot at" in out, out


def test_opening_a_vault_without_snapshots_creates_nothing(tmp_path):
    root = make(tmp_path)
    assert store_of(root, create=False) is None
    assert not (root / ".git" / "vaultkit").exists()
    plain = make(tmp_path / "b", repo=False)
    assert store_of(plain, create=False) is None
    assert not (plain / ".vaultkit" / "snapshots.git").exists()


# -- robustness --------------------------------------------------------------------------

def test_sigkill_at_any_moment_leaves_the_store_readable(tmp_path):
    root = make(tmp_path)
    store_of(root).snapshot()
    script = ("import sys, pathlib\nfrom vaultkit.vault.profile import load_settings\n"
              "from vaultkit.vault.snapshots import open_store\n"
              "root = pathlib.Path(sys.argv[1])\n"
              "s = open_store(root, load_settings(root), create=True)\n"
              "i = 0\n"
              "while True:\n"
              "    i += 1\n"
              "    (root / 'memory' / f'n{i % 50}.md').write_text(f'# {i}\\n' * (i % 7 + 1))\n"
              "    s.snapshot(prune=False)\n")
    for delay in (0.05, 0.2, 0.45, 0.7):
        proc = subprocess.Popen([sys.executable, "-c", script, str(root)])
        time.sleep(delay + 0.5)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        assert git(root, "fsck", "--no-dangling", "--connectivity-only", REF).returncode == 0
        git(root, "log", "--format=%H", REF)  # the chain reads back
        store = store_of(root)
        store.snapshot()  # and the next snapshot goes on from it
        assert store.snapshot().commit is None


def test_concurrent_snapshots_and_log_lose_nothing(tmp_path):
    root = make(tmp_path)
    store_of(root).snapshot()
    snappers = [subprocess.Popen([sys.executable, "-m", "vaultkit", "snapshot", "-q",
                                  str(root)]) for _ in range(3)]
    writers = [subprocess.Popen([sys.executable, "-m", "vaultkit", "log", str(root),
                                 f"entry {i}: a thing that happened, with enough words to "
                                 "stand alone as an entry of its own"])
               for i in range(6)]
    for p in snappers + writers:
        assert p.wait(timeout=120) == 0
    store = store_of(root)
    store.snapshot()
    recorded = git(root, "show", f"{REF}:{JOURNAL}").stdout
    for i in range(6):
        assert f"entry {i}:" in recorded
    assert recorded == (root / JOURNAL).read_text(encoding="utf-8")


# -- the check, history and recover --------------------------------------------------------

def test_check_compares_a_journal_with_the_snapshots_since_the_last_commit(tmp_path):
    root = make(tmp_path)
    store = store_of(root)
    texts = [checkpoint(root, n) for n in range(1, 7)]
    for _ in texts:
        store.snapshot()
    (root / JOURNAL).write_text("# Summary\n- a quiet day\n", encoding="utf-8")
    rc, out, _ = invoke(["check", "--select", "journal-append-only"], root)
    assert rc == 1
    assert f"{JOURNAL}:1:1: VK601 journal-append-only error: 18 lines lost since the snapshot at" in out
    assert "vaultkit recover --all" in out
    # the summary snapshotted too: the older snapshots still hold the lines
    store.snapshot()
    git(root, "add", "-A")
    rc, out, _ = invoke(["check", "--staged", "--select", "journal-append-only"], root)
    assert rc == 1 and "18 lines lost" in out and "staged journal" in out


def test_appends_and_committed_losses_are_not_reported_again(tmp_path):
    root = make(tmp_path)
    store = store_of(root)
    for n in (1, 2):
        checkpoint(root, n)
        store.snapshot()
    rc, out, _ = invoke(["check", "--select", "journal-append-only"], root)
    assert rc == 0, out
    settings = load_settings(root)
    losses = journal_losses(store, lambda p: (root / p).read_text(), since=None,
                            is_journal=lambda p: settings.profile.layer_of(p) == "journal")
    assert losses == []


def test_the_hook_judges_a_journal_once_whatever_its_snapshots(tmp_path, monkeypatch):
    """The journal rule's cost grew with the square of the snapshots of a staged journal
    (each version judged whole against the staged text). An appended journal's versions
    are each the next one's start: the newest is counted once and the others compared as
    bytes, so no version is judged at all."""
    import vaultkit.vault.loss as loss

    root = make(tmp_path)
    store = store_of(root)
    for n in range(1, 41):
        checkpoint(root, n)
        store.snapshot()
    checkpoint(root, 41)  # staged, not snapshotted
    calls = []
    judge = loss.judge
    monkeypatch.setattr(loss, "judge", lambda *a, **k: calls.append(1) or judge(*a, **k))
    settings = load_settings(root)
    losses = journal_losses(store, lambda p: (root / p).read_text(), since=None,
                            is_journal=lambda p: settings.profile.layer_of(p) == "journal")
    assert losses == [] and calls == [], len(calls)


def _blobs_read(monkeypatch) -> list[str]:
    """The blob ids every ``cat-file --batch`` of a store is asked for from now on."""
    from vaultkit.vault.snapshots import Store

    asked: list[str] = []
    real = Store._batch

    def spy(self, oids, *a, **k):
        asked.extend(oids)
        return real(self, oids, *a, **k)

    monkeypatch.setattr(Store, "_batch", spy)
    return asked


def test_a_journal_appended_to_n_times_is_read_once_not_n_times(tmp_path, monkeypatch):
    """The journal rule read every version of a staged journal since its commit: N
    snapshots of a journal appended to are N versions of a growing file, so the bytes read
    grew with the square of N (58 MB for 1,000 snapshots of a 116 KB journal). Each
    snapshot records which versions it appended to (the append index); the newest
    version is read, and the versions it is known to start with are not."""
    import vaultkit.vault.snapshots as snapshots

    root = make(tmp_path)
    store = store_of(root)
    for n in range(1, 31):
        checkpoint(root, n)
        store.snapshot()
    checkpoint(root, 31)  # staged, not snapshotted
    store = store_of(root)  # (a new store: its memo of objects read is empty)
    asked = _blobs_read(monkeypatch)
    settings = load_settings(root)
    losses = journal_losses(store, lambda p: (root / p).read_text(), since=None,
                            is_journal=lambda p: settings.profile.layer_of(p) == "journal")
    assert losses == []
    assert asked == [store.recorded()[JOURNAL]], len(asked)  # the newest version alone
    assert len(snapshots._read_appends(store.appends_path)) == 29  # (the first: no before)


def test_the_append_index_records_appends_only(tmp_path):
    """A version is recorded as appended to its last one only when it starts with that
    version's bytes, whole, to a line's end: not after a rewrite, an edit in the middle,
    or an append to a last line that had no line break."""
    import vaultkit.vault.snapshots as snapshots

    root = make(tmp_path)
    store = store_of(root)
    journal = root / JOURNAL
    journal.write_text("# Day\n- one\n", encoding="utf-8")
    store.snapshot()
    steps = [("appended", "# Day\n- one\n- two\n", True),
             ("rewritten", "# Summary\n- one and two\n", False),
             ("edited", "# Summary\n- one, two\n- three\n", False),
             ("no break", "# Summary\n- one, two\n- three", False),
             ("after no break", "# Summary\n- one, two\n- three and four\n", False),
             ("appended again", "# Summary\n- one, two\n- three and four\n- five\n", True)]
    for what, text, appended in steps:
        before = store.recorded()[JOURNAL]
        journal.write_text(text, encoding="utf-8")
        store.snapshot()
        after = store.recorded()[JOURNAL]
        index = snapshots._read_appends(store.appends_path)
        assert (index.get(after) == before) is appended, what


def test_the_append_index_is_read_whole_lines_only(tmp_path):
    """A line torn by a crash, or anything not two ids, is not read as an append: what
    is not in the index is read from git."""
    import vaultkit.vault.snapshots as snapshots

    path = tmp_path / "snapshots.appends"
    a, b, c = "a" * 40, "b" * 40, "c" * 64
    path.write_bytes(f"{a} {b}\n{b} {c}\nnot an id\n{c} {c}\n{c[:30]}".encode()
                     + f"{a} {b[:12]}\n".encode() + f"{b} {a}".encode())
    assert snapshots._read_appends(path) == {a: b}
    path.write_bytes(b"x" * (snapshots.APPENDS_AT_MOST_BYTES + 1))  # not vaultkit's: unread
    assert snapshots._read_appends(path) == {}


@pytest.mark.parametrize("case", ["appended", "overwritten", "edited", "cut-in-the-middle",
                                  "rewritten-then-appended", "no-final-newline", "crlf"])
def test_the_versions_passed_over_change_no_finding(tmp_path, monkeypatch, case):
    """Passing over the versions the staged text holds whole gives the same losses as
    judging every version: the snapshot, the lines and their order."""
    import vaultkit.vault.snapshots as snapshots

    root = make(tmp_path)
    store = store_of(root)
    journal = root / JOURNAL
    texts = []
    for n in range(1, 7):
        texts.append(checkpoint(root, n))
        if case == "no-final-newline" and n == 3:
            journal.write_bytes(journal.read_bytes().rstrip(b"\n"))
        if case == "crlf":
            journal.write_bytes(journal.read_bytes().replace(b"\r\n", b"\n")
                                .replace(b"\n", b"\r\n"))
        store.snapshot()
        if case == "rewritten-then-appended" and n == 3:
            journal.write_text("# Summary\n- so far\n", encoding="utf-8")
            store.snapshot()
    whole = journal.read_bytes().decode("utf-8")  # (CRLF kept)
    new = {"appended": whole + "- one more\n",
           "overwritten": "# Summary\n- a quiet day\n",
           "edited": whole.replace("- step 2 done", "- step 2 done, twice"),
           "cut-in-the-middle": whole.replace(texts[2].strip("\n"), ""),
           "rewritten-then-appended": whole.replace(texts[4].strip("\n"), ""),
           "no-final-newline": whole + "\n- one more\n",
           "crlf": whole.replace(texts[1].strip("\n").replace("\n", "\r\n"), "")}[case]
    settings = load_settings(root)

    def losses():
        return journal_losses(store, lambda p: new, since=None,
                              is_journal=lambda p: settings.profile.layer_of(p) == "journal")
    found = losses()
    monkeypatch.setattr(store, "appended", lambda: {})  # no append index: every version read
    assert found == losses()
    monkeypatch.setattr(snapshots, "_held_whole", lambda *a: set())  # every version judged
    assert found == losses()
    if case not in ("appended", "edited", "no-final-newline"):
        assert found, case  # (a loss to compare)


def test_recover_brings_back_the_lines_byte_for_byte_once(tmp_path):
    root = make(tmp_path)
    store = store_of(root)
    texts = [checkpoint(root, n) for n in range(1, 7)]
    for _ in texts:
        store.snapshot()
    before = (root / JOURNAL).read_text(encoding="utf-8")
    (root / JOURNAL).write_text("# Summary\n- a quiet day\n", encoding="utf-8")
    rc, out, _ = invoke(["history"], root)
    assert rc == 0 and "journal-rewrite" in out and "between commits" in out, out
    rc, out, _ = invoke(["recover", "--all"], root)
    assert rc == 0 and "put back 18 lines where they stood in " + JOURNAL in out, out
    now = (root / JOURNAL).read_text(encoding="utf-8")
    # in place: the old lines, then the summary written over them, as an append leaves it
    assert now == before.lstrip("\n") + "\n# Summary\n- a quiet day\n", now
    restored = "".join(texts).lstrip("\n")
    assert restored in now  # every checkpoint, byte for byte, in its order
    rc, out, _ = invoke(["recover", "--all"], root)
    assert "nothing to recover" in out and (root / JOURNAL).read_text(encoding="utf-8") == now
    rc, out, _ = invoke(["check", "--select", "journal-append-only"], root)
    assert rc == 0, out


def test_recover_puts_a_deleted_entry_back_between_its_neighbours(tmp_path):
    """An entry cut from the middle of the journal comes back where it stood, between the
    entries around it, not at the end under a heading of vaultkit's."""
    root = make(tmp_path)
    texts = [checkpoint(root, n) for n in range(1, 4)]
    store_of(root).snapshot()
    whole = (root / JOURNAL).read_text(encoding="utf-8")
    (root / JOURNAL).write_text(whole.replace(texts[1], ""), encoding="utf-8")
    later = checkpoint(root, 4)  # written since
    rc, out, _ = invoke(["recover", "--all"], root)
    assert rc == 0 and "put back 3 lines where they stood in " + JOURNAL in out, out
    now = (root / JOURNAL).read_text(encoding="utf-8")
    assert now == whole + later, now
    rc, out, _ = invoke(["recover", "--all"], root)
    assert "nothing to recover" in out and (root / JOURNAL).read_text(encoding="utf-8") == now


def test_a_journal_an_older_recover_marked_is_not_given_its_lines_again(tmp_path):
    """An older vaultkit appended recovered lines under a marked heading. Those lines are
    in the journal: recover writes nothing more (no line twice), and the history reads
    the loss as recovered."""
    root = make(tmp_path)
    texts = [checkpoint(root, n) for n in range(1, 4)]
    store = store_of(root)
    store.snapshot()
    (root / JOURNAL).write_text("# Summary\n- a quiet day\n", encoding="utf-8")
    store.snapshot()
    commit = store.head()
    legacy = ("# Summary\n- a quiet day\n\n### 23:10 — Restored lines lost on 2026-12-06 "
              f"18:00\n<!-- vaultkit-recovered {commit} {JOURNAL} -->\n- 9 lines removed "
              "from this journal before the snapshot, brought back by `vaultkit recover`.\n"
              + "".join(texts))
    (root / JOURNAL).write_text(legacy, encoding="utf-8")
    rc, out, _ = invoke(["recover", "--all"], root)
    assert rc == 0 and "nothing to recover" in out, out
    assert (root / JOURNAL).read_text(encoding="utf-8") == legacy
    rc, out, _ = invoke(["history", "--format", "json"], root)
    assert all(e["recovered"] for e in json.loads(out)["events"]), out


def test_memory_md_and_topic_note_cut_within_a_day_are_listed_and_recovered(tmp_path):
    root = make(tmp_path)
    (root / "MEMORY.md").write_text("# MEMORY\n\n" + "".join(f"- durable {i}\n" for i in range(10)),
                                    encoding="utf-8")
    store = store_of(root)
    store.snapshot()
    (root / "MEMORY.md").write_text("# MEMORY\n\n- durable 0\n", encoding="utf-8")
    (root / "memory" / "semantic" / "deploys.md").write_text("# Deploys\n\n- fact 0\n",
                                                             encoding="utf-8")
    rc, out, _ = invoke(["history", "--format", "json"], root)
    events = json.loads(out)["events"]
    kinds = {(e["kind"], e["path"], e.get("source")) for e in events}
    assert ("memory-shrink", "MEMORY.md", "snapshot") in kinds
    assert ("mass-deletion", "memory/semantic/deploys.md", "snapshot") in kinds
    rc, out, _ = invoke(["recover", "--all"], root)
    assert rc == 0
    note = (root / "memory" / "semantic" / "recovered.md").read_text(encoding="utf-8")
    assert all(f"- durable {i}" in note for i in range(1, 10))  # MEMORY.md: the note
    assert "cut before the snapshot at" in note
    # the topic note's lines go back where they stood, in the note itself
    topic = (root / "memory" / "semantic" / "deploys.md").read_text(encoding="utf-8")
    assert topic == "# Deploys\n\n" + "".join(f"- fact {i}\n" for i in range(8)), topic
    assert "- fact 1" not in note


def test_snapshot_command_output_report_and_retention(tmp_path):
    root = make(tmp_path)
    rc, out, _ = invoke(["snapshot"], root)
    assert rc == 0 and out.startswith("snapshot ") and "refs/vaultkit/snapshots" in out
    rc, out, _ = invoke(["snapshot"], root)
    assert "nothing changed since the last snapshot" in out
    rc, out, _ = invoke(["snapshot", "--report", "--json"], root)
    report = json.loads(out)
    assert report["snapshots"] == 1 and report["bytes"] > 0 and report["keepDays"] == 30


def test_retention_drops_snapshots_older_than_keep_days(tmp_path):
    # 40 days of daily snapshots, kept 30 days: the older ones go, the files as they were stay
    root = make(tmp_path)
    (root / "vaultkit.toml").write_text("[snapshots]\nkeep-days = 30\n", encoding="utf-8")
    store = store_of(root)
    start = dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=40)
    for day in range(40):
        checkpoint(root, day)
        store.snapshot(now=start + dt.timedelta(days=day), prune=False)
    total = len(store.log())
    pruned = store.snapshot(now=start + dt.timedelta(days=40)).pruned
    assert pruned >= 9 and len(store.log()) == total - pruned
    assert store.log()[-1].time < (start + dt.timedelta(days=10)).timestamp() + 86400
    assert git(root, "show", f"{REF}:{JOURNAL}").stdout == (root / JOURNAL).read_text()


def test_bad_snapshot_settings_are_a_clear_error(tmp_path):
    root = make(tmp_path)
    (root / "vaultkit.toml").write_text("[snapshots]\nkeep-days = 0\n", encoding="utf-8")
    rc, _, err = invoke(["snapshot"], root)
    assert rc == 2 and "snapshots: keep-days: must be a whole number, at least 1" in err
    (root / "vaultkit.toml").write_text("[snapshots]\nkeep = 3\n", encoding="utf-8")
    rc, _, err = invoke(["snapshot"], root)
    assert rc == 2 and "unknown setting 'keep'" in err


def test_push_is_explicit_and_sends_the_ref_only(tmp_path):
    root = make(tmp_path)
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    (root / ".git" / "hooks" / "pre-push").write_text("#!/bin/sh\ntouch pushed-hook-ran\n")
    (root / ".git" / "hooks" / "pre-push").chmod(0o755)
    rc, out, _ = invoke(["snapshot"], root)
    assert rc == 0
    assert git(remote, "for-each-ref").stdout == ""  # nothing leaves without --push
    rc, out, err = invoke(["snapshot", "--push", str(remote)], root)
    assert rc == 0, err
    refs = git(remote, "for-each-ref", "--format=%(refname)").stdout.split()
    assert refs == [REF]  # the snapshots only: no branch, no tag
    assert not (root / "pushed-hook-ran").exists()  # the repository's hooks never run
    rc, _, err = invoke(["snapshot", "--push", str(tmp_path / "nowhere.git")], root)
    assert rc == 2 and "push to" in err and "failed" in err
    # git's reason, not the last line of its advice ("and the repository exists.")
    assert err.count("\n") == 1 and "does not appear to be a git repository" in err, err


def test_readme_commands_run_as_written(tmp_path, monkeypatch):
    import re

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    start = readme.index("## Memory between commits")
    section = readme[start:readme.index("\n## ", start + 3)]
    block = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
    commands = [line.split("#", 1)[0].split() for line in block.splitlines() if line.strip()]
    assert [c[:2] for c in commands] == [["vaultkit", "snapshot"], ["vaultkit", "watch"],
                                         ["vaultkit", "watch"]]
    root = make(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for command in commands:
        rc, out, err = invoke(command[1:], root)
        assert rc == 0, (command, err)
    assert "*/15 * * * *" in out and "vaultkit snapshot --quiet" in out
    assert store_of(root, create=False).head() is not None


def test_a_small_memory_md_cut_between_commits_is_listed_as_pruned_unless_moved(tmp_path):
    root = make(tmp_path)
    (root / "MEMORY.md").write_text("# MEMORY\n\n" + "".join(f"- durable {i}\n" for i in range(10)),
                                    encoding="utf-8")
    store = store_of(root)
    store.snapshot()
    # two lines moved into a topic note in one step: no loss
    (root / "MEMORY.md").write_text("# MEMORY\n\n" + "".join(f"- durable {i}\n" for i in range(8)),
                                    encoding="utf-8")
    with open(root / "memory/semantic/deploys.md", "a", encoding="utf-8") as fh:
        fh.write("- durable 8\n- durable 9\n")
    store.snapshot()
    rc, out, _ = invoke(["history", "--format", "json"], root)
    assert json.loads(out)["events"] == []
    # one line cut, not moved: within the pruning allowance (2 of 9), listed as pruned
    (root / "MEMORY.md").write_text("# MEMORY\n\n" + "".join(f"- durable {i}\n" for i in range(7)),
                                    encoding="utf-8")
    rc, out, _ = invoke(["history", "--format", "json"], root)
    events = json.loads(out)["events"]
    assert [(e["kind"], e["path"], e["lines"], e["source"], e["allowance"]) for e in events] == [
        ("memory-pruned", "MEMORY.md", 1, "snapshot", 2)]
    rc, out, _ = invoke(["recover", events[0]["id"]], root)  # named, it comes back all the same
    assert "- durable 7" in (root / "memory/semantic/recovered.md").read_text(encoding="utf-8")
    rc, out, _ = invoke(["history", "--format", "json"], root)
    assert all(e["recovered"] for e in json.loads(out)["events"])


def test_mass_deletion_compares_with_the_snapshots_since_the_last_commit(tmp_path):
    root = make(tmp_path)
    topic = root / "memory" / "semantic" / "today.md"  # written today, never committed
    topic.write_text("# Today\n\n" + "".join(f"- finding {i}\n" for i in range(10)),
                     encoding="utf-8")
    with open(root / "MEMORY.md", "a", encoding="utf-8") as fh:
        fh.write("".join(f"- rule {i}\n" for i in range(10)))
    store = store_of(root)
    store.snapshot()
    rc, out, _ = invoke(["check", "--select", "mass-deletion"], root)
    assert rc == 0, out  # growing is no loss
    topic.write_text("# Today\n\n- finding 0\n", encoding="utf-8")
    (root / "MEMORY.md").write_text("# MEMORY\n\n- Deploys go through staging first\n- rule 0\n",
                                    encoding="utf-8")  # HEAD had 2 lines: no cut against it
    git(root, "add", "-A")
    rc, out, _ = invoke(["check", "--staged", "--select", "mass-deletion"], root)
    assert rc == 1
    assert ("memory/semantic/today.md:1:1: VK602 mass-deletion error: lost 9 of its 11 non-blank "
            "lines since the snapshot at") in out
    assert ("MEMORY.md:1:1: VK602 mass-deletion error: dropped 9 of its 12 durable lines "
            "since the snapshot") in out
    rc, out, _ = invoke(["recover", "--all"], root)
    assert rc == 0
    assert (root / "memory/semantic/today.md").read_text(encoding="utf-8") == \
        "# Today\n\n" + "".join(f"- finding {i}\n" for i in range(10))  # back in place
    note = (root / "memory/semantic/recovered.md").read_text(encoding="utf-8")
    assert all(f"- rule {i}" in note for i in range(1, 10))  # MEMORY.md's: the note
    git(root, "add", "-A")
    rc, out, _ = invoke(["check", "--staged", "--select", "mass-deletion"], root)
    assert rc == 0, out  # the cut lines are back or in the recovery note: the commit may go


# -- recover when the journal lost its committed start too ----------------------------------

COMMITTED = f"# {TODAY}\n\n### 08:00 — Morning\n- Started the day\n- Reviewed the queue\n"
SUMMARY_ONLY = f"# {TODAY}\n\n### 23:00 — Summary\n- A quiet day.\n"


def committed_then_overwritten(tmp_path, summary: str = SUMMARY_ONLY, *, newline="\n"):
    root = make(tmp_path)
    (root / JOURNAL).write_bytes(COMMITTED.replace("\n", newline).encode())
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "morning")
    store = store_of(root)
    texts = []
    for n in range(1, 4):
        text = checkpoint(root, n)
        texts.append(text)
        store.snapshot()
    (root / JOURNAL).write_bytes(summary.replace("\n", newline).encode())
    store.snapshot()  # the overwrite is recorded (cron), so a dry run sees the loss too
    return root, texts


def test_recover_puts_the_committed_start_back_first_then_the_lines_then_the_summary(tmp_path):
    root, texts = committed_then_overwritten(tmp_path)
    rc, out, _ = invoke(["check", "--select", "journal-append-only"], root)
    assert rc == 1 and "line 3 differs from the committed journal" in out, out
    rc, out, _ = invoke(["recover", "--all", "--dry-run"], root)
    assert rc == 0 and "would put the committed lines (HEAD) back at the start of " \
        f"{JOURNAL}, then 9 lines brought back" in out, out
    assert (root / JOURNAL).read_text(encoding="utf-8") == SUMMARY_ONLY  # nothing written
    rc, out, _ = invoke(["recover", "--all", "--format", "json"], root)
    assert rc == 0
    [result] = [r for r in json.loads(out)["recovered"] if r["action"] == "put-back"]
    assert result["lines"] == 9 and result["reason"] == "committed start restored"
    now = (root / JOURNAL).read_text(encoding="utf-8")
    assert now.startswith(COMMITTED)  # the committed bytes first, byte for byte
    rest = now[len(COMMITTED):]
    assert "Started the day" not in rest  # HEAD's lines are not brought back twice
    assert "".join(texts).lstrip("\n") in rest
    assert rest.endswith("\n### 23:00 — Summary\n- A quiet day.\n")  # written since, kept
    assert rest.index("Checkpoint 3") < rest.index("Summary")
    rc, out, _ = invoke(["check", "--select", "journal-append-only"], root)
    assert rc == 0, out
    rc, out, _ = invoke(["recover", "--all"], root)
    assert "nothing to recover" in out and (root / JOURNAL).read_text(encoding="utf-8") == now


def test_the_committed_start_keeps_crlf_and_the_restored_lines_follow_it(tmp_path):
    root, texts = committed_then_overwritten(tmp_path, newline="\r\n")
    invoke(["recover", "--all"], root)
    data = (root / JOURNAL).read_bytes()
    assert data.startswith(COMMITTED.replace("\n", "\r\n").encode())
    assert data.count(b"\r\n") == data.count(b"\n")  # one line ending throughout
    rc, out, _ = invoke(["check", "--select", "journal-append-only"], root)
    assert rc == 0, out


def test_restoring_the_committed_start_keeps_the_credential_placeholder_and_limits(tmp_path):
    root = make(tmp_path)
    (root / JOURNAL).write_text(COMMITTED, encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "morning")
    store = store_of(root)
    key = "sk-ant-api03-" + "A1b2C3d4" * 10
    with open(root / JOURNAL, "a", encoding="utf-8") as fh:
        fh.write(f"\n### 10:00 — Keys\n- set ANTHROPIC_API_KEY={key}\n- rotated it\n")
    store.snapshot()
    (root / JOURNAL).write_text(SUMMARY_ONLY, encoding="utf-8")
    rc, out, err = invoke(["recover", "--all"], root)
    now = (root / JOURNAL).read_text(encoding="utf-8")
    assert key not in now and key not in out + err
    assert now.startswith(COMMITTED) and "- rotated it" in now

    # over budgets.max_file_bytes: a clear refusal, nothing written
    root2, _ = committed_then_overwritten(tmp_path / "small")
    # (every version read, 250 bytes or less; the journal with its lines back, 284)
    (root2 / "vaultkit.toml").write_text("[budgets]\nmax-file-bytes = 270\n", encoding="utf-8")
    rc, out, err = invoke(["recover", "--all"], root2)
    assert rc != 0 and "over the 270-byte limit" in out + err and "Traceback" not in err
    assert (root2 / JOURNAL).read_text(encoding="utf-8") == SUMMARY_ONLY


def test_restoring_the_committed_start_refuses_a_hard_linked_journal(tmp_path):
    root, _ = committed_then_overwritten(tmp_path)
    os.link(root / JOURNAL, tmp_path / "elsewhere.md")
    rc, out, err = invoke(["recover", "--all"], root)
    assert rc != 0 and "nothing written" in out + err, out + err
    assert (tmp_path / "elsewhere.md").read_text(encoding="utf-8") == SUMMARY_ONLY
    assert (root / JOURNAL).read_text(encoding="utf-8") == SUMMARY_ONLY


def test_a_cut_committed_heading_goes_back_under_its_blank_line_and_nothing_twice(tmp_path):
    """A committed entry's heading cut (after the blank line above it) comes back where it
    stood, below that blank line, not above it: the journal is HEAD's text again plus what
    was appended, each line once. (It came back above the blank line; the journal then no
    longer started with HEAD's text, and recover wrote HEAD's text before it: every
    committed line twice. Found by tests/test_guard_property.py.)"""
    root = make(tmp_path)
    (root / JOURNAL).write_text(COMMITTED, encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "morning")
    appended = checkpoint(root, 1)
    store_of(root).snapshot()
    cut = (COMMITTED + appended).replace("### 08:00 — Morning\n", "")
    (root / JOURNAL).write_text(cut, encoding="utf-8")
    rc, out, _ = invoke(["recover", "--all"], root)
    assert rc == 0, out
    assert (root / JOURNAL).read_text(encoding="utf-8") == COMMITTED + appended
    rc, out, _ = invoke(["recover", "--all"], root)
    assert "nothing to recover" in out and \
        (root / JOURNAL).read_text(encoding="utf-8") == COMMITTED + appended


def test_recover_leaves_an_edited_committed_line_as_edited_without_writing_head_twice(
        tmp_path):
    """A committed line corrected (a typo: an edit, which the hook passes) and a line
    lost since a snapshot: recover brings the lost line back in place and leaves the
    correction; it does not write HEAD's text before the journal (the old wording, and
    every other committed line, twice). Found by tests/test_guard_property.py."""
    root = make(tmp_path)
    (root / JOURNAL).write_text(COMMITTED, encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "morning")
    edited = COMMITTED.replace("Reviewed the queue", "Reviewed teh queue")
    appended = checkpoint(root, 1)
    (root / JOURNAL).write_text(edited + appended, encoding="utf-8")
    store_of(root).snapshot()
    (root / JOURNAL).write_text(edited + appended.replace("- step 1 done\n", ""),
                                encoding="utf-8")
    rc, out, _ = invoke(["recover", "--all"], root)
    assert rc == 0 and "committed lines (HEAD)" not in out, out
    assert (root / JOURNAL).read_text(encoding="utf-8") == edited + appended
    rc, out, _ = invoke(["check", "--select", "journal-append-only"], root)
    assert rc == 0, out  # the edit passes the append-only check


def test_recover_does_not_write_head_twice_when_a_line_was_inserted_among_its_lines(
        tmp_path):
    """HEAD's lines all there in their order with a line written between them (a
    committed line rewritten onto two lines, its heading cut: the model of loss counts the
    old pair lost, a rewrite): recover brings them back in place and does not write HEAD's
    text again before the journal. Found by tests/test_guard_property.py."""
    root = make(tmp_path)
    (root / JOURNAL).write_text(COMMITTED, encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "morning")
    store_of(root).snapshot()
    rewritten = COMMITTED.replace("### 08:00 — Morning\n- Started the day\n",
                                  "- Sttarted the day\n")
    (root / JOURNAL).write_text(rewritten, encoding="utf-8")
    rc, out, _ = invoke(["recover", "--all"], root)
    assert rc == 0 and "committed lines (HEAD)" not in out, out
    now = (root / JOURNAL).read_text(encoding="utf-8")
    lines = [line for line in now.splitlines() if line.strip()]
    assert lines == [f"# {TODAY}", "### 08:00 — Morning", "- Started the day",
                     "- Sttarted the day", "- Reviewed the queue"], now


def test_recover_does_not_write_a_committed_line_twice_after_a_partial_commit(tmp_path):
    """Part of the journal committed (`git add -p`: its first lines) while the work tree
    had lost a line of it (the heading, still staged): recover gives the journal HEAD's
    start back and keeps what the file holds past it, without the committed lines it
    already holds there (it wrote them twice). Found by tests/test_guard_property.py."""
    root = make(tmp_path)
    (root / JOURNAL).write_text(COMMITTED, encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "morning")
    first = COMMITTED.split("- Reviewed the queue")[0]  # the lines staged
    oid = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=root, input=first,
                         capture_output=True, text=True, check=True).stdout.strip()
    git(root, "update-index", "--cacheinfo", f"100644,{oid},{JOURNAL}")
    (root / JOURNAL).write_text(COMMITTED.replace("### 08:00 — Morning\n", ""),
                                encoding="utf-8")
    store_of(root).snapshot()
    rc, out, _ = invoke(["check", "--staged", "--select", "journal-append-only"], root)
    assert rc == 0, out  # the cut heading is staged, the unstaged line in the work tree
    git(root, "commit", "-q", "-m", "part")
    rc, out, _ = invoke(["recover", "--all"], root)
    assert rc == 0, out
    now = (root / JOURNAL).read_text(encoding="utf-8")
    assert now.startswith(first), now
    assert [line for line in now.splitlines() if line.strip()] == [
        f"# {TODAY}", "### 08:00 — Morning", "- Started the day", "- Reviewed the queue"], now
    rc, out, _ = invoke(["recover", "--all"], root)
    assert "nothing to recover" in out and (root / JOURNAL).read_text(encoding="utf-8") == now


@pytest.mark.parametrize("repo", [True, False], ids=["git", "no-git"])
def test_check_reports_a_journal_deleted_since_a_snapshot(tmp_path, repo, monkeypatch):
    """Never committed, deleted after a snapshot: reported with the snapshot and the way
    back; VAULTKIT_ACCEPT_DELETION takes it; back on disk it is not reported."""
    root = make(tmp_path, repo=repo)
    store = store_of(root)
    texts = [checkpoint(root, n) for n in (1, 2)]
    store.snapshot()
    kept = (root / JOURNAL).read_bytes()
    (root / JOURNAL).unlink()
    store.snapshot()  # the deletion recorded too: the older snapshot still holds it
    rc, out, _ = invoke(["check", "--select", "journal-append-only"], root)
    assert rc == 1, out
    assert f"{JOURNAL}:1:1: VK601 journal-append-only error: journal deleted since the " \
           "snapshot at" in out, out
    assert "which holds its 6 lines (first: '### 10:00 — Checkpoint 1')" in out
    assert "`vaultkit recover --all`" in out and f"VAULTKIT_ACCEPT_DELETION={JOURNAL}" in out
    monkeypatch.setenv("VAULTKIT_ACCEPT_DELETION", f"MEMORY.md,{JOURNAL}")
    rc, out, _ = invoke(["check", "--select", "journal-append-only"], root)
    assert rc == 0, out
    monkeypatch.delenv("VAULTKIT_ACCEPT_DELETION")
    rc, out, _ = invoke(["recover", "--all"], root)
    assert rc == 0 and (root / JOURNAL).read_bytes() == kept, out
    assert all(t in kept.decode() for t in texts)
    rc, out, _ = invoke(["check", "--select", "journal-append-only"], root)
    assert rc == 0, out


def test_a_committed_journal_deleted_is_reported_once(tmp_path):
    root = make(tmp_path)
    checkpoint(root, 1)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "journal")
    store = store_of(root)
    checkpoint(root, 2)
    store.snapshot()
    (root / JOURNAL).unlink()
    rc, out, _ = invoke(["check", "--select", "journal-append-only"], root)
    assert rc == 1 and out.count(f"{JOURNAL}:") == 1, out
    assert "journal deleted; journals are append-only" in out


@pytest.mark.parametrize("staged", [False, True], ids=["working-tree", "staged"])
def test_snapshot_rules_read_only_the_files_that_differ_from_the_snapshots(
        tmp_path, monkeypatch, staged):
    """A watcher's first snapshot records every memory file; a check after it compares only
    the files whose content is not what the snapshots hold (by blob, from the index or the
    snapshot table), so a 10,000-note vault's hook does not read 10,000 texts (it took
    30 s, one git process per file)."""
    import vaultkit.vault.gitstate as gitstate
    import vaultkit.vault.snapshots as snapshots
    from vaultkit.vault.snapshots import Store

    # (utime ages a file's mtime, never its ctime: without a margin, the files written
    # before the snapshot are not in it, as they would not be seconds later)
    monkeypatch.setattr(snapshots, "RACY_NS", 0)

    root = make(tmp_path)
    people = root / "memory" / "people"
    people.mkdir()
    for i in range(40):
        (people / f"p{i}.md").write_text(f"# P{i}\n\n- met at the fair\n- likes tea\n",
                                         encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "people")
    old = time.time() - 3600  # (not in the racy margin of the snapshot that records them)
    for path in root.rglob("*.md"):
        os.utime(path, (old, old))
    store = store_of(root)
    texts = [checkpoint(root, n) for n in range(1, 4)]
    topic = root / "memory" / "semantic" / "today.md"  # written today, never committed
    topic.write_text("# Today\n\n" + "".join(f"- finding {i}\n" for i in range(10)),
                     encoding="utf-8")
    for path in (root / JOURNAL, topic):
        os.utime(path, (old, old))
    store.snapshot()
    (root / JOURNAL).write_text("# Summary\n- a quiet day\n", encoding="utf-8")
    topic.write_text("# Today\n\n- finding 0\n", encoding="utf-8")
    if staged:
        git(root, "add", "-A")
    asked: list[str] = []
    real_blobs = Store.blobs

    def blobs(self, oids, *names):
        oids = list(oids)
        asked.extend(oids)
        return real_blobs(self, oids, *names)

    index_reads = []
    real_index = gitstate.GitState.index_texts

    def index_texts(self, path):
        index_reads.append(path)
        return real_index(self, path)

    monkeypatch.setattr(Store, "blobs", blobs)
    monkeypatch.setattr(gitstate.GitState, "index_texts", index_texts)
    args = ["check", "--select", "journal-append-only,mass-deletion"]
    rc, out, _ = invoke(args + (["--staged"] if staged else []), root)
    assert rc == 1
    assert f"{JOURNAL}:1:1: VK601 journal-append-only error: 9 lines lost" in out, out
    assert ("memory/semantic/today.md:1:1: VK602 mass-deletion error: lost 9 of its 11 "
            "non-blank lines since the snapshot") in out, out
    assert len(set(asked)) == 2  # the two changed files' snapshot versions, nothing else
    assert sorted(set(index_reads)) == (sorted([JOURNAL, "memory/semantic/today.md"])
                                        if staged else [])
    assert len(texts) == 3


def test_versions_read_after_more_snapshots_are_those_read_anew(tmp_path):
    """A process that runs on (the watcher answering the hook) reads only the snapshots
    made since it last asked; the result is what reading the whole window gives, the
    versions a file had before the window included."""
    from vaultkit.vault.snapshots import Versions

    root = make(tmp_path)
    topic = root / "memory" / "semantic" / "deploys.md"
    store = store_of(root)
    checkpoint(root, 1)
    store.snapshot()  # the window's start: the snapshot before its first one
    since = int(time.time()) + 1
    while time.time() < since + 0.1:
        time.sleep(0.05)
    checkpoint(root, 2)
    store.snapshot()
    known = store.versions(since=since)
    assert isinstance(known, Versions) and known.before
    logs = []
    real_git = store.git

    def spy(args, **kw):
        if args[0] == "log":
            logs.append(args[-1])
        return real_git(args, **kw)

    real_listing = store.listing

    def spy_listing(args, **kw):  # (the chain's log is read as it comes, bounded)
        if args[0] == "log":
            logs.append(args[-1])
        return real_listing(args, **kw)

    for n in range(3, 6):
        checkpoint(root, n)
        if n == 4:  # a file the window had not seen until now
            topic.write_text("# Deploys\n\n- fact 0\n", encoding="utf-8")
        store.snapshot()
        if n == 5:  # the chain's record lost: the new snapshot alone is read from git
            store.chain_path.unlink()
        store.git, store.listing = spy, spy_listing
        extended = store.versions(since=since, known=known)
        store.git, store.listing = real_git, real_listing
        # (else what the snapshot recorded it changed: no git log)
        assert logs == ([f"{known.head}..{store.head()}"] if n == 5 else []), n
        logs.clear()
        anew = store.versions(since=since)
        assert _by_file(extended) == _by_file(anew) and len(extended) == len(anew)
        assert extended.paths == anew.paths
        assert extended._summary is not None  # (brought up to date, not made anew)
        assert extended.summary() == anew.summary()
        assert known.summary() != extended.summary()
        known = extended
    assert any(v[2] == "memory/semantic/deploys.md" and v[0] == known.before for v in known)
    # the chain rewritten (retention): read anew, not extended
    git(root, "update-ref", store.ref, known.before)
    checkpoint(root, 9)
    store.snapshot()
    assert list(store.versions(since=since, known=known)) == list(store.versions(since=since))


@pytest.mark.parametrize("record", ["whole", "torn", "missing"])
def test_the_snapshots_since_a_known_one_are_read_from_the_chains_record(tmp_path, monkeypatch,
                                                                        record):
    """Reading the snapshots made since the last run ran `git log --raw` over them; each
    snapshot now records what it changed beside the ref, and the versions read from that
    record are those git lists (files added, changed, deleted, an odd name; the whole
    chain and a window). A snapshot whose record was torn by a crash, or a record gone,
    is read from git again; the records written after a torn one are still read."""
    import vaultkit.vault.snapshots as snapshots

    root = make(tmp_path)
    store = store_of(root)
    checkpoint(root, 1)
    store.snapshot()
    since = int(time.time()) + 1
    while time.time() < since + 0.1:
        time.sleep(0.05)
    checkpoint(root, 2)
    store.snapshot()
    known = {None: store.versions(), since: store.versions(since=since)}
    odd = root / "memory" / "semantic" / "odd name, ü.md"
    for step in range(5):
        if step == 0:
            odd.write_text("# Odd\n- one\n", encoding="utf-8")
        elif step == 1:
            (root / "memory" / "semantic" / "deploys.md").unlink()
        elif step == 2:
            (root / "MEMORY.md").write_text("# MEMORY\n\n- Deploys go through staging\n",
                                            encoding="utf-8")
        elif step == 3:
            odd.unlink()
        checkpoint(root, 3 + step)
        assert store.snapshot().commit
    if record == "torn":  # (the last record cut short, and one more written after it)
        with open(store.chain_path, "r+b") as fh:
            fh.truncate(os.path.getsize(store.chain_path) - 7)
        checkpoint(root, 9)
        assert store.snapshot().commit
    elif record == "missing":
        store.chain_path.unlink()
    logs = []
    real_listing = store.listing

    def spy_listing(args, **kw):
        if args[0] == "log":
            logs.append(args[-1])
        return real_listing(args, **kw)

    monkeypatch.setattr(store, "listing", spy_listing)
    for window, before in known.items():
        extended = store.versions(since=window, known=before)
        assert bool(logs) == (record != "whole"), (window, logs)
        anew = store.versions(since=window)
        logs.clear()
        assert _by_file(extended) == _by_file(anew) and len(extended) == len(anew)
        assert extended.gone == anew.gone
        assert extended.summary() == anew.summary() and extended.head == anew.head
    assert len(snapshots._chain_records(store.chain_path)) == \
        {"whole": 7, "torn": 7, "missing": 0}[record]  # (torn: that one passed over)


def _by_file(versions) -> dict:
    out: dict = {}
    for commit, when, path, oid in versions:
        out.setdefault(path, []).append((commit, when, oid))
    return out


def test_the_versions_a_run_read_are_kept_for_the_next_run(tmp_path, monkeypatch):
    """What one check read of the snapshots since the last commit is kept beside the stat
    table; the next run (another process) reads only the snapshots made since, and a kept
    file that does not fit (another window, a head gone) is read anew."""
    import vaultkit.vault.snapshots as snapshots

    root = make(tmp_path)
    store = store_of(root)
    for n in range(1, 4):
        checkpoint(root, n)
        store.snapshot()
    since = 0
    snapshots.changed_versions(store, since=since, wanted=None)
    read_at = store.head()
    kept = snapshots._versions_path(store, since)
    assert kept.is_file()
    checkpoint(root, 4)
    store.snapshot()
    store.memo.versions.clear()  # a new process
    logs = []
    real_git = snapshots.Store.git

    def spy(self, args, **kw):
        if args[0] == "log":
            logs.append(args[-1])
        return real_git(self, args, **kw)

    monkeypatch.setattr(snapshots.Store, "git", spy)
    real_listing = snapshots.Store.listing

    def spy_listing(self, args, **kw):  # (the chain's log is read as it comes, bounded)
        if args[0] == "log":
            logs.append(args[-1])
        return real_listing(self, args, **kw)

    monkeypatch.setattr(snapshots.Store, "listing", spy_listing)
    later = snapshots.changed_versions(store, since=since, wanted=None)
    assert logs == []  # (the snapshot made since, from the chain's record: no git log)
    assert sorted(later) == sorted(store.versions(since=since))
    # a few snapshots more are read from git again by the next run, rather than the whole
    # window written again; past _SAVE_AFTER versions it is written
    assert snapshots._load_versions(store, since).head == read_at
    monkeypatch.setattr(snapshots, "_SAVE_AFTER", 2)
    for n in (5, 6):
        checkpoint(root, n)
        store.snapshot()
    store.memo.versions.clear()
    logs.clear()
    later = snapshots.changed_versions(store, since=since, wanted=None)
    assert logs == []
    assert snapshots._load_versions(store, since).head == store.head()
    # a damaged file, or one of another window, is read anew
    kept.write_bytes(b"\x00garbage")
    store.memo.versions.clear()
    logs.clear()
    assert sorted(snapshots.changed_versions(store, since=since, wanted=None)) == sorted(later)
    assert logs == [store.head()]
    store.memo.versions.clear()
    logs.clear()
    snapshots.changed_versions(store, since=1, wanted=None)
    assert logs == [store.head()]
    # a kept head that no longer exists in the repository: read anew, no error
    snapshots._save_versions(store, 1, snapshots.Versions("0" * 40, list(later)))
    store.memo.versions.clear()
    logs.clear()
    assert sorted(snapshots.changed_versions(store, since=1, wanted=None)) == \
        sorted(store.versions(since=1))


def test_a_process_answering_a_check_keeps_the_versions_after_its_answer(tmp_path, monkeypatch):
    """Answering a check (the watcher's child), the versions read are written every time
    they grew, but only once the answer is sent: the next check starts from them and asks
    git nothing while no snapshot was made."""
    import vaultkit.vault.snapshots as snapshots

    root = make(tmp_path)
    store = store_of(root)
    checkpoint(root, 1)
    store.snapshot()
    snapshots.changed_versions(store, since=0, wanted=None)  # (written: the first read)
    checkpoint(root, 2)
    store.snapshot()
    store.memo.versions.clear()
    before = snapshots._versions_path(store, 0).read_bytes()
    store.memo.later.hold()  # (as the child of the answering process holds its workspace's)
    try:
        grown = snapshots.changed_versions(store, since=0, wanted=None)
        assert store.memo.later.holding
        assert snapshots._versions_path(store, 0).read_bytes() == before  # (not yet)
    finally:
        store.memo.later.run()
    assert not store.memo.later.holding
    assert snapshots._load_versions(store, 0).head == store.head()
    logs = []
    real_git = snapshots.Store.git
    monkeypatch.setattr(snapshots.Store, "git",
                        lambda self, args, **kw: logs.append(args) or real_git(self, args, **kw))
    store.memo.versions.clear()  # the next check
    assert sorted(snapshots.changed_versions(store, since=0, wanted=None)) == sorted(grown)
    assert logs == []
    # run by itself, a process writes at once (and, a few versions more, not at all)
    checkpoint(root, 3)
    store.snapshot()
    store.memo.versions.clear()
    snapshots.changed_versions(store, since=0, wanted=None)
    assert snapshots._load_versions(store, 0).head != store.head()


def test_an_object_read_once_is_not_asked_of_git_again(tmp_path, monkeypatch):
    """The snapshots' objects are read from git once while their owner's memo holds them
    (an object's content never changes); the memo lets the oldest go past its bound, and
    one that tells (a child of the answering process) tells the ids it read, for the
    process that forks the next."""
    import vaultkit.vault.snapshots as snapshots

    root = make(tmp_path)
    memo = snapshots.BlobMemo()
    store = snapshots.open_store(root, load_settings(root), create=True, blobs=memo)
    assert store.memo is memo
    checkpoint(root, 1)
    store.snapshot()
    oids = [git(root, "rev-parse", f"{REF}:{p}").stdout.strip()
            for p in ("MEMORY.md", JOURNAL)]
    asked = []
    real_batch = snapshots.Store._batch
    monkeypatch.setattr(snapshots.Store, "_batch", lambda self, oids, *a: asked.append(
        ["cat-file", *oids]) or real_batch(self, oids, *a))
    first = store.blobs(oids + ["0" * 40])  # (an id git does not have: left out)
    assert set(first) == set(oids) and len(asked) == 1
    assert first[oids[0]] == (root / "MEMORY.md").read_bytes()
    assert memo.read_since() == []  # (not telling: nothing to tell)
    assert store.blobs(oids) == first and len(asked) == 1
    # another store on the same memo (the other snapshot rule of the run) reads nothing
    other = snapshots.open_store(root, load_settings(root), blobs=memo)
    assert other.blobs(oids) == first and len(asked) == 1
    # a store with a memo of its own (another workspace) reads for itself
    assert store_of(root).blobs(oids) == first and len(asked) == 2
    memo.start_telling()
    memo.size -= len(memo.held.pop(oids[1]))
    assert store.blobs(oids) == first and len(asked) == 3
    assert asked[-1] == ["cat-file", oids[1]] and memo.read_since() == [(oids[1], first[oids[1]])]
    small = snapshots.BlobMemo(at_most=40)
    small.remember([("a" * 40, b"x" * 8), ("b" * 40, b"y" * 9),
                    ("c" * 40, b"z" * 11)])  # (11 > 40 // 4: not held)
    assert "c" * 40 not in small.held
    assert sum(map(len, small.held.values())) == small.size <= 40
    assert list(small.held)[-2:] == ["a" * 40, "b" * 40]
    small.remember([("d" * 40, b"w" * 10), ("e" * 40, b"v" * 10), ("f" * 40, b"u" * 10)])
    assert "a" * 40 not in small.held and small.size == sum(map(len, small.held.values())) <= 40


def test_the_two_snapshot_rules_of_a_check_share_the_current_blobs_and_the_table(
        tmp_path, monkeypatch):
    """A check with snapshots (a watcher runs) asks for the current blobs once and reads
    the snapshot table once for both snapshot rules: each read it for itself, about half
    of a 10,000-note warm check answered by the watcher."""
    import vaultkit.core.bounded as bounded
    from vaultkit.vault.snapshots import Store

    root = make(tmp_path)
    old = time.time() - 3600
    for path in root.rglob("*.md"):
        os.utime(path, (old, old))
    checkpoint(root, 1)
    os.utime(root / JOURNAL, (old, old))
    store_of(root).snapshot()
    (root / JOURNAL).write_text("# Summary\n", encoding="utf-8")
    listed, table_reads = [], []
    real_current, real_read = Store.current_oids, bounded.read_regular

    def current_oids(self, states):
        listed.append(len(states))
        return real_current(self, states)

    def read_regular(path, *args, **kwargs):
        if str(path).endswith(".stat"):
            table_reads.append(str(path))
        return real_read(path, *args, **kwargs)

    monkeypatch.setattr(Store, "current_oids", current_oids)
    monkeypatch.setattr(bounded, "read_regular", read_regular)
    rc, out, _ = invoke(["check", "--select", "journal-append-only,mass-deletion"], root)
    assert rc == 1 and "VK601 journal-append-only error" in out, out
    assert len(listed) == 1
    assert len(table_reads) == 1, table_reads
    # a table replaced by another process (the watcher's next snapshot) is read again
    import marshal

    store = store_of(root)
    first = store._load_table()
    assert store._load_table() is first
    data = marshal.loads(store.table_path.read_bytes())
    data["pruneChecked"] = 123
    tmp = store.table_path.with_name("elsewhere.tmp")
    tmp.write_bytes(marshal.dumps(data))
    os.replace(tmp, store.table_path)
    assert store._load_table()["pruneChecked"] == 123


def test_the_staged_blobs_that_differ_come_from_git_comparing_the_index_with_the_newest_snapshot(
        tmp_path):
    """The hook compares the snapshots' versions with the staged blobs. Listing the whole
    index for them (``git ls-files``) costs a line per file of the vault; git comparing the
    index with the newest snapshot's tree names only what differs. Both must give the same
    blob for every path the versions hold, whatever the index: staged edits, a file removed
    from the index, one added with intent-to-add, one deleted since a snapshot (not in the
    newest tree) and absent or still staged, a conflict (no stage 0)."""
    from vaultkit.vault.gitstate import GitState
    from vaultkit.vault.loader import load_vault
    from vaultkit.vault.snapshots import Versions, staged_differ

    root = make(tmp_path)
    for name in ("gone.md", "kept-staged.md", "conflict.md"):
        (root / "memory" / "semantic" / name).write_text(f"# {name}\n- a\n", encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "more")
    store = store_of(root)
    checkpoint(root, 1)
    store.snapshot()
    (root / "memory" / "semantic" / "deploys.md").write_text("# Deploys\n- changed\n",
                                                             encoding="utf-8")
    store.snapshot()
    for name in ("gone.md", "kept-staged.md"):
        (root / "memory" / "semantic" / name).unlink()
    (root / "memory" / "semantic" / "new.md").write_text("# New\n- b\n", encoding="utf-8")
    store.snapshot()
    versions = store.versions(since=0)
    assert versions.gone == {"memory/semantic/gone.md", "memory/semantic/kept-staged.md"}
    assert len({v[2] for v in versions}) < len(versions)  # (a path with two versions)
    # the index, every way it can differ
    git(root, "add", JOURNAL)
    git(root, "rm", "-q", "--cached", "memory/semantic/deploys.md")
    git(root, "add", "-N", "memory/semantic/new.md")
    git(root, "rm", "-q", "--cached", "memory/semantic/gone.md")
    blob = git(root, "rev-parse", ":memory/semantic/conflict.md").stdout.strip()
    other = git(root, "rev-parse", ":MEMORY.md").stdout.strip()
    subprocess.run(["git", "update-index", "--index-info"], cwd=root, check=True, input=(
        f"0 {'0' * 40}\tmemory/semantic/conflict.md\n"
        f"100644 {blob} 1\tmemory/semantic/conflict.md\n"
        f"100644 {other} 2\tmemory/semantic/conflict.md\n").encode())
    state = GitState(load_vault(root, save=False), staged=True)
    listed = state.index_oids
    assert "memory/semantic/kept-staged.md" in listed  # deleted on disk, still staged
    assert "memory/semantic/conflict.md" not in listed
    differ = {path for _, _, path, oid in versions if listed.get(path) != oid}
    fresh = GitState(load_vault(root, save=False), staged=True)
    assert staged_differ(store, fresh, versions) == differ
    assert "index_oids" not in fresh.__dict__  # (git compared: the index was not listed)
    assert {"memory/semantic/deploys.md", "memory/semantic/gone.md",
            "memory/semantic/conflict.md", "memory/semantic/new.md"} <= differ
    assert "memory/semantic/kept-staged.md" not in differ  # (its one blob is still staged)
    # the same from versions read from the kept file, and after an extension
    assert staged_differ(store, fresh, Versions(
        versions.head, list(versions), gone=versions.gone)) == differ
    # what it cannot tell from the tree: None (the caller lists the index)
    assert staged_differ(store, fresh, Versions(versions.head, list(versions))) is None
    outside = Versions(versions.head, [*versions, ("c", 1, "../AGENTS.md", "0" * 40)],
                       gone=set())
    assert staged_differ(store, fresh, outside) is None


def _staged_cut_after_snapshots(tmp_path, snapshots: int) -> Path:
    """A committed journal, ``snapshots`` checkpoints snapshotted after it, then the
    journal cut back to its committed entry and staged (the loss a hook must catch)."""
    root = make(tmp_path)
    store = store_of(root)
    checkpoint(root, 0)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "journal")
    for n in range(1, snapshots + 1):
        checkpoint(root, n)
        store.snapshot()
    (root / JOURNAL).write_text((root / JOURNAL).read_text(encoding="utf-8").split("\n### 10")[0]
                                + "\n", encoding="utf-8")
    git(root, "add", JOURNAL)
    return root


def _git_calls(monkeypatch) -> list[tuple[list[str], str]]:
    """Every git process vaultkit starts from now on: its arguments (without the ``-c``
    settings) and the name of the thread that started it."""
    import threading

    import vaultkit.core.gitenv as gitenv

    calls = []
    real_popen = gitenv.subprocess.Popen

    def counting(cmd, *a, **kw):  # (subprocess.run starts its process with Popen too)
        if cmd and "git" in os.path.basename(cmd[0]):
            calls.append(([arg for arg in cmd[1:] if not arg.startswith("-c")],
                          threading.current_thread().name))
        return real_popen(cmd, *a, **kw)

    monkeypatch.setattr(gitenv.subprocess, "Popen", counting)
    return calls


def _verb(args: list[str]) -> str:
    return next(a for a in args if not a.startswith("-") and "=" not in a
                and a != "core.hooksPath")


def test_a_hook_with_snapshots_asks_git_what_differs_not_for_every_file(tmp_path, monkeypatch):
    """The hook answered while a watcher snapshots: the snapshot rules learn the staged
    blobs from git comparing the index with the newest snapshot (no listing of the whole
    index), the last commit's time and the staged journal from the batch that read its
    committed side (no `git log -1`, no second `cat-file`), and report the same loss."""
    root = _staged_cut_after_snapshots(tmp_path, 3)
    calls = _git_calls(monkeypatch)
    rc, out, _ = invoke(["check", "--hook", JOURNAL, "--select", "journal-append-only"], root)
    assert rc == 1, out
    assert f"{JOURNAL}:1:1: VK601 journal-append-only error: 9 lines lost since the snapshot" \
        in out, out
    verbs = [_verb(args) for args, _ in calls]
    # (the one `ls-files` is the hook's look at the staged blob of the file it was given,
    # vaultkit.session.staged: of that path, not of the whole index)
    assert [args[-2:] for args, _ in calls if _verb(args) == "ls-files"] == \
        [["--", f":(literal){JOURNAL}"]] and "diff-index" in verbs, verbs
    assert not [args for args, _ in calls if "--format=%ct" in args], calls
    # HEAD and staged sides; the journal's newest snapshot, then (it lacking lines the
    # staged journal lacks too) the versions it was appended to; and, a loss being found,
    # the lines the commits of local refs hold in the file (one log, one cat-file: only
    # when refusing)
    assert verbs.count("cat-file") == 4, verbs
    assert [args for args in calls if "--branches" in args[0]], calls


def test_the_git_rules_questions_are_asked_beside_the_rules_before_them(tmp_path, monkeypatch):
    """While the note rules run, a thread asks git what the git rules ask first (the
    repository, the diff against HEAD, its blobs, the index against the newest snapshot,
    MEMORY.md's commits), each once: the git rules find the answers, and report what they
    reported before."""
    root = _staged_cut_after_snapshots(tmp_path, 2)
    calls = _git_calls(monkeypatch)
    rc, out, _ = invoke(["check", "--hook", JOURNAL], root)
    assert rc == 1 and "VK601 journal-append-only error: 6 lines lost since the snapshot" in out
    verbs = [_verb(args) if "--diff-filter=MT" not in args else "log of MEMORY.md"
             for args, _ in calls]
    assert verbs.count("rev-parse") == verbs.count("diff") == verbs.count("diff-index") == 1
    asked_beside = {verb for verb, (_, thread) in zip(verbs, calls) if thread == "vaultkit-git"}
    assert {"rev-parse", "diff", "cat-file", "diff-index", "log of MEMORY.md"} <= asked_beside
    assert verbs.count("log of MEMORY.md") == 1  # (memory-churn's: not asked again)
    # a check of rules none of which asks git starts no thread, and no git but the hook's
    # look at the staged blob of the file it was given (what the commit holds)
    calls.clear()
    invoke(["check", "--hook", JOURNAL, "--select", "broken-link"], root)
    assert [(_verb(args), args[-1], thread) for args, thread in calls] == \
        [("ls-files", f":(literal){JOURNAL}", "MainThread")], calls


def test_any_rule_using_git_waits_for_the_thread_asking_beside(tmp_path):
    """``ctx.git`` answers another thread only once the thread asking beside the rules is
    done (a rule that is not a git rule but uses git never asks at the same time)."""
    import threading

    from vaultkit.lint.rule import ASKING_GIT, Context
    from vaultkit.vault.loader import load_vault

    root = make(tmp_path)
    ctx = Context(load_vault(root, root=root, use_cache=False), hook=True)
    asked = []
    asking = threading.Thread(target=lambda: (time.sleep(0.3), asked.append(ctx.git)),
                              name=ASKING_GIT)
    ctx.asking_git = asking
    asking.start()
    git_state = ctx.git  # (waits for it)
    assert asked == [git_state] and ctx.asking_git is None and git_state.available


# -- what a snapshot reads: the file it judged, never a link swapped in ---------------------

def _all_snapshot_bytes(root: Path) -> bytes:
    """Every blob the snapshot chain reaches, and every object in the store's folder."""
    listed = git(root, "rev-list", "--objects", REF).stdout.split("\n")
    oids = "".join(line.split(" ", 1)[0] + "\n" for line in listed if line)
    blobs = subprocess.run(["git", "cat-file", "--batch"], cwd=root, input=oids.encode(),
                           capture_output=True, check=True).stdout
    loose = subprocess.run(["git", "cat-file", "--batch", "--batch-all-objects"], cwd=root,
                           capture_output=True, check=True).stdout
    return blobs + loose


def test_a_journal_swapped_for_a_symlink_after_its_check_is_never_recorded(tmp_path,
                                                                         monkeypatch):
    """The race: the file is judged (a regular file), then swapped for a symlink to a file
    outside the vault before its bytes are read. What lands in the snapshot is the journal's
    own bytes or nothing, never the outside file's."""
    root = make(tmp_path)
    outside = tmp_path / "outside.md"
    marker = "OUTSIDE-MARKER-7f3a91"
    outside.write_text(f"- {marker}\n", encoding="utf-8")
    checkpoint(root, 1)
    journal = root / JOURNAL
    swapped = []

    def swap():
        if not swapped:
            swapped.append(True)
            os.replace(journal, tmp_path / "moved-away.md")
            os.symlink(outside, journal)

    # after every check that tells a file from a link, whichever the snapshot makes last:
    # os.path.islink on the path, or fstat on a descriptor of the journal
    real_islink, real_fstat = os.path.islink, os.fstat

    def islink(path):
        found = real_islink(path)
        if os.fspath(path) == str(journal):
            swap()
        return found

    def fstat(fd):
        found = real_fstat(fd)
        try:
            named = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            named = ""
        if named.endswith(JOURNAL) or named.endswith("moved-away.md"):
            swap()
        return found

    monkeypatch.setattr(os.path, "islink", islink)
    monkeypatch.setattr(os, "fstat", fstat)
    store_of(root).snapshot()
    monkeypatch.undo()
    assert swapped, "the race was not injected"
    assert marker.encode() not in _all_snapshot_bytes(root)
    tree = git(root, "ls-tree", "-r", "--name-only", REF).stdout.split()
    # what was read is the journal the check judged: its checkpoint is kept
    if JOURNAL in tree:
        assert "Checkpoint 1" in git(root, "show", f"{REF}:{JOURNAL}").stdout
    # the link now in its place is never recorded on the next snapshots either
    store_of(root).snapshot()
    assert marker.encode() not in _all_snapshot_bytes(root)


def test_a_symlinked_journal_or_memory_folder_is_not_recorded(tmp_path):
    root = make(tmp_path)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    marker = "OUTSIDE-MARKER-c41d07"
    (outside / "note.md").write_text(f"- {marker}\n", encoding="utf-8")
    (root / "memory").mkdir(exist_ok=True)
    os.symlink(outside / "note.md", root / JOURNAL)
    os.symlink(outside, root / "memory" / "linked")
    store_of(root).snapshot()
    tree = git(root, "ls-tree", "-r", "--name-only", REF).stdout.split()
    assert JOURNAL not in tree and not any(p.startswith("memory/linked") for p in tree)
    assert marker.encode() not in _all_snapshot_bytes(root)


def test_a_memory_folder_swapped_for_a_symlink_after_the_listing_is_not_followed(
        tmp_path, monkeypatch):
    """A folder on the way swapped for a symlink after the listing: not followed."""
    import vaultkit.vault.snapshots as snapshots

    root = make(tmp_path)
    outside = tmp_path / "elsewhere" / "semantic"
    outside.mkdir(parents=True)
    marker = "OUTSIDE-MARKER-99e0b2"
    (outside / "deploys.md").write_text(f"- {marker}\n", encoding="utf-8")
    listing = snapshots.memory_files

    def listed_then_swapped(*args, **kwargs):
        files = listing(*args, **kwargs)
        os.replace(root / "memory" / "semantic", tmp_path / "semantic-away")
        os.symlink(outside, root / "memory" / "semantic")
        return files

    monkeypatch.setattr(snapshots, "memory_files", listed_then_swapped)
    store_of(root).snapshot()
    assert marker.encode() not in _all_snapshot_bytes(root)


# -- `snapshot --push` sends no credential -------------------------------------------------

def _fake_github_token() -> str:
    """A GitHub token of the form the detector recognises, made up for this run."""
    import secrets
    import string

    alphabet = string.ascii_letters + string.digits
    return "ghp_" + "".join(secrets.choice(alphabet) for _ in range(36))


def _remote_bytes(remote: Path) -> bytes:
    """Every object the remote holds, whatever reaches it."""
    return subprocess.run(["git", "cat-file", "--batch", "--batch-all-objects"], cwd=remote,
                          capture_output=True, check=True).stdout


def test_push_refuses_a_chain_holding_a_credential_until_it_is_dropped(tmp_path):
    root = make(tmp_path)
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    token = _fake_github_token()
    core = token[4:-4]
    rc, _, err = invoke(["snapshot", "--push", str(remote)], root)
    assert rc == 0, err
    before = git(remote, "for-each-ref", "--format=%(refname) %(objectname)").stdout
    assert before.startswith(REF)
    checkpoint(root, 1)
    note = root / "memory" / "semantic" / "deploys.md"
    kept = note.read_text(encoding="utf-8")
    note.write_text(kept + f"- deploy with GH_TOKEN={token}\n- fact after it\n",
                    encoding="utf-8")
    rc, _, err = invoke(["snapshot"], root)
    assert rc == 0, err
    note.write_text(kept + "- fact after it\n", encoding="utf-8")  # removed from the note
    rc, out, err = invoke(["snapshot", "--push", str(remote)], root)
    assert rc == 1, (out, err)
    assert core not in out + err
    assert "not pushed" in err and "memory/semantic/deploys.md:11" in err
    assert "GitHub token (ghp_…" in err and "vaultkit snapshot --drop-secrets" in err
    held = git(root, "log", "--format=%h", REF).stdout.split()
    assert any(f"snapshot {h}" in err for h in held), err  # the snapshot that holds it
    # nothing pushed: the remote's ref is where it was, and holds no object with it
    assert git(remote, "for-each-ref", "--format=%(refname) %(objectname)").stdout == before
    assert core.encode() not in _remote_bytes(remote)
    rc, out, err = invoke(["snapshot", "--push", str(remote), "--format", "json"], root)
    assert rc == 1 and core not in out + err
    assert json.loads(out)["credentials"][0]["path"] == "memory/semantic/deploys.md"

    rc, out, err = invoke(["snapshot", "--drop-secrets"], root)
    assert rc == 0, (out, err)
    assert core not in out + err and "dropped GitHub token (ghp_…" in out
    # the chain no longer holds it; every other line it recorded is kept
    chain = git(root, "log", "-p", REF).stdout
    assert core not in chain and "Checkpoint 1" in chain and "- fact after it" in chain
    rc, out, err = invoke(["snapshot", "--push", str(remote)], root)
    assert rc == 0, (out, err)
    assert git(remote, "rev-parse", REF).stdout == git(root, "rev-parse", REF).stdout
    assert core.encode() not in _remote_bytes(remote)
    # the next snapshot finds the notes as recorded: nothing lost between commits
    rc, out, _ = invoke(["check", "--select", "journal-append-only,mass-deletion"], root)
    assert rc == 0, out


def test_drop_secrets_warns_while_the_note_still_holds_it_and_is_a_no_op_when_clean(tmp_path):
    root = make(tmp_path)
    # a placeholder in a marked example block is no credential, as secret-in-memory has it
    (root / "memory" / "semantic" / "setup.md").write_text(
        "# Setup\n\nExample:\n\n```bash\nexport DB_PASSWORD=Wq8#vT2pLm9x\n```\n",
        encoding="utf-8")
    rc, out, _ = invoke(["snapshot"], root)
    rc, out, err = invoke(["snapshot", "--drop-secrets"], root)
    assert rc == 0 and "nothing rewritten" in out, (out, err)
    token = _fake_github_token()
    with open(root / "MEMORY.md", "a", encoding="utf-8") as fh:
        fh.write(f"- token: {token}\n")
    invoke(["snapshot"], root)
    rc, out, err = invoke(["snapshot", "--drop-secrets"], root)
    assert rc == 1 and token[4:-4] not in out + err
    assert "MEMORY.md still holds a credential on disk" in err
    # the next snapshot records it again, and the push is refused again
    rc, _, err = invoke(["snapshot", "--push", str(tmp_path / "nowhere.git")], root)
    assert rc == 1 and "not pushed" in err and token[4:-4] not in err
    rc, _, err = invoke(["snapshot", "--push", "x", "--drop-secrets"], root)
    assert rc == 2 and "not allowed with" in err


# -- which snapshot lines count: content and ancestry, never HEAD's commit time -------------

def _commit_dated(root: Path, when: int, *paths: str, message: str = "elsewhere") -> None:
    """A commit of ``paths`` whose committer (and author) date is ``when``, made without
    the hook, as one made on another machine and pulled, or with a clock ahead."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(ENV, GIT_COMMITTER_DATE=f"{when} +0000", GIT_AUTHOR_DATE=f"{when} +0000")
    for path in paths:
        git(root, "add", "-A", "--", path)
    proc = subprocess.run(["git", "commit", "-q", "--no-verify", "-m", message], cwd=root,
                          capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr


def _loss_in_snapshots(tmp_path) -> tuple[Path, list[str]]:
    """Three checkpoints snapshotted, never committed, then the journal overwritten by a
    summary and snapshotted again: the loss is recorded, only the snapshots hold the lines."""
    root = make(tmp_path)
    store = store_of(root)
    texts = []
    for n in (1, 2, 3):
        texts.append(checkpoint(root, n))
        store.snapshot()
    (root / JOURNAL).write_text("# Summary\n- a quiet day\n", encoding="utf-8")
    store.snapshot()
    return root, texts


@pytest.mark.parametrize("how", ["dated-ahead", "pulled"])
def test_a_loss_only_the_snapshots_hold_is_refused_after_a_later_commit(tmp_path, how):
    """HEAD made after the loss (a commit dated ahead of this clock, or one made on another
    machine after the loss and pulled: no hook runs on a pull), holding none of the lost
    lines: the commit that stages the journal without them is still refused."""
    root, _ = _loss_in_snapshots(tmp_path)
    (root / "notes.txt").write_text("changed elsewhere\n", encoding="utf-8")
    if how == "dated-ahead":
        _commit_dated(root, int(time.time()) + 3 * 86400, "notes.txt")
    else:
        other = tmp_path / "other"
        git(tmp_path, "clone", "-q", str(root), str(other))
        (other / "notes.txt").write_text("changed elsewhere\n", encoding="utf-8")
        time.sleep(1.1)  # (committed after the last snapshot, to the second)
        _commit_dated(other, int(time.time()), "notes.txt")
        git(root, "checkout", "-q", "--", "notes.txt")
        git(root, "fetch", "-q", str(other), "HEAD")
        git(root, "merge", "-q", "--ff-only", "FETCH_HEAD")
    git(root, "add", JOURNAL)
    rc, out, _ = invoke(["check", "--hook", JOURNAL, "--select", "journal-append-only"], root)
    assert rc == 1, out
    assert f"{JOURNAL}:1:1: VK601 journal-append-only error: 9 lines lost since the snapshot" \
        in out, out
    # history lists the same loss: one model of it
    rc, out, _ = invoke(["history", "--format", "json"], root)
    assert JOURNAL in out


@pytest.mark.parametrize("how", ["dated-ahead", "pulled"])
def test_a_cut_only_the_snapshots_hold_is_refused_after_a_later_commit(tmp_path, how):
    """mass-deletion decides by content and ancestry too, never by HEAD's date: a topic
    note and MEMORY.md cut between commits stay refused after a commit dated ahead or one
    made elsewhere after the cut and pulled (fast-forward), which hold none of the lines;
    lines such a commit holds are git's to keep and do not count."""
    root = make(tmp_path)
    topic = root / "memory" / "semantic" / "today.md"  # written today, never committed
    topic.write_text("# Today\n\n" + "".join(f"- finding {i}\n" for i in range(10)),
                     encoding="utf-8")
    with open(root / "MEMORY.md", "a", encoding="utf-8") as fh:
        fh.write("".join(f"- rule {i}\n" for i in range(10)))
    store_of(root).snapshot()
    topic.write_text("# Today\n\n- finding 0\n", encoding="utf-8")
    (root / "MEMORY.md").write_text("# MEMORY\n\n- Deploys go through staging first\n- rule 0\n",
                                    encoding="utf-8")
    store_of(root).snapshot()  # (the cut recorded: the snapshot before it is older still)
    (root / "notes.txt").write_text("changed elsewhere\n", encoding="utf-8")
    if how == "dated-ahead":
        _commit_dated(root, int(time.time()) + 3 * 86400, "notes.txt")
    else:
        other = tmp_path / "other"
        git(tmp_path, "clone", "-q", str(root), str(other))
        (other / "notes.txt").write_text("changed elsewhere\n", encoding="utf-8")
        time.sleep(1.1)  # (committed after the snapshots, to the second)
        _commit_dated(other, int(time.time()), "notes.txt")
        git(root, "checkout", "-q", "--", "notes.txt")
        git(root, "fetch", "-q", str(other), "HEAD")
        git(root, "merge", "-q", "--ff-only", "FETCH_HEAD")
    git(root, "add", "-A")
    rc, out, _ = invoke(["check", "--hook", "memory/semantic/today.md", "MEMORY.md",
                         "--select", "mass-deletion"], root)
    assert rc == 1, out
    assert ("memory/semantic/today.md:1:1: VK602 mass-deletion error: lost 9 of its 11 "
            "non-blank lines since the snapshot at") in out, out
    assert ("MEMORY.md:1:1: VK602 mass-deletion error: dropped 9 of its 12 durable lines "
            "since the snapshot") in out, out
    # the lines in a commit (here an earlier one, as a pulled branch would hold them): not
    # lost, whatever the dates
    cut_topic, cut_memory = topic.read_text(encoding="utf-8"), (root / "MEMORY.md").read_text(
        encoding="utf-8")
    topic.write_text("# Today\n\n" + "".join(f"- finding {i}\n" for i in range(10)),
                     encoding="utf-8")
    (root / "MEMORY.md").write_text(cut_memory + "".join(f"- rule {i}\n" for i in range(1, 10)),
                                    encoding="utf-8")
    _commit_dated(root, int(time.time()) - 86400, "memory", "MEMORY.md")
    topic.write_text(cut_topic, encoding="utf-8")
    (root / "MEMORY.md").write_text(cut_memory, encoding="utf-8")
    _commit_dated(root, int(time.time()) - 80000, "memory", "MEMORY.md")  # (HEAD: the cut)
    topic.write_text("# Today\n\n- finding 0\n- finding 10\n", encoding="utf-8")
    git(root, "add", "-A")
    rc, out, _ = invoke(["check", "--hook", "memory/semantic/today.md", "MEMORY.md",
                         "--select", "mass-deletion"], root)
    assert rc == 0, out


def test_lines_a_commit_holds_are_not_a_loss_whatever_its_date(tmp_path):
    """The lost lines committed (elsewhere, dated ahead, pulled): git holds them, so a
    journal staged without them seals nothing the snapshots alone hold."""
    root, texts = _loss_in_snapshots(tmp_path)
    summary = (root / JOURNAL).read_text(encoding="utf-8")
    ahead = int(time.time()) + 3 * 86400
    # in HEAD: the journal with every line, the summary after them
    (root / JOURNAL).write_text("".join(texts) + summary, encoding="utf-8")
    _commit_dated(root, ahead, JOURNAL)
    checkpoint(root, 4)
    git(root, "add", JOURNAL)
    rc, out, _ = invoke(["check", "--hook", JOURNAL, "--select", "journal-append-only"], root)
    assert rc == 0, out
    # in an earlier commit only (HEAD's journal no longer has them, by a commit made
    # without the hook elsewhere): a loss git lists, not one only the snapshots hold
    (root / JOURNAL).write_text(summary, encoding="utf-8")
    _commit_dated(root, ahead + 60, JOURNAL)
    checkpoint(root, 5)
    git(root, "add", JOURNAL)
    rc, out, _ = invoke(["check", "--hook", JOURNAL, "--select", "journal-append-only"], root)
    assert rc == 0, out
    # one line only a snapshot holds, beside them, still counts
    _commit_dated(root, ahead + 120, JOURNAL)
    committed = (root / JOURNAL).read_text(encoding="utf-8")
    with open(root / JOURNAL, "a", encoding="utf-8") as fh:
        fh.write("- only a snapshot keeps this line\n")
    store_of(root).snapshot()
    (root / JOURNAL).write_text(committed, encoding="utf-8")
    checkpoint(root, 6)
    git(root, "add", JOURNAL)
    rc, out, _ = invoke(["check", "--hook", JOURNAL, "--select", "journal-append-only"], root)
    assert rc == 1 and "1 line lost since the snapshot" in out, out
    assert "'- only a snapshot keeps this line'" in out


def test_a_commit_that_leaves_the_journal_as_head_has_it_is_not_refused_for_it(tmp_path):
    """A loss sealed by a commit made without the hook: a later commit that does not
    change the journal seals nothing of it and passes (its snapshots are not even read);
    the next one that stages the journal without the lines is refused."""
    root, _ = _loss_in_snapshots(tmp_path)
    _commit_dated(root, int(time.time()), JOURNAL, message="summary, without the hook")
    (root / "notes.txt").write_text("another file\n", encoding="utf-8")
    git(root, "add", "notes.txt")
    rc, out, _ = invoke(["check", "--hook", "notes.txt", "--select", "journal-append-only"],
                        root)
    assert rc == 0, out
    git(root, "commit", "-q", "-m", "notes")
    checkpoint(root, 4)
    git(root, "add", JOURNAL)
    rc, out, _ = invoke(["check", "--hook", JOURNAL, "--select", "journal-append-only"], root)
    assert rc == 1 and "9 lines lost since the snapshot" in out, out


def test_a_deletion_accepted_stays_accepted_and_forget_takes_it_out(tmp_path, monkeypatch):
    """Its lines are only in the snapshots: accepted once, the next commit is not refused
    again (history lists it as accepted); `snapshot --forget` takes the journal out of the
    chain, and neither the hook nor history sees it any more."""
    root = make(tmp_path)
    store = store_of(root)
    checkpoint(root, 1)
    store.snapshot()
    (root / JOURNAL).unlink()
    store.snapshot()
    monkeypatch.setenv("VAULTKIT_ACCEPT_DELETION", JOURNAL)
    rc, out, _ = invoke(["check", "--staged", "--select", "journal-append-only"], root)
    assert rc == 0, out
    monkeypatch.delenv("VAULTKIT_ACCEPT_DELETION")
    (root / "notes.txt").write_text("the next commit\n", encoding="utf-8")
    git(root, "add", "notes.txt")
    git(root, "commit", "-q", "-m", "deletion accepted")
    rc, out, _ = invoke(["check", "--staged", "--select", "journal-append-only"], root)
    assert rc == 0, out
    rc, out, _ = invoke(["history"], root)
    assert JOURNAL in out and "accepted as removed on purpose" in out, out
    head = git(root, "rev-parse", REF).stdout
    rc, _, err = invoke(["snapshot", "--forget", "memory/no-such-day.md"], root)
    assert rc == 2 and "no snapshot holds it" in err and "\n" not in err.strip()
    assert git(root, "rev-parse", REF).stdout == head  # nothing rewritten
    rc, out, err = invoke(["snapshot", "--forget", JOURNAL], root)
    assert rc == 0 and f"forgot {JOURNAL}" in out, (out, err)
    tree_paths = git(root, "log", "--format=", "--name-only", REF).stdout.split()
    assert JOURNAL not in tree_paths and "MEMORY.md" in tree_paths
    rc, out, _ = invoke(["check", "--staged", "--select", "journal-append-only"], root)
    assert rc == 0, out
    rc, out, _ = invoke(["history"], root)
    assert JOURNAL not in out, out
    rc, out, _ = invoke(["snapshot"], root)  # the chain goes on from the rewritten head
    assert rc == 0, out


# -- a removal accepted once stays accepted (VAULTKIT_ACCEPT_DELETION) -----------------------

def _hook(root: Path, *paths: str, select: str = "journal-append-only,mass-deletion"):
    return invoke(["check", "--hook", *paths, "--select", select], root)


def _accepted_record(root: Path) -> bytes:
    return (root / ".vaultkit" / "accepted-removals.json").read_bytes()


def test_a_journal_removal_accepted_once_is_not_refused_by_the_next_commit(tmp_path,
                                                                           monkeypatch):
    """Lines only snapshots held, cut on purpose and accepted: the next commit that stages
    the journal passes; lines lost after that are refused; history lists the accepted cut
    as accepted and `recover --all` leaves it; the record holds digests, no line's text."""
    root, texts = _loss_in_snapshots(tmp_path)
    git(root, "add", JOURNAL)
    rc, out, _ = _hook(root, JOURNAL)
    assert rc == 1 and "9 lines lost since the snapshot" in out, out
    assert f"or accept this removal: VAULTKIT_ACCEPT_DELETION={JOURNAL} git commit …" in out
    monkeypatch.setenv("VAULTKIT_ACCEPT_DELETION", JOURNAL)
    rc, out, _ = _hook(root, JOURNAL)
    assert rc == 0, out
    monkeypatch.delenv("VAULTKIT_ACCEPT_DELETION")
    git(root, "commit", "-q", "--no-verify", "-m", "the summary, the cut accepted")
    record = _accepted_record(root)
    for word in (b"Checkpoint", b"step 1 done", b"next: step"):
        assert word not in record, record
    # the next commit of the same journal: not refused again
    with open(root / JOURNAL, "a", encoding="utf-8") as fh:
        fh.write("- the evening run\n")
    store = store_of(root)
    store.snapshot()
    git(root, "add", JOURNAL)
    rc, out, _ = _hook(root, JOURNAL)
    assert rc == 0 and "VK601" not in out, out
    rc, out, _ = invoke(["history", "--format", "json"], root)
    events = [e for e in json.loads(out)["events"] if e["path"] == JOURNAL]
    assert events and all(e.get("accepted") for e in events), events
    rc, out, _ = invoke(["recover", "--all"], root)
    assert "nothing to recover" in out, out
    assert "Checkpoint 1" not in (root / JOURNAL).read_text(encoding="utf-8")
    git(root, "commit", "-q", "--no-verify", "-m", "evening")
    # new lines lost after the acceptance are refused, and only they are counted
    new = checkpoint(root, 4)
    store.snapshot()
    (root / JOURNAL).write_text("# Summary\n- a quiet day\n- the evening run\n"
                                "- the night run\n", encoding="utf-8")
    store.snapshot()
    git(root, "add", JOURNAL)
    rc, out, _ = _hook(root, JOURNAL)
    assert rc == 1 and "3 lines lost since the snapshot" in out, out
    assert "Checkpoint 4" in out and new
    # asked by id, recover still brings an accepted cut back
    rc, out, _ = invoke(["history", "--format", "json"], root)
    ids = [e["id"] for e in json.loads(out)["events"] if e.get("accepted")]
    assert len(ids) == 1, out
    rc, out, _ = invoke(["recover", ids[0]], root)
    assert rc == 0 and "Checkpoint 1" in (root / JOURNAL).read_text(encoding="utf-8"), out


def test_a_topic_note_cut_accepted_once_is_not_refused_again_another_note_still_is(
        tmp_path, monkeypatch):
    """mass-deletion: a topic note written and cut between commits, the cut accepted; the
    next commit of that note passes, a like cut of another note is still refused, and a
    new cut of the same note past the share is refused."""
    root = make(tmp_path)
    store = store_of(root)
    notes = {name: root / "memory" / "semantic" / f"{name}.md" for name in ("tools", "hosts")}
    for name, path in notes.items():
        path.write_text(f"# {name}\n\n" + "".join(f"- {name} fact {i} kept here\n"
                                                   for i in range(10)), encoding="utf-8")
    store.snapshot()
    for name, path in notes.items():
        path.write_text(f"# {name}\n\n- {name} fact 0 kept here\n", encoding="utf-8")
    store.snapshot()
    tools, hosts = "memory/semantic/tools.md", "memory/semantic/hosts.md"
    git(root, "add", tools)
    rc, out, _ = _hook(root, tools)
    assert rc == 1 and f"{tools}:1:1: VK602" in out, out
    assert f"or accept this removal: VAULTKIT_ACCEPT_DELETION={tools} git commit …" in out
    monkeypatch.setenv("VAULTKIT_ACCEPT_DELETION", tools)
    rc, out, _ = _hook(root, tools)
    assert rc == 0, out
    monkeypatch.delenv("VAULTKIT_ACCEPT_DELETION")
    git(root, "commit", "-q", "--no-verify", "-m", "tools pruned on purpose")
    assert b"fact" not in _accepted_record(root)
    with open(notes["tools"], "a", encoding="utf-8") as fh:
        fh.write("- ripgrep searches the vault\n")
    git(root, "add", tools, hosts)
    rc, out, _ = _hook(root, tools, hosts)
    assert rc == 1 and f"{tools}:" not in out and f"{hosts}:1:1: VK602" in out, out
    git(root, "reset", "-q", "--", hosts)
    rc, out, _ = _hook(root, tools)
    assert rc == 0, out
    git(root, "commit", "-q", "--no-verify", "-m", "tools")
    # a new cut of the same note, of lines written since: refused
    notes["tools"].write_text("# tools\n\n" + "".join(f"- new tool {i} in use\n"
                                                      for i in range(6)), encoding="utf-8")
    store.snapshot()
    notes["tools"].write_text("# tools\n\n- new tool 0 in use\n", encoding="utf-8")
    store.snapshot()
    git(root, "add", tools)
    rc, out, _ = _hook(root, tools)
    assert rc == 1 and f"{tools}:1:1: VK602" in out, out


def test_a_damaged_acceptance_record_is_empty_and_rebuilt(tmp_path, monkeypatch):
    root, _ = _loss_in_snapshots(tmp_path)
    (root / ".vaultkit").mkdir(exist_ok=True)
    (root / ".vaultkit" / "accepted-removals.json").write_bytes(b"{\"salt\": 12, \x00")
    git(root, "add", JOURNAL)
    rc, out, err = _hook(root, JOURNAL)
    assert rc == 1 and "9 lines lost" in out and "Traceback" not in err, (out, err)
    monkeypatch.setenv("VAULTKIT_ACCEPT_DELETION", JOURNAL)
    rc, out, err = _hook(root, JOURNAL)
    assert rc == 0 and "Traceback" not in err, (out, err)
    monkeypatch.delenv("VAULTKIT_ACCEPT_DELETION")
    assert json.loads(_accepted_record(root))["files"][JOURNAL]["lines"]
    rc, out, _ = _hook(root, JOURNAL)
    assert rc == 0, out
