"""The ``secrets`` check of ``vaultkit audit``: credentials in the notes and in git history.

The working tree is checked with the ``secret-in-memory`` rule (so suppression comments, the
configuration and the baseline apply; what they accept is not reported from history either).
History is read with ONE ``git log -p`` process over every commit reachable from a local or
remote-tracking branch, limited to Markdown files, with zero lines of context and rename
detection (a journal moved to the archive is not "added" again). Its
output is streamed: only the added lines of each file of each commit are kept, and they go
through the same detector (whose prefilter makes ordinary lines nearly free). The process is
bounded in time; a scan cut short says so.

A credential that reached a commit stays in every clone until history is rewritten, so each
commit that added one is named, with what to do: rotate first, then rewrite, then force-push.
Values are never printed, only their masked form.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from dataclasses import dataclass, field

HISTORY_SECONDS = 120.0  # a history scan stops here and says it was cut short

LEAK_STEPS = ("rotate each credential first (it was readable from the moment it was pushed); "
              "then rewrite history with git-filter-repo (git filter-repo --replace-text FILE) "
              "or BFG (bfg --replace-text FILE), force-push every branch (git push --force "
              "--all), and keep credentials in the runtime's config or environment")

_HUNK = re.compile(rb"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")


@dataclass
class HistoryFinding:
    commit: str
    short: str
    date: str
    subject: str
    path: str  # repository-relative
    line: int
    kind: str
    masked: str
    label: str = ""

    def describe(self) -> str:
        what = f"{self.kind} after '{self.label}'" if self.label else self.kind
        return f"{what} ({self.masked})"


@dataclass
class HistoryScan:
    findings: list[HistoryFinding] = field(default_factory=list)
    commits: int = 0
    complete: bool = True
    error: str | None = None


def scan_history(repo_dir: str, *, seconds: float = HISTORY_SECONDS) -> HistoryScan:
    """Every credential added by a commit reachable from a branch, newest commit first."""
    from vaultkit.vault.secretscan import has_candidates, scan_text

    env = {k: v for k, v in os.environ.items()
           if k not in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_PREFIX")}
    env.update(LC_ALL="C", GIT_TERMINAL_PROMPT="0", GIT_PAGER="cat")
    cmd = ["git", "-C", repo_dir, "-c", "core.quotePath=false", "-c", "diff.renameLimit=2000",
           "log", "--branches", "--remotes", "--no-color", "--no-ext-diff", "--no-textconv",
           "-p", "-U0", "-M", "--diff-filter=AMR", "--format=%x00%H%x00%h%x00%cs%x00%s",
           "--", "*.md", "*.MD"]
    scan = HistoryScan()
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL, env=env)
    except OSError as exc:
        scan.error = f"git cannot be run: {exc.strerror or exc}"
        scan.complete = False
        return scan
    deadline = time.monotonic() + seconds
    commit: tuple[str, str, str, str] | None = None
    path: str | None = None
    in_header = False
    lineno = 0
    added: list[bytes] = []
    where: list[int] = []

    def flush() -> None:
        if commit is None or path is None or not added:
            added.clear()
            where.clear()
            return
        text = b"\n".join(added).decode("utf-8", "replace")
        if has_candidates(text):
            for f in scan_text(text):
                scan.findings.append(HistoryFinding(commit[0], commit[1], commit[2], commit[3],
                                                    path, where[f.line - 1], f.kind, f.masked,
                                                    f.label))
        added.clear()
        where.clear()

    assert proc.stdout is not None
    try:
        for n, raw in enumerate(proc.stdout):
            if n % 4096 == 0 and time.monotonic() > deadline:
                scan.complete = False
                break
            if raw.startswith(b"\x00"):
                flush()
                parts = raw.rstrip(b"\n").split(b"\x00")
                parts += [b""] * (5 - len(parts))
                commit = tuple(p.decode("utf-8", "replace") for p in parts[1:5])  # type: ignore
                scan.commits += 1
                path = None
                in_header = False
                continue
            if raw.startswith(b"diff --git "):
                flush()
                in_header = True
                path = None
                continue
            if in_header:
                if raw.startswith(b"+++ "):
                    target = raw[4:].rstrip(b"\n").decode("utf-8", "replace")
                    path = None if target == "/dev/null" else target[2:] \
                        if target.startswith("b/") else target
                elif raw.startswith(b"@@"):
                    in_header = False
                else:
                    continue
            if raw.startswith(b"@@"):
                m = _HUNK.match(raw)
                lineno = int(m.group(1)) if m else 0
                continue
            if raw.startswith(b"+"):
                added.append(raw[1:].rstrip(b"\r\n"))
                where.append(lineno)
                lineno += 1
            elif raw.startswith(b" "):
                lineno += 1
        flush()
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        err = proc.stderr.read().decode("utf-8", "replace") if proc.stderr else ""
        if proc.stdout:
            proc.stdout.close()
        if proc.stderr:
            proc.stderr.close()
    if scan.complete and proc.returncode not in (0, None):
        scan.error = (err.strip().splitlines() or [f"git log exited {proc.returncode}"])[-1]
    return scan


def check_secrets(ctx):
    """The audit check: the working tree through the rule, history through :func:`scan_history`."""
    from vaultkit.audit import FAIL, PASS, WARN, Check
    from vaultkit.lint.engine import run_rules
    from vaultkit.core.errors import VaultkitError
    from vaultkit.lint.rule import Context
    from vaultkit.lint.rules.secret_in_memory import RULE
    from vaultkit.vault.secretscan import DETECTOR_VERSION, Finding, scan_text

    vault = ctx.vault
    rule = RULE()
    current = run_rules(Context(vault), [rule])
    try:  # a finding the baseline accepts was reviewed (the baseline check reports a bad file)
        from vaultkit.lint.baseline import Baseline, baseline_path

        current = Baseline.load(baseline_path(vault)).filter(current).shown
    except (ImportError, VaultkitError):
        pass
    # what the tree holds but a suppression comment or config accepts: reviewed, so its
    # history is not reported either
    raw = set()
    for path, note in vault.notes.items():
        if note.error:
            continue
        facts = vault.fact(path, "secrets", lambda n=note: [
            f.to_plain() for f in scan_text(n.text, n.code_ranges)], epoch=DETECTOR_VERSION)
        for plain in facts:
            f = Finding(*plain)
            raw.add((path, f.line, f.kind, f.masked))
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
