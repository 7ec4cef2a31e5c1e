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

    Three or more skills with the same problem whose texts are the same but for the
    skill's folder name (a batch of stubs generated from one template and never filled
    in) are one finding, at the first of them, naming how many there are.

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
    scope = "vault"  # (a batch of stubs is judged together)

    def check_vault(self, ctx):
        from vaultkit.lint.shared import skill_folder
        from vaultkit.vault.runtimes import applies

        if not applies(ctx.vault, "workspace-set"):
            return
        found = []  # (path, line, message, the text with the skill's own names left out)
        # (by path: no other note is read; the name first, as a comprehension: the editor's
        # server runs this on every keystroke over every note of the vault)
        for path in [p for p in ctx.vault.note_paths() if p.endswith("/SKILL.md")]:
            folder = skill_folder(path, vault=ctx.vault)
            if folder is None:
                continue
            note = ctx.vault.note(path)
            if note is None or note.error:
                continue
            problem = self._problem(note, folder)
            if problem is not None:
                found.append((path, *problem, _template(note, folder)))
        batches: dict = {}
        for item in found:
            batches.setdefault((item[2], item[3]), []).append(item)
        for (message, _), items in batches.items():
            if len(items) < BATCH:
                for path, line, message, _ in items:
                    yield self.diag(path, line, 1, message)
                continue
            names = ", ".join(p.rsplit("/", 2)[-2] for p, *_ in items[:3])
            more = f" and {len(items) - 3} more" if len(items) > 3 else ""
            first = items[0]
            yield self.diag(first[0], first[1], 1,
                            f"{len(items)} skills written from one template ({names}{more}) "
                            f"share this problem: {message}; fill them in or remove the "
                            "ones not used")

    @staticmethod
    def _problem(note, folder):
        """``(line, message)`` when OpenClaw skips this skill, else None."""
        from vaultkit.lint.shared import skill_frontmatter

        data, problem, line = skill_frontmatter(note)
        if problem:
            return line, (f"{problem}: OpenClaw skips this skill (start the file with "
                          f"--- name: {folder} / description: ... ---)")
        description = data.get("description")
        if not isinstance(description, str) or not description.strip():
            return (note.fm_keys.get("description", 1),
                    "no description: OpenClaw skips this skill (the description is how the "
                    "agent decides when to use it)")
        return None


# this many skills or more with the same problem and the same text but for their names are
# one batch of generated stubs: one finding, not one per stub
BATCH = 3


def _template(note, folder: str) -> str:
    """The skill's text with its folder's name left out: the same for every stub written
    from one template."""
    return note.text.replace(folder, "\0")


RULE = SkillNotLoaded
