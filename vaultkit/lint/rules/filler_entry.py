from vaultkit.core.lazyre import lazy_re
from vaultkit.vault.entries import LOG, is_content, note_entries
from vaultkit.vault.phrases import matcher
from vaultkit.lint.rule import Rule

# What is not the entry's words: list and quote markers, checkboxes, time and date
# stamps, emphasis marks.
_MARKER = lazy_re(r"^\s*(?:>\s*)*(?:(?:[-*+]|\d+[.)])\s+)?(?:\[[ xX]\]\s+)?")
_STAMP = lazy_re(
    r"\[?(?:\d{4}-\d{2}-\d{2}|\d{4}年\d{1,2}月\d{1,2}日)\]?"
    r"|\[?\b(?:[01]?\d|2[0-3])[:：][0-5]\d(?:[:：][0-5]\d)?\b\]?")
_EMPHASIS = lazy_re(r"[*~`=]+")


def words(line: str) -> str:
    return _EMPHASIS.sub(" ", _STAMP.sub(" ", _MARKER.sub("", line, count=1)))


class FillerEntry(Rule):
    """
    ## What it does
    Reports a journal or lessons entry whose text is nothing but filler. Filler is the
    profile's filler phrases: "System idle, no changes.", "nothing to report", "no updates", `HEARTBEAT_OK`, "无变化" and more. Time and date stamps, list markers and punctuation do
    not count as text; every line of the entry's body must be filler, or its heading
    when the body is empty. A filler phrase inside a longer real entry ("No changes to the API; the
    deploy moved to Friday because…") is not reported. Points at the entry's heading.

    A bullet log (`- 14:30 …` items, or bullets under a day heading) is judged as a
    whole, never line by line: it is reported once when every item is filler.

    Phrases match case-insensitively, Latin ones on word boundaries, CJK ones anywhere;
    an entry starting with `re:` is a regular expression. Add your own in
    `vaultkit.toml`: `[phrases] filler = ["all good", "re:^ok\\.?$"]`.

    ## Why is this bad?
    Filler costs tokens in every session that loads the journal, pushes real events out
    of search snippets, and teaches the agent that writing something is the job. The
    seeds: "don't write filler like 'system idle, no changes'; skip writing if there is
    nothing worth recording".

    ## Example
    ```markdown
    ### 15:00 — Heartbeat
    System idle, no changes.
    ```

    ```
    memory/2026-02-15.md:7:1: VK403 filler-entry warning: entry '15:00 — Heartbeat' holds only filler ('System idle'); skip the entry when there is nothing worth recording
    ```
    """

    name = "filler-entry"
    code = "VK403"
    note_alone = True
    severity = "warning"

    def check(self, note, ctx):
        found = note_entries(ctx.vault, note)
        if not found:
            return
        find = matcher(ctx.profile.phrases.filler)
        if not find:
            return
        for entry in found:
            text = self._filler(find, entry)
            if text is None:
                continue
            m = find.find(text)
            what = "log" if entry.kind == LOG else "entry"
            yield self.diag(note.path, entry.start, 1,
                            f"{what} '{entry.label}' holds only filler "
                            f"({m.group(0)!r}); skip the entry when there is nothing worth "
                            "recording")

    @staticmethod
    def _filler(find, entry):
        """The entry's cleaned text when every line of it is filler, else None."""
        lines = []
        for line in entry.body:
            if not is_content(line):
                continue
            text = words(line)
            if not find.only(text):
                return None  # most entries stop at their first line
            lines.append(text)
        if not lines:
            if entry.heading is None:
                return None
            text = words(entry.heading.text)
            return text if find.only(text) else None
        return "\n".join(lines)


RULE = FillerEntry
