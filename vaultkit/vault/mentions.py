"""The note paths a note writes out as text (``memory/decisions/x.md``, ``x.md``).

``orphan-note`` counts a note as reached when another note names its path. What a note
names depends on that note alone: the parse workers compute it beside the parse (a cached
fact, :data:`FACT`), so the main process of a cold run reads no note's text for it.
"""

from __future__ import annotations

import re

from vaultkit.core.lazyre import lazy_re

FACT = "mentions"  # the fact's key (no epoch: it depends on the note's text alone)

_MD = lazy_re(r"\.md(?![\w])", re.IGNORECASE)
# the run of path characters before a ".md", read backwards: no spaces, quotes, brackets or
# list punctuation
_RUN = lazy_re(r"[^\s`'\"()\[\]<>|*,;（）「」【】，；：]*")


def mentions(note) -> list[str]:
    """Every ``.md`` path written in a note's text (in backticks or not), lower-cased:
    ``memory/decisions/x.md``, ``decisions/x.md``, ``x.md``."""
    text = note.text
    found = set()
    for m in _MD.finditer(text):
        at = m.start()
        run = _RUN.match(text[max(0, at - 200):at][::-1]).end()
        path = text[at - run:at + 3].lower().lstrip("./")
        if len(path) > 3:
            found.add(path)
    return sorted(found)
