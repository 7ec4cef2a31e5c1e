"""A vault whose notes are read from the parse cache only when something asks for them.

A warm ``check`` of an unchanged vault needs the listing (to know nothing changed) and the
findings the results cache kept for that listing: it never needs the 10,000 notes. A
:class:`DeferredVault` is a :class:`~vaultkit.vault.loader.Vault` made from a
:class:`~vaultkit.vault.loader.Scan` alone: its root, settings, profile, attachments,
problems and state digest are there at once, and the first use of anything else (its notes,
their facts, the parse cache) loads the vault from that same listing with
:func:`~vaultkit.vault.loader.load_vault`, exactly as an eager open would have.

A commit hook reports on one or two notes: those are made one by one when asked for by
path (``vault.notes[path]``, ``vault.note(path)``), each exactly as the load would make
it (from the parse cache's record, else read), and the vault is loaded only when
something goes through all of its notes (iterating ``vault.notes``); the load then takes
over the notes, facts and cache already made. What a note's listing alone tells (how
many notes there are, their paths, sizes and mtimes) is answered from the listing.
"""

from __future__ import annotations

import _thread
from bisect import bisect_left
from functools import cached_property
from operator import attrgetter, itemgetter

from vaultkit.vault.loader import (Lent, Scan, Vault, _Cache, external_notes, held, load_vault,
                                   one_note, oversize_error)
from vaultkit.vault.model import Attachment

# notes read one by one before loading the whole vault is cheaper (it parses on both cores)
_MAKE_AT_MOST = 64
# what a vault made note by note holds before it is loaded (see DeferredVault._begin)
_BEGINNING = _thread.allocate_lock()  # (the C module: always loaded, unlike threading)
_REL = attrgetter("rel")
_FIRST = itemgetter(0)


class _Notes:
    """A deferred vault's ``notes``: a note asked for by path is made alone; going through
    them all (iterating, ``items()``, ...) loads the vault and is then the loaded dict's."""

    __slots__ = ("_vault", "made", "all")

    def __init__(self, vault: "DeferredVault"):
        self._vault = vault
        self.made: dict = {}  # path -> the note made alone (before the load)
        self.all: dict | None = None  # the loaded notes

    def _loaded(self) -> dict:
        if self.all is None:
            self._vault._load()
        return self.all  # type: ignore[return-value]

    def get(self, path, default=None):
        if self.all is not None:
            return self.all.get(path, default)
        note = self._vault._one(path)
        return default if note is None else note

    def __getitem__(self, path):
        if self.all is not None:
            return self.all[path]
        note = self._vault._one(path)
        if note is None:
            raise KeyError(path)
        return note

    def entry(self, path):
        """The note at ``path`` as held (see Notes.entry): made alone before the load."""
        if self.all is not None:
            return self.all.entry(path)
        return self._vault._one(path)

    def entries(self) -> dict:
        """Every note as held (see Notes.entries): the vault is loaded for them."""
        return self._loaded().entries()

    def __contains__(self, path) -> bool:
        if self.all is not None:
            return path in self.all
        return self._vault._entry(path) is not None

    def __len__(self) -> int:  # (every listed .md file is a note, readable or not)
        return len(self.all) if self.all is not None else len(self._vault._listed)

    def __bool__(self) -> bool:
        return len(self) > 0

    def __iter__(self):
        return iter(self._loaded())

    def keys(self):
        return self._loaded().keys()

    def values(self):
        return self._loaded().values()

    def items(self):
        return self._loaded().items()

    def __eq__(self, other) -> bool:
        return self._loaded() == (other._loaded() if isinstance(other, _Notes) else other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<notes of {self._vault.root}: {len(self)}>"


def _begun(name: str, doc: str) -> property:
    """An attribute of a deferred vault that making notes one by one needs: begun on first
    use (DeferredVault._partial), then as the load sets it."""

    def get(self):
        held = self.__dict__
        return held[name] if name in held else self._partial()[name]

    def put(self, value) -> None:
        self.__dict__[name] = value

    return property(get, put, doc=doc)


class DeferredVault(Vault):
    """A :class:`Vault` that loads its notes on first use (see the module)."""

    def __init__(self, scan: Scan, *, use_cache: bool = True):
        # (Vault.__init__ is not run: the attributes it sets from the notes come with the load)
        self.root = scan.root
        self.settings = scan.settings
        self.profile = scan.settings.profile
        self.problems = scan.problems
        # (the attachments are listed on first use: a warm check asks for none)
        self.state_digest = scan.digest
        self.newest_mtime_ns = scan.newest_mtime_ns
        self.started_ns = scan.started_ns
        self.use_cache = use_cache
        self._scan = scan
        self._map = self.notes = _Notes(self)

    @property
    def loaded(self) -> bool:
        return self._map.all is not None

    @cached_property
    def attachments(self) -> dict[str, Attachment]:
        """The attachments, from the listing (a warm check asks for none: not made before)."""
        return {f.rel: Attachment(f.rel, f.size) for f in self._scan.files
                if not f.rel.lower().endswith(".md")}

    def _partial(self) -> dict:
        """This vault's attributes, with what making notes one by one needs (the parse
        cache, the facts, the bootstrap files): begun on first use (see :meth:`_begin`)."""
        held = self.__dict__
        if "_facts" not in held:
            # (the thread asking git beside the rules may ask at the same moment: one
            # begins, the other finds it begun)
            with _BEGINNING:
                if "_facts" not in held:
                    self._begin()
        return held

    external = _begun("external", "The bootstrap files beside a memory-only vault.")
    _cache = _begun("_cache", "The parse cache, opened (None without it).")
    _facts = _begun("_facts", "The per-note facts held.")
    _dirty = _begun("_dirty", "Whether the cache has records to write.")
    _fact_paths = _begun("_fact_paths", "The notes whose facts this run added to.")

    def _begin(self) -> None:
        """What making notes one by one needs, as the load would make it: the parse cache
        (opened), the facts, and the bootstrap files beside a memory-only vault."""
        scan = self._scan
        self._cache = _Cache(self.store, scan.settings.fingerprint) if self.use_cache else None
        if self._cache is not None:
            self._cache.started_ns = scan.started_ns
            self._cache.by_content = self.__dict__.get("_by_content", frozenset())
        self._dirty = False
        self._fact_paths = set()
        self.external = external_notes(scan.root, scan.settings)
        self._facts = {}  # (last: its presence says the rest is there)

    @cached_property
    def _listed(self) -> dict:
        """Every listed Markdown file: ``{path: FileEntry}``."""
        return {f.rel: f for f in self._scan.files if f.rel.lower().endswith(".md")}

    def _entry(self, path):
        """The listing's entry of the note at ``path``, None if no note is listed there
        (one binary search: a hook asks for a few notes, not a dict of 10,000)."""
        listed = self.__dict__.get("_listed")
        if listed is not None:
            return listed.get(path)
        files = self._scan.files
        if not isinstance(path, str):
            return None
        at = bisect_left(files, path, key=_REL)
        if at < len(files) and files[at].rel == path and path.lower().endswith(".md"):
            return files[at]
        return None

    def _one(self, path: str):
        """The note at ``path`` (None if no note is listed there), made alone."""
        made = self._map.made
        note = made.get(path)
        if note is None:
            f = self._entry(path)
            if f is None:
                return None
            limit = self.settings.profile.budgets.max_file_bytes
            cache = self._cache
            note = made[path] = one_note(f, limit, cache)
            if cache is not None and not note.error and held(cache.stored.get(path)) is not note:
                self._dirty = True  # read, not from the cache: its record is written
        return note

    def _load(self) -> None:
        partial = "_facts" in self.__dict__
        lent = Lent(scan=self._scan, made=self._map.made, cache=self._cache, facts=self._facts,
                    external=self.external) if partial else \
            Lent(scan=self._scan, made=self._map.made)
        vault = load_vault(use_cache=self.use_cache, save=False, lent=lent)
        dirty = partial and self._dirty
        for key, value in vault.__dict__.items():
            if key != "notes":
                self.__dict__.setdefault(key, value)
        self._dirty = dirty or vault._dirty
        self._map.all = vault.notes
        self.__dict__["notes"] = vault.notes  # (the dict itself from now on)

    @property
    def caching(self) -> bool:
        return self.use_cache

    @cached_property
    def store(self):
        """The vault's store (:mod:`vaultkit.vault.store`), opened without the rest of
        the load: a warm run reads its findings from it and no note."""
        from vaultkit.vault.loader import store_for
        from vaultkit.vault.store import NULL

        return store_for(self._scan) if self.use_cache else NULL

    @property
    def paths(self) -> list[str]:
        """Every file's vault path (notes and attachments), from the listing (sorted)."""
        return list(self._scan.paths())

    def note_paths(self) -> list[str]:
        """Every note's path, in the loaded vault's order (by path), from the listing."""
        return super().note_paths() if self.loaded else list(self._scan.note_paths())

    def listed_numbers(self) -> tuple | None:
        """:meth:`listed_states` as four arrays, the sizes, mtimes, ctimes and inodes (the
        listing's :meth:`~vaultkit.vault.loader.Scan.note_numbers`, with what the notes made
        saw); None once the vault is loaded."""
        if self.loaded:
            return None
        numbers = self._scan.note_numbers()
        made = self._map.made
        if made:
            from array import array

            from vaultkit.vault.loader import _put

            notes = self._scan.note_paths()
            numbers = tuple(array("q", a) for a in numbers)
            for path, note in made.items():  # (every note made is a listed one)
                _put(numbers, bisect_left(notes, path), note)
        return numbers

    def note_states(self) -> list[tuple[str, int, int, int, int]]:
        """Every note's ``(path, size, mtime_ns, ctime_ns, ino)`` as the loaded vault's notes
        would carry
        them: the listing's for a note over the size limit or in the parse cache; a note
        that is read (new or changed) is made, since it carries what the read saw. Past a
        few such notes (a checkout rewrote many) the vault is loaded instead."""
        if self.loaded:
            return super().note_states()
        made, limit, cache = self._map.made, self.settings.profile.budgets.max_file_bytes, \
            self._cache
        listed = self._listed
        missed = cache.misses(listed.values()) if cache else list(listed.values())
        unread = [f.rel for f in missed if f.rel not in made and f.size <= limit]
        if len(unread) > _MAKE_AT_MOST:
            self._load()
            return super().note_states()
        for path in unread:
            self._one(path)
        return self.listed_states()

    def listed_states(self) -> list[tuple[str, int, int, int, int]]:
        """Every note's ``(path, size, mtime_ns, ctime_ns, ino)`` as listed, or as read for a
        note made
        (it carries what the read saw); no other note is made, nor the vault loaded."""
        if self.loaded:
            return super().listed_states()
        # (the listing is sorted by path: its notes are, without a dict or a sort)
        out = [(f.rel, f.size, f.mtime_ns, f.ctime_ns, f.ino) for f in self._scan.files
               if f.rel[-3:].lower() == ".md"]
        for path, note in self._map.made.items():  # (every note made is a listed one)
            i = bisect_left(out, path, key=_FIRST)
            out[i] = (path, note.size, note.mtime_ns, note.ctime_ns, note.ino)
        return out

    def newest_listed_ctime_ns(self) -> int | None:
        """The newest ctime among :meth:`listed_states` (or later: attachments count too),
        without making that list; None once the vault is loaded."""
        if self.loaded:
            return None
        newest = self._scan.file_maxima()[1]
        return max([newest, *(note.ctime_ns for note in self._map.made.values())])

    def has_note(self, path: str) -> bool:
        if self.loaded or path.startswith("../"):  # (a bootstrap file beside the vault)
            return super().has_note(path)
        return self._entry(path) is not None

    def assumed_errors(self) -> list[tuple[str, str]] | None:
        """The notes that hold an error, as far as the listing tells (files over the size
        limit), while the notes are not loaded; None once they are (ask them)."""
        if self.loaded:
            return None
        listed = self.__dict__.get("_assumed")
        if listed is None:  # (asked twice by the results cache's key: listed once)
            limit = self.settings.profile.budgets.max_file_bytes
            # (no listed file over the limit, the common case: no note is, said without
            # the notes' own arrays)
            listed = self._assumed = [] if self._scan.file_maxima()[0] <= limit else \
                [(f.rel, oversize_error(f.size, limit)) for f in self._scan.files
                 if f.size > limit and f.rel.lower().endswith(".md")]
        return list(listed)

    def save_cache(self) -> None:
        if self.loaded:
            super().save_cache()
        elif "_facts" in self.__dict__ and self._cache is not None \
                and (self._dirty or self._cache.mend or self._cache.settled):
            # notes made alone: their records (a hook's changed notes), no other touched
            self._cache.save(self._map.made, self._facts, self._fact_paths, complete=False)
            self._dirty = False
            self._fact_paths = set()
