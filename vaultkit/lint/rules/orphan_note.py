from vaultkit.lint.rule import Rule
from vaultkit.vault.mentions import FACT, mentions

__all__ = ["OrphanNote", "mentioned_paths", "mentioning", "mentions"]

# the other notes kept per note as reaching it (the first by name): after a change, a note
# at least one of whose kept sources did not change, or with fewer sources than this (all
# of them kept), is judged without the whole vault's links
WITNESSES = 3


def mentioned_paths(vault) -> dict[str, set[str]]:
    """Every path some note writes out -> the notes writing it."""
    cached = getattr(vault, "_mentioned", None)
    if cached is not None:
        return cached
    out: dict[str, set[str]] = {}
    from vaultkit.vault.loader import decoded

    # (as the vault holds them: a note in the parse cache is decoded only to compute it)
    for path, note in vault.notes.entries().items():
        if note.error:
            continue
        for found in vault.fact(path, FACT, lambda n=note: mentions(decoded(n))):
            out.setdefault(found, set()).add(path)
    vault._mentioned = out
    return out


def mentioning(vault, note, exclude) -> set[str]:
    """The notes other than ``exclude`` that write out this note's path, in full or by its
    last parts (``memory/decisions/x.md``, ``decisions/x.md``, ``x.md``): the way most real
    workspaces refer to notes."""
    found = mentioned_paths(vault)
    out: set[str] = set()
    if found:
        parts = note.path.lower().split("/")
        for i in range(len(parts)):
            out.update(found.get("/".join(parts[i:]), ()))
    return out.difference(exclude)


def _reached_from(ctx, changed: set[str]) -> dict[str, set[str]]:
    """The notes the notes ``changed`` link to or write the path of now -> which of them
    do (a note reaching itself and INDEX.md are left out), once per run."""
    memo = ctx.__dict__.get("_orphan_reached")
    if memo is not None and memo[0] is changed:
        return memo[1]
    from vaultkit.links.graph import linked_from
    from vaultkit.links.indexgen import index_path

    vault = ctx.vault
    index = index_path(vault)
    out: dict[str, set[str]] = {}
    said: dict[str, set[str]] = {}  # a written path's last part -> (path, the note writing it)
    for path in sorted(changed):
        note = vault.notes.get(path)
        if note is None or note.error or path == index:
            continue
        for target in linked_from(vault, note):
            if target != path:
                out.setdefault(target, set()).add(path)
        for written in vault.fact(path, FACT, lambda n=note: mentions(n)):
            said.setdefault(written.rsplit("/", 1)[-1], set()).add((written, path))
    if said:
        for path in vault.notes:
            low = path.lower()
            for written, source in said.get(low.rsplit("/", 1)[-1], ()):
                if source != path and (low == written or low.endswith("/" + written)):
                    out.setdefault(path, set()).add(source)
    ctx._orphan_reached = (changed, out)
    return out


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

    note_alone = True  # (the notes reaching each note are its reads; see touched)

    def touched(self, ctx, changed):
        return _reached_from(ctx, changed).keys()

    def check(self, note, ctx):
        vault = ctx.vault
        if vault.layer_of(note) != "structured":
            return
        from vaultkit.links.indexgen import index_path

        exclude = (index_path(vault), note.path)
        sources = self._sources(note, ctx, exclude)
        ctx.reads(self.name, note.path, sources[:WITNESSES])
        if sources:
            return
        kind = vault.type_of(note) or "note"
        yield self.diag(note.path, 1, 1, f"no other note links to this {kind} or names its "
                        "path (INDEX.md does not count)")

    def _sources(self, note, ctx, exclude) -> list[str]:
        """The other notes linking to ``note`` or writing its path, by name; after a change,
        from what reached it last run where that can say (see :data:`WITNESSES`)."""
        before = ctx.before(self.name)
        if before is not None:
            changed, reads, flagged = before
            was = reads.get(note.path, ())
            if was or note.path in flagged:  # (judged last run: reached, or not)
                alive = {w for w in was if w not in changed}
                alive.update(_reached_from(ctx, changed).get(note.path, ()))
                alive.difference_update(exclude)
                if len(was) < WITNESSES or len(alive) >= WITNESSES:
                    return sorted(alive)
        from vaultkit.links.graph import link_graph

        graph = link_graph(vault := ctx.vault)
        return sorted(graph.inbound(note.path, exclude) | mentioning(vault, note, exclude))


RULE = OrphanNote
