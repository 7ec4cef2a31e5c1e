"""The starter vault's own .pre-commit-config.yaml, run by the real pre-commit.

Its hooks are `repo: local` and run the installed `vaultkit`, so this needs nothing from
the network: an appended journal entry commits, a rewritten one is refused.
"""

import datetime as dt
import os
import subprocess
import sys
from pathlib import Path

import pytest

from vaultkit.cli.starter import init_vault

pytestmark = pytest.mark.integration


def run(cwd, *args, env):
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True)


def test_starter_hooks_guard_the_journal(tmp_path):
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
               PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"),
               GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t")
    root = tmp_path / "vault"
    today = dt.date.today()
    init_vault(root, git=True, today=today)
    assert run(root, sys.executable, "-m", "pre_commit", "install", env=env).returncode == 0
    journal = root / "memory" / f"{today.isoformat()}.md"

    with open(journal, "a", encoding="utf-8") as fh:  # what `printf >>` does
        fh.write("\n### 23:10 — Hooks tried\n- Committed through the local hooks.\n"
                 "- They run the installed vaultkit.\n- Nothing was downloaded.\n")
    run(root, "git", "add", "-A", env=env)
    ok = run(root, "git", "commit", "-m", "entry", env=env)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "vaultkit check" in ok.stdout + ok.stderr

    # a committed line written over by other text (a correction of it would pass)
    text = journal.read_text(encoding="utf-8").replace(
        "- Committed through the local hooks.\n", "- Summary of the day.\n")
    journal.write_text(text, encoding="utf-8")
    run(root, "git", "add", "-A", env=env)
    refused = run(root, "git", "commit", "-m", "rewrite", env=env)
    out = refused.stdout + refused.stderr
    assert refused.returncode != 0
    assert f"memory/{today.isoformat()}.md:" in out and "VK601 journal-append-only" in out


def _vault_with_hooks(tmp_path):
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
               PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"), NO_COLOR="1",
               GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t")
    env.pop("VAULTKIT_ACCEPT_DELETION", None)
    root = tmp_path / "vault"
    init_vault(root, git=True, today=dt.date.today())
    assert run(root, sys.executable, "-m", "pre_commit", "install", env=env).returncode == 0
    return root, env


LESSON = ("---\ntype: lesson\ndate: 2026-12-01\n---\n# Deploys\n\n"
          "## 2026-12-01 — No Friday deploys\n- We broke production on a Friday.\n"
          "- Deploy early in the week.\n- Keep a rollback ready.\n")


def test_adding_a_note_takes_one_commit_and_a_clean_commit_is_quiet(tmp_path):
    root, env = _vault_with_hooks(tmp_path)
    (root / "memory" / "lessons").mkdir(exist_ok=True)
    (root / "memory" / "lessons" / "deploys.md").write_text(LESSON, encoding="utf-8")
    (root / "MEMORY.md").write_text((root / "MEMORY.md").read_text(encoding="utf-8")
                                    + "\nSee [[lessons/deploys]].\n", encoding="utf-8")
    run(root, "git", "add", "-A", env=env)
    ok = run(root, "git", "commit", "-m", "a lesson", env=env)
    out = ok.stdout + ok.stderr
    assert ok.returncode == 0, out
    assert "[[deploys]]" in run(root, "git", "show", "HEAD:memory/INDEX.md", env=env).stdout
    assert run(root, "git", "status", "--porcelain", env=env).stdout == ""
    assert "All checks passed!" not in out  # nothing to report: only the hook's line
    assert "vaultkit check" in out and "Passed" in out


def test_an_intended_deletion_is_accepted_for_one_commit_without_no_verify(tmp_path):
    root, env = _vault_with_hooks(tmp_path)
    (root / "USER.md").unlink()
    run(root, "git", "add", "-A", env=env)
    refused = run(root, "git", "commit", "-m", "drop USER.md", env=env)
    out = refused.stdout + refused.stderr
    assert refused.returncode != 0
    assert "VK602 mass-deletion" in out and "--no-verify" not in out
    assert "VAULTKIT_ACCEPT_DELETION=USER.md git commit" in out
    accepted = run(root, "git", "commit", "-m", "drop USER.md",
                   env=dict(env, VAULTKIT_ACCEPT_DELETION="USER.md"))
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    # the next commit is guarded again
    (root / "SOUL.md").unlink()
    run(root, "git", "add", "-A", env=env)
    assert run(root, "git", "commit", "-m", "drop SOUL.md", env=env).returncode != 0


def test_outside_a_commit_the_index_hook_writes_and_does_not_stage(tmp_path):
    """`pre-commit run --all-files` (and pre-commit.ci) make no commit: the rewritten
    INDEX.md stays unstaged, so pre-commit reports it as changed (pre-commit.ci's autofix)."""
    root, env = _vault_with_hooks(tmp_path)
    (root / "memory" / "lessons").mkdir(exist_ok=True)
    (root / "memory" / "lessons" / "deploys.md").write_text(LESSON, encoding="utf-8")
    run(root, "git", "add", "-A", env=env)
    env = {k: v for k, v in env.items() if k != "GIT_INDEX_FILE"}
    proc = run(root, sys.executable, "-m", "pre_commit", "run", "--all-files", "vaultkit-index",
               env=env)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1 and "files were modified by this hook" in out, out
    assert "rewritten, not staged: no commit is being made" in out
    status = run(root, "git", "status", "--porcelain", "memory/INDEX.md", env=env).stdout
    assert status.startswith("AM") or status.startswith(" M") or status.startswith("MM"), status


def test_a_vault_in_a_subfolder_of_a_repository_with_the_real_pre_commit(tmp_path):
    """`vaultkit init agent/vault` in an existing repository puts the hooks at its top, where
    pre-commit reads them and runs them: an entry commits from the top and from the vault's
    folder, a loss is refused (a rewrite, a deletion), and a commit of code elsewhere runs
    with no vaultkit output and carries only its own file."""
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
               PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"), NO_COLOR="1",
               GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t")
    env.pop("VAULTKIT_ACCEPT_DELETION", None)
    repo = tmp_path / "monorepo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "app.py").write_text("print('hi')\n")
    assert run(repo, "git", "init", "-q", env=env).returncode == 0
    today = dt.date.today()
    init_vault(repo / "agent" / "vault", today=today)
    assert (repo / ".pre-commit-config.yaml").is_file()
    assert run(repo, sys.executable, "-m", "pre_commit", "install", env=env).returncode == 0
    run(repo, "git", "add", "-A", env=env)
    first = run(repo, "git", "commit", "-m", "start", env=env)
    assert first.returncode == 0, first.stdout + first.stderr

    vault = repo / "agent" / "vault"
    journal = vault / "memory" / f"{today.isoformat()}.md"
    name = f"agent/vault/memory/{today.isoformat()}.md"
    for where, time in ((repo, "23:10"), (vault, "23:20")):  # from the top, from the vault
        with open(journal, "a", encoding="utf-8") as fh:
            fh.write(f"\n### {time} — Hooks tried\n- Committed from {where.name}.\n"
                     "- The hooks ran at the top.\n- Nothing was downloaded.\n")
        run(where, "git", "add", "-A", env=env)
        ok = run(where, "git", "commit", "-m", f"entry {time}", env=env)
        out = ok.stdout + ok.stderr
        assert ok.returncode == 0, out
        assert "vaultkit index" in out and "vaultkit check" in out and "Failed" not in out

    text = journal.read_text(encoding="utf-8")  # a committed line written over by other text
    journal.write_text(text.replace("- Committed from monorepo.\n", "- Summary of the day.\n"),
                       encoding="utf-8")
    run(vault, "git", "add", "-A", env=env)
    refused = run(vault, "git", "commit", "-m", "rewrite", env=env)
    out = refused.stdout + refused.stderr
    assert refused.returncode != 0 and f"{name}:" in out and "VK601 journal-append-only" in out
    run(repo, "git", "checkout", "HEAD", "--", "agent/vault", env=env)

    run(repo, "git", "rm", "-q", name, env=env)  # pre-commit passes no name for a deletion
    refused = run(repo, "git", "commit", "-m", "drop the journal", env=env)
    out = refused.stdout + refused.stderr
    assert refused.returncode != 0 and "journal deleted" in out, out
    run(repo, "git", "reset", "-q", env=env)
    run(repo, "git", "checkout", "HEAD", "--", "agent/vault", env=env)

    # an unrelated commit, with a note written but not committed (INDEX.md stale in the
    # work tree): nothing of the vault goes into it, and nothing of vaultkit is said
    (vault / "memory" / "lessons" / "deploys.md").write_text(LESSON, encoding="utf-8")
    (repo / "src" / "app.py").write_text("print('hello')\n")
    run(repo, "git", "add", "src/app.py", env=env)
    ok = run(repo, "git", "commit", "-m", "code", env=env)
    out = ok.stdout + ok.stderr
    assert ok.returncode == 0, out
    assert "vaultkit:" not in out and "VK" not in out and "Failed" not in out
    assert run(repo, "git", "show", "--name-only", "--format=", "HEAD",
               env=env).stdout == "src/app.py\n"
    assert run(repo, "git", "status", "--porcelain", env=env).stdout \
        == "?? agent/vault/memory/lessons/deploys.md\n"
