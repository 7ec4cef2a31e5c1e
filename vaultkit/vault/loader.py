"""Load a vault: scan, parse each file once (cached, both cores when cold), classify.

The cache lives in the vault's store (``.vaultkit/cache/store-*.sqlite``, see
:mod:`vaultkit.vault.store`; its per-note records: :class:`_Cache`) and is keyed by
vaultkit's version, the parser version and the profile/config fingerprint; a record is
reused only when the file's size, mtime, ctime and inode are unchanged, and, when the
mtime or ctime is not older than the run that wrote the record by the racy margin, its
content's blob id is the one the record holds (so a file edited in the same clock tick as
that run is read again).
Records are :mod:`marshal` data, which cannot run code.
"""

from __future__ import annotations

import marshal
import os
import time
from collections.abc import Mapping
from functools import cached_property
from pathlib import Path

from vaultkit import __version__
from vaultkit.core.plain import FRESH, Frozen, replace
from vaultkit.vault.model import Attachment, Note, NoteSource
from vaultkit.vault.profile import Settings, load_settings
from vaultkit.vault.scan import FileEntry, ScanProblem, find_root, require_vault, walk
from vaultkit.vault.store import NULL, Store, busy, content_id, racy
from vaultkit.vault.store import RACY_NS as _RACY_NS

_PARALLEL_MIN = 400  # below this, a process pool costs more than it saves


class Vault:
    """Every note and attachment of one vault, parsed, with its settings."""

    def __init__(self, root: Path, settings: Settings, notes: dict[str, Note],
                 attachments: dict[str, Attachment], problems: list[ScanProblem],
                 external: dict[str, Note], *, scan: "Scan | None" = None,
                 facts: "dict[str, dict | bytes] | None" = None, cache: "_Cache | None" = None):
        """``scan``: the listing the notes came from (its digest and names serve the
        caches); ``facts`` and ``cache``: the per-note facts held and the parse cache."""
        self.root = root
        self.settings = settings
        self.profile = settings.profile
        # (a plain dict is taken as it is: its notes are made)
        self.notes = notes if isinstance(notes, Notes) else Notes(notes)
        self.attachments = attachments
        self.problems = problems
        self.external = external  # bootstrap files outside a memory-only vault: "../X.md"
        # every file's path, size and mtime; the newest mtime; when the files were listed
        # (before any was read)
        self.state_digest, self.newest_mtime_ns, self.started_ns = \
            (scan.digest, scan.newest_mtime_ns, scan.started_ns) if scan is not None \
            else ("", 0, 0)
        if scan is not None:
            self._scan = scan
        # bytes: as the cache stores them; absent: in the cache's store (or none yet)
        self._facts: dict[str, dict | bytes] = {} if facts is None else facts
        self._cache: _Cache | None = cache
        self._dirty = False
        self._fact_paths: set[str] = set()  # notes whose facts this run added to

    @property
    def workspace(self) -> Path:
        return self.root if self.profile.memory_prefix else self.root.parent

    @cached_property
    def layers(self) -> dict[str, str | None]:
        """Every note's layer (see :meth:`layer_of`)."""
        for path in self.notes:
            self._layer(path)
        out = dict(self._layer_memo)
        for path in self.external:
            out[path] = "bootstrap"
        return out

    @cached_property
    def _layer_memo(self) -> dict[str, str | None]:
        return {}

    def _layer(self, path: str) -> str | None:
        memo = self._layer_memo
        if path not in memo:
            entry = self.notes.entry(path)  # (its opening lines are a fact: no note decoded)
            opening = None
            if entry is not None and not entry.error and self.profile.header_lines:
                count = max(8, self.profile.header_lines)
                opening = lambda: self.fact(path, f"opening{count}",  # noqa: E731
                                            lambda: opening_lines(self.notes[path], count))
            memo[path] = self.profile.layer_of(path, opening)
        return memo[path]

    def claimed(self, note: Note) -> bool:
        """True when a named layer (not a fallback) claims ``note``."""
        return self.profile.claims(note.path, self.layer_of(note))

    @cached_property
    def types(self) -> dict[str, str | None]:
        type_of = self.profile.type_of
        return {path: type_of(path) for path in self.notes}

    @cached_property
    def mentioned(self) -> dict[str, set[str]]:
        """Every path some note writes out (:mod:`vaultkit.vault.mentions`) -> the notes
        writing it: worked out once per vault, whose notes never change (a per-note fact,
        so the parse cache's notes are decoded only when it is not kept)."""
        from vaultkit.vault.mentions import FACT, mentions

        out: dict[str, set[str]] = {}
        for path, note in self.notes.entries().items():  # (as held: decoded only to compute)
            if note.error:
                continue
            for found in self.fact(path, FACT, lambda n=note: mentions(decoded(n))):
                out.setdefault(found, set()).add(path)
        return out

    def layer_of(self, note: Note) -> str | None:
        """The layer a note is in: by path, and for header layers (session transcripts) by
        its opening lines. Computed per note, so a hook run looks only at what it reports on."""
        if note.path in self.external:
            return "bootstrap"
        return self._layer(note.path)

    def type_of(self, note: Note) -> str | None:
        """The note's type, by its folder: asked per note, so a hook run looks up the notes
        it reports on, not all 10,000 (:attr:`types` is every note's)."""
        types = self.__dict__.get("types")
        if types is not None:
            return types.get(note.path)
        return self.profile.type_of(note.path) if note.path in self.notes else None

    def notes_in(self, layer: str) -> list[Note]:
        layers = self.layers
        notes = [self.notes[p] for p in self.notes if layers.get(p) == layer]
        if layer == "bootstrap":
            notes += list(self.external.values())
        return notes

    def bootstrap(self) -> list[Note]:
        """Bootstrap files that exist, in the runtime's injection order."""
        # only files at the root (or beside a memory-only vault) count: the layer of those
        # few is looked up, not of every note
        found = {p: self.notes[p] for p in self.notes
                 if "/" not in p and self._layer(p) == "bootstrap"}
        found.update(self.external)
        found = {p.rsplit("/", 1)[-1]: n for p, n in found.items()}
        order = self.profile.bootstrap_files or sorted(found)
        return [found[name] for name in order if name in found]

    def note(self, path: str) -> Note | None:
        return self.notes.get(path) or self.external.get(path)

    def work_tree_note(self, path: str) -> Note | None:
        """The note as the work tree holds it: :meth:`note`, but where a commit hook
        checks the staged text in its place (vaultkit.session.staged.staged_view), the
        file's (the lines partial staging leaves in the work tree are not lost)."""
        held = self.__dict__.get("_work_tree")
        return held[path] if held is not None and path in held else self.note(path)

    def by_content(self, paths) -> None:
        """Take the notes at ``paths`` (a commit hook's staged files) from the parse cache
        only when the file holds the bytes the record was parsed from (its git blob id,
        which is the index's when the staged content is the file's), whatever its stat
        says; call it before the notes are made."""
        self.__dict__["_by_content"] = frozenset(paths)
        cache = self.__dict__.get("_cache")
        if cache is not None:
            cache.by_content = self.__dict__["_by_content"]

    def same_bytes(self, paths) -> bool:
        """Whether each readable note at ``paths`` holds the bytes it was parsed from (the
        blob id it carries: see :meth:`by_content`), read and hashed now (a hook's few)."""
        for path in paths:
            note = self.notes.entry(path) or self.external.get(path)  # (stat and blob id)
            if note is None or note.error:
                continue  # (gone, or never read: its finding is the listing's)
            if note.oid is None or content_id(str(self.root / path), note.size) != note.oid:
                return False
        return True

    def has_note(self, path: str) -> bool:
        """Whether ``path`` is a note of this vault (readable or not): ``note(path)`` is not None."""
        return path in self.notes or path in self.external

    @property
    def paths(self) -> list[str]:
        """Every file's vault path: the notes and the attachments."""
        return list(self.notes) + list(self.attachments)

    def set_aside(self) -> dict[str, Note]:
        """The Markdown files under the profile's ``secret_scan_folders`` (folders of
        ``skip_folders``: never notes of the vault), parsed, by vault path: what
        secret-in-memory reads besides the notes. Read once per loaded vault, when asked."""
        found = self.__dict__.get("_set_aside")
        if found is None:
            limit = self.profile.budgets.max_file_bytes
            found = self.__dict__["_set_aside"] = {
                f.rel: _read_one(f.abs, f.rel, limit) for f in set_aside_files(self.root,
                                                                              self.settings)}
        return found

    def note_paths(self) -> list[str]:
        """Every note's path, in order (``list(vault.notes)``)."""
        return list(self.notes)

    def note_states(self) -> list[tuple[str, int, int, int, int]]:
        """Every note's ``(path, size, mtime_ns, ctime_ns, ino)``, in order."""
        return [(p, n.size, n.mtime_ns, n.ctime_ns, n.ino)
                for p, n in self.notes.entries().items()]

    def listed_states(self) -> list[tuple[str, int, int, int, int]]:
        """:meth:`note_states` as far as the listing tells without reading a note (a
        deferred vault: vaultkit.vault.deferred); a loaded vault's are its notes'."""
        return self.note_states()

    @property
    def caching(self) -> bool:
        """Whether this vault has a parse cache (not with ``--no-cache``)."""
        return self._cache is not None

    @property
    def store(self) -> Store:
        """The vault's store of caches (:mod:`vaultkit.vault.store`); with ``--no-cache``
        one that holds nothing and writes nothing."""
        return self._cache.store if self._cache is not None else NULL

    @cached_property
    def resolver(self):
        from vaultkit.vault.resolve import Resolver

        return Resolver(self)

    # -- per-note facts, kept in the cache ------------------------------------------

    @cached_property
    def names_digest(self) -> str:
        """A digest of every file path (:func:`names_digest`): what link resolution
        depends on besides the note. A vault loaded from a listing asks the listing, which
        a long-running process keeps while no name changes."""
        scan = self.__dict__.get("_scan")
        if scan is not None:
            return scan.names_digest()
        return names_digest(self.note_paths(), sorted(self.attachments))

    @cached_property
    def names_epoch(self) -> str:
        """:attr:`names_digest`, short: what the per-note facts that resolve links keep."""
        return self.names_digest[:16]

    def fact(self, path: str, key: str, compute, *, epoch: str | None = None):
        """A value derived from one note alone (plus ``epoch``), computed once per content.

        Facts live in the cache beside the parsed note and are dropped when the note
        changes, so a hook run recomputes them only for the files that changed. Values
        must be plain data (marshal).
        """
        facts = self._facts.get(path)
        if not isinstance(facts, dict):  # None, or still marshalled as the cache keeps them
            if facts is None and self._cache is not None:
                facts = self._cache.facts_for(self.notes.entry(path))
            try:
                facts = marshal.loads(facts) if facts else {}
            except (EOFError, ValueError, TypeError):
                facts = {}
            if not isinstance(facts, dict):
                facts = {}
            self._facts[path] = facts
        hit = facts.get(key)
        if isinstance(hit, tuple) and len(hit) == 2 and hit[0] == epoch:
            return hit[1]
        value = compute()
        facts[key] = (epoch, value)
        self._dirty = True
        self._fact_paths.add(path)
        return value

    def facts_of(self, path: str) -> "dict | bytes | None":
        """The facts of the note at ``path`` as held (a dict, or the bytes the cache stores
        them as), else as its cache record holds them; None when there are none."""
        facts = self._facts.get(path)
        if facts is None and self._cache is not None:
            facts = self._cache.facts_for(self.notes.entry(path)) or None
        return facts

    def held_facts(self) -> "dict[str, dict | bytes]":
        """The per-note facts this vault holds, by path (not those only in its cache)."""
        return self._facts

    def keep_facts(self, path: str, facts: dict) -> None:
        """Hold ``facts`` as the note's at ``path`` (a copy of this vault computed them for
        a note both share: see vaultkit.session.workspace)."""
        self._facts[path] = facts

    def save_cache(self) -> None:
        """Write the records of what is new (notes parsed, facts computed) to ``.vaultkit/``."""
        if self._cache is not None and (self._dirty or self._cache.mend
                                        or self._cache.settled):
            self._cache.save(self.notes, self._facts, self._fact_paths)
            self._dirty = False
            self._fact_paths = set()


def opening_lines(note: Note, count: int) -> list[str]:
    """The note's first ``count`` content lines: blank lines and HTML-comment-only lines
    (``<!-- consolidated -->`` markers) skipped, each cut to 200 characters."""
    import re

    comment = re.compile(r"^\s*<!--.*-->\s*$")
    out = []
    for line in note.lines[:200]:
        if not line.strip() or comment.match(line):
            continue
        out.append(line[:200])
        if len(out) == count:
            break
    return out


def names_digest(notes: list[str], attachments: list[str]) -> str:
    """A digest of the notes' and the attachments' paths, all in path order: the part of a
    listing's key that its names make (:func:`_state`), which a listing gives without
    going through its files again (:meth:`Scan.names_digest`). A note is a file whose
    name ends in ``.md`` in any case, so the paths alone tell the two groups apart."""
    return _names_hash(sorted([*notes, *attachments])).hexdigest()


def _names_hash(paths: list[str]):
    """BLAKE2b of ``paths`` (sorted), counted and NUL-separated: no path holds a NUL, so no
    two listings share one."""
    from vaultkit.core.digests import blake2b

    named = blake2b(len(paths).to_bytes(8, "little"), digest_size=20)
    named.update("\0".join(paths).encode("utf-8", "surrogatepass") + b"\0")
    return named


# ``path.lower().endswith(".md")`` in one call: no character but M, m, D, d and "." has a
# lower case that ends in "m", "d" or "." (tests/test_listing_passes.py checks every code
# point), so a path is a note's exactly when it ends in one of these
MD_ENDINGS = (".md", ".mD", ".Md", ".MD")


class Scan:
    """A vault's files listed and stat'ed, not read: enough to tell whether anything changed."""

    _fields = ("root", "settings", "files", "problems", "digest", "newest_mtime_ns",
               "started_ns", "folders", "places", "external", "links", "memo", "folder_stats",
               "store")
    root: Path
    settings: Settings
    files: list[FileEntry]  # sorted by path (a deferred vault looks notes up by bisection)
    problems: list[ScanProblem]
    digest: str  # every file's path, size and mtime (and the external bootstrap files')
    newest_mtime_ns: int
    # when the listing began: anything derived from these files is only as new as this,
    # so caches record it (not the time they were written) for their same-tick checks
    started_ns: int
    # the real path of every folder listed (and of the workspace, for bootstrap files
    # outside a memory-only vault): where a change would change this listing
    folders: list[str]
    # what rescan() needs: each listed folder's path and vault prefix (vaultkit.vault.scan
    # walk's ``places``), the bootstrap files outside, whether a symlink was followed
    places: dict
    external: list
    links: bool
    # what is derived from the listing (its names' digest and paths, its numbers as
    # arrays): a listing brought up to date without a name added, removed or renamed
    # keeps it, taking again the numbers of the entries written (see _state)
    memo: dict
    # each listed folder's real path -> vaultkit.vault.scan.folder_stat, taken before its
    # names were read (what a long-running reader compares: see WarmListing)
    folder_stats: dict
    # the vault's store (vaultkit.vault.store) a long-running process keeps and hands with
    # the listing it gives a command (Workspace.listing_of); None: the load opens its own
    store: "Store | None"

    def __init__(self, root, settings, files, problems, digest, newest_mtime_ns, started_ns=0,
                 folders=FRESH, places=FRESH, external=FRESH, links=False, memo=FRESH,
                 folder_stats=FRESH, store=None):
        self.root = root
        self.settings = settings
        self.files = files
        self.problems = problems
        self.digest = digest
        self.newest_mtime_ns = newest_mtime_ns
        self.started_ns = started_ns
        self.folders = [] if folders is FRESH else folders
        self.places = {} if places is FRESH else places
        self.external = [] if external is FRESH else external
        self.links = links
        self.memo = {} if memo is FRESH else memo
        self.folder_stats = {} if folder_stats is FRESH else folder_stats
        self.store = store

    def names_digest(self) -> str:
        """:func:`names_digest` of the listed notes and attachments (by path, as the vault
        made from this listing has them)."""
        found = self.memo.get("names")
        if found is None:  # (the names' part of the listing's key, made by _state)
            named = self.memo.get("state_names")
            if named is None:
                named = _names_hash(self.paths())
            found = self.memo["names"] = named.hexdigest()
        return found

    def paths(self) -> list[str]:
        """Every listed file's path, in order (kept while no name changes; do not change)."""
        found = self.memo.get("paths")
        if found is None:
            found = self.memo["paths"] = [f.rel for f in self.files]
        return found

    def note_paths(self) -> list[str]:
        """The listed notes' paths, in order (kept while no name changes; do not change)."""
        found = self.memo.get("notes")
        if found is None:  # (the listing is sorted by path: so are its notes)
            paths = self.paths()
            found = self.memo["notes"] = []
            for start, end in self.note_spans():
                found += paths[start:end]  # (a run at a time, in C)
        return found

    def note_spans(self) -> list[tuple[int, int]]:
        """The runs of listed notes, ``(start, end)`` positions in :attr:`files`, in order:
        the notes are the listing less its few attachments, so their numbers are taken
        from the listing's arrays as a few slices, not a test per file for each array
        (kept while no name changes; do not change)."""
        found = self.memo.get("note_spans")
        if found is None:
            found = self.memo["note_spans"] = _runs([p.endswith(MD_ENDINGS)
                                                     for p in self.paths()])
        return found

    def file_maxima(self) -> tuple[int, int]:
        """The largest size and the newest ctime of every listed file, notes and
        attachments alike, from the arrays the listing's digest was made of: what says at
        once that no note is over a size limit, or changed in a racy margin, without the
        notes' own arrays (a commit hook's cost). Not memoised: a listing brought up to
        date copies the memo and takes again only the changed entries' numbers."""
        numbers = self.memo.get("state_numbers")
        if numbers is None or len(numbers[0]) != len(self.files):
            numbers = _numbers(self.files)
        return max(numbers[0], default=0), max(numbers[2], default=0)

    def note_numbers(self) -> tuple:
        """The listed notes' sizes, mtimes, ctimes and inodes, four ``array("q")`` in
        :meth:`note_paths`' order (do not change them): kept by a listing brought up to
        date, which takes again only the notes written since."""
        found = self.memo.get("note_numbers")
        if found is None:
            self.note_paths()  # (what a listing brought up to date finds them by)
            numbers = self.memo.get("state_numbers")
            if numbers is not None and len(numbers[0]) == len(self.files):
                # (the listing's own arrays, the notes' positions kept: no pass over files)
                from array import array

                spans = self.note_spans()
                found = tuple(array("q") for _ in numbers)
                for column, out in zip(numbers, found):
                    for start, end in spans:
                        out += column[start:end]  # (a copy of the run, in C)
            else:
                found = _numbers([f for f in self.files if f.rel.endswith(MD_ENDINGS)])
            self.memo["note_numbers"] = found
        return found


def scan_vault(path: Path | str = ".", *, root: Path | str | None = None,
               profile: str | None = None, use_cache: bool = True,
               settings: Settings | None = None, named: bool = False, warm=None) -> Scan:
    """``named``: ``path`` was named on the command line (a folder of notes is a vault).
    ``warm``: a long-running process's listing, handed down by its owner (anything with
    ``listing_of(root, settings)`` giving a :class:`Scan` or None, as
    :class:`vaultkit.session.workspace.Workspace` does): only what changed is listed again."""
    root_path = Path(root).resolve() if root is not None else find_root(Path(path), named)
    if not root_path.is_dir():
        raise FileNotFoundError(f"{root_path}: not a folder")
    require_vault(root_path)
    if settings is None:
        settings = load_settings(root_path, profile, use_cache=use_cache)
    if warm is not None:
        found = warm.listing_of(root_path, settings)
        if found is not None:
            return found
    return list_vault(root_path, settings)


class WarmListing:
    """The listing of one vault kept by a long-running process (``vaultkit mcp``, the
    resident check of ``vaultkit watch``): :meth:`scan` gives the last listing while
    nothing changed, that listing with the changed names listed again when the events
    name them, else a new one. Safe to share between threads.

    File events alone do not say "nothing changed": a write through a hard link made
    outside the vault raises none in the vault's folders, nor does a write from the other
    side of a network or VM share. So every listed file and folder is stat'ed, as a plain
    run's listing does (size, mtime, ctime and inode; a folder's mtime, ctime and inode
    move with any name created, removed or renamed in it), and what differs is listed
    again with what the events named: the answer is a plain run's, only the walk saved."""

    def __init__(self) -> None:
        import threading

        from vaultkit.vault.freshness import Freshness

        self._fresh = Freshness()
        self._last = None
        self._lock = threading.Lock()

    def scan(self, root, settings):
        """The listing of the vault at ``root`` (a resolved path) under ``settings``."""
        import time

        with self._lock:
            last = self._last
            if last is not None and last.root == root \
                    and last.settings.fingerprint == settings.fingerprint:
                started = time.time_ns()
                changed = self._fresh.changes()
                if changed is not None:
                    changed = _unevented(last, changed)
                if changed == {}:
                    # nothing changed up to ``started`` (a change before it is an event read
                    # after it): the listing is as new as that, not as old as the walk, so
                    # what is derived from it is not in a same-tick doubt for ever after
                    if last.settings is not settings or last.started_ns < started:
                        last = self._last = replace(
                            last, settings=settings, started_ns=started)
                    return last
                if changed is not None:
                    if last.settings is not settings:
                        last = replace(last, settings=settings)
                    stats = changed.pop(_FOLDER_STATS, {})
                    new = rescan(last, changed, started)
                    if new is not None:
                        if new.digest == last.digest and new.problems == last.problems:
                            # (listed again, found as they were: the same listing, as new
                            # as this; a folder changed in the racy margin is listed
                            # again for a while)
                            new = replace(last, settings=new.settings,
                                          started_ns=started)
                        if stats:  # (the folders listed again whole: their stats then)
                            new.folder_stats = {**last.folder_stats, **stats}
                        self._last = new
                        return new
            self._fresh.before_listing(last.folders if last is not None else ())
            scan = list_vault(root, settings)
            self._fresh.after_listing(scan.folders)
            self._last = scan
            return scan

    def close(self) -> None:
        with self._lock:
            self._fresh.close()
            self._last = None


_FOLDER_STATS = ""  # (a key no folder's real path is: the stats of the folders listed again)


def _unevented(scan: Scan, changed: dict) -> dict | None:
    """``changed`` (the names the file events gave, by folder) with what the events did
    not tell: each listed file whose size, mtime, ctime or inode is not the listing's,
    and every name of each listed folder whose mtime, ctime or inode is not (or was taken
    in the racy margin of a change to it), with those folders' new stats under
    ``_FOLDER_STATS``. None when only a new listing is right (a bootstrap file beside the
    vault changed, a folder is gone)."""
    from vaultkit.vault.scan import folder_stat

    out = {folder: set(names) for folder, names in changed.items()}
    stats = {}
    for real, place in scan.places.items():
        if place is None:
            continue  # (a tool's cache folder: watched for its tag, not listed)
        kept = scan.folder_stats.get(real)
        try:
            now = folder_stat(place[0])
        except OSError:
            return None
        # (a folder changed in the racy margin of its stat may have changed again in the
        # same tick, unseen: its names are read again until its change is older)
        if kept is None or kept[:3] != now[:3] or kept[1] >= kept[3] - _RACY_NS:
            try:
                names = os.listdir(place[0])
            except OSError:
                return None
            # (every name now, and every name listed: a file gone is one of them)
            out.setdefault(real, set()).update(names)
            out[real].update(f.rel[len(place[1]):] for f in _listed_in(scan, place[1]))
            stats[real] = now
    whole = set(stats)
    stat = os.stat
    flags = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0)
    files = scan.files
    for real, folder, entries in _by_folder(scan):
        if real in whole:
            continue  # (its names are listed again whole)
        # (each name stat'ed in its opened folder, as the walk does: fstatat resolves one
        # path component, not the whole path)
        try:
            fd = os.open(folder, flags)
        except OSError:
            return None
        try:
            for name, at in entries:
                f = files[at]
                try:
                    st = stat(name, dir_fd=fd)
                except OSError:
                    out.setdefault(real, set()).add(name)
                    continue
                if st.st_mtime_ns != f.mtime_ns or st.st_ctime_ns != f.ctime_ns \
                        or st.st_size != f.size or st.st_ino != f.ino:
                    out.setdefault(real, set()).add(name)
        finally:
            os.close(fd)
    for rel, size, mtime_ns, ctime_ns, ino in scan.external:
        try:
            st = os.stat(scan.root / rel)
        except OSError:
            return None
        if (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino) != \
                (size, mtime_ns, ctime_ns, ino):
            return None
    if stats:
        out[_FOLDER_STATS] = stats
    return out


def _by_folder(scan: Scan) -> list[tuple[str, str, list]]:
    """The listed files by folder: ``(real path, listed path, [(name, position in the
    listing)])``, kept in
    the listing's memo while no name changes (a listing brought up to date in place keeps
    its memo: the entries are looked up by position, so they are the new ones)."""
    found = scan.memo.get("by_folder")
    if found is None:
        real_of = {place[1]: (real, place[0]) for real, place in scan.places.items()
                   if place is not None}
        groups: dict[str, list] = {}
        for at, f in enumerate(scan.files):
            folder, _, name = f.rel.rpartition("/")
            groups.setdefault(folder + "/" if folder else "", []).append((name, at))
        found = scan.memo["by_folder"] = [(*real_of[prefix], names)
                                          for prefix, names in groups.items()
                                          if prefix in real_of]
    return found


def _listed_in(scan: Scan, prefix: str) -> list[FileEntry]:
    """The listed files right in the folder of vault prefix ``prefix`` (not below it)."""
    return [f for f in scan.files
            if f.rel.startswith(prefix) and "/" not in f.rel[len(prefix):]]


def list_vault(root_path: Path, settings: Settings) -> Scan:
    """Walk the vault at ``root_path`` (resolved) and stat every file: its :class:`Scan`."""
    started = time.time_ns()
    folders: list[str] = []
    places: dict = {}
    links: list = []
    excludes = settings.excludes_anything
    folder_stats: dict = {}
    files, problems = walk(root_path, settings.is_excluded if excludes else None, folders,
                           is_excluded_file=settings.file_excluder if excludes else None,
                           places=places, links=links, folder_stats=folder_stats)
    external = []
    if not settings.profile.memory_prefix:
        folders.append(os.path.realpath(root_path.parent))
        for name in settings.profile.bootstrap_files:
            try:
                st = os.stat(root_path.parent / name)
            except OSError:
                continue
            external.append(("../" + name, st.st_size, st.st_mtime_ns, st.st_ctime_ns,
                             st.st_ino))
    memo: dict = {}
    digest, newest = _state(files, problems, external, memo)
    return Scan(root_path, settings, files, problems, digest, newest, started, folders,
                places, external, bool(links), memo, folder_stats)


def rescan(scan: Scan, changed: dict, started_ns: int) -> Scan | None:
    """``scan`` after the names ``changed`` (a listed folder's real path -> names in it)
    changed, listing only those names again (vaultkit.vault.scan.relist); None when only
    a new listing is right: a symlink was followed (its entry follows a file elsewhere),
    a change outside the listed folders (the bootstrap files one folder up), a new folder.
    ``started_ns``: when the changes were read, before anything was listed again."""
    from vaultkit.vault.scan import relist

    if scan.links:
        return None
    settings = scan.settings
    excludes = settings.excludes_anything
    done = relist(scan.root, scan.files, scan.problems, scan.places, changed,
                  settings.is_excluded if excludes else None,
                  is_excluded_file=settings.file_excluder if excludes else None)
    if done is None:
        return None
    files, problems, spots = done
    # (files written in place keep every name: what the names alone give is kept too)
    memo = dict(scan.memo) if spots is not None else {}
    digest, newest = _state(files, problems, scan.external, memo, spots)
    return Scan(scan.root, settings, files, problems, digest, newest, started_ns,
                scan.folders, scan.places, scan.external, False, memo, scan.folder_stats)


def set_aside_files(root: Path, settings: Settings) -> list:
    """The Markdown files under the profile's ``secret_scan_folders``, as the walk lists
    them (symlinks out of the folder not followed), less the user's ``exclude``."""
    from vaultkit.vault.scan import walk

    out = []
    patterns = settings.exclude_patterns
    for folder in settings.profile.secret_scan_folders:
        folder = folder.strip("/")
        base = root / folder
        if not base.is_dir() or base.is_symlink():
            continue
        files, _ = walk(base)
        for f in files:
            rel = f"{folder}/{f.rel}"
            parts = [rel[:i] for i, c in enumerate(rel) if c == "/"] + [rel]
            if rel.lower().endswith(".md") and not any(p.match(x) for p in patterns
                                                       for x in parts):
                out.append(type(f)(rel, f.abs, f.size, f.mtime_ns, f.ctime_ns, f.ino))
    return out


def oversize_error(size: int, limit: int) -> str:
    """The error of a note over the size limit (known from the listing alone)."""
    return f"{size:,} bytes, over the {limit:,}-byte limit (budgets.max_file_bytes); not parsed"


class Lent(Frozen):
    """What a load takes over instead of making it again: ``scan``, a listing made by
    :func:`scan_vault`; ``previous``, a vault this process loaded earlier (a long-running
    server keeps one), which lends its parsed notes, facts and cache; ``made``, ``cache``,
    ``facts`` and ``external``, what a deferred vault already made from this same ``scan``
    note by note (vaultkit.vault.deferred), taken over as they are."""

    __slots__ = _fields = ("scan", "previous", "made", "cache", "facts", "external")
    scan: "Scan | None"
    previous: "Vault | None"
    made: dict[str, Note] | None
    cache: "_Cache | None"
    facts: dict | None
    external: dict[str, Note] | None

    def __init__(self, scan=None, previous=None, made=None, cache=None, facts=None,
                 external=None):
        _set = object.__setattr__
        _set(self, "scan", scan)
        _set(self, "previous", previous)
        _set(self, "made", made)
        _set(self, "cache", cache)
        _set(self, "facts", facts)
        _set(self, "external", external)


def load_vault(path: Path | str = ".", *, root: Path | str | None = None,
               profile: str | None = None, use_cache: bool = True,
               settings: Settings | None = None, named: bool = False, save: bool = True,
               lent: Lent | None = None) -> Vault:
    """Find the root from ``path`` (or take ``root``), read settings, parse every note.

    With ``save=False`` the caller writes the cache itself (``vault.save_cache()``) once
    its facts are computed, so a run writes it at most once. ``lent`` (:class:`Lent`): what
    is taken over rather than made again. A note of ``lent.previous`` is taken over only
    when its size, mtime, ctime and inode are unchanged and it was older than that vault's
    listing by the racy margin or still holds the bytes it was parsed from (its blob id),
    the same test the cache applies; facts that vault computed and had not written yet are
    written by this one.
    """
    lent = lent or _NOTHING_LENT
    scan, previous, made, cache, facts, external = \
        lent.scan, lent.previous, lent.made, lent.cache, lent.facts, lent.external
    if scan is None:
        scan = scan_vault(path, root=root, profile=profile, use_cache=use_cache,
                          settings=settings, named=named)
    root_path, settings, files, problems = scan.root, scan.settings, scan.files, scan.problems
    max_bytes = settings.profile.budgets.max_file_bytes
    md, attachments = [], {}
    for f in files:
        if f.rel.lower().endswith(".md"):
            md.append(f)
        else:
            attachments[f.rel] = Attachment(f.rel, f.size)

    same = previous is not None and previous.root == root_path \
        and previous.settings.fingerprint == settings.fingerprint
    if cache is None and use_cache:
        kept = previous._cache if same else None
        cache = kept if kept is not None else _Cache(store_for(scan), settings.fingerprint)
    if cache is not None:  # (before any record is checked: see _Cache._fits)
        cache.started_ns = scan.started_ns
    lent = previous.notes.entries() if same else {}  # (as held: none decoded for this)
    lent_before = previous.started_ns - _RACY_NS if same else 0
    made = made or {}
    notes: dict[str, Note] = {}
    facts = {} if facts is None else facts
    todo: list[FileEntry] = []
    unsaved: set[str] = set()  # facts lent that the previous vault had not written
    for f in md:
        if made:
            one = made.get(f.rel)
            if one is not None:
                notes[f.rel] = one
                continue
        if f.size > max_bytes:
            notes[f.rel] = Note(path=f.rel, size=f.size, mtime_ns=f.mtime_ns,
                                ctime_ns=f.ctime_ns, ino=f.ino,
                                error=oversize_error(f.size, max_bytes))
            continue
        old = lent.get(f.rel)
        if old is not None and not old.error and old.size == f.size \
                and old.mtime_ns == f.mtime_ns and old.ctime_ns == f.ctime_ns \
                and old.ino == f.ino and (f.changed_ns < lent_before or (
                    old.oid is not None and content_id(f.abs, f.size) == old.oid)):
            notes[f.rel] = old
            kept = previous._facts.get(f.rel)
            if kept is not None:  # (else in the store, or none)
                facts[f.rel] = kept
                if f.rel in previous._fact_paths:  # computed there, not on disk yet
                    unsaved.add(f.rel)
            continue
        hit = cache.entry(f, max_bytes) if cache else None
        if hit is not None:
            notes[f.rel] = hit  # its record and facts are read from the store when asked for
        else:
            todo.append(f)
    parsed = _parse_all(todo, max_bytes, facts, scan.started_ns) if todo else []
    for note in parsed:
        notes[note.path] = note
    notes = dict(sorted(notes.items()))  # (a Stored entry until the note is asked for)

    if external is None:
        external = external_notes(root_path, settings)
    vault = Vault(root_path, settings, Notes(notes), attachments, problems, external,
                  scan=scan, facts=facts, cache=cache)
    # (unreadable files are read again every run but never stored: they change nothing)
    vault._dirty = cache is not None and (cache.stale(notes) or bool(unsaved))
    vault._fact_paths = unsaved
    if save:
        vault.save_cache()
    # (the notes keep the strings the parse shared; and a long-running server loads again
    # for each request: what its notes decoded since the last load is not kept for ever)
    from vaultkit.vault.model import forget_shared

    forget_shared()
    return vault


_NOTHING_LENT = Lent()


def store_for(scan: Scan) -> Store:
    """The store of the vault ``scan`` lists: the one a long-running process keeps for it
    and hands with its listing (:meth:`vaultkit.session.workspace.Workspace.listing_of`),
    else a new one."""
    return scan.store if scan.store is not None else Store(scan.root)


def external_notes(root: Path, settings: Settings) -> dict[str, Note]:
    """The bootstrap files beside a memory-only vault, read: ``{"../AGENTS.md": note}``.

    As the scan does for the vault's own files, a symlink out of the workspace (or into
    ``.git/``) is not followed: its note holds only the error that says so (nothing of
    the file it names is read, not even its size)."""
    from vaultkit.vault.scan import _hidden, _inside

    external: dict[str, Note] = {}
    if not settings.profile.memory_prefix:
        max_bytes = settings.profile.budgets.max_file_bytes
        workspace = os.path.realpath(root.parent)
        for name in settings.profile.bootstrap_files:
            candidate = root.parent / name
            if candidate.is_file():
                real = os.path.realpath(candidate)
                if not _inside(real, workspace) or \
                        _hidden(os.path.relpath(real, workspace)) is not None:
                    external["../" + name] = Note(
                        path="../" + name, error=f"symlink points outside the workspace "
                        f"({os.readlink(candidate) if os.path.islink(candidate) else real}); "
                        "not followed")
                    continue
                external["../" + name] = _read_one(real, "../" + name, max_bytes)
    return external


def one_note(f: FileEntry, limit: int, cache: "_Cache | None") -> Note:
    """The note of one listed file, as :func:`load_vault` makes it (without ``previous``):
    over the size limit, from the cache, else read and parsed."""
    if f.size > limit:
        return Note(path=f.rel, size=f.size, mtime_ns=f.mtime_ns, ctime_ns=f.ctime_ns,
                    ino=f.ino, error=oversize_error(f.size, limit))
    hit = cache.entry(f, limit) if cache else None
    if hit is not None:
        return cache.note(hit)  # (a note asked for alone: decoded now)
    # (a staged file gets its blob id whenever it is read: see _Cache.by_content)
    seen = cache.started_ns if cache and f.rel not in cache.by_content else None
    return _read_one(f.abs, f.rel, limit, seen)


def _runs(flags: list[bool]) -> list[tuple[int, int]]:
    """The ``(start, end)`` of each run of true ``flags``, in order."""
    runs = []
    start, n = 0, len(flags)
    while start < n:
        try:
            end = flags.index(False, start)  # (the next gap, found in C)
        except ValueError:
            end = n
        if end > start:
            runs.append((start, end))
        start = end + 1
    return runs


def _numbers(files) -> tuple:
    """The sizes, mtimes, ctimes and inodes of ``files``, four ``array("q")``."""
    from array import array

    return (array("q", [f.size for f in files]), array("q", [f.mtime_ns for f in files]),
            array("q", [f.ctime_ns for f in files]), array("q", [f.ino for f in files]))


def _put(numbers: tuple, at: int, f) -> None:
    """Set position ``at`` of the four arrays of :func:`_numbers` to ``f``'s."""
    numbers[0][at], numbers[1][at], numbers[2][at], numbers[3][at] = \
        f.size, f.mtime_ns, f.ctime_ns, f.ino


def _state(files: list[FileEntry], problems: list[ScanProblem],
           external: list[tuple[str, int, int, int, int]], memo: dict | None = None,
           spots: list[int] | None = None) -> tuple[str, int]:
    """A digest of every file's path, size, mtime, ctime and inode, and the newest mtime.

    ``memo``: the listing's (:attr:`Scan.memo`), which keeps the digest's part for the
    paths and the numbers; given the ``spots`` (positions) of the only entries that
    changed since the memo's listing, with every path the same, only those are taken
    again (a listing kept by file events, after a file was written)."""
    from array import array

    # the count, the paths (no path holds a NUL), then the numbers as 8-byte integers:
    # unambiguous, and a third of the time of one formatted line per file (the listing's
    # key, computed by every run)
    memo = {} if memo is None else memo
    named = memo.get("state_names")
    if named is None:
        paths = memo.get("paths")
        if paths is None:  # (Scan.paths: the listing's, kept while no name changes)
            paths = memo["paths"] = [f.rel for f in files]
        named = memo["state_names"] = _names_hash(paths)
    kept = memo.get("state_numbers") if spots is not None else None
    if kept is None:
        numbers = _numbers(files)
    else:  # (copies: the listing the memo came from keeps its own)
        numbers = tuple(array("q", a) for a in kept)
        for at in spots:
            _put(numbers, at, files[at])
    memo["state_numbers"] = numbers
    # the notes' own arrays (Scan.note_numbers), when the memo's listing had them: the same
    found, notes = memo.pop("note_numbers", None), memo.get("notes")
    if spots is not None and found is not None and notes is not None:
        from bisect import bisect_left

        mine = tuple(array("q", a) for a in found)
        for at in spots:
            f = files[at]
            if f.rel.endswith(MD_ENDINGS):
                _put(mine, bisect_left(notes, f.rel), f)
        memo["note_numbers"] = mine
    digest = named.copy()
    for column in numbers:
        digest.update(column.tobytes())
    newest = max(numbers[1], default=0)
    for p in problems:
        digest.update(f"!{p.rel}\0{p.message}\n".encode("utf-8", "surrogatepass"))
    for rel, size, mtime_ns, ctime_ns, ino in external:
        digest.update(f"{rel}\0{size}\0{mtime_ns}\0{ctime_ns}\0{ino}\n".encode(
            "utf-8", "surrogatepass"))
        newest = max(newest, mtime_ns)
    return digest.hexdigest(), newest


def _reading() -> tuple:
    """What reading a note calls: ``(ReadRefused, read_regular_stat, parse_note)``. Imported
    only when something is read (the parser compiles a lot), and once by a caller reading
    many (a ``from`` import in a function costs ~2 µs each time it runs)."""
    from vaultkit.core.bounded import ReadRefused, read_regular_stat
    from vaultkit.vault.parse import parse_note

    return ReadRefused, read_regular_stat, parse_note


def _read_one(abs_path: str, rel: str, limit: int, seen_ns: int | None = None,
              reading: tuple | None = None) -> Note:
    """The file at ``abs_path`` read and parsed. ``seen_ns``: when the run that will store
    it in a cache listed the files; a file changed within the racy margin of that (or any,
    when None) gets the blob id of the bytes parsed (``Note.oid``), by which the cache
    knows it next time (the git blob id of a few files, not of every file a cold run reads).
    ``reading``: :func:`_reading`'s, from a caller reading many notes."""
    ReadRefused, read_regular_stat, parse_note = reading or _reading()
    try:  # (the stat of the bytes read; a FIFO or device swapped in is refused)
        data, st = read_regular_stat(abs_path, limit)
    except ReadRefused as exc:
        return Note(path=rel, error=exc.strerror)
    except OSError as exc:
        return Note(path=rel, error=f"cannot be read: {exc.strerror or exc}")
    note = parse_note(rel, data, size=len(data), mtime_ns=st.st_mtime_ns)
    note.ctime_ns, note.ino = st.st_ctime_ns, st.st_ino
    if seen_ns is None or racy(max(st.st_mtime_ns, st.st_ctime_ns), seen_ns):
        from vaultkit.core.digests import blob_id

        note.oid = blob_id(data)
    # where its text is read again once released (Note.release_text), and the most read then
    note.file, note.limit, note.source = abs_path, limit, FILES
    return note


def _reread(note) -> Note:
    """The note (or cache entry) ``note`` read and parsed again from its file: its cached
    record is damaged or gone, or the file changed since it was parsed."""
    from vaultkit.core.bounded import read_regular
    from vaultkit.vault.parse import parse_note

    try:  # the scan saw this size: never read more (nor a FIFO swapped in)
        limit = note.size
        if note.limit is not None:  # changed since the listing: what the file holds now
            st = os.stat(note.file)  # type: ignore[arg-type]
            if not _same_stat(st, note):
                limit = note.limit
        data = read_regular(note.file, limit)  # type: ignore[arg-type]
        out = parse_note(note.path, data, size=note.size, mtime_ns=note.mtime_ns)
        out.ctime_ns, out.ino = note.ctime_ns, note.ino
        return out
    except (OSError, TypeError) as exc:
        return Note(path=note.path, size=note.size, mtime_ns=note.mtime_ns,
                    ctime_ns=note.ctime_ns, ino=note.ino,
                    error=f"cannot be read: {getattr(exc, 'strerror', None) or exc}")


def _read_text(note) -> str | None:
    """A note's text, read from its file; None unless the file still has the size, mtime,
    ctime and inode the note (or cache entry) was listed with, and the bytes its blob id
    names when it has one."""
    from vaultkit.core.bounded import read_regular
    from vaultkit.vault.parse import note_text

    try:
        st = os.stat(note.file)  # type: ignore[arg-type]
        if not _same_stat(st, note):
            return None
        data = read_regular(note.file, note.size)  # type: ignore[arg-type]
    except (OSError, TypeError):
        return None
    if len(data) != note.size:
        return None
    if note.oid is not None:  # (listed in a cache entry's racy margin: known by its bytes)
        from vaultkit.core.digests import blob_id

        if blob_id(data) != note.oid:
            return None
    return note_text(data)


def _same_stat(st: os.stat_result, note) -> bool:
    """Whether ``st`` is the stat the note was listed (or read) with."""
    return st.st_size == note.size and st.st_mtime_ns == note.mtime_ns \
        and st.st_ctime_ns == note.ctime_ns and st.st_ino == note.ino


class _Files(NoteSource):
    """The source of every note the loader reads from a file: its text is read from that
    file again when asked for (each note carries its file, limit and stat); a file that
    changed since the note was parsed is parsed again, every field (the note then holds
    what the file holds now, and the cache writes it anew)."""

    def text(self, note: Note) -> str:
        text = _read_text(note)
        if text is None:
            note.replace_parse(_reread(note))
            return note.text if note.holds_text() else ""
        note.text = text
        return text


FILES = _Files()


class Stored:
    """A note the parse cache holds a record of, as listed, not decoded yet: what a listing
    tells (path and stat; never an error: unreadable files are not cached) and the store
    that decodes it (:meth:`_Cache.note`). A vault holds these in its :class:`Notes` until a
    note is asked for: a commit hook uses a few of 10,000 records, and decoding them all
    cost more than the rest of its run."""

    __slots__ = ("path", "size", "mtime_ns", "ctime_ns", "ino", "oid", "file", "limit",
                 "record", "note")
    error = None

    def __init__(self, f: FileEntry, limit: int | None, store: "_Cache", oid: str | None):
        self.path, self.size, self.mtime_ns = f.rel, f.size, f.mtime_ns
        self.ctime_ns, self.ino, self.oid = f.ctime_ns, f.ino, oid
        self.file, self.limit = f.abs, limit
        self.record = store  # (in the store: fetched when decoded or written back)
        self.note: Note | None = None  # once decoded


def held(entry):
    """The note an entry of :meth:`Notes.entries` stands for, when it is made (a
    :class:`Stored` entry once decoded), else the entry itself."""
    if type(entry) is Stored and entry.note is not None:
        return entry.note
    return entry


def decoded(entry) -> Note:
    """The note an entry of :meth:`Notes.entries` stands for: a :class:`Stored` entry is
    decoded by its store (once), a note is itself."""
    if type(entry) is Stored:
        return entry.note if entry.note is not None else entry.record.note(entry)
    return entry


class Notes(Mapping):
    """A vault's notes by path, in path order: a mapping whose values are plain
    :class:`Note` objects. A note whose parse is in the parse cache is held as its
    :class:`Stored` entry and decoded by the store when first asked for (``notes[path]``,
    ``get``, or going through ``values()`` or ``items()``, which decode them all at once).
    What a listing tells of every note (paths, stat, errors, for the caches' keys) is read
    from :meth:`entries` without decoding any."""

    __slots__ = ("_all", "_pending")

    def __init__(self, notes: dict):
        self._all = notes
        self._pending = sum(1 for v in notes.values() if type(v) is Stored)

    def __getitem__(self, path: str) -> Note:
        entry = self._all[path]
        if type(entry) is Stored:
            return self._decode(path, entry)
        return entry

    def _decode(self, path: str, entry: Stored) -> Note:
        note = decoded(entry)
        self._all[path] = note
        self._pending -= 1
        return note

    def get(self, path, default=None):
        entry = self._all.get(path)
        if entry is None:
            return default
        return self._decode(path, entry) if type(entry) is Stored else entry

    def __contains__(self, path) -> bool:
        return path in self._all

    def __iter__(self):
        return iter(self._all)

    def __len__(self) -> int:
        return len(self._all)

    def keys(self):
        return self._all.keys()

    def _made(self) -> dict:
        if self._pending:
            for path, entry in list(self._all.items()):
                if type(entry) is Stored:
                    self._decode(path, entry)
        return self._all

    def values(self):
        return self._made().values()

    def items(self):
        return self._made().items()

    def entry(self, path: str):
        """The note at ``path`` as held: a :class:`Note`, or the :class:`Stored` entry of
        one not decoded yet (its path, stat and ``error``, None); None if there is none."""
        return self._all.get(path)

    def entries(self) -> dict:
        """Every note as held (see :meth:`entry`), by path, without decoding any."""
        return self._all

    def copy(self) -> "Notes":
        """The same notes (and entries), in a mapping of their own."""
        return Notes(dict(self._all))

    def __eq__(self, other) -> bool:
        if isinstance(other, Notes):
            other = other._made()
        return self._made() == other

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<{len(self)} notes, {self._pending} not decoded>"


def _parse_chunk(items: list[tuple[str, str, int, int | None]]) -> list[tuple]:
    """Parse in a worker; each note comes back marshalled (cheap to send, and the very
    bytes the cache stores), or as plain data when it could not be read. No text comes
    back: the main process reads a note's text from its file when a rule needs it, and
    forgets it again once that note's rules ran (a cold run never holds every note's text)."""
    from vaultkit.vault import conflicts, mentions, secretscan

    out = []
    reading = _reading()  # (once a chunk, not once a note)
    for a, r, limit, seen in items:
        note = _read_one(a, r, limit, seen, reading)
        if note.error:
            out.append((r, None, note.to_plain(), b""))
        else:
            out.append((r, marshal.dumps(note.to_plain(with_text=False)),
                        (note.ctime_ns, note.ino, note.oid),
                        _worker_facts(note, mentions, secretscan, conflicts)))
    return out


def _worker_facts(note: Note, mentions, secretscan, conflicts) -> bytes:
    """Facts computed where the note is parsed, so a cold run spreads them over the cores
    and the main process needs no note's text for them: the credential scan
    (``secret-in-memory``), the paths the note writes out (``orphan-note``) and the
    conflicts git left in it (``conflict-markers``). The modules
    ``vaultkit.vault.mentions``, ``secretscan`` and ``conflicts`` are the caller's, imported
    once a chunk."""
    facts = {}
    try:
        facts[secretscan.FACT] = (secretscan.DETECTOR_VERSION, secretscan.scan_note(note))
    except Exception:  # never lose the parse over it: the rule scans the note itself
        pass
    try:
        facts[mentions.FACT] = (None, mentions.mentions(note))
    except Exception:  # (the rule finds them itself)
        pass
    try:
        facts[conflicts.FACT] = (None, conflicts.note_conflicts(note))
    except Exception:  # (the rule finds them itself)
        pass
    return marshal.dumps(facts) if facts else b""


def _parse_all(todo: list[FileEntry], limit: int, facts: dict | None = None,
               seen_ns: int | None = None) -> list[Note]:
    """Parse ``todo`` (in worker processes when there are many). A note a worker sent keeps
    neither its text nor the marshalled bytes it came as: the cache marshals the note again
    when it writes it (at 100,000 notes those bytes were about a tenth of the peak)."""
    from vaultkit.core.progress import Progress

    workers = min(os.cpu_count() or 1, 8)
    with Progress("parsing notes", len(todo)) as progress:
        if len(todo) < _PARALLEL_MIN or workers < 2:
            out = []
            reading = _reading()
            for f in todo:
                out.append(_read_one(f.abs, f.rel, limit, seen_ns, reading))
                progress.advance()
            return out
        return _parse_parallel(todo, limit, workers, progress, facts, seen_ns)


def _parse_parallel(todo: list[FileEntry], limit: int, workers: int, progress,
                    facts: dict | None = None, seen_ns: int | None = None) -> list[Note]:
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    try:
        ctx = mp.get_context("fork")
    except ValueError:
        return [_read_one(f.abs, f.rel, limit, seen_ns) for f in todo]
    # what the workers run, imported once here before they fork: imported in each worker
    # it was compiled again per worker (the parser's patterns alone are most of it)
    import vaultkit.vault.conflicts  # noqa: F401
    import vaultkit.vault.mentions  # noqa: F401
    import vaultkit.vault.parse  # noqa: F401
    import vaultkit.vault.secretscan  # noqa: F401

    items = [(f.abs, f.rel, limit, seen_ns) for f in todo]
    listed = {f.rel: f for f in todo}
    size = max(50, len(items) // (workers * 4))
    chunks = [items[i:i + size] for i in range(0, len(items), size)]
    del items
    out: list[Note] = []
    try:
        with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
            for result in pool.map(_parse_chunk, chunks):
                for rel, blob, rest, worker_facts in result:
                    out.append(_from_worker(blob, listed[rel], limit, rest)
                               if blob is not None else Note.from_plain(rest))
                    if worker_facts and facts is not None:
                        facts[rel] = worker_facts
                progress.advance(len(result))
    except (OSError, RuntimeError):  # no processes to be had: do it here
        return [_read_one(f.abs, f.rel, limit, seen_ns) for f in todo]
    return out


def _from_worker(blob: bytes, f: FileEntry, limit: int | None = None,
                 read: tuple = (0, 0, None)) -> Note:
    """A note a worker just parsed from the listed file ``f``, decoded here at once (while
    the workers parse on): every rule of a run reads it, and decoding it whole costs less
    than keeping it as a cache entry to decode later. Its text is not held: its source reads
    it from the file when asked for; nor is ``blob`` (the cache marshals the note again to
    write it). Its path, and its size and mtime when the read saw the listed ones, are the
    listing's own objects (at 100,000 notes a copy of each was 15 MB). ``read``: the ctime, inode and blob id (or
    None) the worker's read saw (see _read_one)."""
    note = Note.from_plain(marshal.loads(blob))
    note.ctime_ns, note.ino, note.oid = read
    if note.ctime_ns == f.ctime_ns:
        note.ctime_ns = f.ctime_ns
    if note.ino == f.ino:
        note.ino = f.ino
    # (no text in the blob: read from the file when asked for)
    note.file, note.limit, note.source = f.abs, limit, FILES
    note.path = f.rel  # (the same text: the worker was given it)
    if note.size == f.size:
        note.size = f.size
    if note.mtime_ns == f.mtime_ns:
        note.mtime_ns = f.mtime_ns
    return note


# The format of the notes cache: 2 kept no note text (it is read from the file again); 3 is
# an SQLite file of per-note records, compressed, updated in place; 4 masks credentials in
# the stored dictionary; 5 keys a record by ctime and inode too, and keeps the blob id of a
# note stored within the racy margin. It is part of the key (``notes_meta``), so a record
# of another format is never misread: the table is built anew.
CACHE_FORMAT = 5

# Records are raw deflate (zlib) with a preset dictionary: a sample of the vault's own
# records, taken when the store is built. Notes are 0.5-3 KB and share their link targets,
# tags and structure, which a per-record compressor without a dictionary cannot see.
_ZDICT_BYTES = 16384
# A run fetches records one by one up to this many, then reads the rest in one go: one
# fetch costs about a fiftieth of reading all 10,000 records (a hook uses ~10).
_SINGLE_FETCHES = 48
_ZLEVEL, _ZWBITS, _ZMEM = 6, -14, 5


class _Cache:
    """The parse cache: the ``notes`` and ``notes_meta`` tables of the vault's store
    (:mod:`vaultkit.vault.store`).

    ``notes(path, size, mtime_ns, ctime_ns, ino, oid, seen_ns, record)``: ``record`` is the
    note's marshalled parse (no text) and its marshalled facts, compressed; ``seen_ns`` is
    when the run that wrote it listed the files. A record is used for a listed file of the
    same size, mtime, ctime and inode; when that mtime or ctime is within the racy margin
    of ``seen_ns`` only if the file's blob id is ``oid`` (the racy rule, per record: the
    blob id is stored for such notes only, NULL for the rest). ``notes_meta`` holds the key
    (vaultkit and parser version, config fingerprint), a generation number drawn when the
    store is built, and the compression dictionary. A run reads the stat columns of every
    record, then only the records it uses (one at a time, or all in one read once it uses
    many), and writes only the records of notes that changed, were added or removed, or got
    new facts.
    """

    def __init__(self, store, fingerprint: str):
        from vaultkit.vault.model import PARSER_VERSION

        self.store = store  # vaultkit.vault.store.Store: the file, its rules, its connection
        self.dir, self.path = store.dir, store.path
        self.key = f"{CACHE_FORMAT}:{__version__}:{PARSER_VERSION}:{fingerprint}"
        self.started_ns = 0  # set by load_vault: when this run listed the files
        # path -> (size, mtime_ns, ctime_ns, ino, oid, seen_ns) of each record: read on first
        # use (``stats``),
        # a few rows by path before that (``_row``: a hook asks for a handful of notes)
        self._stats: dict[str, tuple] | None = {}
        self._rows: dict[str, tuple | None] = {}
        self.stored: dict[str, Note] = {}  # path -> the note its record holds, as it is now
        self.mend = False  # a record could not be used: save() writes it anew
        # path -> stat row of a record found fresh by its bytes (its file changed within the
        # racy margin of the run that wrote it) and older than this run by that margin:
        # save() stamps it with this run, as if this run had written it, so the next run
        # trusts its stat instead of reading the file again (git's index does the same)
        self.settled: dict[str, tuple] = {}
        self.db = None
        self.gen = 0
        self.zdict = b""
        self.fresh = True  # the store is (re)built at the next save
        self.usable = True  # False: locked by another process for too long; not written
        # path -> (stat key, blob, facts), or _OWN
        self._fetched: dict[str, tuple] = {}
        # (path, listing) -> the blob id of the file's bytes, when a record was checked by
        # it (None: unreadable)
        self._checked: dict[tuple, str | None] = {}
        # the notes whose records are taken only for the same bytes, whatever the stat says
        # (a commit hook's staged files: vaultkit.vault.loader.Vault.by_content)
        self.by_content: frozenset[str] = frozenset()
        self._bulk: dict[str, tuple] | None = None
        self._singles = 0
        self._open()

    # -- reading -----------------------------------------------------------------------

    def _open(self) -> None:
        self.db = self.store.connection()
        if self.db is None:
            # none yet (built at the first save), a symlinked cache folder (never used,
            # nor removed), or locked by another vaultkit (this run goes without)
            self.usable = self.store.usable
            return
        if not self.store.current:  # another release's store: rebuilt at the first save
            return
        with self.store.lock:
            self._read_meta()

    def _read_meta(self) -> None:
        import sqlite3

        try:
            self.db.execute("BEGIN")  # the key and the stat table as of one moment
            try:
                if not self.db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND "
                                       "name = 'notes_meta'").fetchone():
                    return  # (the store holds other caches only: built at the first save)
                meta = dict(self.db.execute("SELECT key, value FROM notes_meta"))
                if meta.get("key") != self.key:  # another version or config: not damage
                    return
                gen, zdict = meta.get("gen"), meta.get("zdict")
                if not isinstance(gen, int) or not isinstance(zdict, bytes):
                    return self._damaged("damaged")
                self._stats = None  # (read when first needed whole)
                self.gen, self.zdict, self.fresh = gen, zdict, False
            finally:
                if self.db is not None and self.db.in_transaction:
                    self.db.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            if busy(exc):  # another vaultkit holds it: this run goes without
                self.stats, self.usable = {}, False
                return
            self._damaged("damaged")
        except (sqlite3.Error, ValueError, TypeError):
            self._damaged("damaged")

    @property
    def stats(self) -> dict[str, tuple]:
        """Every record's ``(size, mtime_ns, ctime_ns, ino, oid, seen_ns)`` by path, read on
        first use. Rows of
        another generation (the store rebuilt by another process since it was opened) give
        no record: ``_record`` asks for this generation's."""
        if self._stats is None:
            import sqlite3

            if self.db is None:  # (closed: nothing more is read from it)
                self._stats = {}
                return self._stats
            try:
                self._stats = {row[0]: row[1:] for row in self.db.execute(
                    "SELECT path, size, mtime_ns, ctime_ns, ino, oid, seen_ns FROM notes")}
            except sqlite3.OperationalError as exc:
                if not busy(exc):
                    raise
                self._stats, self.usable = {}, False  # another vaultkit holds it: go without
            except sqlite3.Error:
                self._damaged("damaged")
        return self._stats

    @stats.setter
    def stats(self, value: dict[str, tuple]) -> None:
        self._stats = value
        self._rows = {}

    def _row(self, path: str) -> tuple | None:
        """One record's ``(size, mtime_ns, ctime_ns, ino, oid, seen_ns)``: from the whole table
        once read, else
        asked for by path (a few times; past that the table is read)."""
        if self._stats is not None:
            return self._stats.get(path)
        if path in self._rows:
            return self._rows[path]
        if len(self._rows) >= _SINGLE_FETCHES or self.db is None:
            return self.stats.get(path)
        import sqlite3

        try:
            row = self.db.execute("SELECT size, mtime_ns, ctime_ns, ino, oid, seen_ns "
                                  "FROM notes WHERE path = ?", (path,)).fetchone()
        except sqlite3.Error:
            return self.stats.get(path)  # (the whole read says what is wrong)
        self._rows[path] = found = tuple(row) if row is not None else None
        return found

    def _damaged(self, why: str) -> None:
        mine = self.db is None or self.db is self.store.db
        self.db = None
        self.stats, self.fresh = {}, True
        if mine:  # (else the store found the damage first: removed and said once)
            self.store.damaged(why)  # (removed, said, made anew at the first save)

    def _reopen(self) -> None:
        """Forget what was read and read the store again (another process changed it)."""
        self.close()
        self.stats, self.stored, self._fetched, self._bulk = {}, {}, {}, None
        self._checked = {}
        self.gen, self.zdict, self.fresh, self.usable, self._singles = 0, b"", True, True, 0
        self._open()

    def close(self) -> None:
        if self.db is not None:
            self.store.close()
            self.db = None

    def holds(self, f: FileEntry) -> bool:
        """Whether :meth:`get` gives a note for ``f`` (else it is read and parsed)."""
        st = self._row(f.rel)
        return st is not None and self._fits(f, st)

    def _fits(self, f: FileEntry, st: tuple) -> bool:
        """Whether the record whose stat row is ``st`` describes the listed file ``f``: the
        same size, mtime, ctime and inode, and, when its mtime or ctime lies within the racy
        margin of the run that wrote the record (the content may have changed again in the
        same clock tick) or the note is one of :attr:`by_content`, the blob id of the file's
        bytes is the record's."""
        if st[0] != f.size or st[1] != f.mtime_ns or st[2] != f.ctime_ns or st[3] != f.ino:
            return False
        if not racy(f.changed_ns, st[5]) and f.rel not in self.by_content:
            return True
        if st[4] is None:  # (stored without its blob id: read again)
            return False
        # (hashed once per listing: a server keeps this cache across loads, and the bytes
        # may change again without the stat moving)
        key = (f.rel, self.started_ns)
        if key not in self._checked:
            if len(self._checked) > 4096:
                self._checked.clear()
            self._checked[key] = content_id(f.abs, f.size)
        fits = self._checked[key] == st[4]
        if fits and self.started_ns and racy(f.changed_ns, st[5]) \
                and not racy(f.changed_ns, self.started_ns):
            self.settled[f.rel] = st
        return fits

    def misses(self, files) -> list[FileEntry]:
        """The entries of ``files`` :meth:`holds` no note for, in one pass."""
        stats, fits = self.stats, self._fits
        out = []
        for f in files:
            st = stats.get(f.rel)
            if st is None or st[0] != f.size or st[1] != f.mtime_ns or not fits(f, st):
                out.append(f)
        return out

    def entry(self, f: FileEntry, limit: int | None = None) -> Stored | None:
        """The entry of the note this store holds for ``f`` (decoded by :meth:`note` when
        the note is asked for), or None."""
        if not self.holds(f):
            return None
        st = self._row(f.rel)
        entry = Stored(f, limit, self, st[4] if st else None)
        self.stored[f.rel] = entry
        return entry

    def note(self, entry: Stored) -> Note:
        """The note of ``entry`` (one :meth:`entry` gave out), its record decoded: the parse
        as stored; the text is not in it, the note's source reads it from the file when
        asked for. When the record is gone or damaged, or the file can no longer be read (a
        file made unreadable keeps its size and mtime: it is an error now), the file is
        read and parsed instead (and its record written anew)."""
        if entry.note is not None:
            return entry.note
        blob = self.fetch(entry)  # b"" when the store no longer holds it as listed
        try:
            note = Note.from_plain(marshal.loads(blob))
        except (EOFError, ValueError, TypeError):  # a damaged record: read the file again
            note = None
        if note is not None and not os.access(entry.file, os.R_OK):
            text = _read_text(entry)
            if text is None:
                note = None
            else:
                note.text = text
        if note is None:
            note = _reread(entry)
            blob = None
        # the listing's path and stat (its objects: at 100,000 notes a copy each was MBs)
        note.path, note.size, note.mtime_ns = entry.path, entry.size, entry.mtime_ns
        note.ctime_ns, note.ino, note.oid = entry.ctime_ns, entry.ino, entry.oid
        note.file, note.limit, note.source, note.record = entry.file, entry.limit, FILES, blob
        entry.note = note
        return note

    def fetch(self, note) -> bytes:
        """The marshalled parse of a note (or entry) this cache gave out; b"" when the store
        no longer holds it, so the note is read again."""
        rec = self._record(note.path, _key(note))
        if rec is None:
            self.mend = True
            return b""
        return rec[0]

    def facts_for(self, note) -> bytes:
        """The marshalled facts stored with ``note`` (a note or :class:`Stored` entry), if
        this cache gave that note out."""
        if note is None or held(self.stored.get(note.path)) is not held(note):
            return b""
        rec = self._record(note.path, _key(note))
        return rec[1] if rec is not None else b""

    def _record(self, path: str, key: tuple) -> tuple[bytes, bytes] | None:
        """The record of ``path`` whose stat key (see :func:`_key`) is ``key``, decoded."""
        hit = self._fetched.get(path)
        if hit is _OWN:  # written from this process's own parse: nothing to fetch
            st = self._row(path)
            if st is not None and st[:5] == key:
                return b"", b""
        elif hit is not None and hit[0] == key:
            return hit[1], hit[2]
        size, mtime_ns, ctime_ns, ino, oid = key
        import sqlite3

        raw = None
        try:
            if self.db is None:
                return None
            if self._bulk is None and self._singles < _SINGLE_FETCHES:
                self._singles += 1  # a hook uses a handful of notes: fetch just those
                row = self.db.execute(
                    "SELECT n.record FROM notes n, notes_meta m WHERE n.path = ? AND "
                    "n.size = ? AND "
                    "n.mtime_ns = ? AND n.ctime_ns = ? AND n.ino = ? AND n.oid IS ? AND "
                    "m.key = 'gen' AND m.value = ?",
                    (path, size, mtime_ns, ctime_ns, ino, oid, self.gen)).fetchone()
                raw = row[0] if row else None
            else:  # a run that uses many: all in one read
                if self._bulk is None:
                    self._bulk = {row[0]: row[1:] for row in self.db.execute(
                        "SELECT path, size, mtime_ns, ctime_ns, ino, oid, record FROM notes "
                        "WHERE (SELECT value FROM notes_meta WHERE key = 'gen') = ?", (self.gen,))}
                row = self._bulk.pop(path, None)
                raw = row[5] if row and row[:5] == key else None
        except sqlite3.Error:
            return None
        rec = self._decode(raw)
        if rec is not None:
            self._fetched[path] = (key, *rec)
        return rec

    def _decode(self, raw) -> tuple[bytes, bytes] | None:
        import zlib

        if not isinstance(raw, bytes):
            return None
        try:
            inflate = zlib.decompressobj(_ZWBITS, zdict=self.zdict) if self.zdict \
                else zlib.decompressobj(_ZWBITS)
            data = marshal.loads(inflate.decompress(raw, MAX_RECORD_BYTES))
        except (zlib.error, EOFError, ValueError, TypeError):
            return None
        if isinstance(data, tuple) and len(data) == 2 and isinstance(data[0], bytes) \
                and isinstance(data[1], bytes):
            return data
        return None

    # -- writing -----------------------------------------------------------------------

    def stale(self, notes: dict[str, Note]) -> bool:
        """True when the store does not hold every note as it is (or holds others)."""
        if self.fresh or self.mend:
            return True
        stored = self.stored
        live = 0
        for rel, note in _entries(notes).items():
            if note.error:
                continue
            live += 1
            if held(stored.get(rel)) is not held(note):
                return True
        return live != len(self.stats)

    def save(self, notes: dict[str, Note], facts: dict[str, dict | bytes],
             changed_facts: set[str] | frozenset = frozenset(), *,
             complete: bool = True) -> None:
        """Write the records of the notes that changed (or got new facts), remove those of
        notes that are gone; one transaction. Nothing is written when it cannot be.
        ``complete=False``: ``notes`` are some of the vault's (a commit hook's): theirs are
        written, no other record is removed, and a store that is to be built anew is not
        (its dictionary is sampled from every note)."""
        import sqlite3

        if not self.usable:  # (a server keeps this object: it reads the store anew)
            self._reopen()
            return
        rebuild = self.fresh
        if rebuild and not complete:
            return
        # a note this run parsed is listed as itself (marshalled as its record is written);
        # one the store gave out as (path, note, its payload): at 100,000 notes a tuple
        # for each of them was megabytes at the peak of a cold check
        todo: list[Note | tuple[str, Note, tuple[bytes, bytes]]] = []
        notes = _entries(notes)
        for rel, entry in notes.items():
            note = held(entry)  # (a Stored entry not decoded: its record is as stored)
            if note.error:
                continue  # unreadable files are retried next run
            mine = held(self.stored.get(rel)) is note
            if not rebuild and mine and rel not in changed_facts and note.record is not None:
                continue  # its record is in the store as it is
            # a note parsed by this run is marshalled as its record is written; one the
            # store gave out is read from it now, before the store is written (or rebuilt)
            own = note.record is None and not mine and rel == note.path
            todo.append(note if own else (rel, note, self._payload(note, facts)))
        gone = [rel for rel in self.stats if (n := notes.get(rel)) is None or n.error] \
            if complete else []
        written: list[Note | tuple[str, Note, bytes, bytes]] = []  # as todo
        settled = {} if rebuild else \
            {rel: st for rel, st in self.settled.items() if rel not in notes or
             held(self.stored.get(rel)) is held(notes[rel])}  # (not written anew below)
        self.settled = {}
        if not todo and not gone and not rebuild and not settled:
            self.mend = False
            return
        # the files were read after `started_ns`: a record is trusted next time only if the
        # file was older than that by the racy margin (see get)
        seen = self.started_ns or time.time_ns()
        try:
            if self.db is None:
                self.db = self.store.connection(create=True)
                if self.db is None:
                    return  # (locked by another vaultkit, or a symlinked cache folder)
            db = self.db
            with self.store.lock:  # (one transaction at a time on the one connection)
                self.store.begin_write(db)  # (a store of another release is emptied first)
                try:
                    if rebuild:
                        gen, zdict = self._build(db, _Sample(
                            todo, lambda t: t[2] if type(t) is tuple
                            else self._payload(t, facts)))
                    else:
                        row = db.execute("SELECT value FROM notes_meta WHERE key = 'gen'") \
                            .fetchone() if _table(db, "notes_meta") else None
                        if row is None or row[0] != self.gen:
                            # rebuilt by another process since it was read
                            db.execute("ROLLBACK")
                            self._reopen()
                            return
                        gen, zdict = self.gen, self.zdict
                    deflate = self._deflater(zdict)

                    def rows():
                        # one record at a time: a note's bytes are made, compressed and
                        # handed to SQLite, not all held at once
                        for item in todo:
                            own = type(item) is not tuple
                            if own:
                                note = item
                                rel, (blob, kept) = note.path, self._payload(note, facts)
                            else:
                                rel, note, (blob, kept) = item
                            z = deflate.copy()
                            yield (rel, note.size, note.mtime_ns, note.ctime_ns, note.ino,
                                   note.oid, seen,
                                   z.compress(marshal.dumps((blob, kept))) + z.flush())
                            # a note parsed by this run is not given its bytes here, nor its
                            # facts' (the vault holds those: never asked of the store)
                            written.append(note if own else (rel, note, blob, kept))
                    if gone:
                        db.executemany("DELETE FROM notes WHERE path = ?",
                                       [(g,) for g in gone])
                    if settled:  # (only a record still as it was read: no other writer's)
                        db.executemany(
                            "UPDATE notes SET seen_ns = ? WHERE path = ? AND size = ? AND "
                            "mtime_ns = ? AND ctime_ns = ? AND ino = ? AND oid = ? AND "
                            "seen_ns = ?", [(seen, rel, *st[:6]) for rel, st in settled.items()])
                    db.executemany("INSERT OR REPLACE INTO notes VALUES "
                                   "(?, ?, ?, ?, ?, ?, ?, ?)", rows())
                    db.execute("COMMIT")
                except BaseException:
                    if db.in_transaction:
                        db.execute("ROLLBACK")
                    raise
        except (OSError, sqlite3.Error):  # a read-only vault, a lock held too long: not saved
            return
        if rebuild:
            self.stats, self.stored, self._fetched, self._bulk = {}, {}, {}, None
            self.gen, self.zdict, self.fresh = gen, zdict, False
        for rel in gone:
            self.stats.pop(rel, None)
            self.stored.pop(rel, None)
        rows = self._stats if self._stats is not None else self._rows
        for rel, st in settled.items():
            if rel not in gone:
                rows[rel] = (*st[:5], seen)
        for item in written:
            if type(item) is tuple:
                rel, note, blob, kept = item
                fetched = (_key(note), blob, kept)
            else:  # its record is as its entry in stats says; its bytes are not kept
                note = item
                rel, fetched = note.path, _OWN
            # (the whole table is not read for this: a hook writes a handful of records)
            (self._stats if self._stats is not None else self._rows)[rel] = \
                (*_key(note), seen)
            self.stored[rel] = note
            self._fetched[rel] = fetched
            if note.record is None:  # its record is in this store now (see the skip above)
                note.record = self
        self.mend = False

    def _payload(self, note: Note, facts: dict[str, dict | bytes]) -> tuple[bytes, bytes]:
        """What a note's record holds: its marshalled parse and its marshalled facts."""
        kept = facts.get(note.path)
        if kept is None:
            kept = self.facts_for(note)
        elif isinstance(kept, dict):
            try:
                kept = marshal.dumps(kept)
            except ValueError:  # a fact marshal cannot store: compute it again next time
                kept = b""
        return self._blob_of(note), kept if isinstance(kept, bytes) else b""

    def _blob_of(self, note) -> bytes:
        blob = note.record
        if blob is not None and not isinstance(blob, bytes):  # in the store, never fetched
            rec = self._record(note.path, _key(note))
            blob = rec[0] if rec is not None else None
        if not blob:  # parsed here (or read again): its bytes
            if type(note) is Stored:  # (its record is gone from the store: read the file)
                note = self.note(note)
            blob = marshal.dumps(note.to_plain(with_text=False))
        return blob

    def _build(self, db, sample: list[tuple[bytes, bytes]]) -> tuple[int, bytes]:
        """(Re)create the tables, with a new generation and dictionary; the caller's
        transaction makes it one step for every other process."""
        zdict = _sample_dictionary(sample)
        gen = int.from_bytes(os.urandom(7), "big")
        db.execute("DROP TABLE IF EXISTS notes")
        db.execute("DROP TABLE IF EXISTS notes_meta")
        db.execute("CREATE TABLE notes_meta (key TEXT PRIMARY KEY, value) WITHOUT ROWID")
        db.execute("CREATE TABLE notes (path TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER, "
                   "ctime_ns INTEGER, ino INTEGER, oid TEXT, seen_ns INTEGER, record BLOB) "
                   "WITHOUT ROWID")
        db.executemany("INSERT INTO notes_meta VALUES (?, ?)",
                       [("key", self.key), ("gen", gen), ("zdict", zdict)])
        return gen, zdict

    @staticmethod
    def _deflater(zdict: bytes):
        import zlib

        if zdict:
            return zlib.compressobj(_ZLEVEL, zlib.DEFLATED, _ZWBITS, _ZMEM,
                                    zlib.Z_DEFAULT_STRATEGY, zdict)
        return zlib.compressobj(_ZLEVEL, zlib.DEFLATED, _ZWBITS, _ZMEM)


MAX_RECORD_BYTES = 64 << 20  # a note is at most budgets.max_file_bytes; its parse far less


def _entries(notes) -> dict:
    """What ``notes`` (a :class:`Notes`, or a plain dict of notes) holds, by path, without
    decoding any."""
    return notes.entries() if isinstance(notes, Notes) else notes


def _key(note) -> tuple:
    """A note's record's stat key ``(size, mtime_ns, ctime_ns, ino, oid)``: the blob id as
    the note carries it (a note read in the racy margin or as a staged file, or one the
    cache gave out with its record's), None for the rest."""
    return note.size, note.mtime_ns, note.ctime_ns, note.ino, note.oid


# In _Cache._fetched: the note's record was written from the note this process parsed
# (it holds that note's parse and facts), so nothing is fetched for it while the record
# is as stats says (one shared marker, not a tuple per note)
_OWN = ("own",)


class _Sample:
    """The records of ``items`` as a sequence whose record is made only when it is read
    (the dictionary reads a few dozen of them)."""

    def __init__(self, items: list, make):
        self.items, self.make = items, make

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self.make(item) for item in self.items[index]]
        return self.make(self.items[index])


def _sample_dictionary(records) -> bytes:
    """Up to _ZDICT_BYTES of records spread over the vault: what its notes share. Stored
    as it is in the cache, so a credential a sampled record holds (a link to a pasted
    token) is masked in it (any bytes make a dictionary: only the ratio depends on them)."""
    from vaultkit.vault.outbound import mask_credentials

    payloads, size = [], 0
    step = max(1, len(records) // 32)
    for record in records[::step]:
        payloads.append(marshal.dumps(record))
        size += len(payloads[-1])
        if size >= _ZDICT_BYTES:
            break
    sample = b"".join(payloads)[-_ZDICT_BYTES:].decode("utf-8", "surrogateescape")
    return mask_credentials(sample).encode("utf-8", "surrogateescape")


def _table(db, name: str) -> bool:
    return db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                      (name,)).fetchone() is not None
