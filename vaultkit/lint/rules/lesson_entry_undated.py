import datetime as dt

from vaultkit.core.lazyre import lazy_re
from vaultkit.vault.entries import entries
from vaultkit.vault.phrases import matcher
from vaultkit.lint.rule import Rule
from vaultkit.lint.shared import bold_label

_DATED = lazy_re(r"[(（]\s*(\d{4})-(\d{2})-(\d{2})\s*[)）]")
# a date written anywhere: 2026-02-13, 2026/2/13, 2026年2月13日, or 20260213 inside an id
_ANY_DATE = lazy_re(r"(?<!\d)(\d{4})(?:[-/.](\d{1,2})[-/.](\d{1,2})|年(\d{1,2})月(\d{1,2})日"
                       r"|(\d{2})(\d{2}))(?!\d)")


def find_date(text: str) -> dt.date | None:
    """The first real calendar date written in ``text``, or None."""
    for m in _ANY_DATE.finditer(text):
        year = int(m.group(1))
        month, day = next((int(a), int(b)) for a, b in
                          ((m.group(2), m.group(3)), (m.group(4), m.group(5)),
                           (m.group(6), m.group(7))) if a)
        try:
            return dt.date(year, month, day)
        except ValueError:
            continue
    return None


class LessonEntryUndated(Rule):
    """
    ## What it does
    Reports a lessons entry with no date. The seeds' form is a date in the heading,
    `## Write vs Edit Trap (2026-02-13)`; an entry is dated as well by a date label in
    its body (`**Date:** 2026-02-13`, `**发生时间：**`, `**Дата:**`: the profile's
    `date_label` phrases), a date in its heading written any other way
    (`## 2026-02-13`, `## [ERR-20260213-001] …`), a parent heading with a date
    (`## 2026-02-07` over `### …` entries) or a date in the file name
    (`lessons/2026-02-13-cron-trap.md`). A date in parentheses that names no real day
    (`(2026-02-30)`) is reported too. Entries are the headings at the type's
    `entry_level` (`##` for lessons); the file's `#` title is not an entry, and
    headings inside code blocks do not count. Full-width parentheses `（2026-02-13）`
    are accepted. Points at the heading.

    The file's own convention decides what its sections are. A note dated as a whole (a
    `date:` or `created:` property, or a `**Date:**` label above its first section) is
    one lesson, and its sections are that lesson's parts. A note with two or more
    sections none of which is dated is a knowledge note filed in `lessons/`
    (`## Overview`, `## Commands`, `## Gotchas`), not a list of lessons: nothing is
    reported. A single undated section, or an undated one beside dated ones, is.

    ## Why is this bad?
    Lessons are appended to one topic file over months. The date says when a lesson was
    learned, so a later one that contradicts it can be recognised as newer, stale
    lessons can be pruned in the weekly distillation, and the lesson can be traced back
    to that day's journal.

    ## Example
    ```markdown
    # Cron Scheduling Rules

    ## US market time zones (2026-02-12)
    Cron runs in UTC; market jobs are set for Tue-Sat.

    ## Write vs Edit Trap
    ```

    ```
    memory/lessons/cron.md:6:1: VK404 lesson-entry-undated warning: entry '## Write vs Edit Trap' has no date; write it as '## Write vs Edit Trap (YYYY-MM-DD)' with the day it was learned
    ```
    """

    name = "lesson-entry-undated"
    code = "VK404"
    severity = "warning"

    def check(self, note, ctx):
        type_name = ctx.type_of(note)
        spec = ctx.profile.types.get(type_name) if type_name else None
        if spec is None or not spec.entry_level:
            return
        marks = "#" * spec.entry_level
        if find_date(note.name):
            return  # one dated file: every entry in it has that day
        labels = matcher(ctx.profile.phrases.date_label)
        found = entries(note, spec.entry_level)
        if not found or self._dated_note(note, found[0], labels):
            return  # one lesson dated as a whole: its sections are its parts
        parents = [h for h in note.headings if h.level < spec.entry_level]
        dated = [bool(_DATED.search(e.heading.text) or find_date(e.heading.text)
                      or self._dated_body(e, labels) or self._dated_parent(e, parents))
                 for e in found]
        if len(found) >= 2 and not any(dated):
            return  # a knowledge note filed in lessons/: sections of one note, not lessons
        for entry, is_dated in zip(found, dated):
            text = entry.heading.text
            m = _DATED.search(text)
            if m is None:
                if is_dated:
                    continue
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

    @staticmethod
    def _dated_note(note, first, labels) -> bool:
        """The note is dated as a whole: a ``date:`` or ``created:`` property, or a date
        label (``**Date:** 2026-02-13``) between its title and its first entry."""
        fm = note.frontmatter or {}
        for key in ("date", "created"):
            value = fm.get(key)
            if value is not None and find_date(str(value)):
                return True
        if not labels:
            return False
        for number in range(note.body_start, first.start):
            line = note.lines[number - 1]
            if ("**" in line or "__" in line) and not note.in_code(number):
                hit = bold_label(line)
                if hit and labels.only(hit[0]) and find_date(hit[1]):
                    return True
        return False

    @staticmethod
    def _dated_body(entry, labels) -> bool:
        """A date label (``**Date:** 2026-02-13``) in the entry's body."""
        if not labels:
            return False
        for _, line in entry.lines():
            if "**" not in line and "__" not in line:
                continue
            hit = bold_label(line)
            if hit and labels.only(hit[0]) and find_date(hit[1]):
                return True
        return False

    @staticmethod
    def _dated_parent(entry, parents) -> bool:
        """The nearest heading above the entry at a higher level carries a date."""
        above = [h for h in parents if h.line < entry.start]
        level = entry.heading.level
        for h in reversed(above):
            if h.level < level:
                if find_date(h.text):
                    return True
                level = h.level
        return False


RULE = LessonEntryUndated
