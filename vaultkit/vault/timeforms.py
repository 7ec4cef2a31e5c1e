"""How people write clock times and days in journals, as regexes the entry rules share.

Real journals stamp entries in many forms: ``## 02:41 - title``, ``## 21:19 — title``,
``## 【21:30 · title】``, ``## 上午 09:00 - Heartbeat`` (a period word first),
``## Proactive Work Session (5:00 PM)``, ``## title (14:00-16:30)``,
``## 凌晨（~04:00-05:00）``, ``### 09:30:12 — …``; bullet logs write ``- 14:30 did X``,
``- **14:30** …``, ``- [14:30] …``. A day heading is a date with at most a short
decoration: ``## 2026-04-27``, ``# 2026-03-14 — Суббота``, ``## 2026年2月8日``.
"""

from __future__ import annotations

import re

from vaultkit.core.lazyre import lazy_re

CLOCK = r"(?:[01]?\d|2[0-3])[:：][0-5]\d(?:[:：][0-5]\d)?(?:\s?[AaPp]\.?[Mm]\.?)?"
PERIOD = r"(?:凌晨|清晨|早上|早晨|上午|中午|午间|下午|傍晚|晚上|晚间|深夜|夜间|午前|午後|夜)"
DATE = r"(?:\d{4}-\d{2}-\d{2}|\d{4}/\d{1,2}/\d{1,2}|\d{4}年\d{1,2}月\d{1,2}日)"

_CLOCK_ANYWHERE = lazy_re(rf"(?<![\d:：.]){CLOCK}(?![\d:：])")
_OPEN = r"[\s\[【(（*_~≈约]*"
TIMED_ITEM = lazy_re(
    rf"^ {{0,3}}(?:[-*+]|\d{{1,9}}[.)])\s+(?:\[[ xX]\]\s+)?{_OPEN}(?:{PERIOD}\s*{_OPEN})?"
    rf"(?:{DATE}[ T]?)?{CLOCK}(?![\d])")
BULLET = lazy_re(r"^ {0,3}(?:[-*+]|\d{1,9}[.)])(?:\s|$)")
_DATE = lazy_re(DATE)
# what may decorate a day heading besides the date: punctuation, emoji, a weekday or a word
_DECORATION = lazy_re(r"[\W_]+", re.UNICODE)


def has_clock(text: str) -> bool:
    """True when ``text`` holds a clock time (``14:30``, ``5:00 PM``, ``09:30:12``)."""
    return _CLOCK_ANYWHERE.search(text) is not None


def is_timed_item(line: str) -> bool:
    """True for a list item that starts with a time: ``- 14:30 did X``."""
    return TIMED_ITEM.match(line) is not None


def is_day_heading(text: str) -> bool:
    """True for a heading that names a day and nothing that reads as an event: a date first
    (after emoji or punctuation) and at most a short decoration (a weekday, "Sessions", "小七的日记"), and no clock time."""
    m = _DATE.search(text)
    if m is None or has_clock(text) or _DECORATION.sub("", text[:m.start()]):
        return False  # no date, a time, or words before the date (a titled entry)
    rest = _DECORATION.sub(" ", text[m.end():]).split()
    return len(" ".join(rest)) <= 24


# Words that name a part of the day, not an event: a heading of nothing else (``## Afternoon``,
# ``## 凌晨（~04:00-05:00）``, ``## 中午-下午``, ``## Вечер``) is a bucket of the day's events.
_PERIOD_WORDS = lazy_re(
    rf"{PERIOD}|\b(?:early\s+|late\s+)?(?:morning|midday|noon|afternoon|evening|night"
    r"|late\s+night|overnight)\b|утро|днём|день|вечер|ночь|manhã|tarde|noite|madrugada"
    r"|朝|昼|夕方|夜", re.IGNORECASE)
_CLOCK_RANGE = lazy_re(rf"{CLOCK}(?:\s*[-–~]\s*{CLOCK})?")


def is_period_heading(text: str) -> bool:
    """True for a heading that names only a part of the day, with or without its hours
    (``Afternoon``, ``凌晨（~04:00-05:00）``, ``中午-下午``, ``Утро``): a bucket that groups
    the events under it, not an event itself."""
    if _PERIOD_WORDS.search(text) is None:
        return False
    rest = _CLOCK_RANGE.sub(" ", _PERIOD_WORDS.sub(" ", text))
    return not _DECORATION.sub("", rest.replace("~", "").replace("约", ""))
