"""A hand-written vault with one instance of each memory-rule fault, and the starter vault.

``tests/fixtures/rules/realistic/`` is a small OpenClaw workspace written by hand: an
AGENTS.md with its protocol, a MEMORY.md in the seeds' shape, journals, lesson topic
files, decisions, people, projects, knowledge notes and an archive. Its vaultkit.toml
tightens the budgets so the hand-sized bootstrap files overrun them. Every fault below
appears exactly once; the near-misses the rules must leave alone are in there too (a
lesson link in NOW.md's status list, a `## Lessons` heading inside a fenced block, a
time inside a sentence in MEMORY.md, a filler phrase inside a longer real entry, filler
in an archived journal, a topic lesson file).
"""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

from test_rules_support import diagnostics, findings, isolated_openclaw  # noqa: F401

from vaultkit.lint.engine import Selection, run_rules, select_rules
from vaultkit.lint.rule import Context
from vaultkit.cli.starter import init_vault
from vaultkit.vault.loader import load_vault

FIXTURE = Path(__file__).parent / "fixtures" / "rules" / "realistic"

MEMORY_RULES = (
    "lesson-by-date", "frontmatter-missing", "frontmatter-schema", "type-mismatch",
    "missing-section", "deprecated-property", "property-link-unquoted", "memory-size",
    "bootstrap-budget", "bootstrap-truncation", "entry-too-long", "entry-too-short",
    "lesson-in-now", "daily-record-in-memory", "filler-entry", "lesson-entry-undated",
)

EXPECTED = {
    ("lesson-by-date", "memory/lessons/2026-02-14.md", 1),
    ("frontmatter-missing", "memory/people/bob.md", 1),
    ("frontmatter-schema", "memory/projects/website.md", 3),  # status: finished
    ("type-mismatch", "memory/decisions/write-vs-edit.md", 3),  # type: lesson
    ("missing-section", "memory/decisions/community-first.md", 7),  # no ## Decision
    ("deprecated-property", "memory/people/alice.md", 3),  # tag:
    ("property-link-unquoted", "memory/projects/memory-system.md", 4),  # owner: [[ray]]
    ("memory-size", "MEMORY.md", 44),  # 2,157 bytes; the 2,048-byte budget is crossed here
    # OpenClaw injects 5,476 chars (NOW.md is not injected) against 5,000; AGENTS.md is largest
    ("bootstrap-budget", "AGENTS.md", 1),
    # 3,521 chars over 3,000: an AGENTS.md keeps its first 1,350 (45%), a digest of its policy
    # lines and its last 418; the head ends in line 28
    ("bootstrap-truncation", "AGENTS.md", 28),
    ("entry-too-long", "memory/2026-02-14.md", 8),  # 16 lines and a pasted report of 17
    ("entry-too-short", "memory/2026-02-15.md", 13),  # 1 line
    ("lesson-in-now", "NOW.md", 8),  # ## Lessons learned
    ("daily-record-in-memory", "MEMORY.md", 18),  # ### 14:30 — ...
    ("filler-entry", "memory/2026-02-15.md", 16),  # System idle. / No changes. / ...
    ("lesson-entry-undated", "memory/lessons/cron-scheduling.md", 18),
}


def _copy(tmp_path) -> Path:
    root = tmp_path / "vault"
    shutil.copytree(FIXTURE, root)
    return root


def test_every_rule_has_exactly_one_fault_in_the_fixture():
    assert sorted(r for r, _, _ in EXPECTED) == sorted(MEMORY_RULES)


def test_realistic_vault_yields_exactly_the_expected_findings(tmp_path):
    root = _copy(tmp_path)
    # the memory rules plus the foundation's file and location rules
    got = findings(root, *MEMORY_RULES, "VK0", "VK1")
    assert set(got) == EXPECTED
    assert len(got) == len(EXPECTED)


def test_realistic_vault_with_every_rule(tmp_path):
    """Nothing else fires either; INDEX.md is hand-written, so index-stale is left out."""
    root = _copy(tmp_path)
    vault = load_vault(root, root=root, use_cache=False)
    rules = select_rules(vault.settings, Selection(select=["ALL"], ignore=["index-stale"]))
    got = {(d.rule, d.path, d.line) for d in run_rules(Context(vault), rules)}
    assert got == EXPECTED


def test_realistic_vault_fix_then_clean(tmp_path):
    from vaultkit.cli import main

    root = _copy(tmp_path)
    untouched = {p: p.read_bytes() for p in root.rglob("*.md")
                 if p.name not in ("alice.md", "memory-system.md", "bob.md")}
    assert main(["check", str(root), "--fix", "--no-cache", "-q",
                 "--select", ",".join(MEMORY_RULES)]) == 1  # errors remain, unfixable ones
    remaining = set(findings(root, *MEMORY_RULES))
    assert remaining == {f for f in EXPECTED
                         if f[0] not in ("deprecated-property", "property-link-unquoted",
                                         "frontmatter-missing")}
    assert all(p.read_bytes() == data for p, data in untouched.items())
    assert (root / "memory/people/alice.md").read_text().startswith(
        "---\ntype: person\ntags: [design, website]\n---\n")
    # a person note kept without frontmatter gets the type its folder implies
    assert (root / "memory/people/bob.md").read_text().startswith("---\ntype: person\n---\n")


def test_starter_vault_is_clean(tmp_path):
    root = tmp_path / "demo"
    init_vault(root, today=dt.date(2026, 2, 15))
    assert findings(root, *MEMORY_RULES) == []
