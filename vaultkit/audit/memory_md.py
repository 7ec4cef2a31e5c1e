"""The audit check ``memory-md``: MEMORY.md exists and stays within its budget."""

from __future__ import annotations


from vaultkit.audit.context import FAIL, PASS, AuditContext, Check, size_text

def check_memory_md(ctx: AuditContext) -> Check:
    limit = ctx.profile.budgets.memory_md_bytes
    note = ctx.bootstrap().get("MEMORY.md")
    if note is None:
        return Check("memory-md", FAIL, f"no MEMORY.md in {ctx.where_bootstrap()}",
                     "create MEMORY.md with `## bootstrap_system_principles` and "
                     "`## approved_durable_entries` sections (`vaultkit init` writes a starter one)")
    if note.size > limit:
        return Check("memory-md", FAIL,
                     f"{note.path} is {size_text(note.size)}, over the {limit:,}-byte budget: the "
                     "agent pays for every byte in every session, and past the runtime's "
                     "limit its middle is cut",
                     f"move entries not needed every session from {note.path} to "
                     "memory/semantic/ or memory/lessons/ until it is under "
                     f"{limit / 1024:.0f} KB")
    return Check("memory-md", PASS, f"{note.path} is {size_text(note.size)}, budget {limit:,}")
