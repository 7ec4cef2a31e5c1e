from vaultkit.vault.entries import HEADING, says_too_little, short_style
from vaultkit.lint.rule import Rule


class EntryTooShort(Rule):
    """
    ## What it does
    Reports a journal or lessons entry that says too little: a heading over one or two
    non-blank lines that, with the heading's own words, hold under 100 characters of
    text (`## 14:30 — Deploy` over `- Done.`), in a file whose other entries say more. An entry is a heading-delimited section at the
    note's entry level: in daily journals the level that carries the entries, found per
    file (`##` in most, `###` where there is no `##`; deeper headings belong to the
    entry), `##` in lesson topic files. Its length counts the non-blank lines under the
    heading (comment-only lines do not count); its text is the heading's words without
    the time stamp plus the body (a CJK character counts as three). Points at the
    entry's heading.

    Not reported: a heading with no body (`## 14:30 — Restarted the gateway after the
    token expired`: the heading form of a log line, and what `vaultkit log "one line"`
    writes), short entries in a file written that way (four or more entries under 3
    lines, and more than half of its entries: the one-line bullet entries of many
    OpenClaw journals, `## 09:00 — Heartbeat` over `- Checked mail, nothing urgent`),
    the items of a bullet log (`- 14:30 restarted the
    gateway`), a bare day heading (`## 2026-04-27`), a journal's topic sections
    (`## Next Step`, `## 遗留问题`, `## Open questions`: the profile's `topic_section`
    phrases, and in a journal whose entries carry times, every section without one), a
    heading that groups timed events (`## Morning` over `### 09:00 …` and `### 09:30 …`:
    each event is judged), an entry of nothing but filler (`filler-entry` reports it, with
    the right advice: stop logging no-op heartbeats), the sections of a knowledge note filed in `lessons/` (two or
    more, no date in any), and session transcripts.

    Off by default: one-line events (`### 13:10 Camera` over one informative line, a
    delivered report), labelled parts (`Related Projects`, `待完成`, `Задача:`) and
    lessons written as HEARTBEAT.md asks are how real journals are kept, and the short
    entries an owner would remove, no-op heartbeat logs, are `filler-entry`'s (whose advice,
    stop logging them, is the right one). What the agent writes now is held to the
    minimums all the same: `vaultkit log` and MCP `memory_log` write a text that would say
    too little as one line. Turn the rule on with `extend-select = ["entry-too-short"]`.

    The minimums are `budgets.entry_min_lines` and `budgets.entry_min_chars`; change them
    in `vaultkit.toml` (`[budgets] entry-min-lines = 2`, or 0 to turn the check off).
    `vaultkit log` and MCP `memory_log` apply the same judgement before they write: a
    text that would say too little as a heading and a body is written as one line.

    ## Why is this bad?
    An entry of a heading and a few words rarely says what happened, why, and what follows
    from it; read a week later, or by an agent after compaction, it is noise that still
    costs tokens. The seeds: "specific but not bloated", 3-10 lines; if there is
    nothing worth recording, skip the entry.

    ## Example
    ```
    memory/2026-02-15.md:30:1: VK305 entry-too-short warning: entry '16:00 — Deploy' has 1 non-blank line, under the minimum of 3 (budgets.entry_min_lines); say what happened, why, and what follows
    ```
    """

    name = "entry-too-short"
    code = "VK305"
    severity = "warning"
    default = False  # (advice to the writer; see "What it does")

    def check(self, note, ctx):
        budgets = ctx.profile.budgets
        minimum = budgets.entry_min_lines
        if minimum <= 0:
            return
        found = ctx.entries(note)
        if short_style(found, budgets):
            return  # one- and two-line entries are how this file is written
        from vaultkit.lint.shared import filler_text
        from vaultkit.vault.phrases import matcher

        filler = matcher(ctx.profile.phrases.filler)
        for entry in found:
            if entry.kind != HEADING or not says_too_little(entry.heading.text, entry.body,
                                                            budgets):
                continue
            if filler and filler_text(filler, entry) is not None:
                continue  # a no-op log: filler-entry's, whose advice (stop logging it) fits
            n = entry.nonblank
            yield self.diag(note.path, entry.start, 1,
                            f"entry '{entry.label}' has {n} non-blank "
                            f"line{'s' * (n != 1)}, under the minimum of {minimum} "
                            "(budgets.entry_min_lines); say what happened, why, and what "
                            "follows")


RULE = EntryTooShort
