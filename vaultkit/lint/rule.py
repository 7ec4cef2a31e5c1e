"""The base every rule module builds on, and the context rules read.

A rule is one class in one module under ``vaultkit/lint/rules/``. Its docstring is its
documentation in ruff's shape (``## What it does``, ``## Why is this bad?``,
``## Example``); ``vaultkit rule NAME`` prints it and the rule table (docs/rules.md) is built
from the registry. Rules read the parsed vault and the profile; they never read
files themselves.
"""

from __future__ import annotations

import inspect
import threading
from functools import cached_property
from typing import TYPE_CHECKING, Callable, ClassVar, Iterable

from vaultkit.lint.diagnostics import Diagnostic, Fix

if TYPE_CHECKING:
    from vaultkit.vault.model import Note
    from vaultkit.vault.loader import Vault


# layers whose links are not checked: runtime output (session transcripts), and templates,
# whose `[[文件名]]` are placeholders filled in when the template is used
NOT_LINK_SOURCES = frozenset({"session", "templates"})
ASKING_GIT = "vaultkit-git"  # the threads that ask git beside the rules (engine)


class Context:
    """What a run knows besides the vault: the options and shared, lazily built views."""

    def __init__(self, vault: "Vault", *, staged: bool = False, hook: bool = False,
                 targets: set[str] | None = None, reuse_results: bool = False,
                 notices=None, blobs=None):
        self.vault = vault
        self.profile = vault.profile
        self.settings = vault.settings
        self.staged = staged
        self.hook = hook
        self.targets = targets  # vault-relative paths being reported on; None = all
        self.reuse_results = reuse_results  # may findings come from the results cache?
        # what the caller keeps beyond this run, handed in (None: this run's own): where
        # the "git rules skipped" line was said (vaultkit.vault.gitstate.Notices), the
        # snapshot objects read from git (vaultkit.vault.snapshots.BlobMemo)
        self.notices = notices
        if blobs is not None:
            self.__dict__["blobs"] = blobs

    @cached_property
    def resolver(self):
        return self.vault.resolver

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

    def reads(self, rule: str, path: str, others) -> None:
        """Say that ``rule``'s findings on the note at ``path`` read the notes ``others``
        too (a heading link's target): after a change to one of them, a rule that keeps
        its findings on unchanged notes (``Rule.note_alone``) runs on this note again."""
        others = sorted({o for o in others if o and o != path})
        if others:
            self.__dict__.setdefault("_reads", {}).setdefault(rule, {})[path] = others

    def before(self, rule: str):
        """For a rule keeping its findings on unchanged notes (``Rule.note_alone``), in a
        run after a change: ``(notes changed, what each note's findings read last run,
        notes it found something on last run)``; None in a run over every note."""
        return self.__dict__.get("_before", {}).get(rule)

    def link_source(self, note) -> bool:
        """Whether ``note``'s links are checked: not for session transcripts (runtime
        output holding `[[reply_to_current]]` directives and raw turns)."""
        return self.vault.layer_of(note) not in NOT_LINK_SOURCES

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

        return GitState(self.vault, staged=self.staged or self.hook, notices=self.notices)


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
    #: False for rules whose findings depend on more than the vault's files and config
    #: (git history): their results are never reused from the results cache.
    cacheable: ClassVar[bool] = True
    #: True for a note rule whose findings on a note depend on that note alone (its text,
    #: path and layer), the profile and config, the set of file names, and the notes it
    #: names with ``Context.reads``: after a change, its findings on the notes that did not
    #: change and read none that did are reused (engine.ResultsCache). A rule that reads
    #: other notes in other ways too (inbound links) says with :meth:`touched` which notes a
    #: change moves. False (the default) for one whose reads cannot be named that way (the
    #: bootstrap files, files outside the notes).
    note_alone: ClassVar[bool] = False
    #: True for a note rule that also checks the Markdown files under the profile's
    #: ``secret_scan_folders`` (``Vault.set_aside``), which no other rule reads.
    reads_set_aside: ClassVar[bool] = False

    def check(self, note: "Note", ctx: Context) -> Iterable[Diagnostic]:
        return ()

    def asks_git(self, ctx: Context) -> Iterable[Callable[[], object]]:
        """For a vault rule that is not ``cacheable`` and asks git: what it asks first, as
        calls that keep their answers in ``ctx.git``. The engine makes them, once each, in
        threads beside the rules that run before it, once ``ctx.git`` found the repository;
        ``ctx.git`` waits for them before it answers any other thread."""
        return ()

    def check_vault(self, ctx: Context) -> Iterable[Diagnostic]:
        return ()

    def touched(self, ctx: Context, changed: set[str]) -> Iterable[str]:
        """For a ``note_alone`` rule, after a change to the notes ``changed``: the other
        notes whose findings that change may move though they read none of them (a note
        the changed ones link to now); the rule runs on these again too."""
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
        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def summary(cls) -> str:
        """First sentence of the "What it does" section."""
        doc = cls.doc()
        marker = "## What it does"
        body = doc.split(marker, 1)[1] if marker in doc else doc
        text = " ".join(body.strip().split("\n\n", 1)[0].split())
        return text.split(". ")[0].rstrip(".") + "."
