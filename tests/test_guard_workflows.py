"""The guard in everyday git workflows, tried as a user (docs/snapshots.md, "The guard in
everyday git workflows"): a vault with a journal, real git, and the commands a user runs
around it. For each workflow, what the hook (`check --hook`), `vaultkit history` and
`vaultkit recover --all` answer must be the model of loss's: a commit that loses nothing
passes, one that seals a loss is refused, and all three agree on what is lost."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from cli_invoke import invoke
from test_git import git, git_env, init_repo

J = "memory/2026-12-07.md"
OTHER = "memory/semantic/tools.md"


def _vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    (root / ".obsidian").mkdir(parents=True)
    (root / "memory" / "semantic").mkdir(parents=True)
    (root / OTHER).write_text("# Tools\n\n- Tool note 0\n", encoding="utf-8")
    (root / J).write_text("# 2026-12-07\n\n### 09:00 — Start\n- Opened the billing ticket\n",
                          encoding="utf-8")
    init_repo(root)
    git(root, "add", "-A")
    git(root, "commit", "-q", "--no-verify", "-m", "first")
    return root


def _append(root: Path, text: str, rel: str = J) -> None:
    with open(root / rel, "a", encoding="utf-8") as fh:
        fh.write(text)


def _vk(root: Path, *args: str) -> tuple[int, str]:
    rc, out, err = invoke(list(args), root)
    return rc, out + err


def _hook(root: Path) -> tuple[int, str]:
    staged = git(root, "diff", "--cached", "--name-only").split()
    return _vk(root, "check", "--hook", "--select", "journal-append-only,mass-deletion",
               *staged)


def _open_losses(root: Path) -> list[dict]:
    rc, out = _vk(root, "history", "--format", "json")
    assert rc == 0, out
    data = json.loads(out)
    events = data.get("events", data) if isinstance(data, dict) else data
    return [e for e in events if not e.get("recovered") and e["kind"] != "journal-edit"
            and not e.get("accepted")]


def _merge_conflict(root: Path) -> None:
    """A journal appended to on two branches, merged: git writes its conflict markers."""
    git(root, "checkout", "-q", "-b", "side")
    _append(root, "\n### 16:00 — Side entry\n- Written on the side branch by the agent\n")
    git(root, "commit", "-q", "--no-verify", "-am", "side")
    git(root, "checkout", "-q", "main")
    _append(root, "\n### 16:05 — Main entry\n- Written on main by the human\n")
    git(root, "commit", "-q", "--no-verify", "-am", "main")
    proc = subprocess.run(["git", "merge", "-q", "side"], cwd=root, capture_output=True,
                          text=True, env=git_env())
    assert proc.returncode == 1 and "<<<<<<< HEAD" in (root / J).read_text()


def test_conflict_markers_committed_then_taken_out_is_no_loss(tmp_path):
    """A merge committed with git's conflict markers still in the journal (`git add` marks
    the conflict resolved), then the markers taken out: the markers are git's, not memory,
    and every entry of both sides stays. The commit passes, history lists no loss, and
    `recover --all` does not write the markers back."""
    root = _vault(tmp_path)
    _merge_conflict(root)
    git(root, "add", J)
    git(root, "commit", "-q", "--no-verify", "--no-edit")
    text = (root / J).read_text(encoding="utf-8")
    for marker in ("<<<<<<< HEAD\n", "=======\n", ">>>>>>> side\n"):
        text = text.replace(marker, "\n" if marker.startswith("=") else "")
    (root / J).write_text(text, encoding="utf-8")
    git(root, "add", J)
    rc, out = _hook(root)
    assert rc == 0, out
    git(root, "commit", "-q", "--no-verify", "-m", "markers out")
    assert _open_losses(root) == []
    rc, out = _vk(root, "recover", "--all")
    assert rc == 0 and "nothing to recover" in out, out
    assert "<<<<<<<" not in (root / J).read_text(encoding="utf-8")


def test_conflict_markers_taken_out_with_an_entry_is_still_refused(tmp_path):
    """The markers are no memory, but an entry resolved away with them is: the hook still
    refuses the entry HEAD holds, naming it, not a marker."""
    root = _vault(tmp_path)
    _merge_conflict(root)
    git(root, "add", J)
    git(root, "commit", "-q", "--no-verify", "--no-edit")
    text = (root / J).read_text(encoding="utf-8")
    text = text.replace("<<<<<<< HEAD\n", "").replace(">>>>>>> side\n", "")
    text = text.replace("=======\n", "").replace("- Written on main by the human\n", "")
    (root / J).write_text(text, encoding="utf-8")
    git(root, "add", J)
    rc, out = _hook(root)
    assert rc == 1 and "Written on main by the human" in out, out
    assert "<<<<<<<" not in out and "=======" not in out, out


def test_a_line_that_only_quotes_a_marker_is_still_a_loss(tmp_path):
    """Only whole marker lines are left out of the judgement: a journal line that quotes
    one is memory like any other, in a journal that holds markers too."""
    root = _vault(tmp_path)
    _merge_conflict(root)
    _append(root, "\n### 10:00 — Notes\n- Found a stray ======= in config.yaml after it\n")
    git(root, "add", J)
    git(root, "commit", "-q", "--no-verify", "--no-edit")
    text = (root / J).read_text(encoding="utf-8").replace(
        "- Found a stray ======= in config.yaml after it\n", "")
    (root / J).write_text(text, encoding="utf-8")
    git(root, "add", J)
    rc, out = _hook(root)
    assert rc == 1 and "Found a stray" in out, out


@pytest.mark.parametrize("line", [">>>>>>> Vendor: the API key rotates on the 1st",
                                  "<<<<<<< ask Dana before the 1st"])
def test_a_marker_shaped_line_outside_a_conflict_is_still_a_loss(tmp_path, line):
    """Only the lines of a conflict as git writes it (opened, split by `=======`, closed) are
    git's: a line of the owner's that starts like a marker (an email quoted seven deep), in
    a journal that holds a conflict too, is memory, and removing it is refused."""
    root = _vault(tmp_path)
    _merge_conflict(root)
    _append(root, f"\n### 10:00 — Notes\n{line}\n")
    git(root, "add", J)
    git(root, "commit", "-q", "--no-verify", "--no-edit")
    text = (root / J).read_text(encoding="utf-8").replace(line + "\n", "")
    (root / J).write_text(text, encoding="utf-8")
    git(root, "add", J)
    rc, out = _hook(root)
    assert rc == 1 and line[8:] in out, out


def _entry_on_a_feature_branch(tmp_path):
    """A vault snapshotted on main, then on a new branch `feature` checked out with an
    entry appended to the journal and snapshotted again (not committed)."""
    root = _vault(tmp_path)
    rc, out = _vk(root, "snapshot", "--quiet")
    assert rc == 0, out
    git(root, "checkout", "-q", "-b", "feature")
    _append(root, "\n### 17:00 — Feature entry\n- Written on the feature branch only\n")
    rc, out = _vk(root, "snapshot", "--quiet")
    assert rc == 0, out
    return root


def test_an_entry_on_another_branch_is_not_lost_when_you_switch_back(tmp_path):
    """An entry committed on a branch, a snapshot taken there, then back on main (whose
    journal never had it) with a snapshot: the branch holds the lines, so nothing is lost.
    The hook says nothing, and history and `recover --all` agree with it: no loss listed,
    main's journal left as it is (not given the branch's entry)."""
    root = _entry_on_a_feature_branch(tmp_path)
    git(root, "commit", "-q", "--no-verify", "-am", "feature")
    git(root, "checkout", "-q", "main")
    rc, out = _vk(root, "snapshot", "--quiet")
    assert rc == 0, out
    before = (root / J).read_text(encoding="utf-8")
    _append(root, "- Tool note 1\n", OTHER)
    git(root, "add", OTHER)
    rc, out = _hook(root)
    assert rc == 0 and "VK601" not in out, out
    assert _open_losses(root) == [], _open_losses(root)
    rc, out = _vk(root, "recover", "--all")
    assert rc == 0 and "nothing to recover" in out, out
    assert (root / J).read_text(encoding="utf-8") == before


@pytest.mark.parametrize("how", ["deleted", "reset"])
def test_an_entry_only_a_snapshot_held_is_still_listed_and_recovered(tmp_path, how):
    """The counterpart: the same switch back, but the branch is gone (deleted) or the
    entry was never committed (`git reset --hard`): no commit holds the lines, so they are
    a loss, listed and brought back."""
    root = _entry_on_a_feature_branch(tmp_path)
    if how == "deleted":
        git(root, "commit", "-q", "--no-verify", "-am", "feature")
        git(root, "checkout", "-q", "main")
        git(root, "branch", "-q", "-D", "feature")
        git(root, "reflog", "expire", "--expire=now", "--all")
    else:
        git(root, "reset", "-q", "--hard")
        git(root, "checkout", "-q", "main")
    rc, out = _vk(root, "snapshot", "--quiet")
    assert rc == 0, out
    assert len(_open_losses(root)) == 1
    rc, out = _vk(root, "recover", "--all")
    assert rc == 0, out
    assert "- Written on the feature branch only" in (root / J).read_text(encoding="utf-8")


def test_an_entry_lost_here_is_recovered_whole_when_another_branch_has_a_line_like_it(tmp_path):
    """Another branch's journal holds a line of the same text ("- Smoke tests green") in an
    entry of its own; the entry written here and lost from the work tree is still lost
    whole: history lists all its lines and `recover --all` brings all of them back."""
    root = _vault(tmp_path)
    git(root, "checkout", "-q", "-b", "old-release")
    _append(root, "\n### 08:00 — Hotfix\n- Smoke tests green\n")
    git(root, "commit", "-q", "--no-verify", "-am", "hotfix")
    git(root, "checkout", "-q", "main")
    entry = "\n### 14:00 — Release v2\n- Smoke tests green\n- Rolled out to 10% of users\n"
    _append(root, entry)
    rc, out = _vk(root, "snapshot", "--quiet")
    assert rc == 0, out
    git(root, "checkout", "-q", "--", J)  # the entry overwritten by HEAD's journal
    rc, out = _vk(root, "snapshot", "--quiet")
    assert rc == 0, out
    losses = _open_losses(root)
    assert [e["lines"] for e in losses] == [3], losses
    rc, out = _vk(root, "recover", "--all")
    assert rc == 0, out
    assert (root / J).read_text(encoding="utf-8").endswith(entry)


def _autostash_merge(root: Path) -> None:
    """`git merge --autostash` (or `merge.autoStash`) with an uncommitted entry a snapshot
    saw: git sets the entry aside in MERGE_AUTOSTASH, not `refs/stash`, and the journal
    conflicts with the other branch's entry."""
    git(root, "checkout", "-q", "-b", "side")
    _append(root, "\n### 11:00 — Side entry\n- Written on the side branch\n")
    git(root, "commit", "-q", "--no-verify", "-am", "side")
    git(root, "checkout", "-q", "main")
    _append(root, "\n### 11:30 — Main entry\n- Written on main\n")
    git(root, "commit", "-q", "--no-verify", "-am", "main")
    _append(root, "\n### 12:00 — Not committed\n- Only the autostash holds this line\n")
    rc, out = _vk(root, "snapshot", "--quiet")
    assert rc == 0, out
    proc = subprocess.run(["git", "merge", "--autostash", "side"], cwd=root,
                          capture_output=True, text=True, env=git_env())
    assert proc.returncode == 1 and (root / ".git" / "MERGE_AUTOSTASH").is_file(), proc.stdout


def _markers_out(root: Path) -> None:
    text = (root / J).read_text(encoding="utf-8")
    (root / J).write_text("".join(line for line in text.splitlines(keepends=True)
                                  if not line.startswith(("<<<<<<<", "=======", ">>>>>>>"))),
                          encoding="utf-8")


def test_a_merge_with_an_autostash_is_not_refused_for_the_stashed_entry(tmp_path):
    """The conflict resolved with both sides kept and committed: the uncommitted entry
    is in MERGE_AUTOSTASH, which the merge's commit applies, so nothing is lost; the hook
    passes, history lists nothing and `recover --all` writes nothing (it would be written
    twice once git applies the autostash). The commit then brings the entry back."""
    root = _vault(tmp_path)
    _autostash_merge(root)
    _markers_out(root)
    git(root, "add", J)
    rc, out = _hook(root)
    assert rc == 0 and "VK601" not in out, out
    assert _open_losses(root) == [], _open_losses(root)
    rc, out = _vk(root, "recover", "--all", "--dry-run")
    assert rc == 0 and "nothing to recover" in out, out
    git(root, "commit", "-q", "--no-verify", "--no-edit")
    assert "- Only the autostash holds this line" in (root / J).read_text(encoding="utf-8")


def test_a_merge_with_an_autostash_that_drops_a_committed_entry_is_still_refused(tmp_path):
    """The autostash holds the uncommitted entry, not HEAD's: a resolution that keeps
    only the other side's entry still loses main's committed one and is refused."""
    root = _vault(tmp_path)
    _autostash_merge(root)
    git(root, "checkout", "--theirs", J)
    git(root, "add", J)
    rc, out = _hook(root)
    assert rc == 1 and "VK601" in out and "Main entry" in out, out


def test_a_rebase_with_an_autostash_stopped_for_an_amend_is_not_refused(tmp_path):
    """`git rebase -i --autostash` stopped at an `edit`: the uncommitted entry is in
    `rebase-merge/autostash`, and the journal of the commit being amended lacks it. An
    entry added and committed with `git commit --amend` there loses nothing."""
    root = _vault(tmp_path)
    _append(root, "\n### 10:00 — Committed\n- An entry committed before the rebase\n")
    git(root, "commit", "-q", "--no-verify", "-am", "entry")
    _append(root, "- Tool note 1\n", OTHER)
    git(root, "commit", "-q", "--no-verify", "-am", "tools")
    _append(root, "\n### 12:00 — Not committed\n- Only the autostash holds this line\n")
    rc, out = _vk(root, "snapshot", "--quiet")
    assert rc == 0, out
    env = dict(git_env(), GIT_SEQUENCE_EDITOR="sed -i -e 1s/^pick/edit/")
    proc = subprocess.run(["git", "rebase", "-q", "-i", "--autostash", "HEAD~2"], cwd=root,
                          capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    assert (root / ".git" / "rebase-merge" / "autostash").is_file()
    _append(root, "- A line added while the rebase stopped\n")
    git(root, "add", J)
    rc, out = _hook(root)
    assert rc == 0 and "VK601" not in out, out
    assert _open_losses(root) == [], _open_losses(root)


def test_a_committed_entry_cut_while_a_stash_holds_the_journal_is_refused(tmp_path):
    """`git stash` of an uncommitted entry, then a committed entry cut from the journal
    and staged: the stash was made on HEAD, so its journal holds HEAD's lines, but it did
    not take them out of the work tree; they are lost, and the hook refuses as `history`
    lists the commit's loss. The stashed entry itself still counts as held."""
    root = _vault(tmp_path)
    _append(root, "\n### 10:00 — Committed\n- An entry committed before the stash\n")
    git(root, "commit", "-q", "--no-verify", "-am", "entry")
    _append(root, "\n### 12:00 — Stashed\n- Only the stash holds this line\n")
    rc, out = _vk(root, "snapshot", "--quiet")
    assert rc == 0, out
    git(root, "stash", "-q")
    _append(root, "- Tool note 1\n", OTHER)
    git(root, "add", OTHER)
    rc, out = _hook(root)  # the stashed entry is held: not even a warning
    assert rc == 0 and "VK601" not in out, out
    git(root, "commit", "-q", "--no-verify", "-m", "tools")
    (root / J).write_text(git(root, "show", f"HEAD~2:{J}"), encoding="utf-8")
    git(root, "add", J)
    rc, out = _hook(root)
    assert rc == 1 and "VK601" in out and "Committed" in out, out


def test_a_revert_committed_with_the_removal_accepted_is_not_listed_as_a_loss(tmp_path,
                                                                             monkeypatch):
    """`git revert --no-commit` of the commit that added an entry, then `git commit`: the
    hook refuses (HEAD's lines), the owner says the removal is on purpose with
    VAULTKIT_ACCEPT_DELETION. From then on the revert is an accepted removal in `history`
    too (as between commits), and `recover --all` does not write the entry back; `recover
    ID` still does when asked."""
    root = _vault(tmp_path)
    _append(root, "\n### 11:00 — Wrong\n- An entry written in the wrong journal\n")
    git(root, "commit", "-q", "--no-verify", "-am", "wrong")
    git(root, "revert", "--no-commit", "HEAD")
    rc, out = _hook(root)
    assert rc == 1 and "VAULTKIT_ACCEPT_DELETION" in out, out
    monkeypatch.setenv("VAULTKIT_ACCEPT_DELETION", J)
    rc, out = _hook(root)
    assert rc == 0, out
    monkeypatch.delenv("VAULTKIT_ACCEPT_DELETION")
    git(root, "commit", "-q", "--no-verify", "-m", "revert")
    assert _open_losses(root) == [], _open_losses(root)
    rc, out = _vk(root, "history", "--format", "json")
    data = json.loads(out)
    events = data.get("events", data) if isinstance(data, dict) else data
    assert [e.get("accepted") for e in events] == [True], events
    rc, out = _vk(root, "recover", "--all")
    assert rc == 0 and "nothing to recover" in out, out
    assert "Wrong" not in (root / J).read_text(encoding="utf-8")
    rc, out = _vk(root, "recover", events[0]["id"])
    assert rc == 0, out
    assert "- An entry written in the wrong journal" in (root / J).read_text(encoding="utf-8")


COPY = "memory/2026-12-07.sync-conflict-20261207-213000-ABCDEFG.md"


@pytest.mark.parametrize("copy", [COPY, "memory/2026-12-07 (conflict 2026-12-07).md"])
@pytest.mark.parametrize("unique", [False, True])
def test_a_conflict_copy_deleted_once_the_journal_holds_its_lines_is_no_loss(tmp_path, copy,
                                                                           unique):
    """A sync tool's conflict copy of the journal (Syncthing's `.sync-conflict-…`, or
    `(conflict …)`) is snapshotted; the owner merges its own entry into the journal (or it
    had none: the same lines as the journal) and deletes the copy. Nothing is lost: every
    line is in the journal. The hook passes, and history, the audit and `recover --all`
    agree (they listed a note deleted, not recovered, and `recover --all` wrote the copy
    back, which journal-filename then refuses). A copy deleted with an entry of its own the
    journal lacks is still a loss."""
    root = _vault(tmp_path)
    entry = "\n### 21:40 — From the laptop\n- Booked the offsite venue for January\n"
    (root / copy).write_text((root / J).read_text(encoding="utf-8") + (entry if unique
                                                                       else ""),
                             encoding="utf-8")
    rc, out = _vk(root, "snapshot", "--quiet")
    assert rc == 0, out
    if unique:
        _append(root, entry)
        rc, out = _vk(root, "snapshot", "--quiet")
        assert rc == 0, out
    (root / copy).unlink()
    git(root, "add", "-A")
    rc, out = _hook(root)
    assert rc == 0 and "VK60" not in out, out
    assert _open_losses(root) == [], _open_losses(root)
    rc, out = _vk(root, "recover", "--all")
    assert rc == 0 and "nothing to recover" in out, out
    assert not (root / copy).exists()


def test_a_conflict_copy_deleted_with_an_entry_the_journal_lacks_is_a_loss(tmp_path):
    """The counterpart: the copy's own entry never went into the journal, so deleting the
    copy loses it: listed, and `recover --all` brings the copy back."""
    root = _vault(tmp_path)
    (root / COPY).write_text((root / J).read_text(encoding="utf-8")
                             + "\n### 21:40 — From the laptop\n- Booked the offsite venue\n",
                             encoding="utf-8")
    rc, out = _vk(root, "snapshot", "--quiet")
    assert rc == 0, out
    (root / COPY).unlink()
    losses = _open_losses(root)
    assert [(e["kind"], e["path"]) for e in losses] == [("note-deleted", COPY)], losses
    rc, out = _vk(root, "recover", "--all")
    assert rc == 0, out
    assert "- Booked the offsite venue" in (root / COPY).read_text(encoding="utf-8")


NEW = "memory/2026-12-08.md"


@pytest.mark.parametrize("dropped", [False, True])
def test_a_new_journal_taken_into_a_stash_with_its_untracked_files_is_not_lost(tmp_path,
                                                                             dropped):
    """A new journal, never committed, snapshotted, then `git stash -u` (the untracked
    files too) and a commit of another note: the stash holds the journal, as history and
    `recover --all` said, yet the hook refused the commit ("journal deleted since the
    snapshot ... no commit does"): it did not look in a stash for a journal gone from the
    disk. Once the stash is dropped, the journal is lost: refused, and listed."""
    root = _vault(tmp_path)
    (root / NEW).write_text("# 2026-12-08\n\n### 09:00 — Next day\n- Deployed billing v2\n",
                            encoding="utf-8")
    rc, out = _vk(root, "snapshot", "--quiet")
    assert rc == 0, out
    git(root, "stash", "push", "-q", "-u")
    assert not (root / NEW).exists()
    if dropped:
        git(root, "stash", "drop", "-q")
    _append(root, "- Tool note 1\n", OTHER)
    git(root, "add", OTHER)
    rc, out = _hook(root)
    if dropped:
        assert rc == 1 and f"{NEW}:1:1: VK601" in out and "journal deleted" in out, out
        assert [e["path"] for e in _open_losses(root)] == [NEW]
        return
    assert rc == 0 and "VK601" not in out, out
    assert _open_losses(root) == [], _open_losses(root)
    rc, out = _vk(root, "recover", "--all")
    assert rc == 0 and "nothing to recover" in out, out
    git(root, "stash", "pop", "-q")
    assert "- Deployed billing v2" in (root / NEW).read_text(encoding="utf-8")


# -- formatters and editors in front of the hook ------------------------------------------

FORMATTED = Path(__file__).parent / "data" / "formatters"  # README.md there: which tool wrote each
TOOLS = sorted(p.stem for p in FORMATTED.glob("*.md") if p.stem not in ("original", "README"))
# an editor's save, byte for byte: (the journal as committed, as saved)
_SAME = bytes
_CRLF = lambda b: b.replace(b"\n", b"\r\n")  # noqa: E731
_BOM = lambda b: b"\xef\xbb\xbf" + b  # noqa: E731
EDITORS = {
    "tabs-to-spaces": (_SAME, lambda b: b.expandtabs(4)),
    "lf-to-crlf": (_SAME, _CRLF),
    "crlf-to-lf": (_CRLF, _SAME),
    "bom-added": (_SAME, _BOM),
    "bom-removed": (_BOM, _SAME),
    "final-newline-removed": (_SAME, lambda b: b.rstrip(b"\n")),
    "trailing-spaces-removed": (_SAME, lambda b: b"\n".join(line.rstrip()
                                                            for line in b.split(b"\n"))),
}
# a real loss on top of the reformat, and the committed line the refusal must name
LOSSES = {
    "entry-cut": (lambda t: t[:t.index("### 16:05")], "### 16:05 — Notes from reading"),
    "bullet-removed": (lambda t: "".join(line for line in t.splitlines(keepends=True)
                                         if "db-2" not in line),
                       "- Disk on db-2 at 81%; warn threshold is 85%."),
    "value-replaced": (lambda t: __import__("re").sub(r"no\s+customer\s+impact",
                                                      "postponed to next week", t),
                       "**Outcome:** no customer impact"),
}


def _reformatted(tmp_path: Path, how: str) -> Path:
    """A vault whose journal (FORMATTED/original.md) is committed, then rewritten by a
    formatter (its recorded output) or an editor's save, and staged."""
    root = _vault(tmp_path)
    original = (FORMATTED / "original.md").read_bytes()
    committed, saved = EDITORS.get(how, (_SAME, None))
    (root / J).write_bytes(committed(original))
    git(root, "commit", "-q", "--no-verify", "--amend", "-am", "first")
    if saved is not None:
        (root / J).write_bytes(saved(original))
    else:
        (root / J).write_bytes((FORMATTED / f"{how}.md").read_bytes())
    assert (root / J).read_bytes() != committed(original)
    git(root, "add", J)
    return root


@pytest.mark.parametrize("how", TOOLS + sorted(EDITORS))
def test_a_journal_a_formatter_or_an_editor_rewrote_loses_nothing(tmp_path, how):
    """mdformat, prettier, markdownlint-cli2, rumdl and pre-commit-hooks' fixers rewrite
    list and emphasis markers, escapes, headings, tables, spacing and line breaks, and
    re-wrap paragraphs; an editor turns tabs into spaces, changes line endings, adds a
    BOM. The words stay, in their order: the hook passes, and history and `recover
    --all` find nothing lost. (mdformat, prettier --prose-wrap always and rumdl were
    refused: their lines were taken for cut ones.)"""
    root = _reformatted(tmp_path, how)
    rc, out = _hook(root)
    assert rc == 0 and "VK601" not in out and "VK6" not in out, out
    assert _open_losses(root) == [], _open_losses(root)
    rc, out = _vk(root, "recover", "--all")
    assert rc == 0 and "nothing to recover" in out, out


@pytest.mark.parametrize("loss", sorted(LOSSES))
@pytest.mark.parametrize("how", TOOLS + sorted(EDITORS))
def test_a_reformat_with_a_real_loss_is_still_refused_naming_the_line(tmp_path, how, loss):
    """The same reformat with an entry cut, a bullet removed or a record's value replaced:
    refused, the finding quoting the committed line lost; `recover --all` puts it back."""
    root = _reformatted(tmp_path, how)
    cut, lost = LOSSES[loss]
    raw = (root / J).read_bytes()
    text = cut(raw.decode("utf-8"))
    assert text.encode("utf-8") != raw
    (root / J).write_bytes(text.encode("utf-8"))
    git(root, "add", J)
    rc, out = _hook(root)
    assert rc == 1 and f"{J}:" in out and "VK601" in out, out
    assert f"HEAD: {lost!r}" in out, out
    assert [e["path"] for e in _open_losses(root)] == [J], _open_losses(root)
    rc, out = _vk(root, "recover", "--all")
    assert rc == 0, out
    assert lost in (root / J).read_text(encoding="utf-8")
