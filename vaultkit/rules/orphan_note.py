from vaultkit.rule import Rule


class OrphanNote(Rule):
    """
    ## What it does
    Reports a structured note (decisions, lessons, people, projects, preferences) that no
    other note links to. Links from `memory/INDEX.md` do not count (the index lists every
    note), nor do links from the note to itself.

    ## Why is this bad?
    A decision nobody links to is found only by luck: no journal entry, project or person
    points at it, so neither the agent walking links nor a person in Obsidian's graph
    reaches it from the context where it matters.

    ## Example
    ```
    memory/decisions/2026-01-pricing.md:1:1: VK503 orphan-note no other note links to this decision (INDEX.md does not count)
    ```

    Link it from where it was made (the journal day) or from the project or person it
    concerns.
    """

    name = "orphan-note"
    code = "VK503"
    severity = "warning"

    def check(self, note, ctx):
        vault = ctx.vault
        if vault.layer_of(note) != "structured":
            return
        from vaultkit.graph import link_graph
        from vaultkit.indexgen import index_path

        graph = link_graph(vault)
        if graph.inbound(note.path, (index_path(vault), note.path)):
            return
        kind = vault.type_of(note) or "note"
        yield self.diag(note.path, 1, 1, f"no other note links to this {kind} "
                        "(INDEX.md does not count)")


RULE = OrphanNote
