from vaultkit.lint.rule import Rule
from vaultkit.lint.shared import journal_name_problem


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
    memory/2026-02-15-1430.md:1:1: VK102 journal-filename error: 'memory/2026-02-15-1430.md' is a timestamped or suffixed variant; append to memory/2026-02-15.md instead
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
        if "/" in rest or ctx.claimed(note):
            return
        if not prefix and rest in ctx.profile.bootstrap_files:
            return
        problem = journal_name_problem(rest[:-3], prefix)
        if problem:
            yield self.diag(note.path, 1, 1, problem)


RULE = JournalFilename
