from vaultkit.lint.rule import Rule


class ConflictMarkers(Rule):
    """
    ## What it does
    Reports a conflict git wrote into a Markdown file and nobody resolved: an opening
    `<<<<<<<` line, the base's `|||||||` line if any (diff3), a `=======` line and a closing
    `>>>>>>>` line, in that order (git-merge(1), "How conflicts are presented"; seven
    characters, the default of gitattributes(5) `conflict-marker-size`). One finding per
    conflict, on its opening line. Lines shaped like a marker outside such a conflict (a
    setext heading's `=======` underline, an email quoted seven deep) and a conflict shown
    in a code block are not reported. The same shape is what the commit guard leaves out of
    a loss when the markers are taken out again (docs/snapshots.md).

    ## Why is this bad?
    A merge committed with its markers left in (a sync of two machines, two agents writing
    the same note) puts both sides of the conflict and git's lines into the file: a
    bootstrap file hands the agent two contradicting versions every session, Obsidian shows
    the markers as text, and a later append lands after a half-resolved block.

    ## Example
    ```
    memory/2026-03-15.md:12:1: VK004 conflict-markers error: an unresolved merge conflict (lines 12-19): keep the lines you mean from each side, then delete git's marker lines
    ```
    """

    name = "conflict-markers"
    code = "VK004"
    severity = "error"

    def check(self, note, ctx):
        if note.error:
            return
        for start, end in ctx.conflicts(note):  # (a fact the parse computed: no text read)
            yield self.diag(note.path, start, 1,
                            f"an unresolved merge conflict (lines {start}-{end}): "
                            "keep the lines you mean from each side, then delete git's "
                            "marker lines")


RULE = ConflictMarkers
