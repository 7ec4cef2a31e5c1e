"""Resolve links the way Obsidian does. One resolver serves ``check``, ``index`` and ``graph``.

``vault.resolver`` (built once per vault, cached) answers ``resolve(note, link)`` with a
:class:`Resolution`. The lookup tables are built once: a dict from every lower-cased
vault key to its path, and a dict from every lower-cased file name to the paths that
carry it, so each link costs a few dict lookups.

Keys: a note's key is its vault path without ``.md``, an attachment's key is its full
path with the extension (``memory/img/chart.png``). All matching ignores case, and names
are compared in Unicode NFC, so ``[[Résumé]]`` finds a file macOS stored decomposed (the
lenient reading: Obsidian's own handling of normalisation is not documented).

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
from functools import cached_property

from vaultkit.core.lazyre import lazy_re
from vaultkit.core.plain import Plain
from vaultkit.vault.model import MARKDOWN, Link, Note

TYPE_CHECKING = False  # (typing's own flag costs importing typing)
if TYPE_CHECKING:
    from vaultkit.vault.loader import Vault

# Why a link resolved (Resolution.reason)
EXACT, SAME_FOLDER, SHORTEST, RELATIVE, ROOT, SELF, EXTERNAL, MISSING = (
    "exact", "same-folder", "shortest", "relative", "root", "self", "external", "missing")

# What is missing (Resolution.missing)
M_NOTE, M_ATTACHMENT, M_HEADING, M_BLOCK = "note", "attachment", "heading", "block"

_FINAL, _CHECK_FOLDER, _RELATIVE = 0, 1, 2
_EXTENSION = lazy_re(r"\.[A-Za-z0-9]*[A-Za-z][A-Za-z0-9]*$")
_NOT_WORD = lazy_re(r"[^\w\s]|_")


class Resolution(Plain):
    """What one link points at."""

    __slots__ = _fields = ("path", "reason", "missing", "detail", "candidates", "subpath_ok")
    path: str | None  # the target file (note or attachment), None when unresolved/external
    reason: str  # EXACT, SAME_FOLDER, SHORTEST, RELATIVE, ROOT, SELF, EXTERNAL or MISSING
    missing: str | None  # M_NOTE, M_ATTACHMENT, M_HEADING or M_BLOCK when broken
    detail: str  # the missing heading part or block id
    candidates: tuple[str, ...]  # every match of a name lookup (ambiguous when > 1)
    subpath_ok: bool | None  # None: no subpath to check

    def __init__(self, path, reason, missing=None, detail="", candidates=(), subpath_ok=None):
        self.path = path
        self.reason = reason
        self.missing = missing
        self.detail = detail
        self.candidates = candidates
        self.subpath_ok = subpath_ok

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


_ASCII_PUNCT = str.maketrans({chr(i): " " for i in range(128)
                              if not chr(i).isalnum() and not chr(i).isspace()})


def normalize_heading(text: str) -> str:
    """The lenient form headings and heading links are compared in (see the module doc)."""
    if text.isascii():  # the common case, same result as below without the regex
        return " ".join(text.translate(_ASCII_PUNCT).lower().split())
    text = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(_NOT_WORD.sub(" ", text).split())


def github_slug(text: str) -> str:
    """GitHub's heading anchor: lower case, punctuation dropped, spaces to dashes."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _is_attachment_name(name: str) -> bool:
    return "." in name and bool(_EXTENSION.search(name)) and not name.lower().endswith(".md")


class Resolver:
    """Lookup tables for one vault; ``resolve(note, link)`` is a few dict lookups.

    Results without a subpath are shared between links (treat them as read-only).
    """

    def __init__(self, vault: "Vault", tables: tuple | None = None):
        from vaultkit.core.gcpause import gc_paused

        with gc_paused():
            self._build(vault, tables)

    def _build(self, vault: "Vault", tables: tuple | None = None) -> None:
        self.vault = vault
        if tables is None:  # (given: another resolver's, of a vault with the same names)
            cached = getattr(vault, "caching", False)  # (never with --no-cache)
            key = _Tables.names_key(vault) if cached else None
            tables = _Tables.load(vault, key) if cached else None
            if tables is None:
                tables = _Tables.build(vault, key)
        self.tables = tables  # the name tables: they depend on the file names alone
        self._exact, self._by_name = tables
        self._notes = vault.notes
        self._headings: dict[str, list[tuple[int, str]]] = {}  # as written, lower case
        self._lenient: dict[str, list[tuple[int, str]]] = {}  # normalize_heading()
        self._slugs: dict[str, list[tuple[int, str]]] = {}  # github_slug()
        self._heading_sets: dict[tuple[str, int], frozenset[str]] = {}
        self._texts: dict[str, str] = {}  # a heading's text in a set, kept once
        self._by_note: dict[str, list[Resolution]] = {}
        # wiki target as written -> (result, mode, lookup key, same-folder bases); a bare
        # name's entry is made on its first lookup (_glob_miss)
        self._global: dict[str, tuple[Resolution, int, str, frozenset]] = {}
        self._md: dict[tuple[str, str], Resolution] = {}
        self._parts: dict[str, list[str]] = {}
        self._subcache: dict[tuple[str, str], Resolution] = {}
        self._wanted: dict[str, tuple[list[str], list[str]]] = {}
        self._oks: dict[tuple, Resolution] = {}
        self._external = Resolution(None, EXTERNAL)
        self._graph = None  # vaultkit.links.graph.link_graph() keeps the vault's LinkGraph here

    # -- public API ------------------------------------------------------------

    def resolve(self, note: Note, link: Link) -> Resolution:
        """Resolve one link of ``note``."""
        folder = _fold(note.folder)
        return self._resolve(note, folder, link)

    def resolve_all(self, note: Note) -> list[Resolution]:
        """Resolutions of every link of ``note``, in order; computed once per note."""
        cached = self._by_note.get(note.path)
        if cached is not None:
            return cached
        folder = _fold(note.folder)
        prefix = folder + "/" if folder else ""
        resolve = self._resolve
        glob = self._global
        exact = self._exact
        external = self._external
        subcache = self._subcache
        out = []
        append = out.append
        for link in note.links:
            if link.external:
                append(external)
                continue
            target = link.target
            if target and link.kind != MARKDOWN:
                hit = glob.get(target)
                if hit is None:
                    hit = self._glob_miss(target)
                    if hit is None:
                        hit = self._glob_miss(target.lower())  # (bare names: folded)
                        if hit is None:
                            hit = glob[target] = self._wiki_global(target)
                mode = hit[1]
                res = hit[0]
                if mode == _CHECK_FOLDER:
                    if folder in hit[3]:
                        path = exact.get(prefix + hit[2])
                        if path is not None:
                            res = Resolution(path, SAME_FOLDER)
                elif mode == _RELATIVE:
                    res = self._resolve_wiki(folder, target)
                sub = link.subpath
                if sub and res.path is not None:
                    if res is hit[0]:  # shared: so is its subpath result
                        ck = (hit[2], sub)
                        r = subcache.get(ck)
                        if r is None:
                            r = subcache[ck] = self._with_subpath(res, sub, False)
                        res = r
                    else:
                        res = self._with_subpath(res, sub, False)
                append(res)
                continue
            append(resolve(note, folder, link))
        self._by_note[note.path] = out
        return out

    def resolve_target(self, target: str, source: str = "") -> str | None:
        """The file a wikilink target written in the note at ``source`` opens, or None."""
        folder = _fold(source.rsplit("/", 1)[0]) if "/" in source else ""
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
        if len(self._by_name.get(_fold(name), ())) == 1 and \
                self.resolve_target(name, source) == path:
            return name
        return shown

    def candidates(self, name: str) -> tuple[str, ...]:
        """Every file whose name (note: without .md) is ``name``, shortest path first."""
        return self._by_name.get(_fold(name), ())

    # -- internals -------------------------------------------------------------

    def _resolve(self, note: Note, folder: str, link: Link) -> Resolution:
        if link.external:
            return self._external
        target = link.target
        if not target:
            res = Resolution(note.path, SELF)
        elif link.kind == MARKDOWN:
            res = self._md.get((folder, target))
            if res is None:
                res = self._md[(folder, target)] = self._resolve_markdown(folder, target)
        else:
            res = self._resolve_wiki(folder, target)
        if link.subpath and res.path is not None:
            return self._with_subpath(res, link.subpath, link.kind == MARKDOWN)
        return res

    def _resolve_wiki(self, folder: str, target: str) -> Resolution:
        hit = self._global.get(target)
        if hit is None:
            hit = self._glob_miss(target)
            if hit is None:
                hit = self._global[target] = self._wiki_global(target)
        res, mode, key, bases = hit
        if mode == _FINAL:
            return res
        if mode == _RELATIVE:
            full = _join(folder, key)
            path = self._exact.get(full) if full is not None else None
            return Resolution(path, RELATIVE) if path else res
        if folder in bases:
            path = self._exact.get(folder + "/" + key)
            if path is not None:
                return Resolution(path, SAME_FOLDER)
        return res

    def _glob_miss(self, name: str) -> tuple[Resolution, int, str, frozenset] | None:
        """The entry of ``name`` when it is a bare file name of the vault (folded, no
        extension for notes), made on first use: the exact file, else every file of that
        name with the folders where one of them is a same-folder match."""
        hit = self._global.get(name)
        if hit is not None:
            return hit
        cands = self._by_name.get(name)
        if cands is None:
            return None
        path = self._exact.get(name)
        if path is not None:
            hit = (Resolution(path, EXACT), _FINAL, name, _NO_BASES)
        else:
            bases = frozenset(_key(p).rpartition("/")[0] for p in cands)
            hit = (Resolution(cands[0], SHORTEST, candidates=cands), _CHECK_FOLDER, name, bases)
        self._global[name] = hit
        return hit

    def _wiki_global(self, target: str) -> tuple[Resolution, int, str, frozenset]:
        """The folder-independent part: (exact-or-fallback result, mode, lookup key, the
        folders from which ``key`` would be a same-folder match)."""
        key = _fold(target)
        if key.endswith(".md"):
            key = key[:-3]
        exact = self._exact
        if key.startswith(("./", "../")):
            return self._missing(target), _RELATIVE, key, _NO_BASES
        if key.startswith("/"):
            path = exact.get(key.lstrip("/"))
            res = Resolution(path, EXACT) if path else self._missing(target)
            return res, _FINAL, key, _NO_BASES
        path = exact.get(key)
        if path is not None:
            return Resolution(path, EXACT), _FINAL, key, _NO_BASES
        res = self._by_suffix(key, target)
        return res, _CHECK_FOLDER, key, _bases(res.candidates, key)

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
        key = _fold(target)
        if key.endswith(".md"):
            key = key[:-3]
        exact = self._exact
        if key.endswith("/") or key in (".", "..") or key.endswith("/.."):
            # a link to a folder (a static site's "[← back](../)"): fine when it exists
            if key.startswith("/"):
                full = key.strip("/")
            else:
                full = _join(folder, key.rstrip("/") or ".")
            if full is not None and (full == "" or full in self._folders):
                return self._external
            return self._missing(target)
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

    @cached_property
    def _folders(self) -> frozenset[str]:
        """Every folder holding a note or attachment, folded like the keys."""
        out = set()
        vault = self.vault
        for key in map(_key, [*vault.note_paths(), *vault.attachments]):
            while "/" in key:
                key = key.rpartition("/")[0]
                if key in out:
                    break
                out.add(key)
        return frozenset(out)

    def _missing(self, target: str) -> Resolution:
        name = target.rstrip("/").rsplit("/", 1)[-1]
        kind = M_ATTACHMENT if _is_attachment_name(name) else M_NOTE
        return Resolution(None, MISSING, missing=kind)

    def _with_subpath(self, res: Resolution, subpath: str, markdown: bool) -> Resolution:
        target = self._notes.get(res.path)
        if target is None:  # attachments: page numbers etc. are not checked
            return res
        parts = self._parts.get(subpath)
        if parts is None:
            parts = [p.strip() for p in subpath.split("#")]
            parts = self._parts[subpath] = [p for p in parts if p]
            self._wanted[subpath] = ([p.lower() for p in parts],
                                     [normalize_heading(p) for p in parts])
        if not parts:
            return res
        last = parts[-1]
        if last.startswith("^"):
            if last[1:].lower() in target.block_ids:
                return self._ok_variant(res)
            return Resolution(res.path, res.reason, M_BLOCK, last, res.candidates, False)
        missing = self._heading_chain(target, parts, self._wanted[subpath], markdown)
        if missing is None:
            return self._ok_variant(res)
        return Resolution(res.path, res.reason, M_HEADING, missing, res.candidates, False)

    def _ok_variant(self, res: Resolution) -> Resolution:
        """``res`` with ``subpath_ok=True``, shared per base result."""
        key = (res.path, res.reason, res.candidates)
        ok = self._oks.get(key)
        if ok is None:
            ok = self._oks[key] = Resolution(res.path, res.reason, None, "", res.candidates, True)
        return ok

    def _heading_table(self, note: Note, lenient: bool) -> list[tuple[int, str]]:
        tables = self._lenient if lenient else self._headings
        table = tables.get(note.path)
        if table is None:
            if lenient:
                table = [(h.level, normalize_heading(h.text)) for h in note.headings]
            else:
                table = [(h.level, h.text.lower()) for h in note.headings]
            tables[note.path] = table
        return table

    def _heading_chain(self, note: Note, parts: list[str], wanted: tuple[list, list],
                       markdown: bool) -> str | None:
        """None when the chain exists; else the first part that cannot be found.

        Compared as written (ignoring case) first, which is cheap and what Obsidian's
        autocomplete writes, then leniently, then (Markdown links) as GitHub slugs.
        """
        if len(parts) == 1:  # by set lookup: a note of 100,000 headings, each linked, is linear
            if (wanted[0][0] in self._heading_set(note, 0)
                    or wanted[1][0] in self._heading_set(note, 1)
                    or markdown and wanted[0][0] in self._heading_set(note, 2)):
                return None
            return parts[0]
        if _chain(self._heading_table(note, False), wanted[0]) is None:
            return None
        found = _chain(self._heading_table(note, True), wanted[1])
        if found is None:
            return None
        if markdown and _chain(self._slug_table(note), wanted[0]) is None:
            return None
        return parts[found] if found < len(parts) else parts[-1]

    def _slug_table(self, note: Note) -> list[tuple[int, str]]:
        table = self._slugs.get(note.path)
        if table is None:
            table = self._slugs[note.path] = [(h.level, github_slug(h.text))
                                              for h in note.headings]
        return table

    def _heading_set(self, note: Note, kind: int) -> frozenset[str]:
        """The texts of the note's headings: as written (0), lenient (1), slugs (2)."""
        key = (note.path, kind)
        found = self._heading_sets.get(key)
        if found is None:
            # (from the headings, not a table kept beside the set: a one-part subpath, the
            # usual kind, needs no table; at 100,000 notes the tables were 24 MB)
            form = github_slug if kind == 2 else normalize_heading if kind else str.lower
            shared = self._texts.setdefault
            texts = []
            for h in note.headings:
                text = form(h.text)
                texts.append(shared(text, text))  # ("Context" is one string, not 10,000)
            found = self._heading_sets[key] = frozenset(texts)
        return found


def _chain(table: list[tuple[int, str]], wanted: list[str]) -> int | None:
    """None when headings ``wanted[0] > wanted[1] > ...`` exist nested in order; else how
    many leading parts some path matched."""
    if len(wanted) == 1:
        want = wanted[0]
        for _, text in table:
            if text == want:
                return None
        return 0
    best = 0
    n = len(table)

    def search(k: int, lo: int, hi: int, parent_level: int) -> bool:
        nonlocal best
        if k == len(wanted):
            return True
        want = wanted[k]
        for idx in range(lo, hi):
            level, text = table[idx]
            if level <= parent_level or text != want:
                continue
            best = max(best, k + 1)
            end = idx + 1
            while end < n and table[end][0] > level:
                end += 1
            if search(k + 1, idx + 1, end, level):
                return True
        return False

    return None if search(0, 0, n, 0) else best


class _Tables:
    """The resolver's name tables (exact key -> path, file name -> paths), which depend on
    the set of file names alone: kept in the vault's store and built again only when a
    name is added, removed or renamed (never read or written with ``--no-cache``). A path's
    own key is computed when asked for (:func:`_key`), not kept."""

    NAME = "resolver"  # its entry in the vault's store (vaultkit.vault.store)
    VERSION = 2

    @staticmethod
    def names_key(vault: "Vault") -> str:
        """The vault's names (:attr:`~vaultkit.vault.loader.Vault.names_digest`) under
        this release of the tables."""
        from vaultkit import __version__
        from vaultkit.vault.model import PARSER_VERSION

        return f"{_Tables.VERSION}:{__version__}:{PARSER_VERSION}:{vault.names_digest}"

    @classmethod
    def load(cls, vault: "Vault", key: str):
        """The stored tables when they were built from these very names, else None."""
        try:
            stored, count, exact, by_name = vault.store.get(cls.NAME)
        except (EOFError, ValueError, TypeError):
            return None  # none yet, or damaged: built and written again
        # (the key counts the notes and the attachments: ``count`` is not asked again)
        if stored != key or not (isinstance(exact, dict) and isinstance(by_name, dict)):
            return None
        return exact, by_name

    @classmethod
    def build(cls, vault: "Vault", names_key: str | None):
        """The tables from every path; stored under ``names_key`` (None: not stored)."""
        exact: dict[str, str] = {}
        by_name: dict[str, list[str]] = {}
        # notes first, so a note wins a (rare) key clash with an extensionless attachment;
        # vault.notes is sorted by path, so of two paths differing only in case the first wins
        for path in [*vault.notes, *sorted(vault.attachments)]:
            key = _key(path)
            exact.setdefault(key, path)
            slash = key.rfind("/")
            by_name.setdefault(key[slash + 1:], []).append(path)
        names = {k: tuple(v) if len(v) == 1 else tuple(sorted(v, key=_path_order))
                 for k, v in by_name.items()}
        if names_key is not None:
            import marshal

            from vaultkit.vault.cachefile import packed

            count = len(vault.notes) + len(vault.attachments)
            # (packed: every path twice, a fifth of the size; inflating costs a few ms)
            vault.store.put(cls.NAME, packed(marshal.dumps((names_key, count, exact, names))))
        return exact, names


def _path_order(path: str) -> tuple:
    return (len(path), _fold(path), path)


_NO_BASES: frozenset = frozenset()


def _bases(cands: tuple[str, ...], key: str) -> frozenset:
    """The folders F for which ``F/key`` is one of ``cands`` (a same-folder match)."""
    cut = len(key) + 1
    return frozenset(k[:-cut] for k in map(_key, cands) if len(k) > cut and k.endswith("/" + key))


def _fold(text: str) -> str:
    """The form file names and paths are compared in: lower case, Unicode NFC (so a name
    typed precomposed finds a file stored decomposed, as macOS may write it)."""
    if text.isascii():
        return text.lower()
    return unicodedata.normalize("NFC", text).lower()


def _key(path: str) -> str:
    low = _fold(path)
    return low[:-3] if low.endswith(".md") else low


def _join(folder: str, key: str) -> str | None:
    """``folder/key`` with ``.`` and ``..`` segments applied; None when it leaves the vault."""
    if "./" not in key and not key.startswith(".") and not key.endswith("/.."):
        return folder + "/" + key if folder else key
    parts = folder.split("/") if folder else []
    for seg in key.split("/"):
        if seg in ("", "."):
            continue
        if seg == "..":
            if not parts:
                return None
            parts.pop()
        else:
            parts.append(seg)
    return "/".join(parts)
