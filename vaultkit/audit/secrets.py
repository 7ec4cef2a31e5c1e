"""The audit check ``secrets``: no credential in the notes, nor added by a commit still reachable
from a branch."""

from __future__ import annotations

from vaultkit.audit.context import FAIL, PASS, WARN, AuditContext, Check
from vaultkit.memory.secrethistory import (HISTORY_SECONDS, LEAK_STEPS, HistoryFinding,
                                           scan_history)


def check_secrets(ctx: AuditContext) -> Check:
    """The audit check: the working tree through the rule, history through :func:`scan_history`."""
    from vaultkit.core.errors import VaultkitError
    from vaultkit.lint.baseline import Baseline, baseline_path
    from vaultkit.lint.engine import run_rules
    from vaultkit.lint.rule import Context
    from vaultkit.lint.rules.secret_in_memory import RULE
    from vaultkit.vault.secretscan import secrets_of

    vault = ctx.vault
    current = run_rules(Context(vault), [RULE()])
    try:  # a finding the baseline accepts was reviewed (the baseline check reports a bad file)
        current = Baseline.load(baseline_path(vault)).filter(current).shown
    except VaultkitError:
        pass
    # what the tree holds but a suppression comment or config accepts: reviewed, so its
    # history is not reported either
    raw = {(path, f.line, f.kind, f.masked) for path, note in vault.notes.items()
           if not note.error for f in secrets_of(vault, note)}
    reported = {(d.path, d.line) for d in current}
    accepted = {(kind, masked) for path, line, kind, masked in raw
                if (path, line) not in reported}

    details: list[dict] = []
    parts: list[str] = []
    for d in current:
        details.append({"where": "working tree", "path": d.path, "line": d.line,
                        "found": d.message.split(" in memory;")[0]})
    if current:
        listed = "; ".join(f"{d['path']}:{d['line']} {d['found']}" for d in details[:3])
        more = f" and {len(current) - 3} more" if len(current) > 3 else ""
        parts.append(f"{len(current)} credential{'s' * (len(current) != 1)} in the notes: "
                     f"{listed}{more}")

    top = ctx.git_top()
    history_note = ""
    found_history: list[HistoryFinding] = []
    if top is False:
        history_note = "git is not installed: history not scanned"
    elif top is None:
        history_note = "not a git repository: no history to scan"
    else:
        scan = scan_history(str(vault.root))
        found_history = [f for f in scan.findings if (f.kind, f.masked) not in accepted]
        if scan.error:
            history_note = f"history could not be read: {scan.error}"
        else:
            history_note = (f"{scan.commits:,} commit{'s' * (scan.commits != 1)} changing "
                            "Markdown files, reachable from a branch, scanned")
            if not scan.complete:
                history_note += (f" (cut short after {HISTORY_SECONDS:g} s: older commits "
                                 "not scanned)")
    if found_history:
        commits = list(dict.fromkeys(f.short for f in found_history))
        listed = "; ".join(f"commit {f.short} ({f.date}, \"{f.subject[:40]}\") added "
                           f"{f.path}:{f.line} {f.describe()}" for f in found_history[:3])
        more = f" and {len(found_history) - 3} more" if len(found_history) > 3 else ""
        parts.append(f"{len(found_history)} credential{'s' * (len(found_history) != 1)} added "
                     f"in {len(commits)} commit{'s' * (len(commits) != 1)} still reachable "
                     f"from a branch: {listed}{more}")
        for f in found_history:
            details.append({"where": "history", "commit": f.commit, "date": f.date,
                            "subject": f.subject, "path": f.path, "line": f.line,
                            "found": f.describe()})
    if parts:
        return Check("secrets", FAIL, "; ".join(parts) + f" ({history_note})", LEAK_STEPS,
                     details)
    if history_note.startswith(("history could not", "git is not")) or "cut short" in history_note:
        return Check("secrets", WARN, f"no credential in the notes; {history_note}",
                     "run `vaultkit audit` where git works and give it time to read the history")
    return Check("secrets", PASS, f"no credential in the {len(vault.notes):,} notes; "
                                  f"{history_note}: none added")
