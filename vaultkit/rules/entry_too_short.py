from vaultkit.entries import entries, entry_level
from vaultkit.rule import Rule


class EntryTooShort(Rule):
    """
    ## What it does
    Reports a journal or lessons entry with fewer than 3 non-blank lines. An entry is a
    heading-delimited section at the note's entry level: `###` in daily journals, `##`
    in lesson topic files; its length counts the non-blank lines under the heading (the
    heading itself and comment-only lines do not count). Points at the entry's heading.

    The minimum is `budgets.entry_min_lines`; change it in `vaultkit.toml`
    (`[budgets] entry-min-lines = 2`, or 0 to turn the check off).

    ## Why is this bad?
    An entry of a heading and a line rarely says what happened, why, and what follows
    from it; read a week later, or by an agent after compaction, it is noise that still
    costs tokens. The seeds: "specific but not bloated", 3-10 lines; if there is
    nothing worth recording, skip the entry.

    ## Example
    ```
    memory/2026-02-15.md:30:1: VK305 entry-too-short entry '16:00 — Deploy' has 1 non-blank line, under the minimum of 3 (budgets.entry_min_lines); say what happened, why, and what follows
    ```
    """

    name = "entry-too-short"
    code = "VK305"
    severity = "warning"

    def check(self, note, ctx):
        level = entry_level(ctx.vault, note)
        if not level:
            return
        minimum = ctx.profile.budgets.entry_min_lines
        if minimum <= 0:
            return
        for entry in entries(note, level):
            if entry.nonblank < minimum:
                n = entry.nonblank
                yield self.diag(note.path, entry.start, 1,
                                f"entry '{entry.heading.text}' has {n} non-blank "
                                f"line{'s' * (n != 1)}, under the minimum of {minimum} "
                                "(budgets.entry_min_lines); say what happened, why, and what "
                                "follows")


RULE = EntryTooShort
