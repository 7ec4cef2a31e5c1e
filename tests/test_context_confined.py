"""``vaultkit context`` reads nothing out of the repository: a symlink (a file or a folder
on the way) that leads out, an import by ``..`` or an absolute path, is reported as not
read, never followed; a file with other hard links is measured but its text not shown.

Each outside file holds a random token: it must appear in no output of ``context`` (text,
``--show``, ``--format json``), nor in ``check``'s or ``audit``'s."""

from __future__ import annotations

import json
import os
import secrets
import subprocess

import pytest
from cli_invoke import invoke
from vault_files import write_files as write

from vaultkit.vault.loader import load_vault
from vaultkit.vault.runtimes import contexts

FORMS = (["--show"], [], ["--format", "json"], ["--format", "json", "--show"])


@pytest.fixture
def outside(tmp_path):
    """A folder outside the vault holding ``secret.md``: a random token, and enough text
    that a runtime would cut it if it were read."""
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    token = "tok" + secrets.token_hex(12)
    (folder / "secret.md").write_text(f"# Outside\n{token}\n" + "x" * 40_000 + "\n")
    return folder, token


def every_output(root, *args):
    """(exit code, stdout + stderr) of ``context`` in each form, the code of each."""
    runs = []
    for form in FORMS:
        code, out, err = invoke(["context", str(root), *args, *form], root)
        runs.append((form, code, out, err))
    return runs


def assert_never_shown(runs, token):
    for form, _, out, err in runs:
        assert token not in out and token not in err, form
        assert "Traceback" not in err, form


def test_claude_md_itself_a_symlink_out_of_the_vault(make_vault, outside):
    folder, token = outside
    root = make_vault({"notes.md": "# n\n"})
    (root / "CLAUDE.md").symlink_to(folder / "secret.md")
    runs = every_output(root, "--runtime", "claude-code")
    assert_never_shown(runs, token)
    for form, code, out, err in runs:
        assert code == 1 and err == "", form
    text = runs[0][2]
    assert "CLAUDE.md" in text and "NOT READ: a symlink out of the vault" in text
    assert "----- claude-code: CLAUDE.md -----" not in text  # no text shown for it
    (item,) = json.loads(runs[3][2])["runtimes"]
    (piece,) = item["files"]
    assert piece["path"] == "CLAUDE.md" and piece["length"] == 0
    assert piece["refused"].startswith("a symlink out of the vault (to ")
    assert item["text"] == ""


def test_an_import_that_is_a_symlink_out_of_the_vault(make_vault, outside):
    folder, token = outside
    root = make_vault({"CLAUDE.md": "# Project\n@notes/link.md\n"})
    (root / "notes").mkdir()
    (root / "notes" / "link.md").symlink_to(folder / "secret.md")
    runs = every_output(root, "--runtime", "claude-code")
    assert_never_shown(runs, token)
    text = runs[0][2]
    assert "notes/link.md" in text and "NOT READ: a symlink out of the vault" in text
    assert "# Project" in text  # the importing file is still shown
    assert {code for _, code, _, _ in runs} == {1}


def test_an_import_through_a_symlinked_folder(make_vault, outside):
    folder, token = outside
    root = make_vault({"CLAUDE.md": "@docs/secret.md\n", "AGENTS.md": "# Rules\n"})
    (root / "docs").symlink_to(folder, target_is_directory=True)
    runs = every_output(root, "--runtime", "claude-code", "--runtime", "codex")
    assert_never_shown(runs, token)
    assert "docs/secret.md" in runs[0][2] and "NOT READ: a symlink out of the vault" \
        in runs[0][2]


def test_imports_by_dotdot_and_absolute_paths_are_not_read(make_vault, outside):
    folder, token = outside
    root = make_vault({"CLAUDE.md": f"@../elsewhere/secret.md\n@{folder}/secret.md\n"
                                    "@./../elsewhere/secret.md\n"})
    runs = every_output(root, "--runtime", "claude-code")
    assert_never_shown(runs, token)
    assert runs[0][2].count("outside the repository: not simulated") == 3


def test_bootstrap_and_project_docs_symlinked_out(make_vault, outside):
    folder, token = outside
    root = make_vault({"SOUL.md": "# Soul\n", "memory/2026-02-15.md": "# d\n"})
    (root / "AGENTS.md").symlink_to(folder / "secret.md")
    runs = every_output(root, "--runtime", "openclaw", "--runtime", "codex")
    assert_never_shown(runs, token)
    text = runs[0][2]
    assert text.count("AGENTS.md") >= 2 and text.count("NOT READ: a symlink out of") == 2
    assert "# Soul" in text


def test_workspace_file_above_a_memory_only_vault(make_vault, outside):
    folder, token = outside
    root = make_vault({"vaultkit.toml": 'memory-dir = "."\n', "2026-02-15.md": "# d\n"},
                      root_name="ws/memory")
    write(root.parent, {"SOUL.md": "# Soul\n"})
    (root.parent / "AGENTS.md").symlink_to(folder / "secret.md")
    runs = every_output(root, "--runtime", "openclaw")
    assert_never_shown(runs, token)
    assert "../AGENTS.md" in runs[0][2] and "NOT READ: a symlink out of" in runs[0][2]


def test_rules_and_auto_memory_symlinked_out(make_vault, outside):
    folder, token = outside
    root = make_vault({"CLAUDE.md": "# c\n",
                       "vaultkit.toml": '[runtime.claude-code]\nauto-memory-dir = "mem"\n'})
    (root / ".claude" / "rules").mkdir(parents=True)
    (root / ".claude" / "rules" / "r.md").symlink_to(folder / "secret.md")
    (root / "mem").mkdir()
    (root / "mem" / "MEMORY.md").symlink_to(folder / "secret.md")
    runs = every_output(root, "--runtime", "claude-code")
    assert_never_shown(runs, token)
    text = runs[0][2]
    assert ".claude/rules/r.md" in text and "mem/MEMORY.md" in text
    assert text.count("NOT READ: a symlink out of the vault") == 2


def test_a_symlinked_rules_folder(make_vault, outside):
    folder, token = outside
    root = make_vault({"CLAUDE.md": "# c\n"})
    (root / ".claude").mkdir()
    (root / ".claude" / "rules").symlink_to(folder, target_is_directory=True)
    runs = every_output(root, "--runtime", "claude-code")
    assert_never_shown(runs, token)
    assert ".claude/rules" in runs[0][2] and "NOT READ: a symlink out of" in runs[0][2]


def test_a_symlink_into_git_is_not_read(make_vault):
    root = make_vault({"CLAUDE.md": "@notes/cfg.md\n"})
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    token = "tok" + secrets.token_hex(12)
    with open(root / ".git" / "config", "a") as handle:
        handle.write(f"[remote \"x\"]\n\turl = https://example.invalid/{token}\n")
    (root / "notes").mkdir()
    (root / "notes" / "cfg.md").symlink_to(root / ".git" / "config")
    runs = every_output(root, "--runtime", "claude-code")
    assert_never_shown(runs, token)
    assert "NOT READ: a symlink into .git/" in runs[0][2]


def test_a_symlink_inside_the_vault_is_followed(make_vault):
    root = make_vault({"CLAUDE.md": "@notes/link.md\n", "docs/real.md": "# Real\n"})
    (root / "notes").mkdir()
    (root / "notes" / "link.md").symlink_to(root / "docs" / "real.md")
    code, out, err = invoke(["context", str(root), "--runtime", "claude-code", "--show"], root)
    assert (code, err) == (0, "")
    assert "----- claude-code: notes/link.md -----\n# Real\n" in out


def test_hard_linked_file_is_measured_but_not_shown(make_vault, outside):
    folder, token = outside
    root = make_vault({"notes.md": "# n\n"})
    os.link(folder / "secret.md", root / "CLAUDE.md")
    runs = every_output(root, "--runtime", "claude-code")
    assert_never_shown(runs, token)
    show = runs[0][2]
    assert "----- claude-code: CLAUDE.md -----\n(not shown: has 2 hard links" in show
    table = runs[1][2]
    assert "loaded whole" in table and "40," in table  # its size is still what loads
    (item,) = json.loads(runs[3][2])["runtimes"]
    assert token not in item["text"] and "not shown: has 2 hard links" in item["text"]
    assert item["files"][0]["length"] > 40_000


def test_check_and_audit_do_not_read_through_the_link(make_vault, outside):
    # the outside file is over OpenClaw's 20,000-unit limit: were it read, it would be cut
    folder, token = outside
    root = make_vault({"SOUL.md": "# Soul\n", "memory/2026-02-15.md": "# d\n",
                       "vaultkit.toml": 'runtimes = ["openclaw"]\n'})
    (root / "AGENTS.md").symlink_to(folder / "secret.md")
    vault = load_vault(root, root=root, use_cache=False)
    (ctx,) = contexts(vault)
    agents = next(p for p in ctx.pieces if p.path == "AGENTS.md")
    assert (agents.length, agents.injected, agents.cut) == (0, "", "")
    assert agents.refused.startswith("a symlink out of the vault")
    code, out, err = invoke(["check", str(root), "--no-cache", "--select",
                             "bootstrap-truncation,bootstrap-budget"], root)
    assert token not in out + err and "AGENTS.md" not in out
    code, out, err = invoke(["audit", str(root), "--format", "json"], root)
    assert token not in out + err
    footprint = next(c for c in json.loads(out) if c["id"] == "bootstrap-footprint")
    assert "40,0" not in json.dumps(footprint)


def test_a_bootstrap_file_above_a_memory_only_vault_is_not_read_through_its_link(
        make_vault, outside):
    # the vault's loader reads the workspace's bootstrap files itself (the audit's
    # footprint lists their sizes, the MCP resources serve them): the link is not followed
    folder, token = outside
    root = make_vault({"vaultkit.toml": 'memory-dir = "."\n', "2026-02-15.md": "# d\n"},
                      root_name="ws/memory")
    write(root.parent, {"SOUL.md": "# Soul\n"})
    (root.parent / "AGENTS.md").symlink_to(folder / "secret.md")
    vault = load_vault(root, root=root, use_cache=False)
    note = vault.external["../AGENTS.md"]
    assert note.error.startswith("symlink points outside the workspace") and note.size == 0
    code, out, err = invoke(["audit", str(root), "--format", "json"], root)
    footprint = next(c for c in json.loads(out) if c["id"] == "bootstrap-footprint")
    assert token not in out + err and "40,0" not in json.dumps(footprint)
    assert not any(r["bytes"] for r in footprint["details"] if r["file"] == "../AGENTS.md")


def test_a_broken_symlink_import_is_still_missing(make_vault):
    root = make_vault({"CLAUDE.md": "@notes/gone.md\n"})
    (root / "notes").mkdir()
    (root / "notes" / "gone.md").symlink_to(root / "notes" / "nothing.md")
    code, out, err = invoke(["context", str(root), "--runtime", "claude-code"], root)
    assert (code, err) == (0, "")
    assert "import CLAUDE.md:1 @notes/gone.md: missing (no such file)" in out
