"""lesson-in-now, daily-record-in-memory, filler-entry, lesson-entry-undated."""

from __future__ import annotations

import pytest
from test_rules_support import diagnostics, findings, isolated_openclaw  # noqa: F401

NOW_HEAD = "# NOW\n\n## Status\n"  # lines 1-3; case lines start at 4

NOW_CASES = [
    ("lessons heading", "## Lessons\n- printf >> never loses lines\n", [4]),
    ("lesson learned heading", "### Lesson learned today\n", [4]),
    ("takeaway item", "- Takeaway: never let cron use Write\n", [4]),
    ("lesson tag", "- cron rewrote the journal #lesson\n", [4]),
    ("nested lesson tag", "- cron rewrote the journal #lessons/cron\n", [4]),
    ("paragraph", "Learned that the Edit tool needs exact matches.\n", [4]),
    ("chinese heading", "## 经验教训\n", [4]),
    ("chinese item", "- 复盘：定时任务覆盖了日志\n", [4]),
    ("several lines", "- Deploying v2\n- lesson: keep entries short\n## Takeaways\n", [5, 6]),
    ("near miss: lesson link in the status list",
     "- Fixing cron (see [[lessons/cron-scheduling|cron lessons]])\n"
     "- Notes in [Lessons](memory/lessons/cron.md)\n", []),
    ("near miss: heading inside a fenced code block", "```markdown\n## Lessons\n```\n", []),
    ("near miss: inline code and comments",
     "- Ran `grep -r lessons memory/`\n<!-- lessons go to memory/lessons -->\n", []),
    ("near miss: word inside another word", "- Reviewing lessonplanner and Elessons repos\n", []),
    ("near miss: plain status", "- Alice: deploying v2, blocked on review\n", []),
]


@pytest.mark.parametrize("body,lines", [c[1:] for c in NOW_CASES], ids=[c[0] for c in NOW_CASES])
def test_lesson_in_now(make_vault, body, lines):
    root = make_vault({"NOW.md": NOW_HEAD + body})
    assert findings(root, "lesson-in-now") == [("lesson-in-now", "NOW.md", ln) for ln in lines]


def test_lesson_in_now_only_in_now(make_vault):
    root = make_vault({"AGENTS.md": "## Lessons\n", "memory/semantic/now.md": "## Lessons\n",
                       "memory/NOW.md": "## Lessons\n"})
    assert findings(root, "lesson-in-now") == []


def test_lesson_in_now_message_and_column(make_vault):
    root = make_vault({"NOW.md": "# NOW\n- Deploying v2; takeaway: test first\n"})
    (d,) = diagnostics(root, "lesson-in-now")
    assert (d.line, d.column, d.severity) == (2, 17, "warning")
    assert d.message == ("NOW.md line holds a lesson ('takeaway'); NOW.md is the status board: "
                         "move lessons to memory/lessons/<topic>.md")


def test_lesson_phrases_extend_from_vaultkit_toml(make_vault):
    root = make_vault({
        "vaultkit.toml": '[phrases]\nlesson = ["gotcha", "re:^\\\\s*-\\\\s*TIL\\\\b", "学到了"]\n',
        "NOW.md": "# NOW\n- gotcha: cron runs in UTC\n- TIL the runtime cuts files\n"
                  "- 今天学到了一点\n- Gotchas elsewhere\n- until TIL\n",
    })
    assert findings(root, "lesson-in-now") == [("lesson-in-now", "NOW.md", n) for n in (2, 3, 4)]


def test_memory_only_layout_now_md_one_level_up(make_vault):
    root = make_vault({"vaultkit.toml": 'memory-dir = "."\n'}, root_name="ws/memory")
    (root.parent / "NOW.md").write_text("# NOW\n## Lessons\n")
    assert findings(root, "lesson-in-now") == [("lesson-in-now", "../NOW.md", 2)]


MEMORY_HEAD = "# MEMORY\n\n## approved_durable_entries\n"  # case lines start at 4

MEMORY_CASES = [
    ("time-stamped heading", "### 14:30 — Fixed the cron timezone\n", [4]),
    ("bare time heading", "### 09:05\n", [4]),
    ("date heading", "## 2026-02-13\n", [4]),
    ("chinese date heading", "## 2026年2月13日\n", [4]),
    ("time-stamped item", "- 14:30 — restarted the gateway\n", [4]),
    ("date-and-time stamp in an item", "- Deployed v2 on 2026-02-13 14:30 after review\n", [4]),
    ("ISO stamp", "Last flush: 2026-02-13T23:00\n", [4]),
    ("near miss: time inside a sentence", "- The nightly backup runs at 23:00 Beijing time.\n", []),
    ("near miss: dated durable entry", "## Use printf >> for memory writes (2026-02-13)\n", []),
    ("near miss: a date alone in a sentence", "- Since 2026-02-08 we grow community first.\n", []),
    ("near miss: ratios and versions", "- Keep the 3:1 ratio; v2.10:3 is pinned\n", []),
    ("near miss: inside code", "```\n### 14:30 — example entry\n2026-02-13 14:30\n```\n", []),
    ("near miss: in a link", "- See [[memory/2026-02-13#14:30 — Deploy]]\n", []),
]


@pytest.mark.parametrize("body,lines", [c[1:] for c in MEMORY_CASES],
                         ids=[c[0] for c in MEMORY_CASES])
def test_daily_record_in_memory(make_vault, body, lines):
    root = make_vault({"MEMORY.md": MEMORY_HEAD + body})
    assert findings(root, "daily-record-in-memory") == [
        ("daily-record-in-memory", "MEMORY.md", ln) for ln in lines]


def test_daily_records_are_fine_in_journals(make_vault):
    root = make_vault({"memory/2026-02-13.md": "# 2026-02-13\n### 14:30 — x\n- a\n- b\n- c\n",
                       "NOW.md": "# NOW\n### 14:30 — status\n"})
    assert findings(root, "daily-record-in-memory") == []


def test_daily_record_message(make_vault):
    root = make_vault({"MEMORY.md": "# MEMORY\n## 2026-02-13\n"})
    (d,) = diagnostics(root, "daily-record-in-memory")
    assert d.message == ("MEMORY.md holds a date heading; journal records go to "
                         "memory/YYYY-MM-DD.md, MEMORY.md keeps only what is durable")


JOURNAL_HEAD = "# 2026-02-15\n\n"  # entries start at line 3

FILLER_CASES = [
    ("seed's filler", "### 15:00 — Heartbeat\nSystem idle, no changes.\n", [3]),
    ("filler list", "### 15:00 — Check\n- No updates.\n- Nothing to report.\n- All quiet.\n", [3]),
    ("heartbeat token", "### 15:00 — Heartbeat\nHEARTBEAT_OK\n", [3]),
    ("filler heading and no body", "### 15:00 — nothing to report\n", [3]),
    ("time stamps do not make it real", "### 15:00\n- [15:00] no changes\n- 15:30 no changes\n",
     [3]),
    ("chinese filler", "### 15:00 — 心跳\n系统空闲，无变化。\n", [3]),
    ("near miss: filler phrase inside a longer real entry",
     "### 15:00 — API review\n- No changes to the public API.\n- Deploy moved to Friday.\n"
     "- Alice owns the migration.\n", []),
    ("near miss: code in the entry", "### 15:00 — Check\nno changes\n```\nexit 1\n```\n", []),
    ("near miss: filler heading with a real body",
     "### 15:00 — nothing new\n- Cron job failed at 14:55, restarted.\n", []),
    ("several entries, one filler", "### 09:00 — Deploy\n- v2 is live.\n- Rolled back once.\n"
     "- Root cause: env.\n\n### 10:00 — Heartbeat\nidle\n", [8]),
]


@pytest.mark.parametrize("body,lines", [c[1:] for c in FILLER_CASES],
                         ids=[c[0] for c in FILLER_CASES])
def test_filler_entry(make_vault, body, lines):
    root = make_vault({"memory/2026-02-15.md": JOURNAL_HEAD + body})
    assert findings(root, "filler-entry") == [
        ("filler-entry", "memory/2026-02-15.md", ln) for ln in lines]


def test_filler_phrases_extend_from_vaultkit_toml(make_vault):
    root = make_vault({
        "vaultkit.toml": '[phrases]\nfiller = ["all good", "re:^ok\\\\.?$", "平安无事"]\n',
        "memory/2026-02-15.md": "### 09:00 — a\nAll good.\n\n### 10:00 — b\nOK.\n\n"
                                "### 11:00 — c\n平安无事\n\n### 12:00 — d\nOK, shipped v2.\n",
    })
    assert [f[2] for f in findings(root, "filler-entry")] == [1, 4, 7]


def test_filler_entry_message(make_vault):
    root = make_vault({"memory/2026-02-15.md": "### 15:00 — Heartbeat\nSystem idle, no changes.\n"})
    (d,) = diagnostics(root, "filler-entry")
    assert d.severity == "warning"
    assert d.message == ("entry '15:00 — Heartbeat' holds only filler ('System idle'); skip the "
                         "entry when there is nothing worth recording")


LESSONS_HEAD = "---\ntype: lesson\n---\n# Cron Scheduling Rules\n\n"  # entries start at line 6

UNDATED_CASES = [
    ("no date", "## Write vs Edit Trap\n- a\n- b\n- c\n", [6]),
    ("near miss: date without parentheses", "## Write vs Edit Trap 2026-02-13\n", []),
    ("near miss: a .learnings id carries the date", "## [ERR-20260314-001] cron-trap\n", []),
    ("near miss: a date label in the body",
     "## Write vs Edit Trap\n**Date:** 2026-02-13\n**What happened:** a wipe\n", []),
    ("near miss: a Chinese date label, colon outside",
     "## PITFALL-001：写入陷阱\n**发生时间**：2026-02-13\n**教训**：追加\n", []),
    ("near miss: a Russian date label in a bullet",
     "## Перезапись файла\n- **Дата:** 2026-02-13\n- **Решение:** дописывать\n", []),
    ("near miss: parent day heading", "# Day\n## 2026-02-07\n### not an entry\n", []),
    ("a label that is no date label", "## Trap\n**Status:** 2026-02-13\n", [6]),
    ("a date label without a date", "## Trap\n**Date:** soon\n", [6]),
    ("no real day", "## Write vs Edit Trap (2026-02-30)\n", [6]),
    ("near miss: dated", "## Write vs Edit Trap (2026-02-13)\n", []),
    ("near miss: full-width parentheses", "## 写入陷阱（2026-02-13）\n", []),
    ("near miss: deeper headings are not entries",
     "## Trap (2026-02-13)\n### Details\n- a\n", []),
    ("near miss: heading inside code", "## Trap (2026-02-13)\n```\n## Example\n```\n", []),
]


@pytest.mark.parametrize("body,lines", [c[1:] for c in UNDATED_CASES],
                         ids=[c[0] for c in UNDATED_CASES])
def test_lesson_entry_undated(make_vault, body, lines):
    root = make_vault({"memory/lessons/cron.md": LESSONS_HEAD + body})
    assert findings(root, "lesson-entry-undated") == [
        ("lesson-entry-undated", "memory/lessons/cron.md", ln) for ln in lines]


def test_lesson_entry_undated_only_in_lessons(make_vault):
    root = make_vault({"memory/decisions/a.md": "---\ntype: decision\n---\n## Context\n",
                       "memory/2026-02-15.md": "## Morning\n", "MEMORY.md": "## Rules\n"})
    assert findings(root, "lesson-entry-undated") == []


def test_lesson_entry_undated_message(make_vault):
    root = make_vault({"memory/lessons/cron.md": LESSONS_HEAD + "## Write vs Edit Trap\n"})
    (d,) = diagnostics(root, "lesson-entry-undated")
    assert d.message == ("entry '## Write vs Edit Trap' has no date; write it as "
                         "'## Write vs Edit Trap (YYYY-MM-DD)' with the day it was learned")


def test_suppression_comments_apply_to_memory_rules(make_vault):
    root = make_vault({
        "NOW.md": "# NOW\n<!-- vaultkit-disable-next-line lesson-in-now -->\n## Lessons\n"
                  "## Takeaways\n",
        "MEMORY.md": "<!-- vaultkit-disable-file VK402 -->\n# MEMORY\n## 2026-02-13\n",
    })
    assert findings(root, "lesson-in-now", "daily-record-in-memory") == [
        ("lesson-in-now", "NOW.md", 4)]
