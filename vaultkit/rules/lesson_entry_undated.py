import datetime as dt
import re

from vaultkit.entries import entries
from vaultkit.rule import Rule

_DATED = re.compile(r"[(（]\s*(\d{4})-(\d{2})-(\d{2})\s*[)）]")


class LessonEntryUndated(Rule):
    """
    ## What it does
    Reports a lessons entry whose heading lacks its date, `(YYYY-MM-DD)`. That is the
    seeds' form: `## Write vs Edit Trap` instead of
    `## Write vs Edit Trap (2026-02-13)`. A date that names no real day
    (`(2026-02-30)`) is reported too. Entries are the headings at the type's
    `entry_level` (`##` for lessons); the file's `#` title is not an entry, and
    headings inside code blocks do not count. Full-width parentheses `（2026-02-13）`
    are accepted. Points at the heading.

    ## Why is this bad?
    Lessons are appended to one topic file over months. The date says when a lesson was
    learned, so a later one that contradicts it can be recognised as newer, stale
    lessons can be pruned in the weekly distillation, and the lesson can be traced back
    to that day's journal.

    ## Example
    ```markdown
    # Cron Scheduling Rules

    ## Write vs Edit Trap
    ```

    ```
    memory/lessons/cron.md:3:1: VK404 lesson-entry-undated entry '## Write vs Edit Trap' has no date; write it as '## Write vs Edit Trap (YYYY-MM-DD)' with the day it was learned
    ```
    """

    name = "lesson-entry-undated"
    code = "VK404"
    severity = "warning"

    def check(self, note, ctx):
        type_name = ctx.vault.type_of(note)
        spec = ctx.profile.types.get(type_name) if type_name else None
        if spec is None or not spec.entry_level:
            return
        marks = "#" * spec.entry_level
        for entry in entries(note, spec.entry_level):
            text = entry.heading.text
            m = _DATED.search(text)
            if m is None:
                yield self.diag(note.path, entry.start, 1,
                                f"entry '{marks} {text}' has no date; write it as "
                                f"'{marks} {text} (YYYY-MM-DD)' with the day it was learned")
                continue
            try:
                dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
            except ValueError:
                yield self.diag(note.path, entry.start, 1,
                                f"entry '{marks} {text}' is dated {m.group(0)}, which names "
                                "no real day")


RULE = LessonEntryUndated
