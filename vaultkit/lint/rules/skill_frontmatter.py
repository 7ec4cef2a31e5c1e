import re

from vaultkit.lint.rule import Rule
# (imported here, not in check: an import statement run per note cost ~2 µs a note)
from vaultkit.lint.shared import CLAUDE_SKILL_ROOTS, SKILL_ROOTS, skill_folder, skill_frontmatter

NAME_MAX = 64
DESCRIPTION_MAX = 1024
COMPATIBILITY_MAX = 500


class SkillFrontmatter(Rule):
    """
    ## What it does
    Reports a skill (`skills/**/SKILL.md`, Claude Code's `.claude/skills/*/SKILL.md`) whose
    frontmatter breaks the Agent Skills limits: a `name` over 64 characters or holding
    anything but lowercase letters, digits and single hyphens (not at either end); a
    `description` over 1,024 characters; a `compatibility` over 500. One finding per
    problem. A skill whose frontmatter cannot be read at all is `skill-not-loaded`.
    OpenClaw's nested `metadata` object is valid.

    Not reported: a `name` that differs from its folder (a skill installed under another
    folder name). The specification asks for the match, but the runtimes load a skill by
    its `name`: OpenClaw's loader takes `frontmatter.name`, and the folder's name only when
    there is none (openclaw/openclaw `src/agents/skills/local-loader.ts`,
    `loadSingleSkillDirectory`: `frontmatter.name?.trim() || fallbackName`, read on
    2026-12-07; its `docs/tools/skills.md`: "The folder path is for organization only"),
    and Claude Code uses the folder's name only when `name` is missing.

    Sources, verified on 2026-12-02: agentskills.io/specification (`name`: 1-64
    characters, `a-z`, `0-9` and `-`, no leading, trailing or double hyphen;
    `description`: 1-1024 characters; `compatibility`: at most 500), and openclaw/openclaw
    `docs/tools/skills.md` (an over-long skills list is cut by shortening descriptions,
    `skills.limits.maxSkillsPromptChars`, whose default could not be verified, so it is
    not simulated); code.claude.com/docs/en/skills: Claude Code's `name` is "Lowercase
    letters, numbers, and hyphens only (max 64 characters)".

    ## Why is this bad?
    A client that follows the specification refuses or renames the skill, and a long
    description is the first thing cut when the skills list is over its budget: the
    agent picks skills by these fields.

    ## Example
    ```
    skills/web-search/SKILL.md:2:1: VK310 skill-frontmatter warning: name 'Web_Search' may hold only lowercase letters, digits and single hyphens, not at either end (Agent Skills specification)
    ```
    """

    name = "skill-frontmatter"
    code = "VK310"
    severity = "warning"

    def check(self, note, ctx):
        folder = skill_folder(note.path, SKILL_ROOTS + CLAUDE_SKILL_ROOTS, ctx)
        if folder is None:
            return
        data, problem, _ = skill_frontmatter(note)
        if problem:
            return
        keys = note.fm_keys
        name = data.get("name")
        if isinstance(name, str) and name:
            line = keys.get("name", 1)
            if len(name) > NAME_MAX:
                yield self.diag(note.path, line, 1, f"name is {len(name)} characters, over "
                                f"the Agent Skills limit of {NAME_MAX}")
            elif not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", name):
                yield self.diag(note.path, line, 1, f"name {name!r} may hold only lowercase "
                                "letters, digits and single hyphens, not at either end "
                                "(Agent Skills specification)")
        for key, limit in (("description", DESCRIPTION_MAX),
                           ("compatibility", COMPATIBILITY_MAX)):
            value = data.get(key)
            if isinstance(value, str) and len(value) > limit:
                yield self.diag(note.path, keys.get(key, 1), 1,
                                f"{key} is {len(value):,} characters, over the Agent Skills "
                                f"limit of {limit:,}")


RULE = SkillFrontmatter
