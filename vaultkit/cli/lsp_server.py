"""``vaultkit server``: a Language Server (LSP over stdio, on pygls) for editors.

A thin adapter on :class:`vaultkit.session.workspace.Workspace`: one workspace per vault
root (each document's root found as ``vaultkit check`` finds it for a path), the open
documents' unsaved texts as its overlay. Diagnostics are ``check``'s findings, fixes are
``check --fix``'s (returned as edits, never written), "accept" records the finding in the
baseline. Every call into a workspace runs on one worker thread, in order, so the event
loop keeps reading the client's messages (a change cancels the check it makes stale).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import sys
import time
from pathlib import Path

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path
from pygls.workspace.position_codec import PositionCodec

from vaultkit import __version__

DEBOUNCE_S = 0.05  # inside a burst of typing, a change waits this long for the next key
SOURCE = "vaultkit"
ACCEPT = "vaultkit.acceptFinding"
FIX_ALL_KIND = "source.fixAll.vaultkit"
# as ruff's server maps its findings (crates/ruff_server/src/lint.rs, `severity()`):
# an error is an Error, the rest a Warning; vaultkit's suggestions are Information
SEVERITY = {"error": lsp.DiagnosticSeverity.Error, "warning": lsp.DiagnosticSeverity.Warning,
            "info": lsp.DiagnosticSeverity.Information}


def change_delay(now: float, last: float | None, pending: bool) -> float:
    """How long a change waits before it is checked: not at all after a pause (the first
    key after one is answered at once), DEBOUNCE_S inside a burst (a check already waits,
    or the last change came less than DEBOUNCE_S ago), so fast typing costs one check, not
    one a key. A check that a newer text overtakes is dropped, never published."""
    if pending or (last is not None and now - last < DEBOUNCE_S):
        return DEBOUNCE_S
    return 0.0


class VaultServer(LanguageServer):
    def __init__(self, *, root: Path | None = None, profile: str | None = None,
                 use_cache: bool = True):
        super().__init__("vaultkit", __version__)
        self.forced_root = root
        self.profile = profile
        self.use_cache = use_cache
        self.rule_docs: str | None = None  # initializationOptions.ruleDocs: the docs site
        self.workspaces: dict[Path, object] = {}  # vault root -> Workspace
        self.roots: dict[str, Path | None] = {}  # document folder -> its vault root
        self.worker = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="vaultkit")
        self.pending: dict[str, asyncio.TimerHandle] = {}  # uri -> its debounced check
        self.last_change: dict[str, float] = {}  # uri -> when its last change came
        self.published: dict[Path, set[str]] = {}  # root -> uris given findings last

    # -- documents and vaults (the worker thread only) ------------------------------

    def locate(self, uri: str):
        """``(workspace, vault path)`` of a document, or None outside every vault."""
        from vaultkit.session.workspace import Workspace
        from vaultkit.vault.scan import NotAVault, find_root, printable

        path = to_fs_path(uri)
        if not path or not uri.startswith("file:"):
            return None
        file = Path(path).resolve()
        folder = str(file.parent)
        if folder not in self.roots:
            if self.forced_root is not None:
                self.roots[folder] = self.forced_root
            else:
                try:
                    self.roots[folder] = find_root(file.parent)
                except NotAVault:
                    self.roots[folder] = None
        root = self.roots[folder]
        if root is None:
            return None
        try:
            rel = file.relative_to(root).as_posix()
        except ValueError:
            if file.parent != root.parent:
                return None
            rel = "../" + file.name  # a bootstrap file beside a memory-only vault
        ws = self.workspaces.get(root)
        if ws is None:
            ws = self.workspaces[root] = Workspace(root, profile=self.profile,
                                                   use_cache=self.use_cache)
        return ws, printable(rel)

    def overlay(self, ws) -> dict[str, str]:
        """The open documents of ``ws``'s vault: vault path -> unsaved text."""
        out = {}
        for uri, doc in list(self.workspace.text_documents.items()):
            where = self.locate(uri)
            if where is not None and where[0] is ws:
                out[where[1]] = doc.source
        return out

    def uri_of(self, ws, rel: str) -> str:
        return from_fs_path(os.path.normpath(os.path.join(ws.root, rel)))

    # -- positions ------------------------------------------------------------------

    @property
    def codec(self) -> PositionCodec:
        return PositionCodec(self.workspace.position_encoding or lsp.PositionEncodingKind.Utf16)

    def lsp_range(self, lines, line: int | None, column: int | None) -> lsp.Range:
        """The range of a finding at 1-based ``line``/``column`` (characters): to the end
        of its line (a finding names a place; the line is what an editor can underline)."""
        row = max((line or 1) - 1, 0)
        text = lines[row] if row < len(lines) else ""
        start = min(max((column or 1) - 1, 0), len(text))
        units = self.codec.impl.num_units
        end = units(text) if text else 0
        return lsp.Range(lsp.Position(row, units(text[:start])), lsp.Position(row, max(end, 0)))


def _lines(vault, path: str) -> list[str]:
    note = vault.note(path)
    if note is None or note.error:
        return []
    return note.text.split("\n")


def to_lsp(server: VaultServer, d, lines) -> lsp.Diagnostic:
    href = None
    if server.rule_docs:
        href = lsp.CodeDescription(href=f"{server.rule_docs.rstrip('/')}/rules/#{d.rule}")
    from vaultkit.session.workspace import finding_key
    from vaultkit.vault.outbound import clean_line

    return lsp.Diagnostic(
        range=server.lsp_range(lines, d.line, d.column), message=clean_line(d.message),
        severity=SEVERITY.get(d.severity, lsp.DiagnosticSeverity.Warning),
        code=d.code, code_description=href, source=SOURCE,
        data={"rule": d.rule, "path": clean_line(d.path), "fixable": d.fixable,
              "key": finding_key(d)})


def build(server: VaultServer) -> VaultServer:
    """Register the features on ``server``."""

    def in_worker(call, *args):
        return asyncio.get_running_loop().run_in_executor(server.worker, call, *args)

    def compute(uri: str):
        """Every file whose findings this document's text may change, with its findings
        (the worker thread): ``[(uri, [lsp.Diagnostic])]``, or None outside any vault."""
        where = server.locate(uri)
        if where is None:
            return None
        ws, rel = where
        overlay = server.overlay(ws)
        diags, vault, targets = ws.check_around(rel, overlay, also=overlay)
        by_path: dict[str, list] = {p: [] for p in targets}
        for d in diags:
            if d.path in by_path or (d.path and vault.has_note(d.path)):
                by_path.setdefault(d.path, []).append(d)
        out = []
        for path, found in by_path.items():
            lines = _lines(vault, path) if found else []
            out.append((server.uri_of(ws, path), [to_lsp(server, d, lines) for d in found]))
        return ws.root, out

    async def publish(uri: str) -> None:
        server.pending.pop(uri, None)
        doc = server.workspace.text_documents.get(uri)
        version = doc.version if doc is not None else None
        try:
            result = await in_worker(compute, uri)
        except Exception as exc:  # a broken vaultkit.toml: say it once, not a traceback
            server.window_show_message(lsp.ShowMessageParams(
                lsp.MessageType.Error, f"vaultkit: {_one_line(exc)}"))
            return
        if result is None:
            return
        doc = server.workspace.text_documents.get(uri)
        if doc is not None and doc.version != version or uri in server.pending:
            return  # a newer text is on its way: these findings are already stale
        root, found = result
        seen = {u for u, _ in found}
        for other, diagnostics in found:
            server.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(
                uri=other, diagnostics=diagnostics,
                version=version if other == uri else None))
        server.published.setdefault(root, set()).update(u for u, ds in found if ds)
        server.published[root] -= {u for u, ds in found if not ds and u in seen}

    def later(uri: str, delay: float) -> None:
        handle = server.pending.pop(uri, None)
        if handle is not None:
            handle.cancel()
        loop = asyncio.get_running_loop()
        server.pending[uri] = loop.call_later(
            delay, lambda: asyncio.ensure_future(publish(uri)))

    @server.feature(lsp.INITIALIZE)
    def initialize(ls: VaultServer, params: lsp.InitializeParams):
        options = params.initialization_options or {}
        if isinstance(options, dict) and isinstance(options.get("ruleDocs"), str):
            ls.rule_docs = options["ruleDocs"]

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: VaultServer, params: lsp.DidOpenTextDocumentParams):
        await publish(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: VaultServer, params: lsp.DidChangeTextDocumentParams):
        uri, now = params.text_document.uri, time.monotonic()
        delay = change_delay(now, ls.last_change.get(uri), uri in ls.pending)
        ls.last_change[uri] = now
        later(uri, delay)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(ls: VaultServer, params: lsp.DidSaveTextDocumentParams):
        await publish(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    async def did_close(ls: VaultServer, params: lsp.DidCloseTextDocumentParams):
        uri = params.text_document.uri
        handle = ls.pending.pop(uri, None)
        if handle is not None:
            handle.cancel()
        # as ruff's server does: a closed file's findings leave the editor with it
        ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri,
                                                                          diagnostics=[]))

    @server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION, lsp.CodeActionOptions(
        code_action_kinds=[lsp.CodeActionKind.QuickFix, FIX_ALL_KIND]))
    async def code_action(ls: VaultServer, params: lsp.CodeActionParams):
        uri = params.text_document.uri
        # (by their data: a client may send them back without their source)
        ours = [d for d in params.context.diagnostics
                if isinstance(d.data, dict) and "rule" in d.data and "key" in d.data]
        only = params.context.only
        return await in_worker(actions, uri, ours, only)

    def actions(uri: str, ours: list, only) -> list:
        where = server.locate(uri)
        if where is None:
            return []
        ws, rel = where
        overlay = server.overlay(ws)
        out: list[lsp.CodeAction] = []
        doc = server.workspace.text_documents.get(uri)
        old = doc.source if doc is not None else None
        wanted = lambda kind: not only or any(kind.startswith(str(k)) for k in only)  # noqa
        from vaultkit.lint.baseline import NOT_BASELINED

        for diag in ours:
            rule, key = diag.data["rule"], diag.data.get("key")
            if not wanted(lsp.CodeActionKind.QuickFix) or not isinstance(key, str):
                continue
            if diag.data.get("fixable") and old is not None:
                new = ws.fixed_text(rel, overlay, key)
                if new is not None:
                    out.append(lsp.CodeAction(
                        title=f"Fix {diag.code} ({rule})",
                        kind=lsp.CodeActionKind.QuickFix, diagnostics=[diag],
                        is_preferred=True, edit=edit_of(server, uri, old, new, doc.version)))
            if rule not in NOT_BASELINED:
                # a bare Command (the protocol allows one in the list): a CodeAction that
                # carries a command is read as a Command by lsprotocol's own decoder
                out.append(lsp.Command(f"Accept this {rule} finding into the baseline",
                                       ACCEPT, arguments=[uri, key]))
        if old is not None and wanted(FIX_ALL_KIND):
            new = ws.fixed_text(rel, overlay)
            if new is not None:
                out.append(lsp.CodeAction(
                    title="Fix every fixable vaultkit finding in this file", kind=FIX_ALL_KIND,
                    edit=edit_of(server, uri, old, new, doc.version)))
        return out

    @server.command(ACCEPT)
    async def accept(ls: VaultServer, uri: str, key: str):
        def record():
            where = ls.locate(uri)
            if where is None:
                return None
            ws, rel = where
            return ws.accept(rel, key, ls.overlay(ws))

        try:
            path = await in_worker(record)
        except Exception as exc:
            ls.window_show_message(lsp.ShowMessageParams(lsp.MessageType.Error,
                                                         f"vaultkit: {_one_line(exc)}"))
            return None
        if path is not None:
            ls.window_show_message(lsp.ShowMessageParams(
                lsp.MessageType.Info, f"vaultkit: recorded in {_one_line(ValueError(str(path)))}"))
            await publish(uri)
        return None

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    async def hover(ls: VaultServer, params: lsp.HoverParams):
        uri = params.text_document.uri
        doc = ls.workspace.text_documents.get(uri)
        if doc is None:
            return None
        at = ls.codec.position_from_client_units(doc.lines, params.position)
        text = await in_worker(hover_text, uri, at.line + 1, at.character + 1)
        if not text:
            return None
        return lsp.Hover(contents=lsp.MarkupContent(lsp.MarkupKind.Markdown, text))

    def hover_text(uri: str, line: int, column: int) -> str | None:
        where = server.locate(uri)
        if where is None:
            return None
        ws, rel = where
        overlay = server.overlay(ws)
        found = ws.link_at(rel, line, column, overlay)
        if found is not None:
            return describe_link(*found)
        if line == 1:
            runtimes = ws.runtime_contexts(rel, overlay)
            if runtimes:
                from vaultkit.cli.commands.context import render_text
                from vaultkit.vault.outbound import clean

                return ("What each runtime loads at session start (`vaultkit context`):\n\n"
                        "```text\n" + clean(render_text(runtimes, False)).rstrip() + "\n```")
        return None

    @server.feature(lsp.SHUTDOWN)
    def shutdown(ls: VaultServer, params):
        for ws in list(ls.workspaces.values()):
            ls.worker.submit(ws.close).result()
        ls.workspaces.clear()

    return server


def edit_of(server: VaultServer, uri: str, old: str, new: str, version) -> lsp.WorkspaceEdit:
    """One edit turning ``old`` into ``new``: the span between what they share at both ends."""
    start = 0
    limit = min(len(old), len(new))
    while start < limit and old[start] == new[start]:
        start += 1
    end = 0
    while end < limit - start and old[len(old) - 1 - end] == new[len(new) - 1 - end]:
        end += 1
    lines = old.split("\n")

    def position(offset: int) -> lsp.Position:
        row = old.count("\n", 0, offset)
        col = offset - (old.rfind("\n", 0, offset) + 1)
        return lsp.Position(row, server.codec.impl.num_units(lines[row][:col]))

    edit = lsp.TextEdit(lsp.Range(position(start), position(len(old) - end)),
                        new[start:len(new) - end])
    doc = lsp.TextDocumentEdit(lsp.OptionalVersionedTextDocumentIdentifier(uri, version),
                               [edit])
    return lsp.WorkspaceEdit(document_changes=[doc])


def describe_link(link, res) -> str:
    """Where a link goes, or why it goes nowhere, as the resolver says."""
    from vaultkit.vault.outbound import clean_line
    from vaultkit.vault.resolve import M_ATTACHMENT, M_BLOCK, M_HEADING, M_NOTE

    shown = clean_line(link.raw)
    if res.external:
        return f"`{shown}`: an external link; vaultkit does not resolve it"
    lines = []
    if res.missing in (M_NOTE, M_ATTACHMENT):
        lines.append(f"`{shown}`: broken: no {res.missing} of that name in the vault")
    elif res.missing in (M_HEADING, M_BLOCK):
        what = "heading" if res.missing == M_HEADING else "block"
        lines.append(f"`{shown}` → `{clean_line(res.path or '')}`, but it has no "
                     f"{what} `{clean_line(res.detail)}`")
    else:
        lines.append(f"`{shown}` → `{clean_line(res.path or '')}` "
                     f"(resolved: {res.reason})")
    if res.ambiguous:
        lines.append("Other candidates: " + ", ".join(
            f"`{clean_line(c)}`" for c in res.candidates if c != res.path))
    return "\n\n".join(lines)


def _one_line(exc: Exception) -> str:
    """An error as the editor shows it: one line, credentials masked (output boundary)."""
    from vaultkit.vault.outbound import clean_line

    return clean_line(str(exc.args[0] if exc.args else exc))


def serve(*, root: Path | None = None, profile: str | None = None,
          use_cache: bool = True) -> int:
    """Serve over standard input and output until the client says exit."""
    server = build(VaultServer(root=root, profile=profile, use_cache=use_cache))
    reading, writing = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # the protocol owns standard output: any print goes to the log
    # a parse worker the loader forks closes sys.stdin as it starts (multiprocessing does),
    # which waits for the lock the protocol's reading thread holds while it waits for the
    # client: the fork would hang for ever. It closes this one instead.
    sys.stdin = open(os.devnull, encoding="utf-8")
    server.start_io(reading, writing)
    server.worker.shutdown(wait=True)
    return 0
