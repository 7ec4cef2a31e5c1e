from vaultkit.vault.entries import LOG
from vaultkit.vault.phrases import matcher
from vaultkit.lint.rule import Rule
from vaultkit.lint.shared import filler_text

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
    severity = "warning"

    def check(self, note, ctx):
        found = ctx.entries(note)
        if not found:
            return
        find = matcher(ctx.profile.phrases.filler)
        if not find:
            return
        for entry in found:
            text = filler_text(find, entry)
            if text is None:
                continue
            m = find.find(text)
            what = "log" if entry.kind == LOG else "entry"
            yield self.diag(note.path, entry.start, 1,
                            f"{what} '{entry.label}' holds only filler "
                            f"({m.group(0)!r}); skip the entry when there is nothing worth "
                            "recording")

RULE = FillerEntry
