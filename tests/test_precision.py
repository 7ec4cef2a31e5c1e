"""Precision on real agent workspaces and plain Obsidian vaults: what the default rules
deliberately leave alone, each pattern a regression test, and every seeded fault still
found.

``tests/fixtures/workspaces/agent-precision/`` is an agent workspace (kept in Obsidian)
holding every pattern real owners keep that the rules used to report: topic sections in a
timed journal, a heading grouping small timed events, a journal of one-line bullet
entries, heading-only entries as `vaultkit log` writes them, file stamps and dated durable
headings in MEMORY.md, a knowledge note filed in lessons/, a `# Decision: …` title, a
vendored package under tmp/, a static site's routes, placeholder links, a block id before
a list item's tab-indented embed, Obsidian daily notes in Daily/, `.agents/skills/`.
``obsidian-plain/`` is a plain Obsidian vault with no `.obsidian/` folder at all. The
seeded faults of both are ``bench/precision.py``'s ``TRUE`` sets, which also make the
per-rule table of docs/precision.md.
"""

from __future__ import annotations

import json

import shutil
import sys
from pathlib import Path

import pytest
from test_rules_support import diagnostics, findings, isolated_openclaw  # noqa: F401

from vaultkit.cli import main
from vaultkit.vault.loader import load_vault

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import precision  # noqa: E402

GIT_RULES = ("journal-append-only", "mass-deletion", "memory-churn")


def _copy(tmp_path, name: str) -> Path:
    root = tmp_path / name
    shutil.copytree(precision.FIXTURES[name], root)
    return root


def _all(root: Path):
    from vaultkit.lint.engine import Selection, run_rules, select_rules
    from vaultkit.lint.rule import Context

    vault = load_vault(root, root=root, use_cache=False)
    rules = select_rules(vault.settings, Selection(ignore=list(GIT_RULES)))  # the defaults
    return vault, run_rules(Context(vault), rules)


@pytest.mark.parametrize("name", ["agent-precision", "obsidian-plain"])
def test_only_the_seeded_faults_are_found(tmp_path, name):
    vault, diags = _all(_copy(tmp_path, name))
    assert {(d.rule, d.path, d.line) for d in diags} == precision.TRUE[name]
    assert len(diags) == len(precision.TRUE[name])


def test_the_table_knows_the_seeded_faults_of_the_older_fixtures():
    """bench/precision.py's truth for the multilingual and realistic fixtures is the one
    their own tests hold."""
    from test_rules_realistic import EXPECTED as REALISTIC
    from test_workspaces import EXPECTED as MULTI

    from vaultkit.lint.rules._index import OFF_BY_DEFAULT

    def default(found):  # (the older tests select every rule)
        return {f for f in found if f[0] not in OFF_BY_DEFAULT}

    assert precision.TRUE["multilingual"] == default(MULTI)
    assert precision.TRUE["realistic"] - {("index-stale", "memory/INDEX.md", 1)} \
        == default(REALISTIC)


def test_profiles_follow_what_the_folder_is(tmp_path):
    agent = load_vault(precision.FIXTURES["agent-precision"],
                       root=precision.FIXTURES["agent-precision"], use_cache=False)
    plain = load_vault(precision.FIXTURES["obsidian-plain"],
                       root=precision.FIXTURES["obsidian-plain"], use_cache=False)
    assert (agent.profile.name, plain.profile.name) == ("openclaw", "obsidian")
    # the user can say which: in vaultkit.toml, or on the command line
    root = _copy(tmp_path, "obsidian-plain")
    (root / "vaultkit.toml").write_text('profile = "openclaw"\n', encoding="utf-8")
    assert load_vault(root, root=root, use_cache=False).profile.name == "openclaw"
    (root / "vaultkit.toml").unlink()
    assert load_vault(root, root=root, profile="openclaw", use_cache=False).profile.name \
        == "openclaw"


def test_a_plain_vault_named_on_the_command_line_is_a_vault(tmp_path, capsys, monkeypatch):
    root = _copy(tmp_path, "obsidian-plain")
    assert not (root / ".obsidian").exists()
    monkeypatch.chdir(tmp_path)
    assert main(["check", "obsidian-plain", "--no-cache"]) == 1  # frontmatter-invalid
    out = capsys.readouterr().out
    assert "obsidian-plain/Projects/Recipes.md:2:1: VK002 frontmatter-invalid" in out
    assert "Found 4 findings (1 error, 3 warnings)." in out
    assert main(["check", "--root", str(root), str(root), "--no-cache"]) == 1
    capsys.readouterr()
    monkeypatch.chdir(root)
    assert main(["check", ".", "--no-cache"]) == 1  # "." named is named too
    capsys.readouterr()
    # not named (the current folder, found by walking up): still not a vault
    assert main(["check", "--no-cache"]) == 2
    assert "not a vault" in capsys.readouterr().err


# -- entries ---------------------------------------------------------------------------

def _journal(make_vault, body: str, rule: str):
    root = make_vault({"memory/2026-04-02.md": "# 2026-04-02\n\n" + body})
    return [ln for _, _, ln in findings(root, rule)]


TIMED = "## 14:30 — Checkout timeouts\n- a\n- b\n- c\n\n"


@pytest.mark.parametrize("section", ["## Next Step\n- lower it again\n",
                                     "## 遗留问题\n- 代理超时\n",
                                     "## Open questions\n" + "- q?\n" * 16])
def test_topic_sections_of_a_timed_journal_are_no_entries(make_vault, section):
    assert _journal(make_vault, TIMED + section, "entry-too-short") == []
    assert _journal(make_vault, TIMED + section, "entry-too-long") == []


def test_a_named_topic_section_is_no_entry_in_an_untimed_journal_either(make_vault):
    body = "## Deploy\n- a\n- b\n- c\n\n## Next steps\n- x\n"
    assert _journal(make_vault, body, "entry-too-short") == []
    # an ordinary untimed section is still an entry
    assert _journal(make_vault, body.replace("Next steps", "Deploy again"),
                    "entry-too-short") == [8]


def test_a_grouping_heading_over_timed_events_is_not_one_long_entry(make_vault):
    events = "".join(f"### 0{i}:10 — event {i}\n- done {i}\n- why {i}\n- next {i}\n"
                     for i in range(6))
    body = "## Morning\n" + events
    assert _journal(make_vault, body, "entry-too-long") == []
    # each event is judged: an event of 31 lines is still too long
    long = body + "### 09:40 — paste\n" + "".join(f"- line {i}\n" for i in range(31))
    assert _journal(make_vault, long, "entry-too-long") == [28]


def test_one_line_entries_are_a_journals_style_not_its_fault(make_vault):
    style = "".join(f"## 1{i}:00 — Check {i}\n- ok\n\n" for i in range(4))
    assert _journal(make_vault, style, "entry-too-short") == []
    # in a journal of full entries a one-liner still stands out
    full = "".join(f"## 1{i}:00 — Work {i}\n- a\n- b\n- c\n\n" for i in range(3))
    assert _journal(make_vault, full + "## 16:00 — Deploy\n- Done.\n",
                    "entry-too-short") == [18]


# -- MEMORY.md -------------------------------------------------------------------------

@pytest.mark.parametrize("line,reported", [
    ("> Last updated: 2026-04-04 21:40", False),
    ("- Old notes archived at 2026-03-31 23:00 into the archive.", False),
    ("最后更新：2026-04-04 21:40", False),
    ("## 2026-03-01 Moved the shop's database to Postgres", False),
    ("## 2026-03-24 归档", False),
    ("## VPS migrated to the new host (2026-02-14 14:30)", False),  # a durable heading
    ("## 📅 2026-03-02 14:30 Gateway moved to port 18789", False),
    ("*Last refreshed: 2026-04-04 21:40 by the nightly consolidation*", False),
    ("最近更新：2026-04-04 21:40", False),
    ("## 2026-03-14 (Friday)", True),  # a day heading: a journal's
    ("## 2026-03-14", True),
    ("- Deployed at 2026-03-14 10:30 after the fix", True),  # a record's stamp
])
def test_stamps_and_dated_durable_headings(make_vault, line, reported):
    root = make_vault({"MEMORY.md": f"# MEMORY.md - Long-Term Memory\n\n{line}\n- x\n"})
    assert bool(findings(root, "daily-record-in-memory")) == reported


# -- lessons and decisions ---------------------------------------------------------------

LESSON = "---\ntype: lesson\n---\n# Docker networking\n\n"


@pytest.mark.parametrize("body,lines", [
    ("## Overview\nx\n\n## Commands\ny\n\n## Gotchas\nz\n", []),  # a knowledge note
    ("**Date:** 2026-03-02\n\n## What happened\nx\n\n## Fix\ny\n", []),  # one dated lesson
    ("## Trap (2026-03-02)\nx\n\n## Another trap\ny\n", [9]),  # a list being kept
    ("## Write vs Edit Trap\nx\n", [6]),  # one undated lesson: the seeds' form
])
def test_a_knowledge_note_in_lessons_is_no_list_of_lessons(make_vault, body, lines):
    root = make_vault({"memory/lessons/docker.md": LESSON + body})
    assert [ln for _, _, ln in findings(root, "lesson-entry-undated")] == lines


def test_a_lesson_dated_by_its_properties(make_vault):
    root = make_vault({"memory/lessons/docker.md": "---\ntype: lesson\ndate: 2026-03-02\n---\n"
                                                   "# Docker\n\n## Trap\nx\n"})
    assert findings(root, "lesson-entry-undated") == []


DECISION = "---\ndate: 2026-03-01\ntype: decision\nstatus: active\ntags: [x]\n---\n"


@pytest.mark.parametrize("title,lines", [
    ("# Decision: Use Postgres for the shop", []),
    ("# 决策：迁移到 Postgres", []),
    ("# Решение: перейти на Postgres", []),
    ("# Decision:", [7]),  # a label with nothing after it decides nothing
    ("# Use Postgres", [7]),
])
def test_a_decision_title_holds_the_decision(make_vault, title, lines):
    root = make_vault({"memory/decisions/a.md": DECISION + title + "\n\n**Context:** why\n"})
    assert [ln for _, _, ln in findings(root, "missing-section")] == lines


# -- links -----------------------------------------------------------------------------

@pytest.mark.parametrize("text,reported", [
    ("[text](url)", False),
    ("[name](link)", False),
    ("[x](...)", False),
    ("[x](<your-note>)", False),
    ("[x](your-file.md)", False),
    ("[x](urls.md)", True),  # not a placeholder word
    ("[Intro](/guide/intro)", False),  # a static site's route
    ("[Pay](/guide/payments/)", False),
    ("[Gone](/memory/gone.md)", True),  # a vault-absolute file that is missing
    ("[[gone]]", True),
])
def test_placeholders_and_routes(make_vault, text, reported):
    root = make_vault({"memory/semantic/a.md": f"# A\n\n{text}\n"})
    assert bool(findings(root, "broken-link")) == reported


def test_vendored_folders_are_no_link_sources(make_vault):
    root = make_vault({"memory/x.md": "# x\n",
                       "tmp/pkg/README.md": "[API](docs/api.md) [[Contributing]]\n",
                       "vendor/lib/docs/a.md": "[[nowhere]]\n",
                       "notes/a.md": "[[nowhere]]\n"})
    assert findings(root, "broken-link") == [("broken-link", "notes/a.md", 1)]
    (root / "vaultkit.toml").write_text("[links]\nexclude = ['notes/**']\n")
    assert findings(root, "broken-link") == []


def test_only_a_note_with_a_broken_link_is_matched_against_the_link_excludes(make_vault,
                                                                             monkeypatch):
    from vaultkit.vault.profile import LinkSettings

    asked = []
    real = LinkSettings.excluded
    monkeypatch.setattr(LinkSettings, "excluded",
                        lambda self, path: asked.append(path) or real(self, path))
    root = make_vault({"memory/x.md": "# x\n", "notes/ok.md": "[[memory/x]] [[x]]\n",
                       "notes/a.md": "[[x]] [[nowhere]] [[elsewhere]]\n",
                       "vaultkit.toml": "[links]\nexclude = ['tmp/**']\n"})
    assert findings(root, "broken-link") == [("broken-link", "notes/a.md", 1)] * 2
    assert asked == ["notes/a.md"]  # once, at its first broken link; never for notes/ok.md


@pytest.mark.parametrize("setting,lines", [("report", [3, 4, 5, 6]), ("allow", [4, 5, 6])])
def test_forward_links_setting(make_vault, setting, lines):
    root = make_vault({
        "vaultkit.toml": f"[links]\nforward-links = '{setting}'\n",
        "memory/x.md": "# X\n\n## Here\n",
        "notes/a.md": "# A\n\n[[not yet]]\n[[memory/x#There]]\n[[memory/x#^nope]]\n"
                      "![[missing.png]]\n"})
    assert [ln for _, _, ln in findings(root, "broken-link")] == lines


def test_a_bad_links_setting_is_a_one_line_error(make_vault, capsys):
    root = make_vault({"vaultkit.toml": "[links]\nforward = 'allow'\n", "memory/x.md": "# x\n"})
    assert main(["check", str(root), "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert "links: unknown key 'forward'" in err and err.count("\n") == 1
    (root / "vaultkit.toml").write_text("[links]\nforward-links = 'maybe'\n")
    assert main(["check", str(root), "--no-cache"]) == 2
    assert "forward-links" in capsys.readouterr().err


def test_a_block_id_before_an_indented_embed_is_kept(make_vault):
    root = make_vault({
        "memory/homelab.md": "# Homelab\n\n- Rack ^rack\n\t![[rack.png]]\n- Switch\n",
        "memory/rack.png": b"PNG",
        "memory/semantic/a.md": "# A\n\n[[homelab#^rack]]\n"})
    assert findings(root, "broken-link") == []


# -- placement ---------------------------------------------------------------------------

def test_obsidian_daily_notes_are_not_misplaced_journals(make_vault):
    files = {"MEMORY.md": "# M\n", "Daily/2026-03-19.md": "# 2026-03-19\n",
             ".agents/skills/deploy/SKILL.md": "# Deploy\n"}
    root = make_vault(files)
    # without the daily-notes setting, a journal-named file in Daily/ is one to move
    assert findings(root, "unknown-location") == [("unknown-location", "Daily/2026-03-19.md", 1)]
    (root / ".obsidian" / "daily-notes.json").write_text('{"folder": "Daily"}')
    assert findings(root, "unknown-location") == []


# -- suggestions -------------------------------------------------------------------------

def test_a_missing_index_is_a_suggestion_in_every_format(tmp_path, capsys):
    import json

    root = _copy(tmp_path, "agent-precision")
    args = ["check", str(root), "--no-cache", "--select", "index-stale"]
    assert main(args + ["--fail-on", "warning"]) == 0  # never fails a run
    out = capsys.readouterr().out
    assert out.endswith("Found 1 finding (0 errors, 0 warnings, 1 info).\n")
    assert main(args + ["--format", "github"]) == 0
    assert capsys.readouterr().out.startswith("::notice file=")
    assert main(args + ["--format", "sarif"]) == 0
    sarif = json.loads(capsys.readouterr().out)
    assert sarif["runs"][0]["results"][0]["level"] == "note"
    # who wants the generated index held strictly says so
    (root / "vaultkit.toml").write_text('[severity]\nindex-stale = "error"\n')
    assert main(args) == 1


# -- rules off by default ------------------------------------------------------------------

@pytest.mark.parametrize("rule,files", [
    # routine one-line events and labelled parts: a journal's own way of writing
    ("entry-too-short", {"memory/2026-04-02.md": "# 2026-04-02\n\n## 09:00 — Work\n- a\n- b\n"
                         "- c\n\n### 13:10 Camera\n- Front door camera back online.\n\n"
                         "## Related Projects\n- shop\n\n## 16:00 — Deploy\n- Done.\n"}),
    # a decision kept without links to it, found by search
    ("orphan-note", {"memory/decisions/use-postgres.md":
                     "---\ndate: 2026-03-01\ntype: decision\nstatus: active\ntags: [db]\n---\n"
                     "# Use Postgres\n\n**Context:** x\n\n**Decision:** y\n"}),
])
def test_rules_off_by_default_run_only_when_selected(make_vault, capsys, rule, files):
    root = make_vault(files)
    assert main(["check", str(root), "--no-cache", "--no-baseline", "--format", "json",
                 "--exit-zero"]) == 0
    import json

    assert rule not in {d["rule"] for d in json.loads(capsys.readouterr().out)}
    assert findings(root, rule)  # selected by name, it runs
    (root / "vaultkit.toml").write_text(f'extend-select = ["{rule}"]\n', encoding="utf-8")
    assert main(["check", str(root), "--no-cache", "--no-baseline", "--format", "json",
                 "--exit-zero"]) == 0
    assert rule in {d["rule"] for d in json.loads(capsys.readouterr().out)}


# -- entry-too-long: only the clear outliers of the owner's own style -----------------------

def _lines(n: int, word: str = "point") -> str:
    return "".join(f"- {word} {i}\n" for i in range(n))


@pytest.mark.parametrize("body,lines", [
    # an ordinary session log of 16-30 lines with ### parts
    ("## 09:30 — Supplier call\n### Said\n" + _lines(10) + "### Did\n" + _lines(10), []),
    # a part of the day over topical sections: each section is an entry
    ("## 凌晨（~02:00-05:00）\n### 备份\n" + _lines(14) + "### 代理\n" + _lines(14)
     + "### 价格\n" + _lines(14), []),
    ("## Afternoon\n### Backups\n" + _lines(20) + "### Prices\n" + _lines(20), []),
    ("## Вечер\n### Камера\n" + _lines(20) + "### Склад\n" + _lines(20), []),
    # a benchmark table is data, not lines to trim
    ("## 11:00 — Oven benchmark\nMeasured every two minutes.\n\n| min | °C |\n|---|---|\n"
     + "".join(f"| {i} | {200 + i} |\n" for i in range(40)), []),
    # a clear outlier is still reported: a pasted log, or a section of a part of the day
    ("## 15:20 — Pasted the migration output\n" + _lines(31, "step"), [3]),
    ("## Afternoon\n### Backups\n" + _lines(31), [4]),
])
def test_long_entries_as_owners_write_them(make_vault, body, lines):
    assert _journal(make_vault, body, "entry-too-long") == lines


def test_a_guide_in_lessons_is_not_measured_as_entries(make_vault):
    guide = ("## Overview\nWritten on 2026-03-30, after the move to the NAS.\n\n"
             "## Components\n" + _lines(40) + "\n## Data flow\nx\n")
    root = make_vault({"memory/lessons/architecture.md": LESSON + guide})
    assert findings(root, "entry-too-long") == []
    # a dated lesson of that length is still one to split
    root = make_vault({"memory/lessons/cron.md": LESSON + "## Trap (2026-03-02)\n" + _lines(31)})
    assert findings(root, "entry-too-long") == [("entry-too-long", "memory/lessons/cron.md", 6)]


def test_a_no_op_heartbeat_is_reported_once_with_the_right_advice(make_vault):
    body = TIMED + "## 21:00 — Heartbeat\n- nothing to report\n"
    assert _journal(make_vault, body, "filler-entry") == [8]
    assert _journal(make_vault, body, "entry-too-short") == []  # not twice


# -- frontmatter-missing: a convention, not a blocker -------------------------------------

@pytest.mark.parametrize("raw,expected", [
    (b"# Write vs Edit\n\n**What happened:** x\n",
     b"---\ntype: lesson\n---\n# Write vs Edit\n\n**What happened:** x\n"),
    (b"\xef\xbb\xbf# Write vs Edit\r\n\r\nx\r\n",
     b"\xef\xbb\xbf---\r\ntype: lesson\r\n---\r\n# Write vs Edit\r\n\r\nx\r\n"),
])
def test_a_typed_note_without_frontmatter_is_a_warning_the_fix_types(make_vault, capsys,
                                                                      raw, expected):
    root = make_vault({"memory/lessons/write-vs-edit.md": raw})
    (d,) = diagnostics(root, "frontmatter-missing")
    assert (d.severity, d.fixable) == ("warning", True)
    # the first commit after adoption is not refused for it
    args = ["check", str(root), "--no-cache", "--no-baseline", "--select", "frontmatter-missing"]
    assert main(args) == 0
    capsys.readouterr()
    assert main(args + ["--fix"]) == 0
    assert (root / "memory/lessons/write-vs-edit.md").read_bytes() == expected
    assert findings(root, "frontmatter-missing", "frontmatter-schema", "type-mismatch") == []


def test_the_fix_types_a_decision_by_its_folder(make_vault, capsys):
    root = make_vault({"memory/decisions/use-postgres.md": "# Use Postgres\n"})
    assert main(["check", str(root), "--no-cache", "--no-baseline", "--fix",
                 "--select", "frontmatter-missing"]) == 0
    text = (root / "memory/decisions/use-postgres.md").read_text()
    assert text == "---\ntype: decision\n---\n# Use Postgres\n"
    # the fix must not turn one warning into errors that refuse the next commit: the
    # properties the owner has not filled in yet are warnings; a wrong value is an error
    capsys.readouterr()
    assert main(["check", str(root), "--no-cache", "--no-baseline", "--format", "json",
                 "--select", "frontmatter-schema"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found and {d["severity"] for d in found} == {"warning"}
    assert all("is missing (decision)" in d["message"] for d in found)
    (root / "memory/decisions/use-postgres.md").write_text(
        "---\ntype: decision\nstatus: done\n---\n# Use Postgres\n")
    assert main(["check", str(root), "--no-cache", "--no-baseline", "--format", "json",
                 "--select", "frontmatter-schema"]) == 1
    found = json.loads(capsys.readouterr().out)
    assert [d["severity"] for d in found if "'status' is 'done'" in d["message"]] == ["error"]


# -- skills ---------------------------------------------------------------------------------

def test_a_skill_installed_under_another_folder_name_is_loaded_by_its_name(make_vault):
    root = make_vault({"SOUL.md": "# Soul\n",
                       "skills/gog-1.2.0/SKILL.md": "---\nname: gog\ndescription: Google "
                                                    "Workspace from the command line.\n---\n"})
    assert findings(root, "skill-frontmatter", "skill-not-loaded") == []


STUB = "---\nname: {n}\ndescription:\n---\n# {n}\n\nTODO: write what the {n} skill does.\n"


def test_a_batch_of_generated_skill_stubs_is_one_finding(make_vault):
    stubs = {f"skills/tool-{i:02d}/SKILL.md": STUB.format(n=f"tool-{i:02d}") for i in range(64)}
    root = make_vault({"SOUL.md": "# Soul\n", **stubs,
                       "skills/deploy/SKILL.md": "# Deploy\n\nRun the script.\n"})
    found = diagnostics(root, "skill-not-loaded")
    assert [(d.path, d.line) for d in found] == [("skills/deploy/SKILL.md", 1),
                                                 ("skills/tool-00/SKILL.md", 3)]
    assert found[1].message.startswith("64 skills written from one template (tool-00, "
                                       "tool-01, tool-02 and 61 more) share this problem: "
                                       "no description")
    # two are no batch: each is reported
    root = make_vault({"SOUL.md": "# Soul\n", **dict(list(stubs.items())[:2])})
    assert len(findings(root, "skill-not-loaded")) == 2


# -- placement ------------------------------------------------------------------------------

@pytest.mark.parametrize("path,reported", [
    ("2026-03-19.md", True),  # a journal that missed memory/
    ("daily/2026-03-19.md", True),
    ("content/python/daily-notes/2026-03-19.md", False),  # a study series kept on purpose
    ("projects/shop/journal/2026-03-19.md", False),
])
def test_a_dated_series_outside_memory_is_kept_where_it_is(make_vault, path, reported):
    root = make_vault({"MEMORY.md": "# M\n", path: "# 2026-03-19\n\n- studied generators\n"})
    assert bool(findings(root, "unknown-location")) == reported


def test_a_claude_md_for_coding_subagents_is_kept_apart_on_purpose(make_vault):
    files = {"AGENTS.md": "# AGENTS.md\n\nYou wake up fresh each session.\n",
             "CLAUDE.md": "# Coding subagents\n\nRun the tests before you report back.\n"}
    assert findings(make_vault(files, root_name="plain"), "agents-md-shadowed") != []
    files["SOUL.md"] = "# Soul\n"  # an OpenClaw workspace: AGENTS.md is the agent's own
    assert findings(make_vault(files, root_name="openclaw"), "agents-md-shadowed") == []


# -- an Obsidian vault kept in a subfolder --------------------------------------------------

def test_a_subfolder_with_its_own_obsidian_folder_allows_forward_links(make_vault, capsys):
    root = make_vault({"MEMORY.md": "# M\n", "notes/a.md": "[[not yet]]\n",
                       "kb/Home.md": "# Home\n\n[[Not written yet]]\n![[missing.png]]\n"})
    assert findings(root, "broken-link") == [("broken-link", "kb/Home.md", 3),
                                             ("broken-link", "kb/Home.md", 4),
                                             ("broken-link", "notes/a.md", 1)]
    args = ["check", str(root), "--select", "broken-link", "--format", "json", "--exit-zero"]
    main(args)  # (a results cache for the state before)
    capsys.readouterr()
    (root / "kb" / ".obsidian").mkdir()
    # Obsidian's policy in its own vault: a forward link is no fault, a missing file is
    assert findings(root, "broken-link") == [("broken-link", "kb/Home.md", 4),
                                             ("broken-link", "notes/a.md", 1)]
    main(args)
    cached = capsys.readouterr().out
    main(args + ["--no-cache"])
    assert cached == capsys.readouterr().out  # the cache sees the new .obsidian/
    # looked for one or two levels down: deeper, a folder is no vault of its own
    root = make_vault({"MEMORY.md": "# M\n", "a/b/kb/Home.md": "[[Not written yet]]\n",
                       "projects/kb/Home.md": "[[Not written yet]]\n"}, root_name="deep")
    (root / "a/b/kb/.obsidian").mkdir()
    (root / "projects/kb/.obsidian").mkdir()
    assert findings(root, "broken-link") == [("broken-link", "a/b/kb/Home.md", 1)]


@pytest.mark.parametrize("path,reported", [
    ("memory/decisions/2026/use-postgres.md", False),  # a subfolder of its type's folder
    ("memory/projects/site/plan.md", False),
    ("memory/research/use-postgres.md", True),  # another folder: one to move
])
def test_a_typed_note_in_a_subfolder_of_its_folder_is_in_place(make_vault, path, reported):
    root = make_vault({"MEMORY.md": "# M\n", path: DECISION.replace("decision", "project")
                       if "projects" in path else DECISION})
    assert bool(findings(root, "unknown-location")) == reported
