"""The GitHub Actions action (action.yml), its steps run as a script on fixture repositories.

Every `run:` step reads its inputs from `env:`; here each step's script runs in bash with
that environment resolved from the inputs (as the runner resolves `${{ ... }}`), with
``GITHUB_OUTPUT`` and ``GITHUB_PATH`` files, on a repository where an agent rewrote a journal
in a commit that skipped the hooks.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from vaultkit.cli.starter import init_vault

ROOT = Path(__file__).resolve().parent.parent
ACTION = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
STEPS = {s.get("id") or s.get("name") or s["uses"]: s for s in ACTION["runs"]["steps"]}
ZEROS = "0" * 40

JOURNAL = ("# 2026-11-20\n\n## 09:00 — Release\n- Deployed v1.2 to production\n"
           "- Smoke tests green\n- Rollback plan written down\n")


def git(cwd, *args, env=None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True,
                          check=True).stdout.strip()


@pytest.fixture
def env(tmp_path):
    e = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "VAULTKIT_"))}
    e.update(GIT_AUTHOR_NAME="agent", GIT_AUTHOR_EMAIL="a@example.com", GIT_COMMITTER_NAME="agent",
             GIT_COMMITTER_EMAIL="a@example.com", GIT_CONFIG_GLOBAL=os.devnull, NO_COLOR="1",
             HOME=str(tmp_path), RUNNER_TEMP=str(tmp_path / "runner-temp"),
             PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    return e


@pytest.fixture
def pushed(tmp_path, env):
    """A vault repository: the agent's journal, then a commit (no hooks) that rewrote it."""
    repo = tmp_path / "vault"
    init_vault(repo, git=True)
    (repo / "memory" / "2026-11-20.md").write_text(JOURNAL, encoding="utf-8")
    subprocess.run([sys.executable, "-m", "vaultkit", "index"], cwd=repo, env=env, check=True,
                   capture_output=True)
    git(repo, "add", "-A", env=env)
    git(repo, "commit", "-qm", "journal", env=env)
    base = git(repo, "rev-parse", "HEAD", env=env)
    # a committed line cut down to two words: its content is gone (an edit would pass)
    rewritten = JOURNAL.replace("- Deployed v1.2 to production", "- Deployed v1.3")
    (repo / "memory" / "2026-11-20.md").write_text(rewritten, encoding="utf-8")
    git(repo, "commit", "-qam", "agent run", env=env)
    return repo, base


def resolve(value: str, inputs: dict, outputs: dict) -> str:
    def one(m):
        expr = m.group(1).strip()
        if expr.startswith("inputs."):
            return inputs[expr[len("inputs."):]]
        if expr.startswith("steps."):
            _, step, _, name = expr.split(".")
            return outputs[step][name]
        if expr == "github.action_path":
            return str(ROOT)
        raise AssertionError(f"the test does not resolve {expr!r}")
    return re.sub(r"\$\{\{(.*?)\}\}", one, value)


def run_step(step_id, cwd, env, tmp_path, inputs=None, outputs=None):
    """Run one `run:` step; return (process, its GITHUB_OUTPUT as a dict)."""
    step = STEPS[step_id]
    assert step["shell"] == "bash"
    given = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()}
    given["base"] = ""
    given.update(inputs or {})
    output_file = tmp_path / f"output-{step_id}"
    output_file.write_text("")
    step_env = dict(env, GITHUB_OUTPUT=str(output_file), GITHUB_PATH=str(tmp_path / "path"))
    for name, value in step.get("env", {}).items():
        step_env[name] = resolve(str(value), given, outputs or {})
    assert "${{" not in step["run"], "run: scripts read their inputs from env only"
    proc = subprocess.run(["bash", "-c", step["run"]], cwd=cwd, env=step_env,
                          capture_output=True, text=True, timeout=300)
    out = dict(line.split("=", 1) for line in output_file.read_text().splitlines() if line)
    return proc, out


def test_the_action_installs_checks_uploads_and_gates(tmp_path):
    assert ACTION["runs"]["using"] == "composite"
    uses = [s["uses"].split("@")[0] for s in ACTION["runs"]["steps"] if "uses" in s]
    assert uses == ["actions/setup-python", "github/codeql-action/upload-sarif"]
    upload = next(s for s in ACTION["runs"]["steps"] if "upload-sarif" in s.get("uses", ""))
    assert upload["with"]["sarif_file"] == "${{ steps.check.outputs.sarif-file }}"
    # vaultkit comes from the action's own folder: the version the workflow's `uses:` names
    assert STEPS["install"]["env"]["VAULTKIT_SOURCE"] == "${{ github.action_path }}"
    assert 'pip install --quiet "$VAULTKIT_SOURCE"' in STEPS["install"]["run"]


def test_the_git_rules_judge_the_pushed_commits(pushed, env, tmp_path):
    repo, base = pushed
    head = git(repo, "rev-parse", "HEAD", env=env)
    proc, out = run_step("check", repo, env, tmp_path, {"base": base})
    assert proc.returncode == 0, proc.stderr
    assert out["exit-code"] == "1"
    sarif = json.loads((repo / out["sarif-file"]).read_text())
    results = sarif["runs"][0]["results"]
    assert [r["ruleId"] for r in results] == ["VK601"]
    assert results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == \
        "memory/2026-11-20.md"
    assert "VK601 journal-append-only error:" in proc.stdout  # the log shows them too
    # the repository is left as it was checked out
    assert git(repo, "rev-parse", "HEAD", env=env) == head
    assert git(repo, "status", "--porcelain", "--untracked-files=no", env=env) == ""
    # the gate fails the job, or not when asked not to
    gate = next(s.get("name") for s in ACTION["runs"]["steps"] if s.get("name") == "Fail on findings")
    failed, _ = run_step(gate, repo, env, tmp_path, outputs={"check": out})
    assert failed.returncode == 1 and "::error title=vaultkit::" in failed.stdout
    passed, _ = run_step(gate, repo, env, tmp_path, {"fail-on-findings": "false"},
                         outputs={"check": out})
    assert passed.returncode == 0


@pytest.mark.parametrize("base", ["", ZEROS])
def test_without_a_base_the_last_commit_is_judged(pushed, env, tmp_path, base):
    repo, _ = pushed
    proc, out = run_step("check", repo, env, tmp_path, {"base": base})
    assert proc.returncode == 0 and out["exit-code"] == "1", proc.stdout + proc.stderr


def test_a_shallow_clone_says_the_git_rules_are_skipped(pushed, env, tmp_path):
    repo, base = pushed
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", repo.as_uri(), str(shallow), env=env)
    proc, out = run_step("check", shallow, env, tmp_path, {"base": base})
    assert proc.returncode == 0, proc.stderr
    assert "::warning title=vaultkit::git rules skipped" in proc.stdout
    assert "fetch-depth: 0" in proc.stdout
    assert out["exit-code"] == "0"  # the vault itself is clean; the rewrite is not seen
    # a fetched history brings the rules back
    git(shallow, "fetch", "-q", "--unshallow", env=env)
    proc, out = run_step("check", shallow, env, tmp_path, {"base": base})
    assert out["exit-code"] == "1", proc.stdout


def test_args_and_a_configuration_error(pushed, env, tmp_path):
    repo, base = pushed
    proc, out = run_step("check", repo, env, tmp_path,
                         {"base": base, "args": "--ignore journal-append-only"})
    assert out["exit-code"] == "0", proc.stdout
    proc, out = run_step("check", repo, env, tmp_path, {"base": base, "args": "--select nope"})
    assert proc.returncode == 2 and "unknown rule 'nope'" in proc.stderr


def test_the_log_executes_no_command_from_the_vault(pushed, env, tmp_path):
    """A pull request's file named as a workflow command, and a heading holding the older
    "##[" form quoted in a finding, reach the log as text; the action's own warning holds a
    hostile base escaped (docs/security.md, "No workflow command from a vault")."""
    from runner_commands import commands

    repo, base = pushed
    (repo / "::error title=Spoof::x.md").write_text("# x\n\nSee [[nowhere at all]].\n",
                                                   encoding="utf-8")
    (repo / "memory" / "heads.md").write_text("# Heads\n\n## ##[stop-commands]tok\n\nx\n",
                                              encoding="utf-8")
    (repo / "memory" / "asks.md").write_text("# Asks\n\nSee [[heads#::stop-commands::t2]].\n",
                                             encoding="utf-8")
    git(repo, "add", "-A", env=env)
    git(repo, "commit", "-qm", "a pull request's notes", env=env)
    proc, out = run_step("check", repo, env, tmp_path, {"base": base})
    assert proc.returncode == 0, proc.stderr
    assert commands(proc.stdout) == [] and commands(proc.stderr) == [], proc.stdout
    assert "./::error title=Spoof::x.md:3:5: VK501 broken-link" in proc.stdout
    assert "##\\u005bstop-commands]tok" in proc.stdout
    # a base given as input, not in the history: one warning, its value escaped as data
    proc, out = run_step("check", repo, env, tmp_path, {"base": "x%y\n::error::spoofed"})
    assert commands(proc.stdout) == [
        ("warning", {"title": "vaultkit"}, "git rules skipped: the base commit "
         "x%y\n::error::spoofed is not in the fetched history; check out with fetch-depth: 0")]
