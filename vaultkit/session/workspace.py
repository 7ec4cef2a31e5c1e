"""One vault root and what outlives one call on it: settings, listing, warm vault, the
search index, deferred cache writes.

``Workspace.check(paths, selection, overlay)`` answers what ``vaultkit check PATHS`` would
print if each overlay text (an editor's unsaved buffer, by vault path) were saved: the
same rules on the same notes, the overlay's parsed by the same pure ``parse_note``, the
same baseline. Nothing here is process-wide: two workspaces (two vaults open in one
editor) share nothing but the modules.
"""

from __future__ import annotations

import os
import threading
from functools import cached_property
from pathlib import Path

from vaultkit.vault.gitstate import NULL_OID, Change, GitState, Notices
from vaultkit.vault.store import RACY_NS, Later

SAVE_EVERY_S = 60.0  # the parse cache is written for the command line at most this often


class Workspace:
    """The vault at ``root``, kept warm between calls. Not thread-safe: one caller at a
    time (the language server and the MCP server call it from one worker thread), but
    :meth:`settings` may be called from any thread (the MCP server's appends run beside
    that worker)."""

    def __init__(self, root: Path, *, profile: str | None = None, use_cache: bool = True):
        self.root = Path(root)
        self.profile = profile
        self.use_cache = use_cache
        self._vault = None
        self._listing = None
        self._settings = None
        self._settings_files: tuple[Path, ...] = ()
        self._settings_stamp: tuple = ()
        self._settings_read = 0
        self._saved_at = _monotonic()
        self._links_for = None  # (vault, {name key: paths linking to that name})
        self._settings_lock = threading.Lock()
        self._index = None  # the search index, opened on first use
        self._members: dict[str, bool] = {}  # path -> in the memory set, for _members_for
        self._members_for = None
        self.baselined = 0  # findings the baseline accepted on the last check
        self.notices = Notices()  # the "git rules skipped" line: said once per workspace
        self._pinned = None  # the listing a forked command lists from (see pin())
        # when the caches are written (store.Later), handed with the store and the snapshot
        # memo: a process answering a request holds the writes until the answer is sent
        self.later = Later()

    # -- what lives longer than one call -------------------------------------------

    def settings(self):
        """The vault's settings, read again only when vaultkit.toml or its pack changed."""
        with self._settings_lock:
            return self._read_settings()

    def _read_settings(self):
        import time

        from vaultkit.vault.profile import (CONFIG_NAME, ConfigError, _profile_name,
                                            find_profile, load_settings)

        if self._settings is not None and self._settings_stamp == stamps(self._settings_files) \
                and all(s is None or max(s[1], s[2]) < self._settings_read - RACY_NS
                        for s in self._settings_stamp):
            return self._settings
        read = time.time_ns()
        settings = load_settings(self.root, self.profile, use_cache=self.use_cache)
        config = self.root / CONFIG_NAME
        try:
            data = config.read_bytes() if config.is_file() else None
            pack = find_profile(self.profile or _profile_name(config, data), self.root)
        except (OSError, ConfigError):  # changing right now: read again next time
            self._settings = None
            return settings
        self._settings, self._settings_read = settings, read
        self._settings_files = (config, pack)
        self._settings_stamp = stamps(self._settings_files)
        return settings

    def scan(self):
        """The listing: the loader's warm listing (only what changed is listed again)."""
        from vaultkit.vault.loader import WarmListing

        if self._listing is None:
            self._listing = WarmListing()
        return self._listing.scan(self.root, self.settings())

    @cached_property
    def blobs(self):
        """The snapshot objects read from git (:class:`~vaultkit.vault.snapshots.BlobMemo`),
        kept between calls: an object never changes, so it is read from git once."""
        from vaultkit.vault.snapshots import BlobMemo

        return BlobMemo(later=self.later)

    @cached_property
    def store(self):
        """The vault's store of caches (:mod:`vaultkit.vault.store`; with ``--no-cache``
        one that holds nothing), handed with every listing :meth:`listing_of` gives: the
        answering process of ``vaultkit watch`` keeps parsed in it what its children read
        (``Store.keep``), and each child, forked with it, starts from that."""
        from vaultkit.vault.store import NULL, Store

        return Store(self.root, later=self.later) if self.use_cache else NULL

    def pin(self, scan) -> None:
        """From now on, a command run for this workspace (:meth:`listing_of`) lists from
        ``scan``, a listing of :meth:`scan`: a process forked to run one command must not
        read the file events its parent goes on reading."""
        self._pinned = scan

    def listing_of(self, root: Path, settings):
        """The listing of the vault at ``root`` (resolved) under ``settings`` that a
        command run for this workspace takes (the loader's ``scan_vault(warm=...)``): the
        warm one, or the pinned one; None for another vault, or other settings than those
        pinned (another ``--profile``: its own listing)."""
        from vaultkit.core.plain import replace

        if root != self.root and root != self.root.resolve():
            return None
        pinned = self._pinned
        if pinned is None:
            from vaultkit.vault.loader import WarmListing

            if self._listing is None:
                self._listing = WarmListing()
            return replace(self._listing.scan(self.root, settings), store=self.store)
        if settings.fingerprint != pinned.settings.fingerprint:
            return None
        return replace(pinned, settings=settings, store=self.store)

    def vault(self, scan=None):
        """The vault as it is on disk now (or as ``scan``, a listing of :meth:`scan`, saw
        it): the warm one when nothing changed."""
        from vaultkit.vault.loader import Lent, load_vault

        scan = scan or self.scan()
        v = self._vault
        if v is not None and v.settings.fingerprint == scan.settings.fingerprint \
                and v.state_digest == scan.digest \
                and scan.newest_mtime_ns < v.started_ns - RACY_NS and racy_same(v, scan):
            return v
        self._vault = load_vault(use_cache=self.use_cache, save=False,
                                 lent=Lent(scan=scan, previous=v))
        return self._vault

    def overlaid(self, overlay: dict[str, str] | None, base=None):
        """The vault with each overlay text in place of its file (nothing written). A path
        the vault does not list (a note never saved) is not part of it. ``base``: the
        vault to overlay, when the caller opened it (``check --fix``/``--diff``'s passes
        over their fixed texts), instead of the warm one."""
        vault = base if base is not None else self.vault()
        if not overlay:
            return vault
        from vaultkit.lint.engine import encode_note_text
        from vaultkit.vault.loader import oversize_error
        from vaultkit.vault.model import Note
        from vaultkit.vault.parse import parse_note

        limit = vault.profile.budgets.max_file_bytes
        changed = {}
        for path, text in overlay.items():
            old = vault.note(path)
            if old is None:
                continue
            # saved as the editor saves it: UTF-8, with the byte-order mark the file had
            data = encode_note_text(old, text) if not old.error else text.encode("utf-8")
            if len(data) > limit:
                changed[path] = Note(path=path, size=len(data), mtime_ns=old.mtime_ns,
                                     error=oversize_error(len(data), limit))
            else:
                changed[path] = parse_note(path, data, size=len(data), mtime_ns=old.mtime_ns)
        if not changed:
            return vault
        return _with_changed(vault, changed)

    # -- the calls -----------------------------------------------------------------

    def check(self, paths=None, selection=None, overlay: dict[str, str] | None = None):
        """The findings ``vaultkit check PATHS`` reports (baseline applied) with the
        overlay's texts as if saved. ``paths``: vault paths of files or folders (None:
        everything)."""
        diags, _ = self._check(paths, selection, overlay)
        return diags

    def check_on(self, vault, paths=None, selection=None):
        """:meth:`check` on ``vault``, the one :meth:`vault` just gave this caller (which
        read it first, to vet its arguments): the vault listed once per call."""
        diags, _ = self._check(paths, selection, None, vault=vault)
        return diags

    def check_around(self, path: str, overlay: dict[str, str] | None = None, also=()):
        """``(findings, vault, paths)``: :meth:`check` of ``path``, of the notes that depend
        on it (:meth:`dependents`) and of ``also``, on one listing of the vault."""
        vault = self.overlaid(overlay)
        paths = {path, *also} | self.dependents(path, overlay, vault=vault)
        paths = {p for p in paths if vault.has_note(p)} | {path}
        diags, _ = self._check(sorted(paths), None, overlay, vault=vault)
        return diags, vault, paths

    def _check(self, paths, selection, overlay, *, fixers: bool = False, vault=None):
        from vaultkit.lint.engine import run_rules, select_rules
        from vaultkit.lint.rule import Context

        vault = vault if vault is not None else self.overlaid(overlay)
        rules = select_rules(vault.settings, selection)
        if fixers:
            rules = [r for r in rules if r.fixable]
        targets = self.targets(vault, paths)
        # the results cache knows files by their stat: an overlay is no file
        ctx = Context(vault, targets=targets,
                      reuse_results=self.use_cache and not overlay and not fixers,
                      notices=self.notices, blobs=self.blobs)
        if overlay:
            ctx.__dict__["_git"] = OverlayGitState(vault, overlay, notices=self.notices)
        diags = run_rules(ctx, rules)
        self._save_later()
        baseline = self.baseline(vault)
        self.baselined = 0
        if baseline is not None:
            filtered = baseline.filter(diags)
            diags, self.baselined = filtered.shown, filtered.hidden
        return diags, vault

    def targets(self, vault, paths):
        """Vault paths to report on (None: everything): files, and folders' files."""
        if paths is None:
            return None
        out: set[str] = set()
        listed = vault.paths + list(vault.external)
        for rel in paths:
            rel = rel.strip("/")
            if rel == "":
                return None
            if vault.has_note(rel) or rel in vault.attachments:
                out.add(rel)
                continue
            prefix = rel + "/"
            below = [p for p in listed if p.startswith(prefix)]
            out.update(below or [rel])
        return out

    def baseline(self, vault):
        """The baseline ``vaultkit check`` reads by default, or None when there is none."""
        from vaultkit.lint.baseline import Baseline, baseline_path

        baseline = Baseline.load(baseline_path(vault), vault.root)
        return baseline if baseline.exists else None

    def fixed_text(self, path: str, overlay: dict[str, str] | None = None,
                   key: str | None = None, selection=None) -> str | None:
        """The text of ``path`` after ``check --fix``'s fixes: of the finding whose
        :func:`finding_key` is ``key`` alone, or every fix of the file, pass after pass as
        ``--fix`` applies them. None when nothing would change."""
        from vaultkit.lint.engine import apply_fixes

        overlay = dict(overlay or {})
        start = None
        for _ in range(10 if key is None else 1):  # (--fix's passes: FixPlan.MAX_PASSES)
            diags, vault = self._check([path], selection, overlay, fixers=True)
            note = vault.note(path)
            if note is None or note.error:
                return None
            if start is None:
                start = note.text
            items = [d for d in diags if d.path == path and d.fix is not None]
            if key is not None:
                items = [d for d in items if finding_key(d) == key][:1]
            if vault.profile.layer_of(path) in ("journal", "archive"):
                items = outside_committed_lines(GitState(vault), path, note.text, items)
            new_text, _ = apply_fixes(note, items)
            if new_text == note.text:
                break
            overlay[path] = new_text
        final = overlay.get(path)
        return final if final is not None and final != start else None

    def accept(self, path: str, key: str, overlay: dict[str, str] | None = None):
        """Record the finding on ``path`` whose :func:`finding_key` is ``key`` in the
        vault's baseline (written atomically, as ``check --write-baseline`` writes it),
        beside what it holds; the baseline's path."""
        from vaultkit.core.errors import VaultkitError
        from vaultkit.lint.baseline import NOT_BASELINED, Baseline, baseline_path

        found = [d for d in self.check([path], overlay=overlay) if finding_key(d) == key]
        if not found:
            raise VaultkitError(f"{path}: that finding is no longer there; nothing recorded")
        finding = found[0]
        if finding.rule in NOT_BASELINED:
            raise VaultkitError(f"{finding.rule} describes a change being committed, not the "
                                "vault; it is never baselined")
        vault = self.vault()
        baseline = Baseline.load(baseline_path(vault), vault.root)
        baseline.add([finding])
        baseline.save()
        return baseline.path

    def link_at(self, path: str, line: int, column: int,
                overlay: dict[str, str] | None = None):
        """``(link, resolution)`` of the link of ``path`` at 1-based ``line`` and
        ``column`` (a character of the line), resolved by the vault's one resolver; None
        when no link is there."""
        vault = self.overlaid(overlay)
        note = vault.note(path)
        if note is None or note.error:
            return None
        for link in note.links:
            if link.line == line and link.column <= column < link.column + len(link.raw):
                return link, vault.resolver.resolve(note, link)
        return None

    def runtime_contexts(self, path: str, overlay: dict[str, str] | None = None):
        """What ``vaultkit context`` says (the runtimes detected), when a runtime loads
        ``path``; else None."""
        from vaultkit.vault.runtimes import contexts, detected

        vault = self.overlaid(overlay)
        found = contexts(vault, detected(vault), None)
        if not any(p.path == path for c in found for p in c.pieces):
            return None
        return found

    def dependents(self, path: str, overlay: dict[str, str] | None = None, *,
                   vault=None) -> set[str]:
        """The notes whose findings may change with ``path``'s text: those linking to its
        name (a heading renamed breaks their links), and, for a bootstrap file, the other
        bootstrap files (what a runtime cuts depends on all of them). ``vault``: the
        overlaid vault, when the caller has it."""
        vault = vault if vault is not None else self.overlaid(overlay)
        note = vault.note(path)
        out: set[str] = set()
        if note is None:
            return out
        if vault.layer_of(note) == "bootstrap":
            out.update(n.path for n in vault.bootstrap())
        base = self._vault  # (the one overlaid() just listed)
        if self._links_for is None or self._links_for[0] is not base:
            self._links_for = (base, _by_target_name(base))
        out.update(self._links_for[1].get(_name_key(path), ()))
        out.discard(path)
        return {p for p in out if vault.has_note(p)}

    def save_later(self) -> None:
        """Write the parse cache for the command line's sake, at most once a minute (and at
        :meth:`close`): writing 10,000 notes after every edit would cost more than the call."""
        now = _monotonic()
        if self._vault is not None and now - self._saved_at >= SAVE_EVERY_S:
            self._vault.save_cache()
            self._saved_at = now

    _save_later = save_later

    def search_index(self):
        """The vault's search index, kept open between calls (with its helper thread); in
        memory when the workspace uses no cache."""
        from vaultkit.memory.search import SearchIndex

        if self._index is None:
            self._index = SearchIndex(self.root, helper=True, in_memory=not self.use_cache)
        return self._index

    def memory_notes(self, vault) -> dict:
        """:func:`vaultkit.memory.memset.memory_notes` of ``vault``, each path's membership
        decided once while the settings stay the same (after an edit, the search index
        resyncs without sorting 10,000 paths again)."""
        from vaultkit.memory.memset import MEMORY_MD, in_memory_set

        settings = vault.settings
        if self._members_for is not settings or len(self._members) > 4 * len(vault.notes) + 64:
            self._members, self._members_for = {}, settings
        members = self._members
        out = {}
        notes = vault.notes
        for path in notes:  # (the members decoded from the parse cache, not every note)
            inside = members.get(path)
            if inside is None:
                inside = members[path] = in_memory_set(settings, path)
            if inside:
                out[path] = notes[path]
        # the workspace's MEMORY.md in the memory-only layout, as memory_notes() adds it
        if not vault.profile.memory_prefix and MEMORY_MD not in out:
            ext = vault.external.get("../" + MEMORY_MD)
            if ext is not None:
                out[MEMORY_MD] = ext
        return out

    def close(self) -> None:
        if self._listing is not None:
            self._listing.close()
            self._listing = None
        if self._vault is not None:
            try:
                self._vault.save_cache()
            except OSError:
                pass
        if self._index is not None:
            self._index.close()
            self._index = None
        if "store" in self.__dict__:  # (opened for a listing it handed: see store)
            self.store.close()


def finding_key(d) -> str:
    """A short name of one finding (its fix no part of it), by which an editor hands it
    back: nothing of its message leaves the process but through the output boundary."""
    from vaultkit.core.digests import sha1

    key = "\0".join((d.rule, d.path, str(d.line), str(d.column), d.message))
    return sha1(key.encode("utf-8", "surrogatepass")).hexdigest()[:20]


def _name_key(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return (name[:-3] if name.lower().endswith(".md") else name).casefold()


def _by_target_name(vault) -> dict[str, set[str]]:
    """Each link target's file name (folded, no .md) -> the notes linking to it."""
    out: dict[str, set[str]] = {}
    for path, note in {**vault.notes, **vault.external}.items():
        if note.error:
            continue
        for link in note.links:
            if link.target and not link.external:
                out.setdefault(_name_key(link.target), set()).add(path)
    return out


class _SharedFacts(dict):
    """The per-note facts of a vault with overlay notes (``changed``): a changed note's are
    its own, computed afresh; an unchanged note's are the warm vault's (``base``), read from
    its store when not in memory, and what is computed for them is kept there too: a fact
    is of one note alone and the names (:meth:`Vault.fact`), and those did not change."""

    def __init__(self, base, changed):
        super().__init__()
        self.base, self.changed = base, changed

    def get(self, path, default=None):
        if dict.__contains__(self, path) or path in self.changed:
            return dict.get(self, path, default)
        facts = self.base.facts_of(path)
        return default if facts is None else facts

    def __setitem__(self, path, value):
        dict.__setitem__(self, path, value)
        if path not in self.changed:
            self.base.keep_facts(path, value)


class OverlayGitState(GitState):
    """The git side of a run on a vault with overlay texts: git compares the files on disk
    with HEAD, so an overlay text is one more change (or one less) as it would be saved."""

    def __init__(self, vault, overlay: dict[str, str], *, notices: Notices | None = None):
        super().__init__(vault, notices=notices)
        self.overlay = overlay

    @cached_property
    def changes(self) -> list[Change]:
        found = GitState.changes.func(self)
        if not self.available or not self.has_head:
            return found
        from vaultkit.core.digests import blob_id
        from vaultkit.lint.engine import encode_note_text

        paths = [p for p in self.overlay if self.vault.note(p) is not None
                 and self.repo_path(p) is not None]
        if not paths:
            return found
        head = self._head_oids([self.repo_path(p) for p in paths])
        by_new = {c.new: c for c in found if c.new is not None}
        for path in paths:
            repo = self.repo_path(path)
            old_oid = head.get(repo)
            if old_oid is None:  # not committed: git diff HEAD shows no untracked file
                continue
            note = self.vault.note(path)
            data = encode_note_text(note, note.text) if not note.error else b""
            same = blob_id(data) == old_oid
            change = by_new.get(path)
            if same and change is not None and change.old == path:
                found.remove(change)
            elif not same and change is None:
                found.append(Change("M", path, path, repo, repo, old_oid, NULL_OID))
        return found

    def _head_oids(self, repo_paths: list[str]) -> dict[str, str]:
        proc = self._run(["ls-tree", "-z", "HEAD", "--", *repo_paths])
        out: dict[str, str] = {}
        if proc.returncode != 0:
            return out
        for item in proc.stdout.split(b"\0"):
            meta, _, name = item.partition(b"\t")
            parts = meta.split()
            if len(parts) == 3 and parts[1] == b"blob":
                out[os.fsdecode(name)] = parts[2].decode("ascii")
        return out


def with_notes(vault, changed: dict, facts: dict | None = None):
    """A copy of ``vault`` in which the ``changed`` notes replace theirs (nothing on disk).
    ``facts``: the copy's per-note facts (by default the unchanged notes' of ``vault``)."""
    from vaultkit.vault.loader import Vault

    notes = dict(vault.notes.entries())  # (as held: a note not decoded stays so)
    external = dict(vault.external)
    for path, note in changed.items():
        (external if path in vault.external else notes)[path] = note
    scan = vault.__dict__.get("_scan")
    if scan is not None and not all(vault.has_note(p) for p in changed):
        scan = None  # (a new name: the listing's names, which resolution depends on, differ)
    if facts is None:  # facts of unchanged notes still hold; the changed ones are computed afresh
        facts = {p: f for p, f in vault.held_facts().items() if p not in changed}
    copy = Vault(vault.root, vault.settings, notes, vault.attachments, vault.problems, external,
                 scan=scan, facts=facts)
    # (the vault's own listing's numbers, whether or not its names serve)
    copy.state_digest, copy.newest_mtime_ns = vault.state_digest, vault.newest_mtime_ns
    copy.started_ns = vault.started_ns
    return copy


def _with_changed(vault, changed: dict):
    """``vault`` with the ``changed`` notes (parsed from other bytes) in place of theirs."""
    from vaultkit.links.indexgen import render_as
    from vaultkit.vault.resolve import Resolver

    copy = with_notes(vault, changed, _SharedFacts(vault, changed))
    memo = vault.__dict__.get("_layer_memo")  # (a layer: by path and opening lines)
    if memo is not None:
        copy.__dict__["_layer_memo"] = {p: x for p, x in memo.items() if p not in changed}
    if all(vault.has_note(p) for p in changed):
        # the same names: the warm vault's name tables and its unchanged notes' facts serve
        if "types" in vault.__dict__:  # (a type: by path alone)
            copy.__dict__["types"] = vault.types
        copy.__dict__["resolver"] = Resolver(copy, vault.resolver.tables)
    # INDEX.md as rendered from the files while no changed note shows the index other
    # facts: a keystroke in a body is not a rendering of the whole index
    render_as(copy, vault, changed)
    return copy


def outside_committed_lines(git, path: str, text: str, items: list) -> list:
    """The fixes whose edits all lie after the journal's committed lines.

    The committed lines are those of HEAD's version when the file still starts with
    them; when it no longer does (already rewritten), every line counts as committed.
    """
    from vaultkit.vault.gitstate import first_change, split_lines

    committed = git.committed_text(path)
    if committed is None:
        return items
    if first_change(committed, text) is not None:
        return []
    count = len(split_lines(committed)[0])
    end = 0
    for _ in range(count):  # the end of the last committed line in the current text
        nl = text.find("\n", end)
        end = len(text) if nl < 0 else nl + 1
    return [d for d in items if all(e.start >= end for e in d.fix.edits)]


def _monotonic() -> float:
    import time

    return time.monotonic()


def racy_same(vault, scan) -> bool:
    """Whether every note of ``scan`` whose ctime lies within the racy margin of when
    ``vault`` was listed still holds the bytes that vault read (their blob ids: a second
    write in that clock tick need not move the ctime)."""
    ctimes = scan.note_numbers()[2]
    limit = vault.started_ns - RACY_NS
    if max(ctimes, default=0) < limit:
        return True
    paths = scan.note_paths()
    return vault.same_bytes([paths[i] for i, ctime in enumerate(ctimes) if ctime >= limit])


def stamps(paths) -> tuple:
    """``(size, mtime_ns, ctime_ns, inode)`` of each file, None for one that is missing."""
    out = []
    for p in paths:
        try:
            st = os.stat(p)
        except OSError:
            out.append(None)
        else:
            out.append((st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino))
    return tuple(out)

