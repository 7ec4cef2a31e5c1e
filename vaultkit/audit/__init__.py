"""The survival checklist: is this vault and its OpenClaw setup safe against memory loss?

One module per check, each a function of an :class:`~vaultkit.audit.context.AuditContext`
returning a :class:`~vaultkit.audit.context.Check` with an id, a status (``pass``, ``warn``,
``fail``, ``unknown`` when what it reads is not visible, or ``tip`` for vaultkit's own tooling
not set up yet), what it found, and a one-line hint saying how to fix it. :func:`run_audit` runs them
all in the order of :data:`CHECK_IDS`; :mod:`vaultkit.audit.render` prints them. A check module
imports only :mod:`vaultkit.audit.context` from this package, never another check.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import Callable

from vaultkit.audit.context import (AGENT_CHECKS, FAIL, PASS, TIP, UNKNOWN, WARN, AuditContext,
                                    Check, counts, counts_text, estimate_tokens)
from vaultkit.audit.render import render_json, render_text
from vaultkit.audit.memory_md import check_memory_md
from vaultkit.audit.memory_dir import check_memory_dir
from vaultkit.audit.memory_flush import check_memory_flush
from vaultkit.audit.reserve_floor import check_reserve_floor
from vaultkit.audit.agents_protocol import check_agents_protocol
from vaultkit.audit.heartbeat import check_heartbeat
from vaultkit.audit.footprint import check_footprint
from vaultkit.audit.truncation import check_truncation
from vaultkit.audit.leftover import check_leftover
from vaultkit.audit.index import check_index
from vaultkit.audit.git_backup import check_git_backup
from vaultkit.audit.pre_commit import check_pre_commit
from vaultkit.audit.obsidian import check_obsidian
from vaultkit.audit.unclosed import check_unclosed
from vaultkit.audit.baseline import check_baseline
from vaultkit.audit.history import check_history
from vaultkit.audit.secrets import check_secrets
from vaultkit.audit.snapshots import check_snapshots
from vaultkit.audit.unclosed import find_unclosed, unclosed_items

__all__ = ["AGENT_CHECKS", "CHECKS", "CHECK_IDS", "FAIL", "PASS", "TIP", "UNKNOWN", "WARN",
           "AuditContext", "Check", "counts", "counts_text", "applies", "estimate_tokens", "find_unclosed", "render_json", "render_text", "run_audit",
           "unclosed_items"]

CHECK_IDS = ("memory-md", "memory-dir", "memory-flush", "reserve-floor", "agents-protocol",
             "heartbeat-distillation", "bootstrap-footprint", "bootstrap-truncation",
             "bootstrap-leftover", "index", "git-backup", "pre-commit", "obsidian", "unclosed-work",
             "baseline", "history", "secrets", "snapshots")

CHECKS: dict[str, Callable[[AuditContext], Check]] = {
    "memory-md": check_memory_md,
    "memory-dir": check_memory_dir,
    "memory-flush": check_memory_flush,
    "reserve-floor": check_reserve_floor,
    "agents-protocol": check_agents_protocol,
    "heartbeat-distillation": check_heartbeat,
    "bootstrap-footprint": check_footprint,
    "bootstrap-truncation": check_truncation,
    "bootstrap-leftover": check_leftover,
    "index": check_index,
    "git-backup": check_git_backup,
    "pre-commit": check_pre_commit,
    "obsidian": check_obsidian,
    "unclosed-work": check_unclosed,
    "baseline": check_baseline,
    "history": check_history,
    "secrets": check_secrets,
    "snapshots": check_snapshots,
}
assert tuple(CHECKS) == CHECK_IDS


def run_audit(vault, *, openclaw_config: str | Path | None = None, agent: str | None = None,
              backup_max_age_hours: float | None = None, now: dt.datetime | None = None,
              skip: set[str] | frozenset[str] = frozenset()) -> list[Check]:
    """Run every check that applies to the vault (:func:`applies`), except those in
    ``skip``, in the checklist's order."""
    ctx = AuditContext(vault, openclaw_config=openclaw_config, agent=agent,
                       backup_max_age_hours=backup_max_age_hours, now=now)
    out = []
    for cid, fn in CHECKS.items():
        if cid in skip or not applies(cid, vault):
            continue
        try:
            check = fn(ctx)
        except Exception as exc:  # one broken check must not hide the others
            check = Check(cid, FAIL, f"the check itself failed: {type(exc).__name__}: {exc}",
                          "report this as a vaultkit bug (VAULTKIT_DEBUG=1 shows more)")
            if os.environ.get("VAULTKIT_DEBUG"):
                raise
        check.id = cid
        out.append(check)
    return out


def applies(check_id: str, vault) -> bool:
    """Whether a check judges this vault: the agent checks (:data:`AGENT_CHECKS`) only an
    agent's workspace, a profile with bootstrap files; a plain Obsidian vault gets the
    checks for what it has (git, hooks, Obsidian's settings, baseline, history, secrets)."""
    return check_id not in AGENT_CHECKS or bool(vault.profile.bootstrap_files)
