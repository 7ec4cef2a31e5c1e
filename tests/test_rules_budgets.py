"""memory-size, bootstrap-budget, bootstrap-truncation, entry-too-long, entry-too-short."""

from __future__ import annotations

import pytest
from test_rules_support import diagnostics, findings, isolated_openclaw  # noqa: F401

from vaultkit.vault.openclaw import bootstrap_limits
from vaultkit.lint.rules.bootstrap_truncation import runtime_length
from vaultkit.vault.loader import load_vault


def lines_of(n_bytes: int, width: int = 64) -> str:
    """Text of exactly ``n_bytes`` ASCII bytes in lines of ``width`` (newline included)."""
    line = "x" * (width - 1) + "\n"
    full, rest = divmod(n_bytes, width)
    return line * full + ("y" * (rest - 1) + "\n" if rest else "")


# -- memory-size ----------------------------------------------------------------------

def test_memory_size_over_budget_points_at_the_crossing_line(make_vault):
    text = "# MEMORY\n" + lines_of(10240 - 9 + 64)  # one 64-byte line over
    root = make_vault({"MEMORY.md": text})
    (d,) = diagnostics(root, "memory-size")
    assert (d.path, d.line, d.severity) == ("MEMORY.md", 161, "error")
    assert d.message.startswith("MEMORY.md is 10,304 bytes, over the 10,240-byte budget by 64")


def test_memory_size_at_budget_is_fine(make_vault):
    root = make_vault({"MEMORY.md": "# MEMORY\n" + lines_of(10240 - 9)})
    assert (root / "MEMORY.md").stat().st_size == 10240
    assert findings(root, "memory-size") == []


def test_memory_size_counts_bytes_not_characters(make_vault):
    text = "# MEMORY\n" + ("会话可丢，状态不可丢。" * 10 + "\n") * 35  # 3,860 characters
    root = make_vault({"MEMORY.md": text})
    assert len(text) < 10240 < len(text.encode())  # 11,594 bytes
    assert findings(root, "memory-size") == [("memory-size", "MEMORY.md", 32)]


def test_memory_size_budget_from_vaultkit_toml(make_vault):
    files = {"MEMORY.md": "# MEMORY\n" + lines_of(4000),
             "vaultkit.toml": "[budgets]\nmemory-md-bytes = 2048\n"}
    assert [f[:2] for f in findings(make_vault(files), "memory-size")] == [("memory-size",
                                                                          "MEMORY.md")]


def test_memory_size_near_misses(make_vault):
    root = make_vault({"memory/semantic/MEMORY.md": lines_of(20000),
                       "AGENTS.md": lines_of(15000)})
    assert findings(root, "memory-size") == []


def test_memory_size_memory_only_layout(make_vault, tmp_path):
    root = make_vault({"vaultkit.toml": 'memory-dir = "."\n', "2026-02-15.md": "# x\n"},
                      root_name="workspace/memory")
    (root.parent / "MEMORY.md").write_text(lines_of(11000))
    assert findings(root, "memory-size") == [("memory-size", "../MEMORY.md", 161)]


# -- bootstrap-budget -------------------------------------------------------------------

def test_bootstrap_budget_reports_on_the_largest_and_lists_every_size(make_vault):
    root = make_vault({"AGENTS.md": lines_of(9000), "MEMORY.md": lines_of(8000),
                       "SOUL.md": lines_of(2000), "USER.md": lines_of(1500),
                       "memory/2026-02-15.md": lines_of(9000)})  # journals are not bootstrap
    (d,) = diagnostics(root, "bootstrap-budget")
    assert (d.rule, d.path, d.line) == ("bootstrap-budget", "AGENTS.md", 1)
    assert d.message == ("bootstrap files total 20,500 bytes (20.0 KB), over the 20,480-byte "
                         "budget by 20 (budgets.bootstrap_total_bytes): AGENTS.md 9,000, "
                         "MEMORY.md 8,000, SOUL.md 2,000, USER.md 1,500")


def test_bootstrap_budget_under_budget(make_vault):
    root = make_vault({"AGENTS.md": lines_of(9000), "MEMORY.md": lines_of(8000),
                       "NOW.md": lines_of(3480)})
    assert findings(root, "bootstrap-budget") == []


def test_bootstrap_budget_memory_only_layout(make_vault):
    root = make_vault({"vaultkit.toml": 'memory-dir = "."\n'}, root_name="ws/memory")
    (root.parent / "AGENTS.md").write_text(lines_of(12000))
    (root.parent / "MEMORY.md").write_text(lines_of(9000))
    (d,) = diagnostics(root, "bootstrap-budget")
    assert d.path == "../AGENTS.md"
    assert "../AGENTS.md 12,000, ../MEMORY.md 9,000" in d.message


def test_bootstrap_budget_from_vaultkit_toml(make_vault):
    root = make_vault({"AGENTS.md": lines_of(9000), "MEMORY.md": lines_of(8000),
                       "vaultkit.toml": "[budgets]\nbootstrap-total-bytes = 30000\n"})
    assert findings(root, "bootstrap-budget") == []


# -- bootstrap-truncation -----------------------------------------------------------------

def test_truncation_per_file_says_what_is_lost(make_vault):
    root = make_vault({"AGENTS.md": lines_of(25600, width=100)})  # 256 lines of 100 chars
    (d,) = diagnostics(root, "bootstrap-truncation")
    # kept: first 15,000 and last 5,000 characters; lost: 5,600 from line 151 on
    assert (d.path, d.line) == ("AGENTS.md", 151)
    source = bootstrap_limits(load_vault(root, root=root, use_cache=False))[2]
    assert "no openclaw.json" in source
    assert d.message == (
        f"AGENTS.md is 25,599 characters, over the runtime's per-file limit of 20,000 ({source}): "
        "the agent silently loses 5,599 characters from the middle, lines 151-206 (keeps the "
        "first 15,000 and the last 5,000)")


def test_truncation_counts_characters_not_bytes(make_vault):
    cjk = ("会话可丢，状态不可丢。" * 9 + "\n") * 150  # 14,999 characters once trimmed, 44,700 bytes
    root = make_vault({"MEMORY.md": cjk})
    assert runtime_length(cjk) == 14999
    assert len(cjk.encode()) == 44700
    assert findings(root, "bootstrap-truncation") == []


def test_truncation_ignores_trailing_whitespace(make_vault):
    root = make_vault({"SOUL.md": "x" * 20000 + "\n\n   \n"})
    assert findings(root, "bootstrap-truncation") == []


def test_truncation_limits_from_openclaw_json(make_vault, tmp_path):
    root = make_vault({"AGENTS.md": lines_of(12000, width=100), "SOUL.md": lines_of(9000)})
    (tmp_path / "openclaw.json").write_text("""// JSON5, as OpenClaw reads it
{
  agents: {
    defaults: {
      bootstrapMaxChars: 10000,   // per file
      bootstrapTotalMaxChars: 15000,
    },
  },
}
""")
    got = diagnostics(root, "bootstrap-truncation")
    assert [(d.path, d.line) for d in got] == [("AGENTS.md", 76), ("SOUL.md", 59)]
    agents, soul = got
    assert "over the runtime's per-file limit of 10,000" in agents.message
    assert str(tmp_path / "openclaw.json") in agents.message
    assert "agents.defaults.bootstrapMaxChars" in agents.message
    assert "loses 1,999 characters" in agents.message
    # SOUL.md comes after AGENTS.md: 5,000 of the 15,000 total are left for it
    assert "only 5,000 of the total limit of 15,000 are left" in soul.message
    assert "loses 3,999 characters" in soul.message


def test_truncation_drops_files_past_the_total(make_vault, tmp_path):
    root = make_vault({"AGENTS.md": lines_of(15000), "SOUL.md": lines_of(16000),
                       "USER.md": "# USER\nName: Ray\n"})
    (tmp_path / "openclaw.json").write_text('{"agents": {"defaults": {"bootstrapTotalMaxChars": '
                                            "30000}}}")
    got = diagnostics(root, "bootstrap-truncation")
    assert [(d.path, d.line) for d in got] == [("SOUL.md", 176), ("USER.md", 1)]
    assert "USER.md is dropped whole" in got[1].message
    assert "all 16 characters are silently lost" in got[1].message
    # SOUL.md: 15,999 characters, 15,001 of the total left after AGENTS.md's 14,999
    assert "only 15,001 of the total limit of 30,000 are left" in got[0].message
    assert "loses 998 characters" in got[0].message


def test_truncation_near_miss_under_limits(make_vault, tmp_path):
    root = make_vault({"AGENTS.md": lines_of(19000), "MEMORY.md": lines_of(19000),
                       "SOUL.md": lines_of(19000)})
    assert findings(root, "bootstrap-truncation") == []
    # an openclaw.json that does not parse falls back to the defaults, no crash
    (tmp_path / "openclaw.json").write_text("{ agents: ")
    assert findings(root, "bootstrap-truncation") == []


# -- entry-too-long / entry-too-short -------------------------------------------------------

def entry(title: str, n: int, level: int = 3) -> str:
    body = "\n".join(f"- point {i}" for i in range(n))
    return f"{'#' * level} {title}\n{body}\n\n"


JOURNAL_CASES = [
    ("16 lines is too long", entry("14:30 — long", 16), "entry-too-long", [3]),
    ("15 lines is fine", entry("14:30 — ok", 15), "entry-too-long", []),
    ("2 lines is too short", entry("14:30 — short", 2), "entry-too-short", [3]),
    ("3 lines is fine", entry("14:30 — ok", 3), "entry-too-short", []),
    # the heading form of a log line, what `vaultkit log "one line"` writes
    ("a heading alone is a one-line entry", "### 14:30 — nothing\n\n", "entry-too-short", []),
    ("blank lines do not count", "### 14:30 — airy\n- a\n\n\n- b\n\n", "entry-too-short", [3]),
    ("a comment line does not count",
     "### 14:30 — c\n- a\n- b\n<!-- vaultkit: note -->\n", "entry-too-short", [3]),
    ("sub-headings belong to the entry", "### 14:30 — deep\n#### Detail\n- a\n- b\n",
     "entry-too-short", []),
    ("group headings are not entries", "## Morning\n" + entry("09:00 — ok", 3),
     "entry-too-short", []),
    ("a heading inside code is not an entry",
     "### 09:00 — code\n- a\n```\n### 10:00 — not an entry\n```\n", "entry-too-short", []),
]


@pytest.mark.parametrize("body,rule,lines", [c[1:] for c in JOURNAL_CASES],
                         ids=[c[0] for c in JOURNAL_CASES])
def test_journal_entries(make_vault, body, rule, lines):
    root = make_vault({"memory/2026-02-15.md": "# 2026-02-15\n\n" + body})
    assert findings(root, rule) == [(rule, "memory/2026-02-15.md", ln) for ln in lines]


def test_lessons_entries_are_level_two(make_vault):
    text = ("---\ntype: lesson\n---\n# Cron\n\n" + entry("Long (2026-02-13)", 16, 2)
            + entry("Short (2026-02-14)", 1, 2) + entry("Fine (2026-02-15)", 4, 2))
    root = make_vault({"memory/lessons/cron.md": text})
    assert findings(root, "entry-too-long", "entry-too-short") == [
        ("entry-too-long", "memory/lessons/cron.md", 6),
        ("entry-too-short", "memory/lessons/cron.md", 24),
    ]


def test_entry_limits_from_vaultkit_toml(make_vault):
    root = make_vault({
        "vaultkit.toml": "[budgets]\nentry-min-lines = 1\nentry-max-lines = 4\n",
        "memory/2026-02-15.md": entry("09:00 — a", 1) + entry("10:00 — b", 5),
    })
    assert findings(root, "entry-too-long", "entry-too-short") == [
        ("entry-too-long", "memory/2026-02-15.md", 4)]


def test_entry_rules_skip_notes_without_entries(make_vault):
    root = make_vault({"MEMORY.md": entry("14:30 — x", 1), "memory/semantic/x.md": entry("x", 20),
                       "memory/archive/2025-01-01.md": entry("09:00 — y", 1)})
    assert findings(root, "entry-too-long", "entry-too-short") == []


def test_entry_messages(make_vault):
    root = make_vault({"memory/2026-02-15.md": entry("16:00 — Deploy", 1)})
    (d,) = diagnostics(root, "entry-too-short")
    assert d.severity == "warning"
    assert d.message.startswith("entry '16:00 — Deploy' has 1 non-blank line, under the minimum "
                                "of 3 (budgets.entry_min_lines)")
