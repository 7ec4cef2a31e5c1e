from vaultkit.core.lazyre import lazy_re
from vaultkit.vault.entries import LOG, is_content, is_dated
from vaultkit.lint.rule import Rule

# An entry is reported when it is this many times budgets.entry_max_lines: twice the seeds'
# 15 lines leaves the 16-30-line session logs real journals are full of alone.
OUTLIER = 2
_TABLE_ROW = lazy_re(r"^\s*(?:>\s*)*\|")  # a table's rows (a benchmark, a status table)


class EntryTooLong(Rule):
    """
    ## What it does
    Reports a journal or lessons entry that is a clear outlier: more than twice the seeds'
    limit of 15 non-blank lines (over 30), tables not counted. An entry is a
    heading-delimited section at the note's entry level: in daily journals the level
    that carries the entries, found per file (`##` in most journals, `###` where there
    is no `##`; a `###` inside an `##` entry counts toward it), `##` in lesson topic files
    (the lesson type's `entry_level`). Its length is the number of non-blank lines under
    the heading up to the next heading of the same or a higher level, not counting the
    heading itself, comment-only lines or table rows (a benchmark or status table is
    data, not prose to trim). Points at the entry's heading.

    The seeds' 3-15 lines are advice to the writer: `vaultkit log` and MCP `memory_log`
    refuse a new entry over 15 lines. A whole-vault run, as on adopting vaultkit, reports
    only what stands out of the owner's own style: real journals are full of 16-30-line
    session logs with `###` parts, status tables and file lists.

    A bullet log (a day heading over bullets, or a section of `- 14:30 …` items) is not
    one long entry: each item is an entry, and only an item over the same length (its
    sub-bullets and continuation lines included) is reported. A heading over two or more
    timed sub-headings (`## Morning` over `### 09:00 …`, `### 09:30 …`) groups events and
    is not one long entry either: each timed event is measured; so does a heading that
    names only a part of the day (`## Afternoon`, `## 凌晨（~04:00-05:00）`, `## 中午-下午`,
    `## Вечер`) over sections of any kind. A journal's topic sections (`## Next Step`,
    `## 遗留问题`, `## Open questions`: the profile's `topic_section` phrases, and in a
    journal whose entries carry times, every section without one) are about the day, not
    events, and are not measured. In a lessons file only a dated lesson is measured (a
    date in its heading or body): the sections of a guide or architecture note filed in
    `lessons/` are no journal entries. Session transcripts are never measured.

    The limit is `budgets.entry_max_lines`; change it in `vaultkit.toml`
    (`[budgets] entry-max-lines = 20`).

    ## Why is this bad?
    The seeds' rule is "keep entries 3-10 lines: specific but not bloated", never over
    15. A long entry is usually a pasted transcript or several events in one; search
    returns ~700-character snippets, so the point of a long entry is rarely in the
    snippet, and today's and yesterday's journals are loaded into every session.

    ## Example
    ```
    memory/2026-02-15.md:12:1: VK304 entry-too-long warning: entry '14:30 — Pasted the deploy log' has 41 non-blank lines besides tables, over 2 times the limit of 15 (budgets.entry_max_lines); split it or keep the essentials
    ```
    """

    name = "entry-too-long"
    code = "VK304"
    severity = "warning"

    def check(self, note, ctx):
        budgets = ctx.profile.budgets
        limit = budgets.entry_max_lines
        # a whole-vault run reports the clear outliers of the owner's own style, not every
        # entry past the seeds' advice (which `vaultkit log` and memory_log hold new entries to)
        over = OUTLIER * limit
        journal = ctx.entry_level(note) == "auto"
        for entry in ctx.entries(note):
            if entry.kind == LOG:
                for item in entry.items:
                    if item.nonblank > over:
                        text = item.lines[0].strip()[:60]
                        yield self.diag(note.path, item.start, 1,
                                        f"log item '{text}' has {item.nonblank} non-blank "
                                        f"lines, over {OUTLIER} times the limit of {limit} "
                                        "(budgets.entry_max_lines); split it or keep the "
                                        "essentials")
                continue
            if not journal and not is_dated(entry):
                continue  # a section of a guide filed with the lessons, not a dated lesson
            n = sum(1 for s in entry.body if is_content(s) and not _TABLE_ROW.match(s))
            if n > over:
                yield self.diag(note.path, entry.start, 1,
                                f"entry '{entry.label}' has {n} non-blank lines besides "
                                f"tables, over {OUTLIER} times the limit of {limit} "
                                "(budgets.entry_max_lines); split it or keep the essentials")


RULE = EntryTooLong
