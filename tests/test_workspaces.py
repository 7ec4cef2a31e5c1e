"""vaultkit on workspaces shaped like the real ones (``shared/real-workspaces.md``).

``tests/fixtures/workspaces/multilingual/`` is an OpenClaw workspace kept by an agent for
weeks, written in Chinese, Russian and English: the bootstrap set with a stale
BOOTSTRAP.md, ad-hoc root notes, skills/, hooks/, canvas/, scripts/, docs/, agents/,
shared/, .learnings/, backups/ and vendored trees; in memory/ plain-date journals in every
shape seen (H1 with the date, `## 上午 09:00 - …`, `## 【21:30 · …】`, `## 凌晨（~04:00-05:00）`,
`(5:00 PM)`, ranges, `### 21:40:05`, bullet-only logs, a journal that starts with `---`,
dreaming sections), session-memory transcripts (`# Session:` with UTC, GMT+8 and MSK,
`<!-- consolidated -->` markers, `[[reply_to_current]]`, raw JSON), dated topic notes,
topical folders (research/, learning/briefings/, schedules/, dreaming/, bots/, a VitePress
date tree, Cyrillic and Chinese names), accumulating PITFALLS/anti-pattern files and
decisions and lessons as bold labels or headings in three languages.

Every finding on it is one of the faults seeded on purpose (EXPECTED); everything else is
a pattern real owners keep, which no rule may report. ``pkm/`` is a PKM-style workspace
opened in Obsidian that writes `category:` for `type:` (a profile setting).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from test_rules_support import findings, isolated_openclaw  # noqa: F401

from vaultkit.vault.loader import load_vault

FIXTURES = Path(__file__).parent / "fixtures" / "workspaces"
MULTI = FIXTURES / "multilingual"
PKM = FIXTURES / "pkm"
GIT_RULES = ("journal-append-only", "mass-deletion", "memory-churn")

# (rule, path, line): the faults seeded in the multilingual workspace, one or two per rule
EXPECTED = {
    ("journal-filename", "memory/2026-03-17-1303.md", 1),  # a hand-made second file for a day
    ("journal-filename", "memory/2026-3-9.md", 1),  # no zero padding
    ("unknown-location", "memory/decision/pick-a-host.md", 1),  # one slip from decisions/
    ("unknown-location", "memory/research/ship-weekly.md", 1),  # type: decision in research/
    ("unknown-location", "2026-03-19.md", 1),  # a journal at the workspace root
    ("entry-too-short", "memory/2026-03-20.md", 45),  # "部署好了。"
    ("filler-entry", "memory/2026-03-20.md", 40),  # 系统空闲 / 无变化 / HEARTBEAT_OK
    ("broken-link", "memory/2026-03-20.md", 50),  # [[不存在的笔记]]
    ("nul-byte", "memory/2026-03-25.md", 4),  # a stray NUL in a journal
    ("missing-section", "memory/decisions/webhook-retries.md", 7),  # **背景：** only
    ("lesson-entry-undated", "memory/lessons/cron-timezones.md", 18),
    ("orphan-note", "memory/people/ivan.md", 1),  # nothing links to or names it
    ("index-stale", "memory/INDEX.md", None),  # not written yet: `vaultkit index` makes it
}


def _copy(tmp_path, source: Path = MULTI) -> Path:
    root = tmp_path / source.name
    shutil.copytree(source, root)
    return root


def _all(root: Path, *extra_ignore: str):
    """Every rule but the git ones (the fixture copy is no repository)."""
    from vaultkit.lint.engine import Selection, run_rules, select_rules
    from vaultkit.lint.rule import Context

    vault = load_vault(root, root=root, use_cache=False)
    rules = select_rules(vault.settings, Selection(select=["ALL"],
                                                   ignore=[*GIT_RULES, *extra_ignore]))
    return vault, run_rules(Context(vault), rules)


def test_multilingual_workspace_yields_only_the_seeded_faults(tmp_path):
    _, diags = _all(_copy(tmp_path))
    got = {(d.rule, d.path, d.line) for d in diags}
    assert got == EXPECTED
    assert len(diags) == len(EXPECTED)


def test_fixed_faults_leave_a_clean_workspace(tmp_path):
    """Remove the seeded faults: nothing at all is reported, so every other pattern in the
    workspace is left alone (no finding an owner would reject)."""
    root = _copy(tmp_path)
    for rel in ("memory/2026-03-17-1303.md", "memory/2026-3-9.md", "memory/decision/pick-a-host.md",
                "memory/research/ship-weekly.md", "2026-03-19.md", "memory/people/ivan.md"):
        (root / rel).unlink()
    journal = root / "memory/2026-03-20.md"
    text = journal.read_text(encoding="utf-8")
    text = text.replace("相关讨论见 2026-03-19 的会话记录。\n", "")
    text = text.replace("- 部署好了。\n", "- 部署好了：新版本修复了重复提醒，是因为去重键少了日期；明天观察一天再关单。\n")
    text = text.replace("- 系统空闲\n- 无变化\n- HEARTBEAT_OK\n", "- 邮件 3 封，已回复。\n- 日历无冲突。\n- 磁盘 41%。\n")
    text = text.replace("[[不存在的笔记]]", "[[vector-db-notes]]")
    journal.write_text(text, encoding="utf-8")
    nul = root / "memory/2026-03-25.md"
    nul.write_bytes(nul.read_bytes().replace(b"\x00", b""))
    decision = root / "memory/decisions/webhook-retries.md"
    decision.write_text(decision.read_text(encoding="utf-8")
                        + "\n**决策内容：** 失败后按 2、4、8 秒重试三次。\n", encoding="utf-8")
    lessons = root / "memory/lessons/cron-timezones.md"
    lessons.write_text(lessons.read_text(encoding="utf-8").replace(
        "## Backups must run while the agent sleeps", "## Backups must run while the agent sleeps "
        "(2026-03-18)"), encoding="utf-8")
    _, diags = _all(root, "index-stale")
    assert [(d.rule, d.path, d.line, d.message) for d in diags] == []


@pytest.mark.parametrize("path,layer", [
    ("AGENTS.md", "bootstrap"),
    ("BOOTSTRAP.md", "bootstrap"),
    ("memory/2026-03-20.md", "journal"),
    ("memory/2026-03-21.md", "journal"),  # bullets only, begins with a blank line
    ("memory/2026-03-15.md", "journal"),  # opens with '---' as a thematic break
    ("memory/2026-03-16.md", "session"),  # a plain-date file holding a session transcript
    ("memory/2026-03-18-0915.md", "session"),  # the hook's HHMM fallback
    ("memory/2026-03-19-request-timed-out-before-a-res.md", "session"),  # GMT+8
    ("memory/2026-03-19-telegram-setup.md", "session"),  # MSK, blank lines and a marker first
    ("memory/2026-03-22-weekly-review.md", "dated"),  # the agent's own dated topic note
    ("memory/2026-02-26_cycle01.md", "dated"),
    ("memory/2026-03-17-1303.md", "topics"),  # hand-made: journal-filename reports it
    ("memory/bots/helper/2026-03-20.md", "journal"),
    ("agents/researcher/memory/2026-03-20.md", "journal"),
    ("shared/planner/memory/2026-03-21.md", "journal"),
    ("memory/archive/2026-02/2026-02-03.md", "archive"),
    ("memory/dreaming/light/2026-05-06.md", "dreaming"),
    ("memory/research/vector-db-notes.md", "topics"),
    ("memory/schedules/2026-03-30.md", "topics"),
    ("memory/研究/模型对比.md", "topics"),
    ("memory/заметки/планы.md", "topics"),
    ("memory/PITFALLS.md", "topics"),
    ("skills/weather-brief/SKILL.md", "workspace"),
    ("hooks/session-notes/HOOK.md", "workspace"),
    ("canvas/notes.md", "workspace"),
    ("scripts/README.md", "working"),
    ("DECISIONS.md", "working"),
    (".learnings/ERRORS.md", "working"),
    ("templates/日记模板.md", "templates"),
])
def test_layers_of_a_real_workspace(path, layer):
    vault = load_vault(MULTI, root=MULTI, use_cache=False)
    assert vault.layer_of(vault.notes[path]) == layer


def test_backups_and_vendored_trees_are_not_read():
    vault = load_vault(MULTI, root=MULTI, use_cache=False)
    assert not [p for p in vault.notes if p.startswith(("backups/", "venv/", "node_modules/"))]


def test_a_time_in_the_name_without_the_header_is_no_session(tmp_path):
    """The header, not the name, makes a session file: the bullets must follow it too."""
    root = _copy(tmp_path)
    (root / "memory/2026-03-26-0800.md").write_text(
        "# Session: 2026-03-26 08:00:00 UTC\n\nuser: hi\n", encoding="utf-8")
    got = findings(root, "journal-filename")
    assert ("journal-filename", "memory/2026-03-26-0800.md", 1) in got


def test_strict_placement_reports_what_no_named_layer_claims(tmp_path):
    root = _copy(tmp_path)
    (root / "vaultkit.toml").write_text("strict-placement = true\n", encoding="utf-8")
    got = {p for r, p, _ in findings(root, "unknown-location")}
    assert {"scripts/README.md", "DECISIONS.md", "memory/research/vector-db-notes.md",
            "memory/PITFALLS.md", "tmp/scratch.md"} <= got
    # OpenClaw's own folders, named layers and session transcripts stay unreported
    assert not {p for p in got if p.startswith(("skills/", "hooks/", "canvas/", "memory/dreaming/"))}
    assert not {p for p in got if p in ("memory/2026-03-16.md", "memory/2026-03-18-0915.md",
                                        "memory/2026-03-22-weekly-review.md", "AGENTS.md")}
    # journal-filename keeps its own files: nothing reported twice
    assert "memory/2026-3-9.md" not in got


def test_unknown_location_messages(tmp_path):
    from test_rules_support import diagnostics

    root = _copy(tmp_path)
    messages = {d.path: d.message for d in diagnostics(root, "unknown-location")}
    assert messages["memory/decision/pick-a-host.md"] == (
        "folder 'decision' is one slip from 'decisions', a folder of profile 'openclaw'; "
        "move the file to memory/decisions/")
    assert messages["memory/research/ship-weekly.md"] == (
        "'decision' notes live in memory/decisions/, but this one is in memory/research/; "
        "move it there")
    assert "outside the memory folder" in messages["2026-03-19.md"]


@pytest.mark.parametrize("rel,meant", [
    ("memory/Decisions/a.md", True),  # case
    ("memory/lesson/a.md", True),  # one letter dropped
    ("memory/peolpe/a.md", True),  # two swapped
    ("memory/archives/a.md", True),  # one added
    ("MEMROY.md", True),
    ("memory.md", True),  # lower-case MEMORY.md
    ("AGENT.md", True),
    ("memroy/2026-03-01-x.md", True),  # the memory folder itself
    ("memory/research/a.md", False),
    ("memory/learning/a.md", False),
    ("memory/lessons-old/a.md", False),
    ("TODOS.md", False),  # two slips from TOOLS.md: a task board
    ("NOTE.md", False),
    ("docs/a.md", False),
    ("skill/SKILL.md", True),
])
def test_near_misses(make_vault, rel, meant):
    # (a folder with no agent file gets the obsidian profile: name the agent's)
    root = make_vault({rel: "# x\n", "vaultkit.toml": 'profile = "openclaw"\n'})
    got = findings(root, "unknown-location")
    assert bool(got) == meant, got


def test_files_over_100_kb_are_checked_quickly_and_quietly(tmp_path):
    """A 300 KB session transcript and a 150 KB bullet log: no finding, no error."""
    import time

    root = _copy(tmp_path)
    turns = "".join(f"user: 问题 {i}\nassistant: [[reply_to_current]] 回答 {i}，"
                    f"{{\"id\": {i}, \"ok\": true}}\n" for i in range(6000))
    (root / "memory/2026-03-27-long-chat.md").write_text(
        "# Session: 2026-03-27 10:00:00 UTC\n\n- **Session Key**: agent:main:main\n"
        "- **Session ID**: x\n- **Source**: webchat\n\n## Conversation Summary\n\n" + turns,
        encoding="utf-8")
    # (two rounds of different tasks: the same 1,440 lines twice would be a block written
    # again, which duplicate-block reports)
    log = "".join(f"- {h:02d}:{m:02d} 检查了第 {r}-{h * 60 + m} 号任务，状态正常，继续观察\n"
                  for r in range(2) for h in range(24) for m in range(60))
    (root / "memory/2026-03-28.md").write_text("# 2026-03-28\n\n" + log, encoding="utf-8")
    assert (root / "memory/2026-03-27-long-chat.md").stat().st_size > 100_000
    assert (root / "memory/2026-03-28.md").stat().st_size > 100_000
    start = time.perf_counter()
    got = [f for f in findings(root) if f[1] in ("memory/2026-03-27-long-chat.md",
                                                "memory/2026-03-28.md")]
    assert got == []
    assert time.perf_counter() - start < 30


def test_pkm_workspace_with_a_category_alias(tmp_path):
    root = _copy(tmp_path, PKM)
    _, diags = _all(root)
    # the hand-written memory/INDEX.md has no generated region yet; its fix appends one
    assert [(d.rule, d.path) for d in diags] == [("index-stale", "memory/INDEX.md")]
    (root / "vaultkit.toml").unlink()  # without the alias, `category:` is no `type:`
    _, diags = _all(root, "index-stale")
    assert sorted((d.rule, d.path, d.message) for d in diags) == [
        ("frontmatter-schema", "memory/decisions/选择本地向量库.md",
         "required property 'type' is missing (decision)"),
        ("frontmatter-schema", "memory/lessons/写入陷阱.md",
         "required property 'type' is missing (lesson)"),
    ]


def test_category_alias_is_checked_like_type(make_vault):
    root = make_vault({
        "vaultkit.toml": "[property-aliases]\ntype = ['category']\n",
        "memory/decisions/a.md": "---\ndate: 2026-03-01\ncategory: lesson\nstatus: active\n"
                                 "tags: [x]\n---\n# A\n\n## Context\nx\n\n## Decision\ny\n",
        "memory/decisions/b.md": "---\ndate: 2026-03-01\ncategory: 技术\nstatus: active\n"
                                 "tags: [x]\n---\n# B\n\n## Context\nx\n\n## Decision\ny\n",
    })
    from test_rules_support import diagnostics

    got = [(d.path, d.line, d.message) for d in diagnostics(root, "type-mismatch")]
    # a free-form category names no type: no claim to check
    assert got == [("memory/decisions/a.md", 3, "'category: lesson' but the note is in "
                    "memory/decisions/ (type decision); move it to memory/lessons/ or set "
                    "'type: decision'")]


SECTION_CASES = [
    ("English labels, colon inside", "**Context:** x\n**Decision:** y\n", []),
    ("English labels, colon outside", "**Context**: x\n\n**Decision**: y\n", []),
    ("Chinese labels, full-width colon inside", "**背景：** x\n**决策内容：** y\n", []),
    ("Chinese labels, colon outside", "**背景**：x\n**决策**：y\n", []),
    ("Russian labels in bullets", "- **Контекст:** x\n- **Решение:** y\n", []),
    ("Chinese headings", "## 背景\nx\n\n## 决策内容\n### 1. 先做\ny\n", []),
    ("emoji and numbering on headings", "## 📌 1. Context\nx\n\n## ✅ Decision:\ny\n", []),
    ("label with its text on the next lines", "**Context:**\nx\n\n**Decision:**\n- y\n", []),
    ("empty label", "**Context:**\n**Decision:** y\n", [8]),
    ("label without a colon is no section", "**Context** x\n**Decision:** y\n", [7]),
    ("a label inside code does not count", "```\n**Context:** x\n```\n**Decision:** y\n", [7]),
]


@pytest.mark.parametrize("body,lines", [c[1:] for c in SECTION_CASES],
                         ids=[c[0] for c in SECTION_CASES])
def test_sections_as_people_write_them(make_vault, body, lines):
    head = "---\ndate: 2026-03-01\ntype: decision\nstatus: active\ntags: [x]\n---\n# T\n"
    root = make_vault({"memory/decisions/a.md": head + body})
    assert findings(root, "missing-section") == [
        ("missing-section", "memory/decisions/a.md", ln) for ln in lines]


JOURNAL_CASES = [
    # (case, journal body, rule, lines)
    ("bullet log lines are not entries", "- 08:10 早报\n- 08:30 备份正常\n", "entry-too-short", []),
    ("a day heading over bullets is a log", "## 2026-04-27\n- a\n- b\n", "entry-too-short", []),
    ("timed bullets under a heading are a log",
     "## 上午\n- 09:00 早报\n- 09:30 回邮件\n", "entry-too-short", []),
    ("a long log is not one long entry",
     "## 2026-04-27\n" + "".join(f"- 1{i % 10}:00 item {i}\n" for i in range(30)),
     "entry-too-long", []),
    ("a log item over the limit",
     "## 2026-04-27\n- 09:00 paste\n" + "".join(f"  - line {i}\n" for i in range(31)),
     "entry-too-long", [4]),
    ("an all-filler log is reported once", "## 2026-04-27\n- HEARTBEAT_OK\n- 无变化\n",
     "filler-entry", [3]),
    ("a log with one real item is not filler", "- 09:00 HEARTBEAT_OK\n- 10:00 修好了备份\n",
     "filler-entry", []),
    ("### counts inside its ##", "## 09:00 - 部署\n### 步骤\n- a\n### 结果\n- b\n",
     "entry-too-short", []),
    ("one full line says enough",
     "## 14:30 - Heartbeat\n- Checked the inbox: two mails from Alice about the invoice; "
     "replied with the PDF and set a reminder for Friday.\n", "entry-too-short", []),
    ("a few words do not", "## 14:30 - Deploy\n- Done.\n", "entry-too-short", [3]),
    ("dreaming sections are runtime output",
     "## Light Sleep\n" + "".join(f"- Candidate: c{i}\n  - confidence: 0.5\n" for i in range(10)),
     "entry-too-long", []),
    ("the level is found per file: ### without ##",
     "### 09:00 — a\n- x\n", "entry-too-short", [3]),
]


@pytest.mark.parametrize("body,rule,lines", [c[1:] for c in JOURNAL_CASES],
                         ids=[c[0] for c in JOURNAL_CASES])
def test_journal_entries_as_people_write_them(make_vault, body, rule, lines):
    root = make_vault({"memory/2026-04-27.md": "# 2026-04-27\n\n" + body})
    assert findings(root, rule) == [(rule, "memory/2026-04-27.md", ln) for ln in lines]


@pytest.mark.parametrize("heading", [
    "02:41 - title", "21:19 — title", "【21:30 · title】", "上午 09:00 - Heartbeat",
    "Proactive Work Session (5:00 PM)", "title (14:00-16:30)", "凌晨（~04:00-05:00）",
    "09:30:12 — title",
])
def test_time_forms_are_entries(make_vault, heading):
    root = make_vault({"memory/2026-04-27.md": f"# 2026-04-27\n\n## {heading}\n- x\n"})
    assert findings(root, "entry-too-short") == [("entry-too-short", "memory/2026-04-27.md", 3)]


def test_session_transcripts_are_not_linted(tmp_path):
    """Runtime output: no entries measured, no links checked, no filler, no file-name error."""
    root = _copy(tmp_path)
    got = [f for f in findings(root) if f[1].startswith(("memory/2026-03-16", "memory/2026-03-18",
                                                         "memory/2026-03-19-"))]
    assert got == []


def test_not_link_phrases_extend_from_vaultkit_toml(make_vault):
    root = make_vault({"vaultkit.toml": "[phrases]\nnot-link = ['re:^TODO']\n",
                       "memory/semantic/a.md": "[[TODO later]] [[reply_to_current]] [[gone]]\n"})
    assert [f[2] for f in findings(root, "broken-link")] == [1]
    from test_rules_support import diagnostics

    (d,) = diagnostics(root, "broken-link")
    assert "'gone'" in d.message


def test_audit_on_a_workspace_without_obsidian(tmp_path):
    from vaultkit.audit import CHECK_IDS, run_audit

    vault = load_vault(MULTI, root=MULTI, use_cache=False)
    (check,) = run_audit(vault, skip=set(CHECK_IDS) - {"obsidian"})
    assert check.id == "obsidian" and check.status == "pass"


def test_docs_page_shows_the_real_output(tmp_path, monkeypatch, capsys):
    """docs/workspaces.md quotes `vaultkit check` on the multilingual workspace verbatim."""
    import re

    from vaultkit.cli import main

    page = (Path(__file__).parent.parent / "docs" / "workspaces.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- workspace-check:start -->\n```\n\$ vaultkit check\n(.*?)```\n"
                      r"<!-- workspace-check:end -->", page, re.S)
    assert block, "docs/workspaces.md lost its example block"
    root = _copy(tmp_path)
    monkeypatch.chdir(root)
    assert main(["check", "--no-cache"]) == 1
    assert capsys.readouterr().out == block.group(1)


@pytest.mark.parametrize("existing,marks", [
    ("# 2026-04-27\n\n## 09:00 - 早报\n- 已发\n- 小雨\n- 无异常\n", "##"),  # most real journals
    ("# 2026-04-27\n\n### 09:00 — Morning\n- a\n- b\n- c\n", "###"),  # the seeds' shape
    (None, "###"),  # a new journal
])
def test_log_appends_at_the_journals_own_entry_level(make_vault, existing, marks):
    """An entry at another level would be read as part of the entry above it."""
    from vaultkit.vault.profile import load_settings
    from vaultkit.memory.journal import append_entry

    files = {"memory/2026-04-26.md": "# 2026-04-26\n"}
    if existing is not None:
        files["memory/2026-04-27.md"] = existing
    root = make_vault(files)
    result = append_entry(root, load_settings(root), text="Deploy\nShipped the fix.\nWhy: "
                          "reminders doubled.\nNext: watch a day.", date="2026-04-27",
                          time="14:30")
    assert result.heading == f"{marks} 14:30 — Deploy"
    text = (root / "memory/2026-04-27.md").read_text(encoding="utf-8")
    assert f"\n{marks} 14:30 — Deploy\n" in text
    assert findings(root, "entry-too-short", "entry-too-long") == []


@pytest.mark.parametrize("line,reported", [
    ("## 【21:30 · 复盘】", True),
    ("## 上午 09:00 - Heartbeat", True),
    ("## Promoted From Short-Term Memory (2026-05-06)", False),  # written by dreaming
    ("## Rate Limiting Investigation (2026-02-28)", False),
    ("## 📝 2026-03-24 归档", False),
])
def test_daily_records_in_memory_md_in_real_time_forms(make_vault, line, reported):
    root = make_vault({"MEMORY.md": f"# MEMORY.md - 长期记忆\n\n{line}\n- 内容\n"})
    assert bool(findings(root, "daily-record-in-memory")) == reported


@pytest.mark.parametrize("toml,needle", [
    ("strict-placement = 'maybe'\n", "vaultkit.toml: strict-placement:"),
    ("[property-aliases]\ntype = 'category'\n", "vaultkit.toml: property-aliases.type:"),
    ("[[layers]]\nname = 's'\npaths = ['x/*.md']\nheader = ['(']\n",
     "vaultkit.toml: layers.0.header: regex '(' does not compile"),
])
def test_bad_workspace_settings_are_one_line_errors(make_vault, capsys, toml, needle):
    from vaultkit.cli import main

    root = make_vault({"vaultkit.toml": toml, "memory/2026-03-01.md": "# x\n"})
    assert main(["check", str(root), "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1, err


def test_a_layer_known_by_its_header_from_vaultkit_toml(make_vault):
    """Users can add their own content-recognised layer: here a ByteRover context file."""
    root = make_vault({
        "vaultkit.toml": "[[layers]]\nname = 'byterover'\npaths = ['memory/**/*.md']\n"
                         "header = ['^<!-- brv:context -->$']\n",
        "memory/2026-03-01-ctx.md": "<!-- brv:context -->\n# ctx\n",
        "memory/2026-03-01-note.md": "# a note\n",
    })
    vault = load_vault(root, root=root, use_cache=False)
    # a comment-only first line is skipped when opening lines are read: no match
    assert vault.layer_of(vault.notes["memory/2026-03-01-ctx.md"]) == "dated"
    (root / "vaultkit.toml").write_text("[[layers]]\nname = 'byterover'\n"
                                        "paths = ['memory/**/*.md']\nheader = ['^# ctx$']\n")
    vault = load_vault(root, root=root, use_cache=False)
    assert vault.layer_of(vault.notes["memory/2026-03-01-ctx.md"]) == "byterover"
    assert vault.layer_of(vault.notes["memory/2026-03-01-note.md"]) == "dated"


def _layers_one_by_one(profile, path):
    """Every layer matcher tried on ``path`` in order: what the folder plans stand for."""
    from vaultkit.vault.profile import _dates_real
    from vaultkit.vault.scan import in_skipped_folder

    if in_skipped_folder(path):
        return ()
    out = []
    for layer, literals, patterns, excludes, header in profile.layer_matchers:
        found = path in literals or any(
            path.startswith(prefix) and pattern.match(path) and _dates_real(pattern, path)
            for prefix, pattern in patterns)
        if not found or any(x.match(path) and _dates_real(x, path) for x in excludes):
            continue
        out.append((layer.name, header))
        if not header:
            break
    return tuple(out)


def test_a_paths_layers_are_looked_up_in_its_folders_plan(make_vault):
    """A path is tried against what can claim a path in its folder (literal paths there,
    patterns whose literal start the folder allows), in the layers' order: the same layers
    as trying every matcher, with fewer tried (a cold check asks for every note)."""
    root = make_vault({
        "vaultkit.toml": "[[layers]]\nname = 'dated-notes'\npaths = ['notes/2026-*.md', "
                         "'notes/index.md']\nexclude = ['notes/2026-13*.md']\n"
                         "[[layers]]\nname = 'ctx'\npaths = ['memory/**/*.md']\n"
                         "header = ['^# ctx$']\n",
        "notes/2026-01-05.md": "# a\n", "memory/decisions/a.md": "# ctx\n"})
    vault = load_vault(root, root=root, use_cache=False)
    profile = vault.profile
    paths = [f"{folder}{name}" for folder in (
        "", "notes/", "notes/sub/", "memory/", "memory/decisions/", "memory/daily/",
        "memory/archive/2025/", "memory/bots/b1/", "agents/a/memory/", "skills/x/", "x/",
        ".git/", "templates/", "memory/dreaming/") for name in (
        "2026-01-05.md", "2026-02-30.md", "2026-13-01.md", "2026-01-05-older.md",
        "2026-01-05-1230.md", "2026-01-05-a.md", "2026-01-05_x.md", "MEMORY.md",
        "AGENTS.md", "index.md", "INDEX.md", "x.md", "SKILL.md", "a.txt")]
    assert [profile._path_layers(p) for p in paths] == \
        [_layers_one_by_one(profile, p) for p in paths]
    assert profile._path_layers("notes/2026-01-05.md")[0][0] == "dated-notes"
    assert profile._path_layers("notes/2026-13-01.md") != \
        profile._path_layers("notes/2026-12-01.md")
    everything = sum(len(m[2]) for m in profile.layer_matchers)
    decisions = profile._folder_plan("memory/decisions/")
    assert sum(len(p[2]) for p in decisions) < everything / 2
    assert "dated-notes" not in [layer.name for layer, *_ in decisions]


def test_layer_patterns_are_compiled_when_a_path_reaches_them(make_vault):
    """A commit hook asks the layers of a few paths: only the patterns their folders' plans
    try are compiled (the pack has some thirty, ~0.4 M instructions each to compile), and
    each answers as the compiled pattern does."""
    import re

    from vaultkit.vault.profile import _pattern_regex

    root = make_vault({"memory/2026-01-05.md": "# a\n"})
    profile = load_vault(root, root=root, use_cache=False).profile
    regexes = [p for _, _, patterns, excludes, header in profile.layer_matchers
               for p in [x for _, x in patterns] + excludes + header]
    assert len(regexes) > 20
    assert not [p for p in regexes if "_compiled" in vars(p)]
    profile._path_layers("memory/2026-01-05.md")
    compiled = [p for p in regexes if "_compiled" in vars(p)]
    assert 0 < len(compiled) < len(regexes) / 2
    for pattern in compiled:
        assert pattern.compiled is re.compile(*pattern._args)
    assert _pattern_regex("memory/**/{date}-*.md").endswith(r"[^/]*\.md\Z")
