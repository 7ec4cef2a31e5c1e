from vaultkit.vault.entries import HEADING, note_entries, weight
from vaultkit.lint.rule import Rule


class EntryTooShort(Rule):
    """
    ## What it does
    Reports a journal or lessons entry that says too little: fewer than 3 non-blank lines
    and under 100 characters of text. An entry is a heading-delimited section at the
    note's entry level: in daily journals the level that carries the entries, found per
    file (`##` in most, `###` where there is no `##`; deeper headings belong to the
    entry), `##` in lesson topic files. Its length counts the non-blank lines under the
    heading (the heading itself and comment-only lines do not count). Points at the
    entry's heading.

    Not reported: the items of a bullet log (`- 14:30 restarted the gateway`: one line is
    that form's entry), a bare day heading (`## 2026-04-27`), session transcripts, and a
    short entry whose one or two lines still say what happened, why and what next (100
    characters or more; a CJK character counts as three).

    The minimums are `budgets.entry_min_lines` and `budgets.entry_min_chars`; change them
    in `vaultkit.toml` (`[budgets] entry-min-lines = 2`, or 0 to turn the check off).

    ## Why is this bad?
    An entry of a heading and a few words rarely says what happened, why, and what follows
    from it; read a week later, or by an agent after compaction, it is noise that still
    costs tokens. The seeds: "specific but not bloated", 3-10 lines; if there is
    nothing worth recording, skip the entry.

    ## Example
    ```
    memory/2026-02-15.md:30:1: VK305 entry-too-short warning: entry '16:00 — Deploy' has 1 non-blank line, under the minimum of 3 (budgets.entry_min_lines); say what happened, why, and what follows
    ```
    """

    name = "entry-too-short"
    code = "VK305"
    severity = "warning"

    def check(self, note, ctx):
        budgets = ctx.profile.budgets
        minimum = budgets.entry_min_lines
        if minimum <= 0:
            return
        for entry in note_entries(ctx.vault, note):
            if entry.kind != HEADING or entry.nonblank >= minimum:
                continue
            if weight(entry.body) >= budgets.entry_min_chars:
                continue
            n = entry.nonblank
            yield self.diag(note.path, entry.start, 1,
                            f"entry '{entry.label}' has {n} non-blank "
                            f"line{'s' * (n != 1)}, under the minimum of {minimum} "
                            "(budgets.entry_min_lines); say what happened, why, and what "
                            "follows")


RULE = EntryTooShort
