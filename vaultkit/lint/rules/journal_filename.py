import datetime as dt
import re

from vaultkit.lint.rule import Rule

_LOOSE_DATE = re.compile(r"^(\d{4})-(\d{1,2})-(\d{1,2})(.*)$")
_DAY_WORDS = {"today", "yesterday", "tomorrow"}


def journal_name_problem(stem: str, prefix: str) -> str | None:
    """Why a memory-folder file named ``stem`` is a mis-named journal, or None when the
    name does not try to be a day's journal (then it is a topic note, not this rule's)."""
    path = f"{prefix}{stem}.md"
    if stem.lower() in _DAY_WORDS:
        return (f"'{path}' is not a journal name: a day's journal is {prefix}YYYY-MM-DD.md "
                "(the runtime loads today's and yesterday's by that name)")
    m = _LOOSE_DATE.match(stem)
    if not m:
        return None
    year, month, day, rest = m.groups()
    try:
        date = dt.date(int(year), int(month), int(day))
    except ValueError:
        return f"'{path}' names no real day ({year}-{month}-{day} does not exist)"
    canonical = f"{prefix}{date.isoformat()}.md"
    if rest:
        return (f"'{path}' is a timestamped or suffixed variant; append to {canonical} "
                "instead")
    return f"'{path}' is not zero-padded; rename it to {canonical}"


class JournalFilename(Rule):
    """
    ## What it does
    Reports a file directly in the memory folder that tries to be a day's journal under
    another name than `YYYY-MM-DD.md`: `2026-2-15.md` (no zero padding), `2026-02-30.md`
    (no such day), `2026-02-15-1430.md` (a second, timestamped file for the day, written
    by hand), `2026-02-15-2.md`, `today.md`.

    Left alone: the journals themselves, session-memory transcripts (known by their
    `# Session:` header, whatever their name, including the hook's `YYYY-MM-DD-HHMM.md`
    fallback), dated topic notes (`2026-03-22-weekly-review.md`), the archive forms
    (`YYYY-MM-DD-older.md`, anything in `archive/`), `INDEX.md`, and notes whose name does
    not try to be a date (`PITFALLS.md`, `anti-patterns.md`: topic notes).

    ## Why is this bad?
    The runtime loads today's and yesterday's journal by exact name, and its flush
    prompt forbids timestamped variants. A journal under any other name is never
    loaded and splits one day's memory across files.

    ## Example
    ```
    memory/2026-02-15-1430.md:1:1: VK102 journal-filename 'memory/2026-02-15-1430.md' is a timestamped or suffixed variant; append to memory/2026-02-15.md instead
    ```
    """

    name = "journal-filename"
    code = "VK102"
    severity = "error"

    def check(self, note, ctx):
        prefix = ctx.profile.memory_prefix
        if not note.path.startswith(prefix):
            return
        rest = note.path[len(prefix):]
        if "/" in rest or ctx.vault.claimed(note):
            return
        if not prefix and rest in ctx.profile.bootstrap_files:
            return
        problem = journal_name_problem(rest[:-3], prefix)
        if problem:
            yield self.diag(note.path, 1, 1, problem)


RULE = JournalFilename
