"""The problems owners want found that vaultkit missed (precision round 3), on one fixture
workspace of their patterns: ``tests/fixtures/workspaces/missed-problems/``. It holds the
seeded faults below and, beside each, what must be left alone: a heartbeat's status
sub-section repeated under each entry, `### Tasks` / `- none` / `---` repeated, a link
written as Obsidian writes an alias (`[[Sofia|Sofi]]`), a skill folder that overrides a
bundled skill on purpose (`skills/github/`), placeholder keys in a config example, a
variable in a command's password, a backup copy's journal (no rule but the credential one
reads backups/)."""

from __future__ import annotations

import shutil
from pathlib import Path

from test_rules_support import diagnostics, findings, isolated_openclaw  # noqa: F401

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "workspaces" / "missed-problems"

SEEDED = {
    ("duplicate-block", "MEMORY.md", 13),  # a dreaming block promoted twice
    ("duplicate-block", "memory/2026-04-08.md", 35),  # a flush written again
    ("broken-link", "memory/2026-04-09.md", 4),  # [[Sofi]]: an alias
    ("skill-shadows-bundled", "skills/obsidian-direct/SKILL.md", 2),
    ("secret-in-memory", "TOOLS.md", 4),  # GOG_KEYRING_PASSWORD="…" gog …
    ("secret-in-memory", "backups/2026-04-08/MEMORY.md", 3),  # the same, in a backup copy
    ("index-stale", "memory/INDEX.md", None),  # (a suggestion: no INDEX.md)
}
# rules whose noise another change reduces: their findings here are not this fixture's
OTHERS = {"entry-too-long", "entry-too-short", "frontmatter-missing", "orphan-note",
          "unknown-location", "skill-frontmatter", "daily-record-in-memory"}


def test_the_missed_problems_are_found_and_nothing_else(tmp_path):
    root = tmp_path / "missed-problems"
    shutil.copytree(FIXTURE, root)
    got = {f for f in findings(root) if f[0] not in OTHERS}
    assert got == SEEDED


def test_the_findings_say_what_to_do(tmp_path):
    root = tmp_path / "missed-problems"
    shutil.copytree(FIXTURE, root)
    by = {(d.rule, d.path): d.message for d in diagnostics(
        root, "duplicate-block", "broken-link", "skill-shadows-bundled", "secret-in-memory")}
    assert by[("duplicate-block", "memory/2026-04-08.md")].startswith(
        "lines 35-38 repeat lines 30-33 byte for byte")
    assert "write [[Sofia|Sofi]]" in by[("broken-link", "memory/2026-04-09.md")]
    assert "replaces the bundled one" in by[("skill-shadows-bundled",
                                             "skills/obsidian-direct/SKILL.md")]
    for path in ("TOOLS.md", "backups/2026-04-08/MEMORY.md"):
        message = by[("secret-in-memory", path)]
        assert "GOG_KEYRING_PASSWORD" in message and "marigold" not in message
