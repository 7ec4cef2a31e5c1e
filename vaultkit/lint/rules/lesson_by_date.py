import re

from vaultkit.core.lazyre import lazy_re
from vaultkit.lint.rule import Rule

# A date or period token in a file name: 2026-02-14, 2026_02_14, 20260214, 2026-02,
# 2026-W07, week-07, wk7, w07, 2026年2月14日 ...
_PERIOD = lazy_re(
    r"\d{4}[-_.]?\d{2}[-_.]?\d{2}"
    r"|\d{4}年\d{1,2}月(?:\d{1,2}日)?"
    r"|\d{4}[-_.]?w(?:ee)?k?[-_. ]?\d{1,2}"
    r"|(?<![a-z])w(?:ee)?k?[-_. ]?\d{1,2}(?!\d)"
    r"|\d{4}[-_.]\d{2}"
    r"|(?:19|20)\d{2}"
    r"|第?\d{1,2}周"
    r"|(?:mon|tues|wednes|thurs|fri|satur|sun)day|today|yesterday",
    re.IGNORECASE,
)
# Words that name the period's content generically rather than a topic.
_GENERIC = lazy_re(
    r"(?:lessons?|learned|learnings?|notes?|log|daily|weekly|monthly|week|day|month|"
    r"summary|retro|review|教训|经验|心得|复盘|周|月|日)",
    re.IGNORECASE,
)
_SEPARATORS = lazy_re(r"[\s\-_.,()\[\]]+")


def named_by_date(stem: str) -> bool:
    """True when a file name is a date or period and nothing that names a topic."""
    if not _PERIOD.search(stem):
        return False
    rest = _PERIOD.sub(" ", stem)
    rest = _GENERIC.sub(" ", rest)
    return not _SEPARATORS.sub("", rest)


class LessonByDate(Rule):
    """
    ## What it does
    Reports a lessons file named by date or period instead of by topic. For example
    `lessons/2026-02-14.md`, `lessons/week-07.md`, `lessons/2026-W07.md`,
    `lessons/lessons-2026-02.md`. Applies to every type whose notes are topic files
    with entries (`entry_level` in the profile; `lesson` by default). A topic name that
    merely contains a date (`lessons/2026-migration-to-postgres.md`) is not reported.

    ## Why is this bad?
    Lessons are looked up by subject ("what did we learn about cron?"). Filed by date
    they scatter one topic across many files, duplicate the journal, and nobody appends
    to the right place: the seeds' rule is "organize lessons by topic, not date", with
    dated `## Title (YYYY-MM-DD)` entries appended to one topic file.

    ## Example
    ```
    memory/lessons/2026-02-14.md:1:1: VK103 lesson-by-date warning: lesson file 'memory/lessons/2026-02-14.md' is named by date; name it by topic (memory/lessons/<topic>.md) and append dated '## Title (YYYY-MM-DD)' entries to it
    ```
    """

    name = "lesson-by-date"
    code = "VK103"
    severity = "warning"

    def check(self, note, ctx):
        type_name = ctx.type_of(note)
        spec = ctx.profile.types.get(type_name) if type_name else None
        if spec is None or not spec.entry_level:
            return
        if not named_by_date(note.name):
            return
        folder = note.folder
        yield self.diag(
            note.path, 1, 1,
            f"{type_name} file '{note.path}' is named by date; name it by topic "
            f"({folder}/<topic>.md) and append dated '{'#' * spec.entry_level} Title "
            "(YYYY-MM-DD)' entries to it")


RULE = LessonByDate
