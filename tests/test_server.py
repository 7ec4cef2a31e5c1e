"""`vaultkit server` driven by a real LSP client over stdio (pytest-lsp): diagnostics of
the unsaved text and of what depends on it, code actions, hover, several vaults, shutdown."""

from __future__ import annotations

import asyncio
import json
import sys

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient

ALICE = "---\ntype: person\n---\n# Alice\n\nWorks with [[bob#Work]].\n"
BOB = "---\ntype: person\n---\n# Bob\n\n## Work\n\nBuilds things.\n"
MEMORY = "# MEMORY\n\n" + "".join(f"- durable fact number {i}\n" for i in range(1, 11))
DOCS = "https://example.org/vaultkit/"


@pytest_lsp.fixture(config=ClientServerConfig(
    server_command=[sys.executable, "-m", "vaultkit", "server", "--stdio"]))
async def client(lsp_client: LanguageClient, make_vault, tmp_path):
    # two vaults, neither with git, both in subfolders of the folder the editor opened
    lsp_client.vault = make_vault({"memory/people/alice.md": ALICE,
                                   "memory/people/bob.md": BOB, "MEMORY.md": MEMORY})
    lsp_client.other = make_vault({"memory/people/carol.md": "# Carol\n\nSee [[dave]].\n"},
                                  root_name="other")
    await lsp_client.initialize_session(lsp.InitializeParams(
        capabilities=lsp.ClientCapabilities(), root_uri=tmp_path.as_uri(),
        initialization_options={"ruleDocs": DOCS}))
    yield
    await lsp_client.shutdown_session()


def _uri(root, rel: str) -> str:
    return (root.resolve() / rel).as_uri()


def _open(client: LanguageClient, uri: str, text: str, version: int = 1) -> None:
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(
        lsp.TextDocumentItem(uri=uri, language_id="markdown", version=version, text=text)))


def _change(client: LanguageClient, uri: str, text: str, version: int) -> None:
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
        [lsp.TextDocumentContentChangeWholeDocument(text=text)]))


async def _diagnostics(client: LanguageClient, uri: str, want, timeout: float = 30.0):
    """The diagnostics of ``uri`` once ``want(them)`` holds."""
    async def wait():
        while not (uri in client.diagnostics and want(client.diagnostics[uri])):
            await client.wait_for_notification("textDocument/publishDiagnostics")
    await asyncio.wait_for(wait(), timeout)
    return client.diagnostics[uri]


def _rules(diags) -> list[str]:
    return sorted(d.data["rule"] for d in diags)


def _apply(text: str, edit: lsp.WorkspaceEdit) -> str:
    """The text with a workspace edit's one text edit applied (ASCII: units are chars)."""
    (change,) = edit.document_changes
    (e,) = change.edits
    lines = text.split("\n")

    def offset(p: lsp.Position) -> int:
        return sum(len(line) + 1 for line in lines[:p.line]) + p.character

    return text[:offset(e.range.start)] + e.new_text + text[offset(e.range.end):]


@pytest.mark.asyncio
async def test_a_finding_arrives_with_the_unsaved_text_and_goes_with_it(client):
    uri = _uri(client.vault, "memory/people/alice.md")
    broken = ALICE + "And [[nowhere]].\n"
    _open(client, uri, broken)
    diags = await _diagnostics(client, uri, lambda ds: "broken-link" in _rules(ds))
    (d,) = [d for d in diags if d.data["rule"] == "broken-link"]
    assert d.source == "vaultkit" and d.code.startswith("VK")
    assert d.severity == lsp.DiagnosticSeverity.Warning  # (broken-link: a warning)
    assert d.code_description.href == DOCS + "rules/#broken-link"
    assert d.range.start == lsp.Position(line=6, character=4)
    assert (client.vault / "memory/people/alice.md").read_text() == ALICE  # nothing saved
    _change(client, uri, ALICE, 2)
    await _diagnostics(client, uri, lambda ds: "broken-link" not in _rules(ds))


@pytest.mark.asyncio
async def test_a_renamed_heading_breaks_the_links_to_it_in_notes_not_open(client):
    bob = _uri(client.vault, "memory/people/bob.md")
    alice = _uri(client.vault, "memory/people/alice.md")
    _open(client, bob, BOB)
    await _diagnostics(client, bob, lambda ds: True)
    _change(client, bob, BOB.replace("## Work", "## Jobs"), 2)
    diags = await _diagnostics(client, alice, lambda ds: "broken-link" in _rules(ds))
    assert "no heading 'Work'" in diags[0].message
    _change(client, bob, BOB, 3)
    await _diagnostics(client, alice, lambda ds: "broken-link" not in _rules(ds))


@pytest.mark.asyncio
async def test_code_actions_fix_as_check_fix_does_and_accept_into_the_baseline(client):
    uri = _uri(client.vault, "memory/people/bob.md")
    text = BOB.replace("type: person\n", "type: person\ntag: [x]\n")
    _open(client, uri, text)
    diags = await _diagnostics(client, uri, lambda ds: "deprecated-property" in _rules(ds))
    (d,) = [d for d in diags if d.data["rule"] == "deprecated-property"]
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        lsp.TextDocumentIdentifier(uri), d.range, lsp.CodeActionContext(diagnostics=[d])))
    fix = [a for a in actions if isinstance(a, lsp.CodeAction) and a.kind == "quickfix"]
    assert len(fix) == 1
    assert _apply(text, fix[0].edit) == BOB.replace("type: person\n", "type: person\ntags: [x]\n")
    assert (client.vault / "memory/people/bob.md").read_text() == BOB  # never written
    every = await client.text_document_code_action_async(lsp.CodeActionParams(
        lsp.TextDocumentIdentifier(uri), d.range,
        lsp.CodeActionContext(diagnostics=[], only=["source.fixAll"])))
    assert [a.kind for a in every] == ["source.fixAll.vaultkit"]
    assert _apply(text, every[0].edit) == _apply(text, fix[0].edit)

    accept = [a for a in actions if isinstance(a, lsp.Command)]
    assert [a.command for a in accept] == ["vaultkit.acceptFinding"]
    await client.workspace_execute_command_async(lsp.ExecuteCommandParams(
        accept[0].command, accept[0].arguments))
    await _diagnostics(client, uri, lambda ds: "deprecated-property" not in _rules(ds))
    data = json.loads((client.vault / "vaultkit-baseline.json").read_text())
    assert [(e["rule"], e["path"]) for e in data["findings"]] == [
        ("deprecated-property", "memory/people/bob.md")]


@pytest.mark.asyncio
async def test_hover_on_a_link_and_on_a_bootstrap_files_first_line(client):
    alice = _uri(client.vault, "memory/people/alice.md")
    _open(client, alice, ALICE)
    hover = await client.text_document_hover_async(lsp.HoverParams(
        lsp.TextDocumentIdentifier(alice), lsp.Position(line=5, character=14)))
    assert "`[[bob#Work]]` → `memory/people/bob.md`" in hover.contents.value
    bob = _uri(client.vault, "memory/people/bob.md")
    _open(client, bob, BOB.replace("## Work", "## Jobs"))
    hover = await client.text_document_hover_async(lsp.HoverParams(
        lsp.TextDocumentIdentifier(alice), lsp.Position(line=5, character=14)))
    assert "has no heading `Work`" in hover.contents.value
    memory = _uri(client.vault, "MEMORY.md")
    _open(client, memory, MEMORY)
    hover = await client.text_document_hover_async(lsp.HoverParams(
        lsp.TextDocumentIdentifier(memory), lsp.Position(line=0, character=2)))
    assert "vaultkit context" in hover.contents.value and "MEMORY.md" in hover.contents.value
    none = await client.text_document_hover_async(lsp.HoverParams(
        lsp.TextDocumentIdentifier(memory), lsp.Position(line=3, character=2)))
    assert none is None


@pytest.mark.asyncio
async def test_each_vault_open_is_checked_as_its_own(client):
    carol = _uri(client.other, "memory/people/carol.md")
    alice = _uri(client.vault, "memory/people/alice.md")
    _open(client, carol, "# Carol\n\nSee [[dave]].\n")
    _open(client, alice, ALICE)
    diags = await _diagnostics(client, carol, lambda ds: "broken-link" in _rules(ds))
    assert all("dave" in d.message for d in diags if d.data["rule"] == "broken-link")
    diags = await _diagnostics(client, alice, lambda ds: True)
    assert "broken-link" not in _rules(diags)


@pytest.mark.asyncio
async def test_shutdown_ends_the_server_cleanly(client):
    await client.shutdown_session()
    assert client._server.returncode == 0
    client.capabilities = None  # (the fixture's own shutdown: already done)


@pytest_lsp.fixture(config=ClientServerConfig(
    server_command=[sys.executable, "-m", "vaultkit", "server", "--stdio", "--no-cache"]))
async def big(lsp_client: LanguageClient, make_vault, tmp_path):
    # enough notes that the loader parses them in forked worker processes
    files = {f"memory/semantic/n{i:03}.md": f"# Note {i}\n\nSee [[n{i + 1:03}]].\n"
             for i in range(450)}
    lsp_client.vault = make_vault(files)
    await lsp_client.initialize_session(lsp.InitializeParams(
        capabilities=lsp.ClientCapabilities(), root_uri=tmp_path.as_uri()))
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_a_vault_parsed_by_forked_workers_is_checked(big):
    # (a forked worker closes sys.stdin as it starts: it must not be the protocol's, whose
    # reading thread holds its lock, or the fork hangs and no finding ever arrives)
    uri = _uri(big.vault, "memory/semantic/n449.md")
    _open(big, uri, "# Note 449\n\nSee [[n450]].\n")
    diags = await _diagnostics(big, uri, lambda ds: "broken-link" in _rules(ds), timeout=90)
    assert any("n450" in d.message for d in diags)


def test_without_pygls_the_command_says_how_to_install_it(monkeypatch, tmp_path):
    from cli_invoke import invoke

    from vaultkit.cli.commands import server

    monkeypatch.setattr(server, "pygls_available", lambda: False)
    code, out, err = invoke(["server"], tmp_path)
    assert code == 2 and out == ""
    assert err.strip() == server.INSTALL_HINT


def test_a_root_that_is_no_folder_is_one_line_and_exit_2(tmp_path):
    from cli_invoke import invoke

    code, out, err = invoke(["server", "--root", str(tmp_path / "nowhere")], tmp_path)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "not a folder" in err


TOKEN = "ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5"


@pytest_lsp.fixture(config=ClientServerConfig(
    server_command=[sys.executable, "-m", "vaultkit", "server", "--stdio"]))
async def broken(lsp_client: LanguageClient, make_vault, tmp_path):
    lsp_client.vault = make_vault({"vaultkit.toml": f'select = ["{TOKEN}"]\n',
                                   "memory/people/alice.md": ALICE})
    await lsp_client.initialize_session(lsp.InitializeParams(
        capabilities=lsp.ClientCapabilities(), root_uri=tmp_path.as_uri()))
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_a_broken_config_is_one_message_with_its_credential_masked(broken):
    _open(broken, _uri(broken.vault, "memory/people/alice.md"), ALICE)
    await asyncio.wait_for(broken.wait_for_notification("window/showMessage"), 60)
    (message,) = broken.messages
    assert message.type == lsp.MessageType.Error
    assert "unknown rule" in message.message and "\n" not in message.message
    assert TOKEN not in message.message and "ghp_" in message.message


def test_a_change_after_a_pause_is_checked_at_once_a_burst_waits():
    """The first key after a pause is checked without the debounce; inside a burst (a check
    already waiting, or the last key less than DEBOUNCE_S ago) a change waits for the next
    key, so fast typing costs one check."""
    from vaultkit.cli.lsp_server import DEBOUNCE_S, change_delay

    assert change_delay(10.0, None, False) == 0.0  # the first change of a document
    assert change_delay(10.0, 10.0 - DEBOUNCE_S, False) == 0.0  # after a pause
    assert change_delay(10.0, 10.0 - DEBOUNCE_S / 2, False) == DEBOUNCE_S  # typing fast
    assert change_delay(10.0, 9.0, True) == DEBOUNCE_S  # a check is already waiting
