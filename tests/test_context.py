"""``vaultkit context``: what each runtime loads, compared byte for byte with expectations
derived by hand from each runtime's documented or coded loading rule (the derivation of
every number is in the comments), and the rules that read the same model."""

from __future__ import annotations

import json
import subprocess

import pytest
from cli_invoke import invoke
from parse_store import StoreEntry
from vault_files import write_files as write
from test_rules_support import diagnostics, findings, isolated_openclaw  # noqa: F401

from vaultkit.vault.loader import load_vault
from vaultkit.vault.runtimes import contexts, detected


def context(root, *args) -> tuple[int, str, str]:
    return invoke(["context", str(root), *args], root)


def loaded(root, runtime, session=None):
    vault = load_vault(root, root=root, use_cache=False)
    (ctx,) = contexts(vault, [runtime], session)
    return ctx


# -- fixtures in our own words -------------------------------------------------------------

OPENCLAW = {
    "AGENTS.md": "# Operating rules\n\n- Search memory before acting on the past.\n\n\n",
    "SOUL.md": "# Soul\nCalm, brief, exact.\n",
    "TOOLS.md": "# Tools\n- git\n",
    "IDENTITY.md": "# Identity\nName: Wren\n",
    "USER.md": "# User\nPrefers mornings.\n",
    "HEARTBEAT.md": "# Heartbeat\n- weekly: distil the journals\n",
    "MEMORY.md": "# Memory\n- The backup runs at 02:00.\n",
    "NOW.md": "# Now\n- drafting the report\n",  # OpenClaw does not inject NOW.md
    "memory/2026-02-15.md": "# 2026-02-15\n",
}

CLAUDE = {
    "CLAUDE.md": ("@docs/conventions.md\n\n# Project\n<!-- for maintainers: not injected -->\n"
                  "Use `@docs/never.md` literally.\n"),
    "docs/conventions.md": "# Conventions\nTwo spaces.\n",
    "docs/never.md": "# Never imported\n",
    "CLAUDE.local.md": "# Mine\nSandbox at port 8080.\n",
    ".claude/rules/testing.md": "# Testing\nRun the tests first.\n",
    ".claude/rules/api.md": "---\npaths:\n  - \"src/api/**\"\n---\n# API only\n",
}

CODEX = {
    "AGENTS.md": "# Repository rules\nRun make check.\n",
}


def test_openclaw_layout_byte_for_byte(make_vault, tmp_path, monkeypatch):
    _install_openclaw(tmp_path, "2026.7.1", monkeypatch)  # the eight-file set
    root = make_vault(OPENCLAW, root_name="oc")
    code, out, err = context(root, "--runtime", "openclaw", "--show")
    assert (code, err) == (0, "")
    missing = root.resolve() / "BOOTSTRAP.md"
    # each file right-trimmed (AGENTS.md loses "\n\n\n\n"), in OpenClaw's order; the absent
    # BOOTSTRAP.md is a marker ("[MISSING] Expected at: " and the path); NOW.md and the
    # journal are not injected
    marker = f"[MISSING] Expected at: {missing}"
    injected = ["# Operating rules\n\n- Search memory before acting on the past.",
                "# Soul\nCalm, brief, exact.", "# Tools\n- git", "# Identity\nName: Wren",
                "# User\nPrefers mornings.", "# Heartbeat\n- weekly: distil the journals",
                marker, "# Memory\n- The backup runs at 02:00."]
    body = out.split("\n  note: ", 1)[1].split("\n", 1)[1]
    assert body == (
        "----- openclaw: AGENTS.md -----\n# Operating rules\n\n- Search memory before acting on the past.\n"
        "----- openclaw: SOUL.md -----\n# Soul\nCalm, brief, exact.\n"
        "----- openclaw: TOOLS.md -----\n# Tools\n- git\n"
        "----- openclaw: IDENTITY.md -----\n# Identity\nName: Wren\n"
        "----- openclaw: USER.md -----\n# User\nPrefers mornings.\n"
        "----- openclaw: HEARTBEAT.md -----\n# Heartbeat\n- weekly: distil the journals\n"
        f"----- openclaw: BOOTSTRAP.md -----\n{marker}\n"
        "----- openclaw: MEMORY.md -----\n# Memory\n- The backup runs at 02:00.\n"
        "----- end of openclaw -----\n")
    assert f"total {sum(map(len, injected)):,} chars loaded" in out
    assert "NOW.md" not in out


@pytest.mark.parametrize("session, names", [
    ("main", ["AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "USER.md", "HEARTBEAT.md",
              "BOOTSTRAP.md", "MEMORY.md"]),
    ("cron", ["AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "USER.md"]),
    ("subagent", ["AGENTS.md", "TOOLS.md"]),
    ("group", ["AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "USER.md", "HEARTBEAT.md",
               "BOOTSTRAP.md"]),
])
def test_openclaw_session_types(make_vault, tmp_path, monkeypatch, session, names):
    # src/agents/workspace.ts (filterBootstrapFilesForSession) up to 2026.7.1: a subagent
    # gets AGENTS.md and TOOLS.md, cron five files, a group session everything but MEMORY.md
    _install_openclaw(tmp_path, "2026.7.1", monkeypatch)
    root = make_vault(OPENCLAW, root_name=f"oc-{session}")
    assert [p.path for p in loaded(root, "openclaw", session).pieces] == names


def test_openclaw_cut_with_marker_byte_for_byte(make_vault):
    # SOUL.md: 10,000 "a" then 10,001 "b", 20,001 units. The marker's second line
    # "…(truncated SOUL.md: kept 14920+4973 chars of 20001)…" is 1+11+7+7+10+10+5+2 = 53,
    # the marker "\n" + 48 + "\n" + 53 + "\n" = 104, the budget 20,000 - 104 - 2 = 19,894:
    # head floor(0.75 x 19,894) = 14,920, tail floor(0.25 x 19,894) = 4,973; 19,999 injected
    root = make_vault({"SOUL.md": "a" * 10000 + "b" * 10001 + "\n"}, root_name="cut")
    soul = loaded(root, "openclaw").pieces[1]
    marker = ("\n[...truncated, read SOUL.md for full content...]\n"
              "…(truncated SOUL.md: kept 14920+4973 chars of 20001)…\n")
    assert soul.injected == "a" * 10000 + "b" * 4920 + "\n" + marker + "\n" + "b" * 4973
    assert (soul.injected_length, soul.kept, soul.lost) == (19999, 19893, 108)
    code, out, _ = context(root, "--runtime", "openclaw", "--show")
    assert code == 1
    assert marker in out and "CUT: 108 of 20,001 chars not loaded, line 1" in out


def test_openclaw_agents_md_keeps_a_policy_digest(make_vault, tmp_path):
    # bootstrapMaxChars 200: head floor(0.45 x 200) = 90, tail floor(0.15 x 200) = 30,
    # digest budget floor(0.35 x 200) = 70. Policy lines: "- never push to main" first (a
    # priority word, 20), then in order "# Agents" (+1+8), "- keep notes short" (+1+18),
    # "## Tail" (+1+7): 56. Rendered with head 90 and tail 30 it is 319 units: the tail
    # goes (287), then the head shrinks by the overflow, 90 - 87 = 3: 199 units
    (tmp_path / "openclaw.json").write_text('{"agents": {"defaults": {"bootstrapMaxChars": 200}}}')
    text = ("# Agents\n" + "p" * 100 + "\n- never push to main\n- keep notes short\n"
            + "q" * 100 + "\n## Tail\nend of file text here\n")
    root = make_vault({"AGENTS.md": text})
    agents = loaded(root, "openclaw").pieces[0]
    assert agents.injected == (
        "# A\n[...truncated, read AGENTS.md for full content...]\n[Policy digest from AGENTS.md]\n"
        "# Agents\n- never push to main\n- keep notes short\n## Tail\n"
        "…(truncated AGENTS.md: kept 3+policy 56+0 chars of 280)…")
    assert agents.injected_length == 199
    assert (agents.first_lost_line, agents.last_lost_line) == (1, 7)


def test_openclaw_total_limit_one_unit_under_and_over(make_vault, tmp_path, monkeypatch):
    # a subagent session gets AGENTS.md and TOOLS.md, 100 units each; the total counts what
    # is injected: at 200 both load whole, at 199 TOOLS.md gets the 99 left and is cut. The
    # full marker for TOOLS.md is 1 + 49 + 1 + 45 + 1 = 97, leaving 0 < 16 units of content,
    # so the compact one is used, "[…truncated H+T/100]" (22 units for two-digit H and T):
    # budget 99 - 20 = 79 -> 59+19, then 99 - 22 = 77 -> 57+19, stable: 57 + 22 + 19 = 98
    _install_openclaw(tmp_path, "2026.7.1", monkeypatch)  # the eight-file set
    root = make_vault({"AGENTS.md": "a" * 100, "TOOLS.md": "t" * 100})
    config = tmp_path / "openclaw.json"
    config.write_text('{"agents": {"defaults": {"bootstrapTotalMaxChars": 200}}}')
    ctx = loaded(root, "openclaw", "subagent")
    assert not ctx.cut and ctx.total == 200
    config.write_text('{"agents": {"defaults": {"bootstrapTotalMaxChars": 199}}}')
    ctx = loaded(root, "openclaw", "subagent")
    assert [(p.path, p.cut, p.injected_length) for p in ctx.cut] == [("TOOLS.md", "middle", 98)]
    assert ctx.cut[0].injected == "t" * 57 + "[…truncated 57+19/100]" + "t" * 19


def test_openclaw_minimum_file_budget_one_unit_under_and_over(make_vault, tmp_path,
                                                             monkeypatch):
    # with under 64 units of the total left, the remaining files are skipped whole; with 64
    # the file is cut to 64 (the marker then is the compact one: under 16 units of content
    # would be left beside the full marker)
    _install_openclaw(tmp_path, "2026.7.1", monkeypatch)  # the eight-file set
    root = make_vault({"AGENTS.md": "a" * 100, "TOOLS.md": "t" * 100})
    config = tmp_path / "openclaw.json"
    config.write_text('{"agents": {"defaults": {"bootstrapTotalMaxChars": 163}}}')
    tools = loaded(root, "openclaw", "subagent").pieces[1]
    assert (tools.cut, tools.injected) == ("dropped", "")
    config.write_text('{"agents": {"defaults": {"bootstrapTotalMaxChars": 164}}}')
    tools = loaded(root, "openclaw", "subagent").pieces[1]
    # compact marker: budget 64 - 20 = 44 -> 33+11, then 64 - 22 = 42 -> 31+10, stable
    assert tools.injected == "t" * 31 + "[…truncated 31+10/100]" + "t" * 10
    assert (tools.cut, tools.injected_length) == ("middle", 63)


def test_claude_code_layout_byte_for_byte(make_vault):
    root = make_vault(CLAUDE, root_name="cc")
    code, out, err = context(root, "--runtime", "claude-code", "--show")
    assert (code, err) == (0, "")
    # the import is expanded before the file that imports it; the block-level HTML comment is
    # dropped; `@docs/never.md` inside a code span is not an import; the rule with `paths`
    # is not loaded at launch; CLAUDE.local.md comes last in its folder
    assert out.split("----- claude-code: ", 1)[1] == (
        "docs/conventions.md -----\n# Conventions\nTwo spaces.\n\n"
        "----- claude-code: CLAUDE.md -----\n@docs/conventions.md\n\n# Project\n"
        "Use `@docs/never.md` literally.\n\n"
        "----- claude-code: .claude/rules/testing.md -----\n# Testing\nRun the tests first.\n\n"
        "----- claude-code: CLAUDE.local.md -----\n# Mine\nSandbox at port 8080.\n\n"
        "----- end of claude-code -----\n")
    assert "import CLAUDE.md:5 @docs/never.md: in-code (inside code: not imported)" in out
    assert "docs/never.md  " not in out


def test_claude_code_import_depth_one_hop_under_and_over(make_vault):
    # code.claude.com/docs/en/memory: "a maximum depth of four hops"
    chain = {"CLAUDE.md": "@h1.md\n"}
    for n in range(1, 6):
        chain[f"h{n}.md"] = f"hop {n}\n" + (f"@h{n + 1}.md\n" if n < 5 else "")
    root = make_vault(chain)
    ctx = loaded(root, "claude-code")
    assert [p.path for p in ctx.pieces] == ["h4.md", "h3.md", "h2.md", "h1.md", "CLAUDE.md"]
    assert [(i.path, i.target, i.kind) for i in ctx.imports] == [("h4.md", "h5.md", "too-deep")]
    assert findings(root, "import-problem") == [("import-problem", "h4.md", 2)]


def test_import_problem_missing_circular_and_in_code(make_vault):
    root = make_vault({"CLAUDE.md": "@a.md\n@docs/gone.md\nSee `@b.md`.\nMail ops@example.com\n",
                       "a.md": "@b.md\n", "b.md": "@a.md\n"})
    got = diagnostics(root, "import-problem")
    assert [(d.path, d.line) for d in got] == [("CLAUDE.md", 2), ("CLAUDE.md", 3), ("b.md", 1)]
    assert got[0].message == "@docs/gone.md names no file: Claude Code imports nothing here"
    assert got[1].message == ("@b.md sits inside a code span or block, where Claude Code "
                              "does not expand imports")
    assert got[2].message.startswith("@a.md closes a circle of imports (CLAUDE.md -> a.md -> "
                                     "b.md -> a.md)")


def test_import_problem_leaves_plain_at_words_alone(make_vault):
    root = make_vault({"CLAUDE.md": "Ping @team or @alice about it.\n```\n@not-a-file\n```\n"})
    assert findings(root, "import-problem") == []


def test_agents_md_shadowed(make_vault):
    shadowed = make_vault({"AGENTS.md": "# Rules\n", "CLAUDE.md": "# Claude\n"}, root_name="s")
    got = diagnostics(shadowed, "agents-md-shadowed")
    assert [(d.path, d.line, d.message) for d in got] == [
        ("AGENTS.md", 1, "Claude Code loads CLAUDE.md and never reads AGENTS.md: add the line "
                         "@AGENTS.md to CLAUDE.md (or make CLAUDE.md a link to it)")]
    imported = make_vault({"AGENTS.md": "# Rules\n", "CLAUDE.md": "@AGENTS.md\n"}, root_name="i")
    assert findings(imported, "agents-md-shadowed") == []
    linked = make_vault({"AGENTS.md": "# Rules\n"}, root_name="l")
    (linked / "CLAUDE.md").symlink_to("AGENTS.md")
    assert findings(linked, "agents-md-shadowed") == []
    alone = make_vault({"AGENTS.md": "# Rules\n"}, root_name="a")  # no Claude Code here
    assert findings(alone, "agents-md-shadowed") == []


# -- Claude Code's auto memory ---------------------------------------------------------------

def _auto(make_vault, name, lines, extra=None):
    files = {"CLAUDE.md": "# Claude\n", "memory/claude/MEMORY.md": lines,
             "vaultkit.toml": '[runtime.claude-code]\nauto-memory-dir = "memory/claude"\n'}
    files.update(extra or {})
    return make_vault(files, root_name=name)


def test_auto_memory_line_limit_one_under_and_over(make_vault):
    under = _auto(make_vault, "u", "".join(f"- fact {i}\n" for i in range(200)))
    assert findings(under, "auto-memory-cut") == []
    over = _auto(make_vault, "o", "".join(f"- fact {i}\n" for i in range(201)))
    (d,) = diagnostics(over, "auto-memory-cut")
    assert (d.path, d.line) == ("memory/claude/MEMORY.md", 201)
    assert d.message == ("Claude Code loads only the first 200 of 201 lines of this auto-memory "
                         "index (past the first 200 lines): line 201 is never loaded; move "
                         "detail into topic files and keep one line per entry")


def test_auto_memory_unit_limit_one_under_and_over(make_vault):
    # 99 lines of 249 units + newline = 24,750; a 100th line of 249 units + newline ends at
    # exactly 25,000 (loaded); of 250 units it ends at 25,001 (never loaded)
    head = ("x" * 249 + "\n") * 99
    at = _auto(make_vault, "at", head + "y" * 249 + "\n")
    assert findings(at, "auto-memory-cut") == []
    over = _auto(make_vault, "over", head + "y" * 250 + "\n")
    assert findings(over, "auto-memory-cut") == [("auto-memory-cut", "memory/claude/MEMORY.md",
                                                  100)]


def test_auto_memory_strips_frontmatter_and_comments_and_ignores_blank_tails(make_vault):
    # frontmatter (3 lines) and a comment block do not count toward the 200 lines
    text = ("---\nname: index\n---\n<!--\nmaintainer note\n-->\n"
            + "".join(f"- fact {i}\n" for i in range(200)))
    assert findings(_auto(make_vault, "fm", text), "auto-memory-cut") == []
    blank = "".join(f"- fact {i}\n" for i in range(200)) + "\n\n## Later\n\n"
    assert findings(_auto(make_vault, "blank", blank), "auto-memory-cut") == []


def test_auto_memory_dir_from_claude_settings(make_vault, tmp_path):
    root = make_vault({"CLAUDE.md": "# Claude\n",
                       "notes/MEMORY.md": "".join(f"- fact {i}\n" for i in range(230))},
                      root_name="settings")
    write(root, {".claude/settings.json": json.dumps(
        {"autoMemoryDirectory": str(root.resolve() / "notes")})})
    assert findings(root, "auto-memory-cut") == [("auto-memory-cut", "notes/MEMORY.md", 201)]


# -- Codex ------------------------------------------------------------------------------------

def _repo(tmp_path, files, vault="repo/vault"):
    top = tmp_path / "repo"
    top.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(top)], check=True)
    write(tmp_path, files)
    root = tmp_path / vault
    (root / ".obsidian").mkdir(parents=True, exist_ok=True)
    return root


def test_codex_layout_byte_for_byte(tmp_path):
    # codex-rs/core/src/project_doc.rs: from the git root down to the working folder, the
    # first of AGENTS.override.md, AGENTS.md per folder, joined with a blank line; a file
    # of whitespace only is skipped
    root = _repo(tmp_path, {"repo/AGENTS.md": "# Top\nShared rules.\n",
                            "repo/vault/AGENTS.override.md": "# Override\nLocal.\n",
                            "repo/vault/AGENTS.md": "# Shadowed by the override\n",
                            "repo/vault/CODEX.md": "x\n", "repo/vault/.codex/x": "y"})
    code, out, err = context(root, "--runtime", "codex", "--show")
    assert (code, err) == (0, "")
    assert out.split("----- codex: ", 1)[1] == (
        "../AGENTS.md -----\n# Top\nShared rules.\n\n"
        "----- codex: AGENTS.override.md -----\n# Override\nLocal.\n\n"
        "----- end of codex -----\n")
    ctx = loaded(root, "codex")
    assert ctx.text == "# Top\nShared rules.\n\n\n# Override\nLocal.\n"


def test_codex_byte_budget_one_under_and_over(tmp_path):
    # 32,768 bytes load whole; one more byte and the last one is cut, with no marker
    root = _repo(tmp_path, {"repo/vault/AGENTS.md": "a" * 32768})
    assert not loaded(root, "codex").cut
    (root / "AGENTS.md").write_text("a" * 32768 + "b")
    ctx = loaded(root, "codex")
    (piece,) = ctx.cut
    assert piece.injected == "a" * 32768 and (piece.length, piece.kept) == (32769, 32768)


def test_codex_budget_is_shared_and_counts_bytes(tmp_path):
    # the root file's 32,000 bytes leave 768 for the working folder's file: 256 Chinese
    # characters of 3 bytes; the 257th is cut
    root = _repo(tmp_path, {"repo/AGENTS.md": "r" * 32000,
                            "repo/vault/AGENTS.md": "中" * 257})
    ctx = loaded(root, "codex")
    (piece,) = ctx.cut
    assert piece.path == "AGENTS.md" and piece.injected == "中" * 256


def test_codex_limit_is_a_profile_edit(tmp_path):
    root = _repo(tmp_path, {"repo/vault/AGENTS.md": "a" * 150,
                            "repo/vault/vaultkit.toml": "[runtime.codex]\ntotal-max = 100\n"})
    (piece,) = loaded(root, "codex").cut
    assert piece.injected == "a" * 100


# -- all three, detection, output --------------------------------------------------------

def test_all_three_runtimes_detected_and_shown(make_vault):
    files = dict(OPENCLAW)
    files.update(CLAUDE)
    files[".codex/config.toml"] = "project_doc_max_bytes = 32768\n"
    root = make_vault(files, root_name="all")
    assert detected(load_vault(root, root=root, use_cache=False)) == [
        "openclaw", "claude-code", "codex"]
    code, out, _ = context(root)
    assert code == 0
    assert [line.split(" (")[0] for line in out.splitlines()
            if line and not line.startswith(" ")] == ["OpenClaw", "Claude Code", "Codex"]
    # every runtime reads AGENTS.md its own way: OpenClaw and Codex load it, Claude Code not;
    # in an OpenClaw workspace AGENTS.md is the agent's own, and CLAUDE.md is kept apart on
    # purpose (for coding subagents): not reported
    assert findings(root, "agents-md-shadowed") == []


def test_detection(make_vault):
    def names(files, name):
        root = make_vault(files, root_name=name)
        return detected(load_vault(root, root=root, use_cache=False))

    assert names({"AGENTS.md": "# A\n"}, "agents-only") == ["codex"]
    assert names({"AGENTS.md": "# A\n", "SOUL.md": "s\n"}, "oc") == ["openclaw"]
    assert names({"CLAUDE.md": "c\n"}, "cc") == ["claude-code"]
    assert names({"notes.md": "n\n"}, "none") == []
    assert names({"AGENTS.md": "# A\n", "vaultkit.toml": 'runtimes = ["codex"]\n',
                  "SOUL.md": "s\n"}, "set") == ["codex"]


def test_json_format_and_output_file(make_vault, tmp_path):
    root = make_vault(OPENCLAW, root_name="json")
    target = tmp_path / "ctx.json"
    code, out, _ = context(root, "--runtime", "openclaw", "--format", "json", "--show",
                           "-o", str(target))
    assert code == 0 and out == ""
    data = json.loads(target.read_text())
    (rt,) = data["runtimes"]
    assert rt["runtime"] == "openclaw" and rt["unit"] == "utf16" and rt["session"] == "main"
    assert [f["path"] for f in rt["files"]][:2] == ["AGENTS.md", "SOUL.md"]
    assert rt["files"][0]["length"] == 61 and rt["text"].startswith("# Operating rules")
    assert 0 < rt["window_share"] < 0.01


def test_bad_arguments_are_clear_errors(make_vault):
    root = make_vault(CODEX, root_name="bad")
    code, _, err = context(root, "--runtime", "gemini")
    assert code == 2 and "unknown runtime 'gemini'" in err and "Traceback" not in err
    code, _, err = context(root, "--runtime", "codex", "--session", "cron")
    assert code == 2 and "--session applies to a runtime with session types" in err


def test_unknown_runtime_in_vaultkit_toml(make_vault):
    root = make_vault({"vaultkit.toml": 'runtimes = ["gemini"]\n'}, root_name="toml")
    code, _, err = context(root)
    assert code == 2 and "unknown runtime 'gemini'" in err


# -- skills ---------------------------------------------------------------------------------

WEATHER = """---
name: weather
description: Get current weather and forecasts (no API key required).
homepage: https://wttr.in/:help
metadata:
  {
    "openclaw":
      {
        "emoji": "🌤️",
        "requires": { "bins": ["curl"] },
      },
  }
---

# Weather
"""


def test_skills_that_will_not_load(make_vault):
    root = make_vault({
        "SOUL.md": "# Soul\n",  # an OpenClaw workspace
        "skills/weather/SKILL.md": WEATHER,  # OpenClaw's nested metadata: valid
        "skills/tools/git-helper/SKILL.md": "---\nname: git-helper\ndescription: Git.\n---\n",
        "skills/deploy/SKILL.md": "# Deploy\nNo frontmatter at all.\n",
        "skills/broken/SKILL.md": "---\nname: broken\ndescription: never closed\n",
        "skills/quiet/SKILL.md": "---\nname: quiet\n---\nBody.\n",
        "skills/deploy/notes.md": "# not a skill file\n",
        # inside a skill's folder OpenClaw looks no further: a template, not a skill
        "skills/weather/templates/new/SKILL.md": "# {{name}}\n",
    })
    got = diagnostics(root, "skill-not-loaded")
    assert [(d.path, d.line) for d in got] == [("skills/broken/SKILL.md", 1),
                                               ("skills/deploy/SKILL.md", 1),
                                               ("skills/quiet/SKILL.md", 1)]
    assert got[1].message.startswith("no frontmatter: OpenClaw skips this skill")
    assert got[2].message.startswith("no description")


def test_skill_name_and_compatibility_one_under_and_over(make_vault):
    name64, name65 = "a" * 64, "a" * 65
    root = make_vault({
        f"skills/{name64}/SKILL.md": f"---\nname: {name64}\ndescription: x\n"
                                    f"compatibility: {'c' * 500}\n---\n",
        f"skills/{name65}/SKILL.md": f"---\nname: {name65}\ndescription: x\n"
                                    f"compatibility: {'c' * 501}\n---\n",
    })
    got = diagnostics(root, "skill-frontmatter")
    assert [(d.path, d.line) for d in got] == [(f"skills/{name65}/SKILL.md", 2),
                                               (f"skills/{name65}/SKILL.md", 4)]
    assert got[0].message == "name is 65 characters, over the Agent Skills limit of 64"
    assert got[1].message == ("compatibility is 501 characters, over the Agent Skills limit "
                              "of 500")


def test_skills_without_frontmatter_are_fine_where_openclaw_does_not_apply(make_vault):
    # a Claude Code plugin repository: Claude Code takes the folder's name and the first
    # paragraph (code.claude.com/docs/en/skills); nothing here is OpenClaw's
    root = make_vault({"CLAUDE.md": "# Plugin\n", "skills/deploy/SKILL.md": "Deploy it.\n"},
                      root_name="plugin")
    assert findings(root, "skill-not-loaded") == []
    (root / "SOUL.md").write_text("# Soul\n")  # now an OpenClaw workspace
    assert findings(root, "skill-not-loaded") == [("skill-not-loaded",
                                                   "skills/deploy/SKILL.md", 1)]


def test_skill_frontmatter_limits(make_vault):
    ok = "d" * 1024
    root = make_vault({
        "skills/web-search/SKILL.md": "---\nname: websearch\ndescription: Search.\n---\n",
        "skills/Bad_Name/SKILL.md": "---\nname: Bad_Name\ndescription: x\n---\n",
        "skills/at-limit/SKILL.md": f"---\nname: at-limit\ndescription: {ok}\n---\n",
        "skills/over/SKILL.md": f"---\nname: over\ndescription: {ok}d\n---\n",
        "skills/weather/SKILL.md": WEATHER,
        ".claude/skills/review/SKILL.md": "---\nname: Review\ndescription: Review.\n---\n",
        ".claude/skills/plain/SKILL.md": "Review the diff.\n",  # all fields optional there
    })
    got = diagnostics(root, "skill-frontmatter")
    claude = [d for d in got if d.path.startswith(".claude/")]
    got = [d for d in got if not d.path.startswith(".claude/")]
    # one finding per problem: 'Review' breaks the character rule once
    assert [(d.path, d.line) for d in claude] == [(".claude/skills/review/SKILL.md", 2)]
    # a skill installed under another folder name is loaded by its name: no finding
    assert [(d.path, d.line) for d in got] == [("skills/Bad_Name/SKILL.md", 2),
                                               ("skills/over/SKILL.md", 3)]
    assert "may hold only lowercase letters" in got[0].message
    assert got[1].message == "description is 1,025 characters, over the Agent Skills limit of 1,024"


# -- the model is data; what it depends on is in the cache key -----------------------------------

def test_old_budget_names_set_the_runtime_limits(make_vault):
    root = make_vault({"SOUL.md": "s" * 3001,
                       "vaultkit.toml": "[budgets]\nbootstrap-max-chars = 3000\n"})
    ctx = loaded(root, "openclaw")
    assert ctx.per_file_max == 3000 and ctx.pieces[1].cut == "middle"
    assert ctx.limits_source == (
        "per file: vaultkit.toml [budgets] bootstrap-max-chars; in all: default of the newest "
        "known version (no install found); no openclaw.json found")
    (root / "vaultkit.toml").write_text("[runtime.openclaw]\nper-file-max = 4000\n")
    ctx = loaded(root, "openclaw")
    assert not ctx.cut
    assert ctx.limits_source.startswith("per file: vaultkit.toml [runtime.openclaw] per-file-max;")


def test_import_depth_is_a_profile_edit(make_vault):
    chain = {"CLAUDE.md": "@h1.md\n", "vaultkit.toml": "[runtime.claude-code]\nimport-max-depth = 5\n"}
    for n in range(1, 6):
        chain[f"h{n}.md"] = f"hop {n}\n" + (f"@h{n + 1}.md\n" if n < 5 else "")
    root = make_vault(chain)
    assert "h5.md" in [p.path for p in loaded(root, "claude-code").pieces]


@pytest.mark.parametrize("toml, message", [
    ('[runtime.gemini]\nfiles = ["GEMINI.md"]\n', "runtime: unknown runtime 'gemini'"),
    ("[runtime.codex]\ntotal-max = -1\n", "runtimes.codex.total-max: must be at least 0"),
    ("[runtime.openclaw]\nsessions = { cron = [\"NOW.md\"] }\n", "NOW.md not in files"),
    ("[runtime.codex]\nloader = \"magic\"\n", "loader"),
])
def test_a_bad_runtime_setting_is_one_clear_line(make_vault, toml, message):
    root = make_vault({"vaultkit.toml": toml, "AGENTS.md": "# A\n"})
    code, _, err = context(root)
    assert code == 2 and message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_results_cache_sees_files_above_the_vault(tmp_path):
    # Codex reads AGENTS.md in the folders above the vault, which are no notes: the cached
    # findings must still follow them
    import os
    import time

    root = _repo(tmp_path, {"repo/AGENTS.md": "r" * 32000,
                            "repo/vault/AGENTS.md": "v" * 100 + "\n",
                            "repo/vault/vaultkit.toml": 'runtimes = ["codex"]\n'})

    past = time.time() - 600  # old enough that the results cache trusts the listing

    def age(*paths):
        for path in paths:
            os.utime(path, (past, past))

    age(tmp_path / "repo" / "AGENTS.md", root / "AGENTS.md", root / "vaultkit.toml",
        root / ".obsidian", root)
    check = ["check", str(root), "--select", "bootstrap-truncation"]
    assert invoke(check, root)[0] == 0
    assert (StoreEntry(root, "results")).is_file()
    (tmp_path / "repo" / "AGENTS.md").write_text("r" * 32700)  # leaves 68 bytes for ours
    age(tmp_path / "repo" / "AGENTS.md")  # nothing in the vault changed
    code, out, _ = invoke(check, root)
    assert code == 1 and "AGENTS.md: Codex loads 68 of its 101 bytes" in out


def test_memory_only_vault_reads_the_workspace_above(make_vault):
    root = make_vault({"vaultkit.toml": 'memory-dir = "."\n', "2026-02-15.md": "# d\n"},
                      root_name="ws/memory")
    write(root.parent, {"AGENTS.md": "# Rules\n", "SOUL.md": "# Soul\n",
                        "CLAUDE.md": "@AGENTS.md\n"})
    vault = load_vault(root, root=root, use_cache=False)
    assert detected(vault) == ["openclaw", "claude-code"]
    openclaw, claude = contexts(vault)
    assert [p.path for p in openclaw.loaded][:2] == ["../AGENTS.md", "../SOUL.md"]
    assert [p.path for p in claude.loaded] == ["../AGENTS.md", "../CLAUDE.md"]
    # (the newest contract loads six files: IDENTITY.md's marker comes third)
    assert openclaw.pieces[2].injected == f"[MISSING] Expected at: {root.parent.resolve() / 'IDENTITY.md'}"


def test_a_pack_without_runtimes_gets_the_bundled_ones(make_vault):
    from vaultkit.core.resources import rules_dir

    pack = (rules_dir() / "openclaw.yaml").read_text(encoding="utf-8")
    old = pack.split("\nruntimes:", 1)[0] + "\n"  # a pack from before runtimes were data
    root = make_vault({"old.yaml": old, "vaultkit.toml": 'profile = "old.yaml"\n',
                       "SOUL.md": "s" * 20001})
    assert findings(root, "bootstrap-truncation") == [("bootstrap-truncation", "SOUL.md", 1)]
    (root / "old.yaml").write_text(old + "runtimes: {}\n", encoding="utf-8")
    assert findings(root, "bootstrap-truncation") == []


# -- Hermes Agent: entry-store -------------------------------------------------------------
# NousResearch/hermes-agent tools/memory_tool.py (MemoryStore._read_file, _render_block):
# entries split at "\n§\n" and stripped, empty and repeated ones dropped; the block is a
# rule of 46 "═", "MEMORY (your personal notes) [P% — N/L chars]", a rule, the entries;
# P = min(100, int(N / L * 100)), N = len() of the joined entries, L = 2,200 (USER.md 1,375)

RULE = "═" * 46


def _hermes(make_vault, files, name="hermes"):
    files = {"vaultkit.toml": 'runtimes = ["hermes"]\n', **files}
    return loaded(make_vault(files, root_name=name), "hermes")


def test_hermes_layout_byte_for_byte(make_vault):
    # MEMORY.md: "\r\n" reads as "\n" (Python's text mode), the second entry's blanks are
    # stripped, the repeated first entry is dropped: "Uses pnpm." (10) + "\n§\n" (3) +
    # "Backups at 02:00." (17) = 30 chars, 30 / 2,200 = 1.36%: 1%. USER.md: 17 chars, 1%
    root = make_vault({"memories/MEMORY.md": "Uses pnpm.\r\n§\r\n  Backups at 02:00.  \n§\nUses pnpm.\n",
                       "memories/USER.md": "Prefers mornings.\n"}, root_name="hermes")
    vault = load_vault(root, root=root, use_cache=False)
    assert detected(vault) == ["hermes"]  # Hermes's memories/ layout, nothing else
    code, out, err = context(root, "--show")
    assert (code, err) == (0, "")
    memory = (f"{RULE}\nMEMORY (your personal notes) [1% — 30/2,200 chars]\n{RULE}\n"
              "Uses pnpm.\n§\nBackups at 02:00.")
    user = f"{RULE}\nUSER PROFILE (who the user is) [1% — 17/1,375 chars]\n{RULE}\nPrefers mornings."
    assert out.split("----- hermes: ", 1)[1] == (
        f"memories/MEMORY.md -----\n{memory}\n----- hermes: memories/USER.md -----\n{user}\n"
        "----- end of hermes -----\n")
    ctx = loaded(root, "hermes")
    assert ctx.text == memory + "\n\n" + user  # the system prompt's parts: a blank line


def test_hermes_limit_one_under_and_over(make_vault):
    # 2,200 chars: 100%, not flagged; 2,201: min(100, int(100.04)) = 100%, flagged, still
    # loaded whole (the limit binds only the memory tool's writes)
    ctx = _hermes(make_vault, {"memories/MEMORY.md": "a" * 2200}, "h-under")
    (piece,) = ctx.pieces
    assert piece.injected == f"{RULE}\nMEMORY (your personal notes) [100% — 2,200/2,200 chars]\n{RULE}\n" + "a" * 2200
    assert not ctx.cut
    ctx = _hermes(make_vault, {"memories/MEMORY.md": "a" * 2201}, "h-over")
    (piece,) = ctx.pieces
    assert piece.injected == (f"{RULE}\nMEMORY (your personal notes) [100% — 2,201/2,200 chars "
                              f"⚠ OVER BUDGET]\n{RULE}\n" + "a" * 2201)
    assert not ctx.cut and "loaded whole, flagged OVER BUDGET" in piece.reason


def test_hermes_render_cap_one_under_and_over(make_vault):
    # past max(2,200 x 2, 4,000) = 4,400 chars Hermes keeps int(4,400 x 0.7) = 3,080 head and
    # int(4,400 x 0.2) = 880 tail chars around a marker naming the 4,401 - 3,080 - 880 = 441
    # left out; USER.md's cap is max(2,750, 4,000) = 4,000
    assert not _hermes(make_vault, {"memories/MEMORY.md": "a" * 4400}, "cap-under").cut
    text = "a" * 3079 + "\n" + "b" * 441 + "c" * 880  # the "b"s of line 2 are lost
    ctx = _hermes(make_vault, {"memories/MEMORY.md": text}, "cap-over")
    (piece,) = ctx.cut
    marker = ("\n\n[... 441 chars truncated — memory over budget (4,401/2,200); consolidate "
              "via memory(action=remove/replace) ...]\n\n")
    assert piece.injected == (f"{RULE}\nMEMORY (your personal notes) [100% — 4,401/2,200 chars "
                              f"⚠ OVER BUDGET]\n{RULE}\n" + "a" * 3079 + "\n" + marker + "c" * 880)
    assert (piece.length, piece.kept, piece.first_lost_line, piece.last_lost_line) == (
        4401, 3960, 2, 2)
    # the rule that reads runtime contexts reports the cut, at the first line lost
    assert findings(ctx_root := make_vault({"vaultkit.toml": 'runtimes = ["hermes"]\n',
                                            "memories/MEMORY.md": text}, root_name="cap-rule"),
                    "bootstrap-truncation") == [("bootstrap-truncation", "memories/MEMORY.md", 2)]
    (diag,) = diagnostics(ctx_root, "bootstrap-truncation")
    assert diag.message.startswith("MEMORY.md: Hermes Agent loads 3,960 of its 4,401 chars "
                                   "(past 4,400 chars, the most Hermes renders")
    user = _hermes(make_vault, {"memories/USER.md": "u" * 4001}, "cap-user")
    assert user.cut and "[... 401 chars truncated" in user.text  # 4,001 - 2,800 - 800


def test_hermes_entry_past_the_scan_window_is_blocked(make_vault):
    # an entry over 65,536 chars (MAX_SCAN_CHARS) is replaced by a [BLOCKED: …] line
    ctx = _hermes(make_vault, {"memories/MEMORY.md": "ok\n§\n" + "x" * 65537}, "blocked")
    assert ctx.text.endswith("ok\n§\n[BLOCKED: MEMORY.md entry too large to scan (65,537 "
                             "chars). Removed from system prompt; use memory(action=remove) "
                             "to delete the original.]")


# -- Codex memories: memory-summary --------------------------------------------------------
# openai/codex codex-rs/core/src/memories/prompts.rs: memory_summary.md trimmed, cut to
# 5,000 tokens by codex-rs/utils/string/src/truncate.rs (4 bytes a token: 20,000 bytes;
# past that the first 10,000 and the last 10,000 bytes around "…N tokens truncated…", N the
# bytes over the budget / 4, rounded up)

def _summary(make_vault, data, name):
    root = make_vault({"vaultkit.toml": 'runtimes = ["codex-memories"]\n',
                       "memories/memory_summary.md": data}, root_name=name)
    return loaded(root, "codex-memories")


def test_codex_memories_layout_byte_for_byte(make_vault):
    root = make_vault({"memories/memory_summary.md": "\n\n# Summary\n- uses pnpm\n\n",
                       "memories/MEMORY.md": "# Registry\n"}, root_name="cxm")
    vault = load_vault(root, root=root, use_cache=False)
    assert detected(vault) == ["hermes", "codex-memories"]  # (MEMORY.md there is Hermes's name)
    code, out, err = context(root, "--runtime", "codex-memories", "--show")
    assert (code, err) == (0, "")
    assert out.split("----- codex-memories: ", 1)[1] == (
        "memories/memory_summary.md -----\n# Summary\n- uses pnpm\n"
        "----- end of codex-memories -----\n")
    assert "MEMORY.md, raw_memories.md, rollout_summaries/ and skills/ are read by the agent" in out


def test_codex_memories_budget_one_under_and_over(make_vault):
    assert not _summary(make_vault, "a" * 20000, "cxm-under").cut
    ctx = _summary(make_vault, "a" * 10000 + "\n" + "c" * 10000, "cxm-over")
    (piece,) = ctx.cut
    # 20,001 bytes: 1 over, ceil(1 / 4) = 1 token; bytes 0-9,999 and 10,001-20,000 kept
    assert piece.injected == "a" * 10000 + "…1 tokens truncated…" + "c" * 10000
    assert (piece.length, piece.kept, piece.first_lost_line, piece.last_lost_line) == (
        20001, 20000, 1, 1)


def test_codex_memories_not_utf8_is_not_injected(make_vault):
    # fs::read_to_string fails: the summary is left out of the instructions altogether
    ctx = _summary(make_vault, b"# Summary\n\xff\n", "cxm-bad")
    (piece,) = ctx.pieces
    assert (piece.injected, piece.cut) == ("", "dropped") and "not valid UTF-8" in piece.reason


# -- Gemini CLI: context-md ----------------------------------------------------------------
# google-gemini/gemini-cli packages/core/src/utils/memoryImportProcessor.ts (tree format)
# and memoryDiscovery.ts (concatenateInstructions)

def _gemini(make_vault, files, name):
    root = make_vault({"vaultkit.toml": 'runtimes = ["gemini-cli"]\n', **files}, root_name=name)
    return root, loaded(root, "gemini-cli")


def test_gemini_layout_and_imports_byte_for_byte(make_vault):
    # "@docs/style.md" on its own line is inlined between the two comments; "see @team"
    # is an import too (after a space, starts with a letter) and fails; "a@b.c" and the
    # "@x" inside backticks are not imports; the file is trimmed inside its block
    root, ctx = _gemini(make_vault, {
        "GEMINI.md": "# Project\n@docs/style.md\nAsk a@b.c, see @team, not `@x`.\n\n",
        "docs/style.md": "Two spaces.\n", ".gemini/settings.json": "{}"}, "gem")
    real = root.resolve()
    block = (f"--- Context from: {real}/GEMINI.md ---\n# Project\n"
             "<!-- Imported from: docs/style.md -->\nTwo spaces.\n\n"
             "<!-- End of import from: docs/style.md -->\n"
             f"Ask a@b.c, see <!-- Import failed: team, - ENOENT: no such file or directory, "
             f"access '{real}/team,' -->"
             " not `@x`.\n"
             f"--- End of Context from: {real}/GEMINI.md ---")
    assert ctx.text == block
    assert [(p.path, p.role, p.via) for p in ctx.pieces] == [
        ("GEMINI.md", "context", ""), ("docs/style.md", "import", "GEMINI.md")]
    assert [(i.line, i.target, i.kind) for i in ctx.imports] == [(3, "team,", "missing")]
    code, out, err = context(root, "--show")
    assert (code, err) == (0, "") and f"----- gemini-cli: GEMINI.md -----\n{block}\n" in out
    assert diagnostics(root, "import-problem")[0].message == (
        "@team, names no file: Gemini CLI imports nothing here")


def test_gemini_missing_and_cyclic_imports(make_vault):
    # the file at the top is not on the chain: a.md -> b.md -> a.md is caught at b.md
    root, ctx = _gemini(make_vault, {"GEMINI.md": "@a.md\n@gone.md\n", "a.md": "A\n@b.md\n",
                                     "b.md": "B\n@a.md\n"}, "gem-cycle")
    real = root.resolve()
    assert ctx.text == (
        f"--- Context from: {real}/GEMINI.md ---\n"
        "<!-- Imported from: a.md -->\nA\n<!-- Imported from: b.md -->\nB\n"
        "<!-- File already processed: a.md -->\n\n<!-- End of import from: b.md -->\n\n"
        "<!-- End of import from: a.md -->\n"
        f"<!-- Import failed: gone.md - ENOENT: no such file or directory, access "
        f"'{real}/gone.md' -->\n"
        f"--- End of Context from: {real}/GEMINI.md ---")
    assert [(i.path, i.line, i.target, i.kind) for i in ctx.imports] == [
        ("b.md", 2, "a.md", "circular"), ("GEMINI.md", 2, "gone.md", "missing")]
    assert findings(root, "import-problem") == [("import-problem", "GEMINI.md", 2),
                                                ("import-problem", "b.md", 2)]


def test_gemini_import_depth_one_under_and_over(make_vault):
    # maxDepth 5: h1..h5 are expanded (depths 1-5); h5's own "@h6.md" stays as text
    chain = {"GEMINI.md": "@h1.md\n"}
    for n in range(1, 7):
        chain[f"h{n}.md"] = f"hop {n}\n" + (f"@h{n + 1}.md\n" if n < 6 else "")
    root, ctx = _gemini(make_vault, chain, "gem-deep")
    assert [p.path for p in ctx.pieces] == ["GEMINI.md", "h1.md", "h2.md", "h3.md", "h4.md",
                                            "h5.md"]
    assert "hop 5\n@h6.md\n" in ctx.text and "hop 6" not in ctx.text
    assert [(i.path, i.target, i.kind) for i in ctx.imports] == [("h5.md", "h6.md", "too-deep")]


def test_gemini_context_file_name_and_the_folders_above(tmp_path):
    # context.fileName renames the file; the folders from the git root down are read, the
    # paths sorted as strings ("/…/repo/CONTEXT.md" < "/…/repo/vault/CONTEXT.md")
    root = _repo(tmp_path, {"repo/CONTEXT.md": "Top.\n", "repo/vault/CONTEXT.md": "Here.\n",
                            "repo/vault/GEMINI.md": "Not read.\n",
                            "repo/vault/vaultkit.toml": 'runtimes = ["gemini-cli"]\n',
                            "repo/vault/.gemini/settings.json":
                                '{"context": {"fileName": ["CONTEXT.md"]}}'})
    ctx = loaded(root, "gemini-cli")
    assert [p.path for p in ctx.pieces] == ["../CONTEXT.md", "CONTEXT.md"]
    assert "Not read." not in ctx.text and ctx.text.count("--- Context from: ") == 2
    assert ctx.limits_source.startswith("context.fileName in .gemini/settings.json")


# -- detection of the new runtimes, and OpenClaw under the Codex harness -------------------

def test_new_runtimes_are_not_detected_in_a_plain_openclaw_or_claude_vault(make_vault):
    files = dict(OPENCLAW)
    files.update(CLAUDE)
    root = make_vault(files, root_name="plain")
    assert detected(load_vault(root, root=root, use_cache=False)) == ["openclaw", "claude-code"]
    root = make_vault({**OPENCLAW, "vaultkit.toml": 'runtimes = ["openclaw", "gemini-cli"]\n'},
                      root_name="chosen")
    assert detected(load_vault(root, root=root, use_cache=False)) == ["openclaw", "gemini-cli"]


def test_loader_names_match_the_registry():
    from vaultkit.vault.profile import RUNTIME_LOADERS
    from vaultkit.vault.runtimes import REGISTRY

    assert sorted(RUNTIME_LOADERS) == sorted(REGISTRY)


@pytest.mark.parametrize("slots, injected", [({}, False), ({"memory": "none"}, True)])
def test_openclaw_codex_harness_routes_memory_md_to_the_memory_tools(make_vault, tmp_path,
                                                                     slots, injected):
    config = tmp_path / "openclaw.json"
    config.write_text(json.dumps({"agents": {"defaults": {"embeddedHarness": {"runtime": "codex"}}},
                                  "plugins": {"slots": slots}}))
    root = make_vault(OPENCLAW, root_name=f"harness-{injected}")
    vault = load_vault(root, root=root, use_cache=False)
    (ctx,) = contexts(vault, ["openclaw"], None, openclaw_config=str(config))
    assert ("MEMORY.md" in [p.path for p in ctx.pieces]) is injected
    note = ("MEMORY.md is not injected: agents.defaults.embeddedHarness.runtime is 'codex' "
            "and the memory plugin is on")
    assert any(n.startswith(note) for n in ctx.notes) is not injected


def test_hermes_vault_that_is_the_memories_folder(make_vault):
    # the limits and headers go by file name, so a vault that is ~/.hermes/memories itself
    # needs only its file list; a limit from config.yaml is a vaultkit.toml edit
    ctx = loaded(make_vault({"vaultkit.toml": 'runtimes = ["hermes"]\n[runtime.hermes]\n'
                                              'files = ["MEMORY.md", "USER.md"]\n'
                                              'file-limits = {"MEMORY.md" = 3000, '
                                              '"USER.md" = 1375}\n',
                             "MEMORY.md": "a" * 2201, "USER.md": "Prefers tea.\n"},
                            root_name="memories"), "hermes")
    assert [p.injected.split("\n")[1] for p in ctx.pieces] == [
        "MEMORY (your personal notes) [73% — 2,201/3,000 chars]",
        "USER PROFILE (who the user is) [0% — 12/1,375 chars]"]


def test_gemini_settings_and_renamed_files_above_are_cache_inputs(tmp_path):
    # a cached result of the rules must follow the settings file and, once it renames the
    # context file, the renamed files in the folders above the vault
    from vaultkit.vault.runtimes import outside_state

    root = _repo(tmp_path, {"repo/vault/vaultkit.toml": 'runtimes = ["gemini-cli"]\n',
                            "repo/vault/.gemini/settings.json":
                                '{"context": {"fileName": "CONTEXT.md"}}'})
    state = outside_state(load_vault(root, root=root, use_cache=False))
    assert f"{root / '.gemini' / 'settings.json'}:" in state
    assert f"{tmp_path / 'repo' / 'CONTEXT.md'}:-" in state


def test_gemini_settings_it_does_not_simulate_are_said(make_vault):
    root, ctx = _gemini(make_vault, {"GEMINI.md": "G\n", ".gemini/settings.json":
                                     '{"context": {"importFormat": "flat", '
                                     '"memoryBoundaryMarkers": [".git"]}}'}, "gem-flat")
    assert (".gemini/settings.json sets context.importFormat = \"flat\": not simulated, what "
            "Gemini CLI loads differs from the above") in ctx.notes


# -- what to do about a cut ------------------------------------------------------------------
# SOUL.md of 256 lines of 100 characters (99 and the newline): 25,600, 25,599 once trimmed.
# Line k ends at 100k, so the file first passes the 20,000 per-file limit on line 201:
# moving lines 201-256 out leaves 20,000 (19,999 trimmed), which loads whole.

def _soul() -> str:
    return "".join(f"{n:03d}" + "x" * 96 + "\n" for n in range(1, 257))


def test_context_says_what_stops_a_per_file_cut(make_vault):
    root = make_vault({**OPENCLAW, "SOUL.md": _soul()})
    code, out, _ = context(root, "--runtime", "openclaw")
    assert code == 1
    rows = out.splitlines()
    at = next(i for i, line in enumerate(rows) if ". SOUL.md" in line)
    assert rows[at + 1].strip() == (
        "to load it whole: move lines 201–256 to a topic note in memory/ (or split the "
        "file), or raise agents.defaults.bootstrapMaxChars to 25,599 in openclaw.json")
    # doing what it says stops the cut; one line fewer moved would not
    (root / "SOUL.md").write_text("".join(_soul().splitlines(True)[:200]))
    assert not loaded(root, "openclaw").cut
    (root / "SOUL.md").write_text("".join(_soul().splitlines(True)[:201]))
    assert loaded(root, "openclaw").cut


def test_context_advice_names_the_config_and_the_total(make_vault, tmp_path):
    # the total set to 3,000 in openclaw.json: AGENTS.md (45 trimmed) and the others go in
    # first; SOUL.md (2nd, 25,599) gets what is left
    root = make_vault({**OPENCLAW, "SOUL.md": _soul()})
    cfg = root.parent / "openclaw.json"
    cfg.write_text("{agents: {defaults: {bootstrapTotalMaxChars: 3000}}}")
    vault = load_vault(root, root=root, use_cache=False)
    (ctx,) = contexts(vault, ["openclaw"])
    soul = next(p for p in ctx.pieces if p.path == "SOUL.md")
    left = soul.injected_length
    # with the per-file limit (20,000), everything loads in 20,000 + the other files
    need = sum(p.injected_length if p.role == "missing" else min(p.length, 20000)
               for p in ctx.pieces)
    first = left // 100 + 1  # the line on which SOUL.md passes what was left of the total
    code, out, _ = context(root, "--runtime", "openclaw", "--format", "json")
    (item,) = json.loads(out)["runtimes"]
    assert item["limits_source"] == (
        f"per file: default of the newest known version (no install found); in all: "
        f"openclaw.json agents.defaults.bootstrapTotalMaxChars ({cfg})")
    advice = {f["path"]: f["advice"] for f in item["files"]}
    assert advice["SOUL.md"] == (
        f"to load it whole: move lines {first}–256 to a topic note in memory/, or raise "
        f"agents.defaults.bootstrapTotalMaxChars to {need:,} in {cfg}")
    assert advice["AGENTS.md"] is None


def test_a_starter_vault_loads_whole_with_no_double_missing(tmp_path):
    from vaultkit.cli.starter import init_vault

    root = tmp_path / "ws" / "v"
    init_vault(root)
    # 0.2.0's starter writes TOOLS.md and IDENTITY.md: only BOOTSTRAP.md (the first-run
    # ritual, which the agent deletes) is injected as a marker
    assert (root / "TOOLS.md").is_file() and (root / "IDENTITY.md").is_file()
    code, out, _ = context(root, "--runtime", "openclaw")
    assert code == 0
    assert "missing; missing" not in out
    assert [line.split()[1] for line in out.splitlines() if "missing" in line.split(";")[0]] \
        == ["BOOTSTRAP.md"]
    assert "to load it" not in out


def test_context_advice_for_an_agent_names_its_own_entry(make_vault):
    root = make_vault({**OPENCLAW, "SOUL.md": _soul()})
    cfg = root.parent / "openclaw.json"
    cfg.write_text('{agents: {list: [{id: "ops"}]}}')
    code, out, _ = context(root, "--runtime", "openclaw", "--agent", "ops")
    rows = out.splitlines()
    at = next(i for i, line in enumerate(rows) if ". SOUL.md" in line)
    assert rows[at + 1].strip() == (
        "to load it whole: move lines 201–256 to a topic note in memory/ (or split the "
        f"file), or raise agents.list[ops].bootstrapMaxChars to 25,599 in {cfg}")


# -- USER.md's fixed cap (OpenClaw 2026.8.2 and later) -----------------------------------------

def _install_openclaw(tmp_path, version, monkeypatch):
    from vaultkit.vault import openclaw

    package = tmp_path / "npm" / "lib" / "node_modules" / "openclaw"
    package.mkdir(parents=True)
    (package / "package.json").write_text(f'{{"name": "openclaw", "version": "{version}"}}')
    monkeypatch.setattr(openclaw, "_npm_prefixes", lambda: [tmp_path / "npm"])


# USER.md of 4,001 units cut at 4,000: the marker for "USER.md" and 4001 with head and tail
# 0 is 1 + 48 + 1 + 45 + 1 = 96 units: budget 4,000 - 96 = 3,904 -> 2,928+976; the marker
# with "2928+976" is 101 and both newlines count: 4,000 - 101 - 2 = 3,897 -> floor(0.75 x
# 3,897) = 2,922 and floor(0.25 x 3,897) = 974, stable: 2,922 + 974 + 101 + 2 = 3,999 units
# (issue #136733: "truncated to 3,999 characters")
USER_4001 = "a" * 2000 + "b" * 2001
USER_CUT = ("a" * 2000 + "b" * 922 + "\n\n[...truncated, read USER.md for full content...]\n"
            "…(truncated USER.md: kept 2922+974 chars of 4001)…\n\n" + "b" * 974)
CAP_REASON = ("over USER.md's fixed 4,000-character cap (OpenClaw 2026.8.2 and later; "
              "bootstrapMaxChars cannot raise it)")


@pytest.mark.parametrize("version", [None, "2026.8.2", "2026.9.4"])
def test_openclaw_user_md_fixed_cap_at_4000_and_4001(make_vault, tmp_path, monkeypatch, version):
    if version:
        _install_openclaw(tmp_path, version, monkeypatch)
    root = make_vault({"AGENTS.md": "# A\n", "USER.md": "u" * 4000 + "\n"}, root_name="u4000")
    user = next(p for p in loaded(root, "openclaw").pieces if p.path == "USER.md")
    assert (user.cut, user.injected, user.injected_length) == ("", "u" * 4000, 4000)
    root = make_vault({"AGENTS.md": "# A\n", "USER.md": USER_4001}, root_name="u4001")
    user = next(p for p in loaded(root, "openclaw").pieces if p.path == "USER.md")
    assert (user.cut, user.injected, user.injected_length) == ("middle", USER_CUT, 3999)
    assert (user.kept, user.lost, user.cap) == (3896, 105, 4000)
    newest = "" if version else "; the newest known contract (no install found)"
    assert user.reason == CAP_REASON + newest


@pytest.mark.parametrize("version", ["2026.7.1", "2026.4.27"])
def test_openclaw_user_md_has_no_cap_before_2026_8_2(make_vault, tmp_path, monkeypatch,
                                                      version):
    # 2026.7.1-2 injected a 5,712-character USER.md whole (issue #136733)
    _install_openclaw(tmp_path, version, monkeypatch)
    root = make_vault({"AGENTS.md": "# A\n", "USER.md": USER_4001})
    ctx = loaded(root, "openclaw")
    user = next(p for p in ctx.pieces if p.path == "USER.md")
    assert (user.cut, user.injected, user.cap) == ("", USER_4001, None)
    assert not any("USER.md" in n for n in ctx.notes)


def test_openclaw_user_md_cap_not_verified_between_the_versions_says_so(make_vault, tmp_path,
                                                                        monkeypatch):
    _install_openclaw(tmp_path, "2026.7.20", monkeypatch)
    root = make_vault({"AGENTS.md": "# A\n", "USER.md": USER_4001})
    ctx = loaded(root, "openclaw")
    assert next(p for p in ctx.pieces if p.path == "USER.md").cut == ""
    assert ("whether OpenClaw 2026.7.20 caps USER.md is not verified (not up to 2026.7.1, "
            "4,000 from 2026.8.2); no cap applied") in ctx.notes


def test_openclaw_raising_bootstrap_max_chars_does_not_lift_the_user_md_cap(make_vault, tmp_path,
                                                                           monkeypatch):
    _install_openclaw(tmp_path, "2026.8.2", monkeypatch)
    (tmp_path / "openclaw.json").write_text(
        '{"agents": {"defaults": {"bootstrapMaxChars": 30000}}}')
    user_md = "# User\n" + "".join(f"- preference {i:03d} " + "x" * 40 + "\n" for i in range(80))
    root = make_vault({"AGENTS.md": "# A\n", "SOUL.md": "s" * 25000, "USER.md": user_md})
    ctx = loaded(root, "openclaw")
    soul, user = (next(p for p in ctx.pieces if p.path == n) for n in ("SOUL.md", "USER.md"))
    assert soul.cut == "" and soul.injected_length == 25000  # the raise works for SOUL.md
    assert user.cut == "middle" and user.injected_length <= 4000 and user.reason == CAP_REASON
    code, out, _ = context(root, "--runtime", "openclaw")
    assert code == 1
    # a 7-unit heading line, then 80 lines of 58 units: after line n (n >= 2) come
    # 7 + 58 x (n - 1) units, over 4,000 first at n = 70
    assert (f"(over USER.md's fixed 4,000-character cap (OpenClaw 2026.8.2 and later; "
            f"bootstrapMaxChars cannot raise it))\n") in out
    assert ("to load it whole: move lines 70–81 to a topic note in memory/ (or split the "
            "file), or shorten it to 4,000 chars: USER.md's fixed cap, which "
            "agents.defaults.bootstrapMaxChars cannot raise\n") in out
    assert "raise agents.defaults.bootstrapMaxChars to" not in out


def test_openclaw_a_lower_bootstrap_max_chars_lowers_the_user_md_cap(make_vault, tmp_path,
                                                                    monkeypatch):
    # min(bootstrapMaxChars, 4,000): 3,000 cuts USER.md at 3,000, and raising it helps
    # only up to 4,000
    _install_openclaw(tmp_path, "2026.8.2", monkeypatch)
    (tmp_path / "openclaw.json").write_text('{"agents": {"defaults": {"bootstrapMaxChars": 3000}}}')
    root = make_vault({"AGENTS.md": "# A\n", "USER.md": USER_4001})
    user = next(p for p in loaded(root, "openclaw").pieces if p.path == "USER.md")
    assert user.reason == "over the per-file limit of 3,000" and user.injected_length <= 3000
    code, out, _ = context(root, "--runtime", "openclaw")
    assert (f"shorten it to 4,000 chars: USER.md's fixed cap, which "
            f"agents.defaults.bootstrapMaxChars cannot raise (and raise "
            f"agents.defaults.bootstrapMaxChars to 4,000 in {tmp_path / 'openclaw.json'})") in out
    # 3,000 of 4,001 loaded whole from 4,000 to 4,001: a USER.md of 3,000 loads whole
    root = make_vault({"AGENTS.md": "# A\n", "USER.md": "u" * 3000}, root_name="u3000")
    assert next(p for p in loaded(root, "openclaw").pieces if p.path == "USER.md").cut == ""


def test_openclaw_user_md_cap_reported_by_the_rule_and_the_audit(make_vault, tmp_path,
                                                                monkeypatch):
    _install_openclaw(tmp_path, "2026.8.2", monkeypatch)
    root = make_vault({"AGENTS.md": "# A\n", "USER.md": USER_4001})
    (diag,) = diagnostics(root, "bootstrap-truncation")
    assert diag.message == (
        "USER.md: OpenClaw loads 3,896 of its 4,001 chars (" + CAP_REASON + "; OpenClaw "
        f"2026.8.2 default (read from {tmp_path / 'npm/lib/node_modules/openclaw/package.json'})"
        "; no openclaw.json found): line 1 is never loaded")
    (tmp_path / "openclaw.json").write_text('{"agents": {"defaults": {"bootstrapMaxChars": 30000}}}')
    code, out, _ = invoke(["audit", str(root), "--format", "json"], root)
    check = next(c for c in json.loads(out) if c["id"] == "bootstrap-truncation")
    assert "cut USER.md below 4,000 chars" in check["hint"]
    assert "below 30,000" not in check["hint"]


def test_openclaw_user_md_cap_assumed_without_an_install_is_a_warning(make_vault, tmp_path,
                                                                     monkeypatch):
    """With no OpenClaw install to show the version, USER.md's 2026.8.2 cap is assumed: the
    cut is reported, as a warning (an older OpenClaw loads the file whole), so the commit
    is not refused for it; with 2026.8.2 installed it is an error."""
    root = make_vault({"AGENTS.md": "# A\n", "USER.md": USER_4001})
    (diag,) = diagnostics(root, "bootstrap-truncation")
    assert diag.severity == "warning" and CAP_REASON in diag.message
    code, out, _ = invoke(["check", str(root), "--select", "bootstrap-truncation"], root)
    assert code == 0 and "bootstrap-truncation warning" in out
    # a cut the per-file limit makes as well is an error, assumed version or not
    big = make_vault({"AGENTS.md": "# A\n", "USER.md": "u" * 20100 + "\n"}, root_name="big")
    (diag,) = diagnostics(big, "bootstrap-truncation")
    assert diag.severity == "error"
    _install_openclaw(tmp_path, "2026.8.2", monkeypatch)
    (diag,) = diagnostics(root, "bootstrap-truncation")
    assert diag.severity == "error"


# -- the file set by version: six files from 2026.8.2 ------------------------------------------

SIX = ["AGENTS.md", "SOUL.md", "IDENTITY.md", "USER.md", "BOOTSTRAP.md", "MEMORY.md"]


@pytest.mark.parametrize("version, session, names", [
    (None, "main", SIX),
    ("2026.8.2", "main", SIX),
    ("2026.8.2", "cron", ["AGENTS.md", "SOUL.md", "IDENTITY.md", "USER.md"]),
    ("2026.8.2", "subagent", ["AGENTS.md"]),
    ("2026.8.2", "group", SIX[:-1]),
    ("2026.7.1", "main", ["AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "USER.md",
                          "HEARTBEAT.md", "BOOTSTRAP.md", "MEMORY.md"]),
])
def test_openclaw_file_set_by_version(make_vault, tmp_path, monkeypatch, version, session,
                                      names):
    # OPENCLAW has every file but BOOTSTRAP.md (a marker in main and group sessions)
    if version:
        _install_openclaw(tmp_path, version, monkeypatch)
    root = make_vault(OPENCLAW, root_name="oc")
    ctx = loaded(root, "openclaw", session)
    assert [p.path for p in ctx.pieces] == names
    retired = [n for n in ("TOOLS.md", "HEARTBEAT.md") if n not in names]
    if session == "main" and retired:
        assert ctx.notes[0] == (
            "TOOLS.md and HEARTBEAT.md are not injected: OpenClaw 2026.8.2 and later load only "
            "AGENTS.md, SOUL.md, IDENTITY.md, USER.md, BOOTSTRAP.md, MEMORY.md"
            + ("" if version else " (the newest known contract: no install found)"))


def test_openclaw_six_file_set_byte_for_byte(make_vault, tmp_path, monkeypatch):
    _install_openclaw(tmp_path, "2026.8.2", monkeypatch)
    files = dict(OPENCLAW)
    del files["USER.md"]  # absent: skipped, no marker, from 2026.8.2
    root = make_vault(files, root_name="oc6")
    code, out, err = context(root, "--runtime", "openclaw", "--show")
    assert (code, err) == (0, "")
    marker = f"[MISSING] Expected at: {root.resolve() / 'BOOTSTRAP.md'}"
    body = out.split("\n  note: the skills list", 1)[1].split("\n", 1)[1]
    assert body == (
        "----- openclaw: AGENTS.md -----\n# Operating rules\n\n- Search memory before acting on the past.\n"
        "----- openclaw: SOUL.md -----\n# Soul\nCalm, brief, exact.\n"
        "----- openclaw: IDENTITY.md -----\n# Identity\nName: Wren\n"
        f"----- openclaw: BOOTSTRAP.md -----\n{marker}\n"
        "----- openclaw: MEMORY.md -----\n# Memory\n- The backup runs at 02:00.\n"
        "----- end of openclaw -----\n")
    injected = ["# Operating rules\n\n- Search memory before acting on the past.",
                "# Soul\nCalm, brief, exact.", "# Identity\nName: Wren", marker,
                "# Memory\n- The backup runs at 02:00."]
    assert f"total {sum(map(len, injected)):,} chars loaded" in out
    # up to 2026.7.1 the absent USER.md is a marker
    _install_openclaw(tmp_path / "old", "2026.7.1", monkeypatch)
    user = next(p for p in loaded(root, "openclaw").pieces if p.path == "USER.md")
    assert (user.role, user.injected) == ("missing",
                                          f"[MISSING] Expected at: {root.resolve() / 'USER.md'}")


def test_openclaw_file_set_not_verified_between_the_versions_says_so(make_vault, tmp_path,
                                                                     monkeypatch):
    _install_openclaw(tmp_path, "2026.7.20", monkeypatch)
    root = make_vault({"AGENTS.md": "# A\n", "TOOLS.md": "# T\n"})
    ctx = loaded(root, "openclaw")
    assert "TOOLS.md" not in [p.path for p in ctx.pieces]
    assert ctx.notes[0] == (
        "TOOLS.md is not injected: OpenClaw 2026.8.2 and later load only AGENTS.md, SOUL.md, "
        "IDENTITY.md, USER.md, BOOTSTRAP.md, MEMORY.md (whether OpenClaw 2026.7.20 loads "
        "TOOLS.md and HEARTBEAT.md is not verified (up to 2026.7.1 it does, from 2026.8.2 it "
        "does not); they are not counted)")


def test_openclaw_user_md_over_its_cap_and_short_of_the_total(make_vault, tmp_path, monkeypatch):
    # the total cuts USER.md first; it loads whole only once it is 4,000 and the total holds
    # it: the advice counts it at 4,000, not at its 4,001
    _install_openclaw(tmp_path, "2026.8.2", monkeypatch)
    (tmp_path / "openclaw.json").write_text(
        '{"agents": {"defaults": {"bootstrapTotalMaxChars": 3000}}}')
    root = make_vault({"AGENTS.md": "# A\n", "SOUL.md": "# S\n", "IDENTITY.md": "# I\n",
                       "BOOTSTRAP.md": "# B\n", "USER.md": USER_4001})
    user = next(p for p in loaded(root, "openclaw").pieces if p.path == "USER.md")
    assert user.reason == "only 2,991 of the total limit of 3,000 were left"
    code, out, _ = context(root, "--runtime", "openclaw")
    # 3 + 3 + 3 + 4,000 + 3 = 4,012
    assert ("or shorten it to 4,000 chars: USER.md's fixed cap, which "
            "agents.defaults.bootstrapMaxChars cannot raise (and raise "
            "agents.defaults.bootstrapTotalMaxChars to 4,012 in "
            f"{tmp_path / 'openclaw.json'})\n") in out


def test_a_folder_named_is_a_vault_for_context_as_for_check(tmp_path):
    """A repository with only GEMINI.md (or CLAUDE.md) has no other vault marker: named on
    the command line, "." included, `context` takes it as `check` does; not named (found
    by walking up from here) it is still not a vault."""
    root = tmp_path / "repo"
    write(root, {"GEMINI.md": "# Project\n@./docs/style.md\n", "docs/style.md": "Use tabs.\n"})
    for named in (".", str(root)):
        code, out, err = invoke(["context", named], root)
        assert (code, err) == (0, "") and out.startswith("Gemini CLI (gemini-cli)\n")
        assert "2. docs/style.md" in out
    code, out, err = invoke(["context"], root)
    assert code == 2 and "not a vault" in err
