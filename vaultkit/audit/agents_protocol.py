"""The audit check ``agents-protocol``: AGENTS.md tells the agent how to keep memory.

The memory protocol of the seeds' checklist has two halves: where memory lives and that
it is written down, and the search-before-acting rule ("run memory_search before acting on
past context"). OpenClaw's stock AGENTS.md (docs/reference/templates/AGENTS.md, verified
on 2026-12-02) carries the first half under its headings `Every Session` (`Session
Startup` in later versions), `Memory` and `Write It Down`, and never mentions
memory_search: such a file is told what is there and what is missing, not that it has no
protocol.
"""

from __future__ import annotations

import re

from vaultkit.audit.context import FAIL, PASS, WARN, AuditContext, Check

_PROTOCOL_HEADING = re.compile(r"memory\s+protocol|记忆(?:协议|规则)", re.I)
# OpenClaw's stock memory headings, as its templates write them (emoji and "!" around)
_STOCK_HEADINGS = (("Every Session", re.compile(r"^(?:every\s+session|session\s+startup)\b")),
                   ("Memory", re.compile(r"^memory$")),
                   ("Write It Down", re.compile(r"^write\s+it\s+down\b")))
_SEARCH_RULE = ("\"- ALWAYS run memory_search before acting on past context\" and \"- Do NOT "
                "guess from conversation history alone\"")


def _plain(text: str) -> str:
    """A heading's words: emoji, marks and surrounding punctuation gone, lower case."""
    return re.sub(r"[^\w\s.'-]+", " ", text).strip(" .-").lower()


def check_agents_protocol(ctx: AuditContext) -> Check:
    note = ctx.bootstrap().get("AGENTS.md")
    hint = ("add a `## Memory Protocol` section to AGENTS.md: " + _SEARCH_RULE)
    if note is None:
        return Check("agents-protocol", FAIL, f"no AGENTS.md in {ctx.where_bootstrap()}",
                     "create AGENTS.md with a `## Memory Protocol` section: \"- ALWAYS run "
                     "memory_search before acting on past context\" (`vaultkit init` writes one)")
    if note.error:
        return Check("agents-protocol", FAIL, f"{note.path} cannot be read: {note.error}",
                     f"rewrite {note.path} as UTF-8 text")
    lines = note.lines
    hits = [i for i, line in enumerate(lines, 1) if "memory_search" in line.lower()]
    heading = next((h for h in note.headings if _PROTOCOL_HEADING.search(h.text)), None)
    if hits:
        where = f"'{heading.text}' (line {heading.line})" if heading else f"line {hits[0]}"
        return Check("agents-protocol", PASS,
                     f"{note.path} tells the agent to run memory_search: {where}")
    stock = []
    for name, pattern in _STOCK_HEADINGS:
        found = next((h for h in note.headings if pattern.search(_plain(h.text))), None)
        if found is not None:
            stock.append((name, found))
    if len(stock) >= 2 or heading is not None:
        # the first half of a protocol is there: name it, and what is missing
        have = ", ".join(f"'{h.text}' (line {h.line})" for _, h in stock)
        what = (f"OpenClaw's stock memory section ({have})" if len(stock) >= 2 else
                f"a '{heading.text}' heading (line {heading.line})")
        into = (f"the '{stock[1][1].text}' section" if len(stock) >= 2 and stock[1][0] == "Memory"
                else f"the '{heading.text}' section" if heading is not None
                else "a `## Memory Protocol` section")
        return Check("agents-protocol", WARN,
                     f"{note.path} has {what}: it says where memory lives and to write it "
                     "down, but not the search-before-acting rule (it never tells the agent "
                     "to run memory_search before acting on past context)",
                     f"add to {into}: {_SEARCH_RULE}")
    return Check("agents-protocol", FAIL,
                 f"{note.path} holds no memory protocol: no memory section (such as "
                 "OpenClaw's 'Memory' and 'Write It Down') and no mention of memory_search",
                 hint)
