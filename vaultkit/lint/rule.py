"""The base every rule module builds on, and the context rules read.

A rule is one class in one module under ``vaultkit/lint/rules/``. Its docstring is its
documentation in ruff's shape (``## What it does``, ``## Why is this bad?``,
``## Example``); ``vaultkit rule NAME`` prints it and the rule table (docs/rules.md) is built
from the registry. Rules read the parsed vault and the profile through the
:class:`Context`, which records what each read (what the results cache's reuse rests on);
they never read files themselves, and declare nothing about caching.
"""

from __future__ import annotations

import threading
from functools import cached_property

from vaultkit.lint.diagnostics import Diagnostic, Fix
from vaultkit.lint.reads import (EVERYTHING, READ_ALIAS, READ_INBOUND, READ_NOTE, UNKEYED,
                                 alias_holders, inbound)

TYPE_CHECKING = False  # (typing's own flag costs importing typing)
if TYPE_CHECKING:
    from typing import Callable, ClassVar, Iterable
    from vaultkit.vault.model import Note
    from vaultkit.vault.loader import Vault


# layers whose links are not checked: runtime output (session transcripts), and templates,
# whose `[[文件名]]` are placeholders filled in when the template is used
NOT_LINK_SOURCES = frozenset({"session", "templates"})
ASKING_GIT = "vaultkit-git"  # the threads that ask git beside the rules (engine)
# A folder's own page, which explains the folder and is none of its notes: GitHub shows a
# folder's README.md when the folder is browsed, VitePress and Hugo make index.md (Hugo's
# section: _index.md) the folder's page; real workspaces keep them in memory/people/ and
# the like (docs/precision.md cites the sources).
FOLDER_PAGES = frozenset({"readme.md", "index.md", "_index.md"})


class Context:
    """What a run knows besides the vault: the options, shared lazily built views, and a
    record of what each rule read while it ran.

    A rule reaches the vault only through this context. The engine says which rule runs on
    which note (:meth:`reading`); each accessor below notes in :attr:`read` the input it
    gave, and the results cache reuses a finding only while none of the inputs its rule
    read there changed (``engine.ResultsCache``). What the accessors give without a record
    is keyed by the results cache's context (the settings and profile, the set of file
    names, the files read beside the vault): a change there means a full run. Reaching the
    whole vault (:attr:`vault`) records that the findings read everything; git and the
    clock record that they cannot be keyed, and then none of the rule's findings is kept.
    """

    def __init__(self, vault: "Vault", *, staged: bool = False, hook: bool = False,
                 targets: set[str] | None = None, reuse_results: bool = False,
                 notices=None, blobs=None):
        self._vault = vault
        self.profile = vault.profile
        self.settings = vault.settings
        self.staged = staged
        self.hook = hook
        self.targets = targets  # vault-relative paths being reported on; None = all
        self.reuse_results = reuse_results  # may findings come from the results cache?
        # (rule, note path or None) being run, on the thread running the rules only: the
        # thread asking git beside them records nothing
        self._at = threading.local()
        # (set on this thread, the one that runs the rules: a lookup that misses on a
        # threading.local formats an AttributeError, ~1.5 µs, and a cold check at 10,000
        # notes looks ~100,000 times; another thread misses and reads None all the same)
        self._at.now = None
        #: rule -> note path (None: a vault rule) -> the inputs its findings there read
        self.read: dict[str, dict[str | None, set[str]]] = {}
        self._unkeyed: set[str] = set()  # the rules that read git or the clock
        # what the caller keeps beyond this run, handed in (None: this run's own): where
        # the "git rules skipped" line was said (vaultkit.vault.gitstate.Notices), the
        # snapshot objects read from git (vaultkit.vault.snapshots.BlobMemo)
        self.notices = notices
        if blobs is not None:
            self.__dict__["blobs"] = blobs

    # -- the record ---------------------------------------------------------------------

    def reading(self, rule: str | None, path: str | None = None) -> None:
        """Say which rule now runs, and on which note (None: the rule runs once, or none)."""
        self._at.now = (rule, path) if rule is not None else None

    def _record(self, what: str) -> None:
        at = getattr(self._at, "now", None)
        if at is not None:
            self.read.setdefault(at[0], {}).setdefault(at[1], set()).add(what)
            if what == UNKEYED:
                self._unkeyed.add(at[0])

    def _record_note(self, path: str) -> None:
        """Another note read (the note being checked is always an input)."""
        at = getattr(self._at, "now", None)
        if at is not None and path != at[1]:
            self.read.setdefault(at[0], {}).setdefault(at[1], set()).add(READ_NOTE + path)

    def unkeyed(self, rule: str) -> bool:
        """Whether ``rule`` read something no key covers (git, the clock) in this run."""
        return rule in self._unkeyed

    # -- the vault, as the rules read it ------------------------------------------------

    @property
    def vault(self) -> "Vault":
        """The whole vault: findings that reach it are taken to read every note."""
        self._record(EVERYTHING)
        return self._vault

    @property
    def resolver(self):
        """The vault's resolver, whole (see :meth:`resolve_all` for a rule's links)."""
        self._record(EVERYTHING)
        return self._resolver

    @cached_property
    def _resolver(self):
        return self._vault.resolver

    def note(self, path: str) -> "Note | None":
        """The note at ``path`` (None for no note): recorded as read."""
        self._record_note(path)
        return self._vault.note(path)

    def has_note(self, path: str) -> bool:
        """Whether ``path`` is a note: the set of names, part of the results cache's key."""
        return self._vault.has_note(path)

    def note_paths(self):
        """Every note's path (the names alone)."""
        return self._vault.note_paths()

    def layer_of(self, note: "Note") -> str | None:
        """The note's layer: by its path and, for a header layer, its opening lines."""
        self._record_note(note.path)
        return self._vault.layer_of(note)

    def type_of(self, note: "Note") -> str | None:
        """The note's type, by its folder; None for the folder's own page
        (:meth:`folder_page`): a README.md in memory/people/ is no person note."""
        type_name = self._vault.type_of(note)
        if type_name is not None and self.folder_page(note):
            return None
        return type_name

    @staticmethod
    def folder_page(note: "Note") -> bool:
        """Whether ``note`` is its folder's README.md, index.md or _index.md (any case)."""
        path = note.path
        return path[path.rfind("/") + 1:].lower() in FOLDER_PAGES

    def claimed(self, note: "Note") -> bool:
        """True when a named layer (not a fallback) claims ``note``."""
        self._record_note(note.path)
        return self._vault.claimed(note)

    @property
    def root(self):
        return self._vault.root

    def entries(self, note: "Note") -> list:
        """The entries the entry rules judge in ``note`` (vaultkit.vault.entries)."""
        self._record_note(note.path)
        return self._entries.note_entries(self._vault, note)

    def entry_level(self, note: "Note"):
        self._record_note(note.path)
        return self._entries.entry_level(self._vault, note)

    def secrets(self, note: "Note") -> list:
        """A note's credentials (a fact cached with the note)."""
        self._record_note(note.path)
        return self._secretscan.secrets_of(self._vault, note)

    def conflicts(self, note: "Note") -> list:
        """The opening and closing lines (1-based) of each conflict git left in ``note``
        outside its code blocks (a fact cached with the note)."""
        self._record_note(note.path)
        return self._conflicts.conflicts_of(self._vault, note)

    # The modules the per-note accessors call, imported once per run rather than in each
    # call: a ``from`` import in a function looks for the module's ``__path__`` and
    # formats the AttributeError of its absence, ~2 µs, 40,000 times in a cold check of
    # 10,000 notes. Still imported on first use (a hook's rules may need neither).
    @cached_property
    def _entries(self):
        from vaultkit.vault import entries

        return entries

    @cached_property
    def _conflicts(self):
        from vaultkit.vault import conflicts

        return conflicts

    @cached_property
    def _secretscan(self):
        from vaultkit.vault import secretscan

        return secretscan

    def runtimes(self) -> list:
        """The runtimes detected for the vault (part of the results cache's key)."""
        from vaultkit.vault.runtimes import detected

        return detected(self._vault)

    def nested_vaults(self) -> tuple[str, ...]:
        """The subfolders that are Obsidian vaults of their own (part of the key)."""
        from vaultkit.links.obsidian import nested_vaults

        return nested_vaults(self._vault)

    @cached_property
    def daily_notes_folder(self) -> str | None:
        """Where Obsidian's daily notes go (its settings are part of the key)."""
        from vaultkit.links.obsidian import daily_notes_folder

        return daily_notes_folder(self._vault.root)

    def index_path(self) -> str:
        from vaultkit.links.indexgen import index_path

        return index_path(self._vault)

    def resolve_all(self, note: "Note") -> list:
        """Where each of ``note``'s links leads. Which note a name means depends on the names
        alone; a heading or block link reads its target's headings and block ids."""
        resolved = self._resolver.resolve_all(note)
        if getattr(self._at, "now", None) is not None:
            for link, res in zip(note.links, resolved):
                if link.subpath and res.path:
                    self._record_note(res.path)
        return resolved

    def link_text(self, path: str, source: str = "") -> str:
        """The shortest link text that leads from ``source`` to ``path`` (by the names)."""
        return self._resolver.link_text(path, source)

    def alias_holders(self, name: str) -> list[str]:
        """The notes whose ``aliases`` hold ``name`` (case-folded), in the vault's order:
        recorded with the answer, which the next run asks again."""
        key = name.strip().casefold()
        found = alias_holders(self._vault, key, self.reuse_results and self.targets is None)
        self._record(READ_ALIAS + key + "\0" + "\0".join(found))
        return found

    def inbound(self, note: "Note") -> list[str]:
        """The other notes linking to ``note`` or writing out its path (INDEX.md left out):
        recorded with the answer, which the next run asks again."""
        found = inbound(self._vault, note.path)
        self._record(READ_INBOUND + note.path + "\0" + "\0".join(found))
        return found

    def today(self):
        """Today's date: findings that read it cannot be keyed."""
        import datetime as dt

        self._record(UNKEYED)
        return dt.date.today()

    @property
    def snapshots(self):
        """vaultkit.vault.snapshots: the snapshot store is no file the key lists."""
        self._record(UNKEYED)
        from vaultkit.vault import snapshots

        return snapshots


    @cached_property
    def _not_link(self):
        """One search per distinct ``[[...]]`` text: the phrases as one regex when they are
        all regexes (the profile's are), else the shared phrase matcher."""
        phrases = self.profile.phrases.not_link
        if not phrases:
            return None
        if all(p.startswith("re:") for p in phrases):
            import re

            return re.compile("|".join(f"(?:{p[3:]})" for p in phrases), re.IGNORECASE).search
        from vaultkit.vault.phrases import matcher

        return matcher(phrases).find

    @cached_property
    def _not_link_memo(self) -> dict[str, bool]:
        return {}

    def link_source(self, note) -> bool:
        """Whether ``note``'s links are checked: not for session transcripts (runtime
        output holding `[[reply_to_current]]` directives and raw turns)."""
        return self.layer_of(note) not in NOT_LINK_SOURCES

    def is_link(self, link) -> bool:
        """False for ``[[...]]`` text the profile says is no link (``not_link``): reply
        directives, scraped ``[[email&#160;protected]]``, JSON arrays outside code."""
        find = self._not_link
        if find is None or link.kind != "wiki":
            return True
        inner = link.raw.lstrip("!")[2:-2].strip()  # as written: [[email&#160;protected]]
        memo = self._not_link_memo
        hit = memo.get(inner)
        if hit is None:
            hit = memo[inner] = find(inner) is None
        return hit

    @property
    def git(self):
        """The run's :class:`~vaultkit.vault.gitstate.GitState`. While the engine asks git
        beside the rules (``asking_git``, a thread: see ``Rule.asks_git``), any other
        thread asking waits for it first: git is never asked twice nor at once."""
        self._record(UNKEYED)
        asking = self.asking_git
        if asking is not None and threading.current_thread().name != ASKING_GIT:
            asking.join()
            self.asking_git = None
        return self._git

    asking_git = None  # the engine's thread asking git beside the rules (its name: ASKING_GIT)

    @cached_property
    def blobs(self):
        """The snapshot objects read from git (a :class:`~vaultkit.vault.snapshots.BlobMemo`):
        the caller's, else this run's, which its two snapshot rules share."""
        from vaultkit.vault.snapshots import BlobMemo

        return BlobMemo()

    @cached_property
    def _git(self):
        from vaultkit.vault.gitstate import GitState

        return GitState(self._vault, staged=self.staged or self.hook, notices=self.notices)


class Rule:
    """Base class. Subclasses set the class attributes and override a check method."""

    name: ClassVar[str]
    code: ClassVar[str]
    severity: ClassVar[str] = "error"
    fixable: ClassVar[bool] = False
    #: False for a rule that runs only when selected by name, code or prefix (``select``,
    #: ``extend-select``, ``--select ALL``): advice to the writer, or a convention most
    #: vaults do not keep, that a whole-vault run would mostly report falsely.
    default: ClassVar[bool] = True
    #: "note" rules run per note (only on the notes being reported on);
    #: "vault" rules run once and may report anywhere.
    scope: ClassVar[str] = "note"
    #: True for a note rule that also checks the Markdown files under the profile's
    #: ``secret_scan_folders`` (``Vault.set_aside``), which no other rule reads.
    reads_set_aside: ClassVar[bool] = False

    def check(self, note: "Note", ctx: Context) -> Iterable[Diagnostic]:
        return ()

    def asks_git(self, ctx: Context) -> Iterable[Callable[[], object]]:
        """For a vault rule that asks git: what it asks first, as
        calls that keep their answers in ``ctx.git``. The engine makes them, once each, in
        threads beside the rules that run before it, once ``ctx.git`` found the repository;
        ``ctx.git`` waits for them before it answers any other thread."""
        return ()

    def check_vault(self, ctx: Context) -> Iterable[Diagnostic]:
        return ()

    def diag(self, path: str, line: int | None, column: int | None, message: str,
             fix: Fix | None = None) -> Diagnostic:
        return Diagnostic(self.name, self.code, self.severity, path, line, column, message,
                          fixable=self.fixable and fix is not None, fix=fix)

    @classmethod
    def default_label(cls) -> str:
        """The severity, as the rule tables show it, with "off by default" when it is."""
        return cls.severity if cls.default else f"{cls.severity}, off by default"

    @classmethod
    def doc(cls) -> str:
        import inspect  # (only the docs and reports ask: with ast, dis, tokenize, ~8 ms)

        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def summary(cls) -> str:
        """First sentence of the "What it does" section."""
        doc = cls.doc()
        marker = "## What it does"
        body = doc.split(marker, 1)[1] if marker in doc else doc
        text = " ".join(body.strip().split("\n\n", 1)[0].split())
        return text.split(". ")[0].rstrip(".") + "."
