"""What every runtime loader shares: units, the pieces a runtime loads, confined reading.

A loader (one module of this package per loading algorithm) is a function from a
:class:`Request` to a :class:`RuntimeContext`; :mod:`.registry` names them. Everything a
loader reads goes through :class:`Files`, which never follows a symlink out of the
repository nor into ``.git/``.
"""

from __future__ import annotations

import math
import os
import re
from functools import lru_cache
from pathlib import Path
from vaultkit.core.lazyre import lazy_re
from vaultkit.core.plain import FRESH

TYPE_CHECKING = False  # (typing's own flag costs importing typing)
if TYPE_CHECKING:
    from typing import Any, Protocol
else:  # (a loader is any function of this shape: the class only names it)
    Protocol = object

RUNTIME_ORDER = ("openclaw", "claude-code", "codex")
SESSIONS = ("main", "cron", "subagent", "group")

# JavaScript's String.prototype.trimEnd: WhiteSpace and LineTerminator (ECMA-262)
_JS_SPACE = ("\t\n\x0b\x0c\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
             "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff")
_JS_SPACE_RUN = lazy_re(f"[{_JS_SPACE}]+")
MIN_TRIMMED_CONTENT = 16  # OpenClaw: under this much content beside the full marker, the compact one

_CJK = ("[\u1100-\u11ff\u2e80-\u2fdf\u3000-\u303f\u3040-\u30ff\u3100-\u31ff"
        "\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef"
        "\U00020000-\U0003134f]")


@lru_cache(maxsize=None)
def _cjk() -> re.Pattern:
    """Compiled on first use (its character ranges take ~5 ms; most runs never estimate)."""
    return re.compile(_CJK)


def estimate_tokens(text: str) -> int:
    """One token per CJK character plus one per 4 bytes (UTF-8) of the rest."""
    if text.isascii():  # no CJK character; one token per 4 bytes
        return math.ceil(len(text) / 4)
    cjk = _cjk().findall(text)
    rest = len(text.encode("utf-8")) - sum(len(c.encode("utf-8")) for c in cjk)
    return len(cjk) + math.ceil(rest / 4)


# -- units -------------------------------------------------------------------------------

def u16len(text: str) -> int:
    """Length as JavaScript counts it: UTF-16 code units."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def units(text: str, unit: str) -> int:
    if unit == "bytes":
        return len(text.encode("utf-8", "surrogatepass"))
    if unit == "codepoints":  # a Python runtime's len()
        return len(text)
    return u16len(text)


def js_trim_end(text: str) -> str:
    return text.rstrip(_JS_SPACE)


def u16_prefix(text: str, n: int) -> str:
    """The longest start of ``text`` of at most ``n`` UTF-16 units, never half a pair."""
    if n <= 0:
        return ""
    if text.isascii():
        return text[:n]
    count = 0
    for i, ch in enumerate(text):
        count += 2 if ord(ch) > 0xFFFF else 1
        if count > n:
            return text[:i]
    return text


def u16_suffix(text: str, n: int) -> str:
    """The longest end of ``text`` of at most ``n`` UTF-16 units, never half a pair."""
    if n <= 0:
        return ""
    if text.isascii():
        return text[-n:] if n < len(text) else text
    count = 0
    for i in range(len(text) - 1, -1, -1):
        count += 2 if ord(text[i]) > 0xFFFF else 1
        if count > n:
            return text[i + 1:]
    return text


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, max(0, index)) + 1


def _fmt(template: str, **values) -> str:
    out = template
    for key, value in values.items():
        out = out.replace("{" + key + "}", str(value))
    return out


# -- what a runtime loads ----------------------------------------------------------------

class Piece:
    """One file as a runtime loads it."""

    _fields = ("path", "role", "length", "injected", "injected_length", "kept", "cut",
               "first_lost_line", "last_lost_line", "reason", "via", "depth", "refused",
               "linked", "cap", "assumed")
    path: str  # vault-relative ('../X.md' above the vault)
    role: str  # bootstrap, instructions, rule, import, auto memory, project doc, missing
    length: int  # the file's length in the runtime's unit (after what it strips)
    injected: str  # exactly what the runtime puts in context for it, cut markers included
    injected_length: int
    kept: int  # units of the file's own text that are loaded
    cut: str  # "", "middle", "tail", "dropped"
    first_lost_line: int | None  # first line (of the file) not loaded
    last_lost_line: int | None
    reason: str  # why it is cut or not loaded
    via: str  # the file that imported it
    depth: int
    refused: str  # why the file is not read at all (a symlink out of the repository, ...)
    linked: str  # why its text is not shown (other hard links); it is still measured
    cap: int | None  # a fixed per-file cap no setting raises (OpenClaw's USER.md)
    # the cut follows from a version this machine did not show (no install found): what is
    # assumed, so a rule does not block a commit on it
    assumed: str

    def __init__(self, path, role, length, injected, injected_length, kept, cut="",
                 first_lost_line=None, last_lost_line=None, reason="", via="", depth=0,
                 refused="", linked="", cap=None, assumed=""):
        self.path = path
        self.role = role
        self.length = length
        self.injected = injected
        self.injected_length = injected_length
        self.kept = kept
        self.cut = cut
        self.first_lost_line = first_lost_line
        self.last_lost_line = last_lost_line
        self.reason = reason
        self.via = via
        self.depth = depth
        self.refused = refused
        self.linked = linked
        self.cap = cap
        self.assumed = assumed

    @property
    def lost(self) -> int:
        return max(0, self.length - self.kept)

    def to_dict(self) -> dict:
        return {"path": self.path, "role": self.role, "length": self.length,
                "injected_length": self.injected_length, "kept": self.kept,
                "lost": self.lost, "cut": self.cut or None,
                "first_lost_line": self.first_lost_line,
                "last_lost_line": self.last_lost_line, "reason": self.reason or None,
                "via": self.via or None, "depth": self.depth,
                "refused": self.refused or None, "not_shown": self.linked or None}


class ImportProblem:
    """An `@path` import a runtime could not follow."""

    _fields = ("path", "line", "target", "kind", "detail")
    path: str  # the importing file
    line: int
    target: str  # as written
    kind: str  # missing, circular, too-deep, in-code
    detail: str

    def __init__(self, path, line, target, kind, detail=""):
        self.path = path
        self.line = line
        self.target = target
        self.kind = kind
        self.detail = detail


class RuntimeContext:
    """Everything one runtime loads at session start, in its order."""

    _fields = ("runtime", "label", "unit", "session", "pieces", "per_file_max", "total_max",
               "limits_source", "joiner", "window_tokens", "notes", "imports")
    runtime: str
    label: str
    unit: str
    session: str | None
    pieces: list[Piece]
    per_file_max: int | None
    total_max: int | None
    limits_source: str
    joiner: str
    window_tokens: int
    notes: list[str]  # what is not simulated, and why
    imports: list[ImportProblem]

    def __init__(self, runtime, label, unit, session, pieces=FRESH, per_file_max=None,
                 total_max=None, limits_source="", joiner="\n\n", window_tokens=200000,
                 notes=FRESH, imports=FRESH):
        self.runtime = runtime
        self.label = label
        self.unit = unit
        self.session = session
        self.pieces = [] if pieces is FRESH else pieces
        self.per_file_max = per_file_max
        self.total_max = total_max
        self.limits_source = limits_source
        self.joiner = joiner
        self.window_tokens = window_tokens
        self.notes = [] if notes is FRESH else notes
        self.imports = [] if imports is FRESH else imports

    @property
    def loaded(self) -> list[Piece]:
        return [p for p in self.pieces if p.injected]

    @property
    def text(self) -> str:
        return self.joiner.join(p.injected for p in self.loaded)

    @property
    def shown_text(self) -> str:
        """:attr:`text` as printed: a file with other hard links by a line saying so (its
        other name may be outside the vault: ``get`` and MCP do not serve it either)."""
        return self.joiner.join(shown(p) for p in self.loaded)

    @property
    def total(self) -> int:
        return sum(p.injected_length for p in self.loaded)

    @property
    def tokens(self) -> int:
        return sum(estimate_tokens(p.injected) for p in self.loaded)

    @property
    def share(self) -> float:
        return self.tokens / self.window_tokens if self.window_tokens else 0.0

    @property
    def cut(self) -> list[Piece]:
        return [p for p in self.pieces if p.cut]

    @property
    def refused(self) -> list[Piece]:
        return [p for p in self.pieces if p.refused]

    def to_dict(self) -> dict:
        return {"runtime": self.runtime, "label": self.label, "unit": self.unit,
                "session": self.session, "per_file_max": self.per_file_max,
                "total_max": self.total_max, "limits_source": self.limits_source,
                "total": self.total, "estimated_tokens": self.tokens,
                "context_window_tokens": self.window_tokens,
                "window_share": round(self.share, 4),
                "files": [p.to_dict() for p in self.pieces],
                "imports": [vars(i) for i in self.imports], "notes": self.notes}


def shown(piece: Piece) -> str:
    """What ``--show`` prints for a loaded piece."""
    return f"(not shown: {piece.linked})" if piece.linked else piece.injected


# -- reading -----------------------------------------------------------------------------

class Files:
    """Reads files of the workspace and the repository around it, each once, confined.

    A runtime follows symlinks; vaultkit does not follow one out of the repository (the
    area the runtimes are simulated in), nor into ``.git/``: such a file is read neither
    for its text nor for its size (:meth:`refusal` says why). What is read is read by its
    real path with the last component not followed, so a link swapped in meanwhile is
    refused too.
    """

    def __init__(self, vault):
        self.vault = vault
        self.root = Path(vault.root)
        self.workspace = Path(vault.workspace)
        top = git_root(self.workspace)
        self.top = top if top is not None else self.workspace
        self.area = os.path.realpath(self.top)
        self.area_name = ("the vault" if self.area == os.path.realpath(self.root) else
                          "the repository" if top is not None else "the workspace")
        self._memo: dict[Path, str | None] = {}
        self._raw: dict[Path, bytes | None] = {}
        self._refused: dict[Path, str | None] = {}
        self.linked: dict[str, str] = {}  # vault path -> why its text is not shown

    def confined(self, path: Path) -> str | None:
        """Why ``path`` is not read because of where it really lies, or None: its real
        path is outside the repository, or in ``.git/``."""
        real = os.path.realpath(path)
        area = self.area
        if real != area and not real.startswith(area.rstrip(os.sep) + os.sep):
            return f"a symlink out of {self.area_name} (to {real}); not read"
        inner = os.path.relpath(real, area).split(os.sep)
        if any(part.casefold() == ".git" for part in inner):
            lexical = os.path.relpath(os.path.normpath(os.path.abspath(path)),
                                      os.path.abspath(self.top)).split(os.sep)
            if any(part.casefold() == ".git" for part in lexical):
                return "in .git/; not read"
            return f"a symlink into .git/ (to {'/'.join(inner)}); not read"
        return None

    def refusal(self, path: Path) -> str | None:
        """Why the file at ``path`` is not read (confinement, not a regular file, over the
        size limit, unreadable), or None (read, or missing)."""
        key = Path(os.path.normpath(path))
        if key not in self._refused:
            self._refused[key] = self._judge(key)
        return self._refused[key]

    def _judge(self, path: Path) -> str | None:
        from vaultkit.core.bounded import linked_elsewhere, not_regular

        why = self.confined(path)
        if why:
            return why
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return None
        except OSError as exc:
            return f"cannot be read: {exc.strerror or exc}"
        why = not_regular(st.st_mode)
        if why:
            return why
        linked = linked_elsewhere(st)
        if linked:
            self.linked[self.rel(path)] = linked + "; its text is not shown"
        return None

    def rel(self, path: Path) -> str:
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return Path(os.path.relpath(path, self.root)).as_posix()

    def note_of(self, path: Path):
        return self.vault.note(self.rel(path))

    def raw(self, path: Path) -> bytes | None:
        """The file's bytes, or None: missing, or refused (:meth:`refusal` says why)."""
        path = Path(os.path.normpath(path))
        if path not in self._raw:
            from vaultkit.core.bounded import ReadRefused, read_regular

            self._raw[path] = None
            if self.refusal(path) is None:
                try:  # by its real path (checked above), a symlink put there since refused
                    self._raw[path] = read_regular(
                        os.path.realpath(path), self.vault.profile.budgets.max_file_bytes,
                        follow_symlinks=False)
                except FileNotFoundError:
                    pass
                except ReadRefused as exc:  # not a regular file (swapped in), too big
                    self._refused[path] = exc.strerror
                except OSError as exc:
                    self._refused[path] = f"cannot be read: {exc.strerror or exc}"
        return self._raw[path]

    def text(self, path: Path) -> str | None:
        """The file's text as a JavaScript runtime reads it (UTF-8, BOM kept), or None:
        missing, or refused (:meth:`refusal` says why)."""
        path = Path(os.path.normpath(path))
        if path in self._memo:
            return self._memo[path]
        if self.refusal(path) is not None:
            self._memo[path] = None
            return None
        note = self.note_of(path)
        if note is not None and not note.error:
            out = ("\ufeff" if note.bom else "") + note.text
        else:
            data = self.raw(path)
            try:
                out = data.decode("utf-8") if data is not None else None
            except UnicodeDecodeError:
                out = data.decode("utf-8", "replace")
        self._memo[path] = out
        return out

    def exists(self, path: Path) -> bool:
        """A note, or a regular file (what a symlink out of the repository names too: it
        is then reported as not read, never read)."""
        if self.note_of(path) is not None:
            return True
        return os.path.isfile(path)

    def refused_piece(self, path: Path, role: str, via: str = "", depth: int = 0) -> Piece:
        """The row of a file the runtime would load that is not read: nothing of it
        counts, and nothing of it is shown."""
        return Piece(self.rel(path), role, 0, "", 0, 0, via=via, depth=depth,
                     refused=self.refusal(path) or "not read")


def git_root(start: Path) -> Path | None:
    """The nearest folder at or above ``start`` holding ``.git`` (a folder or a file)."""
    here = start
    while True:
        if os.path.lexists(here / ".git"):
            return here
        if here.parent == here:
            return None
        here = here.parent


def _chain(files: Files) -> list[Path]:
    """Folders from the repository root down to the workspace (the workspace alone
    outside a repository)."""
    top = git_root(files.workspace)
    if top is None:
        return [files.workspace]
    out, here = [], files.workspace
    while True:
        out.append(here)
        if here == top or here.parent == here:
            break
        here = here.parent
    return out[::-1]


_Files = Files  # (the name it had when the loaders were one module)


def _within(path: Path, top: Path) -> bool:
    try:
        Path(os.path.normpath(path)).relative_to(top)
        return True
    except ValueError:
        return False


# -- the loader protocol -----------------------------------------------------------------

class Request:
    """What a loader is asked: one runtime (its spec) over one vault."""

    _fields = ("vault", "spec", "files", "session", "openclaw_config", "agent")
    vault: Any
    spec: Any  # vaultkit.vault.profile.RuntimeSpec
    files: Files
    session: str | None
    openclaw_config: Any  # OpenClaw's openclaw.json, when the caller read one
    agent: str | None

    def __init__(self, vault, spec, files, session=None, openclaw_config=None, agent=None):
        self.vault = vault
        self.spec = spec
        self.files = files
        self.session = session
        self.openclaw_config = openclaw_config
        self.agent = agent


class Loader(Protocol):
    """One loading algorithm: what the runtime of ``request.spec`` puts in context."""

    def __call__(self, request: Request) -> RuntimeContext: ...
