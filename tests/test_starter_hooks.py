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

    text = journal.read_text(encoding="utf-8").replace("Hooks tried", "Hooks rewritten")
    journal.write_text(text, encoding="utf-8")
    run(root, "git", "add", "-A", env=env)
    refused = run(root, "git", "commit", "-m", "rewrite", env=env)
    out = refused.stdout + refused.stderr
    assert refused.returncode != 0
    assert f"memory/{today.isoformat()}.md:" in out and "VK601 journal-append-only" in out
