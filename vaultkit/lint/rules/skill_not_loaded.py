from vaultkit.lint.rule import Rule


class SkillNotLoaded(Rule):
    """
    ## What it does
    Reports an OpenClaw workspace skill (`skills/**/SKILL.md`, when OpenClaw applies to
    the vault) that OpenClaw will not load: it has no YAML frontmatter, its frontmatter
    cannot be read, or it gives no `description`. OpenClaw reads the frontmatter as YAML
    and, when that fails, with a single-line `key: value` reader in which a nested
    `metadata` block is read as JSON5; this rule does the same, so OpenClaw's usual
    multi-line `metadata: { "openclaw": ... }` block is valid. A missing `name` is not
    reported: OpenClaw then uses the folder's name.

    Sources, verified on 2026-12-02: openclaw/openclaw `docs/tools/skills.md` ("Every
    skill needs at minimum a `name` and `description` in the frontmatter"; "Invalid skill
    files are reported and skipped"; the YAML-then-single-line parsing and the nested
    `metadata` note) and the Agent Skills specification (agentskills.io/specification:
    `SKILL.md` "must contain YAML frontmatter", `description` required). Claude Code is
    more lenient and is not judged here: code.claude.com/docs/en/skills says every field is
    optional, a missing `name` is the folder's and a missing `description` the first
    paragraph of the body.

    ## Why is this bad?
    The skill is silently absent from the agent's skill list: the agent never learns it
    exists, and the work it encodes is redone or done wrong.

    ## Example
    ```
    skills/deploy/SKILL.md:1:1: VK309 skill-not-loaded error: no frontmatter: OpenClaw skips this skill (start the file with --- name: deploy / description: ... ---)
    ```
    """

    name = "skill-not-loaded"
    code = "VK309"
    severity = "error"
    note_alone = True  # (whether OpenClaw applies is part of the results cache's context)

    def check(self, note, ctx):
        from vaultkit.lint.shared import skill_folder, skill_frontmatter
        from vaultkit.vault.runtimes import applies

        folder = skill_folder(note.path, vault=ctx.vault)
        if folder is None or not applies(ctx.vault, "workspace-set"):
            return
        data, problem, line = skill_frontmatter(note)
        if problem:
            yield self.diag(note.path, line, 1, f"{problem}: OpenClaw skips this skill "
                            f"(start the file with --- name: {folder} / description: ... ---)")
            return
        description = data.get("description")
        if not isinstance(description, str) or not description.strip():
            yield self.diag(note.path, note.fm_keys.get("description", 1), 1,
                            "no description: OpenClaw skips this skill (the description "
                            "is how the agent decides when to use it)")


RULE = SkillNotLoaded
