from vaultkit.lint.rule import Rule


class AmbiguousLink(Rule):
    """
    ## What it does
    Reports a link by name (`[[launch]]`, `[[decisions/launch]]`, `[x](launch.md)`) that
    several files match when neither an exact vault path nor a file in the linking note's
    own folder decides it. It names the candidates and the one Obsidian opens: the
    shortest path, ties broken alphabetically.

    ## Why is this bad?
    Obsidian silently picks one of the notes and the agent may follow another by name;
    the two then disagree, and adding a note elsewhere can change where an old link
    goes. A path makes the link mean one thing.

    ## Example
    ```
    memory/2026-02-15.md:4:12: VK502 ambiguous-link warning: 'launch' matches 2 files: memory/decisions/launch.md, memory/projects/launch.md; Obsidian opens memory/decisions/launch.md
    ```

    Write the path: `[[decisions/launch]]` or `[[memory/projects/launch]]`.
    """

    name = "ambiguous-link"
    code = "VK502"
    severity = "warning"

    def check(self, note, ctx):
        if not note.links or note.path.startswith("../") or not ctx.link_source(note):
            return
        for link, res in zip(note.links, ctx.resolve_all(note)):
            if len(res.candidates) < 2:
                continue
            if not ctx.is_link(link):
                continue
            cands = res.candidates
            shown = ", ".join(cands[:5]) + (f" and {len(cands) - 5} more" if len(cands) > 5 else "")
            yield self.diag(note.path, link.line, link.column or 1,
                            f"'{link.target}' matches {len(cands)} files: {shown}; "
                            f"Obsidian opens {res.path}")


RULE = AmbiguousLink
