from vaultkit.lint.rule import Rule
from vaultkit.vault.mentions import FACT, mentions

__all__ = ["OrphanNote", "is_mentioned", "mentioned_paths", "mentions"]


def mentioned_paths(vault) -> dict[str, set[str]]:
    """Every path some note writes out -> the notes writing it."""
    cached = getattr(vault, "_mentioned", None)
    if cached is not None:
        return cached
    out: dict[str, set[str]] = {}
    for path, note in vault.notes.items():
        if note.error:
            continue
        for found in vault.fact(path, FACT, lambda n=note: mentions(n)):
            out.setdefault(found, set()).add(path)
    vault._mentioned = out
    return out


def is_mentioned(vault, note, exclude) -> bool:
    """True when a note other than ``exclude`` writes out this note's path, in full or
    by its last parts (``memory/decisions/x.md``, ``decisions/x.md``, ``x.md``): the way
    most real workspaces refer to notes."""
    found = mentioned_paths(vault)
    if not found:
        return False
    parts = note.path.lower().split("/")
    for i in range(len(parts)):
        sources = found.get("/".join(parts[i:]))
        if sources and any(s not in exclude for s in sources):
            return True
    return False


class OrphanNote(Rule):
    """
    ## What it does
    Reports a structured note (decisions, lessons, people, projects, preferences) that no
    other note links to or names. A link is a wikilink or Markdown link; a name is the
    note's path written out as text, the way most agents refer to notes
    (`` `memory/decisions/use-sqlite-fts.md` ``, `decisions/use-sqlite-fts.md`). Links from
    `memory/INDEX.md` do not count (the index lists every note), nor do links from the
    note to itself.

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

    def check(self, note, ctx):
        vault = ctx.vault
        if vault.layer_of(note) != "structured":
            return
        from vaultkit.links.graph import link_graph
        from vaultkit.links.indexgen import index_path

        graph = link_graph(vault)
        exclude = (index_path(vault), note.path)
        if graph.in_degree(note.path, exclude) or is_mentioned(vault, note, exclude):
            return
        kind = vault.type_of(note) or "note"
        yield self.diag(note.path, 1, 1, f"no other note links to this {kind} or names its "
                        "path (INDEX.md does not count)")


RULE = OrphanNote
