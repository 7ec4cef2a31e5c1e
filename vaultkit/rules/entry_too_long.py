from vaultkit.entries import entries, entry_level
from vaultkit.rule import Rule


class EntryTooLong(Rule):
    """
    ## What it does
    Reports a journal or lessons entry longer than 15 non-blank lines. An entry is a
    heading-delimited section at the note's entry level: `###` in daily journals (the
    journal layer's `entry_level`), `##` in lesson topic files (the lesson type's
    `entry_level`). Its length is the number of non-blank lines under the heading up to
    the next heading of the same or a higher level, not counting the heading itself or
    comment-only lines. Points at the entry's heading.

    The limit is `budgets.entry_max_lines`; change it in `vaultkit.toml`
    (`[budgets] entry-max-lines = 20`).

    ## Why is this bad?
    The seeds' rule is "keep entries 3-10 lines: specific but not bloated", never over
    15. A long entry is usually a pasted transcript or several events in one; search
    returns ~700-character snippets, so the point of a long entry is rarely in the
    snippet, and today's and yesterday's journals are loaded into every session.

    ## Example
    ```
    memory/2026-02-15.md:12:1: VK304 entry-too-long entry '14:30 — Memory system docs complete' has 22 non-blank lines, over the limit of 15 (budgets.entry_max_lines); split it or keep the essentials
    ```
    """

    name = "entry-too-long"
    code = "VK304"
    severity = "warning"

    def check(self, note, ctx):
        level = entry_level(ctx.vault, note)
        if not level:
            return
        limit = ctx.profile.budgets.entry_max_lines
        for entry in entries(note, level):
            if entry.nonblank > limit:
                yield self.diag(note.path, entry.start, 1,
                                f"entry '{entry.heading.text}' has {entry.nonblank} non-blank "
                                f"lines, over the limit of {limit} (budgets.entry_max_lines); "
                                "split it or keep the essentials")


RULE = EntryTooLong
