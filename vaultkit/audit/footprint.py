"""The audit check ``bootstrap-footprint``: what the bootstrap files cost each session."""

from __future__ import annotations

import datetime as dt

from vaultkit.audit.context import FAIL, PASS, WARN, AuditContext, Check, estimate_tokens, size_text

def _journal(ctx: AuditContext, day: dt.date):
    return ctx.vault.notes.get(f"{ctx.profile.memory_prefix}{day.isoformat()}.md")


def check_footprint(ctx: AuditContext) -> Check:
    budgets = ctx.profile.budgets
    soft, hard = budgets.session_footprint_bytes, budgets.bootstrap_total_bytes
    rows = []
    boot_bytes = 0
    for name, note in ctx.bootstrap().items():
        rows.append({"file": note.path, "bytes": note.size,
                     "tokens": estimate_tokens(note.text) if not note.error else None,
                     "kind": "bootstrap"})
        boot_bytes += note.size
    for label, day in (("today", ctx.today), ("yesterday", ctx.today - dt.timedelta(days=1))):
        note = _journal(ctx, day)
        if note is not None:
            rows.append({"file": note.path, "bytes": note.size,
                         "tokens": estimate_tokens(note.text) if not note.error else None,
                         "kind": label})
    total = sum(r["bytes"] for r in rows)
    tokens = sum(r["tokens"] or 0 for r in rows)
    n = len(rows)
    summary = (f"{n} file{'s' * (n != 1)} load every session: {size_text(total)}, "
               f"~{tokens:,} tokens (bootstrap {boot_bytes:,} bytes)")
    if not rows:
        return Check("bootstrap-footprint", FAIL,
                     f"nothing loads every session: no bootstrap files in "
                     f"{ctx.where_bootstrap()}",
                     "create MEMORY.md, AGENTS.md, SOUL.md and USER.md (`vaultkit init`)")
    largest = max(rows, key=lambda r: r["bytes"])
    if boot_bytes > hard:
        return Check("bootstrap-footprint", FAIL,
                     f"{summary}; the bootstrap files alone pass the {hard:,}-byte budget",
                     f"shrink the bootstrap files by {boot_bytes - hard:,} bytes, starting with "
                     f"{largest['file']} ({largest['bytes']:,}): move what is not needed every "
                     "session into memory/semantic/ or memory/procedural/", rows)
    if total > soft:
        return Check("bootstrap-footprint", WARN,
                     f"{summary}, over the seed's ~{soft / 1024:.0f} KB per session",
                     f"trim {total - soft:,} bytes, starting with {largest['file']} "
                     f"({largest['bytes']:,}); keep journal entries 3–10 lines", rows)
    return Check("bootstrap-footprint", PASS, f"{summary}, within ~{soft / 1024:.0f} KB", "",
                 rows)
