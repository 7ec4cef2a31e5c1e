"""The audit check ``agents-protocol``: AGENTS.md tells the agent how to keep memory."""

from __future__ import annotations

import re

from vaultkit.audit.context import FAIL, PASS, AuditContext, Check

_PROTOCOL_HEADING = re.compile(r"memory\s+protocol|记忆(?:协议|规则)", re.I)


def check_agents_protocol(ctx: AuditContext) -> Check:
    note = ctx.bootstrap().get("AGENTS.md")
    hint = ("add a `## Memory Protocol` section to AGENTS.md: \"- ALWAYS run memory_search "
            "before acting on past context\" and \"- Do NOT guess from conversation history "
            "alone\"")
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
    if not hits:
        found = (f"{note.path} has a '{heading.text}' heading (line {heading.line}) but never "
                 "tells the agent to run memory_search" if heading else
                 f"{note.path} holds no memory protocol (no mention of memory_search)")
        return Check("agents-protocol", FAIL, found, hint)
    where = f"'{heading.text}' (line {heading.line})" if heading else f"line {hits[0]}"
    return Check("agents-protocol", PASS,
                 f"{note.path} tells the agent to run memory_search: {where}")
