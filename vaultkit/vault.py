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
from functools import cached_property
from pathlib import Path

from vaultkit import __version__
from vaultkit.model import Attachment, Note
from vaultkit.parse import PARSER_VERSION, parse_note
from vaultkit.profile import Settings, load_settings
from vaultkit.scan import FileEntry, ScanProblem, find_root, walk

CACHE_DIR = ".vaultkit"
_CACHE_FILE = f"notes-{PARSER_VERSION}.marshal"
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

    @property
    def workspace(self) -> Path:
        return self.root if self.profile.memory_prefix else self.root.parent

    @cached_property
    def layers(self) -> dict[str, str | None]:
        layer_of = self.profile.layer_of
        out = {path: layer_of(path) for path in self.notes}
        for path in self.external:
            out[path] = "bootstrap"
        return out

    @cached_property
    def types(self) -> dict[str, str | None]:
        type_of = self.profile.type_of
        return {path: type_of(path) for path in self.notes}

    def layer_of(self, note: Note) -> str | None:
        return self.layers.get(note.path)

    def type_of(self, note: Note) -> str | None:
        return self.types.get(note.path)

    def notes_in(self, layer: str) -> list[Note]:
        notes = [n for p, n in self.notes.items() if self.layers.get(p) == layer]
        if layer == "bootstrap":
            notes += list(self.external.values())
        return notes

    def bootstrap(self) -> list[Note]:
        """Bootstrap files that exist, in the runtime's injection order."""
        found = {n.path.rsplit("/", 1)[-1]: n for n in self.notes_in("bootstrap")
                 if "/" not in n.path or n.path.startswith("../")}
        order = self.profile.bootstrap_files or sorted(found)
        return [found[name] for name in order if name in found]

    def note(self, path: str) -> Note | None:
        return self.notes.get(path) or self.external.get(path)

    @cached_property
    def resolver(self):
        from vaultkit.resolve import Resolver

        return Resolver(self)


def load_vault(path: Path | str = ".", *, root: Path | str | None = None,
               profile: str | None = None, use_cache: bool = True,
               settings: Settings | None = None) -> Vault:
    """Find the root from ``path`` (or take ``root``), read settings, parse every note."""
    root_path = Path(root).resolve() if root is not None else find_root(Path(path))
    if not root_path.is_dir():
        raise FileNotFoundError(f"{root_path}: not a folder")
    if settings is None:
        settings = load_settings(root_path, profile, use_cache=use_cache)
    files, problems = walk(root_path, settings.is_excluded)
    max_bytes = settings.profile.budgets.max_file_bytes
    md, attachments = [], {}
    for f in files:
        if f.rel.lower().endswith(".md"):
            md.append(f)
        else:
            attachments[f.rel] = Attachment(f.rel, f.size)

    cache = _Cache(root_path, settings.fingerprint) if use_cache else None
    notes: dict[str, Note] = {}
    todo: list[FileEntry] = []
    for f in md:
        if f.size > max_bytes:
            notes[f.rel] = Note(path=f.rel, size=f.size, mtime_ns=f.mtime_ns,
                                error=f"{f.size:,} bytes, over the {max_bytes:,}-byte limit "
                                      "(budgets.max_file_bytes); not parsed")
            continue
        hit = cache.get(f) if cache else None
        if hit is not None:
            notes[f.rel] = hit
        else:
            todo.append(f)
    for note in _parse_all(todo):
        notes[note.path] = note
        if cache:
            cache.put(note)
    if cache:
        cache.save(notes)
    notes = dict(sorted(notes.items()))

    external: dict[str, Note] = {}
    if not settings.profile.memory_prefix:
        for name in settings.profile.bootstrap_files:
            candidate = root_path.parent / name
            if candidate.is_file():
                external["../" + name] = _read_one(str(candidate), "../" + name)
    return Vault(root_path, settings, notes, attachments, problems, external)


def _read_one(abs_path: str, rel: str) -> Note:
    try:
        with open(abs_path, "rb") as fh:
            st = os.fstat(fh.fileno())
            data = fh.read()
    except OSError as exc:
        return Note(path=rel, error=f"cannot be read: {exc.strerror or exc}")
    return parse_note(rel, data, size=st.st_size, mtime_ns=st.st_mtime_ns)


def _parse_chunk(items: list[tuple[str, str]]) -> list[tuple]:
    return [_read_one(a, r).to_plain() for a, r in items]


def _parse_all(todo: list[FileEntry]) -> list[Note]:
    items = [(f.abs, f.rel) for f in todo]
    workers = min(os.cpu_count() or 1, 8)
    if len(items) < _PARALLEL_MIN or workers < 2:
        return [_read_one(a, r) for a, r in items]
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    try:
        ctx = mp.get_context("fork")
    except ValueError:
        return [_read_one(a, r) for a, r in items]
    size = max(50, len(items) // (workers * 4))
    chunks = [items[i:i + size] for i in range(0, len(items), size)]
    out: list[Note] = []
    try:
        with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
            for result in pool.map(_parse_chunk, chunks):
                out.extend(Note.from_plain(t) for t in result)
    except (OSError, RuntimeError):  # no processes to be had: do it here
        return [_read_one(a, r) for a, r in items]
    return out


class _Cache:
    def __init__(self, root: Path, fingerprint: str):
        self.dir = root / CACHE_DIR / "cache"
        self.path = self.dir / _CACHE_FILE
        self.key = f"{__version__}:{PARSER_VERSION}:{fingerprint}"
        self.entries: dict[str, tuple] = {}
        self.written_ns = 0
        self.fresh: dict[str, tuple] = {}
        try:
            with open(self.path, "rb") as fh:
                data = marshal.load(fh)
            if isinstance(data, tuple) and len(data) == 3 and data[0] == self.key:
                self.written_ns, self.entries = data[1], data[2]
        except (OSError, EOFError, ValueError, TypeError):
            pass

    def get(self, f: FileEntry) -> Note | None:
        entry = self.entries.get(f.rel)
        if entry is None or entry[0] != f.size or entry[1] != f.mtime_ns:
            return None
        if f.mtime_ns >= self.written_ns - _RACY_NS:
            return None
        try:
            return Note.from_plain(entry[2])
        except (TypeError, ValueError):
            return None

    def put(self, note: Note) -> None:
        self.fresh[note.path] = (note.size, note.mtime_ns, note.to_plain())

    def save(self, notes: dict[str, Note]) -> None:
        if not self.fresh and notes.keys() == self.entries.keys():
            return
        entries = {}
        for rel, note in notes.items():
            entry = self.fresh.get(rel) or self.entries.get(rel)
            if entry is not None and not note.error:
                entries[rel] = entry
        write_cache_file(self.path, marshal.dumps((self.key, time.time_ns(), entries)))


def write_cache_file(path: Path, data: bytes) -> bool:
    """Replace a file under ``.vaultkit/`` (creating the folder); False when it cannot.

    A cache that cannot be written is not an error: a read-only vault is still checked.
    """
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    try:
        ensure_cache_dir(path.parent.parent if path.parent.name != CACHE_DIR else path.parent)
        path.parent.mkdir(exist_ok=True)
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
        return True
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False


def ensure_cache_dir(path: Path) -> None:
    """Create ``.vaultkit/`` with a CACHEDIR.TAG and a .gitignore that ignores it all."""
    path.mkdir(exist_ok=True)
    tag = path / "CACHEDIR.TAG"
    if not tag.exists():
        tag.write_text("Signature: 8a477f597d28d172789f06886806bc55\n"
                       "# This file is a cache directory tag created by vaultkit.\n")
    ignore = path / ".gitignore"
    if not ignore.exists():
        ignore.write_text("# Automatically created by vaultkit.\n*\n")
