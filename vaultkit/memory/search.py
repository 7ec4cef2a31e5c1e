"""Full-text search over the memory set, the runtime's ``memory_search`` without vectors.

The index is SQLite FTS5 in ``.vaultkit/search.sqlite``. Before every search it is
brought up to date: a file whose size, mtime, ctime or inode changed (or whose text
changed within the racy two-second window after it was indexed, by its mtime or ctime) is
re-chunked, a new file is added,
a deleted one removed, so a search never serves a stale note.

Chunks are about CHUNK_CHARS (350) characters, half a snippet, without overlap, and never
cut an entry (see :func:`chunk_text`), so the ranking points at the lines that hold the
query's weight. A hit's snippet (at most SNIPPET_CHARS, 700, whole lines) is placed around
the best line of its chunk over the chunks beside it (:func:`snippet_lines`): the line
before it and what follows it, within its entry, never on a line a better result of the
same note shows. A hit's 1-based ``startLine``/``endLine`` is its chunk widened by the
neighbouring chunks of the same note up to CONTEXT_CHARS (1,600, the runtime's chunk
size), and always holds the snippet: the place to read for context
(:func:`_context`). Each chunk is also indexed with its context words
(:func:`chunk_contexts`): a journal's day spelled out in English, Chinese and Russian, the
headings above it, entry times, and the relative dates in it resolved against the day
(:mod:`vaultkit.memory.dates`). CJK text is indexed as character bigrams (see
:mod:`vaultkit.memory.text`).

Ranking fuses the seeds' retrieval levels into one list. Level 1 is what a person
scans first: the note's title (file name, ``title``/``aliases``), headings, tags,
path, and the line of ``INDEX.md`` that links to it. Levels 2–3 are the full text,
ranked by FTS5's BM25. Each candidate chunk gets

    score = 0.55 · text coverage + 0.25 · level-1 coverage + 0.20 · BM25 / best BM25

where *coverage* is the share of the query's idf weight (BM25's idf per term) whose
terms occur in the chunk, or in the note's level-1 text; the best 40 candidates then gain
half of what the chunks next to them add to their text coverage (a question's words are
often spread over an entry and the lines beside it). Every part lies in 0..1, so
the score does too, and it is absolute rather than relative to the other hits: a
chunk holding every query term scores at least 0.55, one holding none of them at most
0.45 (a level-1 match alone). The default ``--min-score`` is 0: the runtime's 0.35 belongs
to its hybrid vector + text scale, and on this one it drops chunks that hold the answer in
other words (measured on LoCoMo, bench/locomo.py). A CJK bigram that occurs nowhere in
the vault (most are spans across two words of the question), or a relative date no note
holds, does not count against coverage. ``INDEX.md`` itself is
searchable, but its score is multiplied by 0.6: its lines already count as level-1 text
of the notes they link to, so those notes rank above the index.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
import sqlite3
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from vaultkit.core.errors import VaultkitError
from vaultkit.core.lazyre import lazy_re
from vaultkit.memory.dates import date_of_path
from vaultkit.memory.text import Term, fts_text, match_spans, query_terms, set_idf
from vaultkit.vault.store import RACY_NS as _RACY_NS

DB_NAME = "search.sqlite"
SCHEMA = 10  # bump whenever the tables, the chunking, the context words or fts_text() change
SNIPPET_CHARS = 700
# The ranked chunk is half a snippet, and the snippet is placed around its best line over
# the chunks beside it (see snippet_lines). Measured on LoCoMo's development half
# (bench/locomo.py), evidence in a top-5 snippet / a top-10 range: 1,600-character chunks
# with 320 of overlap 75.7 / 91.2 %, 700-character chunks that were the snippet 83.1 /
# 92.3 %, these 83.6 / 94.0 % (250: 82.0 / 93.3, 300: 82.9 / 93.6, 400: 82.8 / 93.6, 450:
# 83.3 / 93.3 %). Overlapping chunks would crowd the list with the same lines.
CHUNK_CHARS = 350
OVERLAP_CHARS = 0
CONTEXT_CHARS = 1600  # a hit's line range: its chunk and neighbouring ones, about this size
DEFAULT_MAX_RESULTS = 6
DEFAULT_MIN_SCORE = 0.0
_W_TEXT, _W_META, _W_BM25 = 0.55, 0.25, 0.20
_CANDIDATES = 200
_NEIGHBOURS = 40  # the candidates whose neighbouring chunks count (see _with_neighbours)
BUSY_TIMEOUT_S = 30  # how long a write waits for another writer's lock on the index
INDEX_FACTOR = 0.6
  # INDEX.md's lines already lift the notes they link to


@dataclass
class Hit:
    path: str
    start_line: int  # the lines to read for context: the chunk and its neighbours (see _context)
    end_line: int
    score: float
    snippet: str
    spans: list[tuple[int, int]]  # highlight spans within the snippet
    # credentials the snippet holds: served as stored, marked so a runtime can redact them
    credentials: list[dict] = field(default_factory=list)
    snippet_start: int = 0  # the lines the snippet itself shows (0: the chunk's)
    snippet_end: int = 0
    # when the snippet shows two windows of lines (joined by a line "…"): their line ranges;
    # the lines between them are not in the snippet
    snippet_windows: list[tuple[int, int]] = field(default_factory=list)

    def to_dict(self) -> dict:
        out = {"path": self.path, "startLine": self.start_line, "endLine": self.end_line,
               "score": round(self.score, 4), "snippet": self.snippet,
               "snippetStartLine": self.snippet_start or self.start_line,
               "snippetEndLine": self.snippet_end or self.end_line}
        if self.snippet_windows:
            out["snippetWindows"] = [[a, b] for a, b in self.snippet_windows]
        if self.credentials:
            out["holdsCredential"] = True
            out["credentials"] = self.credentials
        return out


# -- chunking --------------------------------------------------------------------

_BREAK = re.compile(r"(#{1,6}\s|[-*+]\s|\d{1,3}[.)]\s|>\s?|\||```|~~~|---)")


def entry_starts(lines: list[str]) -> list[bool]:
    """For each line, whether an entry may start there: a heading, a top-level list item,
    a quote, table or fence line, or the first line after a blank one, except the first
    block under a heading, which stays with it. A chunk boundary falls only there (unless
    one entry alone is longer than a chunk)."""
    out = []
    prev_blank = True
    under_heading = False  # a heading keeps the first block below it
    for line in lines:
        blank = not line.strip()
        heading = bool(_HEADING.match(line))
        start = not blank and (prev_blank or bool(_BREAK.match(line)))
        if start and under_heading and not heading:
            start = False
        out.append(start)
        if not blank:
            under_heading = heading
        prev_blank = blank
    return out


def chunk_text(text: str, max_chars: int = CHUNK_CHARS,
               overlap: int = OVERLAP_CHARS) -> list[tuple[int, int, str]]:
    """``(startLine, endLine, text)`` chunks of about ``max_chars`` that never cut an entry.

    The text is split into entries (see :func:`entry_starts`); chunks are filled with
    whole entries, and the next chunk repeats the last entries up to ``overlap``
    characters. An entry longer than a chunk is split on line boundaries; a line longer
    than a chunk stays whole up to SNIPPET_CHARS (a snippet shows whole lines), and one
    longer than both is cut into pieces of the larger.
    """
    line_chars = max(max_chars, SNIPPET_CHARS)
    lines = text.replace("\r\n", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    starts = entry_starts(lines)
    # atoms: the units a chunk is filled with, each (its characters with their newlines,
    # [(line number, text)])
    atoms: list[tuple[int, list[tuple[int, str]]]] = []
    block: list[tuple[int, str]] = []
    block_size = 0

    def close_block() -> None:
        if not block:
            return
        if block_size <= max_chars:
            atoms.append((block_size, list(block)))
        else:
            for number, line in block:
                if len(line) <= line_chars:
                    atoms.append((len(line) + 1, [(number, line)]))
                else:
                    for i in range(0, len(line), line_chars):
                        piece = line[i:i + line_chars]
                        atoms.append((len(piece) + 1, [(number, piece)]))
        block.clear()

    for number, (line, start) in enumerate(zip(lines, starts), 1):
        if start:
            close_block()
            block_size = 0
        block.append((number, line))
        block_size += len(line) + 1
    close_block()

    chunks: list[tuple[int, int, str]] = []
    current: list[tuple[int, list[tuple[int, str]]]] = []
    size = 0

    def flush() -> None:
        segs = [item for _size, atom in current for item in atom]
        if segs and any(seg.strip() for _, seg in segs):
            chunks.append((segs[0][0], segs[-1][0], "\n".join(s for _, s in segs)))

    for atom in atoms:
        need = atom[0]
        if current and size + need > max_chars:
            flush()
            kept: list[tuple[int, list[tuple[int, str]]]] = []
            acc = 0
            for item in reversed(current):
                if acc >= overlap:
                    break
                kept.insert(0, item)
                acc += item[0]
            while kept and acc + need > max_chars:
                acc -= kept.pop(0)[0]
            current, size = kept, acc
        current.append(atom)
        size += need
    flush()
    return chunks


def chunk_contexts(lines: list[str], chunks: list[tuple[int, int, str]],
                   day: "dt.date | None") -> list[str]:
    """For each chunk, the words it is also found by: the journal's day spelled out, the
    headings it sits under (nearest of each level, as words for an entry time such as
    ``## 14:30``), entry times inside it, and the relative dates in it resolved against
    the day. One pass over the lines, whatever their number."""
    from vaultkit.memory import dates

    day_text = dates.day_words(day) if day is not None else ""
    stack: list[tuple[int, str]] = []  # (level, text) of the headings above the line
    pos = 0  # lines[:pos] are on the stack
    out = []
    for start, end, text in chunks:
        while pos < start - 1:
            m = _HEADING.match(lines[pos])
            if m:
                level = len(m.group(1))
                while stack and stack[-1][0] >= level:
                    stack.pop()
                stack.append((level, m.group(2).strip()))
            pos += 1
        parts = [day_text]
        for _level, head in stack:
            parts += [head, dates.time_words(head)]
        for line in text.split("\n"):
            m = _HEADING.match(line)
            if m:
                parts.append(dates.time_words(m.group(2)))
        if day is not None:
            parts += [words for _phrase, words, _keys in dates.relative_dates(text, day)]
        out.append("\n".join(dict.fromkeys(p for p in parts if p)))
    return out


_HEADING = re.compile(r"(#{1,6})\s+(.*?)\s*#*\s*$")


# -- level-1 text ------------------------------------------------------------------

def level1_text(note, index_lines: list[str]) -> str:
    """Title, aliases, headings, tags, path and INDEX.md lines of one note, one per line."""
    parts = [note.name, note.path]
    fm = note.frontmatter if isinstance(note.frontmatter, dict) else {}
    for key in ("title", "description"):
        if isinstance(fm.get(key), str):
            parts.append(fm[key])
    aliases = fm.get("aliases")
    if isinstance(aliases, list):
        parts += [a for a in aliases if isinstance(a, str)]
    parts += [h.text for h in note.headings]
    parts += ["#" + t.name for t in note.tags]
    parts += index_lines
    return "\n".join(p for p in parts if p)


def index_entries(vault, notes: dict) -> dict[str, list[str]]:
    """``{target path: [INDEX.md lines that link to it]}``."""
    index_path = vault.profile.expand(vault.profile.index.path)
    index = notes.get(index_path)
    if index is None or not index.links:
        return {}
    resolve = _resolver(vault, notes)
    out: dict[str, list[str]] = {}
    lines = index.lines
    for link in index.links:
        target = resolve(index, link)
        if target and target != index_path and 0 < link.line <= len(lines):
            line = lines[link.line - 1].strip()
            out.setdefault(target, []).append(line)
    return out


def _resolver(vault, notes: dict):
    """The vault's one resolver (vaultkit.vault.resolve), returning a target path or None."""
    resolver = vault.resolver

    def resolve(note, link):
        if link.external:
            return None
        try:
            return resolver.resolve(note, link).path
        except Exception:  # a resolver problem must not break search
            return None
    return resolve


# -- the index ----------------------------------------------------------------------

def _index_file(root: Path) -> Path | None:
    """The index's file in the vault's ``.vaultkit/``; None where it cannot be written (a
    read-only vault: the index is then kept in memory for this one search)."""
    from vaultkit.core.confine import write_target
    from vaultkit.vault.cachefile import CACHE_DIR, ensure_cache_dir

    folder = root / CACHE_DIR
    try:
        ensure_cache_dir(folder)
        path = folder / DB_NAME
        rel = f"{CACHE_DIR}/{DB_NAME}"
        sidecars = [rel + s for s in ("", "-wal", "-shm", "-journal")]
        for name in sidecars:  # SQLite opens these too: none may lead elsewhere
            write_target(root, name, owned=sidecars)
            if os.path.lexists(root / name) and not os.path.isfile(root / name):
                raise OSError(f"{name}: not a regular file")
        if path.exists() and not os.access(path, os.W_OK):
            return None
        return path
    except (OSError, VaultkitError):
        return None


class SearchIndex:
    """The FTS5 index of one vault's memory set."""

    def __init__(self, root: Path, *, helper: bool = False, in_memory: bool = False):
        """``helper``: rank by BM25 on a second connection and thread (see _Bm25Helper),
        for an index kept open for many queries (``vaultkit mcp``); a one-query process
        would pay more for the thread and the connection than it gains. ``in_memory``: an
        index built in memory from nothing, the file on disk neither read nor written
        (``--no-cache``)."""
        self.path: Path | None = None  # (in memory)
        if not in_memory:
            self.path = _index_file(root)
        self.db = self._open()
        self._vocab = False  # temp.chunk_vocab made (see _respelled)
        # the files table as this connection last wrote it, and SQLite's data_version then:
        # a long-lived index (vaultkit mcp) reads it again only when another connection wrote
        self._files: dict[str, list] | None = None
        self._files_version = -1
        self._use_helper = helper
        self._helper: _Bm25Helper | None = None  # made on the first search (a file index only)

    def _open(self) -> sqlite3.Connection:
        if self.path is None:
            db = sqlite3.connect(":memory:", isolation_level=None)
            self._create(db)
            return db
        for attempt in (1, 2):
            db = None
            try:
                db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
                db.execute("PRAGMA journal_mode=WAL")
                # (what is deleted is overwritten: an older index's text, a chunk whose
                # note changed, leave nothing of theirs in the file's free pages)
                db.execute("PRAGMA secure_delete=ON")
                if db.execute("PRAGMA user_version").fetchone()[0] != SCHEMA:
                    self._create(db)
                return db
            except sqlite3.OperationalError as exc:
                text = str(exc).lower()
                if "fts5" in text or "no such module" in text:
                    raise VaultkitError(f"this Python's SQLite ({sqlite3.sqlite_version}) lacks "
                                        "FTS5, which search needs") from None
                if attempt == 2 or "locked" in text or "busy" in text:
                    raise VaultkitError(f"{self.path}: {exc}") from None
            except sqlite3.DatabaseError:
                if attempt == 2:
                    raise VaultkitError(f"{self.path}: the search index is damaged and could "
                                        "not be rebuilt; delete it") from None
            if db is not None:
                db.close()
            # damaged or unreadable: start again from nothing (it is only a cache)
            for suffix in ("", "-wal", "-shm"):
                try:
                    os.unlink(str(self.path) + suffix)
                except OSError:
                    pass
        raise AssertionError("unreachable")

    @staticmethod
    def _create(db: sqlite3.Connection) -> None:
        """(Re)create the tables, unless another process did while this one waited."""
        db.execute("BEGIN IMMEDIATE")
        try:
            if db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA:
                db.execute("COMMIT")
                return
            for table in ("files", "chunks", "chunk_fts", "meta_fts", "state"):
                db.execute(f"DROP TABLE IF EXISTS {table}")
            # what the index was last brought up to date with (see search_scan)
            db.execute("CREATE TABLE state (key TEXT PRIMARY KEY, value TEXT)")
            # meta: the note's level-1 text; index_lines: the INDEX.md lines in it
            db.execute("CREATE TABLE files (id INTEGER PRIMARY KEY, path TEXT UNIQUE NOT NULL, "
                       "size INTEGER, mtime_ns INTEGER, hash TEXT, indexed_ns INTEGER, meta TEXT, "
                       "index_lines TEXT, ctime_ns INTEGER, ino INTEGER)")
            # text, ctx and meta are stored with their credentials masked; creds: the
            # credentials the chunk held, as JSON ([{"line", "kind", "masked"}])
            db.execute("CREATE TABLE chunks (id INTEGER PRIMARY KEY, file INTEGER NOT NULL, "
                       "start_line INTEGER, end_line INTEGER, text TEXT, ctx TEXT, creds TEXT)")
            db.execute("CREATE INDEX chunks_file ON chunks(file)")
            db.execute("CREATE VIRTUAL TABLE chunk_fts USING fts5(body, content='', "
                       "tokenize='unicode61 remove_diacritics 2', prefix='3 4')")
            db.execute("CREATE VIRTUAL TABLE meta_fts USING fts5(body, "
                       "tokenize='unicode61 remove_diacritics 2', prefix='3 4')")
            db.execute(f"PRAGMA user_version={SCHEMA}")
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    # -- keeping it current --------------------------------------------------------

    def synced_with(self) -> tuple[str, int]:
        """The vault state the index was last synced with, and when (ns)."""
        row = self.db.execute("SELECT value FROM state WHERE key='vault'").fetchone()
        if not row:
            return "", 0
        key, _, when = row[0].rpartition("|")
        return key, int(when) if when.isdigit() else 0

    def same_texts(self, scan, when: int) -> bool:
        """Whether every listed note whose ctime (not mtime: then the vault is read anyway)
        lies within the racy window of ``when`` holds the text the index has for it, read
        and compared by digest (a few files written in the seconds before the last sync;
        a same-length write in that tick need not move the ctime). A note the index does
        not hold is not known: False."""
        from vaultkit.core.bounded import ReadRefused, read_regular
        from vaultkit.vault.parse import note_text

        sizes, _mtimes, ctimes, _inos = scan.note_numbers()
        if max(ctimes, default=0) < when - _RACY_NS:
            return True
        paths = scan.note_paths()
        for i, ctime in enumerate(ctimes):
            if ctime < when - _RACY_NS:
                continue
            row = self.db.execute("SELECT hash FROM files WHERE path = ?",
                                  (paths[i],)).fetchone()
            try:
                data = read_regular(scan.root / paths[i], sizes[i] + 1)
            except (ReadRefused, OSError):
                return False
            text = note_text(data) if len(data) == sizes[i] else None
            if row is None or text is None or row[0] != _digest(text):
                return False
        return True

    def memory_copy(self) -> "SearchIndex":
        """This index copied into memory (SQLite's backup, which reads one snapshot, as
        any reader may while another connection writes), to be synced and searched when
        the file cannot be written."""
        copy = SearchIndex.__new__(SearchIndex)
        copy.path = None
        copy.db = sqlite3.connect(":memory:", isolation_level=None)
        try:
            self.db.backup(copy.db)
        except sqlite3.Error as exc:
            copy.db.close()
            raise VaultkitError(f"{self.path}: the search index could not be read: {exc}") \
                from None
        copy._vocab = False
        copy._files, copy._files_version = None, -1
        copy._use_helper, copy._helper = False, None
        return copy

    def settle(self, key: str, when: int, scan) -> None:
        """Record that the index, synced with ``key`` at ``when``, still holds what the notes
        listed by ``scan`` (the same listing) say, as of ``scan``'s listing time, once
        :meth:`same_texts` has read the notes whose ctime lies within the racy window of
        ``when``. Without it every later search read those notes again (each costs a read
        and a digest: after a checkout or a copy just before a sync, thousands, for as long
        as nothing changes). A note whose ctime is older than the racy window of the new
        time cannot change without its ctime, size or inode moving, which changes the
        listing. Only a speed-up: an index that cannot be written now (read-only, another
        writer's lock) is left as it is, without waiting."""
        _sizes, _mtimes, ctimes, _inos = scan.note_numbers()
        if self.path is None or max(ctimes, default=0) < when - _RACY_NS \
                or scan.started_ns <= when:
            return
        db = self.db
        try:
            db.execute("PRAGMA busy_timeout = 0")
            try:
                self.mark_synced(key, scan.started_ns)
            finally:
                db.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        except sqlite3.OperationalError as exc:
            if not _unwritable(exc):
                raise

    def mark_synced(self, key: str, when: int) -> None:
        self.db.execute("INSERT OR REPLACE INTO state(key, value) VALUES ('vault', ?)",
                        (f"{key}|{when}",))

    def sync(self, vault, notes: dict, state: tuple[str, int] | None = None) -> dict[str, int]:
        """Bring the index up to date with ``{path: Note}``; returns counts of what changed.

        ``state`` (key, listing time) is recorded in the same transaction, so the index can
        never be marked with a state newer than its content.

        The work is proportional to the change: an unchanged note (same size, mtime, ctime
        and inode, and the same text when that mtime or ctime is within the racy window)
        keeps its chunks, and
        its level-1 text too unless the INDEX.md lines that link to it changed.
        """
        from vaultkit.memory.text import fts_text
        from vaultkit.vault.outbound import mask_credentials as masked
        from vaultkit.vault.secretscan import credentials_in

        db = self.db
        now = time.time_ns()
        stats = {"added": 0, "updated": 0, "removed": 0}
        index_map = index_entries(vault, notes)
        progress = None
        changed = False  # a level-1 text updated in place
        db.execute("BEGIN IMMEDIATE")
        try:
            version = db.execute("PRAGMA data_version").fetchone()[0]
            known = self._files if version == self._files_version else None
            self._files = None  # (kept again only once this transaction commits)
            if known is None:
                # (not the level-1 texts: read only for a note whose INDEX.md lines changed)
                known = {row[1]: list(row) for row in db.execute(
                    "SELECT id, path, size, mtime_ns, hash, indexed_ns, index_lines, ctime_ns, ino "
                    "FROM files")}
            for path, row in list(known.items()):
                note = notes.get(path)
                if note is None or note.error:
                    self._drop(row[0])
                    del known[path]
                    stats["removed"] += 1
            from vaultkit.core.progress import Progress

            progress = Progress("indexing notes", len(notes)).__enter__()
            for path, note in notes.items():
                progress.advance()
                if note.error:
                    continue
                row = known.get(path)
                lines = index_map.get(path, [])
                joined = "\n".join(lines)
                if row is not None and row[2] == note.size and row[3] == note.mtime_ns \
                        and row[7] == note.ctime_ns and row[8] == note.ino:
                    if max(note.mtime_ns, note.ctime_ns) < row[5] - _RACY_NS \
                            or row[4] == _digest(note.text):
                        if row[6] != joined:  # its INDEX.md lines changed
                            meta = masked(level1_text(note, lines))
                            old = db.execute("SELECT meta FROM files WHERE id=?",
                                             (row[0],)).fetchone()[0]
                            if old != meta:
                                db.execute("DELETE FROM meta_fts WHERE rowid=?", (row[0],))
                                db.execute("INSERT INTO meta_fts(rowid, body) VALUES (?, ?)",
                                           (row[0], fts_text(meta)))
                            db.execute("UPDATE files SET meta=?, index_lines=? WHERE id=?",
                                       (meta, joined, row[0]))
                            row[6] = joined
                            changed = True
                        continue
                if row is not None:
                    self._drop(row[0])
                    stats["updated"] += 1
                else:
                    stats["added"] += 1
                meta = masked(level1_text(note, lines))
                digest = _digest(note.text)
                cur = db.execute(
                    "INSERT INTO files(path, size, mtime_ns, hash, indexed_ns, meta, index_lines, "
                    "ctime_ns, ino) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (path, note.size, note.mtime_ns, digest, now, meta, joined, note.ctime_ns,
                     note.ino))
                fid = cur.lastrowid
                known[path] = [fid, path, note.size, note.mtime_ns, digest, now, joined,
                               note.ctime_ns, note.ino]
                db.execute("INSERT INTO meta_fts(rowid, body) VALUES (?, ?)", (fid, fts_text(meta)))
                stored = masked(note.text)
                chunks = chunk_text(stored)
                contexts = chunk_contexts(stored.replace("\r\n", "\n").split("\n"), chunks,
                                          date_of_path(path))
                raw = note.text.replace("\r\n", "\n").split("\n") if stored is not note.text \
                    else None
                for (start, end, text), ctx in zip(chunks, contexts):
                    creds = None
                    if raw is not None:  # (what the chunk's lines held, as written)
                        found = credentials_in("\n".join(raw[start - 1:end]), start)
                        creds = json.dumps(found) if found else None
                    cid = db.execute("INSERT INTO chunks(file, start_line, end_line, text, ctx, "
                                     "creds) VALUES (?, ?, ?, ?, ?, ?)",
                                     (fid, start, end, text, ctx, creds)).lastrowid
                    db.execute("INSERT INTO chunk_fts(rowid, body) VALUES (?, ?)",
                               (cid, fts_text(_indexed(text, ctx))))
            progress.__exit__(None, None, None)
            if changed or any(stats.values()):
                # a new token for this content, so two connections can tell that they read
                # the same state of the index (see _Bm25Helper)
                db.execute("INSERT OR REPLACE INTO state(key, value) VALUES ('generation', ?)",
                           (os.urandom(8).hex(),))
            if state is not None:
                self.mark_synced(*state)
            db.execute("COMMIT")
        except BaseException:
            if progress is not None:
                progress.__exit__(None, None, None)  # erase the line before the error
            db.execute("ROLLBACK")
            raise
        self._files = known
        self._files_version = db.execute("PRAGMA data_version").fetchone()[0]
        return stats

    def _drop(self, fid: int) -> None:
        db = self.db
        # chunk_fts is contentless (the text lives once, in chunks): a row is removed by
        # giving FTS5 the exact tokens it was indexed with.
        rows = db.execute("SELECT id, text, ctx FROM chunks WHERE file=?", (fid,)).fetchall()
        db.executemany("INSERT INTO chunk_fts(chunk_fts, rowid, body) VALUES ('delete', ?, ?)",
                       [(cid, fts_text(_indexed(text, ctx))) for cid, text, ctx in rows])
        db.execute("DELETE FROM chunks WHERE file=?", (fid,))
        db.execute("DELETE FROM meta_fts WHERE rowid=?", (fid,))
        db.execute("DELETE FROM files WHERE id=?", (fid,))

    # -- querying -----------------------------------------------------------------------

    def search(self, query: str, *, max_results: int = DEFAULT_MAX_RESULTS,
               min_score: float = DEFAULT_MIN_SCORE, allow=None,
               demote: frozenset[str] = frozenset(), today: dt.date | None = None) -> list[Hit]:
        terms = bounded_terms(query, today)
        if not terms:
            return []
        recent = asks_for_recent(query)
        when = asks_when(query)
        answer = answer_kind(query)
        self.db.execute("BEGIN")  # one snapshot, whatever other processes commit meanwhile
        try:
            return self._search(terms, max_results, min_score, allow, demote, recent, when,
                                answer)
        finally:
            self.db.execute("COMMIT")

    def _search(self, terms, max_results, min_score, allow, demote, recent=False,
                when=False, answer=None) -> list[Hit]:
        db = self.db
        limit = _CANDIDATES if allow is None else _CANDIDATES * 5
        # The BM25 ranking is most of a query's time; it starts on the helper's connection
        # now, with every term as asked, and is used only when no term is dropped or
        # respelled below and both connections read the same state of the index.
        early = None
        if self._use_helper and self.path is not None:
            if self._helper is None:
                self._helper = _Bm25Helper(self.path)
            early = self._helper.start(" OR ".join(t.fts for t in terms), limit)
        total = db.execute("SELECT count(*) FROM chunks").fetchone()[0]
        if not total:
            return []
        for t in terms:
            t.df = db.execute("SELECT count(*) FROM chunk_fts WHERE chunk_fts MATCH ?",
                              (t.fts,)).fetchone()[0]
        terms = [self._respelled(t) if _respellable(t) else t for t in terms]
        set_idf(terms, total)
        # A CJK bigram found nowhere is most likely a span across two words of the question;
        # a relative date no journal holds says nothing about the chunks either.
        weighted = [t for t in terms if t.df or not (t.cjk or t.date)]
        if not weighted:
            return []
        scored = self._rank(weighted, limit, allow, demote, recent, early, when, answer)
        scored = [s for s in scored if s[0] >= min_score]

        hits: list[Hit] = []
        shown: dict[str, list[tuple[int, int]]] = {}  # each note's snippet lines so far
        for score, path, start, end, text, cid, fid in scored:
            hit = self._hit(cid, fid, path, start, end, text, score, terms,
                            shown.setdefault(path, []))
            if hit is not None:
                hits.append(hit)
                if len(hits) >= max_results:
                    break
        return hits

    def _hit(self, cid: int, fid: int, path: str, start: int, end: int, text: str,
             score: float, terms: list[Term], shown: list[tuple[int, int]]) -> "Hit | None":
        """The result for the ranked chunk ``cid`` of note ``fid`` (lines ``start``..``end``):
        its snippet placed over the chunk and the chunks beside it (:func:`snippet_lines`),
        never on a line a better result of the same note already shows (``shown``, extended
        here); None when every line of the chunk is already shown."""
        db = self.db
        # the chunks around it, nearest first: (start line, end line, text)
        below = db.execute("SELECT start_line, end_line, text FROM chunks WHERE file=? AND "
                           "start_line > ? ORDER BY start_line LIMIT 8", (fid, end)).fetchall()
        above = db.execute("SELECT start_line, end_line, text FROM chunks WHERE file=? AND "
                           "end_line < ? ORDER BY start_line DESC LIMIT 8",
                           (fid, start)).fetchall()
        block, first_line = _block(start, end, text, above, below)
        if block is None:
            # a piece of a line longer than a snippet: the piece, cut around its first match
            if any(a <= start <= b for a, b in shown):
                return None
            snippet, spans, _a, _b = snippet_window(text, terms)
            first = last = start
            windows = [(start, start)]
        else:
            free = [not any(a <= first_line + i <= b for a, b in shown)
                    for i in range(len(block))]
            own = (start - first_line, end - first_line)
            if not any(free[own[0]:own[1] + 1]):
                return None
            snippet, spans, parts = snippet_parts(block, own, terms, free=free)
            windows = [(first_line + a, first_line + b) for a, b in parts]
            first, last = windows[0][0], windows[-1][1]
        shown.extend(windows)
        lo, hi = _context(start, end, len(text), above, below)
        return Hit(path, min(lo, first), max(hi, last), score, snippet, spans,
                   [c for a, b in windows for c in self._credentials(fid, a, b)], first, last,
                   windows if len(windows) > 1 else [])

    def _credentials(self, fid: int, first: int, last: int) -> list[dict]:
        """The credentials the note ``fid`` held on the lines ``first``..``last`` (the
        stored text has them masked; the index recorded where they were, chunk by chunk)."""
        out = []
        for (creds,) in self.db.execute(
                "SELECT creds FROM chunks WHERE file=? AND creds IS NOT NULL AND "
                "start_line <= ? AND end_line >= ? ORDER BY start_line", (fid, last, first)):
            out += [c for c in json.loads(creds) if first <= c.get("line", 0) <= last
                    and c not in out]
        return out

    def _respelled(self, term: Term) -> Term:
        """A query word the vault never uses, replaced by the vault's own words that are
        most likely meant: those sharing all but its last three letters (``political`` →
        ``politics``, ``educaton`` → ``education``) or one edit away (``fesetival`` →
        ``festival``); at most two, the most used first. The word itself when none."""
        db = self.db
        if not self._vocab:
            db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.chunk_vocab "
                       "USING fts5vocab(main, chunk_fts, row)")
            self._vocab = True
        key = term.key
        found = []
        first = (key[0], chr(ord(key[0]) + 1))
        for word, docs in db.execute("SELECT term, doc FROM temp.chunk_vocab "
                                     "WHERE term >= ? AND term < ?", first):
            if word.isalpha() and (_common_prefix(key, word) >= max(4, len(key) - 3)
                                   or (len(key) >= 5 and _within_one_edit(key, word))):
                found.append((docs, word))
        if not found:
            return term
        found.sort(key=lambda f: (-f[0], f[1]))
        words = [w for _d, w in found[:2]]
        fts = " OR ".join(f'"{w}"' for w in words)
        pattern = re.compile(r"(?<![\w])(?:" + "|".join(re.escape(w) for w in words) + r")(?![\w])",
                             re.IGNORECASE)
        out = Term(f"{key}→{'/'.join(words)}", f"({fts})", False, pattern)
        out.df = db.execute("SELECT count(*) FROM chunk_fts WHERE chunk_fts MATCH ?",
                            (out.fts,)).fetchone()[0]
        return out

    def _rank(self, weighted, limit, allow, demote, recent, early=None,
              when=False, answer=None) -> list[list]:
        """Every candidate chunk as ``[score, path, start, end, text, id, file id]``, best
        first. ``when``: the question asks when (:func:`asks_when`), see :func:`_favour_time`;
        ``answer``: the kind of answer it asks for (:func:`answer_kind`), see
        :func:`_favour_answer`; and see :func:`_favour_speaker`.

        ``early``: a future of ``(match, generation, [(rowid, bm25)], rows)`` (see
        :class:`_Bm25Helper`), used when it ranked this very match on the same state."""
        db = self.db
        weight = sum(t.idf for t in weighted)
        match = " OR ".join(t.fts for t in weighted)

        # each level-1 match's first chunk (lowest start line), in one query: SQLite takes a
        # bare column's value from the row that holds the group's min()
        meta_rows = [row[:-1] for row in db.execute(
            f"SELECT {_ROW_COLUMNS}, min(c.start_line) FROM chunks c JOIN files f "
            "ON f.id = c.file WHERE c.file IN (SELECT rowid FROM meta_fts WHERE meta_fts "
            "MATCH ? ORDER BY bm25(meta_fts) LIMIT ?) GROUP BY c.file", (match, limit))]

        finders = [(t.idf, _finder(t)) for t in weighted]
        covs: dict[int, float] = {}  # a chunk's coverage
        seen: dict[str, list[bool]] = {}  # the terms in each piece (_joined_coverage)
        meta_covs: dict[int, float] = {}  # a note's level-1 coverage, once per note

        def measure(rows) -> None:
            for cid, path, _start, _end, text, meta, fid, ctx in rows:
                if cid in covs or (allow is not None and not allow(path)):
                    continue
                covs[cid] = _coverage(finders, text, ctx, seen) / weight
                if fid not in meta_covs:
                    meta_covs[fid] = _coverage(finders, meta) / weight

        measure(meta_rows)  # (while the helper ranks)

        ranked = found = None
        if early is not None:
            try:
                got_match, generation, got, got_rows = early.result()
            except Exception:  # noqa: BLE001 (ranked again below, where an error shows)
                pass
            else:
                if got_match == match and generation == self._generation():
                    ranked, found = got, got_rows
        if ranked is None:
            ranked = db.execute(_BM25_SQL, (match, limit)).fetchall()
            found = _chunk_rows(db, [rowid for rowid, _rank in ranked])
        bm25: dict[int, float] = {rowid: -rank for rowid, rank in ranked}

        rows: dict[int, tuple] = {row[0]: row for row in found}
        have_file = {row[6] for row in rows.values()}
        for row in meta_rows:  # the notes that BM25 found no chunk of
            if row[6] not in have_file:
                rows[row[0]] = row
        measure(rows.values())

        best = max(bm25.values(), default=0.0) or 1.0
        scored = []
        days = {}
        for cid, (_, path, start, end, text, _meta, fid, _ctx) in rows.items():
            if allow is not None and not allow(path):
                continue
            cov, meta_cov = covs[cid], meta_covs[fid]
            rel = max(0.0, bm25.get(cid, 0.0)) / best
            score = _W_TEXT * cov + _W_META * meta_cov + _W_BM25 * rel
            if path in demote:
                score *= INDEX_FACTOR
            score = min(1.0, max(0.0, score))
            if recent:
                days[cid] = date_of_path(path)
            scored.append([score, path, start, end, text, cid, fid])
        scored.sort(key=lambda s: (-s[0], s[1], s[2]))
        self._with_neighbours(scored, rows, covs, finders, weight, seen)
        _favour_speaker(scored, weighted)
        if answer:
            _favour_answer(scored, answer, weighted)
        if when:
            _favour_time(scored)
        if recent:
            _favour_recent(scored, days)
            scored.sort(key=lambda s: (-s[0], s[1], s[2]))
        return scored

    def _with_neighbours(self, scored, rows, covs, finders, weight, seen) -> None:
        """Lift each of the first _NEIGHBOURS candidates by half of the coverage its two
        neighbouring chunks add (their text with its own), and sort those again.

        A chunk is only snippet-sized: a question's words are often spread over an entry
        and the lines next to it (the question in one bullet, its subject in the one
        above), which a chunk of three snippets' size held together."""
        top = scored[:_NEIGHBOURS]
        if not top:
            return
        ids = [item[5] for item in top]
        marks = ",".join("?" * len(ids))
        near: dict[int, list[str]] = {}
        for cid, text in self.db.execute(
                "SELECT c.id, n.text FROM chunks c JOIN chunks n ON n.file = c.file AND "
                "(n.end_line = c.start_line - 1 OR n.start_line = c.end_line + 1) "
                f"WHERE c.id IN ({marks}) ORDER BY c.id, n.start_line", ids):
            near.setdefault(cid, []).append(text)
        for item in top:
            cid = item[5]
            if cid in near and covs[cid] < 1.0:
                wide = _joined_coverage(finders, [item[4], *near[cid]], rows[cid][7], seen)
                item[0] = min(1.0, item[0] + 0.5 * _W_TEXT * (wide / weight - covs[cid]))
        top.sort(key=lambda s: (-s[0], s[1], s[2]))
        scored[:_NEIGHBOURS] = top

    def close(self) -> None:
        if self._helper is not None:
            self._helper.close()
            self._helper = None
        self.db.close()

    def _generation(self) -> str | None:
        row = self.db.execute("SELECT value FROM state WHERE key='generation'").fetchone()
        return row[0] if row else None


_BM25_SQL = ("SELECT rowid, bm25(chunk_fts) FROM chunk_fts WHERE chunk_fts MATCH ? "
             "ORDER BY bm25(chunk_fts) LIMIT ?")
_ROW_COLUMNS = "c.id, f.path, c.start_line, c.end_line, c.text, f.meta, f.id, c.ctx"


def _chunk_rows(db: sqlite3.Connection, ids: list[int]) -> list[tuple]:
    """The candidate rows (``_ROW_COLUMNS``) of the chunks ``ids``."""
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    return db.execute(f"SELECT {_ROW_COLUMNS} FROM chunks c JOIN files f ON f.id = c.file "
                      f"WHERE c.id IN ({marks})", ids).fetchall()


class _Bm25Helper:
    """A second connection to a file index, on its own thread, that ranks chunks by BM25
    and reads the ranked chunks while the first one counts terms, finds level-1 matches and
    measures their coverage (SQLite runs the two at once; on one core it changes nothing
    but the order).

    Two connections may read different states of the index when another process writes
    meanwhile: every change writes a new ``generation`` token (see :meth:`SearchIndex.sync`),
    and a ranking read with another token than the query's is not used.
    """

    def __init__(self, path: Path):
        import threading
        from concurrent.futures import ThreadPoolExecutor

        self._local = threading.local()
        self._path = path
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="vaultkit-bm25")

    def start(self, match: str, limit: int):
        return self._pool.submit(self._rank, match, limit)

    def _rank(self, match: str, limit: int) -> tuple[str, str | None, list, list]:
        """``(match, generation, [(rowid, bm25)], the ranked chunks' rows)``, all read in
        one transaction."""
        db = getattr(self._local, "db", None)
        if db is None:
            db = self._local.db = sqlite3.connect(self._path, timeout=30, isolation_level=None)
        db.execute("BEGIN")
        try:
            row = db.execute("SELECT value FROM state WHERE key='generation'").fetchone()
            ranked = db.execute(_BM25_SQL, (match, limit)).fetchall()
            return (match, row[0] if row else None, ranked,
                    _chunk_rows(db, [rowid for rowid, _rank in ranked]))
        finally:
            db.execute("COMMIT")

    def _close(self) -> None:
        db = getattr(self._local, "db", None)
        if db is not None:
            db.close()
            self._local.db = None

    def close(self) -> None:
        try:
            self._pool.submit(self._close).result()
        finally:
            self._pool.shutdown(wait=True)


def _block(start: int, end: int, text: str, above: list, below: list
           ) -> tuple[list[str] | None, int]:
    """``(lines, first line number)``: the chunk's lines (``start``..``end``, ``text``) and
    those of the chunks right above and below it (``(start, end, text)``, nearest first), up
    to SNIPPET_CHARS of text on each side: room for any snippet that holds one of the
    chunk's lines. Only chunks of whole lines join; lines None: the chunk is a piece of a
    line longer than a snippet."""
    block = text.split("\n")
    if len(block) != end - start + 1:
        return None, start
    first, last = start, end
    for rows, up in ((above, True), (below, False)):
        size = 0
        for s, e, body in rows:
            lines = body.split("\n")
            if size >= SNIPPET_CHARS or len(lines) != e - s + 1 \
                    or (e != first - 1 if up else s != last + 1):
                break
            if up:
                block, first = lines + block, s
            else:
                block, last = block + lines, e
            size += len(body) + 1
    return block, first


def _context(start: int, end: int, size: int, above: list, below: list) -> tuple[int, int]:
    """The line range a hit reports: its chunk ``start``..``end`` (``size`` characters)
    widened by the neighbouring chunks of the same note (``(start, end, text)``, nearest
    first), one below then one above in turn, while the whole stays within CONTEXT_CHARS
    (what precedes and follows the snippet, such as the reply to a question it shows, is
    where a reader looks next)."""
    sides = [[(e, len(body)) for _s, e, body in below],
             [(s, len(body)) for s, _e, body in above]]
    bounds = [end, start]
    grew = True
    while grew:
        grew = False
        for i, side in enumerate(sides):
            if side and size + 1 + side[0][1] <= CONTEXT_CHARS:
                line, chars = side.pop(0)
                size += 1 + chars
                bounds[i] = line
                grew = True
    return bounds[1], bounds[0]


# A query is a question, not a document: every term costs one FTS lookup and one pattern
# run over every candidate chunk (a 1 MB query of 60,000 words once took 46 s and 220 MB).
MAX_QUERY_CHARS = 2_000
MAX_QUERY_TERMS = 32


def bounded_terms(query: str, today: dt.date | None = None) -> list[Term]:
    """The terms searched for: those of the first MAX_QUERY_CHARS characters, at most
    MAX_QUERY_TERMS of them, in query order. A relative date ("yesterday", "last week",
    "上个月", "вчера") is resolved against ``today`` (default: the local date) and also
    searched as the dates it means, found by the journals' and entries' date words."""
    text = query[:MAX_QUERY_CHARS]
    from vaultkit.memory.dates import relative_dates

    found = relative_dates(text, today or dt.date.today())
    extra: dict[str, Term] = {}
    for phrase, _words, keys in found:
        extra.setdefault(" ".join(keys), _date_term(phrase, keys))
    terms = query_terms(text)[:MAX_QUERY_TERMS]
    return (list(extra.values()) + terms)[:MAX_QUERY_TERMS]


def _date_term(phrase: str, keys: list[str]) -> Term:
    """A term that finds any of ``keys`` (ISO days, months or years) in indexed text."""
    fts = " OR ".join('"' + " ".join(k.split("-")) + '"' for k in keys)
    pattern = re.compile("(?<![0-9])(?:" + "|".join(re.escape(k) for k in keys) + ")")
    term = Term(f"{phrase.lower()} ({' '.join(keys[:1])}{'…' if len(keys) > 1 else ''})",
                f"({fts})", False, pattern)
    term.date = True
    return term


_RECENT = re.compile(r"\b(?:latest|most recent(?:ly)?|recently|newest|last time|lately)\b|"
                     r"最近|最新|недавн|последн", re.IGNORECASE)


def asks_for_recent(query: str) -> bool:
    """Whether the question asks for the newest memory ("latest", "最近", "недавно")."""
    return bool(_RECENT.search(query))


# A question asking when: English question forms (only English was measured, on LoCoMo).
_WHEN = re.compile(r"^\W*when\b|\b(?:what|which) (?:year|month|day|date|time)\b|"
                   r"\bhow long ago\b", re.IGNORECASE)
# A time expression in a chunk's own text: a relative day or period, a weekday, a year, an
# ISO date, a clock time, and a month name written with its capital ("May", not "may").
# Compiled when first asked (_time_expression): most searches never ask "when".
_TIME_EXPRESSION = (
    r"(?i:\b(?:yesterday|today|tonight|tomorrow|ago|weekend|(?:last|next|this|past) (?:week|"
    r"month|year|weekend|night|morning|afternoon|evening|summer|winter|spring|fall|autumn|"
    r"[a-z]+day)|(?:mon|tues|wednes|thurs|fri|satur|sun)days?|(?:19|20)\d\d|\d{1,2}:\d\d)\b)|"
    r"\b(?:January|February|March|April|May|June|July|August|September|October|November|"
    r"December)\b")
WHEN_LIFT = 0.1


@lru_cache(maxsize=1)
def _time_expression() -> re.Pattern:
    return re.compile(_TIME_EXPRESSION)


def asks_when(query: str) -> bool:
    """Whether the question asks when something happened ("When did …", "what year …")."""
    return bool(_WHEN.search(query))


def _favour_time(scored: list[list]) -> None:
    """Lift by WHEN_LIFT (capped at 1) each of the first _NEIGHBOURS candidates whose own
    text holds a time expression, and sort those again. Not its context words: every
    journal chunk carries its day's date there, and the answer to "when" is usually the
    turn that says it ("last Saturday", "in May 2023"), beside turns that share the
    question's words. Only the first _NEIGHBOURS: a chunk ranked below them does not reach
    the top 5 with 0.1 more, and the pattern costs about 0.2 M instructions a chunk."""
    found = _time_expression().search
    top = scored[:_NEIGHBOURS]
    for item in top:
        if found(item[4]):
            item[0] = min(1.0, item[0] + WHEN_LIFT)
    top.sort(key=lambda s: (-s[0], s[1], s[2]))
    scored[:_NEIGHBOURS] = top


# A transcript turn: a line that starts with its speaker's name in bold and a colon,
# "**Caroline**: …" or "- **Caroline**: …" (how a chat or meeting is kept in a journal).
_SPEAKER = lazy_re(r"\s*(?:[-*+]\s+)?\*\*([^*\n]+?)\*\*:")
SPEAKER_LIFT = 0.03


def _favour_speaker(scored: list[list], terms: list[Term]) -> None:
    """Lift by SPEAKER_LIFT (capped at 1) each of the first _NEIGHBOURS candidates holding
    a turn said by a person the question names (a query word is a word of the turn's
    speaker label) that also holds another query word, and sort those again. A question
    about a person is most often answered by what that person said; the name alone shows
    on every turn addressed to them ("Hey Caroline!") and on every turn they say."""
    names = [t for t in terms if not (t.cjk or t.date)]
    if not names:
        return
    top = scored[:_NEIGHBOURS]
    for item in top:
        text = item[4]
        if "**" not in text:
            continue
        for line in text.split("\n"):
            label = _SPEAKER.match(line)
            if label is None:
                continue
            said_by = [t for t in names if t.pattern.search(label.group(1))]
            if not said_by:
                continue
            said = line[label.end():]
            if any(t.pattern.search(said) for t in terms if t not in said_by):
                item[0] = min(1.0, item[0] + SPEAKER_LIFT)
                break
    top.sort(key=lambda s: (-s[0], s[1], s[2]))
    scored[:_NEIGHBOURS] = top


# A question asking who, or how many / how much (English forms only, as measured).
_WHO = re.compile(r"^\W*who(?:m|se)?\b", re.IGNORECASE)
_HOW_MANY = re.compile(r"^\W*how (?:many|much)\b", re.IGNORECASE)
# A question asking what someone did ("What did Nate make …", "What has Ana done …"), or
# what they like ("What does Ana enjoy …", "… favourite …", "… hobbies", "… activities").
# The two compiled only for a question starting with "what".
_WHAT = re.compile(r"^\W*what\b", re.IGNORECASE)
_DID = lazy_re(r"^\W*what (?:did|has|have|had)\b", re.IGNORECASE)
_LIKES = lazy_re(r"^\W*what\b.*\b(?:likes?|enjoys?|favou?rites?|into|hobb(?:y|ies)|"
                 r"activit(?:y|ies)|interests?|passions?)\b", re.IGNORECASE)
# A name: a capitalised word inside a sentence (after a lower-case word or a comma), not
# its first word, which is capitalised anyway. Both compiled when first used: few
# questions ask who or how many.
_NAME = lazy_re(r"(?<=[a-z,] )[A-Z][a-z]+")
# A number: digits, or a number written out.
_NUMBER = lazy_re(r"\b(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|"
                     r"twelve|twenty|thirty|forty|fifty|hundred|thousand|dozen|several|"
                     r"couple)\b", re.IGNORECASE)
ANSWER_LIFT = 0.05
# What the person asked about says in a turn: a first-person past ("I made", "we went",
# "I've finished") for what they did; a liking word for what they like. The past is
# case-sensitive: "I" is the pronoun, and a verb in "-ed" is lower-case.
_SAID = {
    "did": lazy_re(r"\b(?:I|[Ww]e)(?: just| recently| finally| also| even| actually| got to)? "
                   r"(?:[a-z]+ed|made|got|went|took|bought|saw|read|did|had|found|built|wrote|"
                   r"drew|ran|won|began|tried|gave|met|came|left|sold|brought|caught|taught|"
                   r"spent|sent|lost|flew|swam|sang|grew|held|heard|threw|rode|ate|paid|put|"
                   r"set|kept)\b|\b(?:I|[Ww]e)'ve (?:just |finally |also )?(?:[a-z]+ed|made|got|"
                   r"gotten|been|done|had|taken|seen|read|written|found|built|bought|"
                   r"started)\b"),
    "likes": lazy_re(r"\b(?:lov(?:e|es|ed|ing)|enjoy(?:s|ed|ing)?|into|favou?rites?|"
                     r"passion(?:ate)?|fan of|fond of|hooked)\b", re.IGNORECASE),
}
SAID_LIFT = 0.1


def answer_kind(query: str) -> str | None:
    """``"who"`` when the question asks who, ``"count"`` when it asks how many or how
    much, ``"did"`` when it asks what someone did, ``"likes"`` when it asks what they
    like (a hobby, a favourite, an activity), else None."""
    if _WHO.search(query):
        return "who"
    if _HOW_MANY.search(query):
        return "count"
    if not _WHAT.search(query):
        return None
    if _DID.search(query):
        return "did"
    if _LIKES.search(query):
        return "likes"
    return None


def _favour_answer(scored: list[list], kind: str, terms: list[Term]) -> None:
    """Lift by ANSWER_LIFT (capped at 1) each of the first _NEIGHBOURS candidates whose own
    text holds the kind of answer the question asks for, and sort those again: for "who",
    a name that is not a query word (in a turn, after its speaker label: the speaker is
    not the answer); for "how many", a number. Shared words find the turns about the
    subject; the one that answers is the one naming the person or giving the count.
    For "did" and "likes", see :func:`_favour_said`."""
    if kind in _SAID:
        _favour_said(scored, _SAID[kind], terms)
        return
    top = scored[:_NEIGHBOURS]
    for item in top:
        text = item[4]
        if kind == "count":
            found = _NUMBER.search(text) is not None
        else:
            found = False
            for line in text.split("\n"):
                label = _SPEAKER.match(line)
                said = line[label.end():] if label else line
                if any(not any(t.pattern.match(name.group(0)) for t in terms)
                       for name in _NAME.finditer(said)):
                    found = True
                    break
        if found:
            item[0] = min(1.0, item[0] + ANSWER_LIFT)
    top.sort(key=lambda s: (-s[0], s[1], s[2]))
    scored[:_NEIGHBOURS] = top


def _favour_said(scored: list[list], said: re.Pattern, terms: list[Term]) -> None:
    """Lift by SAID_LIFT (capped at 1) each of the first _NEIGHBOURS candidates holding a
    turn said by a person the question names (a query word in its speaker label) whose
    text after the label matches ``said``, and sort those again. "What did Nate make?" is
    answered by Nate's "I made it last night", which often shares only his name with the
    question, as do the turns addressed to him."""
    names = [t for t in terms if not (t.cjk or t.date)]
    if not names:
        return
    top = scored[:_NEIGHBOURS]
    for item in top:
        text = item[4]
        if "**" not in text:
            continue
        for line in text.split("\n"):
            label = _SPEAKER.match(line)
            if label is not None and any(t.pattern.search(label.group(1)) for t in names) \
                    and said.search(line[label.end():]):
                item[0] = min(1.0, item[0] + SAID_LIFT)
                break
    top.sort(key=lambda s: (-s[0], s[1], s[2]))
    scored[:_NEIGHBOURS] = top


def _favour_recent(scored: list[list], days: dict) -> None:
    """Lift dated notes by how recent they are among the candidates: the newest day gets
    × 1.0, the oldest × 0.8; undated notes stay as they are."""
    known = sorted({d for d in days.values() if d is not None})
    if len(known) < 2:
        return
    first, span = known[0].toordinal(), known[-1].toordinal() - known[0].toordinal()
    for item in scored:
        day = days.get(item[5])
        if day is not None:
            item[0] *= 0.8 + 0.2 * (day.toordinal() - first) / span


def query_cut(query: str) -> str | None:
    """What :func:`bounded_terms` leaves out of ``query``, said in one line, or None."""
    parts = []
    if len(query) > MAX_QUERY_CHARS:
        parts.append(f"its first {MAX_QUERY_CHARS:,} of {len(query):,} characters")
    terms = query_terms(query[:MAX_QUERY_CHARS])
    if len(terms) > MAX_QUERY_TERMS:
        parts.append(f"its first {MAX_QUERY_TERMS} of {len(terms):,} distinct terms")
    if not parts:
        return None
    return f"the query is long: searching {' and '.join(parts)}"


def _respellable(term: Term) -> bool:
    """A Latin query word of four letters or more that no chunk holds."""
    return not term.df and not term.cjk and not term.date and len(term.key) >= 4 \
        and term.key.isalpha()


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def _within_one_edit(a: str, b: str) -> bool:
    """Whether ``b`` is ``a`` with one letter changed, added or dropped."""
    if abs(len(a) - len(b)) > 1 or a == b:
        return False
    i = _common_prefix(a, b)
    return a[i + 1:] == b[i + 1:] or a[i:] == b[i + 1:] or a[i + 1:] == b[i:]


def _finder(term: Term) -> tuple:
    """How :func:`_coverage` tells whether ``term.pattern.search(body)`` finds the term in a
    chunk's body (its text and context words joined by a newline): the same answer, mostly
    without running the regular expression.

    A Latin term's pattern (:mod:`vaultkit.memory.text`) is case-insensitive with a
    look-behind, so the regular-expression engine tries it at every character of a chunk
    (about 20 µs a chunk). For an ASCII term the same answer comes from a substring search
    in the text's UTF-8 bytes with the ASCII letters lowercased, and a look at the
    characters around each occurrence: apart from its two cases, the only characters such
    a pattern matches to an ASCII letter are the four in ``_ODD_FOLDS``, and a piece that
    holds one is left to the pattern. A term matches inside one line, so it is found in
    the body exactly when it is found in the text or in the context words. A CJK term's
    pattern is the literal itself. Any other pattern (a respelled word, a date) is run on
    the body as it is.

    Returns ``(kind, key, whole, search)``: kind ``_WORD`` (``key`` as ASCII bytes, or for
    a word matched by its forms, a tuple of their common prefix then the forms, any of
    which matches; ``whole``: the key as a whole word, else any word starting with it),
    ``_LITERAL`` or ``_PATTERN``.
    """
    from vaultkit.memory.text import WORDISH

    pattern = term.pattern
    key = term.key
    generic = (_PATTERN, key, False, pattern.search)
    if term.cjk:
        if pattern.flags == re.UNICODE and pattern.pattern == re.escape(key) and "\n" not in key:
            return (_LITERAL, key, False, pattern.search)
        return generic
    if term.date or not key.isascii() or not key.isalnum() or key != key.lower() \
            or pattern.flags != re.IGNORECASE | re.UNICODE:
        return generic
    esc = re.escape(key)
    head, tail = rf"(?<![{WORDISH}])(?:", rf")(?![{WORDISH}])"
    if pattern.pattern.startswith(head) and pattern.pattern.endswith(tail):
        # the forms of a y word (vaultkit.memory.text): any of them as a whole word
        forms = pattern.pattern[len(head):-len(tail)].split("|")
        if all(f.isascii() and f.isalnum() and f == f.lower() for f in forms):
            # (their common prefix first: most pieces hold none, and are done with one find)
            return (_WORD, (key.encode("ascii"), *(f.encode("ascii") for f in forms)), True,
                    pattern.search)
        return generic
    if pattern.pattern == rf"(?<![{WORDISH}]){esc}[{WORDISH}]*":
        whole = False  # a prefix: any word starting with it
    elif pattern.pattern == rf"(?<![{WORDISH}]){esc}(?![{WORDISH}])":
        whole = True  # the key as a whole word
    else:
        return generic
    return (_WORD, key.encode("ascii"), whole, pattern.search)


_WORD, _LITERAL, _PATTERN = 0, 1, 2
# (lowercased) ASCII bytes of WORDISH (vaultkit.memory.text)
_ASCII_WORD = frozenset(b"0123456789abcdefghijklmnopqrstuvwxyz")
# The only characters a case-insensitive pattern matches to an ASCII letter other than its
# two cases (İ and ı to i, ſ to s, the Kelvin sign to k), as UTF-8
_ODD_FOLDS = ("\u0130".encode(), "\u0131".encode(), "\u017f".encode(), "\u212a".encode())
_WORDISH_ANY_CASE = None  # re.compile(f"[{WORDISH}]", re.IGNORECASE), made when first needed


def _odd_folds(data: bytes) -> bool:
    """Whether UTF-8 ``data`` holds one of the characters of ``_ODD_FOLDS``."""
    return (b"\xc4" in data and (b"\xc4\xb0" in data or b"\xc4\xb1" in data)) \
        or b"\xc5\xbf" in data or b"\xe2\x84\xaa" in data



def _holds_word(data: bytes, key: bytes, whole: bool) -> bool:
    """Whether lowered ``data`` holds ``key`` (or one of a tuple of keys) starting at a
    word's start (and, when ``whole``, ending at a word's end)."""
    if isinstance(key, tuple):  # (common prefix, *forms)
        return key[0] in data and any(_holds_word(data, k, whole) for k in key[1:])
    size = len(key)
    at = data.find(key)
    while at >= 0:
        if not _word_char(data, at, True) and not (
                whole and _word_char(data, at + size, False)):
            return True
        at = data.find(key, at + 1)
    return False


def _word_char(data: bytes, at: int, before: bool) -> bool:
    """Whether the character before (or at) byte ``at`` of UTF-8 ``data`` is one the
    patterns' look-around class ``[WORDISH]`` matches, case-insensitively."""
    global _WORDISH_ANY_CASE
    if before:
        if at == 0:
            return False
        byte = data[at - 1]
        if byte < 0x80:
            return byte in _ASCII_WORD
        start = at - 1
        while start > 0 and data[start] & 0xC0 == 0x80:
            start -= 1
        char = data[start:at].decode("utf-8", "surrogatepass")
    else:
        if at >= len(data):
            return False
        byte = data[at]
        if byte < 0x80:
            return byte in _ASCII_WORD
        size = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4  # (a lead byte: UTF-8)
        char = data[at:at + size].decode("utf-8", "surrogatepass")
    if _WORDISH_ANY_CASE is None:
        from vaultkit.memory.text import WORDISH

        _WORDISH_ANY_CASE = re.compile(f"[{WORDISH}]", re.IGNORECASE)
    return _WORDISH_ANY_CASE.match(char) is not None


def _coverage(finders: list, text: str, ctx: str | None = None,
              seen: dict | None = None) -> float:
    """The idf weight of the terms (``[(idf, _finder(term))]``) that
    ``term.pattern.search(_indexed(text, ctx))`` finds.

    ``seen``: what :func:`_found` said of each piece (a chunk's text, its context words)
    so far, for these ``finders`` (one query); see :func:`_joined_coverage`."""
    if seen is not None:
        return _joined_coverage(finders, [text], ctx, seen)
    pieces = [text, ctx] if ctx else [text]
    lowered: list = []  # per piece: (UTF-8 bytes with ASCII lowercased, holds an odd fold)
    body = None
    total = 0.0
    for idf, (kind, key, whole, search) in finders:
        if kind == _WORD:
            if not lowered:
                for piece in pieces:
                    data = piece.encode("utf-8", "surrogatepass").lower()
                    odd = not data.isascii() and _odd_folds(data)
                    lowered.append((data, odd))
            found = False
            for piece, (data, odd) in zip(pieces, lowered):
                if odd:
                    found = search(piece) is not None
                else:
                    found = _holds_word(data, key, whole)
                if found:
                    break
        elif kind == _LITERAL:
            found = any(key in piece for piece in pieces)
        else:
            if body is None:
                body = _indexed(text, ctx)
            found = search(body) is not None
        if found:
            total += idf
    return total


def _joined_coverage(finders: list, texts: list[str], ctx: str | None, seen: dict) -> float:
    """``_coverage(finders, "\n".join(texts), ctx)``, each piece looked at once a query.

    Many chunks carry the same context words (a journal entry's date forms, most of them
    outside ASCII and so looked at character by character), and a ranked chunk is measured
    again with the chunks beside it. A ``_WORD`` or ``_LITERAL`` term matches inside one
    line, so it is found in the body exactly when it is found in one of its pieces: what
    each piece holds is kept in ``seen`` (piece → :func:`_found`) for the query. A
    ``_PATTERN`` term still runs on the body."""
    pieces = [*texts, ctx] if ctx else texts
    found = None
    for piece in pieces:
        got = seen.get(piece)
        if got is None:
            got = seen[piece] = _found(finders, piece)
        found = got if found is None else [a or b for a, b in zip(found, got)]
    body = None
    total = 0.0
    for (idf, (kind, _key, _whole, search)), hit in zip(finders, found):
        if kind == _PATTERN:
            if body is None:
                body = _indexed("\n".join(texts), ctx)
            hit = search(body) is not None
        if hit:
            total += idf
    return total


def _found(finders: list, piece: str) -> list[bool]:
    """For each of ``finders``: whether its ``_WORD`` or ``_LITERAL`` term is in ``piece``
    (as :func:`_coverage` decides it for one piece); False for a ``_PATTERN`` term."""
    out = []
    data = None
    odd = False
    for _idf, (kind, key, whole, search) in finders:
        found = False
        if kind == _PATTERN:
            pass
        elif kind == _LITERAL:
            found = key in piece
        else:
            if data is None:
                data = piece.encode("utf-8", "surrogatepass").lower()
                odd = not data.isascii() and _odd_folds(data)
            if odd:
                found = search(piece) is not None
            else:
                found = _holds_word(data, key, whole)
        out.append(found)
    return out


def _indexed(text: str, ctx: str | None) -> str:
    """What a chunk is indexed as: its text, then its context words."""
    return f"{text}\n{ctx}" if ctx else text


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()


# -- snippets ----------------------------------------------------------------------

def make_snippet(text: str, terms: list[Term],
                 limit: int = SNIPPET_CHARS) -> tuple[str, list[tuple[int, int]]]:
    """At most ``limit`` characters of the chunk around its best-matching lines."""
    piece, spans, _first, _last = snippet_window(text, terms, limit)
    return piece, spans


def snippet_window(text: str, terms: list[Term], limit: int = SNIPPET_CHARS
                   ) -> tuple[str, list[tuple[int, int]], int, int]:
    """``(snippet, highlight spans, first line, last line)``: ``text`` whole when it fits in
    ``limit`` characters, else whole lines of it placed by :func:`snippet_lines` around its
    best-matching line (lines are 0-based offsets into the text)."""
    text = text.replace("\r\n", "\n")
    lines = text.split("\n")
    if len(text) <= limit:
        return _trimmed(text, terms, 0, len(lines) - 1)
    return snippet_lines(lines, (0, len(lines) - 1), terms, limit)


def snippet_lines(lines: list[str], own: tuple[int, int], terms: list[Term],
                  limit: int = SNIPPET_CHARS, free: list[bool] | None = None
                  ) -> tuple[str, list[tuple[int, int]], int, int]:
    """``(snippet, highlight spans, first, last)``: :func:`snippet_parts` with the first
    and last line it shows (0-based; it may leave out lines between them, see there)."""
    snippet, spans, windows = snippet_parts(lines, own, terms, limit, free)
    return snippet, spans, windows[0][0], windows[-1][1]


def snippet_parts(lines: list[str], own: tuple[int, int], terms: list[Term],
                  limit: int = SNIPPET_CHARS, free: list[bool] | None = None
                  ) -> tuple[str, list[tuple[int, int]], list[tuple[int, int]]]:
    """``(snippet, highlight spans, windows)``: at most ``limit`` characters of whole lines
    of ``lines`` around the best line of ``own`` (the ranked chunk's lines; the others are
    the chunks beside it), using none that ``free`` marks False (another result of the
    note shows it). ``windows`` are the 0-based ``(first, last)`` line ranges shown: one, or
    two joined in the snippet by a line ``…``.

    The seed is the line of ``own`` holding the most query weight (idf of the distinct
    terms it matches), the first of equals; with none, the chunk's first line. The window
    grows to the side whose next line adds more query weight not yet shown; a line below
    that asks a question (it ends in ``?``, a bracketed note aside) comes only together
    with the line after it, its reply. When neither side adds weight, it takes the line
    after the seed, then the line before it (what the seed replies to), then goes on
    downward, since what follows a line answers it (the reply below a question, the lines
    under a heading, a record's fields under its label); but not into the next entry (a
    heading) while the lines above still fit: there it takes the lines above, up to the
    heading of the seed's own entry. A short transcript turn at the window's top reacting
    to the turn above it (:func:`_reacts`) brings that turn in first, and so do the lines
    up to the entry's heading when the headings it sits under name a query term not shown
    yet (:func:`_under_named_heading`).

    When the window can grow no further (the next line on each side is too long for the
    budget left, or another result shows it), the budget left is not wasted: the snippet
    skips that one line, or the lines the other result shows (``…`` stands for them), and
    shows a second window from the line beyond, the one holding query weight first, else
    the nearer to the seed, else the one below, grown by the same rules. A seed line longer than ``limit`` is cut around
    its first match on word boundaries.
    """
    free = free if free is not None else [True] * len(lines)
    idf = [t.idf or 1.0 for t in terms]
    # a plain ASCII word's pattern matches an ASCII line only where the word is a substring
    # of the line lowercased (a cheap test first: most lines hold no query word)
    plain = [t.key if not (t.cjk or t.date) and t.key.isascii() and t.key.isalnum()
             and t.key == t.key.lower() else None for t in terms]
    found: dict[int, frozenset] = {}  # the terms each line matches, for the lines looked at

    def hits(ix: int) -> frozenset:
        got = found.get(ix)
        if got is None:
            line = lines[ix]
            low = line.lower() if line.isascii() else None
            got = found[ix] = frozenset(
                i for i, t in enumerate(terms)
                if (low is None or plain[i] is None or plain[i] in low)
                and t.pattern.search(line))
        return got

    def gain(ix: int, shown: set) -> float:
        return sum(idf[i] for i in hits(ix) - shown)

    seeds = [ix for ix in range(own[0], own[1] + 1) if free[ix]] or [own[0]]
    seed = max(seeds, key=lambda ix: (gain(ix, set()), -ix))
    if len(lines[seed]) > limit:
        line = lines[seed]
        spans = _spans(line, terms)
        at = spans[0][0] if spans else 0
        begin = max(0, min(at - limit // 3, len(line) - limit))
        if begin:
            space = line.find(" ", begin, at + 1)
            begin = space + 1 if space >= 0 else begin
        piece = line[begin:]
        piece = piece[:_word_cut(piece, limit)] if len(piece) > limit else piece
        piece = piece.rstrip()
        return piece, _spans(piece, terms), [(seed, seed)]
    return _joined(lines, _grow(lines, seed, free, limit, hits, gain), terms)


GAP = "\u2026"  # the line between the two windows of a snippet
_GAP_CHARS = len(GAP) + 2  # it and the newlines around it


def _grow(lines: list[str], seed: int, free: list[bool], limit: int, hits, gain
          ) -> list[tuple[int, int]]:
    """The windows (0-based ``(first, last)``, in order) of a snippet grown from ``seed``
    within ``limit`` characters, as :func:`snippet_parts` describes."""
    shown = set(hits(seed))
    asks: dict[int, bool] = {}
    lo, hi, size = _widen(lines, free, limit, hits, gain, asks, shown, seed,
                          len(lines[seed]))
    # the line beyond the one that did not fit, or beyond the lines a better result of the
    # note shows (the window is hemmed in by its snippet): one with query weight, else the
    # nearer to the seed, else the one below
    skip = [(gain(ix, shown) > 0, -abs(ix - seed), ix > seed, ix)
            for ix in (_beyond(lines, free, hi, 1), _beyond(lines, free, lo, -1))
            if 0 <= ix < len(lines) and free[ix] and lines[ix].strip()
            and size + _GAP_CHARS + len(lines[ix]) <= limit]
    if not skip:
        return [(lo, hi)]
    other = max(skip)[3]
    rest = [f and not lo <= i <= hi for i, f in enumerate(free)]
    shown |= hits(other)
    a, b, _size = _widen(lines, rest, limit, hits, gain, asks, shown, other,
                         size + _GAP_CHARS + len(lines[other]))
    if b + 1 == lo or hi + 1 == a:  # the second window reached the first: one window
        return [(min(a, lo), max(b, hi))]
    return sorted([(lo, hi), (a, b)])


def _beyond(lines: list[str], free: list[bool], edge: int, step: int) -> int:
    """Where a second window may start past the window's ``edge`` line, going ``step``
    (1: down, -1: up): past the lines a better result shows (and the blank lines after
    them) when the next line is one, else past the next line (the one too long to fit)."""
    ix = edge + step
    if not 0 <= ix < len(lines) or free[ix]:
        return ix + step
    while 0 <= ix < len(lines) and (not free[ix] or not lines[ix].strip()):
        ix += step
    return ix


def _widen(lines: list[str], free: list[bool], limit: int, hits, gain, asks: dict,
           shown: set, seed: int, size: int) -> tuple[int, int, int]:
    """``(first, last, size)``: the window grown from ``seed`` while its lines fit in
    ``limit`` characters (``size`` so far), as :func:`snippet_parts` describes; ``shown``
    (the query terms already shown) is extended."""
    n = len(lines)
    lo = hi = seed
    while True:
        # the line below, with its reply when it asks a question
        down = []
        ix = hi + 1
        if ix < n and free[ix]:
            down = [ix]
            if ix + 1 < n and free[ix + 1]:
                q = asks.get(ix)
                if q is None:
                    q = asks[ix] = _asks(lines[ix]) and bool(lines[ix + 1].strip()) \
                        and not _HEADING.match(lines[ix + 1])
                if q:
                    down.append(ix + 1)
            if size + sum(1 + len(lines[i]) for i in down) > limit:
                down = []
        above = lo > 0 and free[lo - 1] and size + 1 + len(lines[lo - 1]) <= limit
        if not (down or above):
            break
        g_below = -1.0
        if down:
            g_below = gain(down[0], shown)
            if len(down) == 2:
                g_below += gain(down[1], shown | hits(down[0]))
        g_above = gain(lo - 1, shown) if above else -1.0
        if g_below == g_above:
            # the line before the seed (what it replies to) once the line after it is in; a
            # heading below starts the next entry, one at or above the seed ends the way up;
            # a short turn reacting to the one above it says little itself: that one first
            # and so do the lines up to the entry's heading when the headings it sits
            # under name a query word not shown yet (the day asked about, the entry's title)
            go_down = not (above and (lo == seed < hi or _HEADING.match(lines[hi + 1])
                                      or _reacts(lines[lo], lines[lo - 1])
                                      or _under_named_heading(lines, free, lo, limit - size,
                                                              hits, shown))
                           and not _HEADING.match(lines[lo]))
        else:
            go_down = g_below > g_above
        if go_down:
            for ix in down:
                hi = ix
                size += 1 + len(lines[ix])
                shown |= hits(ix)
        else:
            lo -= 1
            size += 1 + len(lines[lo])
            shown |= hits(lo)
    return lo, hi, size


def _under_named_heading(lines: list[str], free: list[bool], lo: int, room: int, hits,
                         shown: set) -> bool:
    """Whether the lines above ``lo`` up to their entry's heading are free, fit in
    ``room`` characters, and that heading or one it sits under (the nearest heading above
    of each higher level) holds a query term not in ``shown``."""
    ix = lo - 1
    while ix >= 0 and free[ix]:
        room -= 1 + len(lines[ix])
        if room < 0:
            return False
        head = _HEADING.match(lines[ix])
        if head is not None:
            break
        ix -= 1
    else:
        return False
    level = len(head.group(1))
    while True:
        if hits(ix) - shown:
            return True
        if level == 1:
            return False
        ix -= 1
        while ix >= 0:
            head = _HEADING.match(lines[ix])
            if head is not None and len(head.group(1)) < level:
                break
            ix -= 1
        else:
            return False
        level = len(head.group(1))


# A turn reacting to the one before it: after an optional greeting ("Hey Nate,"), an
# interjection, thanks, sorry or congratulations, or a short exclamation (one to four
# words and "!"). English forms, the ones measured.
_REACTION = lazy_re(
    r"\s*(?:(?:hey|hi|hello)\b[^.!?,\n]{0,24}[,!.]\s*)?"
    r"(?:(?:wow|whoa|oh|ooh|aw+|yay|ouch|yikes|omg|haha|cool|nice|great|awesome|amazing|"
    r"congrats|congratulations|thanks|thank you|sorry)\b"
    r"|(?:[\w'’,]+\s+){0,3}[\w'’]+!)", re.IGNORECASE)
REACTION_CHARS = 80  # a turn this long at most (after its label) is a short reaction


def _reacts(line: str, above: str) -> bool:
    """Whether ``line`` is a short turn reacting to ``above``, another speaker's turn: at
    most REACTION_CHARS characters after its speaker label, starting with a reaction."""
    if "**" not in line or "**" not in above:  # (no pattern compiled for other notes)
        return False
    mine = _SPEAKER.match(line)
    if mine is None or len(line) - mine.end() > REACTION_CHARS:
        return False
    theirs = _SPEAKER.match(above)
    return theirs is not None and theirs.group(1) != mine.group(1) \
        and _REACTION.match(line, mine.end()) is not None


_NOTE_AT_END = re.compile(r"\s*(?:\[[^\]]*\]|\([^)]*\))\s*$")


def _asks(line: str) -> bool:
    """Whether the line ends on a question, a bracketed note after it aside (an image
    caption, a link)."""
    text = line.rstrip()
    while text.endswith(("]", ")")):
        cut = _NOTE_AT_END.sub("", text)
        if cut == text:
            break
        text = cut
    return text.endswith(("?", "？"))


def _joined(lines: list[str], windows: list[tuple[int, int]], terms: list[Term]
            ) -> tuple[str, list[tuple[int, int]], list[tuple[int, int]]]:
    """``(snippet, spans, windows)``: the windows' lines, blank lines trimmed at their ends,
    joined by a line ``…``."""
    pieces, out = [], []
    for a, b in windows:
        while a < b and not lines[a].strip():
            a += 1
        while b > a and not lines[b].strip():
            b -= 1
        pieces.append("\n".join(lines[a:b + 1]).rstrip())
        out.append((a, b))
    snippet = f"\n{GAP}\n".join(pieces)
    return snippet, _spans(snippet, terms), out


def _trimmed(piece: str, terms: list[Term], first: int, last: int
             ) -> tuple[str, list[tuple[int, int]], int, int]:
    """The snippet without blank lines at either end, with its spans and line offsets."""
    lines = piece.split("\n")
    while len(lines) > 1 and not lines[0].strip():
        lines.pop(0)
        first += 1
    while len(lines) > 1 and not lines[-1].strip():
        lines.pop()
        last -= 1
    piece = "\n".join(lines).rstrip()
    return piece, _spans(piece, terms), first, last


def _spans(text: str, terms: list[Term]) -> list[tuple[int, int]]:
    """``match_spans(text, terms)``, without running the patterns of the terms ``text``
    cannot hold. A snippet holds few of a query's words, and a Latin term's pattern (a
    look-behind first) is tried at every character: a ``_WORD`` term (:func:`_finder`) can
    match only where its key is in the text's bytes with ASCII lowercased, unless the text
    holds one of ``_ODD_FOLDS``; a ``_LITERAL`` one only where its key is."""
    data = None
    odd = False
    keep = []
    for t in terms:
        kind, key = _kind_and_key(t.key, t.pattern, t.cjk, t.date)
        if kind == _WORD:
            if data is None:
                data = text.encode("utf-8", "surrogatepass").lower()
                odd = not data.isascii() and _odd_folds(data)
            if not odd and (key if isinstance(key, bytes) else key[0]) not in data:
                continue
        elif kind == _LITERAL and key not in text:
            continue
        keep.append(t)
    return match_spans(text, keep)


@lru_cache(maxsize=1024)
def _kind_and_key(key: str, pattern: re.Pattern, cjk: bool, date: bool) -> tuple:
    """:func:`_finder`'s kind and key for a term made of these (a query's terms are new
    objects each time; their patterns are the same)."""
    return _finder(Term(key, "", cjk, pattern, date=date))[:2]


def _word_cut(text: str, limit: int) -> int:
    """The largest cut ≤ limit that does not split a Latin word."""
    import re

    from vaultkit.memory.text import WORDISH

    word = re.compile(f"[{WORDISH}]")
    cut = limit
    floor = max(1, limit - 120)
    while cut > floor:
        if not (word.match(text[cut - 1]) and word.match(text[cut])):
            return cut
        cut -= 1
    return limit


def highlight(snippet: str, spans: list[tuple[int, int]], colour: bool) -> str:
    """The snippet with the matched words marked. A credential is never marked: a mark
    inside it (``**ghp**_…``, searched for "ghp") would cut it where the output boundary
    no longer knows it as one, and it would be printed whole."""
    spans = _outside_credentials(snippet, spans)
    if not spans:
        return snippet
    on, off = ("\x1b[1;33m", "\x1b[0m") if colour else ("**", "**")
    if not colour and "**" in snippet:
        # a word the note already writes bold stays as written: marked again it would
        # print as ``****Jon****``
        bold = [m.span(1) for m in _BOLD.finditer(snippet)]
        spans = [(a, b) for a, b in spans if not any(x <= a and b <= y for x, y in bold)]
    out = []
    pos = 0
    for a, b in spans:
        out.append(snippet[pos:a])
        out.append(on + snippet[a:b] + off)
        pos = b
    out.append(snippet[pos:])
    return "".join(out)


def _outside_credentials(snippet: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` less those that overlap a credential the detector finds in ``snippet``, or
    a word holding ``…``: a credential masked as the index stores it (``ghp_…8Ue2``)."""
    from vaultkit.vault.secretscan import has_candidates

    if spans and "…" in snippet:
        masked = [m.span() for m in _MASKED_WORD.finditer(snippet)]
        spans = [(a, b) for a, b in spans if not any(a < y and x < b for x, y in masked)]
    if not spans or not has_candidates(snippet):
        return spans
    from vaultkit.vault.secretscan import scan_text

    lines = snippet.split("\n")
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    taken = []
    for f in scan_text(snippet):
        if 0 < f.line <= len(starts):
            at = starts[f.line - 1] + f.column - 1
            # (a finding that gives no length, a private key's header: the rest of its line)
            taken.append((at, at + f.length if f.length else
                          starts[f.line - 1] + len(lines[f.line - 1])))
    return [(a, b) for a, b in spans if not any(a < y and x < b for x, y in taken)]


_MASKED_WORD = re.compile(r"[^\s…]*…[^\s…]*")
# a bold run on one line, as CommonMark opens and closes ``**``: not beside a space inside
_BOLD = re.compile(r"\*\*(?![\s*])(.+?)(?<![\s*])\*\*")


# -- the whole operation -----------------------------------------------------------

def search_vault(vault, query: str, *, max_results: int = DEFAULT_MAX_RESULTS,
                 min_score: float = DEFAULT_MIN_SCORE, type_name: str | None = None,
                 layer: str | None = None) -> list[Hit]:
    """Update the index from the loaded vault, then search it."""
    from vaultkit.memory.memset import memory_notes

    index = SearchIndex(vault.root)
    try:
        index.sync(vault, memory_notes(vault))
        return _query(index, vault.profile, query, max_results, min_score, type_name, layer)
    finally:
        index.close()


def search_scan(scan, query: str, *, max_results: int = DEFAULT_MAX_RESULTS,
                min_score: float = DEFAULT_MIN_SCORE, type_name: str | None = None,
                layer: str | None = None, use_cache: bool = True,
                index: "SearchIndex | None" = None, load=None, members=None,
                status: dict | None = None) -> list[Hit]:
    """Search, reading the vault only when a file changed since the index was last synced.

    ``scan`` (vaultkit.vault.loader.scan_vault) lists every file with its size, mtime,
    ctime and inode; when that listing and the configuration are what the index was synced
    with, no note's mtime is young enough to have changed within the same clock tick, and
    each note whose ctime is holds the text the index has for it, the notes are not read
    at all. Otherwise the vault is loaded and the index brought up to date first, so a
    deleted or edited note is never served stale.

    A long-running caller (``vaultkit mcp``) passes the ``index`` it keeps open, a
    ``load(scan) -> Vault`` that reuses the notes it already parsed, and ``members(vault)``,
    the vault's memory set (:func:`vaultkit.memory.memset.memory_notes`) as it keeps it.

    When the index file is older than the files and cannot be written (another writer holds
    its lock past BUSY_TIMEOUT_S, a read-only folder or file system, a full disk), the
    search runs on a copy of it in memory brought up to date the same way, so the answer is
    the one an up-to-date index gives; ``status`` (a dict, when passed) then gets
    ``stale``: the reason the index on disk is older than the files.
    """
    from vaultkit.memory.memset import memory_notes

    members = members or memory_notes

    key = f"{scan.settings.fingerprint}:{scan.digest}"
    owned = index is None
    if owned:
        index = SearchIndex(scan.root, in_memory=not use_cache)
    try:
        synced, when = index.synced_with()
        current = synced == key and scan.newest_mtime_ns < when - _RACY_NS
        if current and index.same_texts(scan, when):
            index.settle(key, when, scan)
        else:
            if load is None:
                from vaultkit.vault.loader import Lent, load_vault

                vault = load_vault(use_cache=use_cache, lent=Lent(scan=scan))
            else:
                vault = load(scan)
            try:
                index.sync(vault, members(vault), (key, scan.started_ns))
            except sqlite3.OperationalError as exc:
                if index.path is None or not _unwritable(exc):
                    raise
                copy = index.memory_copy()
                try:
                    copy.sync(vault, members(vault))
                    hits = _query(copy, scan.settings.profile, query, max_results, min_score,
                                  type_name, layer)
                finally:
                    copy.close()
                if status is not None:
                    status["stale"] = stale_note(str(exc))
                return hits
        return _query(index, scan.settings.profile, query, max_results, min_score, type_name,
                      layer)
    finally:
        if owned:
            index.close()


def stale_note(reason: str) -> str:
    """What a search says when the index on disk could not be brought up to date."""
    return (f"the search index in .vaultkit/ is older than the notes and could not be "
            f"updated ({reason}); these results come from a copy of it brought up to date "
            "in memory")


def _unwritable(exc: sqlite3.OperationalError) -> bool:
    """Whether SQLite refused a write for a reason outside vaultkit: a lock another writer
    holds, a read-only file or file system, a full disk, an I/O error."""
    text = str(exc).lower()
    return any(word in text for word in ("locked", "busy", "readonly", "read-only",
                                          "full", "i/o", "unable to open"))


def _query(index: "SearchIndex", profile, query: str, max_results: int, min_score: float,
           type_name: str | None, layer: str | None) -> list[Hit]:
    allow = None
    if type_name or layer:
        def allow(path: str) -> bool:
            if type_name and profile.type_of(path) != type_name:
                return False
            if layer:
                got = "bootstrap" if path.startswith("../") else profile.layer_of(path)
                if got is None and path == "MEMORY.md":
                    got = "bootstrap"
                if got != layer:
                    return False
            return True
    demote = frozenset({profile.expand(profile.index.path)})
    return index.search(query, max_results=max_results, min_score=min_score, allow=allow,
                        demote=demote)


def index_path(root: Path) -> Path:
    from vaultkit.vault.cachefile import CACHE_DIR

    return root / CACHE_DIR / DB_NAME
