"""Tokens for the search index: Latin words, and CJK text as character bigrams.

SQLite's ``unicode61`` tokenizer (what FTS5 uses by default) splits on spaces and
punctuation, so a Chinese sentence becomes one enormous "word" and a query for
``部署`` finds nothing. The ``trigram`` tokenizer (SQLite ≥ 3.34) would find
substrings, but not of fewer than three characters, and most Chinese words are
two. So before text reaches FTS5, every run of CJK characters is rewritten as its
overlapping bigrams plus its last character (``自动部署`` → ``自动 动部 部署 署``):
a two-character query word is then one exact token, a longer one a phrase of
bigrams, and a single character a prefix query. Latin words are matched by a light
suffix-stripped stem as an FTS5 prefix query (``deployments`` → ``deploy*``), a word
ending in a consonant and y by its y word's forms (``cities`` → city, cities) and one
whose stem would be four letters by its own inflections (``store``, not ``stor*``), the same
rule the Python side uses to decide coverage and to highlight matches.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

CJK_CHARS = ("\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
             "\U00020000-\U0002ffff")
_CJK_RUN = re.compile(f"[{CJK_CHARS}]+")
_TOKEN = re.compile(f"[{CJK_CHARS}]+|[^\\W_{CJK_CHARS}]+")
WORDISH = r"0-9A-Za-z\u00C0-\u024F\u0370-\u03FF\u0400-\u04FF"

STOP = frozenset("""
a an and are as at be been being but by can could did do does doing done for from had has
have how i if in into is it its me my no not of on or our ours so than that the their them
then there these they this those to us was we were what when where which who whom why will
with would you your yours should shall any some all also about after before again did via
whats what's hows whos get got ever just very more most much many only own same such too
""".split())
# Words that carry no topic in a Chinese question. Bigrams touching a particle are dropped.
CJK_STOP = ("为什么", "什么", "怎么样", "怎么", "如何", "哪个", "哪些", "哪里", "是否", "我们",
            "你们", "他们", "关于", "有没有", "有关", "一下", "之前", "以前", "的时候")
CJK_PARTICLES = frozenset("的了吗呢吧啊么嘛哦呀")

_SUFFIXES = (("ingly", 4), ("edly", 4), ("ations", 4), ("ation", 4), ("ments", 4), ("ment", 4),
             ("ings", 4), ("ing", 4), ("ions", 4), ("ion", 4), ("ies", 4), ("ied", 4), ("ers", 5),
             ("er", 5), ("ed", 4), ("es", 4), ("ly", 4), ("e", 4), ("y", 4), ("s", 3))


def stem(word: str) -> str:
    """A light suffix strip; every form of the word starts with the result."""
    for suffix, keep in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= keep:
            return word[:-len(suffix)]
    return word


def cjk_bigrams(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[i:i + 2] for i in range(len(run) - 1)]


def fts_text(text: str) -> str:
    """Text as it goes into the FTS5 table: CJK runs as bigrams plus their last character."""
    def repl(m: re.Match) -> str:
        run = m.group(0)
        if len(run) == 1:
            return f" {run} "
        return " " + " ".join(cjk_bigrams(run)) + f" {run[-1]} "
    return _CJK_RUN.sub(repl, text)


@dataclass
class Term:
    key: str  # what it is called in the report
    fts: str  # FTS5 query fragment
    cjk: bool
    pattern: re.Pattern  # finds the term in original text
    df: int = 0
    idf: float = 0.0
    date: bool = False  # a resolved relative date (vaultkit.memory.dates)


_VOWELS = "aeiou"
_Y_ENDINGS = ("ies", "ied", "ier", "iest", "ily", "iness", "ying")


def _y_forms(word: str) -> list[str] | None:
    """The words a query word ending in a consonant and ``y`` (or ``-ies``/``-ied``)
    matches: the ``y`` word and its ``-ies``, ``-ied``, ``-ier``, ``-iest``, ``-ily``,
    ``-iness`` and ``-ying`` forms (``cities`` → city, cities; ``party`` → party, parties,
    not part or partner; ``happy`` → happier, happiness, not happen), and for ``-ies`` the
    word less its ``s`` as well (``movies`` → movie, movies). None for other words (their
    stem as a prefix): the stem of a ``y`` word as a prefix matched other words, and that
    of an ``-ies`` word missed its ``y`` form."""
    if len(word) >= 5 and word.endswith(("ies", "ied")):
        base = word[:-3]
    elif len(word) >= 4 and word.endswith("y") and word[-2] not in _VOWELS \
            and (stem(word) == word[:-1] or len(stem(word)) <= 4):
        base = word[:-1]  # (an -ly word only when the stem left is short: family, likely)
    else:
        return None
    forms = [base + "y"] + [base + e for e in _Y_ENDINGS]
    if word.endswith("ies"):
        forms += [word[:-1], word]
    return list(dict.fromkeys(forms))


def _short_forms(word: str) -> list[str] | None:
    """The words a query word whose stem is four letters or fewer after ``-e``, ``-ion``,
    ``-ment`` or ``-ation`` (and their plurals) matches: the word and its inflections, an
    ``-ion`` word also with ``-al`` or ``-ate`` (``store`` → stores, stored, storing, not
    story or storage; ``mention`` → mentioned, not mental or mentor; ``state`` → states,
    not station; ``passion`` → passionate, not passenger). None for other words."""
    s = stem(word)
    cut = word[len(s):]
    if len(s) > 4 or cut not in ("e", "es", "ion", "ions", "ment", "ments", "ation",
                                 "ations"):
        return None
    if cut == "es" and s.endswith(("s", "x", "z", "ch", "sh", "o")):
        return None  # (dishes: the plural of dish, its stem as a prefix)
    base = word[:-1] if cut.endswith("s") else word
    if base.endswith("e"):
        return [base, base + "s", base + "d", base[:-1] + "ing", base[:-1] + "ings",
                base + "r", base + "rs"]
    more = ("al", "ally", "ate", "ately") if base.endswith("ion") else ()  # (passionate)
    return [base] + [base + e for e in ("s", "ed", "ing", "ings", "er", "ers", *more)]


def _latin_term(word: str) -> Term:
    forms = _y_forms(word) or _short_forms(word)
    if forms:
        key = forms[0]
        for form in forms[1:]:  # the forms' common prefix (what a line must hold)
            while not form.startswith(key):
                key = key[:-1]
        fts = "(" + " OR ".join(f'"{f}"' for f in forms) + ")"
        pattern = re.compile(rf"(?<![{WORDISH}])(?:" + "|".join(map(re.escape, forms))
                             + rf")(?![{WORDISH}])", re.IGNORECASE)
        return Term(key, fts, False, pattern)
    s = stem(word)
    if len(s) >= 3:
        fts = f'"{s}"*'
        pattern = re.compile(rf"(?<![{WORDISH}]){re.escape(s)}[{WORDISH}]*", re.IGNORECASE)
    else:
        fts = f'"{s}"'
        pattern = re.compile(rf"(?<![{WORDISH}]){re.escape(s)}(?![{WORDISH}])", re.IGNORECASE)
    return Term(s, fts, False, pattern)


def _cjk_term(chars: str) -> Term:
    if len(chars) == 1:
        return Term(chars, f'"{chars}"*', True, re.compile(re.escape(chars)))
    return Term(chars, f'"{chars}"', True, re.compile(re.escape(chars)))


def query_terms(query: str) -> list[Term]:
    """The distinct terms of a query, stop words removed, in query order."""
    out: dict[str, Term] = {}
    for m in _TOKEN.finditer(query):
        token = m.group(0)
        if _CJK_RUN.fullmatch(token):
            pieces = [token]
            for stop in CJK_STOP:
                pieces = [q for p in pieces for q in p.split(stop)]
            for piece in pieces:
                if not piece:
                    continue
                grams = cjk_bigrams(piece)
                for gram in grams:
                    if len(gram) == 2 and (gram[0] in CJK_PARTICLES or gram[1] in CJK_PARTICLES):
                        continue
                    if len(gram) == 1 and gram in CJK_PARTICLES:
                        continue
                    out.setdefault(gram, _cjk_term(gram))
        else:
            word = token.lower()
            if word in STOP or (len(word) == 1 and not word.isdigit()):
                continue
            term = _latin_term(word)
            out.setdefault(term.fts, term)  # (story and store share their key, stor)
    return list(out.values())


def set_idf(terms: list[Term], total: int) -> None:
    """BM25's idf for each term (always > 0)."""
    for t in terms:
        t.idf = math.log(1 + (total - t.df + 0.5) / (t.df + 0.5))


def match_spans(text: str, terms: list[Term]) -> list[tuple[int, int]]:
    """Merged character spans of ``text`` where any term matches (for highlighting)."""
    spans = sorted((m.start(), m.end()) for t in terms for m in t.pattern.finditer(text))
    merged: list[list[int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(a, b) for a, b in merged]


# -- a promoted line: the same line whoever promoted it (`vaultkit promote`, distill) ----

MARKER = "vaultkit-promoted"
MARKER_LINE = re.compile(r"^\s*<!--\s*" + MARKER + r":(?P<source>.+?:\d+)\s*-->\s*$")

# list, quote, heading and checkbox marks, and an entry's "14:30 — " stamp: what is not
# the line's content (a journal heading promoted is its title, not a dated record)
_MARKS = re.compile(r"^\s*(?:>\s*)*(?:#{1,6}\s+)?(?:(?:[-*+]|\d{1,9}[.)])\s+)?"
                    r"(?:\[[ xX]\]\s+)?")
_STAMP = re.compile(r"^\[?(?:[01]?\d|2[0-3]):[0-5]\d\]?\s*[—–-]+\s*")


def content(line: str) -> str:
    """The line as promoted: its marks and a leading time stamp dropped, spaces collapsed."""
    text = _MARKS.sub("", line)
    text = _STAMP.sub("", text)
    return " ".join(text.split())


def key(line: str) -> str:
    """What two lines must share to be the same promoted line."""
    return content(line).casefold()
