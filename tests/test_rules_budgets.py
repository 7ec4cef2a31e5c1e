"""memory-size, bootstrap-budget, bootstrap-truncation, entry-too-long, entry-too-short."""

from __future__ import annotations

import pytest
from test_rules_support import diagnostics, findings, isolated_openclaw  # noqa: F401

from vaultkit.vault.openclaw import bootstrap_limits
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
# What OpenClaw injects into a main session, counted as it counts (UTF-16 units of the
# right-trimmed text), against the design notes' 20 KB guideline (20,480).

def test_bootstrap_budget_reports_on_the_largest_and_lists_every_share(make_vault):
    # each file loses its last newline to the runtime's trim: 8,999 + 7,999 + 1,999 + 1,499
    root = make_vault({"AGENTS.md": lines_of(9000), "MEMORY.md": lines_of(8000),
                       "SOUL.md": lines_of(2000), "USER.md": lines_of(1500),
                       "memory/2026-02-15.md": lines_of(9000)})  # journals are not bootstrap
    (d,) = diagnostics(root, "bootstrap-budget")
    assert (d.rule, d.path, d.line, d.severity) == ("bootstrap-budget", "AGENTS.md", 1, "warning")
    assert d.message == ("OpenClaw injects 20,496 chars from the bootstrap files into a main "
                         "session, over the 20,480 guideline (budgets.bootstrap_guideline_chars) "
                         "by 16: AGENTS.md 8,999, MEMORY.md 7,999, SOUL.md 1,999, USER.md 1,499")


def test_bootstrap_budget_leaves_out_now_md_which_openclaw_does_not_inject(make_vault):
    # the old count (bytes of every file, NOW.md included) was 26,000: over
    root = make_vault({"AGENTS.md": lines_of(9000), "MEMORY.md": lines_of(8000),
                       "NOW.md": lines_of(9000)})
    assert findings(root, "bootstrap-budget") == []


def test_bootstrap_budget_counts_characters_not_bytes(make_vault):
    # 7,200 Chinese characters are 21,600 UTF-8 bytes: the old byte count reported them
    text = ("会话可丢，状态不可丢。" * 8 + "\n") * 80
    root = make_vault({"AGENTS.md": text, "MEMORY.md": "# MEMORY\n"})
    assert len(text.encode()) > 20480 > len(text)
    assert findings(root, "bootstrap-budget") == []


def test_bootstrap_budget_one_unit_under_and_over(make_vault):
    # (IDENTITY.md: USER.md has its own 4,000 cap from OpenClaw 2026.8.2)
    under = make_vault({"SOUL.md": "x" * 15000, "IDENTITY.md": "y" * 5480}, root_name="under")
    assert findings(under, "bootstrap-budget") == []
    over = make_vault({"SOUL.md": "x" * 15000, "IDENTITY.md": "y" * 5481}, root_name="over")
    assert findings(over, "bootstrap-budget") == [("bootstrap-budget", "SOUL.md", 1)]
    # what is injected is counted: a file over the runtime's 20,000 per-file limit counts
    # for the 20,000 or so the runtime keeps of it, not for its length
    cut = make_vault({"SOUL.md": "x" * 25000}, root_name="cut")
    assert findings(cut, "bootstrap-budget") == []


def test_bootstrap_budget_memory_only_layout(make_vault):
    root = make_vault({"vaultkit.toml": 'memory-dir = "."\n'}, root_name="ws/memory")
    (root.parent / "AGENTS.md").write_text(lines_of(12000))
    (root.parent / "MEMORY.md").write_text(lines_of(9000))
    (d,) = diagnostics(root, "bootstrap-budget")
    assert d.path == "../AGENTS.md"
    assert "../AGENTS.md 11,999, ../MEMORY.md 8,999" in d.message


@pytest.mark.parametrize("key", ["bootstrap-guideline-chars", "bootstrap-total-bytes"])
def test_bootstrap_budget_from_vaultkit_toml(make_vault, key):
    root = make_vault({"AGENTS.md": lines_of(9000), "MEMORY.md": lines_of(8000),
                       "SOUL.md": lines_of(9000), "vaultkit.toml": f"[budgets]\n{key} = 30000\n"})
    assert findings(root, "bootstrap-budget") == []
    (root / "vaultkit.toml").write_text(f"[budgets]\n{key} = 20000\n")
    assert findings(root, "bootstrap-budget") == [("bootstrap-budget", "AGENTS.md", 1)]


# -- bootstrap-truncation -----------------------------------------------------------------
# Hand-derived from OpenClaw's trimBootstrapContent (src/agents/embedded-agent-helpers/
# bootstrap.ts): for a file of length L over a limit M the marker is
# "\n" + "[...truncated, read NAME for full content...]" + "\n" + "…(truncated NAME: kept
# H+T chars of L)…" + "\n", joined to head and tail by one "\n" each; the content budget is
# M - len(marker) - 2, of which 75% is head and 25% tail (floored).

def test_truncation_per_file_says_what_is_lost(make_vault):
    # SOUL.md: 256 lines of 100 characters, 25,599 once trimmed. The marker for "SOUL.md"
    # is 1 + 48 + 1 + 53 + 1 = 104 units, so the budget is 20,000 - 104 - 2 = 19,894:
    # head 14,920 (line 150 is the first not whole), tail 4,973 (from char 20,626, line 207)
    root = make_vault({"SOUL.md": lines_of(25600, width=100)})
    (d,) = diagnostics(root, "bootstrap-truncation")
    assert (d.path, d.line) == ("SOUL.md", 150)
    source = bootstrap_limits(load_vault(root, root=root, use_cache=False))[2]
    assert "no openclaw.json" in source
    assert d.message == (
        f"SOUL.md: OpenClaw loads 19,893 of its 25,599 chars (over the per-file limit of "
        f"20,000; {source}): lines 150-207 are never loaded")


def test_truncation_counts_characters_not_bytes(make_vault):
    cjk = ("会话可丢，状态不可丢。" * 9 + "\n") * 150  # 14,999 characters once trimmed, 44,700 bytes
    root = make_vault({"MEMORY.md": cjk})
    assert len(cjk.rstrip()) == 14999
    assert len(cjk.encode()) == 44700
    assert findings(root, "bootstrap-truncation") == []


def test_truncation_counts_an_emoji_as_two_units(make_vault):
    # 10,000 emoji are 20,000 UTF-16 units: at the limit; one more and the file is cut
    at = make_vault({"SOUL.md": "😀" * 10000 + "\n"}, root_name="at")
    assert findings(at, "bootstrap-truncation") == []
    over = make_vault({"SOUL.md": "😀" * 10000 + "a\n"}, root_name="over")
    assert findings(over, "bootstrap-truncation") == [("bootstrap-truncation", "SOUL.md", 1)]


def test_truncation_ignores_trailing_whitespace(make_vault):
    root = make_vault({"SOUL.md": "x" * 20000 + "\n\n   \n"})
    assert findings(root, "bootstrap-truncation") == []


def test_truncation_per_file_limit_one_unit_under_and_over(make_vault):
    # (IDENTITY.md: USER.md has its own 4,000 cap from OpenClaw 2026.8.2, test_context.py)
    under = make_vault({"IDENTITY.md": "u" * 20000}, root_name="under")
    assert findings(under, "bootstrap-truncation") == []
    over = make_vault({"IDENTITY.md": "u" * 20001}, root_name="over")
    assert findings(over, "bootstrap-truncation") == [("bootstrap-truncation", "IDENTITY.md", 1)]


def _eight_file_openclaw(tmp_path, monkeypatch):
    """OpenClaw 2026.7.1 installed: the eight-file set, no USER.md cap (docs/context.md)."""
    from vaultkit.vault import openclaw

    package = tmp_path / "npm" / "lib" / "node_modules" / "openclaw"
    package.mkdir(parents=True)
    (package / "package.json").write_text('{"name": "openclaw", "version": "2026.7.1"}')
    monkeypatch.setattr(openclaw, "_npm_prefixes", lambda: [tmp_path / "npm"])


def test_truncation_limits_from_openclaw_json(make_vault, tmp_path, monkeypatch):
    _eight_file_openclaw(tmp_path, monkeypatch)
    root = make_vault({"AGENTS.md": "a\n", "SOUL.md": lines_of(12000, width=100),
                       "TOOLS.md": "t\n", "IDENTITY.md": "i\n", "USER.md": lines_of(9000)})
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
    # SOUL.md (11,999): marker 1 + 48 + 1 + 52 + 1 = 103 ("…(truncated SOUL.md: kept
    # 7421+2473 chars of 11999)…"), budget 10,000 - 103 - 2 = 9,895: head 7,421 (line 75),
    # tail 2,473 (from char 9,526, line 96); 9,999 injected.
    # USER.md (8,999) then gets 15,000 - 1 - 9,999 - 1 - 1 = 4,998: marker 1 + 48 + 1 + 51
    # + 1 = 102, budget 4,998 - 102 - 2 = 4,894, head 3,670 (line 58), tail 1,223 (from
    # char 7,776, line 122); 4,997 injected
    assert [(d.path, d.line) for d in got] == [("SOUL.md", 75), ("USER.md", 58)]
    soul, user = got
    assert "loads 9,894 of its 11,999 chars (over the per-file limit of 10,000" in soul.message
    assert str(tmp_path / "openclaw.json") in soul.message
    assert "agents.defaults.bootstrapMaxChars" in soul.message
    assert "lines 75-96 are never loaded" in soul.message
    assert "loads 4,893 of its 8,999 chars (only 4,998 of the total limit of 15,000 " \
           "were left" in user.message
    assert "lines 58-122 are never loaded" in user.message


def test_truncation_drops_files_past_the_total(make_vault, tmp_path, monkeypatch):
    _eight_file_openclaw(tmp_path, monkeypatch)
    root = make_vault({"AGENTS.md": lines_of(15000), "SOUL.md": lines_of(16000),
                       "TOOLS.md": "t\n", "IDENTITY.md": "i\n", "USER.md": "# USER\nName: Ray\n"})
    (tmp_path / "openclaw.json").write_text('{"agents": {"defaults": {"bootstrapTotalMaxChars": '
                                            "30000}}}")
    got = diagnostics(root, "bootstrap-truncation")
    # AGENTS.md 14,999 loads whole; SOUL.md gets the 15,001 left and its cut fills 15,000 of
    # them; with 1 unit left (under 64) TOOLS.md, IDENTITY.md and USER.md are dropped whole
    assert [d.path for d in got] == ["IDENTITY.md", "SOUL.md", "TOOLS.md", "USER.md"]
    assert "only 15,001 of the total limit of 30,000 were left" in got[1].message
    assert got[3].message == ("USER.md: OpenClaw drops all 16 chars of it (under 64 units "
                              "of the total limit (30,000) were left)")


def test_truncation_near_miss_under_limits(make_vault, tmp_path):
    root = make_vault({"AGENTS.md": lines_of(19000), "MEMORY.md": lines_of(19000),
                       "SOUL.md": lines_of(19000)})
    assert findings(root, "bootstrap-truncation") == []
    # an openclaw.json that does not parse falls back to the defaults, no crash
    (tmp_path / "openclaw.json").write_text("{ agents: ")
    assert findings(root, "bootstrap-truncation") == []


def test_truncation_by_codex_byte_budget(make_vault):
    # 12,000 Chinese characters: 36,000 bytes, over Codex's 32,768; OpenClaw counts 12,000
    text = ("状态不可丢。" * 20 + "\n") * 100
    root = make_vault({"AGENTS.md": text, "vaultkit.toml": 'runtimes = ["openclaw", "codex"]\n'})
    (d,) = diagnostics(root, "bootstrap-truncation")
    # 32,768 bytes = 91 lines of 361 bytes (32,851 > 32,768 > 32,490): line 91 is cut
    assert (d.path, d.line) == ("AGENTS.md", 91)
    assert d.message == ("AGENTS.md: Codex loads 32,768 of its 36,100 bytes (past the 32,768-"
                         "byte budget (project_doc_max_bytes)): lines 91-100 are never loaded")
    root2 = make_vault({"AGENTS.md": text, "vaultkit.toml": 'runtimes = ["openclaw"]\n'},
                       root_name="no-codex")
    assert findings(root2, "bootstrap-truncation") == []


# -- entry-too-long / entry-too-short -------------------------------------------------------

def entry(title: str, n: int, level: int = 3) -> str:
    body = "\n".join(f"- point {i}" for i in range(n))
    return f"{'#' * level} {title}\n{body}\n\n"


JOURNAL_CASES = [
    # twice the seeds' 15 lines: a whole-vault run reports only the clear outliers
    ("31 lines is too long", entry("14:30 — long", 31), "entry-too-long", [3]),
    ("30 lines is fine", entry("14:30 — ok", 30), "entry-too-long", []),
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
    text = ("---\ntype: lesson\n---\n# Cron\n\n" + entry("Long (2026-02-13)", 31, 2)
            + entry("Short (2026-02-14)", 1, 2) + entry("Fine (2026-02-15)", 4, 2))
    root = make_vault({"memory/lessons/cron.md": text})
    assert findings(root, "entry-too-long", "entry-too-short") == [
        ("entry-too-long", "memory/lessons/cron.md", 6),
        ("entry-too-short", "memory/lessons/cron.md", 39),
    ]


def test_entry_limits_from_vaultkit_toml(make_vault):
    root = make_vault({
        "vaultkit.toml": "[budgets]\nentry-min-lines = 1\nentry-max-lines = 4\n",
        "memory/2026-02-15.md": entry("09:00 — a", 1) + entry("10:00 — b", 9),
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
