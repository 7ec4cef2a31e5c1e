"""A generated vault repository whose history holds one of each memory-loss event.

Built with real ``git`` commits dated relative to today (so the audit's 30-day window
sees them). The timeline, day 0 being 20 days ago:

* day 0  09:00  Agent  ``backup: first``: the starter vault, a 20-line MEMORY.md, day 0's
  journal (10 lines), an old journal, a decision note, a knowledge note;
* day 1  03:00  cron   ``cron: nightly summary``: day 0's journal rewritten; 8 of its
  lines are gone (``JOURNAL_LOST``), three new ones written;
* day 2  21:00  Agent  ``backup: tidy MEMORY.md``: half of MEMORY.md deleted (10 lines);
* day 3  21:00  Agent  ``backup: clean up decisions``: the decision note deleted;
* day 4  21:00  Agent  ``backup: rename``: the knowledge note renamed (not a loss);
* day 5  21:00  Agent  ``archive: old journal``: the old journal moved into the archive
  (not a loss);
* day 6  21:00  Agent  ``backup: long AGENTS.md``: AGENTS.md over 20,000 characters;
* day 9  21:00  Agent  ``backup: trim AGENTS.md``: back under the limit (3 days over), its
  reference section moved into a procedural note (not a loss);
* day 10 21:00  Agent  ``backup: journal``: an entry appended to a new journal (not a loss).
"""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

TODAY = dt.date.today()
DAY0 = TODAY - dt.timedelta(days=20)


def day(n: int) -> str:
    return (DAY0 + dt.timedelta(days=n)).isoformat()


OLD_JOURNAL = f"memory/{(DAY0 - dt.timedelta(days=10)).isoformat()}.md"
JOURNAL = f"memory/{day(0)}.md"
LATER_JOURNAL = f"memory/{day(10)}.md"
DECISION = "memory/decisions/pricing.md"
KNOWLEDGE_OLD = "memory/semantic/deploys.md"
KNOWLEDGE_NEW = "memory/semantic/deploy-checklist.md"
REFERENCE = "memory/procedural/agents-reference.md"

JOURNAL_KEPT_HEAD = f"# {day(0)}\n"
JOURNAL_LOST = [
    "### 09:00 — Release",
    "- Deployed v1.2 to production",
    "- Smoke tests green",
    "- Rollback plan written down",
    "### 16:00 — Review",
    "- Reviewed the payment validation change",
    "- Two comments, both fixed",
    "- Merged after the second round",
]
JOURNAL_TEXT = (JOURNAL_KEPT_HEAD + "\n" + "\n".join(JOURNAL_LOST[:4]) + "\n\n"
                + "\n".join(JOURNAL_LOST[4:]) + "\n")
JOURNAL_REWRITE = (JOURNAL_KEPT_HEAD + "\n### 03:00 — Nightly summary\n"
                   "- Summary: release and review done\n- Both changes are live\n"
                   "- Next: watch the error rate\n")

MEMORY_LINES = [f"- Fact {i:02d}: the deploy window for service {i} is Tuesday" for i in
                range(1, 19)]
MEMORY_TEXT = "# MEMORY\n\n## approved_durable_entries\n" + "\n".join(MEMORY_LINES) + "\n"
MEMORY_CUT = "# MEMORY\n\n## approved_durable_entries\n" + "\n".join(MEMORY_LINES[:8]) + "\n"
MEMORY_LOST = MEMORY_LINES[8:]  # 10 non-blank lines of the 20

DECISION_TEXT = (
    "---\ndate: " + day(0) + "\ntype: decision\nstatus: active\ntags: [pricing]\n---\n"
    "# Flat pricing\n\n## Context\nCustomers asked for one simple price.\n\n"
    "## Decision\nOne flat monthly price for every plan.\n\n"
    "## Alternatives Considered\n- Per-seat pricing\n")

KNOWLEDGE_TEXT = "# Deploys\n\n- Tag the release\n- Run the smoke tests\n- Watch the error rate\n"
OLD_JOURNAL_TEXT = (f"# {OLD_JOURNAL[7:17]}\n\n### 10:00 — Setup\n- Created the workspace\n"
                    "- Wrote the first MEMORY.md\n- Installed the hooks\n")
LONG_AGENTS_EXTRA = "\n## Reference\n" + "".join(
    f"- Rule {i:04d}: keep the runbook for service {i} next to its deploy notes\n"
    for i in range(300))  # about 21,000 characters with the starter AGENTS.md

LATER_ENTRY = (f"# {day(10)}\n\n### 21:00 — Retro\n- Wrote the retro\n- Filed two follow-ups\n"
               "- Closed the sprint\n")


@dataclass
class Expected:
    kind: str
    path: str
    subject: str
    lines: int = 0
    author: str = "Agent"


EXPECTED = [  # newest first
    Expected("bootstrap-truncated", "AGENTS.md", "backup: long AGENTS.md"),
    Expected("note-deleted", DECISION, "backup: clean up decisions",
             sum(1 for line in DECISION_TEXT.splitlines() if line.strip())),
    Expected("memory-shrink", "MEMORY.md", "backup: tidy MEMORY.md", len(MEMORY_LOST)),
    Expected("journal-rewrite", JOURNAL, "cron: nightly summary", len(JOURNAL_LOST), "cron"),
]


@dataclass
class HistoryRepo:
    path: Path
    env: dict
    commits: dict[str, str] = field(default_factory=dict)  # subject -> sha

    def git(self, *args: str, check: bool = True, **kw) -> subprocess.CompletedProcess:
        proc = subprocess.run(["git", *args], cwd=self.path, env={**self.env, **kw},
                              capture_output=True, text=True)
        if check:
            assert proc.returncode == 0, f"git {args} failed: {proc.stderr}"
        return proc

    def write(self, rel: str, text: str) -> None:
        p = self.path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")

    def read(self, rel: str) -> str:
        return (self.path / rel).read_text(encoding="utf-8")

    def commit(self, subject: str, when: str, author: str = "Agent") -> str:
        stamp = f"{when} +0000"
        self.git("add", "-A")
        self.git("commit", "-q", "--no-verify", "-m", subject,
                 GIT_AUTHOR_NAME=author, GIT_AUTHOR_EMAIL=f"{author.lower()}@example.com",
                 GIT_AUTHOR_DATE=stamp, GIT_COMMITTER_DATE=stamp)
        sha = self.git("rev-parse", "HEAD").stdout.strip()
        self.commits[subject] = sha
        return sha


def git_env(extra: dict | None = None) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GIT_", "PRE_COMMIT")) and k != "SKIP"}
    env.update(GIT_AUTHOR_NAME="Agent", GIT_AUTHOR_EMAIL="agent@example.com",
               GIT_COMMITTER_NAME="Agent", GIT_COMMITTER_EMAIL="agent@example.com",
               GIT_CONFIG_NOSYSTEM="1", NO_COLOR="1")
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.update(extra or {})
    return env


def build(path: Path, env: dict | None = None) -> HistoryRepo:
    """Create the repository at ``path`` (a vault made by ``vaultkit init``)."""
    env = env or git_env()
    subprocess.run([sys.executable, "-m", "vaultkit", "init", str(path)], env=env, check=True,
                   capture_output=True)
    repo = HistoryRepo(path, env)
    repo.git("init", "-q")
    repo.git("config", "commit.gpgsign", "false")
    repo.write("MEMORY.md", MEMORY_TEXT)
    repo.write(JOURNAL, JOURNAL_TEXT)
    repo.write(OLD_JOURNAL, OLD_JOURNAL_TEXT)
    repo.write(DECISION, DECISION_TEXT)
    repo.write(KNOWLEDGE_OLD, KNOWLEDGE_TEXT)
    repo.commit("backup: first", f"{day(0)}T09:00:00")
    repo.write(JOURNAL, JOURNAL_REWRITE)
    repo.commit("cron: nightly summary", f"{day(1)}T03:00:00", author="cron")
    repo.write("MEMORY.md", MEMORY_CUT)
    repo.commit("backup: tidy MEMORY.md", f"{day(2)}T21:00:00")
    repo.git("rm", "-q", DECISION)
    repo.commit("backup: clean up decisions", f"{day(3)}T21:00:00")
    repo.git("mv", KNOWLEDGE_OLD, KNOWLEDGE_NEW)
    repo.commit("backup: rename", f"{day(4)}T21:00:00")
    repo.git("mv", OLD_JOURNAL, OLD_JOURNAL.replace("memory/", "memory/archive/"))
    repo.commit("archive: old journal", f"{day(5)}T21:00:00")
    agents = repo.read("AGENTS.md")
    repo.write("AGENTS.md", agents + LONG_AGENTS_EXTRA)
    repo.commit("backup: long AGENTS.md", f"{day(6)}T21:00:00")
    repo.write("AGENTS.md", agents)  # the reference moves into a procedural note: no loss
    repo.write(REFERENCE, "# AGENTS reference\n" + LONG_AGENTS_EXTRA)
    repo.commit("backup: trim AGENTS.md", f"{day(9)}T21:00:00")
    repo.write(LATER_JOURNAL, LATER_ENTRY)
    repo.commit("backup: journal", f"{day(10)}T21:00:00")
    return repo
