"""The one judgement of a lost line (docs/snapshots.md, "The model of loss").

Memory is what the files hold, not what git's history holds. A line of an old version
(HEAD, or a snapshot taken since) is lost when no text that holds the file now has it:
not the new version (the staged one in a commit), nor the work tree, nor a stash; and
when it was not edited into a line that one of them holds. The commit hook, ``vaultkit
history``, ``vaultkit recover``, ``vaultkit watch`` and the audit all judge with
:func:`judge`, so they agree on what is lost.

An edit is a line the line diff pairs with a new line that keeps at least
:data:`EDIT_KEPT` of the old line's characters (:func:`kept_share`): a typo fixed, a
number corrected, a clause reworded. It is not a loss. A line whose content is gone (cut,
or replaced by an unrelated one) is.

A line is the same line when only its Markdown form changed (:func:`same_text`): list and
emphasis markers, escapes, heading marks, table padding and whitespace, as formatters and
editors rewrite them. A line of markup alone (a setext underline, a table's delimiter row,
a rule) holds no memory. A paragraph re-wrapped over more or fewer lines keeps the lines
whose words the new text holds in the same order (:func:`_rewrapped`).
"""

from __future__ import annotations

import re
from collections import Counter

from vaultkit.core.plain import FRESH

from vaultkit.vault.conflicts import conflicts  # (git's conflicts: one definition, shared)

# The share of an old line's characters a new line must keep to be its edit. Measured on
# real journal corrections (docs/snapshots.md lists them): a typo, a wrong version or
# count, a reworded clause keep 0.75-0.97; an entry replaced by another ("- Deployed v1.2
# to production" -> "- Summary: release and review done") keeps 0.2-0.45, and so does
# a line cut down to its first word or two ("- Deployed v1.2 to production" -> "- Deployed
# v1.3" keeps 0.48). 0.6 sits in the gap between the two.
EDIT_KEPT = 0.6
# a line diff's replaced block is paired line by line only up to this many pairs (a block
# larger than that is a rewrite: its lines are judged lost, the bound keeps it linear)
_PAIRS = 4096

def _conflict_markers(old: str) -> Counter:
    """The marker lines of ``old``'s conflicts (:func:`conflicts`), as a multiset."""
    found: Counter = Counter()
    for _, _, markers in conflicts(_lines(old)):
        found.update(markers)
    return found

_LINK_TARGET = re.compile(r"(\[\[)[^\]|#\n]*|(\]\()[^)\s]*")


def _without_targets(line: str) -> str:
    return _LINK_TARGET.sub(lambda m: m.group(1) or m.group(2), line)


def _lines(text: str) -> list[str]:
    from vaultkit.vault.gitstate import split_lines

    return split_lines(text)[0]


# the Markdown form of a line that formatters and editors rewrite without changing its text
# (docs/snapshots.md, "The model of loss"): a block prefix (quote, heading, list or
# ordered-list marker, indent), a heading's closing hashes, a hard break's backslash,
# escapes, emphasis markers, spacing (tabs, runs, around table pipes), a byte order mark
_BLOCK_PREFIX = re.compile(r"(?:>|#{1,6}(?=\s|$)|[-*+](?=\s|$)|\d{1,9}[.)](?=\s|$)|\s)+")
_CLOSING_HASHES = re.compile(r"\s+#+$")
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
_EMPHASIS = re.compile(r"[*_]+")
_SPACE = re.compile(r"\s+")
_PIPE = re.compile(r" ?\| ?")
_MARKUP = re.compile(r"[-=|:+#>~` ]*")
_RULE = re.compile(r"(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,}")
_DELIMITER_ROW = re.compile(r"\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?")
_UNDERLINE = re.compile(r" {0,3}(?:=+|-+)[ \t]*")
_NOT_PARAGRAPH = re.compile(r" {0,3}(?:[>#|]|[-*+](?:\s|$)|\d{1,9}[.)](?:\s|$))")


def same_text(line: str) -> str:
    """``line``'s text without its Markdown form: two lines with the same text are the same
    line, whatever a formatter or an editor did to their markers and spacing (``* a
    __b__`` and ``- a **b**``, ``2. a`` and ``1. a``, ``### Title`` and ``## Title``, a
    table row padded or not). A line of markup alone keeps its own (``---``, ``***`` and
    ``___`` are one rule; a table's delimiter row is its columns' alignment). Empty only
    for a blank line."""
    text = line.replace("\ufeff", "").strip()
    if not text:
        return ""
    if _RULE.fullmatch(text):
        return "---"
    if "|" in text and _DELIMITER_ROW.fullmatch(text):
        return re.sub("-+", "---", _SPACE.sub("", text).strip("|"))
    prefix = _BLOCK_PREFIX.match(text)
    if prefix:
        heading = "#" in prefix.group(0)
        text = text[prefix.end():]
        if heading:
            text = _CLOSING_HASHES.sub("", text)
    if text.endswith("\\") and not text.endswith("\\\\"):
        text = text[:-1]  # a hard break written as a backslash (two spaces, stripped, alike)
    text = _EMPHASIS.sub("", _ESCAPE.sub(r"\1", text))
    text = _PIPE.sub("|", _SPACE.sub(" ", text).strip())
    if "|" in text:
        text = text.strip("|")
    return text if text and not _MARKUP.fullmatch(text) else _SPACE.sub("", line.strip())


def _underline(lines: list[str], i: int) -> bool:
    """True when ``lines[i]`` is a setext heading's underline: ``===`` or ``---`` right
    under a line of paragraph text (not a quote, heading, list item or table row)."""
    if i == 0 or not _UNDERLINE.fullmatch(lines[i]):
        return False
    above = lines[i - 1].replace("\ufeff", "")
    return bool(above.strip()) and not _NOT_PARAGRAPH.match(above) \
        and not _UNDERLINE.fullmatch(above)


def lost_lines(old: str, new: str) -> list[str]:
    """Lines of ``old``, in order, that ``new`` no longer holds (as a multiset: a line
    that moved is kept; one of two equal lines removed is lost once).

    A line whose only change is in its Markdown form (:func:`same_text`) is kept, and so
    is a setext heading's underline when its heading's text is (an ATX heading now). A
    line whose only change is in link targets is kept too: renaming a note in Obsidian
    rewrites the links to it everywhere, journals included, and nothing is lost."""
    lines = _lines(old)
    remaining = Counter(_lines(new))
    out = []
    for i, line in enumerate(lines):
        if remaining[line] > 0:
            remaining[line] -= 1
        else:
            out.append(i)
    if any(lines[i].strip() for i in out):
        texts: Counter = Counter()
        for line, n in remaining.items():
            if n > 0 and line.strip():
                texts[same_text(line)] += n
        kept = []
        for i in out:
            text = same_text(lines[i])
            if text and texts[text] > 0:
                texts[text] -= 1
            else:
                kept.append(i)
        gone = set(kept)
        out = [i for i in kept if not (_underline(lines, i) and i - 1 not in gone)]
    if out and any("[[" in lines[i] or "](" in lines[i] for i in out):
        relinked = Counter(_without_targets(same_text(line)) for line, n in remaining.items()
                           for _ in range(n) if "[[" in line or "](" in line)
        kept = []
        for i in out:
            line = lines[i]
            bare = _without_targets(same_text(line)) if ("[[" in line or "](" in line) \
                else None
            if bare is not None and relinked[bare] > 0:
                relinked[bare] -= 1
            else:
                kept.append(i)
        out = kept
    return [lines[i] for i in out]


def kept_share(old: str, new: str) -> float:
    """The share of ``old``'s characters (surrounding blanks aside) that ``new`` keeps,
    in order: the matching blocks of :class:`difflib.SequenceMatcher`."""
    from difflib import SequenceMatcher

    old, new = old.strip(), new.strip()
    if not old or not new:
        return 0.0
    matcher = SequenceMatcher(None, old, new, autojunk=False)
    return sum(block.size for block in matcher.get_matching_blocks()) / len(old)


def edits(old: str, new: str, only: Counter | None = None,
          gone: Counter | None = None) -> list[tuple[str, str]]:
    """``(old line, new line)`` pairs the line diff of ``old`` and ``new`` replaced one by
    the other and that keep :data:`EDIT_KEPT` of the old line (each new line paired once,
    with the old line it keeps most of). ``only``: the old lines worth pairing; ``gone``
    (``only`` by default): the old lines ``new`` lacks, which a block written over by fewer
    lines counts."""
    from difflib import SequenceMatcher

    # (non-blank lines aligned by their text: a line a formatter only re-marked, or a
    # blank line it added, is no replaced one)
    a = [line for line in _lines(old) if line.strip()]
    b = [line for line in _lines(new) if line.strip()]
    out = []
    matcher = SequenceMatcher(None, [same_text(line) for line in a],
                              [same_text(line) for line in b], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "replace":
            continue
        olds = [line for line in a[i1:i2] if only is None or only[line] > 0]
        news = b[j1:j2]
        if not olds or len(olds) * len(news) > _PAIRS:
            continue
        counted = olds if gone is None else [line for line in a[i1:i2] if gone[line] > 0]
        if len(counted) > 1 and (len(news) < len(counted) or _new_entry(counted, news)):
            continue  # fewer lines than it replaces, or another entry: a rewrite
        free = list(news)
        for line in olds:
            best, share = None, EDIT_KEPT
            for candidate in free:
                kept = kept_share(line, candidate)
                if kept >= share:
                    best, share = candidate, kept
            if best is not None:
                free.remove(best)
                out.append((line, best))
    return out


# a block of the line diff is compared word by word (a re-wrapped paragraph) only up to
# this many words on both sides (a larger one is a rewrite: the bound keeps it linear)
_WORDS = 8192


_WORD_GAP = re.compile(r"[\s|]+")


def _words(text: str) -> list[str]:
    """The words of a :func:`same_text`, a table's cells split at their pipes (a table a
    formatter took for a paragraph and re-wrapped keeps its words and its rows' markup)."""
    return [word for word in _WORD_GAP.split(text) if word]


_ATX = re.compile(r"\s{0,3}#{1,6}(?:\s|$)")
_BLOCK_START = re.compile(r"\s*(?:[>#|]|[-*+](?:\s|$)|\d{1,9}[.)](?:\s|$))")


def _units(text: str) -> list[tuple[list[tuple[str, list[str]]], str]]:
    """The blocks of ``text`` a formatter re-wraps as one: a paragraph, a list item with its
    continuation lines, a heading, a table row, a rule; each as its lines (``(line, its
    words)``: :func:`same_text`'s, a heading's marked as such, so that they pair only
    with a heading's) and its words joined. A blank line ends a block, and a line that
    starts one (a marker, a heading, a quote, a pipe) or is markup alone stands first in
    its own."""
    out: list[tuple[list[tuple[str, list[str]]], str]] = []
    lines: list[tuple[str, list[str]]] = []
    markup_last = False
    for line in _lines(text):
        same = same_text(line)
        markup = bool(same) and _MARKUP.fullmatch(same) is not None
        bare = line.replace("\ufeff", "")
        if lines and (not same or markup or markup_last or _BLOCK_START.match(bare)):
            out.append((lines, " ".join(w for _, words in lines for w in words)))
            lines = []
        if same:
            words = _words(same)
            if _ATX.match(bare):
                words = ["#" + word for word in words]
            lines.append((line, words))
            markup_last = markup
    if lines:
        out.append((lines, " ".join(w for _, words in lines for w in words)))
    return out


def _rewrapped(old: str, new: str, only: Counter, share: float = EDIT_KEPT) -> Counter:
    """The lines of ``only`` (old lines not yet found in ``new``) that ``new`` holds
    re-wrapped. Both texts are cut into the blocks a formatter re-wraps (:func:`_units`) and
    the blocks diffed by their words: a block whose words the new text holds unchanged
    keeps every line; where blocks were replaced, each old line whose words the new
    blocks hold in the same order (:class:`difflib.SequenceMatcher` over the words) for
    ``share`` of its characters is kept (all of them: a re-wrap alone; :data:`EDIT_KEPT`:
    a re-wrap and an edit). A paragraph joined onto one line, split over several or
    re-flowed keeps every line; a line of it cut, or its value replaced, is still lost.
    The lines of an entry whose heading's time the new blocks lack are no re-wrap: an
    entry written over by one of another time (as :func:`_new_entry` judges an edit). A
    line ``old`` holds more than once is kept only as often as the copies the words
    kept outnumber those ``new`` holds as lines (which :func:`lost_lines` already
    counted)."""
    from difflib import SequenceMatcher

    olds, news = _units(old), _units(new)
    kept_lines: Counter = Counter()
    matcher = SequenceMatcher(None, [words for _, words in olds], [words for _, words in news],
                              autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for lines, _ in olds[i1:i2]:
                kept_lines.update(line for line, _ in lines if only[line] > 0)
            continue
        if tag != "replace":
            continue
        block = [pair for lines, _ in olds[i1:i2] for pair in lines]
        if not any(only[line] > 0 for line, _ in block):
            continue
        words: list[str] = []
        owner: list[int] = []
        sizes = [0] * len(block)
        for n, (_, mine) in enumerate(block):
            for word in mine:
                words.append(word)
                owner.append(n)
                sizes[n] += len(word)
        theirs = " ".join(words for _, words in news[j1:j2]).split()
        if len(words) + len(theirs) > _WORDS:
            continue
        kept = [0] * len(block)
        for match in SequenceMatcher(None, words, theirs, autojunk=False).get_matching_blocks():
            for k in range(match.a, match.a + match.size):
                kept[owner[k]] += len(words[k])
        times = {m.group(1) for lines, _ in news[j1:j2] for line, _ in lines
                 if (m := _HEADING_TIME.match(line.lstrip()))}
        other = False  # under an entry heading whose time the new blocks lack: written over
        for n, (line, _) in enumerate(block):
            if line.lstrip().startswith("#"):
                heading = _HEADING_TIME.match(line.lstrip())
                other = heading is not None and heading.group(1) not in times
            if not other and only[line] > 0 and sizes[n] and kept[n] >= share * sizes[n]:
                kept_lines[line] += 1
    if not kept_lines:
        return Counter()
    held = Counter(line for line in _lines(old) if kept_lines[line] > 0)
    return Counter({line: min(only[line], n - (held[line] - only[line]))
                    for line, n in kept_lines.items() if n > held[line] - only[line]})


_HEADING_TIME = re.compile(r"^#+\s.*?(\d{1,2}:\d{2})")


def _new_entry(olds: list[str], news: list[str]) -> bool:
    """True when a block replaces an entry heading by one of another time (``### 10:00 —
    Checkpoint 1`` by ``### 11:00 — Checkpoint 2``): a new entry written over the old
    one, however alike their lines, not an edit of it."""
    times = [m.group(1) for m in map(_HEADING_TIME.match, olds) if m]
    if not times:
        return False
    now = {m.group(1) for m in map(_HEADING_TIME.match, news) if m}
    return any(t not in now for t in times)


def _unexplained(old: str, new: str, missing: Counter, share: float = 1.0) -> Counter:
    """``missing`` (old lines ``new`` lacks) less those ``new`` holds re-wrapped
    (:func:`_rewrapped`: every word kept with ``share`` 1, before the edits are paired; an
    edit's share of them after)."""
    missing = +missing
    if any(line.strip() for line in missing):
        missing -= _rewrapped(old, new, missing, share)
    return missing


def _not_explained(old: str, text: str, gone: Counter) -> tuple[Counter, list]:
    """Of ``gone`` (old lines ``text`` lacks), those ``text`` holds neither re-wrapped, nor
    edited, nor re-wrapped with an edit; and the edits (:func:`edits`) found."""
    missing = _unexplained(old, text, gone)
    edited = edits(old, text, missing, gone) if any(line.strip() for line in missing) else []
    for line, _ in edited:
        missing[line] -= 1
    return _unexplained(old, text, missing, EDIT_KEPT), edited


class Judgement:
    """What a change lost of a file's old text, and the lines it edited."""

    _fields = ("lost", "edited")
    lost: list[str]  # the old lines no holder has, in their order (blank ones included)
    edited: list[tuple[str, str]]  # (old, new) vs ``new``

    def __init__(self, lost, edited=FRESH):
        self.lost = lost
        self.edited = [] if edited is FRESH else edited


def judge(old: str, new: str, holders=(), accepted=None) -> Judgement:
    """What of ``old`` is lost now that the file reads ``new``, when ``holders`` (texts,
    or a callable returning them, asked only while a line is still unexplained) also hold
    the file: the work tree beside a staged version, a stash. A line is kept when ``new``
    or a holder has it (as a multiset: one of two equal lines gone is lost once), or an
    edit of it, or when ``accepted`` (the file's :class:`Accepted` lines) holds it: a
    removal the user accepted (``VAULTKIT_ACCEPT_DELETION``); lost otherwise. git's
    conflict markers, in an ``old`` that holds one that opens a conflict, are no memory:
    never lost."""
    lost = lost_lines(old, new)
    if accepted:
        lost = [line for line in lost if line not in accepted]
    if "<<<<<<<" in old:  # (a bare "=======" elsewhere is a line like any other)
        markers = _conflict_markers(old)
        if markers:
            kept = []
            for line in lost:
                if markers[line] > 0:
                    markers[line] -= 1
                else:
                    kept.append(line)
            lost = kept
    if not any(line.strip() for line in lost):
        return Judgement(lost)
    missing, edited = _not_explained(old, new, Counter(lost))
    texts = holders() if callable(holders) else holders
    for text in texts:
        if not +missing or not any(line.strip() for line in +missing):
            break
        if text is None:
            continue
        here, _ = _not_explained(old, text, Counter(lost_lines(old, text)))
        missing &= here  # lost only when lost against every text that holds the file
    out = []
    for line in lost:
        if missing[line] > 0:
            missing[line] -= 1
            out.append(line)
    return Judgement(out, edited)


# -- removals accepted on purpose (VAULTKIT_ACCEPT_DELETION), kept past their commit -------

# The record, in the workspace's state folder: which lines of which file a commit accepted
# as removed. A digest of each line, never its text (a line may hold a credential:
# docs/security.md), keyed by a random salt of the record's own so that a digest cannot be
# looked up in a table of common lines.
ACCEPTED_FILE = "accepted-removals.json"
# the most line digests kept in all (the oldest acceptances are dropped first past it):
# 200,000 digests of 32 hex characters are about 7 MB
MAX_ACCEPTED = 200_000
_ACCEPTED_READ_LIMIT = 16 * 1024 * 1024


class Accepted:
    """The lines of one file accepted as removed: ``line in accepted`` compares digests."""

    def __init__(self, salt: bytes, digests):
        self.salt = salt
        self.digests = frozenset(digests)

    def __contains__(self, line) -> bool:
        return bool(line.strip()) and line_digest(self.salt, line) in self.digests

    def __bool__(self) -> bool:
        return bool(self.digests)


def line_digest(salt: bytes, line: str) -> str:
    """A line's digest in the record: its text without surrounding blanks (a line ending
    or an indent changed is the same line), BLAKE2b keyed by the record's salt."""
    from vaultkit.core.digests import blake2b

    return blake2b(line.strip().encode("utf-8", "surrogatepass"), key=salt,
                   digest_size=16).hexdigest()


class AcceptedRemovals:
    """The record of accepted removals of a workspace (``.vaultkit/accepted-removals.json``,
    docs/snapshots.md): read once; a damaged or unreadable record is an empty one (it is
    rebuilt by the next acceptance)."""

    def __init__(self, root):
        from pathlib import Path

        self.path = Path(root) / ".vaultkit" / ACCEPTED_FILE
        self.root = Path(root)
        self.salt = b""
        self.files: dict[str, dict] = {}  # path -> {"time": int, "lines": [digest, ...]}
        self._read()

    def _read(self) -> None:
        import json

        from vaultkit.core.bounded import read_regular

        try:
            data = json.loads(read_regular(self.path, _ACCEPTED_READ_LIMIT,
                                           follow_symlinks=False))
            salt = bytes.fromhex(data["salt"])
            files = data["files"]
            if len(salt) != 16 or not isinstance(files, dict):
                raise ValueError
            ok = {}
            for path, entry in files.items():
                lines = entry.get("lines") if isinstance(entry, dict) else None
                when = entry.get("time") if isinstance(entry, dict) else None
                if isinstance(path, str) and isinstance(lines, list) and \
                        isinstance(when, int) and all(isinstance(d, str) for d in lines):
                    ok[path] = {"time": when, "lines": lines}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return  # none yet, or damaged: treated as empty
        self.salt, self.files = salt, ok

    def of(self, path: str) -> Accepted | None:
        """The lines of ``path`` (a vault path) accepted as removed, or None."""
        entry = self.files.get(path)
        return Accepted(self.salt, entry["lines"]) if entry else None

    def record(self, accepted: dict[str, list[str]]) -> None:
        """Add the lines of each path of ``accepted`` (path -> lines) and write the
        record atomically; past :data:`MAX_ACCEPTED` digests the oldest files' go first."""
        import json
        import os
        import time

        from vaultkit.core.atomic import write_atomic
        from vaultkit.vault.cachefile import ensure_cache_dir

        if not any(line.strip() for lines in accepted.values() for line in lines):
            return
        if len(self.salt) != 16:
            self.salt, self.files = os.urandom(16), {}
        now = int(time.time())
        for path, lines in accepted.items():
            have = list(self.files.get(path, {}).get("lines", []))
            seen = set(have)
            for line in lines:
                if line.strip():
                    digest = line_digest(self.salt, line)
                    if digest not in seen:
                        seen.add(digest)
                        have.append(digest)
            self.files.pop(path, None)
            self.files[path] = {"time": now, "lines": have[-MAX_ACCEPTED:]}
        total = sum(len(e["lines"]) for e in self.files.values())
        for path in sorted(self.files, key=lambda p: self.files[p]["time"]):
            if total <= MAX_ACCEPTED:
                break
            total -= len(self.files.pop(path)["lines"])
        ensure_cache_dir(self.path.parent)
        data = json.dumps({"version": 1, "salt": self.salt.hex(), "files": self.files},
                          separators=(",", ":"), sort_keys=True).encode()
        write_atomic(self.path, data)


# -- undoing a deletion in place (watch's restore and recover's: one implementation) --------

def _gaps(old_lines: list[str], new_lines: list[str]):
    """``(old gap, new gap, anchor)`` in file order: the non-blank lines both texts hold in
    the same order are the anchors (difflib's longest matching blocks, blank lines left
    out so that they never anchor), and each gap is what lies before an anchor in each
    text; the last has no anchor (None)."""
    import difflib

    old_nb = [i for i, line in enumerate(old_lines) if line.strip()]
    new_nb = [j for j, line in enumerate(new_lines) if line.strip()]
    matcher = difflib.SequenceMatcher(None, [old_lines[i] for i in old_nb],
                                      [new_lines[j] for j in new_nb], autojunk=False)
    po = pn = -1
    for a, b, size in matcher.get_matching_blocks():
        for k in range(size):
            oi, nj = old_nb[a + k], new_nb[b + k]
            yield old_lines[po + 1:oi], new_lines[pn + 1:nj], new_lines[nj]
            po, pn = oi, nj
    yield old_lines[po + 1:], new_lines[pn + 1:], None


def undo_deletions(old: str, new: str, lost: list[str], withheld: dict | None = None) -> str:
    """``new`` with the lines of ``old`` that it ``lost`` (as the model of loss judged
    them) put back where they stood: each run of lost lines goes back between the kept
    lines around it, before what was written in its place. An overwritten journal becomes
    ``old`` followed by the new text; a deleted entry comes back between its neighbours;
    edits and moved lines stay as ``new`` has them. ``withheld`` maps a line holding a
    credential to the placeholder written instead. Line endings follow ``new``."""
    crlf = "\r\n" in new and new.count("\r\n") == new.count("\n")
    old_lines = old.replace("\r\n", "\n").split("\n")
    new_lines = new.replace("\r\n", "\n").split("\n")
    lost = Counter(line for line in lost if line.strip())
    withheld = withheld or {}
    out: list[str] = []
    for old_gap, new_gap, anchor in _gaps(old_lines, new_lines):
        back = []
        for line in old_gap:
            if not line.strip():
                back.append(line)
            elif lost[line] > 0:
                lost[line] -= 1
                back.append(withheld.get(line, line))
        while back and not back[-1].strip():
            back.pop()
        lead = 0  # the blank lines above the first line put back, which the old text had
        while back and not back[0].strip():
            back.pop(0)
            lead += 1
        if back:
            # where nothing was written in their place, the blank lines the gap kept that
            # stood above the lost lines stay above them (an entry cut after a blank line
            # comes back after it, not before it); the empty string after a final line
            # ending is no blank line and stays last
            while lead and new_gap[:1] == [""] and (anchor is not None or len(new_gap) > 1) \
                    and not any(line.strip() for line in new_gap):
                out.append(new_gap.pop(0))
                lead -= 1
            if out and out[-1].strip() and back[0].lstrip().startswith("#"):
                out.append("")  # (a heading put back keeps its blank line above)
            out.extend(back)
            after = next((line for line in new_gap if line.strip()), anchor)
            if new_gap[:1] != [""] and after is not None and after.lstrip().startswith("#"):
                out.append("")  # (and so does the heading that follows)
        out.extend(new_gap)
        if anchor is not None:
            out.append(anchor)
    text = "\n".join(out)
    return text.replace("\n", "\r\n") if crlf else text


def prune_allowance(before: int, ratio: float) -> int:
    """The most durable lines a cut of ``MEMORY.md`` (``before`` non-blank lines) may drop
    without moving them into another note and still pass as pruning: ``ratio`` (``git:
    memory_md_prune_ratio``) of them, rounded down. The hook, ``history`` and ``watch``
    all ask this, so they agree on what is pruned and what is lost."""
    return int(ratio * before + 1e-9)  # (0.25 * 20 is 5, not 4.999...)


# OpenClaw's own guard on a dreaming consolidation rewrite of MEMORY.md: the share of prior
# entries it may drop (docs/concepts/dreaming.md, extensions/memory-core/src/
# dreaming-consolidation.ts validateConsolidatedMemory; 0.25 by default; checked 2026-12-07)
OPENCLAW_PRUNE_KEY = ("plugins.entries.memory-core.config.dreaming.phases.deep."
                      "maxPriorEntryLossFraction")


def prune_setting(settings, vault=None) -> tuple[float, str]:
    """MEMORY.md's pruning ratio for a vault's settings, and where it comes from (for a
    finding): ``vaultkit.toml``'s ``[git] memory-md-prune-ratio`` when it sets one; else
    OpenClaw's ``maxPriorEntryLossFraction`` from the ``openclaw.json`` that applies to
    ``vault`` (a Vault or its root folder) when it sets a usable one (a number from 0 to 1);
    else the profile's ``git: memory_md_prune_ratio``."""
    ratio = settings.profile.git.memory_md_prune_ratio
    config = getattr(settings, "config", None)
    if config is not None and "memory-md-prune-ratio" in getattr(config, "git", {}):
        return ratio, "vaultkit.toml [git] memory-md-prune-ratio"
    if vault is not None:
        from vaultkit.vault.openclaw import find_config, load_cached

        path = find_config(vault)
        data = load_cached(path)[0] if path is not None else None
        value = data
        for key in OPENCLAW_PRUNE_KEY.split("."):
            value = value.get(key) if isinstance(value, dict) else None
        if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 1:
            return float(value), f"{path}: {OPENCLAW_PRUNE_KEY}"
    return ratio, (f"the {settings.profile.name} profile's git: memory_md_prune_ratio; no "
                   f"openclaw.json sets OpenClaw's maxPriorEntryLossFraction")


def quoted_lines(lines: list[str], limit: int = 3, width: int = 60) -> str:
    """The first ``limit`` of ``lines``, quoted and shortened, credentials masked, for a
    one-line finding: ``"- Alice owns billing", "- …" and 4 more``."""
    from vaultkit.vault.outbound import clean_line, mask_credentials

    shown = []
    for line in lines[:limit]:
        text = clean_line(mask_credentials(line.strip()))
        shown.append('"' + (text if len(text) <= width else text[:width - 1] + "…") + '"')
    more = len(lines) - limit
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")
