"""`vaultkit check --hook` checks what the commit will hold: the index's blob of each staged
path, not the work tree's text (docs/security.md, "What the hook reads"). A credential
staged and then deleted from the file, without staging that, is still in the commit; run
outside pre-commit (which stashes unstaged changes first) the hook must see it."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_invoke import invoke
from test_git import commit_all, git, init_repo, write

NOTE = "memory/semantic/deploys.md"
J = "memory/2026-12-07.md"
# a GitHub token of the documented shape (ghp_ and 36 characters), made up
TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
WITH = f"# Deploys\n\nThe deploy bot's key is {TOKEN} for now.\n"
WITHOUT = "# Deploys\n\nThe deploy bot's key is in the runtime's config.\n"
JOURNAL = ("# 2026-12-07\n\n### 09:00 — Release\n- Deployed v1.2 to production\n"
           "- Smoke tests green\n")


@pytest.fixture
def vault(tmp_path) -> Path:
    root = init_repo(tmp_path / "vault")
    write(root, ".obsidian/app.json", "{}")
    write(root, "MEMORY.md", "# Memory\n\n- Deploys are on Tuesdays\n")
    write(root, J, JOURNAL)
    commit_all(root)
    return root


def hook(root: Path, *paths: str, cache: bool = False) -> tuple[int, str]:
    rc, out, err = invoke(["check", "--hook", *([] if cache else ["--no-cache"]),
                           "--select", "secret-in-memory,journal-append-only,file-unreadable",
                           *paths], root)
    assert TOKEN not in out + err  # never the credential itself
    return rc, out + err


def stage_bytes(root: Path, rel: str, data: bytes) -> None:
    """Put ``data`` in the index for ``rel`` without touching the work tree (`git add -p`)."""
    import subprocess

    from test_git import git_env

    oid = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=root, input=data,
                         capture_output=True, env=git_env(), check=True).stdout.decode().strip()
    git(root, "update-index", "--add", "--cacheinfo", f"100644,{oid},{rel}")


def test_a_credential_staged_then_deleted_from_the_file_is_refused(vault):
    write(vault, NOTE, WITH)
    git(vault, "add", NOTE)
    write(vault, NOTE, WITHOUT)  # taken out of the file, not out of the index
    rc, out = hook(vault, NOTE)
    assert rc == 1, out
    assert f"{NOTE}:3:25: VK701 secret-in-memory error: GitHub token (ghp_…Q7r8)" in out, out
    assert "checked as staged (what the commit holds; the work tree differs): " + NOTE in out
    git(vault, "add", NOTE)  # staged as the file is now: the commit holds no token
    rc, out = hook(vault, NOTE)
    assert rc == 0 and "VK701" not in out and "checked as staged" not in out, out


def test_a_credential_only_the_work_tree_holds_does_not_block(vault):
    write(vault, NOTE, WITHOUT)
    git(vault, "add", NOTE)
    write(vault, NOTE, WITH)  # not staged: the commit does not hold it
    rc, out = hook(vault, NOTE)
    assert rc == 0 and "VK701" not in out, out


def test_partial_staging_both_ways_reports_the_staged_text_with_its_line_numbers(vault):
    # the index: a line the work tree no longer has, and the token on line 5; the work
    # tree: that line gone, and a line the index does not have yet
    staged = f"# Deploys\n\n- Tuesday\n- Friday\n{TOKEN} was the old key\n"
    write(vault, NOTE, staged)
    git(vault, "add", NOTE)
    write(vault, NOTE, "# Deploys\n\n- Tuesday\n- Wednesday\n- the old key is rotated\n")
    rc, out = hook(vault, NOTE)
    assert rc == 1 and f"{NOTE}:5:1: VK701 secret-in-memory" in out, out


def test_a_journal_line_partial_staging_left_in_the_work_tree_is_not_lost(vault):
    # `git add -p` of a committed line's removal that the work tree still holds: not a
    # loss (the model of loss); the staged text is checked, the work tree still holds it
    stage_bytes(vault, J, JOURNAL.replace("- Smoke tests green\n", "").encode())
    with open(vault / J, "a", encoding="utf-8") as fh:
        fh.write("\n### 10:00 — Later\n- Wrote the notes\n")
    rc, out = hook(vault, J)
    assert rc == 0 and "VK601" not in out, out
    # and a committed line gone from both is refused, at its line in the staged text
    write(vault, J, JOURNAL.replace("- Smoke tests green", "- A summary of the day"))
    stage_bytes(vault, J, JOURNAL.replace("- Smoke tests green", "- Summary").encode())
    rc, out = hook(vault, J)
    assert rc == 1 and f"{J}:5:1: VK601 journal-append-only error: line 5 differs" in out, out
    assert "staged: '- Summary'" in out, out


def test_a_staged_deletion_is_not_checked_as_a_note(vault):
    write(vault, NOTE, WITH)
    commit_all(vault)  # (a token committed earlier: the commit being made removes it)
    git(vault, "rm", "-q", "--cached", NOTE)  # deleted from the index, kept on disk
    rc, out = hook(vault, NOTE)
    assert rc == 0 and "VK701" not in out, out
    git(vault, "add", NOTE)
    git(vault, "rm", "-q", NOTE)  # deleted from both: nothing to read, no traceback
    rc, out = hook(vault, NOTE)
    assert rc == 0 and "Traceback" not in out, out


def test_a_file_deleted_from_the_work_tree_but_staged_is_checked_as_staged(vault):
    write(vault, NOTE, WITH)
    git(vault, "add", NOTE)
    (vault / NOTE).unlink()  # the commit still holds the staged file
    rc, out = hook(vault, NOTE)
    assert rc == 1 and f"{NOTE}:3:25: VK701 secret-in-memory" in out, out


def test_a_staged_file_with_a_byte_order_mark_and_crlf(vault):
    stage_bytes(vault, NOTE, b"\xef\xbb\xbf" + WITH.replace("\n", "\r\n").encode())
    write(vault, NOTE, WITHOUT)
    rc, out = hook(vault, NOTE)
    assert rc == 1 and f"{NOTE}:3:25: VK701 secret-in-memory" in out, out


def test_staged_bytes_that_are_not_utf8_are_a_finding_not_a_traceback(vault):
    stage_bytes(vault, NOTE, b"# Deploys\n\nkey \xff\xfe\n")
    write(vault, NOTE, WITHOUT)
    rc, out = hook(vault, NOTE)
    assert "Traceback" not in out
    assert rc == 1 and f"{NOTE}:" in out and "not valid UTF-8" in out, out


def test_the_warm_answer_is_the_fresh_one(vault):
    write(vault, NOTE, WITH)
    git(vault, "add", NOTE)
    write(vault, NOTE, WITHOUT)
    fresh = hook(vault, NOTE)
    assert hook(vault, NOTE, cache=True) == fresh
    assert hook(vault, NOTE, cache=True) == fresh  # (warm: the cache written by the first)
    git(vault, "add", NOTE)  # the index as the file: the warm answer follows
    fresh = hook(vault, NOTE)
    assert fresh[0] == 0
    assert hook(vault, NOTE, cache=True) == fresh


def test_many_staged_paths_are_read_from_one_listing_of_the_index(vault):
    # (past a few dozen paths the index is listed whole, not path by path)
    paths = [f"memory/semantic/n{i:03d}.md" for i in range(80)]
    for path in paths:
        write(vault, path, f"# N\n\n- note {path}\n")
    git(vault, "add", "-A")
    write(vault, paths[-1], WITH)  # the work tree only: not in the commit
    write(vault, paths[0], WITH)
    git(vault, "add", paths[0])
    write(vault, paths[0], WITHOUT)  # staged, then taken out of the file
    write(vault, "memory/semantic/untracked.md", WITH)  # not staged at all
    rc, out = hook(vault, *paths, "memory/semantic/untracked.md")
    assert rc == 1, out
    assert f"{paths[0]}:3:25: VK701" in out and paths[-1] + ":" not in out, out
    assert "untracked.md:" not in out, out


def test_an_empty_file_staged_is_checked_empty_not_as_the_work_tree(vault):
    # the empty blob's id is also an intent-to-add entry's; a file staged empty is in the
    # commit empty, so a credential written to it since does not block
    write(vault, NOTE, "")
    git(vault, "add", NOTE)
    write(vault, NOTE, WITH)
    rc, out = hook(vault, NOTE)
    assert rc == 0 and "VK701" not in out, out
    assert "checked as staged (what the commit holds; the work tree differs): " + NOTE in out
    assert hook(vault, NOTE, cache=True) == (rc, out)
    # an intent-to-add entry has nothing staged yet: the work tree, as before
    write(vault, J.replace("07", "08"), f"# 2026-12-08\n\n- key {TOKEN}\n")
    git(vault, "add", "-N", J.replace("07", "08"))
    rc, out = hook(vault, NOTE, J.replace("07", "08"))
    assert rc == 1 and "VK701" in out and NOTE + ":" not in out, out
