import re

from vaultkit.core.lazyre import lazy_re
from vaultkit.lint.rule import Rule
from vaultkit.vault.phrases import matcher
from vaultkit.vault.timeforms import PERIOD
from vaultkit.lint.shared import is_bootstrap_file, prose

_TIME = r"\[?(?:[01]?\d|2[0-3])[:：][0-5]\d(?:[:：][0-5]\d)?\]?"
_DATE = r"(?:\d{4}-\d{2}-\d{2}|\d{4}/\d{2}/\d{2}|\d{4}年\d{1,2}月\d{1,2}日)"
_HEADING = lazy_re(r"^ {0,3}(#{1,6})[ \t]+(.*)$")
# A heading that is a time stamp (### 14:30 — ...) or a day (## 2026-02-13, ## 2026年2月13日).
# also behind a bracket or a period word: ## 【21:30 · 复盘】, ## 上午 09:00 - Heartbeat
_TIME_HEAD = lazy_re(rf"^[\[【(（~≈约\s]*(?:{PERIOD}\s*[\[【(（~≈约\s]*)?{_TIME}"
                        rf"(?=\s|$|[—–\-|:,.·】)）\]])")
_DATE_HEAD = lazy_re(rf"^\[?{_DATE}\]?(?!\d)")
# what may follow the date in a day heading: a weekday or a short name for the day
_DAY_REST = lazy_re(r"[\W_]+", re.UNICODE)
# A list item or line that starts with a time and a separator: "- 14:30 — deployed v2".
_TIME_ITEM = lazy_re(
    rf"^\s*(?:>\s*)*(?:(?:[-*+]|\d+[.)])\s+)?(?:\*\*)?{_TIME}(?:\*\*)?\s*(?:[—–|]|-\s|:\s)")
# A date-and-time stamp anywhere: 2026-02-13 14:30, 2026-02-13T14:30.
_STAMP = lazy_re(rf"(?<!\d){_DATE}[ T]?{_TIME}(?!\d)")


def record_kind(line: str, stamps=None) -> str | None:
    """Why ``line`` looks like a journal record, or None. ``stamps`` (a phrase matcher)
    finds the labels of a file stamp (``Last updated:``, ``归档于``): a date or time after
    one says when the file changed, not what happened that day."""
    m = _HEADING.match(line)
    if m:
        text = m.group(2).strip()
        if _TIME_HEAD.match(text):
            return "a time-stamped entry heading"
        day = _DATE_HEAD.match(text)
        if day:
            rest = _DAY_REST.sub(" ", text[day.end():]).split()
            if len(rest) <= 1 and len("".join(rest)) <= 10 \
                    and not (rest and stamps and stamps.only(rest[0])):
                return "a date heading"
            return None  # a durable entry that carries its date: ## 2026-03-01 Moved to Postgres
        if _STAMP.search(text) and _DAY_REST.sub(" ", _STAMP.sub(" ", text)).split():
            return None  # a durable heading stamped with its time: ## VPS moved (2026-02-14 14:30)
    elif _TIME_ITEM.match(line):
        return "a time-stamped entry"
    stamp = _STAMP.search(line)
    if stamp and not (stamps and stamps.find(line[:stamp.start()])):
        return "a date-and-time stamp"
    return None


class DailyRecordInMemory(Rule):
    """
    ## What it does
    Reports journal records in `MEMORY.md`: time-stamped entries, date headings and
    date-and-time stamps. That is a time-stamped entry heading
    (`### 14:30 — deployed v2`), a date heading (`## 2026-02-13`, `## 2026年2月13日`),
    a list item or line that starts with a time (`- 14:30 — restarted the gateway`),
    and a date-and-time stamp anywhere (`2026-02-13 14:30`). Points at the line.

    Not records: a time inside a sentence ("the backup runs at 23:00"), a durable entry
    that carries its date or date and time (`## Use printf >> for memory writes (2026-02-13)`,
    `## 2026-03-01 Moved the gateway to Postgres`, `## VPS migrated (2026-02-14 14:30)`,
    `## Promoted From Short-Term Memory (2026-05-06)`), and a stamp that says when the file changed (`> Last updated:
    2026-03-14 10:30`, `Archived at 2026-03-01 23:00`, `最后更新：2026-03-14 10:30`: the
    profile's `stamp_label` phrases before the date). Links, inline code, code blocks and
    comments are not looked at.

    ## Why is this bad?
    MEMORY.md is long-term wisdom, injected into every session and capped at 10 KB. Daily
    records belong in `memory/YYYY-MM-DD.md`, which is append-only and searched; copied
    into MEMORY.md they crowd out the durable facts and grow it past its budget. The
    seeds: "don't put daily records in MEMORY.md".

    ## Example
    ```markdown
    ## approved_durable_entries
    ### 14:30 — Fixed the cron timezone
    ```

    ```
    MEMORY.md:2:1: VK402 daily-record-in-memory warning: MEMORY.md holds a time-stamped entry heading; journal records go to memory/YYYY-MM-DD.md, MEMORY.md keeps only what is durable
    ```
    """

    name = "daily-record-in-memory"
    code = "VK402"
    severity = "warning"

    def check(self, note, ctx):
        if not is_bootstrap_file(ctx, note, "MEMORY.md"):
            return
        journal = ctx.profile.expand("{memory}/YYYY-MM-DD.md")
        stamps = matcher(ctx.profile.phrases.stamp_label) if ctx.profile.phrases.stamp_label \
            else None
        lines = note.lines
        for number in range(note.body_start, note.line_count + 1):
            if note.in_code(number):
                continue
            line = lines[number - 1]
            if not line.strip() or not any(c.isdigit() for c in line):
                continue
            kind = record_kind(prose(line), stamps)
            if kind:
                yield self.diag(note.path, number, 1,
                                f"MEMORY.md holds {kind}; journal records go to {journal}, "
                                "MEMORY.md keeps only what is durable")


RULE = DailyRecordInMemory
