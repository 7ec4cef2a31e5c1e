"""No git process vaultkit starts runs a command the vault's repository configures.

The chain this guards against: text an agent logged lands in ``.git/config`` (through a
symlinked journal, a pulled file, anything) as ``[core] fsmonitor = "<command>"``; the
next ``vaultkit check --hook`` would run it. Every repository-controlled command is set
here to a trap that records its call; the control test shows that plain git does run
them, and the vaultkit tests show that none runs through any command.
"""

from __future__ import annotations

import ast
import contextlib
import datetime as dt
import io
import os
import subprocess
from pathlib import Path

import pytest

from vaultkit.cli import main

VAULTKIT = Path(__file__).resolve().parent.parent / "vaultkit"
OLD = (dt.date.today() - dt.timedelta(days=60)).isoformat()
HOOKS = ("pre-commit", "prepare-commit-msg", "commit-msg", "post-commit", "post-checkout",
         "post-index-change", "fsmonitor-watchman", "pre-auto-gc", "reference-transaction",
         "post-rewrite")


def _env() -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@e", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@e")
    return env


def _git(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                          env=_env())


def _trap(tmp: Path) -> tuple[Path, Path]:
    """A script that appends its name and arguments to a log, then passes stdin through."""
    log = tmp / "trap.log"
    script = tmp / "trap.sh"
    script.write_text(f'#!/bin/sh\necho "ran $0 $*" >> "{log}"\ncat\n')
    script.chmod(0o755)
    return script, log


def _arm(root: Path, script: Path) -> None:
    """Point every command git can take from a repository's config at ``script``."""
    hooks = root / ".git" / "evil-hooks"
    hooks.mkdir()
    for name in HOOKS:
        for folder in (hooks, root / ".git" / "hooks"):
            folder.mkdir(exist_ok=True)
            (folder / name).write_text(f'#!/bin/sh\n"{script}" hook-{name} </dev/null\nexit 0\n')
            (folder / name).chmod(0o755)
    settings = {
        "core.fsmonitor": f"{script} fsmonitor",
        "core.hooksPath": str(hooks),
        "core.pager": f"{script} pager",
        "core.editor": f"{script} editor",
        "diff.external": f"{script} external-diff",
        "diff.evil.command": f"{script} diff-driver",
        "diff.evil.textconv": f"{script} textconv",
        "filter.evil.clean": f"{script} clean",
        "filter.evil.smudge": f"{script} smudge",
        "filter.evil.required": "true",
        "credential.helper": f"!{script} credential",
        "log.showSignature": "true",
        "gpg.program": str(script),
        "commit.gpgSign": "true",
    }
    for key, value in settings.items():
        assert _git(root, "config", key, value).returncode == 0
    (root / ".gitattributes").write_text("*.md filter=evil diff=evil\n")


@pytest.fixture
def armed(make_vault, tmp_path, monkeypatch) -> tuple[Path, Path]:
    root = make_vault({
        "AGENTS.md": "# Agents\n",
        "MEMORY.md": "# Memory\n\n- [[memory/semantic/fact]]\n",
        "memory/semantic/fact.md": "# Fact\n\nA fact.\n",
        f"memory/{OLD}.md": f"# {OLD}\n\n### 10:00 — Work\n\n- did a thing\n",
    })
    assert _git(root, "init", "-q").returncode == 0
    assert _git(root, "add", "-A").returncode == 0
    assert _git(root, "commit", "-qm", "init").returncode == 0
    script, log = _trap(tmp_path)
    _arm(root, script)
    (root / "memory" / "semantic" / "fact.md").write_text("# Fact\n\nA fact, changed.\n")
    (root / f"memory/{OLD}.md").write_text(f"# {OLD}\n\n### 10:00 — Work\n\n- rewritten\n")
    for name in [k for k in os.environ if k.startswith("GIT_")]:
        monkeypatch.delenv(name)
    for key, value in _env().items():
        if key.startswith("GIT_"):
            monkeypatch.setenv(key, value)
    return root, log


def test_the_traps_work_with_plain_git(armed):
    """Control: without vaultkit's settings, git runs the repository's commands."""
    root, log = armed
    os.utime(root / "memory" / "semantic" / "fact.md", (1, 1))  # stat-dirty: filters run
    _git(root, "status", "--porcelain")
    _git(root, "diff", "HEAD")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "x")
    ran = log.read_text()
    for what in ("fsmonitor", "clean", "diff-driver", "hook-pre-commit", "--status-fd"):
        assert f"ran {log.parent / 'trap.sh'} {what}" in ran, ran


def _vaultkit(argv, cwd: Path) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = main(list(argv))
    return rc, out.getvalue() + err.getvalue()


COMMANDS = [
    ["check", "."],
    ["check", "--select", "ALL", "--no-cache", "."],
    ["check", "--staged", "--no-cache", "."],
    ["check", "--hook", "--no-cache", "."],
    ["check", "--fix", "--no-cache", "."],
    ["audit", "--root", "."],
    ["archive", "--root", ".", "--keep-days", "7"],
    ["index", "."],
    ["log", "--root", ".", "--title", "Entry", "a line of text"],
    ["search", "--root", ".", "fact"],
    ["distill", "--root", "."],
    ["graph", "."],
    ["get", "--root", ".", "MEMORY.md"],
]


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_no_repository_command_runs(armed, argv):
    root, log = armed
    os.utime(root / "memory" / "semantic" / "fact.md", (1, 1))
    rc, out = _vaultkit(argv, root)
    assert rc in (0, 1), out
    assert not log.exists(), log.read_text()


def test_archive_moves_with_git_and_runs_nothing(armed):
    root, log = armed
    _git(root, "checkout", "--", ".")  # (runs the trap's smudge: that is plain git)
    log.unlink(missing_ok=True)
    rc, out = _vaultkit(["archive", "--root", ".", "--keep-days", "7"], root)
    assert rc == 0, out
    assert (root / "memory" / "archive" / f"{OLD}.md").exists()
    assert f"memory/archive/{OLD}.md" in _git(root, "status", "--porcelain").stdout
    log.unlink(missing_ok=True)  # (the status above is plain git again)
    assert not log.exists()


def test_init_git_commits_without_running_the_repository_hooks(tmp_path, monkeypatch):
    target = tmp_path / "fresh"
    target.mkdir()
    assert _git(target, "init", "-q").returncode == 0
    script, log = _trap(tmp_path)
    _arm(target, script)
    for key, value in _env().items():
        if key.startswith("GIT_"):
            monkeypatch.setenv(key, value)
    rc, out = _vaultkit(["init", "--git", str(target)], tmp_path)
    assert rc == 0, out
    assert _git(target, "rev-parse", "-q", "--verify", "HEAD").returncode == 0, out
    assert not log.exists(), log.read_text()


def test_every_subprocess_goes_through_gitenv():
    """Only vaultkit/core/gitenv.py starts processes: nothing can bypass the safe settings."""
    offenders = []
    for path in VAULTKIT.rglob("*.py"):
        if path.name == "gitenv.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                    and node.value.id in ("subprocess", "os") \
                    and node.attr in ("run", "Popen", "call", "check_call", "check_output",
                                      "system", "popen", "execv", "execvp", "spawnv"):
                offenders.append(f"{path.relative_to(VAULTKIT)}:{node.lineno}")
    assert offenders == []


def test_safe_settings_reach_the_git_command_line():
    from vaultkit.core.gitenv import git_command, git_env

    cmd = git_command(["diff", "--raw", "HEAD"])
    assert "core.fsmonitor=" in cmd and "core.hooksPath=/dev/null" in cmd
    assert cmd.index("--no-ext-diff") > cmd.index("diff") and "--no-textconv" in cmd
    env = git_env()
    assert env["GIT_CONFIG_NOSYSTEM"] == "1" and env["GIT_TERMINAL_PROMPT"] == "0"


def test_repository_env_is_kept_for_hooks_and_dropped_for_other_repositories(monkeypatch):
    from vaultkit.core.gitenv import git_env

    monkeypatch.setenv("GIT_INDEX_FILE", "/tmp/index.tmp")
    monkeypatch.setenv("GIT_EXTERNAL_DIFF", "evil")
    assert git_env()["GIT_INDEX_FILE"] == "/tmp/index.tmp"
    assert "GIT_INDEX_FILE" not in git_env(keep_repo_env=False)
    assert "GIT_EXTERNAL_DIFF" not in git_env()



def test_only_the_repositorys_own_filters_are_switched_off(tmp_path, monkeypatch):
    """A user's global filter (git-lfs, say) is theirs and stays; the repository's goes."""
    from vaultkit.core import gitenv

    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text('[filter "lfs"]\n\tclean = git-lfs clean -- %f\n')
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    repo = tmp_path / "repo"
    assert _git(repo.parent, "init", "-q", str(repo)).returncode == 0
    assert _git(repo, "config", "filter.evil.smudge", "x").returncode == 0
    monkeypatch.setattr(gitenv, "_FILTERS", {})
    assert gitenv._filter_names(str(repo), gitenv.git_env()) == ("evil",)
    proc = gitenv.run_git(["-C", str(repo), "status", "--porcelain"])
    assert proc.returncode == 0


def test_a_filter_the_repository_gains_later_is_switched_off_too(tmp_path, monkeypatch):
    """A long-running process (``vaultkit watch``'s watcher, the MCP server) asks git for
    the repository's filters again once its config files changed: a filter defined after
    its first git run does not run either (the memo is keyed by those files' bytes)."""
    from vaultkit.core import gitenv

    for name in gitenv.REPO_ENV:
        monkeypatch.delenv(name, raising=False)
    repo = tmp_path / "repo"
    assert _git(repo.parent, "init", "-q", str(repo)).returncode == 0
    monkeypatch.setattr(gitenv, "_FILTERS", {})
    (repo / "a.txt").write_text("one\n")
    assert gitenv.run_git(["add", "a.txt"], cwd=repo).returncode == 0  # (no filter yet)
    trap = tmp_path / "ran"
    assert _git(repo, "config", "filter.evil.clean",
                f"sh -c 'touch {trap}; cat'").returncode == 0
    (repo / ".gitattributes").write_text("*.txt filter=evil\n")
    (repo / "a.txt").write_text("two\n")
    assert gitenv.run_git(["add", "a.txt"], cwd=repo).returncode == 0
    assert not trap.exists()
    (repo / "a.txt").write_text("three\n")
    assert _git(repo, "add", "a.txt").returncode == 0  # (plain git runs it: the trap works)
    assert trap.exists()
