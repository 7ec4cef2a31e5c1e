"""The audit check ``memory-dir``: the memory folder exists and holds journals."""

from __future__ import annotations

import re

from vaultkit.audit.context import FAIL, PASS, AuditContext, Check

def check_memory_dir(ctx: AuditContext) -> Check:
    prefix = ctx.profile.memory_prefix
    if not prefix:
        return Check("memory-dir", PASS, f"the vault is the memory folder itself ({ctx.vault.root})")
    folder = ctx.vault.root / prefix.rstrip("/")
    if folder.is_dir():
        journals = sum(1 for p in ctx.vault.notes if ctx.vault.layers.get(p) == "journal")
        return Check("memory-dir", PASS, f"{prefix} exists ({journals} daily journal"
                                          f"{'s' * (journals != 1)})")
    root = ctx.vault.root
    journals_here = any(re.fullmatch(r"\d{4}-\d{2}-\d{2}\.md", p) for p in ctx.vault.notes)
    bootstrap_above = any((root.parent / name).is_file() for name in ("MEMORY.md", "AGENTS.md"))
    if journals_here and bootstrap_above:
        return Check("memory-dir", FAIL,
                     f"no {prefix} folder, but this looks like a repo that is only memory/ "
                     "(journals here, bootstrap files in the folder above)",
                     f"add `memory-dir = \".\"` to {root / 'vaultkit.toml'} so the audit reads "
                     "the bootstrap files from the folder above")
    if folder.exists():
        return Check("memory-dir", FAIL, f"{prefix.rstrip('/')} exists but is not a folder",
                     f"rename the file {prefix.rstrip('/')} and create the folder "
                     f"(mkdir {prefix.rstrip('/')})")
    return Check("memory-dir", FAIL, f"no {prefix} folder in {root}",
                 f"mkdir {root / prefix.rstrip('/')} (or run `vaultkit init {root}` to add the "
                 "whole layout without touching existing files)")
