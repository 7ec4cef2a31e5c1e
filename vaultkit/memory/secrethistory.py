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

import re
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

    from vaultkit.core.gitenv import popen_git

    cmd = ["-C", repo_dir, "-c", "core.quotePath=false", "-c", "diff.renameLimit=2000",
           "log", "--branches", "--remotes", "--no-color", "--no-ext-diff", "--no-textconv",
           "-p", "-U0", "-M", "--diff-filter=AMR", "--format=%x00%H%x00%h%x00%cs%x00%s",
           "--", "*.md", "*.MD"]
    scan = HistoryScan()
    try:
        # the repository's hooks, pager and diff drivers off; the repo's own GIT_DIR only
        proc = popen_git(cmd, keep_repo_env=False, env={"LC_ALL": "C"})
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
