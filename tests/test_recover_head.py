"""`vaultkit recover` treats HEAD as the last known good version of each journal: committed
lines the work tree lost since HEAD come back even when no snapshot ever saw them lost
(docs/snapshots.md, "History and recover"). Judged by the one model of loss: an edit of a
committed line is not a loss and is never "restored"; a line the index or a stash holds is
not lost; `recover --all` twice is once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_invoke import invoke
from test_git import commit_all, git, init_repo, write

J = "memory/2026-12-07.md"
JOURNAL = ("# 2026-12-07\n\n### 09:00 — Release\n- Deployed v1.2 to production\n"
           "- Smoke tests green\n- Rollback plan written down\n")


@pytest.fixture
def vault(tmp_path) -> Path:
    root = init_repo(tmp_path / "vault")
    write(root, ".obsidian/app.json", "{}")
    write(root, J, JOURNAL)
    commit_all(root)
    return root


def vaultkit(root: Path, *args: str) -> tuple[int, str]:
    rc, out, err = invoke(list(args), root)
    return rc, out + err


def hook(root: Path) -> tuple[int, str]:
    return vaultkit(root, "check", "--hook", "--no-cache", "--select", "journal-append-only", J)


def test_a_committed_line_overwritten_before_any_snapshot_is_refused_and_recovered(vault):
    written = JOURNAL.replace("- Smoke tests green", "- Summary: release and review done")
    write(vault, J, written)
    git(vault, "add", J)
    rc, out = hook(vault)
    assert rc == 1 and "its content is gone, not edited" in out, out
    assert "bring the committed lines back with `vaultkit recover --all`" in out, out
    assert "then stage the journal again" in out, out

    rc, out = vaultkit(vault, "history")
    assert rc == 0 and "work tree  journal-rewrite  " + J in out, out
    assert "1 not recovered" in out, out
    rc, out = vaultkit(vault, "history", "--format", "json")
    event = json.loads(out[:out.rindex("}") + 1])["events"][0]
    assert event["source"] == "work-tree" and event["lines"] == 1, event

    rc, out = vaultkit(vault, "recover", "--all")
    assert rc == 0 and "lost from the work tree since HEAD" in out, out
    assert f"put back 1 line where it stood in {J}" in out, out
    text = (vault / J).read_text(encoding="utf-8")
    # back where it stood, before what was written in its place (watch's undo)
    assert text == JOURNAL.replace("- Smoke tests green\n", "- Smoke tests green\n"
                                   "- Summary: release and review done\n"), text
    rc, again = vaultkit(vault, "recover", "--all")
    assert rc == 0 and "nothing to recover" in again, again
    assert (vault / J).read_text(encoding="utf-8") == text  # twice is once
    git(vault, "add", J)
    assert hook(vault)[0] == 0
    rc, out = vaultkit(vault, "history")
    assert "work tree" not in out, out


def test_an_edit_of_a_committed_line_is_not_restored(vault):
    # a typo fixed (an edit, kept) and another committed line cut (a loss, brought back)
    write(vault, J, JOURNAL.replace("Deployed v1.2", "Deployed v1.3")
          .replace("- Rollback plan written down\n", "") + "\n### 10:00 — Next\n- Wrote it\n")
    rc, out = vaultkit(vault, "recover", "--all")
    assert rc == 0, out
    text = (vault / J).read_text(encoding="utf-8")
    assert "- Deployed v1.3 to production" in text and "v1.2" not in text, text
    assert text.count("- Rollback plan written down") == 1
    assert text.index("- Rollback plan written down") < text.index("### 10:00 — Next")
    git(vault, "add", J)
    assert hook(vault)[0] == 0
    # an edit alone is nothing to recover
    commit_all(vault)
    write(vault, J, text.replace("- Wrote it", "- Wrote it down"))
    rc, out = vaultkit(vault, "recover", "--all")
    assert "nothing to recover" in out, out
    assert "- Wrote it\n" not in (vault / J).read_text(encoding="utf-8")


def test_lines_the_staged_journal_holds_are_not_lost(vault):
    # `git add -p` of an appended entry: the index holds every committed line, and the
    # work tree lost one since (an older version staged keeps it: git's to keep)
    appended = JOURNAL + "\n### 10:00 — Next\n- Wrote it\n"
    write(vault, J, appended)
    git(vault, "add", J)
    write(vault, J, appended.replace("- Smoke tests green\n", ""))
    rc, out = vaultkit(vault, "recover", "--all")
    assert rc == 0 and "nothing to recover" in out, out
    git(vault, "reset", "-q")  # the index back to HEAD's copy, which holds nothing new
    rc, out = vaultkit(vault, "recover", "--all")
    assert rc == 0 and "lost from the work tree since HEAD" in out, out
    assert (vault / J).read_text(encoding="utf-8") == appended


def test_a_journal_without_git_changes_or_history_is_left_alone(tmp_path):
    root = tmp_path / "plain"
    write(root, ".obsidian/app.json", "{}")
    write(root, J, JOURNAL)
    rc, out = vaultkit(root, "recover", "--all")
    assert rc == 0 and "nothing to recover" in out, out
    assert (root / J).read_text(encoding="utf-8") == JOURNAL


def test_nothing_to_put_back_leaves_an_appended_journal_byte_for_byte():
    # (a journal appended to HEAD without a blank line, named by a recovered event: the
    # run that has nothing to bring back does not add one)
    from vaultkit.memory.recover import _placed

    head = "# 2026-12-07\n\n### 09:00 — Release\n- Deployed v1.2 to production\n"
    text = head + "- Smoke tests green\n"
    assert _placed(text, head, []) == (text, [], False)
