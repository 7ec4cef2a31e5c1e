from vaultkit.lint.rule import Rule


class FrontmatterMissing(Rule):
    """
    ## What it does
    Reports a typed note (decisions, lessons, people, projects, preferences) with no
    frontmatter. A note's type comes from its folder, as the profile maps them.
    A block that exists but does not parse is `frontmatter-invalid`'s finding instead.

    ## Why is this bad?
    The type, status, date and tags of a structured note live in its properties. Without
    them the note drops out of INDEX.md's sections, Dataview queries and Obsidian's
    property views, and the schema checks cannot tell a live decision from a rejected one.

    ## Example
    ```markdown
    # Build community before monetizing

    ## Context
    ...
    ```

    ```
    memory/decisions/community.md:1:1: VK201 frontmatter-missing error: decision note has no frontmatter; start it with a '---' block holding date, type, status, tags (type: decision)
    ```
    """

    name = "frontmatter-missing"
    code = "VK201"
    note_alone = True
    severity = "error"

    def check(self, note, ctx):
        if note.frontmatter is not None or note.fm_error or note.fm_span:
            return
        type_name = ctx.vault.type_of(note)
        spec = ctx.profile.types.get(type_name) if type_name else None
        if spec is None:
            return
        required = [k for k, p in spec.properties.items() if p.required]
        hint = (f"start it with a '---' block holding {', '.join(required)}" if required
                else "start it with a '---' block")
        if "type" in required:
            hint += f" (type: {type_name})"
        yield self.diag(note.path, 1, 1, f"{type_name} note has no frontmatter; {hint}")


RULE = FrontmatterMissing
