"""The audit check ``index``: memory/INDEX.md exists and is current."""

from __future__ import annotations


from vaultkit.audit.context import FAIL, PASS, TIP, WARN, AuditContext, Check

def check_index(ctx: AuditContext) -> Check:
    rel = ctx.profile.expand(ctx.profile.index.path)
    note = ctx.vault.notes.get(rel)
    if note is None:
        # no INDEX.md is a recommendation (memory_search finds notes without one); a stale
        # one misleads the agent, and that fails
        return Check("index", TIP, f"no {rel}: the agent has no entry point into its memory",
                     f"run `vaultkit index {ctx.vault.root}` to generate it")
    try:
        from vaultkit.links.indexgen import render_index
    except ImportError:
        return Check("index", PASS, f"{rel} exists ({note.size:,} bytes); this vaultkit cannot "
                                    "generate the index, so freshness was not checked")
    try:
        expected = render_index(ctx.vault)
    except Exception as exc:  # a bug in the generator must not stop the checklist
        return Check("index", WARN, f"{rel} exists, but its freshness could not be checked "
                                    f"({type(exc).__name__}: {exc})",
                     "run `vaultkit index` and report the error if it repeats")
    if expected != note.text:
        return Check("index", FAIL, f"{rel} is stale: it differs from what `vaultkit index` "
                                    "generates",
                     f"run `vaultkit index {ctx.vault.root}` (or let the vaultkit-index hook "
                     "do it on commit)")
    return Check("index", PASS, f"{rel} exists and is fresh")
