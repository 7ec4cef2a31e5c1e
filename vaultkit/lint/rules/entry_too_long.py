from vaultkit.vault.entries import LOG, note_entries
from vaultkit.lint.rule import Rule


class EntryTooLong(Rule):
    """
    ## What it does
    Reports a journal or lessons entry longer than 15 non-blank lines. An entry is a
    heading-delimited section at the note's entry level: in daily journals the level
    that carries the entries, found per file (`##` in most journals, `###` where there
    is no `##`; a `###` inside an `##` entry counts toward it), `##` in lesson topic files
    (the lesson type's `entry_level`). Its length is the number of non-blank lines under
    the heading up to the next heading of the same or a higher level, not counting the
    heading itself or comment-only lines. Points at the entry's heading.

    A bullet log (a day heading over bullets, or a section of `- 14:30 …` items) is not
    one long entry: each item is an entry, and only an item longer than the limit (its
    sub-bullets and continuation lines included) is reported. A heading over two or more
    timed sub-headings (`## Morning` over `### 09:00 …`, `### 09:30 …`) groups events and
    is not one long entry either: each timed event is measured. A journal's topic
    sections (`## Next Step`, `## 遗留问题`, `## Open questions`: the profile's
    `topic_section` phrases, and in a journal whose entries carry times, every section
    without one) are about the day, not events, and are not measured. Session transcripts
    are not journals and are never measured.

    The limit is `budgets.entry_max_lines`; change it in `vaultkit.toml`
    (`[budgets] entry-max-lines = 20`).

    ## Why is this bad?
    The seeds' rule is "keep entries 3-10 lines: specific but not bloated", never over
    15. A long entry is usually a pasted transcript or several events in one; search
    returns ~700-character snippets, so the point of a long entry is rarely in the
    snippet, and today's and yesterday's journals are loaded into every session.

    ## Example
    ```
    memory/2026-02-15.md:12:1: VK304 entry-too-long warning: entry '14:30 — Memory system docs complete' has 22 non-blank lines, over the limit of 15 (budgets.entry_max_lines); split it or keep the essentials
    ```
    """

    name = "entry-too-long"
    code = "VK304"
    note_alone = True
    severity = "warning"

    def check(self, note, ctx):
        limit = ctx.profile.budgets.entry_max_lines
        for entry in note_entries(ctx.vault, note):
            if entry.kind == LOG:
                for item in entry.items:
                    if item.nonblank > limit:
                        text = item.lines[0].strip()[:60]
                        yield self.diag(note.path, item.start, 1,
                                        f"log item '{text}' has {item.nonblank} non-blank "
                                        f"lines, over the limit of {limit} "
                                        "(budgets.entry_max_lines); split it or keep the "
                                        "essentials")
                continue
            if entry.nonblank > limit:
                yield self.diag(note.path, entry.start, 1,
                                f"entry '{entry.label}' has {entry.nonblank} non-blank "
                                f"lines, over the limit of {limit} (budgets.entry_max_lines); "
                                "split it or keep the essentials")


RULE = EntryTooLong
