"""`vaultkit init`: the starter vault is complete, passes its own tools, and never changes a byte."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from vaultkit import __version__
from vaultkit.cli import main
from vaultkit.cli.starter import GIT_FALLBACK_EMAIL, MINIMAL_FILES, init_vault, openclaw_snippet

REPO = Path(__file__).resolve().parent.parent
TODAY = dt.date.today()

BOOTSTRAP = ["AGENTS.md", "SOUL.md", "USER.md", "MEMORY.md", "NOW.md", "HEARTBEAT.md", "TOOLS.md",
             "IDENTITY.md"]
FOLDERS = ["decisions", "lessons", "people", "projects", "preferences", "semantic", "procedural",
           "archive"]
TEMPLATES = ["decision", "lesson", "person", "project", "preference"]
EXPECTED = (BOOTSTRAP + ["memory/INDEX.md", f"memory/{TODAY.isoformat()}.md"]
            + [f"memory/{f}/.gitkeep" for f in FOLDERS] + [f"templates/{t}.md" for t in TEMPLATES]
            + [".obsidian/app.json", ".obsidian/templates.json", ".obsidian/graph.json",
               ".obsidian/daily-notes.json",
               ".gitignore", ".pre-commit-config.yaml", "vaultkit.toml", "unclosed_work.yaml"])


# -- helpers shared with test_audit.py -----------------------------------------------------

@pytest.fixture(autouse=True)
def isolated_env(tmp_path, monkeypatch):
    """No real ~/.openclaw, no global git identity, no inherited git or openclaw variables."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    for name in ("OPENCLAW_CONFIG_PATH", "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE",
                 "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME",
                 "GIT_COMMITTER_EMAIL", "GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE", "EMAIL",
                 "NO_COLOR", "FORCE_COLOR"):
        monkeypatch.delenv(name, raising=False)
    return home


def run_cli(*argv: str, capsys) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def git(repo: Path, *args: str, **env) -> str:
    full = dict(os.environ)
    full.update(env)
    proc = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, env=full)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def hashes(root: Path) -> dict[str, str]:
    out = {}
    for folder, dirs, files in os.walk(root):
        for name in files:
            path = Path(folder) / name
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                out[rel] = "link:" + os.readlink(path)
            else:
                out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def check_clean(vault: Path, capsys, *extra: str) -> str:
    code, out, err = run_cli("check", vault, "--no-cache", "--format", "json", *extra,
                             capsys=capsys)
    findings = json.loads(out)
    assert findings == [] and code == 0, (findings, err)
    return out


# -- a fresh vault ---------------------------------------------------------------------------

def test_init_writes_the_complete_layout(tmp_path):
    result = init_vault(tmp_path / "demo")
    assert sorted(result.created) == sorted(EXPECTED)
    assert result.skipped == []
    root = tmp_path / "demo"
    for rel in EXPECTED:
        assert (root / rel).is_file(), rel


def test_fresh_vault_checks_clean(tmp_path, capsys):
    code, out, _ = run_cli("init", tmp_path / "demo", capsys=capsys)
    assert code == 0
    check_clean(tmp_path / "demo", capsys)
    code, out, _ = run_cli("check", tmp_path / "demo", capsys=capsys)
    assert code == 0 and "All checks passed!" in out


def test_placeholders_filled_but_obsidian_template_variables_kept(tmp_path):
    root = tmp_path / "demo"
    init_vault(root)
    for path in root.rglob("*"):
        if path.is_file() and ".git" not in path.parts:
            text = path.read_text(encoding="utf-8")
            for token in ("{{vaultkit_version}}", "{{today}}", "{{init_time}}"):
                assert token not in text, (path, token)
    assert "{{date}}" in (root / "templates/decision.md").read_text()
    assert "{{title}}" in (root / "templates/lesson.md").read_text()


def test_bootstrap_files_hold_the_protocols(tmp_path):
    root = tmp_path / "demo"
    init_vault(root)
    memory = (root / "MEMORY.md").read_text()
    assert "## bootstrap_system_principles" in memory and "## approved_durable_entries" in memory
    agents = (root / "AGENTS.md").read_text()
    assert "## Memory Protocol" in agents and "memory_search" in agents
    assert "printf" in agents and ">>" in agents and "never rewrite" in agents
    heartbeat = (root / "HEARTBEAT.md").read_text()
    assert "hourly" in heartbeat and "Weekly" in heartbeat and "MEMORY.md" in heartbeat
    # promotion goes through the safe writer: the command (or the MCP tool), and distill's
    # candidates name the command for each line
    assert "vaultkit promote memory/YYYY-MM-DD.md:LINE" in heartbeat
    assert "memory_promote" in heartbeat and "vaultkit distill" in heartbeat
    for name in BOOTSTRAP:
        assert "To be written" not in (root / name).read_text(), name


def test_journal_has_one_entry_within_entry_rules(tmp_path):
    from vaultkit.vault.entries import entries
    from vaultkit.vault.loader import load_vault

    root = tmp_path / "demo"
    init_vault(root, now=dt.datetime(2026, 3, 1, 14, 5))
    vault = load_vault(root, use_cache=False)
    note = vault.notes["memory/2026-03-01.md"]
    found = entries(note, 3)
    assert len(found) == 1
    assert found[0].heading.text.startswith("14:05 — ")
    assert 3 <= found[0].nonblank <= 15
    assert vault.layer_of(note) == "journal"


def test_templates_are_in_the_templates_layer(tmp_path):
    from vaultkit.vault.loader import load_vault

    root = tmp_path / "demo"
    init_vault(root)
    vault = load_vault(root, use_cache=False)
    for name in TEMPLATES:
        assert vault.layers[f"templates/{name}.md"] == "templates"
        assert vault.notes[f"templates/{name}.md"].fm_error is None


@pytest.mark.parametrize("name, folder", [
    ("decision", "decisions"), ("lesson", "lessons"), ("person", "people"),
    ("project", "projects"), ("preference", "preferences")])
def test_a_note_made_from_each_template_passes_check(tmp_path, capsys, name, folder):
    """Fill the template the way Obsidian's Templates plugin does, save it in its folder."""
    root = tmp_path / "demo"
    init_vault(root)
    text = (root / "templates" / f"{name}.md").read_text()
    text = text.replace("{{date}}", "2026-02-08").replace("{{title}}", "Payment validation")
    (root / "memory" / folder / "payment-validation.md").write_text(text)
    run_cli("index", root, capsys=capsys)
    check_clean(root, capsys, "--ignore", "orphan-note")  # nothing links to it yet


def test_pre_commit_config_runs_the_installed_vaultkit_with_real_hook_ids(tmp_path):
    root = tmp_path / "demo"
    init_vault(root)
    config = yaml.safe_load((root / ".pre-commit-config.yaml").read_text())
    (repo,) = config["repos"]
    assert repo["repo"] == "local"
    manifest = {h["id"]: h for h in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}
    ids = [hook["id"] for hook in repo["hooks"]]
    assert "vaultkit-check" in ids and set(ids) <= set(manifest)
    for hook in repo["hooks"]:  # the same hooks as the manifest, run as system commands
        assert hook["language"] == "system"
        theirs = manifest[hook["id"]]
        for key in ("entry", "types", "pass_filenames", "always_run", "require_serial"):
            assert hook.get(key) == theirs.get(key), (hook["id"], key)
    assert f'required-version = ">={__version__}"' in (root / "vaultkit.toml").read_text()


def test_obsidian_settings_suit_the_layout(tmp_path):
    from vaultkit.links.obsidian import missing_colour_groups
    from vaultkit.vault.loader import load_vault

    root = tmp_path / "demo"
    init_vault(root)
    assert json.loads((root / ".obsidian/templates.json").read_text())["folder"] == "templates"
    assert json.loads((root / ".obsidian/app.json").read_text())["newFileFolderPath"] == \
        "memory/semantic"  # where a note needs no type: see test_first_day
    graph = json.loads((root / ".obsidian/graph.json").read_text())
    queries = [g["query"] for g in graph["colorGroups"]]
    assert 'path:"memory/decisions/"' in queries
    assert missing_colour_groups(load_vault(root, use_cache=False)) == []
    ignore = (root / ".gitignore").read_text().splitlines()
    assert ".vaultkit/" in ignore and ".obsidian/workspace.json" in ignore


def test_snippet_is_json5_with_the_checklist_settings(tmp_path):
    import json5

    data = json5.loads(openclaw_snippet(tmp_path / "demo"))
    defaults = data["agents"]["defaults"]
    assert defaults["compaction"]["reserveTokensFloor"] >= 40000
    assert defaults["compaction"]["memoryFlush"]["enabled"] is True
    assert defaults["heartbeat"]["every"] == "1h"
    assert defaults["workspace"] == str(tmp_path / "demo")


def test_cli_prints_snippet_and_never_writes_openclaw_json(tmp_path, capsys):
    code, out, _ = run_cli("init", tmp_path / "demo", capsys=capsys)
    assert code == 0
    assert "reserveTokensFloor: 40000" in out and "never edits it" in out
    assert not (tmp_path / "openclaw.json").exists()
    assert not list(tmp_path.rglob("openclaw.json"))
    code, out, _ = run_cli("init", tmp_path / "other", "--openclaw-snippet", capsys=capsys)
    assert code == 0 and out.startswith("{") and not (tmp_path / "other").exists()


def test_init_into_a_file_is_a_usage_error(tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    code, _, err = run_cli("init", tmp_path / "file", capsys=capsys)
    assert code == 2 and "not a folder" in err


# -- a folder that already has files -----------------------------------------------------------

def _existing(root: Path) -> None:
    (root / "memory" / "decisions").mkdir(parents=True)
    (root / "MEMORY.md").write_bytes(b"# My memory\r\n\r\n- keep CRLF and no final newline")
    (root / "memory" / "INDEX.md").write_text("# my own index\n")
    (root / "memory" / "decisions" / "pricing.md").write_text("---\ntype: decision\n---\n# P\n")
    (root / ".obsidian").mkdir()
    (root / ".obsidian" / "graph.json").write_text('{"colorGroups": [], "scale": 3}')
    (root / ".gitignore").write_text("secrets/\n")
    (root / "elsewhere.md").write_text("target\n")
    os.symlink("elsewhere.md", root / "SOUL.md")
    (root / "memory" / "people").write_text("a file where init wants a folder\n")
    (root / "notes.txt").write_bytes(bytes(range(256)))


def test_init_into_a_non_empty_folder_changes_no_existing_byte(tmp_path, capsys):
    root = tmp_path / "mine"
    root.mkdir()
    _existing(root)
    before = hashes(root)
    code, out, _ = run_cli("init", root, "--full", capsys=capsys)
    assert code == 0
    after = hashes(root)
    for rel, digest in before.items():
        assert after[rel] == digest, rel
    for rel in ("MEMORY.md", "memory/INDEX.md", ".gitignore", "SOUL.md", ".obsidian/graph.json",
                "memory/people/.gitkeep", "memory/decisions/.gitkeep"):
        assert f"skipped  {rel} (" in out, rel
    assert "created  AGENTS.md" in out and "created  memory/lessons/.gitkeep" in out
    assert "created  MEMORY.md" not in out
    assert set(after) - set(before) == {r for r in EXPECTED if r not in (
        "MEMORY.md", "memory/INDEX.md", ".gitignore", "SOUL.md", ".obsidian/graph.json",
        "memory/people/.gitkeep", "memory/decisions/.gitkeep")}


def test_init_into_a_workspace_adds_only_what_vaultkit_needs(tmp_path, capsys):
    # an agent's workspace already holds notes: its settings, hooks and .gitignore only;
    # nothing the agent loads or Obsidian shows (no NOW.md, no journal, no .obsidian/)
    root = tmp_path / "ws"
    (root / "memory").mkdir(parents=True)
    (root / "MEMORY.md").write_text("# Memory\n\n- tea, not coffee\n")
    (root / "memory" / "2026-12-01.md").write_text("# 2026-12-01\n\n## 10:00 Started\n")
    before = hashes(root)
    code, out, _ = run_cli("init", root, "--dry-run", capsys=capsys)
    assert code == 0 and hashes(root) == before  # nothing written
    planned = sorted(line.split()[-1] for line in out.splitlines()
                     if line.startswith("would create "))
    assert planned == sorted(MINIMAL_FILES)
    assert "3 files would be written" in out and "nothing written" in out
    code, out, _ = run_cli("init", root, capsys=capsys)
    assert code == 0
    assert set(hashes(root)) - set(before) == set(MINIMAL_FILES)
    assert "`vaultkit init --full` adds the rest" in out
    code, out, _ = run_cli("init", root, "--full", "--dry-run", capsys=capsys)
    assert "would create NOW.md" in out and "would create .obsidian/graph.json" in out
    assert "skipped  vaultkit.toml (exists; left unchanged)" in out
    assert set(hashes(root)) - set(before) == set(MINIMAL_FILES)
    code, _, err = run_cli("init", root, "--dry-run", "--git", capsys=capsys)
    assert code == 2 and "cannot go with --git" in err


def test_init_twice_adds_nothing(tmp_path):
    root = tmp_path / "demo"
    init_vault(root)
    before = hashes(root)
    result = init_vault(root)
    assert result.created == []
    assert sorted(result.skipped) == sorted(EXPECTED)
    assert hashes(root) == before


def test_symlinked_folder_out_of_the_vault_is_not_written_through(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "demo"
    (root / "memory").mkdir(parents=True)
    os.symlink(outside, root / "memory" / "semantic")
    result = init_vault(root)
    assert "memory/semantic/.gitkeep" in result.skipped
    assert list(outside.iterdir()) == []


# -- --git ---------------------------------------------------------------------------------------

def test_git_first_commit_without_a_global_identity(tmp_path, capsys):
    root = tmp_path / "demo"
    code, out, err = run_cli("init", root, "--git", capsys=capsys)
    assert code == 0, err
    assert "committed" in out and "no git identity is configured" in out
    assert git(root, "log", "--format=%ae %s").strip() == (
        f"{GIT_FALLBACK_EMAIL} Start the memory vault (vaultkit init)")
    assert git(root, "status", "--porcelain") == ""
    tracked = git(root, "ls-files").split()
    assert "AGENTS.md" in tracked and f"memory/{TODAY.isoformat()}.md" in tracked
    assert not any(p.startswith(".vaultkit/") for p in tracked)
    # the fallback identity is never written into the repository's config
    proc = subprocess.run(["git", "config", "--get", "user.email"], cwd=root, capture_output=True)
    assert proc.returncode != 0


def test_git_uses_the_configured_identity(tmp_path, isolated_env, capsys):
    (isolated_env / ".gitconfig").write_text("[user]\n\tname = Ada\n\temail = ada@example.com\n")
    root = tmp_path / "demo"
    code, out, _ = run_cli("init", root, "--git", capsys=capsys)
    assert code == 0 and "no git identity" not in out
    assert git(root, "log", "--format=%an <%ae>").strip() == "Ada <ada@example.com>"


def test_git_on_an_existing_repository_with_commits_commits_nothing(tmp_path, capsys):
    root = tmp_path / "demo"
    root.mkdir()
    git(root, "init", "-q")
    (root / "README.md").write_text("# mine\n")
    git(root, "add", "README.md")
    git(root, "-c", "user.name=x", "-c", "user.email=x@y", "commit", "-qm", "mine")
    code, out, _ = run_cli("init", root, "--git", capsys=capsys)
    assert code == 0 and "nothing committed" in out
    assert git(root, "rev-list", "--count", "HEAD").strip() == "1"


def test_git_inside_another_repository_does_not_nest_one(tmp_path, capsys):
    outer = tmp_path / "outer"
    outer.mkdir()
    git(outer, "init", "-q")
    code, out, _ = run_cli("init", outer / "vault", "--git", capsys=capsys)
    assert code == 0 and "inside the repository" in out
    assert not (outer / "vault" / ".git").exists()


# -- done when: init, check, audit with the printed snippet ----------------------------------------

def test_fresh_vault_passes_every_check_it_can(tmp_path, capsys):
    """init --git, save the printed snippet as openclaw.json beside it: only the two checks a
    fresh vault cannot pass by itself remain (no remote yet; hook not installed yet); after
    `pre-commit install` and a remote, everything passes."""
    root = tmp_path / "demo"
    assert run_cli("init", root, "--git", capsys=capsys)[0] == 0
    check_clean(root, capsys)
    code, snippet, _ = run_cli("init", root, "--openclaw-snippet", capsys=capsys)
    (tmp_path / "openclaw.json").write_text(snippet)
    code, out, _ = run_cli("audit", root, "--format", "json", capsys=capsys)
    statuses = {c["id"]: c["status"] for c in json.loads(out)}
    assert code == 0  # a fresh starter vault passes its own audit
    assert statuses.pop("git-backup") == "warn"  # no remote yet
    assert statuses.pop("pre-commit") == "tip"  # `pre-commit install` not run yet
    assert statuses.pop("snapshots") == "tip"  # the next steps' `vaultkit snapshot` not yet
    assert set(statuses.values()) == {"pass"}, statuses
    subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=root, check=True,
                   capture_output=True)
    git(root, "remote", "add", "origin", str(tmp_path / "backup.git"))
    assert run_cli("snapshot", root, capsys=capsys)[0] == 0
    code, out, _ = run_cli("audit", root, "--format", "json", capsys=capsys)
    assert code == 0
    assert {c["id"]: c["status"] for c in json.loads(out)} == dict.fromkeys(
        [c["id"] for c in json.loads(out)], "pass")
    check_clean(root, capsys)


# -- a vault in a subfolder of an existing repository ---------------------------------------
# pre-commit reads .pre-commit-config.yaml only at the repository's top and runs the hooks
# from there: the starter's configuration goes there, pointed at the vault's folder.

def _monorepo(tmp_path) -> Path:
    repo = tmp_path / "monorepo"
    (repo / "src").mkdir(parents=True)
    git(repo, "init", "-q")
    (repo / "src" / "app.py").write_text("print('hi')\n")
    return repo


def _hooks(config: Path) -> dict:
    data = yaml.safe_load(config.read_text(encoding="utf-8"))
    return {h["id"]: h for repo in data["repos"] for h in repo.get("hooks", [])}


def test_init_below_a_repository_top_writes_the_hooks_at_the_top(tmp_path, capsys,
                                                                   monkeypatch):
    import re

    repo = _monorepo(tmp_path)
    monkeypatch.chdir(repo)
    code, out, _ = run_cli("init", "agent/vault", capsys=capsys)
    assert code == 0
    vault = repo / "agent" / "vault"
    assert not (vault / ".pre-commit-config.yaml").exists()  # pre-commit never reads it there
    config = repo / ".pre-commit-config.yaml"
    assert f"created  {config} (the repository's top, where pre-commit reads it" in out
    hooks = _hooks(config)
    assert sorted(hooks) == ["vaultkit-audit", "vaultkit-check", "vaultkit-colors",
                             "vaultkit-index"]
    for hook_id in ("vaultkit-index", "vaultkit-colors", "vaultkit-audit"):
        assert hooks[hook_id]["args"] == ["agent/vault"], hook_id  # they take no file names
    files = hooks["vaultkit-check"]["files"]
    assert "args" not in hooks["vaultkit-check"]  # it finds the vault from the files
    assert re.search(files, "agent/vault/memory/2026-12-01.md")
    assert not re.search(files, "agent/vault2/x.md") and not re.search(files, "src/agent/vault/x.md")
    # the same hooks as the whole-workspace starter, only pointed at the folder
    starter = _hooks(REPO / "vault-template" / ".pre-commit-config.yaml")
    for hook_id, hook in hooks.items():
        assert {k: v for k, v in hook.items() if k not in ("args", "files")} == starter[hook_id]
    # the next steps commit the configuration too: pasted from the vault's folder
    assert "  git add . ../../.pre-commit-config.yaml && git commit" in out
    check_clean(vault, capsys)


def test_init_below_a_top_with_its_own_config_prints_the_lines_and_changes_no_byte(
        tmp_path, capsys, monkeypatch):
    repo = _monorepo(tmp_path)
    config = repo / ".pre-commit-config.yaml"
    mine = ("# my hooks\nrepos:\n-   repo: https://github.com/pre-commit/pre-commit-hooks\n"
            "    rev: v4.6.0\n    hooks:\n    -   id: trailing-whitespace\n")
    config.write_text(mine)
    monkeypatch.chdir(repo)
    code, out, _ = run_cli("init", "memory-vault", capsys=capsys)
    assert code == 0
    assert config.read_text() == mine
    assert not (repo / "memory-vault" / ".pre-commit-config.yaml").exists()
    assert f"skipped  {config} (exists; left unchanged: add the lines below, or run this " \
           "again with --add-hooks)" in out
    lines = out.split("under `repos:` in " + str(config)
                      + " (pre-commit reads only the repository's top one):\n\n", 1)[1]
    # the printed lines, pasted at the end of the user's `repos:`, are the starter's hooks
    pasted = yaml.safe_load(mine + lines)
    assert pasted["repos"][0]["hooks"] == [{"id": "trailing-whitespace"}]
    assert pasted["repos"][1]["repo"] == "local"
    hooks = {h["id"]: h for h in pasted["repos"][1]["hooks"]}
    assert hooks["vaultkit-index"]["args"] == ["memory-vault"]
    assert hooks["vaultkit-check"]["files"] == "^memory-vault/"
    # --dry-run says the same and writes nothing
    code, out, _ = run_cli("init", "other", "--dry-run", capsys=capsys)
    assert code == 0 and "add these lines under `repos:`" in out and config.read_text() == mine


def test_add_hooks_appends_one_entry_and_keeps_every_byte_of_the_users_config(
        tmp_path, capsys, monkeypatch):
    repo = _monorepo(tmp_path)
    config = repo / ".pre-commit-config.yaml"
    mine = ("default_stages: [pre-commit]\nrepos:\n  - repo: https://github.com/psf/black\n"
            "    rev: 24.1.0\n    hooks:\n      - id: black\n")
    config.write_text(mine)
    monkeypatch.chdir(repo)
    code, out, _ = run_cli("init", "agent/vault", "--add-hooks", capsys=capsys)
    assert code == 0
    assert f"added    vaultkit's hooks for agent/vault/ to {config}" in out
    text = config.read_text()
    assert text.startswith(mine)  # appended: nothing of the user's file changed
    data = yaml.safe_load(text)
    assert data["default_stages"] == ["pre-commit"]
    assert [r["repo"] for r in data["repos"]] == ["https://github.com/psf/black", "local"]
    assert _hooks(config)["vaultkit-colors"]["args"] == ["agent/vault"]
    # a second run finds them: nothing added twice; a configuration left in the vault's
    # folder (an earlier init's) is named as one pre-commit never reads, and kept
    (repo / "agent" / "vault" / ".pre-commit-config.yaml").write_text("repos: []\n")
    code, out, _ = run_cli("init", "agent/vault", "--add-hooks", capsys=capsys)
    assert code == 0 and f"skipped  {config} (has vaultkit's hooks for agent/vault/" in out
    assert config.read_text() == text
    assert (f"note     .pre-commit-config.yaml here is never read by pre-commit, which reads "
            f"only {config}; left unchanged") in out
    assert (repo / "agent" / "vault" / ".pre-commit-config.yaml").read_text() == "repos: []\n"


def test_add_hooks_never_rewrites_a_config_it_cannot_append_to(tmp_path, capsys, monkeypatch):
    repo = _monorepo(tmp_path)
    config = repo / ".pre-commit-config.yaml"
    flow = "repos: [{repo: local, hooks: [{id: x, name: x, entry: 'true', language: system}]}]\n"
    config.write_text(flow)
    monkeypatch.chdir(repo)
    code, out, _ = run_cli("init", "vault", "--add-hooks", capsys=capsys)
    assert code == 0 and config.read_text() == flow
    assert "not the file's last block in block style, so nothing was added" in out
    assert "add these lines under `repos:`" in out


def test_a_vault_folder_with_awkward_characters_is_quoted_for_yaml_and_regex(tmp_path):
    import re

    from vaultkit.cli.starter import files_pattern, subfolder_config

    for rel in ("my vault, [2026]", "a.b+c/(x)", "#notes", "-odd", "über/ü"):
        data = yaml.safe_load(subfolder_config(rel, TODAY))
        hooks = {h["id"]: h for h in data["repos"][0]["hooks"]}
        arg = hooks["vaultkit-index"]["args"][0]
        assert arg in (rel, "./" + rel)  # (a folder starting with '-' is no option)
        assert hooks["vaultkit-check"]["files"] == files_pattern(rel)
        assert re.search(files_pattern(rel), rel + "/memory/x.md")
        assert not re.search(files_pattern(rel), "x" + rel + "/memory/x.md")


def test_a_vault_folder_whose_name_is_not_utf8_gets_no_config_and_no_crash(tmp_path, capsys,
                                                                           monkeypatch):
    repo = _monorepo(tmp_path)
    monkeypatch.chdir(repo)
    result = init_vault(repo / os.fsdecode(b"caf\xe9"))  # (it raised UnicodeEncodeError)
    assert not (repo / ".pre-commit-config.yaml").exists()  # (no empty one left behind)
    assert result.hooks.done == "" and result.hooks.lines == ""
    assert result.hooks.why == ("the vault's folder name is not UTF-8, which a pre-commit "
                                "configuration cannot name: rename the folder, then run init "
                                "again")


def test_a_workspace_with_its_own_config_without_vaultkits_hooks(tmp_path, capsys):
    """The workspace is the repository and has a .pre-commit-config.yaml of its own: init
    said only "exists; left unchanged" and its next steps' `pre-commit install` turned on no
    vaultkit hook. It now gives the lines to add, and --add-hooks adds them."""
    root = tmp_path / "ws"
    root.mkdir()
    git(root, "init", "-q")
    (root / "notes.md").write_text("# Notes\n")
    config = root / ".pre-commit-config.yaml"
    mine = ("repos:\n-   repo: https://github.com/pre-commit/pre-commit-hooks\n    rev: v4.6.0\n"
            "    hooks:\n    -   id: trailing-whitespace\n")
    config.write_text(mine)
    code, out, _ = run_cli("init", root, capsys=capsys)
    assert code == 0 and config.read_text() == mine
    assert f"skipped  {config} (exists; left unchanged: add the lines below, or run this " \
           "again with --add-hooks)" in out
    lines = out.split("(pre-commit reads only the repository's top one):\n\n", 1)[1]
    hooks = {h["id"]: h for h in yaml.safe_load(mine + lines)["repos"][1]["hooks"]}
    starter = yaml.safe_load((REPO / "vault-template/.pre-commit-config.yaml").read_text())
    assert list(hooks.values()) == starter["repos"][0]["hooks"]  # as they are: no args, files
    code, out, _ = run_cli("init", root, "--add-hooks", capsys=capsys)
    assert code == 0 and f"added    vaultkit's hooks for this vault to {config}" in out
    assert config.read_text().startswith(mine)
    assert [r["repo"] for r in yaml.safe_load(config.read_text())["repos"]][-1] == "local"
    code, out, _ = run_cli("init", root, capsys=capsys)
    assert "skipped  .pre-commit-config.yaml (exists; left unchanged)" in out


def test_init_run_again_says_nothing_was_added(tmp_path):
    # it said "The folder holds notes already, so only what vaultkit needs was added" with
    # 0 files written
    from cli_invoke import invoke

    code, _, err = invoke(["init", "demo", "-q"], tmp_path)
    assert code == 0, err
    code, out, err = invoke(["init", "demo"], tmp_path)
    assert code == 0, err
    assert "only what vaultkit needs was added" not in out
    assert ("\nvaultkit is set up in demo already: 0 files written, 3 skipped; `vaultkit init "
            "--full` adds the rest of the starter") in out
