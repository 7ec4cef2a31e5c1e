"""skill-shadows-bundled: a workspace skill whose name replaces a skill the runtime ships."""

from __future__ import annotations

from test_rules_support import diagnostics, findings, isolated_openclaw  # noqa: F401

BASE = {"AGENTS.md": "# Agents\n", "SOUL.md": "# Soul\n", "MEMORY.md": "# Memory\n"}


def _skill(name: str | None, body: str = "Edit notes directly.\n") -> str:
    named = f"name: {name}\n" if name is not None else ""
    return f"---\n{named}description: Work on the vault's files directly.\n---\n# Skill\n\n{body}"


def test_a_skill_named_as_a_bundled_one_in_another_folder_is_reported(make_vault):
    root = make_vault({**BASE, "skills/obsidian-direct/SKILL.md": _skill("obsidian"),
                       ".agents/skills/gh/SKILL.md": _skill("github")})
    got = diagnostics(root, "skill-shadows-bundled")
    assert [(d.path, d.line, d.severity) for d in got] == [
        (".agents/skills/gh/SKILL.md", 2, "warning"),
        ("skills/obsidian-direct/SKILL.md", 2, "warning")]
    assert got[1].message == ("name 'obsidian' is the name of a skill OpenClaw ships: this "
                              "workspace skill replaces the bundled one (name it "
                              "'obsidian-direct', as its folder, to keep both)")


def test_a_deliberate_override_and_other_names_are_left_alone(make_vault):
    root = make_vault({**BASE,
                       "skills/obsidian/SKILL.md": _skill("obsidian"),  # an override on purpose
                       "skills/github/SKILL.md": _skill(None),  # the folder's name: the same
                       "skills/vault-tools/SKILL.md": _skill("vault-tools"),
                       "skills/weather-cn/SKILL.md": _skill("weather-cn"),
                       "skills/notes/SKILL.md": "# no frontmatter\n"})
    assert findings(root, "skill-shadows-bundled") == []


def test_only_where_openclaw_applies_and_the_names_are_the_profiles(make_vault):
    # a Claude Code project (no OpenClaw file, no memory folder): OpenClaw's list is not its
    root = make_vault({"CLAUDE.md": "# Project\n", "skills/obsidian-direct/SKILL.md":
                       _skill("obsidian"), "vaultkit.toml": 'profile = "openclaw"\n'
                       'runtimes = ["claude-code"]\n'})
    assert findings(root, "skill-shadows-bundled") == []
    # the list is data: vaultkit.toml can name a skill a newer OpenClaw ships
    root = make_vault({**BASE, "skills/my-calendar/SKILL.md": _skill("calendar"),
                       "vaultkit.toml": '[runtime.openclaw]\nbundled-skills = ["calendar"]\n'},
                      root_name="other")
    assert findings(root, "skill-shadows-bundled") == [
        ("skill-shadows-bundled", "skills/my-calendar/SKILL.md", 2)]
