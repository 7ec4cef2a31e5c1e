"""``vaultkit mcp``: the memory tools and the linter, served over the Model Context Protocol.

A stdio server built on the official Python SDK (``mcp`` 2.x, its low-level ``Server``:
the tools' JSON schemas are written here by hand, because ``memory_get`` must take a
parameter named ``from`` and both memory tools the runtime's camelCase names). Tools:

- ``memory_search`` / ``memory_get``: the runtime's parameters and result shapes, the
  very code behind ``vaultkit search --json`` and ``vaultkit get --json``;
- ``memory_log``: ``vaultkit log``'s locked append, plus the findings of the note rules on
  the entry just written;
- ``memory_promote``: ``vaultkit promote``: journal lines copied into MEMORY.md or a topic
  note with their source, once, through the same locked append;
- ``vault_check``, ``vault_audit``, ``vault_index``: ``check --format json``, ``audit
  --format json`` and ``index``.

Resources: the bootstrap files and ``memory/INDEX.md``, read fresh on every request.

State is kept warm between calls by the vault's session floor
(:class:`~vaultkit.session.workspace.Workspace`, which ``vaultkit server`` stands on too;
:class:`VaultSession` is the adapter): the parsed vault and the open search index.
Every call lists the vault again (paths, sizes, mtimes) and reparses what changed, so a changed or deleted note is never served stale. All vault work runs on one
worker thread (SQLite connections belong to one thread, and the warm state needs no
locks then); appends run on their own threads and rely on the journal lock, as
concurrent ``vaultkit log`` processes do.

Every failure is an MCP error *result* (``isError: true``) with a one-line message: bad
arguments, an unknown tool, a path outside the vault, a broken file, a bug. The SDK
answers malformed JSON-RPC with a protocol error. The server keeps serving either way.
"""

from __future__ import annotations

import asyncio
import json
import sys
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable

from vaultkit import __version__
from vaultkit.core.errors import VaultkitError
from vaultkit.vault.profile import ConfigError

SERVER_NAME = "vaultkit"
RESOURCE_SCHEME = "vaultkit"

INSTRUCTIONS = (
    "vaultkit serves this agent-memory vault (Markdown notes in git). Before acting on past "
    "context, call memory_search and read the hits with memory_get. Record what happened "
    "with memory_log (one entry of 3-15 lines: what, why, what next); it tells you what the "
    "vault's rules say about the entry. memory_promote copies journal lines worth keeping "
    "into MEMORY.md (once, refused when MEMORY.md would be cut). vault_check lints notes, vault_audit runs the "
    "survival checklist, vault_index regenerates memory/INDEX.md."
)


# -- the tools' contracts ------------------------------------------------------------------

@dataclass(frozen=True)
class ToolSpec:
    name: str
    title: str
    description: str
    input_schema: dict
    output_schema: dict
    read_only: bool
    destructive: bool
    idempotent: bool
    run: str  # VaultSession method name


_FINDING = {
    "type": "object",
    "properties": {
        "rule": {"type": "string"}, "code": {"type": "string"},
        "severity": {"type": "string", "enum": ["error", "warning", "info"]},
        "path": {"type": "string"}, "line": {"type": ["integer", "null"]},
        "column": {"type": ["integer", "null"]}, "message": {"type": "string"},
        "fixable": {"type": "boolean"},
    },
    "required": ["rule", "code", "severity", "path", "line", "column", "message", "fixable"],
}

_RULE_LIST = {
    "type": "array", "items": {"type": "string", "minLength": 1},
    "description": "rule names, codes or code prefixes (see `vaultkit rules`); ALL for every rule",
}

# what memory_search and memory_recall both take (each adds its own count of results)
_SEARCH_ARGUMENTS = {
    "query": {"type": "string", "minLength": 1, "maxLength": 2000,
              "description": "what to look for, in words"},
    "minScore": {"type": "number", "minimum": 0, "maximum": 1, "default": 0,
                 "description": "drop results scoring below this (0..1)"},
    "type": {"type": "string", "minLength": 1,
             "description": "only notes of this type (decision, lesson, person, ...)"},
    "layer": {"type": "string", "minLength": 1,
              "description": "only notes of this layer (journal, archive, ...)"},
}

_SEARCH_RESULTS = {
    "type": "object",
    "properties": {"results": {"type": "array", "items": {
        "type": "object",
        "properties": {"path": {"type": "string"}, "startLine": {"type": "integer"},
                       "endLine": {"type": "integer"}, "score": {"type": "number"},
                       "snippet": {"type": "string"},
                       "snippetStartLine": {"type": "integer"},
                       "snippetEndLine": {"type": "integer"},
                       # only when the snippet shows two windows of lines
                       "snippetWindows": {"type": "array", "items": {
                           "type": "array", "items": {"type": "integer"},
                           "minItems": 2, "maxItems": 2}}},
        "required": ["path", "startLine", "endLine", "score", "snippet"]}},
        # present only when the index on disk could not be brought up to date
        "stale": {"type": "boolean"}, "note": {"type": "string"}},
    "required": ["results"],
}

# a journal line memory_promote wrote (its line in the target) or skipped (and why)
_PROMOTED = {
    "type": "object",
    "properties": {"source": {"type": "string"}, "line": {"type": ["integer", "null"]},
                   "text": {"type": "string"}, "reason": {"type": "string"}},
    "required": ["source", "line", "text"],
}

TOOLS = (
    ToolSpec(
        name="memory_search",
        title="Search memory",
        description=(
            "Mandatory recall step: search MEMORY.md and memory/**/*.md before answering "
            "questions about prior work, decisions, dates, people, preferences or todos. "
            "Ranks INDEX.md entries, titles, headings, tags and paths first, then BM25 full "
            "text (CJK as character bigrams); journal dates match as words (October 2023, "
            "yesterday). Returns the top snippets (at most 700 characters of whole lines, "
            "each the window that matched) with path, the 1-based line range around it "
            "(about 1,600 characters) and the snippet's own; read more with memory_get. "
            "stale: true and a note say the index could not be updated (the results then "
            "come from an up-to-date copy in memory)."),
        input_schema={
            "type": "object",
            "properties": {
                **_SEARCH_ARGUMENTS,
                "maxResults": {"type": "integer", "minimum": 1, "maximum": 100, "default": 6,
                               "description": "at most this many results"},
            },
            "required": ["query"],
            "additionalProperties": False,
        },
        output_schema=_SEARCH_RESULTS,
        read_only=True, destructive=False, idempotent=True, run="memory_search",
    ),
    ToolSpec(
        name="memory_recall",
        title="Recall memory",
        description=(
            "The same search as memory_search, under the name OpenClaw's memory plugins "
            "(memory-lancedb) and its active-memory sub-agent call: search MEMORY.md and "
            "memory/**/*.md before answering questions about prior work, decisions, dates, "
            "people or preferences. `limit` (default 5) is memory_search's maxResults. "
            "Returns the same results: snippets with path and line ranges; read more with "
            "memory_get."),
        input_schema={
            "type": "object",
            "properties": {
                **_SEARCH_ARGUMENTS,
                "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 5,
                          "description": "at most this many results"},
            },
            "required": ["query"],
            "additionalProperties": False,
        },
        output_schema=_SEARCH_RESULTS,
        read_only=True, destructive=False, idempotent=True, run="memory_recall",
    ),
    ToolSpec(
        name="memory_get",
        title="Read memory",
        description=(
            "Read lines of one memory file (MEMORY.md or memory/**/*.md, a path relative to "
            "the vault as memory_search returns it): `lines` lines from line `from`, at most "
            "12,000 characters of whole lines. When `truncated` is true, continue with "
            "from = nextFrom. A missing file gives empty text. Paths outside the memory set "
            "are refused."),
        input_schema={
            "type": "object",
            "properties": {
                "path": {"type": "string", "minLength": 1, "maxLength": 4096,
                         "description": "vault-relative path, e.g. memory/2026-02-15.md"},
                "from": {"type": "integer", "minimum": 1, "default": 1,
                         "description": "first line, 1-based"},
                "lines": {"type": "integer", "minimum": 1, "maximum": 100000, "default": 120,
                          "description": "how many lines"},
            },
            "required": ["path"],
            "additionalProperties": False,
        },
        output_schema={
            "type": "object",
            "properties": {"path": {"type": "string"}, "text": {"type": "string"},
                           "from": {"type": "integer"}, "lines": {"type": "integer"},
                           "truncated": {"type": "boolean"}, "nextFrom": {"type": "integer"}},
            "required": ["path", "text"],
        },
        read_only=True, destructive=False, idempotent=True, run="memory_get",
    ),
    ToolSpec(
        name="memory_log",
        title="Append to today's journal",
        description=(
            "Append one entry to the daily journal memory/YYYY-MM-DD.md as 'HH:MM — "
            "Title', a heading at the level of the journal's own entries (append-only, "
            "under the journal's lock: nothing already written is touched). Write one "
            "line, or 3-15 lines: what happened, why, what next; no filler, no credentials. "
            "Only entries the vault's rules accept are written: a title with a body too "
            "short to stand apart is written as one line ('Title: text'); an entry over 15 "
            "lines or holding only filler is refused with the reason. Returns where the "
            "entry went (path, line .. endLine) and `findings`: what the vault's rules say "
            "about the note at this entry (a broken link, ...)."),
        input_schema={
            "type": "object",
            "properties": {
                "text": {"type": "string", "maxLength": 100000,
                         "description": "the entry's body; without `title` its first line "
                                        "is the title (give at least one of the two)"},
                "title": {"type": "string", "maxLength": 300, "description": "the entry's title"},
                "date": {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}$",
                         "description": "the journal's day, YYYY-MM-DD (default: today in "
                                        "the vault's time zone)"},
                "time": {"type": "string", "pattern": r"^\d{1,2}:\d{2}$",
                         "description": "the entry's time, HH:MM (default: now)"},
            },
            "additionalProperties": False,
        },
        output_schema={
            "type": "object",
            "properties": {"path": {"type": "string"}, "line": {"type": "integer"},
                           "endLine": {"type": "integer"}, "heading": {"type": "string"},
                           "created": {"type": "boolean"},
                           "warnings": {"type": "array", "items": {"type": "string"}},
                           "findings": {"type": "array", "items": _FINDING},
                           "snapshot": {"type": ["string", "null"]}},
            "required": ["path", "line", "endLine", "heading", "created", "warnings",
                         "findings"],
        },
        read_only=False, destructive=False, idempotent=False, run="memory_log",
    ),
    ToolSpec(
        name="memory_promote",
        title="Promote journal lines",
        description=(
            "Copy lines of a daily journal (memory/YYYY-MM-DD.md) into MEMORY.md, or into an "
            "existing topic note `to`, under a dated '## Promoted from the journal "
            "(YYYY-MM-DD)' heading, each after a '<!-- vaultkit-promoted:FILE:LINE -->' "
            "marker naming its source; the journal keeps them. Appended under the file's "
            "lock: a line already in the target (or promoted from the same line before) is "
            "skipped, so calling twice writes once. Refused, nothing written, when a line "
            "holds a credential, or when the result would be cut by a runtime that loads "
            "the target (OpenClaw's bootstrap limits, ...) or take MEMORY.md over its size "
            "budget: prune MEMORY.md first, or promote into a topic note. Promote only what "
            "will still hold next week. Returns the lines written (their line in the target) "
            "and the lines skipped, with why."),
        input_schema={
            "type": "object",
            "properties": {
                "path": {"type": "string", "minLength": 1, "maxLength": 4096,
                         "description": "the journal, vault-relative, e.g. "
                                        "memory/2026-12-06.md"},
                "lines": {"type": "string", "minLength": 1, "maxLength": 1000,
                          "pattern": r"^\d+(-\d+)?(,\d+(-\d+)?)*$",
                          "description": "its lines, 1-based: 12, 12-14 or 12,15-16 (as "
                                         "memory_get and memory_search number them)"},
                "to": {"type": "string", "minLength": 1, "maxLength": 4096,
                       "default": "MEMORY.md",
                       "description": "MEMORY.md (default) or an existing topic note, e.g. "
                                      "memory/semantic/db.md"},
                "dryRun": {"type": "boolean", "default": False,
                           "description": "write nothing; say what would be written"},
            },
            "required": ["path", "lines"],
            "additionalProperties": False,
        },
        output_schema={
            "type": "object",
            "properties": {"target": {"type": "string"}, "heading": {"type": "string"},
                           "created": {"type": "boolean"}, "dryRun": {"type": "boolean"},
                           "promoted": {"type": "array", "items": _PROMOTED},
                           "skipped": {"type": "array", "items": _PROMOTED},
                           "snapshot": {"type": ["string", "null"]}},
            "required": ["target", "heading", "created", "dryRun", "promoted", "skipped"],
        },
        read_only=False, destructive=False, idempotent=True, run="memory_promote",
    ),
    ToolSpec(
        name="vault_check",
        title="Lint the vault",
        description=(
            "Run vaultkit's rules (broken links, journal entries, frontmatter schemas, "
            "bootstrap budgets, INDEX.md freshness, ...) and return the findings as "
            "`vaultkit check --format json` does: rule, code, severity, path, line, column, "
            "message. The whole vault is always read; findings are reported for `paths` "
            "(files or folders, vault-relative) or for everything. Like `vaultkit check`, "
            "findings the vault's baseline accepts (vaultkit-baseline.json, or `baseline` in "
            "vaultkit.toml) are left out and counted in `baselined`. Writes nothing."),
        input_schema={
            "type": "object",
            "properties": {
                "paths": {"type": "array", "maxItems": 1000,
                          "items": {"type": "string", "minLength": 1, "maxLength": 4096},
                          "description": "vault-relative files or folders to report on "
                                         "(default: the whole vault)"},
                "select": {**_RULE_LIST, "description": "rules to use instead of the "
                           "configured set; names, codes, code prefixes or ALL"},
                "ignore": {**_RULE_LIST, "description": "rules to leave out"},
                "extendSelect": {**_RULE_LIST, "description": "rules to add to the selection"},
                "failOn": {"type": "string", "enum": ["error", "warning"],
                           "description": "lowest severity that sets `failed` (default: the "
                                          "vault's fail-on, else error)"},
            },
            "additionalProperties": False,
        },
        output_schema={
            "type": "object",
            "properties": {"findings": {"type": "array", "items": _FINDING},
                           "errors": {"type": "integer"}, "warnings": {"type": "integer"},
                           "failed": {"type": "boolean"},
                           "baselined": {"type": "integer"}},
            "required": ["findings", "errors", "warnings", "failed"],
        },
        read_only=True, destructive=False, idempotent=True, run="vault_check",
    ),
    ToolSpec(
        name="vault_audit",
        title="Run the survival checklist",
        description=(
            "Check the vault and its OpenClaw setup against the survival checklist "
            "(MEMORY.md size, memory flush, reserve floor, memory protocol in AGENTS.md, "
            "weekly distillation, bootstrap footprint and truncation, INDEX.md, git backup, "
            "hooks, Obsidian, unclosed work). Each check passes, warns or fails (or is a tip: "
            "vaultkit's own tooling not set up yet), with what it found and how to fix it. "
            "Writes nothing."),
        input_schema={
            "type": "object",
            "properties": {
                "skip": {"type": "array", "items": {"type": "string"}, "uniqueItems": True,
                         "description": "check ids not to run"},
                "agent": {"type": "string", "minLength": 1, "maxLength": 200,
                          "description": "apply this agent's overrides from openclaw.json "
                                         "agents.list[]"},
                "backupMaxAgeHours": {"type": "number", "exclusiveMinimum": 0,
                                      "maximum": 1000000,
                                      "description": "git-backup fails when the last commit "
                                                     "is older (default 36)"},
            },
            "additionalProperties": False,
        },
        output_schema={
            "type": "object",
            "properties": {"checks": {"type": "array", "items": {
                "type": "object",
                "properties": {"id": {"type": "string"},
                               "status": {"type": "string", "enum": ["pass", "warn", "fail", "unknown", "tip"]},
                               "found": {"type": "string"}, "hint": {"type": "string"}},
                "required": ["id", "status", "found", "hint"]}},
                "passed": {"type": "integer"}, "warned": {"type": "integer"},
                "failed": {"type": "integer"}, "unknown": {"type": "integer"},
                "tips": {"type": "integer"}},
            "required": ["checks", "passed", "warned", "failed"],
        },
        read_only=True, destructive=False, idempotent=True, run="vault_audit",
    ),
    ToolSpec(
        name="vault_index",
        title="Regenerate memory/INDEX.md",
        description=(
            "Regenerate memory/INDEX.md, the agent's entry point, between its "
            "<!-- vaultkit:index:start --> and <!-- vaultkit:index:end --> markers; text "
            "outside the markers is kept byte for byte. With dryRun, write nothing and "
            "return the diff."),
        input_schema={
            "type": "object",
            "properties": {"dryRun": {"type": "boolean", "default": False,
                                      "description": "write nothing; return the diff"}},
            "additionalProperties": False,
        },
        output_schema={
            "type": "object",
            "properties": {"path": {"type": "string"}, "changed": {"type": "boolean"},
                           "upToDate": {"type": "boolean"}, "diff": {"type": "string"}},
            "required": ["path", "changed", "upToDate"],
        },
        read_only=False, destructive=False, idempotent=True, run="vault_index",
    ),
)


def tool_specs(read_only: bool = False) -> list[ToolSpec]:
    return [t for t in TOOLS if t.read_only or not read_only]


class ToolFailure(Exception):
    """A call that cannot be served; the message goes back to the caller as is."""


# -- warm state ---------------------------------------------------------------------------

class VaultSession:
    """The MCP server's adapter on the vault's :class:`~vaultkit.session.workspace.Workspace`
    (the session floor, shared with ``vaultkit server``): the workspace owns the settings,
    the listing, the warm vault, the search index and the deferred cache writes; this
    class turns tool arguments into its calls and its answers into the tools' results.

    The server calls every method but :meth:`append` and :meth:`memory_promote` from its
    one vault thread; those two write under a file's lock, run anywhere and share only
    :meth:`settings`, which holds a lock.
    """

    def __init__(self, root: Path, *, profile: str | None = None, use_cache: bool = True,
                 openclaw_config: str | None = None):
        from vaultkit.session.workspace import Workspace

        self.root = root
        self.openclaw_config = openclaw_config
        self.workspace = Workspace(root, profile=profile, use_cache=use_cache)

    # -- current state: the workspace's ---------------------------------------------

    @property
    def use_cache(self) -> bool:
        return self.workspace.use_cache

    def settings(self):
        return self.workspace.settings()

    def scan(self):
        return self.workspace.scan()

    def vault(self, scan=None):
        return self.workspace.vault(scan)

    def memory_notes(self, vault) -> dict:
        return self.workspace.memory_notes(vault)

    def save_later(self) -> None:
        self.workspace.save_later()

    def search_index(self):
        return self.workspace.search_index()

    def close(self) -> None:
        self.workspace.close()

    # -- the tools --------------------------------------------------------------------

    def memory_search(self, args: dict) -> dict:
        from vaultkit.memory.search import search_scan

        scan = self.scan()
        profile = scan.settings.profile
        type_name, layer = args.get("type"), args.get("layer")
        if type_name and type_name not in profile.types:
            raise ToolFailure(f"type {type_name!r}: unknown type (known: "
                              f"{', '.join(sorted(profile.types))})")
        layers = {x.name for x in profile.layers}
        if layer and layer not in layers:
            raise ToolFailure(f"layer {layer!r}: unknown layer (known: "
                              f"{', '.join(sorted(layers))})")
        status: dict = {}
        hits = search_scan(scan, args["query"], max_results=args.get("maxResults", 6),
                           min_score=args.get("minScore", 0.0), type_name=type_name,
                           layer=layer, use_cache=self.use_cache, index=self.search_index(),
                           load=self.vault, members=self.memory_notes, status=status)
        self.save_later()
        answer: dict = {"results": [h.to_dict() for h in hits]}
        if status.get("stale"):
            answer.update(stale=True, note=status["stale"])
        return answer

    def memory_recall(self, args: dict) -> dict:
        """memory_search under the name OpenClaw's memory plugins call (``limit``: its
        ``maxResults``, 5 by default as theirs)."""
        args = dict(args)
        args["maxResults"] = args.pop("limit", 5)
        return self.memory_search(args)

    def memory_get(self, args: dict) -> dict:
        from vaultkit.memory.get import read_excerpt

        excerpt = read_excerpt(self.root, self.settings(), args["path"], args.get("from", 1),
                               args.get("lines", 120))
        return excerpt.to_dict()

    def append(self, args: dict):
        """The write itself (any thread): ``vaultkit log``'s locked append."""
        from vaultkit.memory.journal import append_entry

        text, title = args.get("text", ""), args.get("title")
        if not text.strip() and not (title or "").strip():
            raise ToolFailure("nothing to log: give a text (and optionally a title)")
        result = append_entry(self.root, self.settings(), text=text, title=title,
                              date=args.get("date"), time=args.get("time"))
        result.snapshot = self.snapshot()
        return result

    def memory_promote(self, args: dict) -> dict:
        """``vaultkit promote`` (any thread: it relies on the target's lock, as ``append``
        on the journal's)."""
        from vaultkit.memory.promote import Source, parse_lines, promote

        source = Source(args["path"], parse_lines(args["lines"], "lines"))
        result = promote(self.root, self.settings(), [source], args.get("to", "MEMORY.md"),
                         dry_run=args.get("dryRun", False))
        if result.promoted and not result.dry_run:
            result.snapshot = self.snapshot("memory_promote")
        return result.to_dict()

    def snapshot(self, tool: str = "memory_log") -> str | None:
        """A snapshot after each write (:mod:`vaultkit.vault.snapshots`): the new commit, or
        None when nothing changed or it could not be taken (the entry is written either way)."""
        from vaultkit.vault.snapshots import open_store

        try:
            return open_store(self.root, self.settings(), create=True).snapshot().commit
        except (VaultkitError, ConfigError, OSError) as exc:
            print(f"vaultkit mcp: warning: no snapshot after {tool}: {exc}", file=sys.stderr)
            return None

    def entry_findings(self, args: dict, result) -> dict:
        """What the note rules say about the entry ``append`` just wrote."""
        from vaultkit.lint.engine import run_rules, select_rules
        from vaultkit.lint.rule import Context
        end = result.end
        vault = self.vault()
        rules = [r for r in select_rules(vault.settings) if r.scope != "vault"]
        diags = run_rules(Context(vault, targets={result.path}), rules)
        self.save_later()
        findings = [d.to_dict() for d in diags
                    if d.path == result.path and (
                        d.line is None and result.created
                        or d.line is not None and result.line <= d.line <= end)]
        return {**result.to_dict(), "endLine": end, "findings": findings,
                "snapshot": getattr(result, "snapshot", None)}

    def vault_check(self, args: dict) -> dict:
        """``vaultkit check --format json``: :meth:`Workspace.check`'s findings (the
        baseline's left out and counted)."""
        from vaultkit.lint.engine import Selection, fail

        workspace = self.workspace
        vault = workspace.vault()
        paths = self._paths(vault, args.get("paths"))
        selection = Selection(args.get("select"), list(args.get("ignore", [])),
                              list(args.get("extendSelect", [])))
        diags = workspace.check_on(vault, paths, selection)
        fail_on = args.get("failOn") or vault.settings.config.fail_on
        return {"findings": [d.to_dict() for d in diags],
                "errors": sum(d.severity == "error" for d in diags),
                "warnings": sum(d.severity == "warning" for d in diags),
                "failed": fail(diags, fail_on), "baselined": workspace.baselined}

    def _paths(self, vault, paths):
        """The vault paths asked for (None: everything); refuses anything outside the vault
        or naming no file of it."""
        if not paths:
            return None
        out = []
        for requested in paths:
            rel = vault_path(self.root, requested)
            if rel == "":
                return None
            prefix = rel + "/"
            if not any(p == rel or p.startswith(prefix) for p in vault.paths):
                raise ToolFailure(f"{requested!r}: no such file or folder in the vault")
            out.append(rel)
        return out

    def vault_audit(self, args: dict) -> dict:
        from vaultkit.audit import CHECK_IDS, FAIL, PASS, TIP, UNKNOWN, WARN, counts, run_audit
        from vaultkit.cli.commands.audit import _check_agent

        skip = set(args.get("skip", []))
        unknown = sorted(skip - set(CHECK_IDS))
        if unknown:
            raise ToolFailure(f"skip: unknown check {', '.join(unknown)} "
                              f"(known: {', '.join(CHECK_IDS)})")
        vault = self.vault()
        agent = args.get("agent")
        if agent:
            _check_agent(vault, SimpleNamespace(agent=agent,
                                                openclaw_config=self.openclaw_config))
        checks = run_audit(vault, openclaw_config=self.openclaw_config, agent=agent,
                           backup_max_age_hours=args.get("backupMaxAgeHours"), skip=skip)
        self.save_later()
        n = counts(checks)  # (the checklist's own count)
        return {"checks": [c.to_dict() for c in checks],
                "passed": n[PASS], "warned": n[WARN], "failed": n[FAIL],
                "unknown": n[UNKNOWN], "tips": n[TIP]}

    def vault_index(self, args: dict) -> dict:
        import difflib

        from vaultkit.links.indexgen import index_path, render_index, write_index

        vault = self.vault()
        path = index_path(vault)
        note = vault.notes.get(path)
        old = note.text if note is not None else None
        new = render_index(vault)
        if old == new:
            return {"path": path, "changed": False, "upToDate": True}
        if args.get("dryRun"):
            diff = "".join(difflib.unified_diff(
                [] if old is None else old.splitlines(keepends=True),
                new.splitlines(keepends=True),
                fromfile="/dev/null" if old is None else f"a/{path}", tofile=f"b/{path}"))
            return {"path": path, "changed": False, "upToDate": False, "diff": diff}
        changed = write_index(vault)
        return {"path": path, "changed": changed, "upToDate": True}

    # -- resources ------------------------------------------------------------------------

    def resources(self, vault=None) -> list[tuple[str, str, str]]:
        """``(uri, vault path, description)`` of the files a client may attach."""
        from vaultkit.links.indexgen import index_path

        vault = vault or self.vault()
        out = []
        for note in vault.bootstrap():
            name = note.path.rsplit("/", 1)[-1]
            out.append((f"{RESOURCE_SCHEME}:///{name}", note.path,
                        f"{name}: a bootstrap file the runtime loads into every session"))
        index = index_path(vault)
        if index in vault.notes:
            out.append((f"{RESOURCE_SCHEME}:///{index}", index,
                        "the memory index: where to look first"))
        return out

    def _served(self, path: str) -> str:
        """The text of the file at vault path ``path`` as it is now, read like ``get``
        reads: bounded, a regular file with no other hard link (a name outside the vault)."""
        from vaultkit.core.bounded import read_regular
        from vaultkit.vault.parse import parse_note

        file = self.root / path if not path.startswith("../") else self.root.parent / path[3:]
        limit = self.settings().profile.budgets.max_file_bytes
        try:
            note = parse_note(path, read_regular(file, limit, sole_link=True))
        except OSError as exc:
            raise ToolFailure(f"{path}: {exc.strerror or exc}") from None
        if note.error:
            raise ToolFailure(f"{path}: {note.error}")
        return note.text

    def read_resource(self, uri: str) -> str:
        vault = self.vault()
        for known, path, _ in self.resources(vault):
            if known == uri:
                note = vault.note(path)
                if note is None or note.error:
                    raise ToolFailure(f"{path}: {note.error if note else 'gone'}")
                return self._served(path)
        raise ToolFailure(f"{uri}: no such resource (list them with resources/list)")


def vault_path(root: Path, requested: str) -> str:
    """``requested`` as a vault-relative path ('' for the vault itself); refused if outside."""
    import os
    import re

    p = requested
    if "\x00" in p or re.search(r"[\x00-\x1f\x7f]", p):
        raise ToolFailure(f"{p!r}: contains control characters; refused")
    if "\\" in p:
        raise ToolFailure(f"{p!r}: contains a backslash; use '/' in vault paths")
    if p.startswith(("/", "~")) or re.match(r"^[A-Za-z]:", p):
        raise ToolFailure(f"{p!r}: absolute paths are refused; give a path relative to the "
                          "vault")
    parts = [part for part in p.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise ToolFailure(f"{p!r}: '..' is refused; only paths inside the vault")
    rel = "/".join(parts)
    real = os.path.realpath(root / rel)
    base = os.path.realpath(root)
    if real != base and not real.startswith(base.rstrip(os.sep) + os.sep):
        raise ToolFailure(f"{p!r}: resolves outside the vault (a symlink); refused")
    return rel


# -- the server -----------------------------------------------------------------------------

# what the command line's messages name that a tool call names otherwise: its parameters
# for the flags, and nothing for the flags no tool has
_FLAG_WORDS = (("; --allow-secret writes it anyway", ""),
               (", or --title, or pipe text with '-'", " (and optionally a title)"),
               ("(--title, or a first line of text)", "(title, or a first line of text)"),
               ("--date ", "date "), ("--time ", "time "), ("--to ", "to "))


def in_tool_words(message: str) -> str:
    """A message written for the command line (``--date '2026-13-45': not a calendar
    date``) as a tool call reads it (``date '2026-13-45': …``): the tool's parameters, and
    no advice about flags a tool call does not have."""
    for flag, words in _FLAG_WORDS:
        message = message.replace(flag, words)
    return message


def _error(message: str):
    from mcp.types import CallToolResult, TextContent

    from vaultkit.vault.outbound import clean

    return CallToolResult(content=[TextContent(type="text", text=clean(message))], is_error=True)


def _result(result: dict):
    """A tool's result through the output boundary: every string in it (snippets, excerpts,
    messages, paths) with credentials masked and control characters neutralised."""
    from mcp.types import CallToolResult, TextContent

    from vaultkit.vault.outbound import clean_tree, json_safe

    result = clean_tree(result)
    return CallToolResult(content=[TextContent(type="text", text=json_safe(json.dumps(
        result, ensure_ascii=False)))], structured_content=result)


def _schema_errors(schema: dict, arguments: Any) -> list[str]:
    """One line per problem with the arguments (values are not echoed: they may be huge)."""
    from jsonschema import Draft202012Validator

    known = list(schema.get("properties", {}))
    out = []
    for e in sorted(Draft202012Validator(schema).iter_errors(arguments),
                    key=lambda e: [str(x) for x in e.absolute_path]):
        where = "/".join(str(x) for x in e.absolute_path) or "arguments"
        rule = e.validator
        if rule == "additionalProperties":
            extra = sorted(set(e.instance) - set(known))
            out.append(f"unknown argument{'s' * (len(extra) != 1)} {', '.join(map(repr, extra))}"
                       f" (known: {', '.join(known)})")
        elif rule == "required":
            out.append(e.message)
        elif rule == "type":
            want = e.validator_value
            out.append(f"{where}: must be {want if isinstance(want, str) else ' or '.join(want)}")
        elif rule == "pattern":
            out.append(f"{where}: does not match {e.validator_value}")
        elif rule in ("minimum", "maximum", "exclusiveMinimum", "minLength", "maxLength",
                      "maxItems", "enum", "uniqueItems"):
            out.append(f"{where}: fails {rule} {e.validator_value}")
        else:
            out.append(f"{where}: {e.message[:200]}")
    return out


def build_server(session: VaultSession, *, read_only: bool = False):
    """The low-level MCP server for ``session`` (its handlers run the session's methods)."""
    import anyio
    from mcp.server.lowlevel import Server
    from mcp.shared.exceptions import MCPError
    from mcp.types import (INVALID_PARAMS, CallToolResult, ListResourcesResult, ListToolsResult,
                           ReadResourceResult, Resource, TextContent, TextResourceContents,
                           Tool, ToolAnnotations)

    from vaultkit.vault.outbound import clean, clean_line

    specs = {t.name: t for t in tool_specs(read_only)}
    hidden = {t.name for t in TOOLS} - set(specs)
    vault_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="vaultkit-vault")

    async def on_vault_thread(fn: Callable, *args):
        return await asyncio.get_running_loop().run_in_executor(vault_thread, fn, *args)

    async def list_tools(ctx, params) -> ListToolsResult:
        return ListToolsResult(tools=[
            Tool(name=t.name, title=t.title, description=t.description,
                 input_schema=t.input_schema, output_schema=t.output_schema,
                 annotations=ToolAnnotations(title=t.title, read_only_hint=t.read_only,
                                             destructive_hint=t.destructive,
                                             idempotent_hint=t.idempotent,
                                             open_world_hint=False))
            for t in specs.values()])

    async def call_tool(ctx, params) -> CallToolResult:
        name = params.name
        spec = specs.get(name)
        if spec is None:
            why = " (this server is read-only)" if name in hidden else ""
            return _error(f"unknown tool {name!r}{why}; tools: {', '.join(specs)}")
        arguments = params.arguments if params.arguments is not None else {}
        problems = _schema_errors(spec.input_schema, arguments)
        if problems:
            return _error(f"{name}: bad arguments: " + "; ".join(problems))
        try:
            if spec.run == "memory_log":
                written = await anyio.to_thread.run_sync(session.append, arguments)
                result = await on_vault_thread(session.entry_findings, arguments, written)
            elif spec.run == "memory_promote":
                result = await anyio.to_thread.run_sync(session.memory_promote, arguments)
            else:
                result = await on_vault_thread(getattr(session, spec.run), arguments)
        except (ToolFailure, VaultkitError, ConfigError, FileNotFoundError) as exc:
            return _error(f"{name}: {in_tool_words(str(exc))}")
        except Exception as exc:  # a bug: say so, keep serving
            traceback.print_exc(file=sys.stderr)
            return _error(f"{name}: internal error: {type(exc).__name__}: {exc} (please "
                          "report it)")
        return _result(result)

    async def list_resources(ctx, params) -> ListResourcesResult:
        try:
            found = await on_vault_thread(session.resources)
        except (VaultkitError, ConfigError, FileNotFoundError) as exc:
            raise MCPError(code=INVALID_PARAMS, message=clean_line(str(exc))) from None
        return ListResourcesResult(resources=[
            Resource(uri=uri, name=clean_line(path.rsplit("/", 1)[-1] if path.startswith("../")
                                              else path),
                     description=clean_line(desc), mime_type="text/markdown")
            for uri, path, desc in found])

    async def read_resource(ctx, params) -> ReadResourceResult:
        uri = str(params.uri)
        try:
            text = await on_vault_thread(session.read_resource, uri)
        except (ToolFailure, VaultkitError, ConfigError, FileNotFoundError) as exc:
            raise MCPError(code=INVALID_PARAMS, message=clean_line(str(exc))) from None
        return ReadResourceResult(contents=[
            TextResourceContents(uri=uri, text=clean(text), mime_type="text/markdown")])

    server = Server(SERVER_NAME, version=__version__, title="vaultkit",
                    instructions=INSTRUCTIONS, on_list_tools=list_tools,
                    on_call_tool=call_tool, on_list_resources=list_resources,
                    on_read_resource=read_resource)
    server._vaultkit_thread = vault_thread  # closed by serve()
    return server


def _warm_up(session: VaultSession) -> None:
    try:
        session.vault()
    except Exception:  # noqa: BLE001 (the first call that needs the vault reports it)
        pass


class _WireLines:
    """The client's lines for the SDK's stdio reader, minus the ones it would drop silently.

    The SDK skips a line that is not a valid JSON-RPC message without answering, so a
    client that sent a malformed request would wait forever. Here such a line gets the
    JSON-RPC error response (parse error or invalid request, with the request's id when
    one can be read, else null, as JSON-RPC 2.0 says) and is not passed on.
    """

    def __init__(self, wire):
        import anyio

        self.wire = wire
        self.write_stream = None
        self.ready = anyio.Event()

    def __aiter__(self):
        return self

    async def __anext__(self) -> str:
        while True:
            line = await self.wire.readline()
            if not line:
                raise StopAsyncIteration
            if not line.strip():
                continue
            error = _invalid_line(line)
            if error is None:
                return line
            await self.ready.wait()
            await self.write_stream.send(error)


def _invalid_line(line: str):
    """None for a valid JSON-RPC message, else the error response to send for it."""
    import mcp_types as types
    from mcp.shared.message import SessionMessage

    try:
        types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        return None
    except Exception:  # noqa: BLE001 (any failure means: not a message)
        pass
    try:
        data = json.loads(line)
    except ValueError:
        code, message, ident = types.PARSE_ERROR, "Parse error: not JSON", None
    else:
        ident = data.get("id") if isinstance(data, dict) else None
        if isinstance(ident, bool) or not isinstance(ident, (int, str)):
            ident = None
        code = types.INVALID_REQUEST
        message = "Invalid Request: not a JSON-RPC 2.0 message (or its params are malformed)"
    print(f"vaultkit mcp: answered a malformed message with error {code}", file=sys.stderr)
    return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=ident,
                                             error=types.ErrorData(code=code, message=message)))


def _claim_stdin():
    """Our own descriptor for the client's stream; fd 0 becomes the null device, so a
    child process (git) can never read the protocol. The SDK does the same when it
    opens stdin itself."""
    import os

    wire = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    return open(wire, encoding="utf-8", errors="replace", newline="\n")


def serve(root: Path, *, profile: str | None = None, use_cache: bool = True,
          read_only: bool = False, openclaw_config: str | None = None) -> int:
    """Serve over stdio until the client closes standard input."""
    import anyio
    from mcp.server.stdio import stdio_server

    session = VaultSession(root, profile=profile, use_cache=use_cache,
                           openclaw_config=openclaw_config)
    session.settings()  # a broken vaultkit.toml is a startup error, said once, plainly
    server = build_server(session, read_only=read_only)

    lines = _WireLines(anyio.wrap_file(_claim_stdin()))
    # parse the vault while the client connects, so the first call that needs notes, and
    # the first one after an edit, reparse only what changed
    server._vaultkit_thread.submit(_warm_up, session)

    async def main() -> None:
        async with stdio_server(stdin=lines) as (read_stream, write_stream):
            lines.write_stream = write_stream
            lines.ready.set()
            await server.run(read_stream, write_stream, server.create_initialization_options())

    try:
        anyio.run(main)
    finally:
        pool = server._vaultkit_thread
        pool.submit(session.close).result()
        pool.shutdown()
    return 0
