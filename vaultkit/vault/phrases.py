"""Phrase lists from the profile, compiled once and matched case-insensitively.

A plain entry matches as a phrase: Latin-script (and Greek, Cyrillic) phrases on
word boundaries, so ``idle`` does not match inside ``bridle``; phrases in CJK
script match anywhere, since Chinese and Japanese do not separate words with
spaces. Whitespace inside a phrase matches any run of whitespace. An entry that
starts with ``re:`` is a regular expression (compiled with ``re.IGNORECASE``).

Matchers are cached by their phrase tuple, so every rule and every note of a run
shares one compiled matcher per list::

    m = matcher(ctx.profile.phrases.filler)
    m.find("System idle, no changes.")   # -> re.Match for "System idle"
    m.only("System idle, no changes.")   # -> True: nothing but filler
    m.only("No changes to the API, but the deploy failed")  # -> False
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterable, Iterator, Sequence

from vaultkit.core.lazyre import lazy_re

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
        plain = sorted({p.strip() for p in self.phrases if not p.startswith("re:") and p.strip()},
                       key=len, reverse=True)
        self._patterns: list[re.Pattern] = []
        if plain:
            self._patterns.append(re.compile("|".join(_phrase_pattern(p) for p in plain),
                                              re.IGNORECASE))
        for p in self.phrases:
            if p.startswith("re:") and p[3:]:
                self._patterns.append(re.compile(p[3:], re.IGNORECASE))

    def __bool__(self) -> bool:
        return bool(self._patterns)

    def finditer(self, text: str) -> Iterator[re.Match]:
        """Every non-empty match, in text order (overlaps between lists resolved leftmost-longest)."""
        found: list[re.Match] = []
        for pattern in self._patterns:
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
        for pattern in self._patterns:
            m = pattern.search(text)
            while m is not None and m.end() == m.start():
                m = pattern.search(text, m.end() + 1) if m.end() < len(text) else None
            if m is not None and (best is None or (m.start(), -m.end()) < (best.start(), -best.end())):
                best = m
        return best

    def only(self, text: str) -> bool:
        """True when ``text`` holds at least one phrase and nothing else but punctuation/space."""
        first = _CONTENT.search(text)
        if first is None or not self._patterns:
            return False
        if not self._covers(text, first.start()):
            return False  # the first word is no phrase: the common case, decided early
        spans = []
        for pattern in self._patterns:
            spans.extend((m.start(), m.end()) for m in pattern.finditer(text) if m.end() > m.start())
        spans.sort()
        pos = 0
        for start, end in spans:
            if start > pos and _CONTENT.search(text, pos, start):
                return False
            pos = max(pos, end)
        return _CONTENT.search(text, pos) is None

    def _covers(self, text: str, at: int) -> bool:
        """Whether a match starting at or before position ``at`` reaches past it."""
        for pattern in self._patterns:
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
