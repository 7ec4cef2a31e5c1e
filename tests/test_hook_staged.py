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


# -- end-of-line conversion: CRLF in the work tree, LF staged (git-config(1) core.autocrlf,
# gitattributes(5) text/eol): the commit's text is the work tree's, not a difference

CRLF_JOURNAL = JOURNAL.replace("\n", "\r\n")


@pytest.mark.parametrize("setup", ["autocrlf", "text-attribute"])
def test_a_crlf_file_git_stages_as_lf_is_checked_as_the_work_tree(vault, setup):
    if setup == "autocrlf":
        git(vault, "config", "core.autocrlf", "true")
    else:
        write(vault, ".gitattributes", "*.md text\n")
    journal = J.replace("07", "08")
    write(vault, journal, CRLF_JOURNAL.replace("07", "08") + f"- key {TOKEN}\r\n")
    git(vault, "add", journal)
    assert "\r" not in git(vault, "show", f":{journal}")  # (git stored LF)
    rc, out = hook(vault, journal)
    assert "checked as staged" not in out, out
    # the work tree's check's findings, cold and warm
    rc2, out2, err2 = invoke(["check", "--no-cache", "--select",
                              "secret-in-memory,journal-append-only,file-unreadable", journal],
                             vault)
    assert rc == rc2 == 1 and f"{journal}:6:7: VK701 secret-in-memory" in out, out
    assert [x for x in out.splitlines() if x.startswith(journal)] == \
        [x for x in (out2 + err2).splitlines() if x.startswith(journal)]
    assert hook(vault, journal, cache=True) == (rc, out)
    assert hook(vault, journal, cache=True) == (rc, out)


def test_a_crlf_credential_staged_then_deleted_is_still_checked_as_staged(vault):
    git(vault, "config", "core.autocrlf", "true")
    write(vault, NOTE, WITH.replace("\n", "\r\n"))
    git(vault, "add", NOTE)
    write(vault, NOTE, WITHOUT.replace("\n", "\r\n"))  # a real difference, not an EOL one
    rc, out = hook(vault, NOTE)
    assert rc == 1 and f"{NOTE}:3:25: VK701 secret-in-memory" in out, out
    assert "checked as staged (what the commit holds; the work tree differs): " + NOTE in out
    assert hook(vault, NOTE, cache=True) == (rc, out)


def test_git_is_asked_about_conversion_only_for_files_that_differ_by_bytes(vault, monkeypatch):
    from vaultkit.core import gitenv

    started = []
    real = gitenv.run_git

    def counting(args, **kw):  # (the git processes the staged view starts)
        import sys

        if sys._getframe(1).f_globals["__name__"] == "vaultkit.session.staged":
            started.append(args[0])
        return real(args, **kw)

    monkeypatch.setattr(gitenv, "run_git", counting)
    write(vault, NOTE, WITHOUT)
    git(vault, "add", NOTE)
    assert hook(vault, NOTE)[0] == 0
    assert started == ["ls-files"]
    git(vault, "config", "core.autocrlf", "true")
    write(vault, NOTE, WITHOUT.replace("\n", "\r\n"))
    git(vault, "add", NOTE)
    started.clear()
    assert hook(vault, NOTE)[0] == 0
    # one `git hash-object` decides; no blob is read (`cat-file`) for a file git stages
    # as it is
    assert started == ["ls-files", "hash-object"]


def test_an_assume_unchanged_crlf_file_is_decided_by_its_bytes(vault):
    # git diff trusts the assume-unchanged bit and would call the file unchanged; the
    # commit holds the staged credential all the same
    git(vault, "config", "core.autocrlf", "true")
    write(vault, NOTE, WITH.replace("\n", "\r\n"))
    git(vault, "add", NOTE)
    git(vault, "update-index", "--assume-unchanged", NOTE)
    write(vault, NOTE, WITHOUT.replace("\n", "\r\n"))
    rc, out = hook(vault, NOTE)
    assert rc == 1 and f"{NOTE}:3:25: VK701 secret-in-memory" in out, out


def test_a_repository_clean_filter_does_not_run_to_decide(vault, tmp_path):
    # the work tree is compared with git's own end-of-line conversion, never the
    # repository's filter drivers (docs/security.md)
    ran = tmp_path / "ran"
    git(vault, "config", "filter.evil.clean", f"touch {ran}; cat")
    write(vault, ".gitattributes", "*.md filter=evil text\n")
    write(vault, NOTE, WITH.replace("\n", "\r\n"))
    git(vault, "-c", "filter.evil.clean=cat", "add", NOTE)
    write(vault, NOTE, WITHOUT.replace("\n", "\r\n"))
    rc, out = hook(vault, NOTE)
    assert rc == 1 and f"{NOTE}:3:25: VK701 secret-in-memory" in out, out
    write(vault, NOTE, WITH.replace("\n", "\r\n"))
    rc, out = hook(vault, NOTE)
    assert rc == 1 and "checked as staged" not in out, out
    assert not ran.exists()


# -- conversions other than end-of-line: `git hash-object` cleans a file as `git add` does,
# so it calls a file the staged blob whose bytes hold other text; only a CRLF/LF difference
# is the commit's text (gitattributes(5) ident, working-tree-encoding)

def test_a_credential_staged_in_utf8_beside_a_utf16_work_tree_is_checked_as_staged(vault):
    # working-tree-encoding: git stores UTF-8 and writes the work tree in UTF-16; the commit
    # holds the credential in UTF-8 whatever the work tree's bytes
    write(vault, ".gitattributes", "*.md text working-tree-encoding=UTF-16LE-BOM eol=crlf\n")
    path = vault / NOTE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(WITH.replace("\n", "\r\n").encode("utf-16"))
    git(vault, "add", ".gitattributes", NOTE)
    assert TOKEN in git(vault, "show", f":{NOTE}")  # (git stored UTF-8)
    rc, out = hook(vault, NOTE)
    assert rc == 1 and f"{NOTE}:3:25: VK701 secret-in-memory" in out, out
    assert "checked as staged (what the commit holds; the work tree differs): " + NOTE in out


def test_an_ident_expanded_in_the_work_tree_is_not_the_commits_text(vault):
    # ident: `$Id: … $` in the work tree is stored `$Id$`; what the work tree adds there is
    # not in the commit and must not block it
    write(vault, ".gitattributes", "*.md ident\n")
    write(vault, NOTE, "# Deploys\n\n$Id$\n")
    git(vault, "add", ".gitattributes", NOTE)
    write(vault, NOTE, f"# Deploys\n\n$Id: {TOKEN} $\n")
    assert git(vault, "hash-object", NOTE).strip() == git(vault, "rev-parse", f":{NOTE}").strip()
    rc, out = hook(vault, NOTE)
    assert rc == 0 and "VK701" not in out, out


def test_a_journal_taken_out_of_git_with_its_file_kept_is_told_to_be_tracked_again(vault):
    # `git rm --cached`: every line is still in the file; `git checkout HEAD -- path`, the
    # advice for a deleted journal, would overwrite the lines written since the commit
    write(vault, J, JOURNAL + "- Rolled back the canary\n")
    git(vault, "rm", "-q", "--cached", J)
    rc, out = hook(vault, J)
    assert rc == 1, out
    assert (f"{J}:1:1: VK601 journal-append-only error: journal taken out of git with the "
            "file kept (`git rm --cached`)") in out, out
    assert f"track it again with `git add {J}`" in out and "git checkout" not in out, out
    assert (vault / J).read_text().endswith("- Rolled back the canary\n")  # (left as it is)
    (vault / J).unlink()  # deleted from the work tree as well: restored from HEAD
    rc, out = hook(vault, J)
    assert rc == 1 and f"restore it with `git checkout HEAD -- {J}`" in out, out


def test_a_note_taken_out_of_git_with_its_file_kept_is_told_to_be_tracked_again(vault):
    write(vault, NOTE, WITHOUT + "".join(f"- Step {i} of the deploy\n" for i in range(8)))
    commit_all(vault)
    git(vault, "rm", "-q", "--cached", NOTE)
    rc, out, err = invoke(["check", "--hook", "--no-cache", "--select", "mass-deletion", NOTE],
                          vault)
    assert rc == 1, out + err
    assert (f"{NOTE}:1:1: VK602 mass-deletion error: taken out of git with the file kept "
            "(`git rm --cached`; it has 10 non-blank lines in HEAD)") in out, out
    assert f"`git add {NOTE}`" in out and "git checkout" not in out, out
