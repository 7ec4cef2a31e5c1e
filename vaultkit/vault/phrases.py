"""Phrase lists from the profile, compiled once and matched case-insensitively.

A plain entry matches as a phrase: Latin-script (and Greek, Cyrillic) phrases on
word boundaries, so ``idle`` does not match inside ``bridle``; phrases in CJK
script match anywhere, since Chinese and Japanese do not separate words with
spaces. Whitespace inside a phrase matches any run of whitespace. An entry that
starts with ``re:`` is a regular expression (compiled with ``re.IGNORECASE``).

Matchers are cached by their phrase tuple, so every rule and every note of a run
shares one compiled matcher per list. The plain phrases' pattern (one alternation: 5-10 ms
to compile for a profile's list) is compiled only for a text that may hold one of them: each
text is first folded as the pattern folds it (:func:`_fold`), and a text in which no
phrase's folded form occurs cannot match, so a commit hook on a journal whose entries hold
no phrase compiles none::

    m = matcher(ctx.profile.phrases.filler)
    m.find("System idle, no changes.")   # -> re.Match for "System idle"
    m.only("System idle, no changes.")   # -> True: nothing but filler
    m.only("No changes to the API, but the deploy failed")  # -> False
"""

from __future__ import annotations

import re
from functools import lru_cache

from vaultkit.core.lazyre import lazy_re

TYPE_CHECKING = False  # (typing's own flag costs importing typing)
if TYPE_CHECKING:  # (names for annotations only)
    from typing import Iterable, Iterator, Sequence

# Characters that continue a Latin-script word: a phrase must not touch them.
_WORDISH = r"0-9A-Za-z_\u00C0-\u024F\u0370-\u03FF\u0400-\u04FF"
_BEFORE = rf"(?<![{_WORDISH}])"
_AFTER = rf"(?![{_WORDISH}])"
_WORD_EDGE = lazy_re(rf"[{_WORDISH}]")
# Anything that still counts as content once every phrase is removed.
_CONTENT = lazy_re(r"[^\W_]")


def _phrase_pattern(phrase: str) -> str:
    body = r"\s+".join(re.escape(part) for part in phrase.split())
    if _WORD_EDGE.match(phrase[0]):
        body = _BEFORE + body
    if _WORD_EDGE.match(phrase[-1]):
        body = body + _AFTER
    return body


class PhraseMatcher:
    """Find any of ``phrases`` in a text. Build with :func:`matcher` to share the compiled form."""

    def __init__(self, phrases: Iterable[str]):
        self.phrases = tuple(phrases)
        self._plain = sorted({p.strip() for p in self.phrases
                              if not p.startswith("re:") and p.strip()}, key=len, reverse=True)
        self._alternation: re.Pattern | None = None  # the plain phrases, compiled on need
        self._folded: list[str] | None = None  # each plain phrase folded (see _fold)
        self._firsts: tuple[str, ...] | None = None  # and the first word of each, folded
        # (a user's ``re:`` phrase compiles at once: a bad one is reported when it is read)
        self._regexes = [re.compile(p[3:], re.IGNORECASE) for p in self.phrases
                         if p.startswith("re:") and p[3:]]

    def _compiled(self) -> re.Pattern:
        if self._alternation is None:
            self._alternation = re.compile("|".join(_phrase_pattern(p) for p in self._plain),
                                           re.IGNORECASE)
        return self._alternation

    def _for(self, text: str) -> list[re.Pattern]:
        """The patterns that can match in ``text``: the plain phrases' only when one of them,
        folded, occurs in the folded text (whitespace runs as one space, as ``\\s+`` joins
        a phrase's words), so a text with none of them compiles nothing."""
        if not self._plain:
            return self._regexes
        if self._alternation is None:
            folded = self._folded
            if folded is None:
                folded = self._folded = [" ".join(_fold(p).split()) for p in self._plain]
            flat = " ".join(_fold(text).split())
            if not any(f in flat for f in folded):
                return self._regexes
        return [self._compiled(), *self._regexes]

    def _starts_by(self, text: str, at: int) -> bool:
        """Whether a plain phrase can match starting at or before position ``at``: its first
        word, folded, starts there in the folded text (a match begins with that word)."""
        firsts = self._firsts
        if firsts is None:
            firsts = self._firsts = tuple({_fold(p).split()[0] for p in self._plain})
        head = _fold(text[:at + max(map(len, firsts))])
        return any(head.startswith(w, start) for start in range(at + 1) for w in firsts)

    def __bool__(self) -> bool:
        return bool(self._plain or self._regexes)

    def finditer(self, text: str) -> Iterator[re.Match]:
        """Every non-empty match, in text order (overlaps between lists resolved leftmost-longest)."""
        found: list[re.Match] = []
        for pattern in self._for(text):
            found.extend(m for m in pattern.finditer(text) if m.end() > m.start())
        found.sort(key=lambda m: (m.start(), -m.end()))
        pos = 0
        for m in found:
            if m.start() >= pos:
                yield m
                pos = m.end()

    def find(self, text: str) -> re.Match | None:
        """The first (leftmost, then longest) match, or None."""
        best = None
        for pattern in self._for(text):
            m = pattern.search(text)
            while m is not None and m.end() == m.start():
                m = pattern.search(text, m.end() + 1) if m.end() < len(text) else None
            if m is not None and (best is None or (m.start(), -m.end()) < (best.start(), -best.end())):
                best = m
        return best

    def only(self, text: str) -> bool:
        """True when ``text`` holds at least one phrase and nothing else but punctuation/space."""
        first = _CONTENT.search(text)
        if first is None:
            return False
        at = first.start()
        if self._alternation is not None or not self._plain or at > 256:
            pass
        elif not self._starts_by(text, at) and not (self._regexes and
                                                     self._covers(self._regexes, text, at)):
            return False  # no phrase can start by the first word: nothing compiled
        patterns = self._for(text)
        if not patterns:
            return False
        if not self._covers(patterns, text, at):
            return False  # the first word is no phrase: the common case, decided early
        spans = []
        for pattern in patterns:
            spans.extend((m.start(), m.end()) for m in pattern.finditer(text) if m.end() > m.start())
        spans.sort()
        pos = 0
        for start, end in spans:
            if start > pos and _CONTENT.search(text, pos, start):
                return False
            pos = max(pos, end)
        return _CONTENT.search(text, pos) is None

    @staticmethod
    def _covers(patterns: list[re.Pattern], text: str, at: int) -> bool:
        """Whether a match starting at or before position ``at`` reaches past it."""
        for pattern in patterns:
            if at > 256:  # a long run of punctuation first: scan instead
                for m in pattern.finditer(text):
                    if m.start() > at:
                        break
                    if m.end() > at:
                        return True
                continue
            for start in range(at, -1, -1):
                m = pattern.match(text, start)
                if m is not None and m.end() > at:
                    return True
        return False


_KEYS: dict[int, str] | None = None  # the folding table, made on first use


def _fold(text: str) -> str:
    """``text`` with each character replaced by one key shared by every character an
    ``re.IGNORECASE`` literal matches it with: the lower case ``re`` uses (not
    ``str.lower``: ``İ`` folds to ``i`` alone), then one member of each group ``re`` treats
    as equal (``ſ`` and ``s``, ``ı`` and ``i``, ``µ`` and ``μ``; ``re._casefix``). Equal
    under the pattern means equal keys, so a phrase whose folded form is not in a text's
    cannot match in it. Characters keep their place (one key each)."""
    global _KEYS
    if _KEYS is None:
        _KEYS = _Keys()
    return text.translate(_KEYS)


class _Keys(dict):
    """``str.translate``'s table for :func:`_fold`, filled as characters are met."""

    def __init__(self):
        super().__init__()
        import _sre
        from re._casefix import _EXTRA_CASES

        self._lower = _sre.unicode_tolower
        # the least member of each group of equal lower cases (closed under _EXTRA_CASES)
        least: dict[int, int] = {}
        for lo, others in _EXTRA_CASES.items():
            group = {lo, *others}
            for member in list(group):
                group.update(_EXTRA_CASES.get(member, ()))
            for member in group:
                least[member] = min(group)
        self._least = least

    def __missing__(self, code: int) -> str:
        lo = self._lower(code)
        key = self[code] = chr(self._least.get(lo, lo))
        return key


@lru_cache(maxsize=64)
def _cached(phrases: tuple[str, ...]) -> PhraseMatcher:
    return PhraseMatcher(phrases)


def matcher(phrases: Sequence[str]) -> PhraseMatcher:
    """The shared compiled matcher for a phrase list (compiled once per distinct list)."""
    return _cached(tuple(phrases))


def did_you_mean(word: str, choices, *, quote: str = "'") -> str:
    """``"; did you mean 'x'?"`` naming the closest of ``choices`` (up to three), or ``""``."""
    import difflib

    choices = list(dict.fromkeys(choices))
    close = difflib.get_close_matches(word, choices, n=3, cutoff=0.6)
    if not close:
        folded = {c.lower(): c for c in choices}
        close = [folded[c] for c in difflib.get_close_matches(word.lower(), list(folded), n=3,
                                                               cutoff=0.6)]
    if not close:
        return ""
    named = " or ".join(f"{quote}{c}{quote}" for c in close)
    return f"; did you mean {named}?"
