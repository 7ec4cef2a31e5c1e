"""The audit check ``bootstrap-leftover``: no BOOTSTRAP.md is left after first-run setup."""

from __future__ import annotations


from vaultkit.audit.context import PASS, WARN, AuditContext, Check

def check_leftover(ctx: AuditContext) -> Check:
    note = ctx.bootstrap().get("BOOTSTRAP.md")
    if note is None:
        return Check("bootstrap-leftover", PASS, "no BOOTSTRAP.md (the first-run ritual is done)")
    return Check("bootstrap-leftover", WARN,
                 f"{note.path} is still there ({note.size:,} bytes injected into every session)",
                 f"delete {note.path} once the first-run ritual is done (git rm {note.path})")
