"""The audit check ``git-backup``: the vault is in git and committed recently."""

from __future__ import annotations

import datetime as dt

from vaultkit.audit.context import FAIL, PASS, TIP, WARN, AuditContext, Check

def check_git_backup(ctx: AuditContext) -> Check:
    top = ctx.git_top()
    if top is False:
        return Check("git-backup", FAIL, "git is not installed, so nothing backs up the vault",
                     "install git, then `git init` the vault and commit nightly")
    if top is None and not ctx.agent_vault:
        # a plain Obsidian vault may be backed up another way (Obsidian Sync, a synced
        # folder): git is a recommendation there, not a failure
        return Check("git-backup", TIP, f"{ctx.vault.root} is not in a git repository: "
                                        "nothing keeps earlier versions of a note",
                     f"`git init` {ctx.vault.root} and commit now and then (Obsidian Git "
                     "does it from inside Obsidian)")
    if top is None:
        return Check("git-backup", FAIL, f"{ctx.vault.root} is not in a git repository: one bad "
                                         "write loses memory for good",
                     f"run `vaultkit init --git {ctx.vault.root}` or `git init && git add -A && "
                     "git commit -m \"backup: $(date +%F)\"` there, and schedule the nightly "
                     "backup")
    proc = ctx.git("log", "-1", "--format=%ct%x00%s")
    if proc is None or proc.returncode != 0 or not proc.stdout.strip():
        return Check("git-backup", FAIL, f"the repository at {top} has no commits yet",
                     "commit now: git add -A && git commit -m \"backup: $(date +%F)\"")
    stamp, _, subject = proc.stdout.strip().partition("\x00")
    when = dt.datetime.fromtimestamp(int(stamp), dt.timezone.utc)
    age_h = (ctx.now - when).total_seconds() / 3600
    age = _age(age_h)
    limit = ctx.backup_max_age_hours
    remotes = ctx.git("remote")
    names = remotes.stdout.split() if remotes is not None and remotes.returncode == 0 else []
    # (not into submodules: git would run there under their own, unchecked config)
    dirty = ctx.git("status", "--porcelain", "--untracked-files=normal", "--ignore-submodules=all")
    changes = len(dirty.stdout.splitlines()) if dirty is not None and dirty.returncode == 0 else 0
    pending = f"; {changes} uncommitted change{'s' * (changes != 1)}" if changes else ""
    found = f"last commit {age} ago ({when:%Y-%m-%d %H:%M} UTC, \"{subject[:60]}\"){pending}"
    if age_h > limit:
        return Check("git-backup", FAIL, f"{found}: older than {limit:g} h",
                     "commit now (git add -A && git commit -m \"backup: $(date +%F)\") and "
                     "schedule it nightly, e.g. cron `0 23 * * *`")
    if not names:
        return Check("git-backup", WARN, f"{found}; no remote, so a lost disk loses everything",
                     "add a private remote and push: git remote add origin URL && git push -u "
                     "origin HEAD")
    return Check("git-backup", PASS, f"{found}; remote {', '.join(names)}")


def _age(hours: float) -> str:
    if hours < 0:
        return "0 min (in the future)"
    if hours < 1:
        return f"{int(hours * 60)} min"
    if hours < 48:
        return f"{hours:.0f} h"
    return f"{hours / 24:.0f} days"
