"""Load a vault: scan, parse each file once (cached, both cores when cold), classify.

The cache lives in ``.vaultkit/cache/`` and is keyed by vaultkit's version, the
parser version and the profile/config fingerprint; an entry is reused only when
the file's size and mtime are unchanged and the mtime is older than the cache
itself (so a file edited in the same clock tick as the last run is re-read).
It is stored with :mod:`marshal`, which cannot run code.
"""

from __future__ import annotations

import marshal
import os
import time
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from vaultkit import __version__
from vaultkit.vault.cachefile import CACHE_DIR, read_cache_file, write_cache_file
from vaultkit.vault.model import Attachment, Note
from vaultkit.vault.profile import Settings, load_settings
from vaultkit.vault.scan import FileEntry, ScanProblem, find_root, require_vault, walk

_PARALLEL_MIN = 400  # below this, a process pool costs more than it saves
_RACY_NS = 2_000_000_000


class Vault:
    """Every note and attachment of one vault, parsed, with its settings."""

    def __init__(self, root: Path, settings: Settings, notes: dict[str, Note],
                 attachments: dict[str, Attachment], problems: list[ScanProblem],
                 external: dict[str, Note]):
        self.root = root
        self.settings = settings
        self.profile = settings.profile
        self.notes = notes
        self.attachments = attachments
        self.problems = problems
        self.external = external  # bootstrap files outside a memory-only vault: "../X.md"
        self.state_digest = ""  # set by load_vault: every file's path, size and mtime
        self.newest_mtime_ns = 0
        self.started_ns = 0  # when the files were listed (before any was read)
        self._facts: dict[str, dict | bytes] = {}  # bytes: as the cache stores them
        self._cache: _Cache | None = None
        self._dirty = False

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
            note = self.notes.get(path)
            opening = None
            if note is not None and not note.error and self.profile.header_lines:
                count = max(8, self.profile.header_lines)
                opening = lambda: self.fact(path, f"opening{count}",  # noqa: E731
                                            lambda: opening_lines(note, count))
            memo[path] = self.profile.layer_of(path, opening)
        return memo[path]

    def claimed(self, note: Note) -> bool:
        """True when a named layer (not a fallback) claims ``note``."""
        return self.profile.claims(note.path, self.layer_of(note))

    @cached_property
    def types(self) -> dict[str, str | None]:
        type_of = self.profile.type_of
        return {path: type_of(path) for path in self.notes}

    def layer_of(self, note: Note) -> str | None:
        """The layer a note is in: by path, and for header layers (session transcripts) by
        its opening lines. Computed per note, so a hook run looks only at what it reports on."""
        if note.path in self.external:
            return "bootstrap"
        return self._layer(note.path)

    def type_of(self, note: Note) -> str | None:
        return self.types.get(note.path)

    def notes_in(self, layer: str) -> list[Note]:
        notes = [n for p, n in self.notes.items() if self.layers.get(p) == layer]
        if layer == "bootstrap":
            notes += list(self.external.values())
        return notes

    def bootstrap(self) -> list[Note]:
        """Bootstrap files that exist, in the runtime's injection order."""
        # only files at the root (or beside a memory-only vault) count: the layer of those
        # few is looked up, not of every note
        found = {p: n for p, n in self.notes.items()
                 if "/" not in p and self._layer(p) == "bootstrap"}
        found.update(self.external)
        found = {p.rsplit("/", 1)[-1]: n for p, n in found.items()}
        order = self.profile.bootstrap_files or sorted(found)
        return [found[name] for name in order if name in found]

    def note(self, path: str) -> Note | None:
        return self.notes.get(path) or self.external.get(path)

    def has_note(self, path: str) -> bool:
        """Whether ``path`` is a note of this vault (readable or not): ``note(path)`` is not None."""
        return path in self.notes or path in self.external

    @property
    def paths(self) -> list[str]:
        """Every file's vault path: the notes and the attachments."""
        return list(self.notes) + list(self.attachments)

    @property
    def caching(self) -> bool:
        """Whether this vault has a parse cache (not with ``--no-cache``)."""
        return self._cache is not None

    @cached_property
    def resolver(self):
        from vaultkit.vault.resolve import Resolver

        return Resolver(self)

    # -- per-note facts, kept in the cache ------------------------------------------

    @cached_property
    def names_epoch(self) -> str:
        """A digest of every file path: what link resolution depends on besides the note."""
        import hashlib

        digest = hashlib.sha1()
        for group in (self.notes, self.attachments):
            digest.update("\n".join(group).encode("utf-8", "surrogatepass"))
            digest.update(b"\x00")
        return digest.hexdigest()[:16]

    def fact(self, path: str, key: str, compute, *, epoch: str | None = None):
        """A value derived from one note alone (plus ``epoch``), computed once per content.

        Facts live in the cache beside the parsed note and are dropped when the note
        changes, so a hook run recomputes them only for the files that changed. Values
        must be plain data (marshal).
        """
        facts = self._facts.get(path)
        if not isinstance(facts, dict):  # None, or still marshalled as the cache keeps them
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
        return value

    def save_cache(self) -> None:
        """Write parse results and facts to ``.vaultkit/`` if anything is new."""
        if self._cache is not None and self._dirty:
            self._cache.save(self.notes, self._facts)
            self._dirty = False


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


@dataclass
class Scan:
    """A vault's files listed and stat'ed, not read: enough to tell whether anything changed."""

    root: Path
    settings: Settings
    files: list[FileEntry]
    problems: list[ScanProblem]
    digest: str  # every file's path, size and mtime (and the external bootstrap files')
    newest_mtime_ns: int
    # when the listing began: anything derived from these files is only as new as this,
    # so caches record it (not the time they were written) for their same-tick checks
    started_ns: int = 0
    # the real path of every folder listed (and of the workspace, for bootstrap files
    # outside a memory-only vault): where a change would change this listing
    folders: list[str] = field(default_factory=list)


def scan_vault(path: Path | str = ".", *, root: Path | str | None = None,
               profile: str | None = None, use_cache: bool = True,
               settings: Settings | None = None, named: bool = False) -> Scan:
    """``named``: ``path`` was named on the command line (a folder of notes is a vault)."""
    root_path = Path(root).resolve() if root is not None else find_root(Path(path), named)
    if not root_path.is_dir():
        raise FileNotFoundError(f"{root_path}: not a folder")
    require_vault(root_path)
    if settings is None:
        settings = load_settings(root_path, profile, use_cache=use_cache)
    started = time.time_ns()
    folders: list[str] = []
    files, problems = walk(root_path, settings.is_excluded if settings.excludes_anything else None,
                           folders)
    external = []
    if not settings.profile.memory_prefix:
        folders.append(os.path.realpath(root_path.parent))
        for name in settings.profile.bootstrap_files:
            try:
                st = os.stat(root_path.parent / name)
            except OSError:
                continue
            external.append(("../" + name, st.st_size, st.st_mtime_ns))
    digest, newest = _state(files, problems, external)
    return Scan(root_path, settings, files, problems, digest, newest, started, folders)


def oversize_error(size: int, limit: int) -> str:
    """The error of a note over the size limit (known from the listing alone)."""
    return f"{size:,} bytes, over the {limit:,}-byte limit (budgets.max_file_bytes); not parsed"


def load_vault(path: Path | str = ".", *, root: Path | str | None = None,
               profile: str | None = None, use_cache: bool = True,
               settings: Settings | None = None, save: bool = True,
               scan: Scan | None = None, previous: Vault | None = None,
               named: bool = False) -> Vault:
    """Find the root from ``path`` (or take ``root``), read settings, parse every note.

    With ``save=False`` the caller writes the cache itself (``vault.save_cache()``) once
    its facts are computed, so a run writes it at most once. ``scan`` reuses a listing
    made by :func:`scan_vault`. ``previous`` (a vault this process loaded earlier, as a
    long-running server keeps one) lends its parsed notes, facts and cache: a note is
    taken over only when its size and mtime are unchanged and it was older than that
    vault's listing by the racy margin, the same test the cache applies.
    """
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
    cache = None
    if use_cache:
        kept = previous._cache if same else None
        cache = kept if kept is not None else _Cache(root_path, settings.fingerprint)
    lent = previous.notes if same else {}
    lent_before = previous.started_ns - _RACY_NS if same else 0
    notes: dict[str, Note] = {}
    facts: dict[str, dict | bytes] = {}
    todo: list[FileEntry] = []
    for f in md:
        if f.size > max_bytes:
            notes[f.rel] = Note(path=f.rel, size=f.size, mtime_ns=f.mtime_ns,
                                error=oversize_error(f.size, max_bytes))
            continue
        old = lent.get(f.rel)
        if old is not None and not old.error and old.size == f.size \
                and old.mtime_ns == f.mtime_ns and f.mtime_ns < lent_before:
            notes[f.rel] = old
            facts[f.rel] = previous._facts.get(f.rel) or b""
            continue
        hit = cache.get(f, max_bytes) if cache else None
        if hit is not None:
            notes[f.rel], facts[f.rel] = hit
        else:
            todo.append(f)
    parsed = _parse_all(todo, max_bytes, facts) if todo else []
    for note in parsed:
        notes[note.path] = note
    notes = dict(sorted(notes.items()))

    external: dict[str, Note] = {}
    if not settings.profile.memory_prefix:
        for name in settings.profile.bootstrap_files:
            candidate = root_path.parent / name
            if candidate.is_file():
                external["../" + name] = _read_one(str(candidate), "../" + name, max_bytes)
    vault = Vault(root_path, settings, notes, attachments, problems, external)
    vault.state_digest, vault.newest_mtime_ns = scan.digest, scan.newest_mtime_ns
    vault.started_ns = scan.started_ns
    if cache is not None:
        cache.started_ns = scan.started_ns
    vault._facts = facts
    vault._cache = cache
    # (unreadable files are read again every run but never stored: they change nothing)
    vault._dirty = bool(cache) and (any(not n.error for n in parsed) or cache.stale(notes))
    if save:
        vault.save_cache()
    return vault


def _state(files: list[FileEntry], problems: list[ScanProblem],
           external: list[tuple[str, int, int]]) -> tuple[str, int]:
    """A digest of every file's path, size and mtime, and the newest mtime."""
    import hashlib

    digest = hashlib.sha1()
    newest = 0
    for f in files:
        digest.update(f"{f.rel}\0{f.size}\0{f.mtime_ns}\n".encode("utf-8", "surrogatepass"))
        newest = max(newest, f.mtime_ns)
    for p in problems:
        digest.update(f"!{p.rel}\0{p.message}\n".encode("utf-8", "surrogatepass"))
    for rel, size, mtime_ns in external:
        digest.update(f"{rel}\0{size}\0{mtime_ns}\n".encode("utf-8", "surrogatepass"))
        newest = max(newest, mtime_ns)
    return digest.hexdigest(), newest


def _read_one(abs_path: str, rel: str, limit: int) -> Note:
    from vaultkit.core.bounded import ReadRefused, read_regular
    from vaultkit.vault.parse import parse_note  # only when something is read: it compiles a lot
    try:
        st = os.stat(abs_path)
        data = read_regular(abs_path, limit)  # a FIFO or device swapped in is refused
    except ReadRefused as exc:
        return Note(path=rel, error=exc.strerror)
    except OSError as exc:
        return Note(path=rel, error=f"cannot be read: {exc.strerror or exc}")
    return parse_note(rel, data, size=len(data), mtime_ns=st.st_mtime_ns)


def _reread(note: Note) -> Note:
    """A lazy note whose cached blob is damaged, read and parsed again."""
    from vaultkit.core.bounded import read_regular
    from vaultkit.vault.parse import parse_note

    try:  # the scan saw this size: never read more (nor a FIFO swapped in)
        limit = note.size
        if note._limit is not None:  # changed since the listing: what the file holds now
            st = os.stat(note._source)  # type: ignore[arg-type]
            if st.st_size != note.size or st.st_mtime_ns != note.mtime_ns:
                limit = note._limit
        data = read_regular(note._source, limit)  # type: ignore[arg-type]
        return parse_note(note.path, data, size=note.size, mtime_ns=note.mtime_ns)
    except (OSError, TypeError) as exc:
        return Note(path=note.path, size=note.size, mtime_ns=note.mtime_ns,
                    error=f"cannot be read: {getattr(exc, 'strerror', None) or exc}")


def _read_text(note: Note) -> str | None:
    """A cached note's text, read from its file; None unless the file still has the size
    and mtime the cache recorded (then the note is parsed again)."""
    from vaultkit.core.bounded import read_regular
    from vaultkit.vault.parse import note_text

    try:
        st = os.stat(note._source)  # type: ignore[arg-type]
        if st.st_size != note.size or st.st_mtime_ns != note.mtime_ns:
            return None
        data = read_regular(note._source, note.size)  # type: ignore[arg-type]
    except (OSError, TypeError):
        return None
    return note_text(data) if len(data) == note.size else None


Note.reread = _reread  # the model reads a damaged cache entry again through the loader
Note.read_text = _read_text  # and the text the cache does not keep


def _parse_chunk(items: list[tuple[str, str, int]]) -> list[tuple]:
    """Parse in a worker; each note comes back marshalled (cheap to send, and the very
    bytes the cache stores), or as plain data when it could not be read."""
    out = []
    for a, r, limit in items:
        note = _read_one(a, r, limit)
        if note.error:
            out.append((r, None, note.to_plain(), b"", None))
        else:  # (the text beside the blob: the cache keeps the blob alone)
            out.append((r, marshal.dumps(note.to_plain(with_text=False)),
                        (note.size, note.mtime_ns), _worker_facts(note), note.text))
    return out


def _worker_facts(note: Note) -> bytes:
    """Facts computed where the note is parsed, so a cold run spreads them over the cores:
    the credential scan (``secret-in-memory``) reads every line of every note."""
    from vaultkit.vault.secretscan import DETECTOR_VERSION, FACT, scan_note

    try:
        found = scan_note(note)
    except Exception:  # never lose the parse over it: the rule scans the note itself
        return b""
    return marshal.dumps({FACT: (DETECTOR_VERSION, found)})


def _parse_all(todo: list[FileEntry], limit: int, facts: dict | None = None) -> list[Note]:
    from vaultkit.core.progress import Progress

    items = [(f.abs, f.rel, limit) for f in todo]
    workers = min(os.cpu_count() or 1, 8)
    with Progress("parsing notes", len(items)) as progress:
        if len(items) < _PARALLEL_MIN or workers < 2:
            out = []
            for item in items:
                out.append(_read_one(*item))
                progress.advance()
            return out
        return _parse_parallel(items, workers, progress, facts)


def _parse_parallel(items, workers: int, progress, facts: dict | None = None) -> list[Note]:
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    try:
        ctx = mp.get_context("fork")
    except ValueError:
        return [_read_one(*item) for item in items]
    sources = {r: a for a, r, _ in items}
    size = max(50, len(items) // (workers * 4))
    chunks = [items[i:i + size] for i in range(0, len(items), size)]
    out: list[Note] = []
    try:
        with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
            for result in pool.map(_parse_chunk, chunks):
                for rel, blob, rest, worker_facts, text in result:
                    out.append(_decoded(blob, text, sources[rel])
                               if blob is not None else Note.from_plain(rest))
                    if worker_facts and facts is not None:
                        facts[rel] = worker_facts
                progress.advance(len(result))
    except (OSError, RuntimeError):  # no processes to be had: do it here
        return [_read_one(*item) for item in items]
    return out


def _decoded(blob: bytes, text: str, source: str) -> Note:
    """A note a worker just parsed, decoded here at once (while the workers parse on):
    every rule of a run reads it, and decoding it whole costs less than a lazy note's
    first use. It keeps ``blob``, the bytes the cache stores for it."""
    note = Note.from_plain(marshal.loads(blob))
    note.text = text
    note._blob = blob
    note._source = source
    return note


# The format of the notes cache: 2 keeps no note text (it is read from the file again).
# A new format gets a new file name, so an old cache is never misread; save() removes it.
CACHE_FORMAT = 2


class _Cache:
    """``{path: (size, mtime_ns, marshalled note without its text, marshalled facts)}``."""

    def __init__(self, root: Path, fingerprint: str):
        from vaultkit.vault.model import PARSER_VERSION

        self.dir = root / CACHE_DIR / "cache"
        self.path = self.dir / f"notes-{PARSER_VERSION}.{CACHE_FORMAT}.marshal"
        self.key = f"{__version__}:{PARSER_VERSION}:{fingerprint}"
        self.entries: dict[str, tuple] = {}
        self.written_ns = 0
        self.started_ns = 0  # set by load_vault: when this run listed the files
        try:
            raw = read_cache_file(self.path)
        except OSError:
            return  # none yet, or not a regular file (never read): written anew
        try:
            data = marshal.loads(raw)
        except (EOFError, ValueError, TypeError):
            data = None
        if isinstance(data, tuple) and len(data) == 3 and isinstance(data[1], int) \
                and isinstance(data[2], dict):
            if data[0] == self.key:  # (another key: another version or config, not damage)
                self.written_ns, self.entries = data[1], data[2]
            return
        import sys

        print(f"vaultkit: warning: {CACHE_DIR}/cache/{self.path.name} is damaged; every note "
              "is read again and the cache rebuilt", file=sys.stderr)

    def get(self, f: FileEntry, limit: int | None = None) -> tuple[Note, dict] | None:
        entry = self.entries.get(f.rel)
        try:
            size, mtime_ns, blob, facts = entry
        except (TypeError, ValueError):
            return None
        if size != f.size or mtime_ns != f.mtime_ns or not isinstance(blob, bytes):
            return None
        if f.mtime_ns >= self.written_ns - _RACY_NS:
            return None  # written in the same tick as the cache: content may differ
        # facts stay marshalled until asked for: most runs need few of them
        return (Note.lazy(f.rel, size, mtime_ns, blob, f.abs, limit=limit),
                facts if isinstance(facts, bytes) else b"")

    def stale(self, notes: dict[str, Note]) -> bool:
        """True when the cache lists other files than ``notes`` (added, deleted)."""
        return {k for k, n in notes.items() if not n.error} != self.entries.keys()

    def save(self, notes: dict[str, Note], facts: dict[str, dict]) -> None:
        entries = {}
        for rel, note in notes.items():
            if note._blob is not None:
                blob = note._blob  # the bytes it was decoded from (or will be)
            elif note.error:
                continue  # unreadable files are retried next run
            else:
                blob = marshal.dumps(note.to_plain(with_text=False))
            kept = facts.get(rel)
            if isinstance(kept, dict):
                try:
                    kept = marshal.dumps(kept)
                except ValueError:  # a fact marshal cannot store: compute it again next time
                    kept = b""
            entries[rel] = (note.size, note.mtime_ns, blob, kept or b"")
        # the files were read after `started_ns`: an entry is trusted next time only if the
        # file was older than that by the racy margin (see get)
        written = self.started_ns or time.time_ns()
        data = marshal.dumps((self.key, written, entries))
        if write_cache_file(self.path, data):
            self._drop_old_formats()
        self.entries = entries
        self.written_ns = written  # what the file now says, for a process that keeps this object

    def _drop_old_formats(self) -> None:
        """Remove notes caches of other parser versions or formats: never read again."""
        try:
            names = os.listdir(self.dir)
        except OSError:
            return
        for name in names:
            if name.startswith("notes-") and name.endswith(".marshal") and name != self.path.name:
                try:
                    os.unlink(self.dir / name)
                except OSError:
                    pass
