from vaultkit.lint.rule import Rule


class OrphanNote(Rule):
    """
    ## What it does
    Reports a structured note (decisions, lessons, people, projects, preferences) that no
    other note links to or names. A link is a wikilink or Markdown link; a name is the
    note's path written out as text, the way most agents refer to notes
    (`` `memory/decisions/use-sqlite-fts.md` ``, `decisions/use-sqlite-fts.md`). Links from
    `memory/INDEX.md` do not count (the index lists every note), nor do links from the
    note to itself.

    Off by default: agents find their typed notes by search (`memory_search`), not by
    walking links, and most real workspaces keep decisions and lessons that nothing links
    to on purpose, so a whole-vault run reported notes no owner would link. Turn it on with
    `extend-select = ["orphan-note"]` in `vaultkit.toml` where the vault is read as a graph.

    ## Why is this bad?
    A decision nobody links to is found only by luck: no journal entry, project or person
    points at it, so neither the agent walking links nor a person in Obsidian's graph
    reaches it from the context where it matters.

    ## Example
    ```
    memory/decisions/2026-01-pricing.md:1:1: VK503 orphan-note warning: no other note links to this decision or names its path (INDEX.md does not count)
    ```

    Link it from where it was made (the journal day) or from the project or person it
    concerns.
    """

    name = "orphan-note"
    code = "VK503"
    severity = "warning"
    default = False  # (a convention of linked vaults; see "What it does")

    def check(self, note, ctx):
        if ctx.folder_page(note) or ctx.layer_of(note) != "structured":
            return  # (a folder's README.md explains the folder: none of its typed notes)
        if ctx.inbound(note):  # (the notes linking to it or naming it, INDEX.md left out)
            return
        kind = ctx.type_of(note) or "note"
        yield self.diag(note.path, 1, 1, f"no other note links to this {kind} or names its "
                        "path (INDEX.md does not count)")


RULE = OrphanNote
