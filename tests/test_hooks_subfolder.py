"""The hooks for a vault in a subfolder of a bigger repository, run from the repository's top
as pre-commit runs them: the vault is found from the files given, the files the commit
deletes (pre-commit never passes those) or the folder in ``args``; a commit that changes
nothing in the vault is left alone, silently. (With the real pre-commit:
tests/test_starter_hooks.py.)"""

from __future__ import annotations

import datetime as dt
import os
import subprocess
from pathlib import Path

import pytest

from vaultkit.cli import main
from vaultkit.cli.starter import init_vault

TODAY = dt.date.today()
LESSON = ("---\ntype: lesson\ndate: 2026-12-01\n---\n# Deploys\n\n"
          "## 2026-12-01 — No Friday deploys\n- We broke production on a Friday.\n"
          "- Deploy early in the week.\n- Keep a rollback ready.\n")


@pytest.fixture(autouse=True)
def _git_env(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "VAULTKIT_ACCEPT_DELETION",
                 "PRE_COMMIT", "NO_COLOR", "FORCE_COLOR"):
        monkeypatch.delenv(name, raising=False)
    for key, value in (("GIT_AUTHOR_NAME", "t"), ("GIT_AUTHOR_EMAIL", "t@t"),
                       ("GIT_COMMITTER_NAME", "t"), ("GIT_COMMITTER_EMAIL", "t@t")):
        monkeypatch.setenv(key, value)


def git(repo: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def monorepo(tmp_path, monkeypatch):
    """A repository with code at its top and the starter vault in agent/vault/, committed;
    the current folder is the repository's top, where pre-commit runs every hook."""
    repo = tmp_path / "monorepo"
    (repo / "src").mkdir(parents=True)
    git(repo, "init", "-q")
    (repo / "src" / "app.py").write_text("print('hi')\n")
    init_vault(repo / "agent" / "vault", today=TODAY)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "start")
    monkeypatch.chdir(repo)
    return repo


def test_a_journal_deleted_in_a_subfolder_vault_is_refused_from_the_top(monorepo, capsys):
    """A commit that only deletes passes the check hook no file names: the vault is found
    from what the commit deletes (it passed, unchecked, with an info line)."""
    journal = f"agent/vault/memory/{TODAY.isoformat()}.md"
    git(monorepo, "rm", "-q", journal)
    code, out, err = run(capsys, "check", "--hook")
    assert code == 1, out + err
    assert f"{journal}:1:1: VK601 journal-append-only error: journal deleted" in out
    assert "VAULTKIT_ACCEPT_DELETION=memory/" in out  # the path the guard reads: the vault's


def test_a_note_deleted_in_a_subfolder_vault_with_files_given_elsewhere(monorepo, capsys):
    (monorepo / "docs").mkdir()
    (monorepo / "docs" / "guide.md").write_text("# Guide\n")
    git(monorepo, "add", "docs/guide.md")
    git(monorepo, "rm", "-q", "agent/vault/USER.md")
    code, out, _ = run(capsys, "check", "--hook", "docs/guide.md")
    assert code == 1 and "agent/vault/USER.md" in out and "VK602 mass-deletion" in out


def test_a_commit_outside_the_vault_is_left_alone_silently(monorepo, capsys, monkeypatch):
    """The vault committed with a stale INDEX.md (a commit that skipped the hooks): a
    commit of code elsewhere is no business of the vault's hooks, even given the vault with
    --root; it was blocked by the vault's own finding."""
    vault = monorepo / "agent" / "vault"
    (vault / "memory" / "lessons" / "deploys.md").write_text(LESSON, encoding="utf-8")
    git(monorepo, "add", "-A")
    git(monorepo, "commit", "-q", "-m", "a lesson, index not regenerated")
    (monorepo / "src" / "app.py").write_text("print('hello')\n")
    git(monorepo, "add", "src/app.py")
    monkeypatch.setenv("GIT_INDEX_FILE", str(monorepo / ".git" / "index"))  # as git commit
    assert run(capsys, "check", "--hook") == (0, "", "")
    assert run(capsys, "check", "--hook", "--root", "agent/vault") == (0, "", "")
    # a commit that does change the vault is checked, as before
    (vault / "NOW.md").write_text((vault / "NOW.md").read_text() + "\n- Deploying.\n")
    git(monorepo, "add", "agent/vault/NOW.md")
    code, out, _ = run(capsys, "check", "--hook", "--root", "agent/vault")
    assert code == 1 and "agent/vault/memory/INDEX.md" in out and "stale" in out


def test_the_index_hook_writes_nothing_into_a_commit_outside_the_vault(monorepo, capsys,
                                                                       monkeypatch):
    vault = monorepo / "agent" / "vault"
    index = vault / "memory" / "INDEX.md"
    before = index.read_bytes()
    (vault / "memory" / "lessons" / "deploys.md").write_text(LESSON, encoding="utf-8")  # unstaged
    (monorepo / "src" / "app.py").write_text("print('hello')\n")
    git(monorepo, "add", "src/app.py")
    monkeypatch.setenv("GIT_INDEX_FILE", str(monorepo / ".git" / "index"))
    assert run(capsys, "index", "--stage", "agent/vault") == (0, "", "")
    assert index.read_bytes() == before
    assert git(monorepo, "diff", "--cached", "--name-only") == "src/app.py\n"
    # the commit that adds the note carries the fresh index, in one run
    git(monorepo, "add", "agent/vault/memory/lessons/deploys.md")
    code, _, err = run(capsys, "index", "--stage", "agent/vault")
    assert code == 0 and "Staged agent/vault/memory/INDEX.md" in err
    assert "[[deploys]]" in index.read_text()
    assert "agent/vault/memory/INDEX.md" in git(monorepo, "diff", "--cached", "--name-only")


def test_a_hook_given_no_vault_at_the_top_says_to_name_its_folder(monorepo, capsys,
                                                                  monkeypatch):
    """The starter's configuration copied to the top as it was (no `args`): the index hook
    stops the commit (exit 2), and says what the hook lacks rather than to run init."""
    monkeypatch.setenv("PRE_COMMIT", "1")  # (pre-commit sets it for every hook it runs)
    code, _, err = run(capsys, "index", "--stage")
    assert code == 2
    assert err.rstrip("\n").endswith("pre-commit runs hooks from the repository's top: give "
                                      "this hook the vault's folder (`args: [path/to/vault]`)")
    assert err.count("\n") == 1
    monkeypatch.delenv("PRE_COMMIT")
    code, _, err = run(capsys, "index")
    assert code == 2 and err.rstrip("\n").endswith("create one with `vaultkit init`")


def test_a_file_deleted_beside_an_agents_md_elsewhere_checks_no_vault(monorepo, capsys):
    """A package of the monorepo with its own AGENTS.md (a coding agent's) and a file in it
    deleted: no vault is made of that folder (it holds no vaultkit.toml or .obsidian/)."""
    package = monorepo / "packages" / "web"
    package.mkdir(parents=True)
    (package / "AGENTS.md").write_text("# Agents\n\nRun the tests.\n")
    (package / "TOOLS.md").write_text("# Tools\n\n" + "".join(f"- tool {i}\n" for i in range(9)))
    git(monorepo, "add", "-A")
    git(monorepo, "commit", "-q", "-m", "web")
    git(monorepo, "rm", "-q", "packages/web/TOOLS.md")
    assert run(capsys, "check", "--hook") == (0, "", "")


def test_the_colours_hook_writes_nothing_for_a_commit_outside_the_vault(monorepo, capsys,
                                                                        monkeypatch):
    """graph.json without vaultkit's colour groups (removed in Obsidian): a commit of code
    elsewhere gets no rewritten graph.json, which pre-commit would count as the hook's
    change and fail the commit on."""
    graph = monorepo / "agent" / "vault" / ".obsidian" / "graph.json"
    graph.write_text("{}\n")
    git(monorepo, "commit", "-q", "-am", "graph colours removed")
    (monorepo / "src" / "app.py").write_text("print('hello')\n")
    git(monorepo, "add", "src/app.py")
    monkeypatch.setenv("GIT_INDEX_FILE", str(monorepo / ".git" / "index"))
    assert run(capsys, "graph", "--write-colors", "agent/vault") == (0, "", "")
    assert graph.read_text() == "{}\n"
    # a commit in the vault gets them back, as in a workspace that is the repository
    (monorepo / "agent" / "vault" / "NOW.md").write_text("# Now\n\n- Deploying.\n")
    git(monorepo, "add", "agent/vault/NOW.md")
    code, _, err = run(capsys, "graph", "--write-colors", "agent/vault")
    assert code == 0 and "Updated agent/vault/.obsidian/graph.json" in err
    assert "colorGroups" in graph.read_text()


def _pre_commit_check(monorepo, monkeypatch):
    """The audit's `pre-commit` check of agent/vault, with the git hook installed."""
    import shutil
    import sys

    from vaultkit.audit import run_audit
    from vaultkit.vault.loader import load_vault

    hook = monorepo / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\n# File generated by pre-commit: https://pre-commit.com\n")
    # (vaultkit and git on the PATH: the hooks' commands resolve)
    monkeypatch.setenv("PATH", os.pathsep.join([os.path.dirname(sys.executable),
                                                os.path.dirname(shutil.which("git"))]))
    vault = load_vault(monorepo / "agent" / "vault", use_cache=False)
    return {c.id: c for c in run_audit(vault)}["pre-commit"]


def test_the_audit_passes_the_hooks_init_wrote_at_the_top(monorepo, monkeypatch):
    config = (monorepo / ".pre-commit-config.yaml").read_text()
    assert "args: [agent/vault]" in config
    check = _pre_commit_check(monorepo, monkeypatch)
    assert check.status == "pass", check.found
    for named in ("--root, agent/vault", "--root=agent/vault"):  # (the same, said otherwise)
        (monorepo / ".pre-commit-config.yaml").write_text(
            config.replace("args: [agent/vault]", f"args: [{named}]"))
        assert _pre_commit_check(monorepo, monkeypatch).status == "pass", named


@pytest.mark.parametrize("args, status, said", [
    ("[]", "fail", ("vaultkit-index, vaultkit-colors name no vault folder, and pre-commit "
                    "runs them from")),
    ("[src]", "fail", ("vaultkit-index, vaultkit-colors name a folder that is no vault: every "
                       "commit fails")),
    ("[agent/missing]", "fail", "name a folder that is no vault"),
])
def test_the_audit_fails_top_hooks_that_do_not_name_the_vault(monorepo, monkeypatch, args,
                                                             status, said):
    # every commit fails with such hooks (pre-commit runs them from the top, which is no
    # vault); the audit said PASS
    config = (monorepo / ".pre-commit-config.yaml").read_text()
    (monorepo / ".pre-commit-config.yaml").write_text(
        config.replace("args: [agent/vault]", f"args: {args}"))
    check = _pre_commit_check(monorepo, monkeypatch)
    assert check.status == status and said in check.found, check.found
    assert "`args: [agent/vault]`" in check.hint
    # the audit hook runs only when asked (stages: [manual]): no commit fails by it
    assert "vaultkit-audit" not in check.found


def test_the_audit_tells_when_the_top_hooks_act_on_another_vault(monorepo, monkeypatch):
    (monorepo / "MEMORY.md").write_text("# Memory\n")  # the top is a vault of its own too
    config = (monorepo / ".pre-commit-config.yaml").read_text()
    (monorepo / ".pre-commit-config.yaml").write_text(
        config.replace("args: [agent/vault]", "args: []"))
    check = _pre_commit_check(monorepo, monkeypatch)
    assert check.status == "tip" and "act on the vault at" in check.found, check.found


def test_a_whole_subfolder_vault_deleted_is_refused_from_the_top(monorepo, capsys, monkeypatch):
    # `git rm -r` leaves no vault to open: the commit passed, every note of it unchecked
    git(monorepo, "rm", "-r", "-q", "agent/vault")
    (monorepo / "agent" / "vault" / ".vaultkit").mkdir(parents=True, exist_ok=True)
    # (untracked files can keep the folder in place: vaultkit's own cache does)
    code, out, err = run(capsys, "check", "--hook")
    assert code == 1, out + err
    assert ("agent/vault/vaultkit.toml:1:1: VK602 mass-deletion error: the whole vault at "
            "agent/vault is deleted by this commit (") in out, out
    assert "`git checkout HEAD -- agent/vault`" in out
    assert run(capsys, "check", "--hook", "--ignore", "mass-deletion")[0] == 0
    monkeypatch.setenv("VAULTKIT_ACCEPT_DELETION", "agent/vault")
    assert run(capsys, "check", "--hook")[0] == 0


def test_a_subfolder_vault_moved_whole_is_no_deletion(monorepo, capsys):
    git(monorepo, "mv", "agent/vault", "agent/memory")
    code, out, err = run(capsys, "check", "--hook", "agent/memory/AGENTS.md")
    assert code == 0 and "deleted" not in out, out + err


def test_a_subfolder_vault_removed_and_added_with_git_add_all_is_refused(monorepo, capsys):
    import shutil

    shutil.rmtree(monorepo / "agent" / "vault")
    git(monorepo, "add", "-A")
    code, out, err = run(capsys, "check", "--hook")
    assert code == 1 and "the whole vault at agent/vault is deleted" in out, out + err


def test_the_index_and_colours_hooks_leave_a_vault_deleted_whole_alone(monorepo, capsys,
                                                                        monkeypatch):
    # with the deletion accepted, `vaultkit index --stage agent/vault` (which pre-commit runs
    # from the top) stopped the commit: "not a vault"
    git(monorepo, "rm", "-r", "-q", "agent/vault")
    monkeypatch.setenv("GIT_INDEX_FILE", str(monorepo / ".git" / "index"))  # as git commit
    assert run(capsys, "index", "--stage", "agent/vault") == (0, "", "")
    assert run(capsys, "graph", "--write-colors", "agent/vault") == (0, "", "")
    assert run(capsys, "index", "--stage", "agent/other")[0] == 2  # (a typo is still told)
