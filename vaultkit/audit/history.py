"""The audit check ``history``: no memory was lost in the git history without being recovered."""

from __future__ import annotations

import datetime as dt

from vaultkit.audit.context import PASS, WARN, AuditContext, Check
from vaultkit.core.errors import VaultkitError
from vaultkit.memory import history as history_scan


AUDIT_DAYS = 30


def check_history(ctx: AuditContext) -> Check:
    """Unrecovered loss events of the last 30 days warn; the hint is the recover command."""
    vault = ctx.vault
    since = (ctx.now - dt.timedelta(days=AUDIT_DAYS)).isoformat(timespec="seconds")
    try:
        history = history_scan.scan_history(vault.root, vault.settings, since=since)
    except VaultkitError as exc:
        if str(exc).startswith("git log failed"):  # a repository git cannot read
            return Check("history", WARN, f"the history cannot be read: {exc}",
                         "run `git fsck` in the vault's repository")
        return Check("history", PASS, f"no git history to read ({exc}); see git-backup")
    return history_check(history, ctx.now)


def history_check(history: history_scan.History, now: dt.datetime):
    """The audit's ``history`` check on a history already read."""
    cutoff = (now - dt.timedelta(days=AUDIT_DAYS)).timestamp()
    lost = [e for e in history.events
            if e.recoverable and e.is_loss and not e.recovered and e.timestamp >= cutoff]
    unread = ""
    if history.warnings:  # versions over the read bound or missing: not judged
        shown = "; ".join(history.warnings[:3])
        more = f"; +{len(history.warnings) - 3} more" if len(history.warnings) > 3 else ""
        unread = (f"{len(history.warnings)} change{'s' * (len(history.warnings) != 1)} not "
                  f"judged: {shown}{more}")
    if not lost:
        read = (f"({history.commits} commit{'s' * (history.commits != 1)} read)")
        if unread:
            return Check("history", WARN,
                         f"no unrecovered memory loss found in the last {AUDIT_DAYS} days "
                         f"{read}, but {unread}",
                         "see `vaultkit history`; fetch the missing objects (`git fetch "
                         "--unshallow`, a full clone) or look at the oversized versions by "
                         "hand")
        return Check("history", PASS,
                     f"no unrecovered memory loss in the last {AUDIT_DAYS} days {read}")
    listed = "; ".join(f"{e.kind} {e.path} in {e.commit[:10]} on {e.day} ({e.id})"
                       for e in lost[:5])
    more = f"; +{len(lost) - 5} more" if len(lost) > 5 else ""
    hint = (f"vaultkit recover {lost[0].id}" if len(lost) == 1 else "vaultkit recover --all")
    return Check("history", WARN,
                 f"{len(lost)} memory-loss event{'s' * (len(lost) != 1)} in the last "
                 f"{AUDIT_DAYS} days not recovered: {listed}{more}"
                 + (f"; {unread}" if unread else ""),
                 f"run `{hint}` (see `vaultkit history` first), review and commit",
                 [e.to_dict() for e in lost])
