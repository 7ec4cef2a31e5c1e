"""The audit check ``bootstrap-truncation``: no bootstrap file is cut by the runtime's limits."""

from __future__ import annotations


from vaultkit.audit.context import FAIL, PASS, AuditContext, Check

def check_truncation(ctx: AuditContext) -> Check:
    from vaultkit.vault.openclaw import bootstrap_limits
    from vaultkit.lint.rules.bootstrap_truncation import simulate

    per_file, total_limit, source = bootstrap_limits(ctx.vault, ctx.explicit_config, ctx.agent)
    # the very computation `check`'s bootstrap-truncation rule makes (UTF-16 units of the
    # right-trimmed text, injection order), so the two never disagree
    files = [note for note in ctx.bootstrap().values() if not note.error]
    plan = simulate(files, per_file, total_limit)
    over = [(note.path, length) for note, length, kept in plan if length > per_file]
    total = sum(length for _, length, _ in plan)
    cut_by_total = [note.path for note, length, kept in plan if kept < min(length, per_file)]
    found = []
    hints = []
    for path, chars in over:
        found.append(f"{path} is {chars:,} characters, over bootstrapMaxChars {per_file:,}: the "
                     f"agent silently loses about {chars - per_file:,} from its middle")
        hints.append(f"cut {path} below {per_file:,} characters")
    if cut_by_total:
        found.append(f"the bootstrap files total {total:,} characters, over "
                     f"bootstrapTotalMaxChars {total_limit:,}: the files injected last are cut "
                     f"({', '.join(cut_by_total)})")
        hints.append(f"bring the set below {total_limit:,} characters")
    if found:
        return Check("bootstrap-truncation", FAIL, "; ".join(found) + f"; limits from {source}",
                     "; ".join(hints) + " (move detail into memory/semantic/ or "
                     "memory/procedural/, which memory_search still finds)")
    return Check("bootstrap-truncation", PASS,
                 f"every bootstrap file is within {per_file:,} characters and the set "
                 f"({total:,}) within {total_limit:,}; limits from {source}")
