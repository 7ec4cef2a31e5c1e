"""Dates as words, for the search index: a journal's day and the relative dates in it.

A journal is named by its day (``memory/2023-10-04.md``), but a question says "in October
2023", "on a Wednesday", "2023年10月", "в октябре", and an entry says "yesterday". Nothing
in the text connects those words to the file, so the search index gets them explicitly:

- :func:`day_words` spells one day in the languages vaultkit supports (English, Chinese,
  Russian): ISO forms (``2023-10-04``, ``2023/10/04``), the year, the month's names
  (``October Oct``, ``十月 10月``, ``октябрь октября октябре``), the day of the month and
  the weekday (``Wednesday``, ``星期三 周三``, ``среда среду``).
- :func:`relative_dates` finds "yesterday", "last week", "3 days ago", "昨天", "на прошлой
  неделе" … in a text and resolves each against a reference day (the journal's own date
  for an entry, today for a question), returning the words of the day, week, month or
  year meant.
- :func:`time_words` spells an entry time (``## 14:30``) as ``2:30 pm afternoon``.
"""

from __future__ import annotations

import datetime as dt
import re

MONTHS_EN = ("January", "February", "March", "April", "May", "June", "July", "August",
             "September", "October", "November", "December")
WEEKDAYS_EN = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MONTHS_ZH = ("一月", "二月", "三月", "四月", "五月", "六月", "七月", "八月", "九月", "十月",
             "十一月", "十二月")
WEEKDAYS_ZH = ("一", "二", "三", "四", "五", "六", "日")
# nominative, genitive ("4 октября"), prepositional ("в октябре")
MONTHS_RU = (("январь", "января", "январе"), ("февраль", "февраля", "феврале"),
             ("март", "марта", "марте"), ("апрель", "апреля", "апреле"),
             ("май", "мая", "мае"), ("июнь", "июня", "июне"), ("июль", "июля", "июле"),
             ("август", "августа", "августе"), ("сентябрь", "сентября", "сентябре"),
             ("октябрь", "октября", "октябре"), ("ноябрь", "ноября", "ноябре"),
             ("декабрь", "декабря", "декабре"))
WEEKDAYS_RU = (("понедельник",), ("вторник",), ("среда", "среду"), ("четверг",),
               ("пятница", "пятницу"), ("суббота", "субботу"),
               ("воскресенье",))

_ISO_DAY = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)")


def date_of_path(path: str) -> dt.date | None:
    """The day a journal's file name carries (``memory/2023-10-04.md``), or None."""
    name = path.rsplit("/", 1)[-1]
    m = _ISO_DAY.search(name)
    if not m:
        return None
    try:
        return dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return None


def month_words(year: int, month: int) -> list[str]:
    en = MONTHS_EN[month - 1]
    return list(dict.fromkeys([en, en[:3], str(year), f"{year}-{month:02d}", MONTHS_ZH[month - 1],
                               f"{year}年{month}月", *MONTHS_RU[month - 1]]))


def day_words(day: dt.date) -> str:
    """One day spelled out in English, Chinese and Russian, ISO forms included."""
    wd = day.weekday()
    words = [day.isoformat(), day.strftime("%Y/%m/%d"), *month_words(day.year, day.month),
             f"{MONTHS_EN[day.month - 1]} {day.day}", f"{day.day} {MONTHS_EN[day.month - 1]}",
             WEEKDAYS_EN[wd], f"{day.year}年{day.month}月{day.day}日", f"星期{WEEKDAYS_ZH[wd]}",
             f"周{WEEKDAYS_ZH[wd]}", f"{day.day} {MONTHS_RU[day.month - 1][1]}",
             *WEEKDAYS_RU[wd]]
    return " ".join(words)


def time_words(hhmm: str) -> str:
    """``14:30`` (or a heading that starts with it, ``14:30 — Deploy``) → ``14:30 2:30 pm
    afternoon``; '' when it does not start with a time of day."""
    m = re.match(r"([01]?\d|2[0-3])[:.]([0-5]\d)(?![\d:.]\d)", hhmm.strip())
    if not m:
        return ""
    h, mm = int(m.group(1)), m.group(2)
    half = "am" if h < 12 else "pm"
    part = ("night" if h < 5 else "morning" if h < 12 else "afternoon" if h < 17
            else "evening" if h < 22 else "night")
    return f"{h:02d}:{mm} {(h % 12) or 12}:{mm} {half} {part}"


# -- relative dates ---------------------------------------------------------------------

_NUM = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
        "seven": 7, "eight": 8, "nine": 9, "ten": 10, "couple of": 2, "few": 3}
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}

# (pattern, kind, offset): kind is the span meant (day, week, month, year, weekday)
_RELATIVE = [
    (r"\bday before yesterday\b", "day", -2),
    (r"\byesterday\b|\blast night\b", "day", -1),
    (r"\btoday\b|\btonight\b|\bthis (?:morning|afternoon|evening)\b", "day", 0),
    (r"\btomorrow\b", "day", 1),
    (r"\blast weekend\b", "weekend", -1),
    (r"\bthis weekend\b", "weekend", 0),
    (r"\bnext weekend\b", "weekend", 1),
    (r"\blast week\b", "week", -1),
    (r"\bthis week\b", "week", 0),
    (r"\bnext week\b", "week", 1),
    (r"\blast month\b", "month", -1),
    (r"\bthis month\b", "month", 0),
    (r"\bnext month\b", "month", 1),
    (r"\blast year\b", "year", -1),
    (r"\bthis year\b", "year", 0),
    (r"\bnext year\b", "year", 1),
    (r"前天", "day", -2), (r"昨天|昨晚|昨日", "day", -1), (r"今天|今晚|今日", "day", 0),
    (r"明天", "day", 1), (r"上周|上星期|上个星期", "week", -1), (r"本周|这周", "week", 0),
    (r"下周|下星期", "week", 1), (r"上个月|上月", "month", -1), (r"这个月|本月", "month", 0),
    (r"下个月", "month", 1), (r"去年", "year", -1), (r"今年", "year", 0), (r"明年", "year", 1),
    (r"позавчера", "day", -2), (r"вчера", "day", -1), (r"сегодня", "day", 0),
    (r"(?<!после)завтра", "day", 1),
    (r"на прошлой неделе", "week", -1), (r"на этой неделе", "week", 0),
    (r"на следующей неделе", "week", 1), (r"в прошлом месяце", "month", -1),
    (r"в этом месяце", "month", 0), (r"в прошлом году", "year", -1),
    (r"в этом году", "year", 0),
]
_AGO_PATTERN = (r"\b(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|couple of|few)"
                r"\s+(day|week|month|year)s?\s+ago\b")
_LAST_WEEKDAY_PATTERN = r"\blast (monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b"

# What a text must hold before an English pattern is run on it (every chunk of every
# journal is searched for relative dates when it is indexed: 40-odd case-insensitive
# patterns, about 1 ms a chunk, most of a cold index build): one of these phrases, looked
# for in the text's UTF-8 bytes with the ASCII letters lowercased. That is exact: apart
# from its two cases, the only characters such a pattern matches to an ASCII letter are
# the four in _ODD_FOLDS, and a text holding one runs every pattern. A Chinese pattern
# needs one of its literal alternatives; a Russian one a Cyrillic letter, or one of the
# few characters that fold to one (U+1C80-U+1C88).
_ASCII_NEEDS = {
    r"\bday before yesterday\b": ("day before yesterday",),
    r"\byesterday\b|\blast night\b": ("yesterday", "last night"),
    r"\btoday\b|\btonight\b|\bthis (?:morning|afternoon|evening)\b": ("today", "tonight",
                                                                     "this "),
    r"\btomorrow\b": ("tomorrow",),
    r"\blast weekend\b": ("last weekend",), r"\bthis weekend\b": ("this weekend",),
    r"\bnext weekend\b": ("next weekend",), r"\blast week\b": ("last week",),
    r"\bthis week\b": ("this week",), r"\bnext week\b": ("next week",),
    r"\blast month\b": ("last month",), r"\bthis month\b": ("this month",),
    r"\bnext month\b": ("next month",), r"\blast year\b": ("last year",),
    r"\bthis year\b": ("this year",), r"\bnext year\b": ("next year",),
    _AGO_PATTERN: ("ago",),
    _LAST_WEEKDAY_PATTERN: ("last ",),
}
_ODD_FOLDS = tuple(c.encode() for c in "\u0130\u0131\u017f\u212a")
_CYRILLIC = re.compile("[\u0400-\u04ff\u1c80-\u1c88]")  # (only to sort the patterns)
_CJK_LITERALS = re.compile(r"[\u4e00-\u9fff]+(?:\|[\u4e00-\u9fff]+)*")


def _needs(pattern: str) -> tuple[str, tuple]:
    """``(what, phrases)``: what a text must hold before ``pattern`` can match it."""
    if pattern in _ASCII_NEEDS:
        return "ascii", tuple(p.encode() for p in _ASCII_NEEDS[pattern])
    if _CJK_LITERALS.fullmatch(pattern):
        return "cjk", tuple(pattern.split("|"))
    if _CYRILLIC.search(pattern):
        return "cyrillic", ()
    return "any", ()  # (none today: a pattern added without its phrases is always run)


class _Lazy:
    """A case-insensitive pattern compiled when a text first needs it (a query with no
    relative date compiles none of them)."""

    __slots__ = ("pattern", "_rx")

    def __init__(self, pattern: str):
        self.pattern = pattern
        self._rx = None

    def finditer(self, text: str):
        if self._rx is None:
            self._rx = re.compile(self.pattern, re.IGNORECASE)
        return self._rx.finditer(text)


_RELATIVE_RE = [(_Lazy(p), kind, off, _needs(p)) for p, kind, off in _RELATIVE]
_AGO = _Lazy(_AGO_PATTERN)
_LAST_WEEKDAY = _Lazy(_LAST_WEEKDAY_PATTERN)
_AGO_NEEDS, _LAST_WEEKDAY_NEEDS = _needs(_AGO_PATTERN), _needs(_LAST_WEEKDAY_PATTERN)


# Every English phrase above holds one of these words: a text with none of them skips
# them all at once.
_ASCII_ANCHORS = (b"yesterday", b"night", b"today", b"this ", b"tomorrow", b"week", b"month",
                  b"year", b"ago", b"last ")
# UTF-8 lead bytes: U+4E00-U+9FFF (the Chinese patterns' characters) start with E4-E9;
# U+0400-U+04FF with D0-D3, U+1C80-U+1C88 with E1 B2
_CJK_LEADS = (b"\xe4", b"\xe5", b"\xe6", b"\xe7", b"\xe8", b"\xe9")
_CYRILLIC_LEADS = (b"\xd0", b"\xd1", b"\xd2", b"\xd3", b"\xe1\xb2")


def _may_match(text: str) -> "callable":
    """``may(needs) -> bool``: whether a pattern with these needs (see :func:`_needs`) can
    match ``text``; False only when it cannot."""
    data = text.encode("utf-8", "surrogatepass").lower()
    plain = data.isascii()
    odd = not plain and any(f in data for f in _ODD_FOLDS)
    english = odd or any(a in data for a in _ASCII_ANCHORS)
    chinese = not plain and any(b in data for b in _CJK_LEADS)
    russian = not plain and any(b in data for b in _CYRILLIC_LEADS)

    def may(needs: tuple[str, tuple]) -> bool:
        what, phrases = needs
        if what == "ascii":
            return english and (odd or any(p in data for p in phrases))
        if what == "cjk":
            return chinese and any(p in text for p in phrases)
        if what == "cyrillic":
            return russian
        return True
    return may


def _shift_month(day: dt.date, months: int) -> tuple[int, int]:
    index = day.year * 12 + day.month - 1 + months
    return index // 12, index % 12 + 1


def _span(ref: dt.date, kind: str, off: int) -> tuple[str, list[str]]:
    """(words, keys) of the day, week, weekend, month or year ``off`` spans from ``ref``;
    keys are ISO prefixes (``2023-10-04``, ``2023-10``, ``2023``) the span's days start with."""
    if kind == "day":
        day = ref + dt.timedelta(days=off)
        return day_words(day), [day.isoformat()]
    if kind in ("week", "weekend"):
        monday = ref - dt.timedelta(days=ref.weekday()) + dt.timedelta(weeks=off)
        days = [monday + dt.timedelta(days=5), monday + dt.timedelta(days=6)] if kind == "weekend" \
            else [monday + dt.timedelta(days=i) for i in range(7)]
        keys = [d.isoformat() for d in days]
        months = dict.fromkeys(" ".join(month_words(d.year, d.month)) for d in days)
        return " ".join(keys) + " " + " ".join(months), keys
    if kind == "month":
        year, month = _shift_month(ref, off)
        return " ".join(month_words(year, month)), [f"{year}-{month:02d}"]
    return f"{ref.year + off} {ref.year + off}年", [str(ref.year + off)]


def relative_dates(text: str, ref: dt.date) -> list[tuple[str, str, list[str]]]:
    """``[(phrase, words, keys)]`` for each relative date in ``text`` resolved against
    ``ref``: the words of the date it means, and its ISO keys (see :func:`_span`)."""
    out: list[tuple[str, str, list[str]]] = []
    may = _may_match(text)
    for rx, kind, off, needs in _RELATIVE_RE:
        if not may(needs):
            continue
        for m in rx.finditer(text):
            out.append((m.group(0), *_span(ref, kind, off)))
    for m in (_AGO.finditer(text) if may(_AGO_NEEDS) else ()):
        raw = m.group(1).lower()
        n = int(raw) if raw.isdigit() else _NUM[raw]
        unit = m.group(2).lower()
        if unit == "day":
            out.append((m.group(0), *_span(ref, "day", -n)))
        elif unit == "week":
            out.append((m.group(0), *_span(ref, "week", -n)))
        elif unit == "month":
            out.append((m.group(0), *_span(ref, "month", -n)))
        else:
            out.append((m.group(0), *_span(ref, "year", -n)))
    for m in (_LAST_WEEKDAY.finditer(text) if may(_LAST_WEEKDAY_NEEDS) else ()):
        target = WEEKDAYS_EN.index(m.group(1).capitalize())
        back = (ref.weekday() - target) % 7 or 7
        out.append((m.group(0), *_span(ref, "day", -back)))
    return out
