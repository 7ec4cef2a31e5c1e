"""Resolve links the way Obsidian does. One resolver serves ``check``, ``index`` and ``graph``.

``vault.resolver`` (built once per vault, cached) answers ``resolve(note, link)`` with a
:class:`Resolution`. The lookup tables are built once: a dict from every lower-cased
vault key to its path, and a dict from every lower-cased file name to the paths that
carry it, so each link costs a few dict lookups.

Keys: a note's key is its vault path without ``.md``, an attachment's key is its full
path with the extension (``memory/img/chart.png``). All matching ignores case.

**Wikilinks** (``[[Target#sub|alias]]``, embeds ``![[...]]``, quoted links in properties):

1. ``Target`` (``.md`` optional) names an exact vault path: that file.
2. ``Target`` is a path relative to the linking note's own folder: that file.
3. Otherwise every file whose key is ``Target`` or ends with ``/Target`` is a candidate;
   the **shortest path** wins, ties broken alphabetically (case-insensitive, then as
   written). More than one candidate makes the link *ambiguous* (``ambiguous-link``).

``[[/path]]`` is vault-absolute (step 1 only); ``[[./x]]`` and ``[[../x]]`` are relative
to the linking note's folder (exact only). ``[[#Heading]]`` and ``[[#^block]]`` point
into the linking note itself. Attachments need their extension: ``[[chart]]`` does not
find ``chart.png``. Aliases (``aliases:`` in frontmatter) never resolve a link, exactly
as in Obsidian.

**Markdown links** (``[text](target)``, URL-decoded by the parser, ``<...>`` allowed):
first relative to the linking note's folder, then relative to the vault root; a target
without ``./``, ``../`` or a leading ``/`` then falls back to the wikilink name lookup
(step 3), because that is what Obsidian's default "shortest path when possible" link
format writes (``[x](Note.md)`` from any folder). External URLs (``https:``, ``mailto:``,
``obsidian:``, ``//host``) are never resolved and never reported.

**Subpaths** are checked against the target's parsed headings and block ids:

- ``#^id``: a block id (letters, digits, dashes; case-insensitive).
- ``#H1#H2...``: a heading chain. ``H1`` may be any heading; each next part must be a
  heading *nested under the previous one* (deeper level, inside its section), in order.
- Heading text is compared leniently (Obsidian's own rules for punctuation in heading
  links are not documented, and Obsidian itself rewrites ``[[Note#A: B]]`` to
  ``[[Note#A B]]``): both sides are Unicode-normalised (NFKC), case-folded, every
  character that is neither a letter, a digit nor whitespace (``: # | ^ [ ] * _ ` ~``,
  emoji, CJK punctuation ...) becomes a space, and runs of whitespace collapse. So
  ``[[Note#Heading: with punctuation]]``, ``[[Note#heading with punctuation]]`` and
  ``[[Note#Heading **with** punctuation!]]`` all find ``## Heading: with *punctuation*``.
  Markdown links may also use GitHub-style slugs (``#heading-with-punctuation``).
- Subpaths on attachments (``doc.pdf#page=3``) are not checked.
"""

from __future__ import annotations

import posixpath
import re
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING

from vaultkit.model import MARKDOWN, Link, Note

if TYPE_CHECKING:
    from vaultkit.vault import Vault

# Why a link resolved (Resolution.reason)
EXACT, SAME_FOLDER, SHORTEST, RELATIVE, ROOT, SELF, EXTERNAL, MISSING = (
    "exact", "same-folder", "shortest", "relative", "root", "self", "external", "missing")

# What is missing (Resolution.missing)
M_NOTE, M_ATTACHMENT, M_HEADING, M_BLOCK = "note", "attachment", "heading", "block"

_EXTENSION = re.compile(r"\.[A-Za-z0-9]*[A-Za-z][A-Za-z0-9]*$")
_NOT_WORD = re.compile(r"[^\w\s]|_")


@dataclass(slots=True)
class Resolution:
    """What one link points at."""

    path: str | None  # the target file (note or attachment), None when unresolved/external
    reason: str  # EXACT, SAME_FOLDER, SHORTEST, RELATIVE, ROOT, SELF, EXTERNAL or MISSING
    missing: str | None = None  # M_NOTE, M_ATTACHMENT, M_HEADING or M_BLOCK when broken
    detail: str = ""  # the missing heading part or block id
    candidates: tuple[str, ...] = ()  # every match of a name lookup (ambiguous when > 1)
    subpath_ok: bool | None = None  # None: no subpath to check

    @property
    def ok(self) -> bool:
        """The file exists and so does the heading or block (external links count as ok)."""
        return self.missing is None

    @property
    def external(self) -> bool:
        return self.reason == EXTERNAL

    @property
    def ambiguous(self) -> bool:
        return len(self.candidates) > 1


def normalize_heading(text: str) -> str:
    """The lenient form headings and heading links are compared in (see the module doc)."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(_NOT_WORD.sub(" ", text).split())


def github_slug(text: str) -> str:
    """GitHub's heading anchor: lower case, punctuation dropped, spaces to dashes."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _is_attachment_name(name: str) -> bool:
    return bool(_EXTENSION.search(name)) and not name.lower().endswith(".md")


class Resolver:
    """Lookup tables for one vault; ``resolve(note, link)`` is a few dict lookups."""

    def __init__(self, vault: "Vault"):
        self.vault = vault
        exact: dict[str, str] = {}
        by_name: dict[str, list[str]] = {}
        # notes first, so a note wins a (rare) key clash with an extensionless attachment
        for path in sorted(vault.notes, key=_path_order):
            key = path[:-3].lower() if path.lower().endswith(".md") else path.lower()
            exact.setdefault(key, path)
            by_name.setdefault(key.rsplit("/", 1)[-1], []).append(path)
        for path in sorted(vault.attachments, key=_path_order):
            key = path.lower()
            exact.setdefault(key, path)
            by_name.setdefault(key.rsplit("/", 1)[-1], []).append(path)
        self._exact = exact
        self._by_name = {k: tuple(sorted(v, key=_path_order)) for k, v in by_name.items()}
        self._notes = vault.notes
        self._headings: dict[str, list[tuple[int, str, int]]] = {}
        self._by_note: dict[str, list[Resolution]] = {}

    # -- public API ------------------------------------------------------------

    def resolve(self, note: Note, link: Link) -> Resolution:
        """Resolve one link of ``note``."""
        if link.external:
            return Resolution(None, EXTERNAL)
        if not link.target:
            res = Resolution(note.path, SELF)
        elif link.kind == MARKDOWN:
            res = self._resolve_markdown(note.folder, link.target)
        else:
            res = self._resolve_wiki(note.folder, link.target)
        if link.subpath and res.path is not None:
            self._check_subpath(res, link.subpath, link.kind == MARKDOWN)
        return res

    def resolve_all(self, note: Note) -> list[Resolution]:
        """Resolutions of every link of ``note``, in order; computed once per note."""
        cached = self._by_note.get(note.path)
        if cached is None:
            resolve = self.resolve
            cached = [resolve(note, link) for link in note.links]
            self._by_note[note.path] = cached
        return cached

    def resolve_target(self, target: str, source: str = "") -> str | None:
        """The file a wikilink target written in the note at ``source`` opens, or None."""
        folder = source.rsplit("/", 1)[0] if "/" in source else ""
        return self._resolve_wiki(folder, target).path

    def link_text(self, path: str, source: str = "") -> str:
        """The shortest wikilink target that opens ``path`` from ``source`` unambiguously.

        The file name when it is unique in the vault (Obsidian's "shortest path when
        possible"), else the full vault path; ``.md`` is dropped for notes.
        """
        name = path.rsplit("/", 1)[-1]
        if name.lower().endswith(".md"):
            name = name[:-3]
        shown = path[:-3] if path.lower().endswith(".md") else path
        if len(self._by_name.get(name.lower(), ())) == 1:
            res = self._resolve_wiki(source.rsplit("/", 1)[0] if "/" in source else "", name)
            if res.path == path:
                return name
        return shown

    def candidates(self, name: str) -> tuple[str, ...]:
        """Every file whose name (note: without .md) is ``name``, shortest path first."""
        return self._by_name.get(name.lower(), ())

    # -- internals -------------------------------------------------------------

    def _resolve_wiki(self, folder: str, target: str) -> Resolution:
        key = target.lower()
        if key.endswith(".md"):
            key = key[:-3]
        exact = self._exact
        if key.startswith(("./", "../")):
            full = _join(folder, key)
            path = exact.get(full) if full is not None else None
            return Resolution(path, RELATIVE) if path else self._missing(target)
        if key.startswith("/"):
            path = exact.get(key.lstrip("/"))
            return Resolution(path, EXACT) if path else self._missing(target)
        path = exact.get(key)
        if path is not None:
            return Resolution(path, EXACT)
        if folder:
            path = exact.get(folder.lower() + "/" + key)
            if path is not None:
                return Resolution(path, SAME_FOLDER)
        return self._by_suffix(key, target)

    def _by_suffix(self, key: str, target: str) -> Resolution:
        slash = key.rfind("/")
        cands = self._by_name.get(key[slash + 1:] if slash >= 0 else key)
        if cands and slash >= 0:
            tail = "/" + key
            cands = tuple(p for p in cands if _key(p).endswith(tail))
        if not cands:
            return self._missing(target)
        return Resolution(cands[0], SHORTEST, candidates=cands)

    def _resolve_markdown(self, folder: str, target: str) -> Resolution:
        key = target.lower()
        if key.endswith(".md"):
            key = key[:-3]
        exact = self._exact
        if key.startswith("/"):
            path = exact.get(key.lstrip("/"))
            return Resolution(path, ROOT) if path else self._missing(target)
        full = _join(folder, key)
        if full is not None:
            path = exact.get(full)
            if path is not None:
                return Resolution(path, RELATIVE)
        if key.startswith(("./", "../")):
            return self._missing(target)
        path = exact.get(posixpath.normpath(key)) if "/." in key else exact.get(key)
        if path is not None:
            return Resolution(path, ROOT)
        return self._by_suffix(key, target)

    def _missing(self, target: str) -> Resolution:
        name = target.rstrip("/").rsplit("/", 1)[-1]
        kind = M_ATTACHMENT if _is_attachment_name(name) else M_NOTE
        return Resolution(None, MISSING, missing=kind)

    def _check_subpath(self, res: Resolution, subpath: str, markdown: bool) -> None:
        target = self._notes.get(res.path)
        if target is None:  # attachments: page numbers etc. are not checked
            return
        parts = [p.strip() for p in subpath.split("#")]
        parts = [p for p in parts if p]
        if not parts:
            return
        last = parts[-1]
        if last.startswith("^"):
            block = last[1:].lower()
            if block in target.block_ids:
                res.subpath_ok = True
            else:
                res.subpath_ok = False
                res.missing, res.detail = M_BLOCK, last
            return
        missing = self._heading_chain(target, parts, markdown)
        if missing is None:
            res.subpath_ok = True
        else:
            res.subpath_ok = False
            res.missing, res.detail = M_HEADING, missing

    def _heading_table(self, note: Note) -> list[tuple[int, str, int]]:
        table = self._headings.get(note.path)
        if table is None:
            table = [(h.level, normalize_heading(h.text), i) for i, h in enumerate(note.headings)]
            self._headings[note.path] = table
        return table

    def _heading_chain(self, note: Note, parts: list[str], markdown: bool) -> str | None:
        """None when the chain exists; else the first part that cannot be found."""
        table = self._heading_table(note)
        wanted = [normalize_heading(p) for p in parts]
        slugs = None
        if markdown:
            slugs = [github_slug(h.text) for h in note.headings]
            wanted_slugs = [p.lower() for p in parts]

        def match(k: int, idx: int) -> bool:
            if table[idx][1] == wanted[k]:
                return True
            return slugs is not None and slugs[idx] == wanted_slugs[k]

        # depth-first over the matches of each part, each nested under the previous
        best = 0  # how many parts some path matched (for the message)

        def search(k: int, lo: int, hi: int, parent_level: int) -> bool:
            nonlocal best
            if k == len(parts):
                return True
            for idx in range(lo, hi):
                level = table[idx][0]
                if level <= parent_level:
                    continue
                if match(k, idx):
                    best = max(best, k + 1)
                    end = idx + 1
                    while end < len(table) and table[end][0] > level:
                        end += 1
                    if search(k + 1, idx + 1, end, level):
                        return True
            return False

        if search(0, 0, len(table), 0):
            return None
        return parts[best] if best < len(parts) else parts[-1]


def _path_order(path: str) -> tuple:
    return (len(path), path.lower(), path)


def _key(path: str) -> str:
    low = path.lower()
    return low[:-3] if low.endswith(".md") else low


def _join(folder: str, key: str) -> str | None:
    """``folder/key`` normalised; None when it climbs out of the vault."""
    joined = posixpath.normpath(posixpath.join(folder.lower(), key)) if folder else \
        posixpath.normpath(key)
    if joined == ".." or joined.startswith("../") or joined.startswith("/"):
        return None
    return joined
