import datetime as dt
import re

from vaultkit.rule import Rule

_LOOSE_DATE = re.compile(r"^(\d{4})-(\d{1,2})-(\d{1,2})(.*)$")


class JournalFilename(Rule):
    """
    ## What it does
    Reports a Markdown file directly in the memory folder that is not a journal named
    for a real calendar day, `YYYY-MM-DD.md`: `2026-2-15.md` (no zero padding),
    `2026-02-30.md` (no such day), `2026-02-15-1430.md` (a timestamped variant),
    `today.md`. `INDEX.md` and the archive forms (`YYYY-MM-DD-older.md`, anything in
    `archive/`) are allowed.

    ## Why is this bad?
    The runtime loads today's and yesterday's journal by exact name, and its flush
    prompt forbids timestamped variants. A journal under any other name is never
    loaded and splits one day's memory across files.

    ## Example
    ```
    memory/2026-02-15-1430.md:1:1: VK102 journal-filename journal 'memory/2026-02-15-1430.md' is a timestamped variant; append to memory/2026-02-15.md instead
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
        if "/" in rest or ctx.vault.layer_of(note) is not None:
            return
        if not prefix and ctx.vault.layer_of(note) is None and rest in ctx.profile.bootstrap_files:
            return
        yield self.diag(note.path, 1, 1, self._why(note.path, rest[:-3], prefix))

    @staticmethod
    def _why(path, stem, prefix):
        m = _LOOSE_DATE.match(stem)
        if not m:
            return (f"'{path}' is not a journal name: journals are {prefix}YYYY-MM-DD.md; "
                    "move other notes into a typed folder")
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


RULE = JournalFilename
