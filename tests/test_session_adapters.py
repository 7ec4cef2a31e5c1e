"""The session floor's adapters: ``vaultkit mcp`` (its VaultSession) and ``vaultkit server``
(the language server) each hold a Workspace of the vault. In one process, on one vault,
each answers what ``vaultkit check --no-cache`` prints after every change on disk: a note
edited in the same size and mtime, the configuration changed, a note deleted, the parse
cache written by the other meanwhile."""

from __future__ import annotations

import json
import os

import pytest
from cli_invoke import invoke

from vaultkit.cli.mcp_server import VaultSession
from vaultkit.lint.report import render
from vaultkit.session.workspace import Workspace

pytest.importorskip("pygls")

ALICE = "---\ntype: person\n---\n# Alice\n\nWorks with [[bob#Work]] on [[site]].\n"
BOB = "---\ntype: person\n---\n# Bob\n\n## Work\n\nBuilds things.\n"
OLD = 1_700_000_000_000_000_000  # an mtime far older than any listing


def _fresh(root, *paths) -> list:
    code, out, err = invoke(["check", "--no-cache", "--format", "json", "-q", *paths], root)
    assert code in (0, 1), err
    return json.loads(out)


def test_mcp_and_the_language_server_in_one_process_answer_as_a_fresh_check(make_vault):
    from pygls.uris import from_fs_path

    from vaultkit.cli.lsp_server import VaultServer

    root = make_vault({"memory/people/alice.md": ALICE, "memory/people/bob.md": BOB,
                       "MEMORY.md": "# MEMORY\n\n- a durable fact\n",
                       "AGENTS.md": "# Agents\n\nRead MEMORY.md.\n"}).resolve()
    for p in root.rglob("*.md"):
        os.utime(p, ns=(OLD, OLD))
    bob = root / "memory/people/bob.md"
    mcp = VaultSession(root)
    server = VaultServer()
    ws, rel = server.locate(from_fs_path(str(bob)))
    assert rel == "memory/people/bob.md"
    assert isinstance(mcp.workspace, Workspace) and mcp.workspace is not ws

    def agree(*paths) -> list:
        expected = _fresh(root, *paths)
        assert mcp.vault_check({"paths": list(paths)} if paths else {})["findings"] == expected
        assert json.loads(render(ws.check(list(paths) or None), "json")) == expected
        return expected

    try:
        assert not any(f["rule"] == "broken-link" and "Work" in f["message"]
                       for f in agree())
        agree("memory/people")
        mcp.workspace.vault().save_cache()  # the parse cache on disk holds the old text
        # the heading renamed in the same size, the old mtime put back: only the ctime moves
        bob.write_text(BOB.replace("## Work", "## Jobs"))
        os.utime(bob, ns=(OLD, OLD))
        assert any(f["rule"] == "broken-link" and f["path"] == "memory/people/alice.md"
                   for f in agree())
        agree("memory/people/alice.md")
        ws.vault().save_cache()  # now the other one writes it
        (root / "vaultkit.toml").write_text("ignore = ['broken-link']\n")
        assert not any(f["rule"] == "broken-link" for f in agree())
        (root / "memory/people/alice.md").unlink()
        assert not any(f["path"] == "memory/people/alice.md" for f in agree())
    finally:
        mcp.close()
        ws.close()
