"""The git-aware rules and GitState, against real git repositories built per test."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
from pathlib import Path

import pytest

from parse_store import StoreEntry
from vaultkit.vault import gitstate
from vaultkit.cli import main
from vaultkit.lint.engine import VAULT_LEVEL_RULES, run_rules
from vaultkit.vault.gitstate import GitState, content_lines, first_change
from vaultkit.lint.rule import Context
from vaultkit.lint.rules import by_key
from vaultkit.vault.loader import load_vault

GIT_RULES = ("journal-append-only", "mass-deletion", "memory-churn")
J = "memory/2026-02-13.md"
JOURNAL = ("# 2026-02-13\n\n### 09:00 — Deploy\n- Deployed v1.2 to production\n"
           "- Smoke tests green\n"
           "- Rollback plan in memory/procedural/rollback.md\n")
MEMORY = "# MEMORY\n\n" + "".join(f"- durable fact number {i}\n" for i in range(1, 11))
DECISION = ("---\ndate: 2026-02-08\ntype: decision\nstatus: active\ntags: [community]\n---\n"
            "# Build community first\n\n## Context\nNo trust yet.\n\n## Decision\n"
            "Community first.\n")


def git_env(date: str | None = None) -> dict:
    env = dict(os.environ)
    env.update(GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@example.com", GIT_CONFIG_NOSYSTEM="1")
    env.pop("GIT_INDEX_FILE", None)
    env.pop("GIT_DIR", None)
    if date:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = date
    return env


def git(repo: Path, *args: str, date: str | None = None) -> str:
    proc = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True,
                          env=git_env(date))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def init_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "commit.gpgsign", "false")
    return path


def commit_all(repo: Path, message: str = "c", date: str | None = None) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", message, date=date)


def findings(root: Path, *, staged: bool = False, hook: bool = False, targets=None,
             rules=GIT_RULES, vault_root: Path | None = None, notices=None):
    vault = load_vault(vault_root or root, root=vault_root or root, use_cache=False)
    keys = by_key()
    ctx = Context(vault, staged=staged, hook=hook, targets=targets, notices=notices)
    return run_rules(ctx, [keys[r] for r in rules])


def brief(diags):
    return sorted((d.rule, d.path, d.line) for d in diags)


@pytest.fixture
def repo(make_vault):
    """A committed workspace vault: bootstrap files, a journal, a decision, a knowledge note."""
    root = make_vault({
        "MEMORY.md": MEMORY,
        "AGENTS.md": "# AGENTS\n\n## Memory Protocol\n- ALWAYS run memory_search first\n"
                     "- Do NOT guess\n",
        "BOOTSTRAP.md": "# BOOTSTRAP\n\nFirst run: introduce yourself.\nThen delete this file.\n",
        "NOW.md": "# NOW\n\n- Working on the release\n- Blocked on review\n- Next: docs\n",
        J: JOURNAL,
        "memory/decisions/community.md": DECISION,
        "memory/semantic/deploy.md": "# Deploy\n\n- step one\n- step two\n- step three\n",
        "memory/INDEX.md": "# Index\n\n- [[community]]\n- [[deploy]]\n- [[2026-02-13]]\n",
    })
    init_repo(root)
    commit_all(root, "first")
    return root


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8", newline="")


# -- first_change: the append-only comparison --------------------------------------------

@pytest.mark.parametrize("old,new,expected", [
    ("a\nb\n", "a\nb\n", None),
    ("a\nb\n", "a\nb\nc\n", None),  # an append
    ("a\nb", "a\nb\nc\n", None),  # HEAD without a final newline, then a new line
    ("a\nb", "a\nbc\n", None),  # printf >> onto a last line without a newline
    ("a\nb\n", "a\nb", None),  # the final newline dropped: no line changed
    ("a\r\nb\r\n", "a\nb\nc\n", None),  # CRLF -> LF is not an edit
    ("", "a\n", None),
    ("a\nb\nc\n", "a\nB\nc\n", (2, "b", "B")),  # an edited past line
    ("a\nb\nc\n", "a\nc\nb\n", (2, "b", "c")),  # reordered
    ("a\nb\nc\n", "a\n", (2, "b", None)),  # truncated
    ("a\nb\nc\n", "", (1, "a", None)),  # emptied
    ("a\nb\nc\n", "x\na\nb\nc\n", (1, "a", "x")),  # prepended
    ("a\nb\n", "a\nbc\n", (2, "b", "bc")),  # the last line had its newline: an edit
    ("a\nb \n", "a\nb\n", (2, "b ", "b")),  # trailing whitespace counts
])
def test_first_change(old, new, expected):
    assert first_change(old, new) == expected


@pytest.mark.parametrize("text,count", [
    ("", 0), ("\n\n  \n", 0), ("a\n\nb\n", 2), ("a\r\n \r\nb", 2), ("# h\n- x\n", 2),
])
def test_content_lines(text, count):
    assert content_lines(text) == count


# -- journal-append-only ------------------------------------------------------------

def test_clean_repo_has_no_git_findings(repo):
    assert findings(repo) == []
    assert findings(repo, staged=True) == []


def test_appended_journal_passes_staged_and_worktree(repo):
    with open(repo / J, "a", encoding="utf-8") as fh:
        fh.write("\n### 14:30 — Docs\n- Wrote the docs\n- Saved them\n- Linked them\n")
    assert findings(repo) == []
    git(repo, "add", J)
    assert findings(repo, staged=True) == []


def test_rewritten_journal_line_points_at_the_line(repo):
    write(repo, J, JOURNAL.replace("Smoke tests green", "Summary: a quiet day"))
    diags = findings(repo)
    assert brief(diags) == [("journal-append-only", J, 5)]
    assert "'- Smoke tests green'" in diags[0].message and "now: '- Summary: a quiet day'" in \
        diags[0].message
    assert "its content is gone, not edited" in diags[0].message
    assert f"git show HEAD:{J}" in diags[0].message
    assert f"VAULTKIT_ACCEPT_DELETION={J} git commit" in diags[0].message
    assert diags[0].severity == "error"


@pytest.mark.parametrize("edited", [
    JOURNAL.replace("Smoke tests green", "Smoke tests red"),  # a word corrected
    JOURNAL.replace("v1.2", "v1.3"),  # a version corrected
    JOURNAL.replace("Rollback plan in", "Rollback plan is in"),  # a word added
    JOURNAL.replace("- Smoke tests green\n", "- Smoke tests green, all 212 of them\n"),
    JOURNAL.replace("### 09:00 — Deploy", "### 09:30 — Deploy"),  # the time corrected
])
def test_an_edit_of_a_committed_journal_line_is_not_refused(repo, edited):
    """The model of loss: a correction that keeps most of a line is an edit, never refused
    (docs/snapshots.md), in the work tree and staged alike."""
    assert edited != JOURNAL
    write(repo, J, edited)
    assert findings(repo) == []
    git(repo, "add", J)
    assert findings(repo, staged=True) == []


@pytest.mark.parametrize("rewritten,line", [
    (JOURNAL.replace("- Deployed v1.2 to production", "- Deployed v1.3"), 4),  # cut to 2 words
    (JOURNAL.replace("- Smoke tests green\n", ""), 5),  # a line cut from the middle
    (JOURNAL.replace("### 09:00 — Deploy\n- Deployed v1.2 to production\n- Smoke tests green\n"
                     "- Rollback plan in memory/procedural/rollback.md\n",
                     "### 18:00 — Summary\n- A deploy day\n"), 3),  # the entry summarised
])
def test_a_committed_journal_line_whose_content_is_gone_is_refused(repo, rewritten, line):
    write(repo, J, rewritten)
    git(repo, "add", J)
    diags = findings(repo, staged=True)
    assert brief(diags) == [("journal-append-only", J, line)]
    assert diags[0].severity == "error"


def test_an_accepted_removal_of_committed_journal_lines_passes(repo, monkeypatch):
    write(repo, J, JOURNAL.replace("- Smoke tests green\n", ""))
    git(repo, "add", J)
    monkeypatch.setenv("VAULTKIT_ACCEPT_DELETION", J)
    assert findings(repo, staged=True) == []


def test_staged_compares_the_index_not_the_worktree(repo):
    cut = JOURNAL.replace("v1.2 to production", "a summary of the day")
    write(repo, J, cut)
    git(repo, "add", J)
    write(repo, J, cut.replace("a summary", "the summary"))  # the work tree lacks it too
    diags = findings(repo, staged=True)
    assert brief(diags) == [("journal-append-only", J, 4)]
    assert "staged: '- Deployed a summary of the day'" in diags[0].message
    assert "now: '- Deployed the summary of the day'" in findings(repo)[0].message


def test_a_committed_line_the_work_tree_still_holds_is_not_lost(repo):
    """Partial staging: the index lacks a committed line the work tree keeps (an older
    version staged); git moved it on purpose and nothing is lost."""
    write(repo, J, JOURNAL.replace("v1.2 to production", "a summary of the day"))
    git(repo, "add", J)
    write(repo, J, JOURNAL + "- and one more line\n")
    assert findings(repo) == []
    assert findings(repo, staged=True) == []


def test_unstaged_edit_is_not_what_gets_committed(repo):
    git(repo, "add", J)
    write(repo, J, JOURNAL.replace("v1.2 to production", "a summary of the day"))  # not staged
    assert findings(repo, staged=True) == []
    assert brief(findings(repo)) == [("journal-append-only", J, 4)]


def test_truncated_journal_reports_the_first_missing_line(repo):
    write(repo, J, JOURNAL.split("- Smoke")[0])
    diags = findings(repo)
    assert brief(diags) == [("journal-append-only", J, 5)]
    assert "2 committed lines removed from line 5 on" in diags[0].message


def test_deleted_journal_counts(repo):
    (repo / J).unlink()
    diags = findings(repo)
    assert brief(diags) == [("journal-append-only", J, None)]
    assert f"git checkout HEAD -- {J}" in diags[0].message
    git(repo, "rm", "-q", "--cached", J)  # staged deletion, file still on disk
    write(repo, J, JOURNAL)
    assert brief(findings(repo, staged=True)) == [("journal-append-only", J, None)]


def test_journal_moved_into_archive_is_not_a_deletion(repo):
    (repo / "memory/archive").mkdir()
    git(repo, "mv", J, "memory/archive/2026-02-13.md")
    assert findings(repo, staged=True) == []
    assert findings(repo) == []


def test_journal_moved_into_archive_keeps_its_lines(repo):
    (repo / "memory/archive").mkdir()
    git(repo, "mv", J, "memory/archive/2026-02-13.md")
    write(repo, "memory/archive/2026-02-13.md", JOURNAL.replace("v1.2 to production", "a summary of the day"))
    git(repo, "add", "-A")
    diags = findings(repo, staged=True)
    assert brief(diags) == [("journal-append-only", "memory/archive/2026-02-13.md", 4)]
    assert f"moved from {J}" in diags[0].message


def test_journal_moved_out_of_the_journal_counts(repo):
    (repo / ".trash").mkdir()
    git(repo, "mv", J, ".trash/2026-02-13.md")
    diags = findings(repo, staged=True)
    assert brief(diags) == [("journal-append-only", ".trash/2026-02-13.md", None)]
    assert "out of the journal and the archive" in diags[0].message


def test_new_journal_and_untracked_files_are_not_compared(repo):
    write(repo, "memory/2026-02-14.md", "# 2026-02-14\n")
    write(repo, "memory/semantic/new.md", "# New\n")
    assert findings(repo) == []
    git(repo, "add", "memory/2026-02-14.md")
    assert findings(repo, staged=True) == []


def test_crlf_and_missing_final_newline_are_tolerated(repo):
    write(repo, "memory/2026-02-15.md", "# 2026-02-15\r\n\r\n### 10:00 — A\r\n- one")
    commit_all(repo)
    write(repo, "memory/2026-02-15.md", "# 2026-02-15\n\n### 10:00 — A\n- one\n- two\n")
    assert findings(repo) == []


def test_bom_is_not_an_edit(repo):
    write(repo, "memory/2026-02-16.md", "\ufeff# 2026-02-16\n- a\n")
    commit_all(repo)
    write(repo, "memory/2026-02-16.md", "# 2026-02-16\n- a\n- b\n")
    assert findings(repo) == []


# -- mass-deletion ---------------------------------------------------------------------

def lines_of(n: int) -> str:
    return "# MEMORY\n\n" + "".join(f"- durable fact number {i}\n" for i in range(1, n))


def topic_of(n: int) -> str:
    return "# Deploys\n\n" + "".join(f"- deploy step number {i}\n" for i in range(1, n))


@pytest.mark.parametrize("kept,reported", [
    (11, False),  # unchanged (11 non-blank lines)
    (7, False),  # lost 4 of 11
    (6, False),  # lost 5 of 11: less than half
    (5, True),  # lost 6 of 11: more than half
    (1, True),
])
def test_mass_deletion_threshold(repo, kept, reported):
    write(repo, "memory/semantic/deploys.md", topic_of(11))
    commit_all(repo)
    write(repo, "memory/semantic/deploys.md", topic_of(kept))
    got = brief(findings(repo))
    assert got == ([("mass-deletion", "memory/semantic/deploys.md", 1)] if reported else [])


@pytest.mark.parametrize("kept,reported", [
    (11, False),  # unchanged (11 durable lines: the allowance is 2, a quarter rounded down)
    (10, False),  # 1 pruned
    (9, False),  # 2 pruned: within the allowance
    (8, True),  # 3 dropped: past it
    (1, True),
])
def test_memory_md_pruning_allowance(repo, kept, reported):
    write(repo, "MEMORY.md", lines_of(kept))
    got = brief(findings(repo))
    assert got == ([("mass-deletion", "MEMORY.md", 1)] if reported else [])


CURATED = "# MEMORY\n\n" + "".join(
    f"- {who} prefers {what}\n" for who, what in [
        ("Ana", "tea"), ("Bo", "short standups"), ("Cy", "dark mode"), ("Di", "Rust"),
        ("Ed", "morning deploys"), ("Fa", "written specs"), ("Gu", "pairing"),
        ("Ha", "Postgres"), ("Io", "small PRs"), ("Jo", "async reviews")])


def test_memory_md_consolidation_cut_past_the_allowance_is_refused(repo, monkeypatch):
    # a dreaming-style rewrite keeps 6 of 10 curated lines: 40% gone, nowhere else
    write(repo, "MEMORY.md", CURATED)
    commit_all(repo)
    kept = CURATED.splitlines(keepends=True)
    write(repo, "MEMORY.md", "".join(kept[:2] + kept[6:]))
    diags = findings(repo)
    assert brief(diags) == [("mass-deletion", "MEMORY.md", 1)]
    msg = diags[0].message
    assert ('dropped 4 of its 11 durable lines against HEAD, not moved into another note '
            '("- Ana prefers tea", "- Bo prefers short standups", "- Cy prefers dark mode" '
            "and 1 more); the pruning allowance is 2 lines (25% of them, the openclaw "
            "profile's git: memory_md_prune_ratio; no openclaw.json sets OpenClaw's "
            "maxPriorEntryLossFraction)") in msg
    assert "VAULTKIT_ACCEPT_DELETION=MEMORY.md git commit" in msg
    # the way out: accepted for one commit
    monkeypatch.setenv("VAULTKIT_ACCEPT_DELETION", "MEMORY.md")
    assert findings(repo) == []
    monkeypatch.delenv("VAULTKIT_ACCEPT_DELETION")
    # the owner's vaultkit.toml sets the share: named as the source; more lets it pass
    write(repo, "vaultkit.toml", "[git]\nmemory-md-prune-ratio = 0.3\n")
    [diag] = findings(repo)
    assert ("the pruning allowance is 3 lines (30% of them, vaultkit.toml [git] "
            "memory-md-prune-ratio)") in diag.message
    write(repo, "vaultkit.toml", "[git]\nmemory-md-prune-ratio = 0.4\n")
    assert findings(repo) == []


def test_memory_md_dropped_lines_are_named_with_credentials_masked(repo):
    token = "ghp_R8x2Kq9LmZ4vT7wN1pY6sB3dF5hJ0cXeVuA2"
    write(repo, "MEMORY.md", CURATED.replace("- Ana prefers tea\n",
                                             f"- deploy token {token}\n"))
    commit_all(repo)
    write(repo, "MEMORY.md", "# MEMORY\n\n- Jo prefers async reviews\n")
    [diag] = findings(repo, rules=("mass-deletion",))
    assert token not in diag.message and '"- deploy token ghp_' in diag.message


def test_memory_md_prune_within_the_allowance_passes(repo):
    write(repo, "MEMORY.md", CURATED)
    commit_all(repo)
    write(repo, "MEMORY.md", CURATED.replace("- Jo prefers async reviews\n", ""))  # 10%
    assert findings(repo) == []


def _openclaw_fraction(tmp_path, monkeypatch, value) -> Path:
    config = tmp_path / "oc" / "openclaw.json"
    config.parent.mkdir(exist_ok=True)
    config.write_text("{ plugins: { entries: { 'memory-core': { config: { dreaming: "
                      "{ phases: { deep: { maxPriorEntryLossFraction: %s } } } } } } } }\n"
                      % value)
    monkeypatch.setenv("OPENCLAW_CONFIG_PATH", str(config))
    return config


def test_openclaws_own_loss_fraction_is_the_allowance_when_set(repo, tmp_path, monkeypatch):
    """OpenClaw bounds a dreaming rewrite by `phases.deep.maxPriorEntryLossFraction`: the
    hook reads it from openclaw.json and names it; vaultkit.toml still comes first."""
    write(repo, "MEMORY.md", CURATED)
    commit_all(repo)
    kept = CURATED.splitlines(keepends=True)
    write(repo, "MEMORY.md", "".join(kept[:2] + kept[6:]))  # 40% cut
    config = _openclaw_fraction(tmp_path, monkeypatch, 0.1)
    [diag] = findings(repo)
    assert ("the pruning allowance is 1 line (10% of them, " f"{config}: plugins.entries."
            "memory-core.config.dreaming.phases.deep.maxPriorEntryLossFraction)") in diag.message
    _openclaw_fraction(tmp_path, monkeypatch, 0.5)
    assert findings(repo) == []  # OpenClaw itself would keep such a rewrite
    write(repo, "vaultkit.toml", "[git]\nmemory-md-prune-ratio = 0.25\n")
    [diag] = findings(repo)
    assert "vaultkit.toml [git] memory-md-prune-ratio" in diag.message


def test_the_default_fraction_refuses_a_40_percent_cut_and_passes_a_10_percent_prune(
        repo, tmp_path, monkeypatch):
    _openclaw_fraction(tmp_path, monkeypatch, "'a quarter'")  # unusable: the profile's 0.25
    write(repo, "MEMORY.md", CURATED)
    commit_all(repo)
    write(repo, "MEMORY.md", CURATED.replace("- Jo prefers async reviews\n", ""))  # 10%
    assert findings(repo) == []
    kept = CURATED.splitlines(keepends=True)
    write(repo, "MEMORY.md", "".join(kept[:2] + kept[6:]))  # 40%
    [diag] = findings(repo)
    assert "(25% of them, the openclaw profile's git: memory_md_prune_ratio" in diag.message


def test_memory_md_lines_moved_into_a_topic_note_do_not_count(repo):
    write(repo, "MEMORY.md", CURATED)
    commit_all(repo)
    kept = CURATED.splitlines(keepends=True)
    write(repo, "MEMORY.md", "".join(kept[:2] + kept[8:]))  # 6 of 10 lines gone
    # five of them distilled into a topic note in the same change: one dropped
    write(repo, "memory/people/team.md", "# Team\n\n" + "".join(kept[2:7]))
    git(repo, "add", "-A")
    only = ("mass-deletion",)
    assert findings(repo, staged=True, rules=only) == []
    write(repo, "memory/people/team.md", "# Team\n\n" + "".join(kept[2:4]))  # 4 dropped
    git(repo, "add", "-A")
    assert brief(findings(repo, staged=True, rules=only)) == [("mass-deletion", "MEMORY.md", 1)]


def test_mass_deletion_exactly_half_is_reported(repo):
    write(repo, "memory/semantic/deploy.md", "# Deploy\n\n- step one\n- step two\n- three\n")
    commit_all(repo)
    write(repo, "memory/semantic/deploy.md", "# Deploy\n- step one\n- three\n")  # 1 of 4
    assert findings(repo) == []
    write(repo, "memory/semantic/deploy.md", "# Deploy\n- step one\n")  # 2 of 4 lost: half
    assert brief(findings(repo)) == [("mass-deletion", "memory/semantic/deploy.md", 1)]


def test_mass_deletion_message_and_ratio_from_config(repo):
    write(repo, "memory/semantic/deploys.md", topic_of(11))
    commit_all(repo)
    write(repo, "memory/semantic/deploys.md", topic_of(5))
    diags = findings(repo)
    assert ("lost 6 of its 11 non-blank lines against HEAD (54%; the profile allows less "
            "than 50%)") in diags[0].message
    write(repo, "vaultkit.toml", "[git]\nmass-deletion-ratio = 0.6\n")
    assert findings(repo) == []


def test_emptied_file(repo):
    write(repo, "AGENTS.md", "\n\n")
    diags = findings(repo)
    assert brief(diags) == [("mass-deletion", "AGENTS.md", 1)]
    assert diags[0].message.startswith("emptied")


@pytest.mark.parametrize("rel", ["memory/decisions/community.md", "memory/semantic/deploy.md",
                                 "AGENTS.md"])
def test_deleted_memory_files(repo, rel):
    (repo / rel).unlink()
    diags = findings(repo)
    assert brief(diags) == [("mass-deletion", rel, None)]
    assert diags[0].message.startswith("deleted (it had")


def test_exempt_and_index_and_journal_are_not_mass_deletion(repo):
    (repo / "BOOTSTRAP.md").unlink()  # the runtime's one-time ritual: meant to be deleted
    write(repo, "NOW.md", "# NOW\n")  # the status board: rewritten every heartbeat
    write(repo, "memory/INDEX.md", "# Index\n")  # generated
    assert findings(repo, rules=("mass-deletion",)) == []
    (repo / J).unlink()  # journals: journal-append-only's business
    assert findings(repo, rules=("mass-deletion",)) == []


def test_move_to_obsidian_trash_counts_as_deletion(repo):
    (repo / ".trash").mkdir()
    git(repo, "mv", "memory/decisions/community.md", ".trash/community.md")
    diags = findings(repo, staged=True)
    assert brief(diags) == [("mass-deletion", "memory/decisions/community.md", None)]
    assert "moved to .trash/community.md" in diags[0].message


def test_renamed_note_is_compared_with_its_old_version(repo):
    git(repo, "mv", "memory/decisions/community.md", "memory/decisions/community-first.md")
    assert findings(repo, staged=True) == []
    para = "A long paragraph of context that carries most of the bytes. " * 40 + "\n"
    long = DECISION + para + "".join(f"- c{i}\n" for i in range(20))
    write(repo, "memory/decisions/community-first.md", long)
    commit_all(repo)
    # renamed and cut to 12 of 32 lines: git still sees the rename (the kept part is most
    # of the bytes)
    git(repo, "mv", "memory/decisions/community-first.md", "memory/decisions/community2.md")
    write(repo, "memory/decisions/community2.md", DECISION + para)
    git(repo, "add", "-A")
    state = GitState(load_vault(repo, root=repo, use_cache=False), staged=True)
    assert [(c.status, c.old, c.new) for c in state.changes] == [
        ("R", "memory/decisions/community-first.md", "memory/decisions/community2.md")]
    diags = findings(repo, staged=True)
    assert brief(diags) == [("mass-deletion", "memory/decisions/community2.md", 1)]
    assert "lost 20 of its 32 non-blank lines" in diags[0].message
    assert "moved from memory/decisions/community-first.md" in diags[0].message


# -- memory-churn -------------------------------------------------------------------------

def days_ago(n: int, hour: int) -> str:
    day = dt.date.today() - dt.timedelta(days=n)
    return f"{day.isoformat()}T{hour:02d}:00:00+00:00"


def append_memory(root: Path, text: str) -> None:
    with open(root / "MEMORY.md", "a", encoding="utf-8") as fh:
        fh.write(text)


def test_memory_churn_two_commits_one_day(repo):
    append_memory(repo, "- fact a\n")
    commit_all(repo, date=days_ago(3, 9))
    assert findings(repo) == []  # the first commit is from now, this one from 3 days ago
    append_memory(repo, "- fact b\n")
    commit_all(repo, date=days_ago(3, 15))
    diags = findings(repo)
    day = (dt.date.today() - dt.timedelta(days=3)).isoformat()
    assert brief(diags) == [("memory-churn", "MEMORY.md", 1)]
    assert f"{day} (2 commits)" in diags[0].message and diags[0].severity == "warning"


def test_memory_churn_outside_the_window_is_quiet(make_vault):
    root = make_vault({"MEMORY.md": MEMORY})
    init_repo(root)
    commit_all(root, date=days_ago(30, 8))
    for hour in (9, 10, 11):
        append_memory(root, f"- fact {hour}\n")
        commit_all(root, date=days_ago(20, hour))
    assert findings(root) == []
    write(root, "vaultkit.toml", "[git]\nchurn-days = 25\n")
    diags = findings(root)
    assert "(3 commits)" in diags[0].message


def test_memory_churn_counts_the_commit_being_made(make_vault):
    root = make_vault({"MEMORY.md": MEMORY, "memory/2026-02-13.md": JOURNAL})
    init_repo(root)
    commit_all(root, date=days_ago(5, 8))
    append_memory(root, "- fact a\n")
    commit_all(root)  # today
    append_memory(root, "- fact b\n")
    assert findings(root) == []
    git(root, "add", "MEMORY.md")
    diags = findings(root, staged=True)
    assert f"{dt.date.today().isoformat()} (2 commits)" in diags[0].message


def _promotion(n: int) -> str:
    return (f"\n## Promoted From Short-Term Memory (2026-12-0{n})\n\n"
            f"<!-- openclaw-memory-promotion:memory:memory/2026-12-0{n}.md:5:5 -->\n"
            f"- Promoted fact number {n} about the shop's winter service. [score=0.842 "
            f"recalls=4 avg=0.710 source=memory/2026-12-0{n}.md:5-5]\n")


def test_memory_churn_leaves_dreamings_promotions_alone(make_vault):
    """OpenClaw's dreaming appends a promoted section on each sweep (several a day with a
    shorter `dreaming.frequency`); the backup commits each: no churn. The agent's own
    edits still count, and so does the commit being made."""
    root = make_vault({"MEMORY.md": MEMORY})
    init_repo(root)
    commit_all(root, date=days_ago(6, 8))
    for n, hour in ((1, 3), (2, 9), (3, 15)):
        append_memory(root, _promotion(n))
        commit_all(root, date=days_ago(4, hour))
    append_memory(root, "- fact the agent wrote itself\n")
    commit_all(root, date=days_ago(4, 18))  # one change of its own that day
    assert findings(root) == []
    append_memory(root, "- a second fact the same day\n")
    commit_all(root, date=days_ago(4, 20))
    assert "(2 commits)" in findings(root)[0].message
    # the commit being made: a promotion on top of today's own edit is no second change
    append_memory(root, "- fact written today\n")
    commit_all(root)
    append_memory(root, _promotion(4))
    git(root, "add", "MEMORY.md")
    today = dt.date.today().isoformat()
    assert not [d for d in findings(root, staged=True) if today in d.message]


def test_memory_churn_ignores_other_files(make_vault):
    root = make_vault({"MEMORY.md": MEMORY, "NOW.md": "# NOW\n"})
    init_repo(root)
    commit_all(root)
    for i in range(3):
        write(root, "NOW.md", f"# NOW\n- state {i}\n")
        commit_all(root)
    assert findings(root) == []


# -- no repository, no HEAD, subfolders, memory-only --------------------------------------

def test_not_a_git_repo_says_once_that_the_rules_were_skipped(make_vault, capsys):
    """Once per vault for whoever holds the notices (a command over its runs, a
    workspace), each of the three git rules asking; never for a quiet one."""
    root = make_vault({"MEMORY.md": MEMORY, J: JOURNAL})
    notices = gitstate.Notices()
    assert findings(root, notices=notices) == []
    assert findings(root, staged=True, notices=notices) == []
    err = capsys.readouterr().err
    assert err.count("git rules") == 1
    assert "skipped" in err and "not in a git repository" in err
    assert findings(root) == [] and capsys.readouterr().err.count("git rules") == 1
    assert findings(root, notices=gitstate.Notices(quiet=True)) == []
    assert capsys.readouterr().err == ""


def test_a_git_rules_notice_is_the_callers_not_the_process(make_vault, capsys, monkeypatch):
    """Nothing of the notice is process-wide: `check -q` says nothing, and the next
    `check` in the same process (an editor's, a test's) says it again."""
    root = make_vault({"MEMORY.md": MEMORY, J: JOURNAL})
    monkeypatch.chdir(root)
    for quiet, said in ((True, 0), (False, 1), (False, 1), (True, 0)):
        argv = ["check", "--no-cache", "--select", ",".join(GIT_RULES)] + ["-q"] * quiet
        assert main(argv) == 0
        assert capsys.readouterr().err.count("info: git rules") == said


def test_check_cli_outside_git_prints_one_info_line(make_vault, capsys, monkeypatch):
    root = make_vault({"MEMORY.md": MEMORY, J: JOURNAL})
    monkeypatch.chdir(root)
    assert main(["check", "--no-cache", "--select", ",".join(GIT_RULES)]) == 0
    out, err = capsys.readouterr()
    assert out.strip() == "All checks passed!"
    assert len(err.strip().splitlines()) == 1 and err.startswith("vaultkit: info: git rules")


def test_first_commit_has_nothing_to_compare(make_vault, capsys):
    root = make_vault({"MEMORY.md": MEMORY, J: JOURNAL})
    init_repo(root)
    git(root, "add", "-A")
    state = GitState(load_vault(root, root=root, use_cache=False), staged=True)
    assert state.available and not state.has_head and state.changes == []
    assert findings(root, staged=True) == []
    assert capsys.readouterr().err == ""


def test_vault_in_a_subfolder_of_the_repo(tmp_path):
    top = init_repo(tmp_path / "repo")
    (top / "README.md").write_text("# code\n")
    vault = top / "agent" / "workspace"
    for rel, text in {"MEMORY.md": MEMORY, J: JOURNAL, ".obsidian/app.json": "{}"}.items():
        write(vault, rel, text)
    commit_all(top)
    write(vault, J, JOURNAL.replace("v1.2 to production", "a summary of the day"))
    (top / "README.md").unlink()  # outside the vault: none of its business
    diags = findings(vault)
    assert brief(diags) == [("journal-append-only", J, 4)]
    assert f"git show HEAD:agent/workspace/{J}" in diags[0].message
    state = GitState(load_vault(vault, root=vault, use_cache=False))
    assert state.prefix == "agent/workspace/"
    assert [c.old for c in state.changes] == [J]
    git(top, "add", "-A")
    assert brief(findings(vault, staged=True)) == [("journal-append-only", J, 4)]


def test_memory_only_repo(tmp_path):
    """The repo is memory/ itself; the bootstrap files one level up are outside git."""
    workspace = tmp_path / "ws"
    write(workspace, "MEMORY.md", MEMORY)
    mem = workspace / "memory"
    write(mem, "2026-02-13.md", JOURNAL)
    write(mem, "decisions/community.md", DECISION)
    write(mem, "vaultkit.toml", 'memory-dir = "."\n')
    init_repo(mem)
    commit_all(mem)
    write(workspace, "MEMORY.md", "# MEMORY\n")  # outside the repo: nothing to compare
    write(mem, "2026-02-13.md", JOURNAL.replace("v1.2 to production", "a summary of the day"))
    (mem / "decisions/community.md").unlink()
    diags = findings(mem)
    assert brief(diags) == [("journal-append-only", "2026-02-13.md", 4),
                            ("mass-deletion", "decisions/community.md", None)]


def test_memory_only_vault_inside_a_workspace_repo(tmp_path):
    """The vault root is memory/ (memory-dir "."), the repo is the whole workspace: the
    bootstrap files above the vault are in git and compared as ../NAME.md."""
    workspace = init_repo(tmp_path / "ws")
    write(workspace, "MEMORY.md", MEMORY)
    mem = workspace / "memory"
    write(mem, "2026-02-13.md", JOURNAL)
    write(mem, "vaultkit.toml", 'memory-dir = "."\n')
    commit_all(workspace, date=days_ago(2, 8))
    append_memory(workspace, "- x\n")
    commit_all(workspace, date=days_ago(2, 9))
    append_memory(workspace, "- y\n")
    commit_all(workspace, date=days_ago(2, 10))
    write(workspace, "MEMORY.md", "# MEMORY\n- one\n")
    diags = findings(mem, vault_root=mem)
    assert brief(diags) == [("mass-deletion", "../MEMORY.md", 1),
                            ("memory-churn", "../MEMORY.md", 1)]
    assert "git show HEAD:MEMORY.md" in diags[0].message


# -- hook mode: the given files plus vault-level findings -------------------------------

def test_git_rules_are_vault_level():
    assert set(GIT_RULES) <= VAULT_LEVEL_RULES
    keys = by_key()
    assert {keys[r].scope for r in GIT_RULES} == {"vault"}
    assert [keys[r].code for r in GIT_RULES] == ["VK601", "VK602", "VK603"]
    assert [keys[r].severity for r in GIT_RULES] == ["error", "error", "warning"]


def test_hook_mode_reports_deletions_of_files_not_passed(repo):
    git(repo, "rm", "-q", J, "memory/decisions/community.md")
    diags = findings(repo, hook=True, targets=set())
    assert brief(diags) == [("journal-append-only", J, None),
                            ("mass-deletion", "memory/decisions/community.md", None)]


def hook_cli(repo, monkeypatch, capsys, *args):
    monkeypatch.chdir(repo)
    code = main(["check", "--hook", "--no-cache", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_hook_cli_without_file_names_sees_staged_deletions(repo, monkeypatch, capsys):
    git(repo, "rm", "-q", J)
    code, out, _ = hook_cli(repo, monkeypatch, capsys, "--select", ",".join(GIT_RULES))
    assert code == 1
    assert f"{J}:1:1: VK601 journal-append-only error: journal deleted" in out


def test_hook_cli_uses_the_index_and_reports_file_and_line(repo, monkeypatch, capsys):
    write(repo, J, JOURNAL.replace("Smoke tests green", "Summary: a quiet day"))
    git(repo, "add", J)
    # hook mode reads the staged version, not this (which lacks the line too)
    write(repo, J, JOURNAL.replace("- Smoke tests green\n", ""))
    code, out, _ = hook_cli(repo, monkeypatch, capsys, J)
    assert code == 1
    assert f"{J}:5:1: VK601 journal-append-only error: line 5 differs" in out
    assert "staged: '- Summary: a quiet day'" in out


def test_hook_cli_passed_files_outside_the_vault_are_quiet(tmp_path, monkeypatch, capsys):
    top = init_repo(tmp_path / "repo")
    vault = top / "vault"
    write(vault, "MEMORY.md", MEMORY)
    write(vault, ".obsidian/app.json", "{}")
    write(top, "README.md", "# code\n")
    commit_all(top)
    monkeypatch.chdir(top)
    code = main(["check", "--hook", "--no-cache", "--root", "vault", "--select",
                 ",".join(GIT_RULES), "README.md", "vault/MEMORY.md"])
    out, err = capsys.readouterr()
    assert code == 0 and "outside the vault" not in err


def test_hook_cli_warnings_do_not_fail(repo, monkeypatch, capsys):
    append_memory(repo, "- a\n")
    commit_all(repo)
    append_memory(repo, "- b\n")
    git(repo, "add", "MEMORY.md")
    code, out, _ = hook_cli(repo, monkeypatch, capsys, "MEMORY.md", "--select",
                            ",".join(GIT_RULES))
    assert code == 0
    assert "VK603 memory-churn" in out


def test_json_output_of_a_deletion(repo, monkeypatch, capsys):
    import json

    git(repo, "rm", "-q", J)
    code, out, _ = hook_cli(repo, monkeypatch, capsys, "--select", "VK6", "--format", "json")
    data = json.loads(out)
    assert code == 1
    assert data == [{"rule": "journal-append-only", "code": "VK601", "severity": "error",
                     "path": J, "line": None, "column": None, "message": data[0]["message"],
                     "fixable": False}]


# -- few processes, whatever the number of files --------------------------------------------

def test_git_process_count_does_not_grow_with_files(make_vault, monkeypatch):
    files = {f"memory/2026-01-{d:02d}.md": f"# 2026-01-{d:02d}\n- a\n- b\n" for d in range(1, 29)}
    files.update({f"memory/semantic/n{i}.md": "# n\n- a\n- b\n- c\n" for i in range(40)})
    files["MEMORY.md"] = MEMORY
    root = make_vault(files)
    init_repo(root)
    commit_all(root)
    for rel in files:
        write(root, rel, "# x\n")
    git(root, "add", "-A")
    calls = []
    real_run = subprocess.run

    def counting(cmd, *a, **kw):
        if cmd and cmd[0] == "git":
            calls.append(cmd)
        return real_run(cmd, *a, **kw)

    monkeypatch.setattr(gitstate.subprocess, "run", counting)
    diags = findings(root, staged=True)
    assert sum(d.rule == "journal-append-only" for d in diags) == 28
    assert sum(d.rule == "mass-deletion" for d in diags) == 41
    verbs = [next(a for a in c[1:] if not a.startswith("-") and "=" not in a) for c in calls]
    # (the second log: the stash's reflog, read once, as a stash may hold the lines)
    assert sorted(verbs) == ["cat-file", "diff", "log", "log", "rev-parse"]


def test_paths_with_spaces_and_unicode(repo):
    rel = "memory/semantic/Café notes – 2026.md"
    write(repo, rel, "# Café\n\n- un\n- deux\n- trois\n- quatre\n")
    commit_all(repo)
    write(repo, rel, "# Café\n")
    assert brief(findings(repo)) == [("mass-deletion", rel, 1)]
    (repo / rel).unlink()
    git(repo, "add", "-A")
    assert brief(findings(repo, staged=True)) == [("mass-deletion", rel, None)]


def test_workspace_vault_with_a_memory_only_repo_below(make_vault):
    """The seeds' backup (`cd memory && git commit`) seen from the workspace vault: the
    repository is memory/, the vault root is the workspace above it."""
    root = make_vault({"MEMORY.md": MEMORY, J: JOURNAL, "memory/decisions/community.md": DECISION})
    mem = init_repo(root / "memory")
    commit_all(mem)
    write(root, J, JOURNAL.replace("v1.2 to production", "a summary of the day"))
    (root / "memory/decisions/community.md").unlink()
    write(root, "MEMORY.md", "# MEMORY\n")  # outside the repository: not guarded
    state = GitState(load_vault(root, root=root, use_cache=False))
    assert state.available and state.down == "memory/"
    assert state.repo_path(J) == "2026-02-13.md" and state.repo_path("MEMORY.md") is None
    assert brief(findings(root)) == [("journal-append-only", J, 4),
                                     ("mass-deletion", "memory/decisions/community.md", None)]


def test_failing_git_diff_skips_with_one_notice(repo, monkeypatch, capsys):
    real = GitState._run

    def broken(self, args, **kw):
        if args[0] == "diff":
            return subprocess.CompletedProcess(args, 128, b"", b"fatal: bad object HEAD\n")
        return real(self, args, **kw)

    monkeypatch.setattr(GitState, "_run", broken)
    (repo / J).unlink()
    assert findings(repo) == []
    err = capsys.readouterr().err
    assert err.count("vaultkit: info: git rules") == 1 and "bad object HEAD" in err


def test_journal_moved_to_archive_without_git_mv(repo):
    """A plain `mv` (untracked copy) or a move with an appended line that git does not
    pair up as a rename: the archive copy keeps every committed line, so no deletion."""
    (repo / "memory/archive/2026").mkdir(parents=True)
    (repo / J).rename(repo / "memory/archive/2026/2026-02-13.md")
    assert findings(repo) == []  # working tree: the copy is untracked
    git(repo, "add", "-A")
    assert findings(repo, staged=True) == []


def test_journal_moved_and_rewritten_is_still_reported(repo):
    (repo / "memory/archive").mkdir()
    (repo / J).unlink()
    # a copy so different that git sees a deletion and an addition
    write(repo, "memory/archive/2026-02-13.md", "# 2026-02-13\n\n- summary only\n")
    assert brief(findings(repo)) == [("journal-append-only", J, None)]
    git(repo, "add", "-A")
    state = GitState(load_vault(repo, root=repo, use_cache=False), staged=True)
    assert sorted(c.status for c in state.changes) == ["A", "D"]
    assert brief(findings(repo, staged=True)) == [("journal-append-only", J, None)]


def test_archived_copy_with_appended_lines_unpaired_by_git(repo):
    (repo / "memory/archive").mkdir()
    (repo / J).unlink()
    tail = "".join(f"\n### 1{i}:00 — More\n- line a {i}\n- line b {i}\n- line c {i}\n"
                   for i in range(8))
    write(repo, "memory/archive/2026-02-13.md", JOURNAL + tail)
    git(repo, "add", "-A")
    state = GitState(load_vault(repo, root=repo, use_cache=False), staged=True)
    assert sorted(c.status for c in state.changes) == ["A", "D"]  # too different for -M
    assert findings(repo, staged=True) == []


TOPIC = ("# Homelab\n\n- NAS at 10.0.0.5, backups nightly\n- Router: OpenWrt, admin over ssh\n"
         "- UPS shuts the NAS down after 10 minutes\n")


@pytest.mark.parametrize("rel", ["memory/homelab.md", "memory/research/vector-dbs.md",
                                 "memory/2026-03-22-weekly-review.md"])
def test_deleting_a_topic_note_is_refused_like_a_decision(repo, monkeypatch, capsys, rel):
    """memory/homelab.md is how OpenClaw workspaces keep topics: deleting it loses memory."""
    write(repo, rel, TOPIC)
    commit_all(repo, "topic")
    git(repo, "rm", "-q", rel)
    code, out, _ = hook_cli(repo, monkeypatch, capsys, "--select", ",".join(GIT_RULES))
    assert code == 1
    assert f"{rel}:1:1: VK602 mass-deletion error: deleted (it had 4 non-blank lines)" in out



# -- the diff memo: a warm check reuses git's diff while nothing it reads changed ---------

LOST = "# 2026-02-13\n\n### 09:00 — Deploy\n- Deployed v1.3\n"  # a committed line rewritten


def warm_check(root: Path, capsys, monkeypatch, *extra):
    """``check --format json`` of the git rules (with the cache): the findings, and whether
    git was asked for its diff."""
    import json

    asked = []
    real = GitState._run

    def spy(self, args, **kw):
        asked.append(args[0])
        return real(self, args, **kw)

    monkeypatch.setattr(GitState, "_run", spy)
    code = main(["check", str(root), "--format", "json", "--select",
                 "journal-append-only,mass-deletion", *extra])
    out = capsys.readouterr().out
    monkeypatch.setattr(GitState, "_run", real)
    return code, brief_json(out), "diff" in asked


def brief_json(out: str):
    import json

    return sorted((d["rule"], d["path"], d["line"], d["message"]) for d in json.loads(out))


def settle(repo: Path) -> None:
    """Every file older than the caches' racy margin, and the index's stat data refreshed
    (as a `git status` leaves it)."""
    from vault_files import age_files

    age_files(repo)
    git(repo, "update-index", "-q", "--refresh")


@pytest.fixture
def rewritten(repo):
    """The repo with its committed journal rewritten in the working tree, settled."""
    write(repo, J, LOST)
    settle(repo)
    return repo


def test_a_warm_check_reuses_gits_diff_and_keeps_the_finding(rewritten, capsys, monkeypatch):
    first = warm_check(rewritten, capsys, monkeypatch)
    assert first[0] == 1 and first[2], first  # the diff was asked for, the loss found
    assert [f[:3] for f in first[1]] == [("journal-append-only", J, 4)]
    assert StoreEntry(rewritten, "git-diff").is_file()
    second = warm_check(rewritten, capsys, monkeypatch)
    assert second == (first[0], first[1], False)  # the same finding, git not asked


def _restore(repo):
    write(repo, J, JOURNAL)


def _stage(repo):
    git(repo, "add", J)


def _commit_other(repo):
    git(repo, "commit", "-q", "--no-verify", "--allow-empty", "-m", "another")


def _touch_memory(repo):
    write(repo, "memory/semantic/deploy.md",
          "# Deploy\n\n- step one\n- step two\n- step three\n- step four\n")


@pytest.mark.parametrize("change,found", [
    (_restore, []),  # the journal as committed again: nothing lost
    (_stage, [("journal-append-only", J, 4)]),  # the index changed
    (_commit_other, [("journal-append-only", J, 4)]),  # HEAD moved
    (_touch_memory, [("journal-append-only", J, 4)]),  # another file changed
], ids=["journal-restored", "staged", "new-commit", "other-note-edited"])
def test_the_diff_is_asked_again_when_what_it_reads_changed(rewritten, capsys, monkeypatch,
                                                            change, found):
    warm_check(rewritten, capsys, monkeypatch)
    change(rewritten)
    settle(rewritten)
    code, got, asked = warm_check(rewritten, capsys, monkeypatch)
    assert asked
    assert [f[:3] for f in got] == found
    assert warm_check(rewritten, capsys, monkeypatch)[1:] == (got, False)


def test_an_index_git_refreshed_while_diffing_is_not_taken_as_the_key(rewritten, capsys,
                                                                        monkeypatch):
    """Touched files make `git diff` rewrite the index's stat data as it runs: its answer
    is kept only by the next run, which finds the index as git left it."""
    from vault_files import age_files

    age_files(rewritten)  # the index's stat data is stale again
    before = (rewritten / ".git/index").stat().st_ino
    assert warm_check(rewritten, capsys, monkeypatch)[2]
    assert (rewritten / ".git/index").stat().st_ino != before  # git rewrote it
    assert warm_check(rewritten, capsys, monkeypatch)[2]
    assert not warm_check(rewritten, capsys, monkeypatch)[2]


def test_a_file_changed_in_the_listings_tick_asks_git_again(rewritten, capsys, monkeypatch):
    warm_check(rewritten, capsys, monkeypatch)
    write(rewritten, "memory/semantic/deploy.md", "# Deploy\n\n- step one\n")  # now: racy
    assert warm_check(rewritten, capsys, monkeypatch)[2]
    assert warm_check(rewritten, capsys, monkeypatch)[2]  # still within the margin


@pytest.mark.parametrize("config", [
    'exclude = ["memory/drafts/**"]\n',  # a file left out may be a tracked journal
])
def test_no_diff_memo_when_the_listing_leaves_out_memory_files(rewritten, capsys, monkeypatch,
                                                                config):
    write(rewritten, "vaultkit.toml", config)
    settle(rewritten)
    for _ in range(2):
        code, got, asked = warm_check(rewritten, capsys, monkeypatch)
        assert asked and [f[:3] for f in got] == [("journal-append-only", J, 4)]
    assert not StoreEntry(rewritten, "git-diff").exists()


def test_no_diff_memo_without_the_cache(rewritten, capsys, monkeypatch):
    for _ in range(2):
        assert warm_check(rewritten, capsys, monkeypatch, "--no-cache")[2]
    assert not StoreEntry(rewritten, "git-diff").exists()


def test_the_hook_asks_git_for_the_staged_diff_after_each_git_add(rewritten, capsys,
                                                                  monkeypatch):
    """Staged: the index is the key; each `git add` replaces it."""
    git(rewritten, "add", J)
    monkeypatch.chdir(rewritten)
    code, got, asked = warm_check(rewritten, capsys, monkeypatch, "--staged")
    assert code == 1 and asked and [f[:3] for f in got] == [("journal-append-only", J, 4)]
    _restore(rewritten)
    git(rewritten, "add", J)
    code, got, asked = warm_check(rewritten, capsys, monkeypatch, "--staged")
    assert (code, got, asked) == (0, [], True)
