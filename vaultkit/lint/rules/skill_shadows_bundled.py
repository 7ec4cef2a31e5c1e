from vaultkit.lint.rule import Rule
# (imported here, not in check: an import statement run per note cost ~2 µs a note)
from vaultkit.lint.shared import SKILL_ROOTS, skill_folder, skill_frontmatter


class SkillShadowsBundled(Rule):
    """
    ## What it does
    Reports a workspace skill (`skills/**/SKILL.md`, `.agents/skills/**/SKILL.md`) whose
    `name` is the name of a skill the runtime ships, while its folder is named otherwise:
    `skills/obsidian-direct/SKILL.md` declaring `name: obsidian`. OpenClaw loads a skill under its `name`, and on a name
    conflict the workspace's skill wins over the bundled one, so the bundled `obsidian`
    skill silently disappears from the agent's list. Points at the `name` line.

    Not reported: a skill whose folder has the bundled skill's name too
    (`skills/obsidian/SKILL.md` with `name: obsidian`, or no `name`): that is how an
    override is made on purpose (OpenClaw's "local overrides"); a name no bundled skill has;
    runtimes that are not detected for the vault. The bundled names are data in the profile
    (`runtimes.openclaw.bundled_skills` in rules/openclaw.yaml; `[runtime.openclaw]
    bundled-skills = [...]` in vaultkit.toml changes them).

    Sources, checked on 2026-12-07: openclaw/openclaw `docs/tools/skills.md` ("If a skill
    name conflicts, precedence is: `<workspace>/skills` (highest) → … → bundled skills
    (lowest)"; a skill is listed under its frontmatter `name`), and the names of the
    folders under `skills/` in a stored copy of openclaw/openclaw (the list moves between
    versions).

    ## Why is this bad?
    The owner meant to add a variant beside the bundled skill and removed the bundled one
    instead: its instructions (how to find the vault, `obsidian-cli`'s safe renames) are
    gone from every session, and nothing says so.

    ## Example
    ```
    skills/obsidian-direct/SKILL.md:2:1: VK311 skill-shadows-bundled warning: name 'obsidian' is the name of a skill OpenClaw ships: this workspace skill replaces the bundled one (name it 'obsidian-direct', as its folder, to keep both)
    ```
    """

    name = "skill-shadows-bundled"
    code = "VK311"
    severity = "warning"

    def check(self, note, ctx):
        # (<workspace>/.agents/skills wins over bundled skills too)
        folder = skill_folder(note.path, SKILL_ROOTS + (".agents/skills/",), vault=ctx)
        if folder is None:
            return
        data, problem, _ = skill_frontmatter(note)
        declared = data.get("name") if not problem else None
        if not isinstance(declared, str) or declared.strip() == folder:
            return
        declared = declared.strip()
        runtimes = ctx.profile.runtimes
        for runtime in ctx.runtimes():
            spec = runtimes.get(runtime)
            if spec is None or declared not in spec.bundled_skills:
                continue
            yield self.diag(note.path, note.fm_keys.get("name", 1), 1,
                            f"name '{declared}' is the name of a skill {spec.label or runtime} "
                            "ships: this workspace skill replaces the bundled one (name it "
                            f"'{folder}', as its folder, to keep both)")
            return


RULE = SkillShadowsBundled
