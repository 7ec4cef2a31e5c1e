from vaultkit.lint.diagnostics import Edit, Fix
from vaultkit.lint.rule import Rule


class FrontmatterMissing(Rule):
    """
    ## What it does
    Reports a typed note (decisions, lessons, people, projects, preferences) with no
    frontmatter. A note's type comes from its folder, as the profile maps them.
    A block that exists but does not parse is `frontmatter-invalid`'s finding instead.
    A folder's own page, its `README.md`, `index.md` or `_index.md` (any case), explains
    the folder and is none of its notes: this rule and the other typed-note rules
    (`frontmatter-schema`, `type-mismatch`, `missing-section`, `lesson-by-date`,
    `lesson-entry-undated`, `orphan-note`) leave it alone.

    A warning, not an error: real workspaces keep lessons and decisions without
    frontmatter and find them by search, so a vault adopting vaultkit is not refused its
    first commit for a convention it did not keep. The fix starts the note with a block
    holding the `type` its folder implies (`type: lesson` in `memory/lessons/`), keeping
    every other byte (a byte-order mark, CRLF line endings); the other properties the type
    requires (a decision's date, status and tags) are then `frontmatter-schema`'s to ask
    for, since only the owner knows them.

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
    memory/decisions/community.md:1:1: VK201 frontmatter-missing warning: decision note has no frontmatter; start it with a '---' block holding date, type, status, tags (type: decision)
    ```

    After `vaultkit check --fix`: the note starts with `---`, `type: decision`, `---`.
    """

    name = "frontmatter-missing"
    code = "VK201"
    severity = "warning"
    fixable = True

    def check(self, note, ctx):
        if note.frontmatter is not None or note.fm_error or note.fm_span:
            return
        type_name = ctx.type_of(note)
        spec = ctx.profile.types.get(type_name) if type_name else None
        if spec is None:
            return
        required = [k for k, p in spec.properties.items() if p.required]
        hint = (f"start it with a '---' block holding {', '.join(required)}" if required
                else "start it with a '---' block")
        if "type" in required:
            hint += f" (type: {type_name})"
        fix = None
        if "type" in spec.properties:
            nl = "\r\n" if note.crlf else "\n"
            fix = Fix(f"start the note with 'type: {type_name}' in a frontmatter block",
                      [Edit(0, 0, f"---{nl}type: {type_name}{nl}---{nl}")])
        yield self.diag(note.path, 1, 1, f"{type_name} note has no frontmatter; {hint}", fix)


RULE = FrontmatterMissing
