"""Run the selected rules over a vault and produce one sorted list of diagnostics.

Selection (``select``/``ignore`` from the command line over ``vaultkit.toml``),
severity overrides, per-file ignores and suppression comments are applied here,
once, for every rule alike.
"""

from __future__ import annotations

import fnmatch
import re
from types import SimpleNamespace

from vaultkit.lint.diagnostics import SEVERITY_RANK, Diagnostic, Edit
from vaultkit.core.errors import VaultkitError
from vaultkit.core.plain import FRESH
from vaultkit.vault.model import Note, Suppression
from vaultkit.vault.loader import decoded
from vaultkit.lint.rule import ASKING_GIT, Context, Rule
from vaultkit.lint.rules import known, matches, rule_refs, unknown_rule_message

TYPE_CHECKING = False  # (typing's own flag costs importing typing)
if TYPE_CHECKING:  # (names for annotations only)
    from typing import Iterable, Sequence


class Selection:
    """The rules asked for on the command line: --select, --ignore, --extend-select."""

    _fields = ("select", "ignore", "extend_select")
    select: list[str] | None
    ignore: list[str]
    extend_select: list[str]

    def __init__(self, select=None, ignore=FRESH, extend_select=FRESH):
        self.select = select
        self.ignore = [] if ignore is FRESH else ignore
        self.extend_select = [] if extend_select is FRESH else extend_select


def select_rules(settings, cli: Selection | None = None) -> list[Rule]:
    """The rules a run uses: command line over config over every rule on by default."""
    config = settings.config
    cli = cli or Selection()
    select = cli.select if cli.select is not None else config.select
    ignore = list(config.ignore) + list(cli.ignore)
    extend = list(config.extend_select) + list(cli.extend_select)
    for key in (cli.select or []) + list(cli.ignore) + list(cli.extend_select):
        if not known(key):
            raise VaultkitError(unknown_rule_message(key))
    for key in ((config.select or []) + list(config.ignore) + list(config.extend_select)
                + list(config.severity)
                + [k for keys in config.per_file_ignores.values() for k in keys]):
        if not known(key):
            raise VaultkitError(f"vaultkit.toml: {unknown_rule_message(key)}")
    chosen = []
    for rule in rule_refs():  # (a rule's module is imported when it runs)
        # with nothing selected, the rules on by default; a rule off by default runs when
        # a selector names it (its name, code, a prefix, ALL)
        selected = rule.default if select is None else any(matches(rule, k) for k in select)
        selected = selected or any(matches(rule, k) for k in extend)
        if selected and not any(matches(rule, k) for k in ignore):
            chosen.append(rule)
    return chosen


def run_rules(ctx: Context, rules: Sequence[Rule]) -> list[Diagnostic]:
    vault = ctx.vault
    targets = ctx.targets
    # a commit hook's staged files are known by their bytes, not their stat (a copy can put
    # the size and mtime back): the parse cache's records and the results cache's findings
    staged = sorted(targets) if ctx.hook and targets else None
    if staged and vault.caching:
        vault.by_content(staged)
    results = ResultsCache(vault, staged) if ctx.reuse_results and vault.caching else None
    out: list[Diagnostic] = []
    from vaultkit.core.progress import Progress  # shown on a terminal only

    listed: list[list[Note]] = []

    def notes() -> list[Note]:
        """The notes reported on, listed when a note rule first runs (not for findings the
        results cache has: then the notes are not even loaded). As the vault holds them: a
        note in the parse cache is decoded when a rule runs on it (``decoded``), not for a
        rule whose findings on it are kept."""
        if not listed:
            if targets is None:
                chosen = list(vault.notes.entries().values()) + list(vault.external.values())
            else:  # (in the vault's order, without going through its other notes)
                notes = vault.notes
                chosen = [notes[p] for p in sorted(targets) if p in notes]
                chosen += [n for p, n in vault.external.items() if p in targets]
            listed.append(chosen)
        return listed[0]

    ctx.asking_git = _ask_git_beside(ctx, rules, results)  # (ctx.git waits for it)
    by_note = _run_note_rules(ctx, rules, notes, results, targets)
    with Progress("running rules", len(rules)) as progress:
        for rule in rules:
            progress.advance()
            ran = by_note.pop(rule.name, None)
            out.extend(ran if ran is not None else _run_rule(ctx, rule, notes, results, targets))
    if ctx.asking_git is not None:
        ctx.asking_git.join()
        ctx.asking_git = None
    found = _postprocess(ctx, out, results)
    if results is not None:
        results.save()
    return found


def _ask_git_beside(ctx: Context, rules: Sequence[Rule], results=None):
    """A thread asking git now what the git rules ask first (:meth:`Rule.asks_git`), while
    the rules before them run; the first of them to use ``ctx.git`` waits for it (so does
    any rule), so nothing is asked twice nor at once. None when no rule asks git."""
    # (only the vault rules about to run can ask: their modules are imported anyway, and a
    # rule whose findings the results cache has is neither imported nor run)
    asking = [rule for rule in rules if rule.scope == "vault"
              and (results is None or not results.has(rule.name))
              and type(getattr(rule, "rule", rule)).asks_git is not Rule.asks_git]
    if not asking:
        return None
    import threading

    def quietly(call) -> None:
        try:
            call()
        except Exception:  # (the rule asks again, and says what went wrong)
            pass

    def ask() -> None:
        try:
            if not ctx.git.available:
                return
            calls: list = []
            for rule in asking:
                calls += [call for call in rule.asks_git(ctx) if call not in calls]
        except Exception:
            return
        beside = [threading.Thread(target=quietly, args=(call,), name=ASKING_GIT, daemon=True)
                  for call in calls[1:]]  # (each its own git process, at once)
        for thread in beside:
            thread.start()
        if calls:
            quietly(calls[0])
        for thread in beside:
            thread.join()

    thread = threading.Thread(target=ask, name=ASKING_GIT, daemon=True)
    thread.start()
    return thread


def _run_rule(ctx: Context, rule: Rule, notes, results, targets) -> list[Diagnostic]:
    """One rule's raw findings (from the results cache when it has them)."""
    if results is not None:
        cached = results.get(rule.name)  # (none kept for a rule that read git)
        if cached is not None:
            return cached  # _postprocess narrows them to the targets
    name = rule.name
    # (what a rule reads is recorded for the results cache alone: none, nothing recorded)
    record = name if results is not None else None
    try:
        if rule.scope == "vault":
            ctx.reading(record)
            found = list(rule.check_vault(ctx))
        else:
            found = []
            check = rule.check
            for note in notes():
                if note.error and name != "file-unreadable":
                    continue
                ctx.reading(record, note.path)
                found.extend(check(decoded(note), ctx))
    finally:
        ctx.reading(None)
    _mask_quoted(ctx.vault, found)
    # (a rule that read what no key covers, git or the clock, keeps nothing: see Context)
    if results is not None and targets is None and not ctx.unkeyed(name):
        results.put(name, found)
    return found


def _run_note_rules(ctx: Context, rules: Sequence[Rule], notes, results,
                    targets) -> dict[str, list[Diagnostic]]:
    """The raw findings of every per-note rule, run note by note: each note's rules run
    one after the other, then the note lets go of its text and lines (they are read from
    its file again if a later rule asks), so that a run over 100,000 notes never holds
    every note's text. Each rule's findings are in note order, as ``_run_rule`` gives
    them; rules whose findings the results cache has are not run."""
    todo: list[tuple[Rule, list[Diagnostic], tuple | None]] = []
    out: dict[str, list[Diagnostic]] = {}
    changed = results.changed_notes() if results is not None and targets is None else None
    for rule in rules:
        if rule.scope == "vault":
            continue
        if results is not None:
            cached = results.get(rule.name)  # (none kept for a rule that read git)
            if cached is not None:
                out[rule.name] = cached  # _postprocess narrows them to the targets
                continue
        # after a change, the findings on the notes none of whose recorded inputs changed
        # are kept, and the rule runs on the others (Context records what each read)
        kept = results.kept(rule.name, changed) if changed is not None else None
        out[rule.name] = found = []
        todo.append((rule, found, kept))
    if not todo:
        return out
    from vaultkit.core.progress import Progress  # shown on a terminal only

    everywhere = [(rule.name, rule.check, rule.name == "file-unreadable", found)
                  for rule, found, kept in todo if kept is None]
    somewhere = [(rule.name, rule.check, rule.name == "file-unreadable", found, kept[1])
                 for rule, found, kept in todo if kept is not None]
    rerun = set().union(*(only for *_, only in somewhere))
    listed = notes()
    # (the record's slot, set for each check: Context.reading, inlined; what a rule reads
    # is recorded for the results cache alone: without one, as under --no-cache, a slot
    # of its own that no record reads)
    at = ctx._at if results is not None else SimpleNamespace()
    try:
        with Progress("checking notes", len(listed)) as progress:
            for note in listed:
                path = note.path
                checks = everywhere
                if path in rerun:
                    checks = everywhere + [c[:4] for c in somewhere if path in c[4]]
                if checks:
                    note = decoded(note)
                for name, check, on_errors, found in checks:
                    if note.error and not on_errors:
                        continue
                    at.now = (name, path)
                    found.extend(check(note, ctx))
                at.now = None
                if type(note) is Note:  # (a note never decoded holds no text)
                    note.release_text()
                progress.advance()
        for rule, found, kept in todo:
            # (after a change the findings on these are kept: a change to one is a new
            # context)
            if rule.reads_set_aside and kept is None:
                for path, note in ctx._vault.set_aside().items():
                    if targets is None or path in targets:
                        ctx.reading(rule.name if results is not None else None, path)
                        found.extend(rule.check(note, ctx))
    finally:
        ctx.reading(None)
    order = None
    for rule, found, kept in todo:
        _mask_quoted(ctx._vault, found)
        if results is None or targets is not None or ctx.unkeyed(rule.name):
            continue  # (nothing kept: a rule that read git or the clock keeps nothing)
        read = ctx.read.get(rule.name, {})
        if kept is not None:  # (in the notes' order, as a run over all of them gives)
            if order is None:
                order = {note.path: i for i, note in enumerate(listed)}
            found[:] = _in_note_order(order, kept[0], found)
            read = {**{p: r for p, r in kept[2].items() if p not in kept[1]}, **read}
        results.put(rule.name, found, read)
    return out


def _in_note_order(order: dict[str, int], kept: dict[str, list[Diagnostic]],
                   found: list[Diagnostic]) -> list[Diagnostic]:
    """The findings kept from the last run (by note) and those just found (on the notes
    that changed), note after note in the run's order (``order``: path -> position)."""
    by_path = {path: list(ds) for path, ds in kept.items()}
    for d in found:
        by_path.setdefault(d.path, []).append(d)
    last = len(order)  # (a finding on no listed note: after them, as it came)
    out: list[Diagnostic] = []
    for path in sorted(by_path, key=lambda p: order.get(p, last)):
        out.extend(by_path[path])
    return out


def _mask_quoted(vault, found: list[Diagnostic]) -> None:
    """Mask, in each message, the credentials the detector found in the message's note.

    The output boundary masks what the detector recognises in the message itself; a value
    recognised only by its label in the note (``password: …`` in the frontmatter) is no
    longer labelled once a rule quotes it ("property 'x' is '…', not a list"). The note's
    own findings (a cached fact) name those values: they are masked wherever quoted, even
    cut short. Costs nothing for the notes that hold no credential.
    """
    if not found:
        return
    from vaultkit.vault.outbound import mask_values

    values_of: dict[str, list] = {}
    for d in found:
        values = values_of.get(d.path)
        if values is None:
            values = values_of[d.path] = _credential_values(vault, d.path)
        if values:
            d.message = mask_values(d.message, values)


def _credential_values(vault, path: str) -> list[tuple[str, str]]:
    note = vault.note(path)
    if note is None or note.error:
        return []
    from vaultkit.vault.secretscan import secrets_of

    # (the credentials first: a cached fact; the text is read only for a note holding one)
    found = secrets_of(vault, note)
    if not found or not note.text:
        return []
    lines = note.lines
    out = []
    for f in found:
        if 0 < f.line <= len(lines) and f.length:
            out.append((lines[f.line - 1][f.column - 1:f.column - 1 + f.length], f.masked))
    return out


class ResultsCache:
    """Every rule's raw findings for one exact state of the vault, its config and openclaw.json.

    A run over an unchanged vault reuses them instead of running the rules (like ruff's
    cache); any changed, added or removed file, config or openclaw.json makes a new key.
    Findings of rules that read git history are never stored. Fixes are not stored either,
    so ``--fix`` and ``--diff`` never read this cache. Beside the findings it keeps the
    suppression comments of the notes they are in, so that an unchanged vault's findings
    are shown without loading a single note (vaultkit.vault.deferred).
    """

    NAME = "results"  # its entry in the vault's store (vaultkit.vault.store)

    def __init__(self, vault, staged: list[str] | None = None):
        """``staged``: the notes (a commit hook's) whose findings are reused only while
        they hold the bytes they were parsed from (vaultkit.vault.loader.Vault.same_bytes)."""
        from vaultkit.vault.store import RACY_NS

        self.store = vault.store
        self.started_ns = vault.started_ns
        self.results: dict[str, list] = {}
        self.suppressions: dict[str, list] = {}  # path -> [(action, rules, line)]
        # rule -> {note: [the inputs its findings there read]} (Context.read)
        self.reads: dict[str, dict] = {}
        self.fresh = False
        self.ran = False  # a rule's findings were put: they are as new as this listing
        self.matched = False  # the file holds findings for this very key
        self.computed_from_ns = 0
        self.vault = vault
        self._paths: list[str] = []  # the notes in order, once changed_notes listed them
        # (the notes not loaded: the listing alone said which hold an error)
        self.assumed = _assumed_errors(vault) is not None
        self.listing = self._listing_key(vault)
        self.key = self._key(_errors(vault))
        # the last run's findings when they are not for this state, with what they were
        # computed from (see changed_notes)
        self.previous: tuple | None = None
        # (context, sizes, mtimes, reads, ctimes, inodes, racy blob ids) as the file holds them
        self.last: list = []
        try:
            key, computed_from_ns, results, suppressions, *last = self.store.get(self.NAME)
        except (EOFError, ValueError, TypeError):  # (none: TypeError)
            return
        self.last = last
        if key != self.key and self.assumed and isinstance(key, str) \
                and key.split("-", 1)[0] == self.listing:
            # a file that could not be read last time is read again, as an eager load would
            # (only when nothing else changed: else no error makes the key match, and a
            # commit hook's notes are not all loaded for nothing)
            self._rekey()
        # findings are only as new as the listing they were computed from: a file changed
        # in the same clock tick as that listing may still carry the same size and mtime
        if (key == self.key and isinstance(results, dict) and isinstance(computed_from_ns, int)
                and isinstance(suppressions, dict)
                and vault.newest_mtime_ns < computed_from_ns - RACY_NS
                and self._racy_unchanged(computed_from_ns, last)
                and (not staged or vault.same_bytes(staged))):
            self.results = results
            self.suppressions = suppressions
            self.matched = True
            self.computed_from_ns = computed_from_ns
        elif len(last) == 7 and isinstance(results, dict) and isinstance(suppressions, dict) \
                and isinstance(computed_from_ns, int) and isinstance(last[3], dict) \
                and isinstance(last[6], dict):
            self.previous = (computed_from_ns, results, suppressions, *last)

    def _racy_unchanged(self, stamp: int, last: list) -> bool:
        """Whether every note whose ctime lies within the racy margin of ``stamp`` (its
        mtime does not: then no findings are reused) still holds the bytes the findings
        were computed from: the blob id the file kept for it (a few files at most, read
        and hashed; their ctime may not have moved with a second write in that tick)."""
        from vaultkit.vault.store import content_id, racy

        kept = last[6] if len(last) == 7 and isinstance(last[6], dict) else {}
        root = self.vault.root
        limit = self.vault.settings.profile.budgets.max_file_bytes
        # (the common case, no listed file changed near the stamp, is told by the newest
        # ctime: the notes' states are not listed one by one)
        newest = getattr(self.vault, "newest_listed_ctime_ns", None)
        newest = newest() if newest is not None else None
        for path, size, _mtime, ctime, _ino in self.vault.listed_states() \
                if newest is None or racy(newest, stamp) else ():
            # (a note over the size limit is never read: its finding is its size's)
            if racy(ctime, stamp) and size <= limit:
                oid = kept.get(path)
                if oid is None or content_id(str(root / path), size) != oid:
                    return False
        return all(not racy(max(n.mtime_ns, n.ctime_ns), stamp)
                   for n in self.vault.external.values()) if self.vault.external else True

    def _rekey(self) -> None:
        """The key with the errors of the loaded notes (loading them)."""
        if self.assumed:
            self.key = self._key(_errors(self.vault, assumed=False))
            self.assumed = False

    def _key(self, errors: str) -> str:
        """The listing's key, then a digest of the notes that could not be parsed."""
        from vaultkit.core.digests import sha1

        return f"{self.listing}-" + sha1(errors.encode("utf-8", "surrogatepass")).hexdigest()

    @staticmethod
    def _listing_key(vault) -> str:
        """A digest of everything the findings depend on but the notes' errors."""
        return _digest(vault, vault.state_digest)

    @staticmethod
    def _context(vault) -> str:
        """A digest of what the per-note findings depend on besides the notes' texts and
        the inputs the context recorded (Context.read): the listing's key without the sizes
        and mtimes, with every file's name instead, and the errors."""
        errors = _errors(vault, assumed=False)  # (loads the notes: they are all checked)
        external = [(p, n.size, n.mtime_ns, n.ctime_ns, n.ino)
                    for p, n in sorted(vault.external.items())]
        return _digest(vault, f"{vault.names_epoch}|{external}|{errors}")

    def changed_notes(self) -> set[str] | None:
        """After a change (the last run's findings are not for this state): the notes
        that changed since, when nothing else keyed by the context did; else None. A
        note changed within the racy margin of the last run counts as changed."""
        if self.matched or self.previous is None:
            return None
        from array import array

        from vaultkit.vault.store import content_id, racy

        stamp, _results, _suppressions, context, sizes, mtimes, _reads, ctimes, inos, oids = \
            self.previous
        try:
            if not isinstance(context, str) or context != self._context(self.vault):
                return None
            old = [array("q", sizes), array("q", mtimes), array("q", ctimes), array("q", inos)]
        except (TypeError, ValueError, OverflowError):  # (a damaged file: a full run)
            return None
        if any(racy(max(n.mtime_ns, n.ctime_ns), stamp) for n in self.vault.external.values()):
            return None  # a bootstrap file beside the vault changed in the last run's tick
        states = self.vault.note_states()
        if any(len(column) != len(states) for column in old):
            return None
        self._paths = [s[0] for s in states]  # (the names are the last run's, in its order)
        root = self.vault.root
        limit = self.vault.settings.profile.budgets.max_file_bytes
        changed = set()
        for (path, *numbers), *was in zip(states, *old):
            if numbers != was or racy(was[1], stamp):  # (the mtime: as the findings saw it)
                changed.add(path)
            elif racy(was[2], stamp) and numbers[0] <= limit:  # (the ctime: the bytes tell)
                oid = oids.get(path)
                if oid is None or content_id(str(root / path), numbers[0]) != oid:
                    changed.add(path)
        return changed

    def kept(self, rule: str, changed: set[str]) -> tuple | None:
        """``(findings by note, notes to run on, inputs read by note)`` for ``rule`` after a
        change: the last run's findings on the notes that did not change and none of whose
        recorded inputs did (see :meth:`changed_notes` and ``lint.reads.stale``), the notes
        the rule must run on, and what its findings on each note read last time; None when
        the last run left nothing to keep for the rule. The kept notes' suppression comments
        are kept too."""
        if self.previous is None:
            return None
        found = self.previous[1].get(rule)
        read = _decode_reads(self.previous[6].get(rule, (b"", {})), self._paths)
        if not isinstance(found, list) or read is None:
            return None  # (none kept, or a damaged file: the rule runs on every note)
        from vaultkit.lint.reads import Since, stale

        since = self.__dict__.get("_since")
        if since is None or since.changed is not changed:
            since = self._since = Since(self.vault, changed)  # (one per run, every rule's)
        rerun = set(changed)
        for path, inputs in read.items():
            if path not in rerun and stale(inputs, since):
                rerun.add(path)
        out: dict[str, list[Diagnostic]] = {}
        for t in found:
            if not isinstance(t, tuple) or len(t) != 8 or not isinstance(t[3], str):
                return None  # (a damaged file: the rule runs on every note)
            if t[3] not in rerun:
                out.setdefault(t[3], []).append(Diagnostic(*t))
        old = self.previous[2]
        for path in out:
            if path not in self.suppressions and isinstance(old.get(path), list):
                self.suppressions[path] = old[path]
        return out, rerun, read

    def has(self, rule: str) -> bool:
        """Whether the findings of ``rule`` for this state are here (:meth:`get` has them)."""
        return rule in self.results

    def get(self, rule: str) -> list[Diagnostic] | None:
        found = self.results.get(rule)
        if found is None:
            return None
        try:
            return [Diagnostic(*t) for t in found]
        except TypeError:
            return None

    def put(self, rule: str, found: list[Diagnostic], reads: dict | None = None) -> None:
        """Keep a rule's findings (and the inputs they read on each note); messages
        pass the output boundary (a cache is a file too). Paths are kept as the vault names
        them: they are the notes' keys."""
        from vaultkit.vault.outbound import clean_many

        messages = clean_many([d.message for d in found], one_line=True)
        self.results[rule] = [(d.rule, d.code, d.severity, d.path, d.line, d.column, message,
                               d.fixable) for d, message in zip(found, messages)]
        if reads is not None:
            self.reads[rule] = reads
        self.fresh = self.ran = True

    def _racy_oids(self, states: list, stamp: int) -> dict:
        """Path -> blob id of the notes whose ctime (not mtime) lies in the racy margin of
        ``stamp``, as the notes the findings were computed from carry it; a note that
        carries none is left out (the next run counts it as changed)."""
        from vaultkit.vault.store import racy

        out = {}
        for path, _size, mtime, ctime, _ino in states:
            if racy(ctime, stamp) and not racy(mtime, stamp):
                note = self.vault.notes.get(path)
                oid = getattr(note, "oid", None)
                if oid is not None:
                    out[path] = oid
        return out

    def keep_suppressions(self, path: str, found: list) -> None:
        """Keep the suppression comments of a note findings are in, for the next run of
        this same state (a finding of a git rule may be in a note no cached finding is)."""
        # (a key that names no rule matches none: kept as "?", so that no text of the note
        # but rule names lands here)
        self.suppressions[path] = [(s.action, [k if known(k) else "?" for k in s.rules], s.line)
                                   for s in found]
        if self.matched:
            self.fresh = True

    def save(self) -> None:
        if not self.fresh:
            return
        if self.assumed and getattr(self.vault, "loaded", True):
            matched_key = self.key
            self._rekey()  # rules ran on the loaded notes: key them on what those hold
            if self.matched and self.key != matched_key:
                return  # (reused findings were keyed on what the listing showed, not this)
        import marshal

        try:
            # (suppressions added to reused findings leave those as old as they were)
            stamp = self.started_ns if self.ran or not self.matched else self.computed_from_ns
            # what the next run needs to reuse findings on the notes it finds unchanged
            # (changed_notes): only once the notes are loaded, which rules running on every
            # note did (a hook's run puts nothing)
            if getattr(self.vault, "loaded", True):
                from array import array

                states = self.vault.note_states()
                # the reads of the findings reused as they were, then those of the rules
                # that ran
                kept = self.last[3] if self.matched and len(self.last) == 7 \
                    and isinstance(self.last[3], dict) else {}
                reads = {rule: raw for rule, raw in kept.items()
                         if rule in self.results and rule not in self.reads}
                at = {s[0]: i for i, s in enumerate(states)}
                reads.update((rule, _encode_reads(record, at))
                             for rule, record in self.reads.items())
                # (every note's size, mtime, ctime and inode, in the notes' order: their
                # names are in the context, so the order is the same whenever the context
                # is); and the blob id of each note whose ctime lies in this run's racy
                # margin, as the note read carries it (vaultkit.vault.loader._read_one):
                # the next run compares its bytes, not its stat
                columns = [array("q", [s[i] for s in states]).tobytes() for i in (1, 2, 3, 4)]
                oids = self._racy_oids(states, stamp)
                last = (self._context(self.vault), columns[0], columns[1], reads,
                        columns[2], columns[3], oids)
            else:  # (reused findings, new suppressions: the same state as the file's)
                last = tuple(self.last) if self.matched else ()
            self.store.put(self.NAME, marshal.dumps((self.key, stamp, self.results,
                                                     self.suppressions, *last)))
        except ValueError:
            pass


# The results file's shape, in its key: 2 lists every note's ctime and inode beside its size
# and mtime, and the blob ids of the notes in the racy margin; 3 keeps, per rule and note,
# the inputs the context recorded (lint.reads) instead of the notes the rules said they
# read; a file of another shape is never matched, so it is rebuilt, not misread.
RESULTS_FORMAT = 3

# Obsidian's settings a rule reads (unknown-location: where the daily notes go); the
# listing leaves .obsidian/ out
_OBSIDIAN_SETTINGS = (".obsidian/daily-notes.json", ".obsidian/core-plugins.json")


def _digest(vault, state: str) -> str:
    """The results cache's key for ``state`` (the listing's, or the names'): with vaultkit's
    and the detector's versions, the settings, what findings read outside the files, and
    the runtimes that apply (a marker folder such as ``.codex/`` is no listed file, yet it
    decides them)."""
    from vaultkit import __version__
    from vaultkit.core.digests import sha1
    from vaultkit.vault import DETECTOR_VERSION
    from vaultkit.vault.runtimes import detected

    key = (f"{__version__}|{RESULTS_FORMAT}|{DETECTOR_VERSION}|{vault.settings.fingerprint}|"
           f"{state}|{_outside_state(vault)}|{detected(vault)}")
    return sha1(key.encode("utf-8", "surrogatepass")).hexdigest()


def _outside_state(vault) -> str:
    """Size and mtime of what findings read outside the listed files: openclaw.json, the
    files the runtimes read (.claude/, CLAUDE.md above the vault, ...), Obsidian's
    daily-notes settings, the subfolders that are Obsidian vaults of their own."""
    import os

    from vaultkit.vault.openclaw import find_config, install_state
    from vaultkit.vault.runtimes import outside_state

    try:
        config = find_config(vault)
        st = config.stat() if config is not None else None
        config_state = f"{config}:{_stat_key(st)}" if st else "none"
    except OSError as exc:
        config_state = f"unreadable:{exc.errno}"
    obsidian = []
    for name in _OBSIDIAN_SETTINGS:
        try:
            st = os.stat(vault.root / name)
            obsidian.append(f"{name}:{_stat_key(st)}")
        except OSError:
            obsidian.append(f"{name}:-")
    from vaultkit.links.obsidian import nested_vaults
    from vaultkit.vault.loader import set_aside_files

    # (by size, mtime, ctime and inode, as every stat key: a copy's mtime can be put back)
    aside = [f"{f.rel}:{f.size}:{f.mtime_ns}:{f.ctime_ns}:{f.ino}"
             for f in set_aside_files(vault.root, vault.settings)]
    nested = ",".join(nested_vaults(vault))  # (broken-link allows forward links in them)
    return (f"{config_state}|{outside_state(vault)}|{'|'.join(obsidian)}|{aside}|{nested}|"
            f"{install_state()}")  # (the installed OpenClaw's defaults are the limits)


def _stat_key(st) -> str:
    """What a cache compares of a file it does not list: size, mtime, ctime, inode."""
    return f"{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_ino}"


def _encode_reads(record: dict, at: dict[str, int]) -> tuple[bytes, dict]:
    """A rule's record (note -> the inputs its findings there read: lint.reads) as the
    results file keeps it: the reads of other notes as pairs of positions in the notes'
    order (``at``: path -> position; the names are in the results cache's context, so the
    same order holds whenever the record is used; paths as text would be most of the
    file), the other inputs as they are."""
    if not record:
        return b"", {}
    from array import array

    from vaultkit.lint.reads import READ_NOTE

    pairs = array("I")
    rest: dict[str, list[str]] = {}
    for path, inputs in record.items():
        i = at.get(path)
        for what in sorted(inputs):
            j = at.get(what[2:]) if what.startswith(READ_NOTE) else None
            if i is not None and j is not None:
                pairs.extend((i, j))
            else:
                rest.setdefault(path, []).append(what)
    return pairs.tobytes(), rest


def _decode_reads(raw, paths: list[str]) -> dict[str, list[str]] | None:
    """:func:`_encode_reads` undone; None for what does not fit these notes (a damaged
    file)."""
    from array import array

    from vaultkit.lint.reads import READ_NOTE

    try:
        packed, rest = raw
        pairs = array("I", packed)
    except (TypeError, ValueError):
        return None
    n = len(paths)
    if not isinstance(rest, dict) or len(pairs) % 2 or any(k >= n for k in pairs):
        return None
    out: dict[str, list[str]] = {}
    for path, inputs in rest.items():
        if not isinstance(path, str) or not isinstance(inputs, list) \
                or not all(isinstance(i, str) for i in inputs):
            return None
        out[path] = list(inputs)
    for k in range(0, len(pairs), 2):
        out.setdefault(paths[pairs[k]], []).append(READ_NOTE + paths[pairs[k + 1]])
    return out


def _errors(vault, assumed: bool = True) -> str:
    """The notes that could not be parsed, as the results cache's key takes them (a
    permission fixed changes neither size nor mtime). While a deferred vault's notes are not
    loaded, ``assumed`` takes what its listing shows (files over the size limit); else the
    notes are loaded and asked."""
    guess = _assumed_errors(vault) if assumed else None
    errors = guess if guess is not None else [  # (as held: no note decoded for it)
        (p, n.error) for p, n in vault.notes.entries().items() if n.error]
    return "".join(f"{p}\0{e}\n" for p, e in errors)


def _assumed_errors(vault) -> list | None:
    """What a deferred vault's listing says of its notes' errors; None once they are loaded
    (or for a vault that is not deferred)."""
    listed = getattr(vault, "assumed_errors", None)
    return listed() if listed is not None else None


def _postprocess(ctx: Context, diags: Iterable[Diagnostic],
                 results: ResultsCache | None = None) -> list[Diagnostic]:
    config = ctx.settings.config
    severity = {}
    for rule in rule_refs():
        for key, level in config.severity.items():
            if matches(rule, key):
                severity[rule.name] = level
    ignores = [(re.compile(fnmatch.translate(glob)), keys)
               for glob, keys in config.per_file_ignores.items()]
    by_rule = {r.name: r for r in rule_refs()}
    suppressed = _Suppressions(ctx.vault, results)
    from vaultkit.links.obsidian import in_folders, template_folders

    templates = template_folders(ctx.vault.root)  # templates are not notes: never linted
    out = []
    seen = set()
    for d in diags:
        if ctx.targets is not None and d.path not in ctx.targets and not _vault_level(d, ctx):
            continue
        if templates and in_folders(d.path, templates):
            continue
        rule = by_rule.get(d.rule)
        if d.rule in severity:
            d.severity = severity[d.rule]
        if rule is not None and any(g.match(d.path) and any(matches(rule, k) for k in keys)
                                    for g, keys in ignores):
            continue
        if rule is not None and suppressed.hides(d, rule):
            continue
        key = (d.rule, d.path, d.line, d.column, d.message)
        if key in seen:
            continue
        seen.add(key)
        out.append(d)
    out.sort(key=Diagnostic.sort_key)
    return out


def _vault_level(d: Diagnostic, ctx: Context) -> bool:
    """In hook mode, findings about the vault as a whole are shown whatever files changed."""
    return ctx.hook and d.rule in VAULT_LEVEL_RULES


# Findings that are about the vault, not about the file they are pinned to.
VAULT_LEVEL_RULES = frozenset({"bootstrap-budget", "bootstrap-truncation", "index-stale",
                               "import-problem", "agents-md-shadowed", "auto-memory-cut",
                               "journal-append-only", "mass-deletion", "memory-churn"})


class _Suppressions:
    """The suppression comments of the notes findings are in: from the results cache when
    it has them for this state of the vault (no note is read), else from the notes, and
    then kept there for the next run."""

    def __init__(self, vault, results: ResultsCache | None = None):
        self.vault = vault
        self.results = results
        self.memo: dict[str, list] = {}

    def of(self, path: str) -> list:
        found = self.memo.get(path)
        if found is not None:
            return found
        results = self.results
        kept = results.suppressions.get(path) if results is not None else None
        if isinstance(kept, list):
            try:
                found = [Suppression(a, tuple(r), ln) for a, r, ln in kept]
            except (TypeError, ValueError):
                found = None
        if found is None:
            note = self.vault.note(path)
            if note is None and self.vault.profile.secret_scan_folders:
                note = self.vault.set_aside().get(path)  # (a backup copy's own comments)
            found = list(note.suppressions) if note is not None and note.suppressions else []
            if results is not None:
                results.keep_suppressions(path, found)
        self.memo[path] = found
        return found

    def hides(self, d: Diagnostic, rule: Rule) -> bool:
        suppressions = self.of(d.path)
        if not suppressions:
            return False

        def names(s):
            return not s.rules or any(matches(rule, k) for k in s.rules)

        line = d.line or 0
        disabled = False
        for s in suppressions:
            if not names(s):
                continue
            if s.action == "disable-file":
                return True
            if s.action == "disable-next-line" and line == s.line + 1:
                return True
            if s.action == "disable" and s.line <= line:
                disabled = True
            elif s.action == "enable" and s.line <= line:
                disabled = False
        return disabled


def fail(diags: Iterable[Diagnostic], fail_on: str) -> bool:
    threshold = SEVERITY_RANK[fail_on]
    return any(SEVERITY_RANK.get(d.severity, 2) >= threshold for d in diags)


# -- fixes ---------------------------------------------------------------------

def apply_fixes(note: Note, diags: Sequence[Diagnostic]) -> tuple[str, int]:
    """The note's new text with every non-overlapping fix applied, and how many applied."""
    edits: list[tuple[Edit, Diagnostic]] = []
    for d in diags:
        if d.fix is not None:
            for e in d.fix.edits:
                edits.append((e, d))
    edits.sort(key=lambda pair: (pair[0].start, pair[0].end))
    text = note.text
    out = []
    pos = 0
    applied: set[int] = set()
    skipped: set[int] = set()
    # a fix applies whole or not at all: drop a fix if any of its edits overlaps
    for e, d in edits:
        if e.start < pos:
            skipped.add(id(d))
        pos = max(pos, e.end)
    pos = 0
    for e, d in edits:
        if id(d) in skipped:
            continue
        out.append(text[pos:e.start])
        out.append(e.new)
        pos = e.end
        applied.add(id(d))
    out.append(text[pos:])
    return "".join(out), len(applied)


def encode_note_text(note: Note, text: str) -> bytes:
    data = text.encode("utf-8")
    return b"\xef\xbb\xbf" + data if note.bom else data
