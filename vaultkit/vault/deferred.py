"""A vault whose notes are read from the parse cache only when something asks for them.

A warm ``check`` of an unchanged vault needs the listing (to know nothing changed) and the
findings the results cache kept for that listing: it never needs the 10,000 notes. A
:class:`DeferredVault` is a :class:`~vaultkit.vault.loader.Vault` made from a
:class:`~vaultkit.vault.loader.Scan` alone: its root, settings, profile, attachments,
problems and state digest are there at once, and the first use of anything else (its notes,
their facts, the parse cache) loads the vault from that same listing with
:func:`~vaultkit.vault.loader.load_vault`, exactly as an eager open would have.
"""

from __future__ import annotations

from bisect import bisect_left
from operator import attrgetter

from vaultkit.vault.loader import Scan, Vault, load_vault, oversize_error
from vaultkit.vault.model import Attachment

_REL = attrgetter("rel")


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

    @property
    def loaded(self) -> bool:
        return "notes" in self.__dict__

    def __getattr__(self, name: str):
        # only reached for an attribute not set yet: the notes and what comes with them
        if name.startswith("__") or self.loaded:
            raise AttributeError(name)
        if name == "attachments":  # the listing has them: nothing to load
            self.attachments = {f.rel: Attachment(f.rel, f.size) for f in self._scan.files
                                if not f.rel.lower().endswith(".md")}
            return self.attachments
        self._load()
        return getattr(self, name)

    def _load(self) -> None:
        vault = load_vault(scan=self._scan, use_cache=self.use_cache, save=False)
        for key, value in vault.__dict__.items():
            self.__dict__.setdefault(key, value)

    @property
    def caching(self) -> bool:
        return self.use_cache

    @property
    def paths(self) -> list[str]:
        """Every file's vault path (notes and attachments), from the listing."""
        return [f.rel for f in self._scan.files]

    def has_note(self, path: str) -> bool:
        if self.loaded or path.startswith("../"):  # (a bootstrap file beside the vault)
            return super().has_note(path)
        files = self._scan.files  # (sorted by path: one binary search, no set of 10,000)
        at = bisect_left(files, path, key=_REL)
        return at < len(files) and files[at].rel == path and path.lower().endswith(".md")

    def assumed_errors(self) -> list[tuple[str, str]] | None:
        """The notes that hold an error, as far as the listing tells (files over the size
        limit), while the notes are not loaded; None once they are (ask them)."""
        if self.loaded:
            return None
        listed = self.__dict__.get("_assumed")
        if listed is None:  # (asked twice by the results cache's key: listed once)
            limit = self.settings.profile.budgets.max_file_bytes
            listed = self._assumed = [(f.rel, oversize_error(f.size, limit))
                                      for f in self._scan.files
                                      if f.size > limit and f.rel.lower().endswith(".md")]
        return list(listed)

    def save_cache(self) -> None:
        if self.loaded:
            super().save_cache()
