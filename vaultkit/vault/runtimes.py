"""What each agent runtime loads from the vault at session start, simulated exactly.

The runtimes are data in the profile (``runtimes:`` in the rule pack, ``[runtime.NAME]`` and
``runtimes = [...]`` in ``vaultkit.toml``; :class:`~vaultkit.vault.profile.RuntimeSpec`):
the files, their order, the limits and their unit, where and how a file is cut and the
marker written there. This module runs the three loading algorithms those specs name:

``workspace-set`` (OpenClaw)
    A fixed list of files in the workspace, filtered by session type, each cut to a
    per-file limit and all together to a total limit, in UTF-16 units of the right-trimmed
    text; a cut file keeps a head and a tail around a marker (AGENTS.md: a head, a digest
    of its policy lines and a tail).
``claude-memory`` (Claude Code)
    ``CLAUDE.md``, ``.claude/CLAUDE.md`` and ``CLAUDE.local.md`` from the repository root
    down to the workspace, the rule files without ``paths``, ``@path`` imports up to a
    depth, all loaded in full; the auto-memory index ``MEMORY.md`` cut to its first lines
    or units, at a line end.
``project-docs`` (Codex)
    The first of a list of names per folder from the git root down to the workspace,
    joined with a blank line, the whole cut to a byte budget without a marker.

Only files inside the repository (the git root above the workspace, else the workspace)
are read: user-level and managed files (``~/.claude/CLAUDE.md``, ``~/.codex/AGENTS.md``)
are named in :attr:`RuntimeContext.notes`, not simulated. That holds for real paths too
(:class:`_Files`): a file, import or folder on the way that is a symlink out of the
repository or into ``.git/``, and a file that is not a regular one, is a piece marked
``refused`` (never read, never shown); a file with other hard links is measured, and
:attr:`RuntimeContext.shown_text` leaves its text out. Sources: docs/context.md.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from vaultkit.core.lazyre import lazy_re

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

@dataclass
class Piece:
    """One file as a runtime loads it."""

    path: str  # vault-relative ('../X.md' above the vault)
    role: str  # bootstrap, instructions, rule, import, auto memory, project doc, missing
    length: int  # the file's length in the runtime's unit (after what it strips)
    injected: str  # exactly what the runtime puts in context for it, cut markers included
    injected_length: int
    kept: int  # units of the file's own text that are loaded
    cut: str = ""  # "", "middle", "tail", "dropped"
    first_lost_line: int | None = None  # first line (of the file) not loaded
    last_lost_line: int | None = None
    reason: str = ""  # why it is cut or not loaded
    via: str = ""  # the file that imported it
    depth: int = 0
    refused: str = ""  # why the file is not read at all (a symlink out of the repository, ...)
    linked: str = ""  # why its text is not shown (other hard links); it is still measured

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


@dataclass
class ImportProblem:
    """An `@path` import a runtime could not follow."""

    path: str  # the importing file
    line: int
    target: str  # as written
    kind: str  # missing, circular, too-deep, in-code
    detail: str = ""


@dataclass
class RuntimeContext:
    """Everything one runtime loads at session start, in its order."""

    runtime: str
    label: str
    unit: str
    session: str | None
    pieces: list[Piece] = field(default_factory=list)
    per_file_max: int | None = None
    total_max: int | None = None
    limits_source: str = ""
    joiner: str = "\n\n"
    window_tokens: int = 200000
    notes: list[str] = field(default_factory=list)  # what is not simulated, and why
    imports: list[ImportProblem] = field(default_factory=list)

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

class _Files:
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


def _chain(files: _Files) -> list[Path]:
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


# -- detection ---------------------------------------------------------------------------

def detected(vault) -> list[str]:
    """The runtimes that apply: ``runtimes`` from vaultkit.toml, else those whose marker
    files exist in the workspace (``detect``; ``openclaw.json`` also in its parent folder),
    OpenClaw for a vault with its memory folder; an ``AGENTS.md`` alone means Codex."""
    profile = vault.profile
    if profile.runtimes_enabled is not None:
        return list(profile.runtimes_enabled)
    ws = Path(vault.workspace)
    out = []
    for name, spec in profile.runtimes.items():
        for marker in spec.detect:
            if os.path.lexists(ws / marker) or (marker.endswith(".json")
                                                and os.path.isfile(ws.parent / marker)):
                out.append(name)
                break
    if not profile.memory_prefix or os.path.isdir(Path(vault.root) / profile.memory_dir):
        # a memory folder (or a memory-only vault) is OpenClaw's layout
        for name, spec in profile.runtimes.items():
            if spec.loader == "workspace-set" and name not in out:
                out.append(name)
    if not out:
        for name, spec in profile.runtimes.items():
            if spec.loader == "project-docs" and any(os.path.isfile(ws / n) for n in spec.files):
                out.append(name)
    return out


# -- OpenClaw: workspace-set -------------------------------------------------------------

def _clamp(content: str, budget: int) -> str:
    if budget <= 0:
        return ""
    if u16len(content) <= budget:
        return content
    if budget <= 3:
        return u16_prefix(content, budget)
    return u16_prefix(content, budget - 1) + "…"


def _digest(spec, text: str, budget: int) -> tuple[str, int]:
    """The policy lines of ``text`` that fit ``budget`` units: (text, lines left out)."""
    if budget <= 0:
        return "", 0
    candidate = [re.compile(r, re.ASCII) for r in spec.digest_candidate]
    priority = re.compile(spec.digest_priority, re.ASCII) if spec.digest_priority else None
    picked: list[tuple[int, str]] = []
    for index, line in enumerate(re.split(r"\r?\n", text)):
        norm = _JS_SPACE_RUN.sub(" ", line).strip(_JS_SPACE)
        if u16len(norm) > spec.digest_line_max:
            norm = u16_prefix(norm, spec.digest_line_max - 1) + "…"
        if norm and any(r.search(norm) for r in candidate):
            picked.append((index, norm))
    chosen: set[int] = set()
    used = 0

    def take(index: int, line: str) -> None:
        nonlocal used
        extra = (1 if chosen else 0) + u16len(line)
        if used + extra <= budget:
            chosen.add(index)
            used += extra

    if priority is not None:
        for index, line in picked:
            if priority.search(line):
                take(index, line)
    for index, line in picked:
        if index not in chosen:
            take(index, line)
    lines = [line for index, line in picked if index in chosen]
    return "\n".join(lines), len(picked) - len(lines)


@dataclass
class _Cut:
    """What a runtime keeps of a file it loads, and whether it cut it."""

    content: str
    truncated: bool
    length: int
    head: int = 0  # units of the file kept from its start
    tail: int = 0  # units kept from its end
    digest: int = 0


def _cut_digest(spec, name: str, trimmed: str, length: int, limit: int) -> _Cut:
    head_r, digest_r, tail_r = spec.digest_ratios
    head = math.floor(limit * head_r)
    tail = math.floor(limit * tail_r)
    budget = math.floor(limit * digest_r)
    digest, omitted = _digest(spec, trimmed, budget)

    def render() -> str:
        parts = [u16_prefix(trimmed, head), _fmt(spec.digest_marker, name=name),
                 _fmt(spec.digest_header, name=name) if digest else "", digest,
                 _fmt(spec.digest_omitted, omitted=omitted) if omitted > 0 else "",
                 _fmt(spec.digest_summary, name=name, head=head, digest=u16len(digest),
                      tail=tail, length=length),
                 u16_suffix(trimmed, tail) if tail > 0 else ""]
        return "\n".join(p for p in parts if p)

    out = render()
    while u16len(out) > limit and (tail > 0 or head > 1 or budget > 0):
        over = u16len(out) - limit
        if tail > 0:
            tail = max(0, tail - over)
        elif head > 1:
            head = max(1, head - over)
        else:
            budget = max(0, budget - over)
            digest, omitted = _digest(spec, trimmed, budget)
        out = render()
    if u16len(out) > limit:
        out = u16_prefix(out, limit)
    return _Cut(out, True, length, head, tail, u16len(digest))


def cut_file(spec, name: str, content: str, limit: int) -> _Cut:
    """What OpenClaw injects for one file under a limit of ``limit`` units."""
    trimmed = js_trim_end(content)
    length = u16len(trimmed)
    if length <= limit:
        return _Cut(trimmed, False, length, length, 0)
    if spec.digest_file and name.lower() == spec.digest_file.lower():
        return _cut_digest(spec, name, trimmed, length, limit)

    def full(h: int, t: int) -> str:
        return _fmt(spec.marker, name=name, head=h, tail=t, length=length)

    def compact(h: int, t: int) -> str:
        return _fmt(spec.compact_marker, head=h, tail=t, length=length)

    def seps(h: int, t: int, marker: str) -> int:
        return (h > 0) + (t > 0) if "\n" in marker else 0

    first = full(0, 0)
    template = full if limit - u16len(first) - seps(1, 1, first) >= MIN_TRIMMED_CONTENT \
        else compact
    head = tail = 0
    marker = template(0, 0)
    for _ in range(3):
        budget = max(0, limit - u16len(marker) - seps(head, tail, marker))
        new_head = math.floor(budget * spec.head_ratio)
        new_tail = math.floor(budget * (1 - spec.head_ratio))
        new_marker = template(new_head, new_tail)
        if (new_head, new_tail, u16len(new_marker)) == (head, tail, u16len(marker)):
            break
        head, tail, marker = new_head, new_tail, new_marker
    size = head + tail + u16len(marker) + seps(head, tail, marker)
    while size > limit and (tail > 0 or head > 0):
        over = size - limit
        if tail > 0:
            tail = max(0, tail - over)
        else:
            head = max(0, head - over)
        marker = template(head, tail)
        size = head + tail + u16len(marker) + seps(head, tail, marker)
    if head == 0 and tail == 0 and length > 0:
        one = template(1, 0)
        if 1 + u16len(one) + seps(1, 0, one) <= limit:
            head, marker = 1, one
    parts = [u16_prefix(trimmed, head), marker, u16_suffix(trimmed, tail) if tail else ""]
    out = ("\n" if "\n" in marker else "").join(p for p in parts if p)
    if u16len(out) > limit:
        out = u16_prefix(out, limit)
    return _Cut(out, True, length, head, tail)


def _lost_lines(trimmed: str, head: int, tail: int) -> tuple[int, int]:
    """First and last line (1-based) holding a character the cut drops."""
    start = len(u16_prefix(trimmed, head))
    end = len(trimmed) - len(u16_suffix(trimmed, tail)) if tail else len(trimmed)
    return _line_of(trimmed, start), _line_of(trimmed, max(start, end - 1))


def load_openclaw(vault, spec, session: str | None, files: _Files, *,
                  openclaw_config=None, agent: str | None = None) -> RuntimeContext:
    """OpenClaw's bootstrap injection; the limits come from ``openclaw.json`` when it sets
    them (the agent's ``agents.list[]`` entry, then ``agents.defaults``), else the profile."""
    from vaultkit.vault.openclaw import bootstrap_limits

    per_file, total, source = bootstrap_limits(vault, openclaw_config, agent)
    ctx = RuntimeContext("openclaw", spec.label or "OpenClaw", spec.unit, session or "main",
                         per_file_max=per_file, total_max=total, limits_source=source,
                         joiner="\n\n", window_tokens=spec.context_window_tokens)
    allowed = spec.sessions.get(session or "main", ["*"])
    names = [n for n in spec.files if "*" in allowed or n in allowed]
    remaining = max(1, total)
    ws = files.workspace
    stopped = ""
    for name in names:
        path = ws / name
        content = files.text(path) if files.exists(path) else None
        rel = files.rel(path)
        if content is None and files.exists(path) and files.refusal(path):
            # the runtime would load something here; what, vaultkit does not read
            ctx.pieces.append(files.refused_piece(path, "bootstrap"))
            continue
        if content is None and name in spec.optional:
            continue
        if stopped or remaining <= 0:
            length = u16len(js_trim_end(content)) if content is not None else 0
            ctx.pieces.append(Piece(rel, "bootstrap", length, "", 0, 0,
                                    "dropped" if length else "", 1 if length else None,
                                    None, stopped or "the total limit is used up"))
            continue
        if content is None:
            text = _clamp(_fmt(spec.missing_marker, path=str(path)), remaining)
            if not text:
                stopped = "the total limit is used up"
                continue
            remaining = max(0, remaining - u16len(text))
            ctx.pieces.append(Piece(rel, "missing", 0, text, u16len(text), 0,
                                    reason="does not exist: the runtime injects a marker"))
            continue
        if remaining < spec.min_file_budget:
            stopped = (f"under {spec.min_file_budget} units of the total limit "
                       f"({total:,}) were left")
            length = u16len(js_trim_end(content))
            ctx.pieces.append(Piece(rel, "bootstrap", length, "", 0, 0, "dropped" if length
                                    else "", 1 if length else None, None, stopped))
            continue
        limit = max(1, min(per_file, remaining))
        result = cut_file(spec, name, content, limit)
        text = _clamp(result.content, remaining)
        if not text:
            continue
        remaining = max(0, remaining - u16len(text))
        piece = Piece(rel, "bootstrap", result.length, text, u16len(text), result.length)
        if result.truncated:
            trimmed = js_trim_end(content)
            piece.kept = result.head + result.tail
            piece.cut = "middle"
            piece.first_lost_line, piece.last_lost_line = _lost_lines(trimmed, result.head,
                                                                      result.tail)
            piece.reason = (f"over the per-file limit of {per_file:,}" if limit == per_file
                            else f"only {limit:,} of the total limit of {total:,} were left")
            if result.digest:
                piece.reason += f" (a digest of {result.digest:,} units of its policy lines " \
                                "is kept between head and tail)"
        ctx.pieces.append(piece)
    if session and session != "main":
        left_out = [n for n in spec.files if n not in names and files.exists(ws / n)]
        if left_out:
            ctx.notes.append(f"a {session} session does not get {', '.join(left_out)}")
    ctx.notes.append("the skills list, the daily files of the startup context and the "
                     "system prompt around the files are not simulated")
    return ctx


# -- Claude Code: claude-memory ----------------------------------------------------------

_FENCE = lazy_re(r"^ {0,3}(`{3,}|~{3,})")
_IMPORT = lazy_re(r"(?<![\w@])@((?:~/|\.{1,2}/|/)?[^\s`@<>()\[\]{}\"',;]+)")
_CODE_SPAN = lazy_re(r"(`+)(?:(?!\1).)+?\1")
_HTML_BLOCK = lazy_re(r"^ {0,3}<!--")


def _strip_comments_and_code(lines: list[str]) -> list[int]:
    """Indexes of the lines kept once block-level HTML comments (not inside code) are
    removed, as Claude Code does before it injects a file."""
    out, in_fence, fence, in_comment = [], False, "", False
    for i, line in enumerate(lines):
        if in_fence:
            out.append(i)
            if line.strip().startswith(fence) and line.strip(" `~") == "":
                in_fence = False
            continue
        if in_comment:
            if "-->" in line:
                in_comment = False
            continue
        m = _FENCE.match(line)
        if m:
            in_fence, fence = True, m.group(1)[0] * 3
            out.append(i)
            continue
        if _HTML_BLOCK.match(line):
            rest = line.split("<!--", 1)[1]
            if "-->" not in rest:
                in_comment = True
                continue
            if not rest.split("-->", 1)[1].strip():
                continue
        out.append(i)
    return out


def find_imports(text: str) -> list[tuple[int, str, bool]]:
    """``@path`` references: (line, path, inside code)."""
    out = []
    in_fence, fence = False, ""
    for number, line in enumerate(text.split("\n"), 1):
        m = _FENCE.match(line)
        if in_fence:
            if line.strip().startswith(fence) and line.strip(" `~") == "":
                in_fence = False
            for im in _IMPORT.finditer(line):
                out.append((number, im.group(1), True))
            continue
        if m:
            in_fence, fence = True, m.group(1)[0] * 3
            continue
        spans = [(s.start(), s.end()) for s in _CODE_SPAN.finditer(line)]
        for im in _IMPORT.finditer(line):
            inside = any(a <= im.start() < b for a, b in spans)
            out.append((number, im.group(1), inside))
    return out


def _import_target(base: Path, target: str) -> list[Path]:
    if target.startswith("~/"):
        first = Path.home() / target[2:]
    elif target.startswith("/"):
        first = Path(target)
    else:
        first = base.parent / target
    out = [first]
    stripped = target.rstrip(".,;:!?")
    if stripped != target and stripped:
        out += _import_target(base, stripped)
    return out


def _within(path: Path, top: Path) -> bool:
    try:
        Path(os.path.normpath(path)).relative_to(top)
        return True
    except ValueError:
        return False


def _claude_text(text: str) -> str:
    lines = text.split("\n")
    return "\n".join(lines[i] for i in _strip_comments_and_code(lines))


def load_claude(vault, spec, files: _Files) -> RuntimeContext:
    ctx = RuntimeContext("claude-code", spec.label or "Claude Code", spec.unit, None,
                         joiner="\n\n", window_tokens=spec.context_window_tokens,
                         limits_source="CLAUDE.md files load in full; the auto-memory "
                                       "index is cut")
    chain = _chain(files)
    top = chain[0]
    seen: set[Path] = set()

    def add(path: Path, role: str, via: str = "", depth: int = 0, stack=()) -> None:
        real = Path(os.path.normpath(path))
        if real in seen:
            return
        seen.add(real)
        text = files.text(real)
        if text is None:
            if files.refusal(real):
                ctx.pieces.append(files.refused_piece(real, role, via, depth))
            return
        for line, target, in_code in find_imports(text):
            candidates = _import_target(real, target)
            hit = next((c for c in candidates if os.path.isfile(c) or files.exists(c)), None)
            rel = files.rel(real)
            if in_code:
                if hit is not None:
                    ctx.imports.append(ImportProblem(rel, line, target, "in-code",
                                                     "inside code: not imported"))
                continue
            if hit is None:
                if "/" in target or "." in target.rsplit("/", 1)[-1]:
                    ctx.imports.append(ImportProblem(rel, line, target, "missing",
                                                     "no such file"))
                continue
            hit = Path(os.path.normpath(hit))
            if hit in stack or hit == real:
                ctx.imports.append(ImportProblem(rel, line, target, "circular",
                                                 " -> ".join(files.rel(p) for p in (*stack, real, hit))))
                continue
            if depth + 1 > spec.import_max_depth:
                ctx.imports.append(ImportProblem(rel, line, target, "too-deep",
                                                 f"hop {depth + 1}, over the maximum of "
                                                 f"{spec.import_max_depth}"))
                continue
            if not _within(hit, top):
                ctx.notes.append(f"{rel} imports {target}, outside the repository: not "
                                 "simulated")
                continue
            add(hit, "import", rel, depth + 1, (*stack, real))
        body = _claude_text(text)
        length = u16len(body)
        ctx.pieces.append(Piece(files.rel(real), role, length, body, length, length,
                                via=via, depth=depth))

    for folder in chain:
        here = folder == files.workspace
        names = list(spec.files)
        for name in names:
            path = folder / name
            if name.startswith(".claude/") and not here:
                continue
            if files.exists(path):
                add(path, "instructions")
            if name == ".claude/CLAUDE.md" and here and spec.rules_dir:
                rules = folder / spec.rules_dir
                if os.path.isdir(rules) and files.confined(rules):
                    ctx.pieces.append(Piece(files.rel(rules), "rule", 0, "", 0, 0,
                                            refused=files.confined(rules)))
                    continue
                for rule in _rule_files(files, rules):
                    add(rule, "rule")
    _auto_memory(vault, spec, files, ctx)
    ctx.notes.append("~/.claude/CLAUDE.md, ~/.claude/rules and the managed policy file lie "
                     "outside the vault: not simulated")
    return ctx


def _rule_files(files: _Files, folder: Path) -> list[Path]:
    out = []
    if not folder.is_dir():
        return out
    for dirpath, dirnames, filenames in os.walk(folder):  # (symlinked folders not entered)
        dirnames.sort()
        for name in sorted(filenames):
            if name.endswith(".md"):
                path = Path(dirpath) / name
                if not _has_paths(files, path):  # (a refused file stays: it is reported)
                    out.append(path)
    return out


def _has_paths(files: _Files, path: Path) -> bool:
    text = files.text(path)  # confined like every read; the file is loaded next anyway
    if text is None:
        return False
    head = text.lstrip("\ufeff")[:4096]
    if not head.startswith("---"):
        return False
    block = head.split("\n---", 1)[0]
    return re.search(r"^paths\s*:", block, re.M) is not None


def auto_memory_path(vault, spec) -> Path | None:
    """The auto-memory index when it lives in the vault: ``auto_memory_dir`` of the
    profile, else ``autoMemoryDirectory`` in ``.claude/settings.local.json`` or
    ``.claude/settings.json`` when it points inside the vault."""
    if not spec.auto_memory:
        return None
    root = Path(vault.root)
    if spec.auto_memory_dir:
        return root / spec.auto_memory_dir / spec.auto_memory
    from vaultkit.core.bounded import MAX_CONFIG_BYTES, load_json, read_regular

    ws_real = os.path.realpath(vault.workspace)
    for name in ("settings.local.json", "settings.json"):
        path = Path(vault.workspace) / ".claude" / name
        real = os.path.realpath(path)
        if not real.startswith(ws_real.rstrip(os.sep) + os.sep):
            continue  # a symlink out of the workspace is not read, like every file here
        try:
            data = load_json(read_regular(real, MAX_CONFIG_BYTES, follow_symlinks=False)
                             .decode("utf-8-sig"))
        except (OSError, ValueError, UnicodeDecodeError):
            continue
        value = data.get("autoMemoryDirectory") if isinstance(data, dict) else None
        if isinstance(value, str) and value.strip():
            folder = Path(os.path.expanduser(value.strip()))
            if folder.is_absolute() and _within(folder, root.resolve()):
                return folder / spec.auto_memory
    return None


def cut_auto_memory(spec, text: str) -> tuple[str, int, int | None, str]:
    """(loaded text, lines loaded, first line not loaded, why) for Claude Code's index.

    Frontmatter and block-level HTML comments are stripped first; then the first
    ``auto_memory_lines`` lines, and of those the lines whose running length (each line
    plus its newline) stays within ``auto_memory_max`` units."""
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    offset = 0
    if lines and lines[0].strip() == "---":
        for i in range(1, len(lines)):
            if lines[i].strip() in ("---", "..."):
                offset = i + 1
                break
    body = lines[offset:]
    keep = _strip_comments_and_code(body)
    kept_lines = [body[i] for i in keep]
    mapping = [offset + i + 1 for i in keep]  # file line numbers
    reason = ""
    first_lost = None
    limit_lines = spec.auto_memory_lines
    if limit_lines is not None and len(kept_lines) > limit_lines:
        first_lost = mapping[limit_lines]
        kept_lines = kept_lines[:limit_lines]
        reason = f"past the first {limit_lines} lines"
    if spec.auto_memory_max is not None:
        used = 0
        for i, line in enumerate(kept_lines):
            used += u16len(line) + 1
            if used > spec.auto_memory_max:
                first_lost = mapping[i]
                kept_lines = kept_lines[:i]
                reason = f"past {spec.auto_memory_max:,} units (the documented 25KB)"
                break
    return "\n".join(kept_lines), len(kept_lines), first_lost, reason


def _auto_memory(vault, spec, files: _Files, ctx: RuntimeContext) -> None:
    path = auto_memory_path(vault, spec)
    if path is None:
        if spec.auto_memory:
            ctx.notes.append(f"auto memory ({spec.auto_memory} in ~/.claude/projects/<project>/"
                             "memory/) is outside the vault: not simulated; point "
                             "autoMemoryDirectory or [runtime.claude-code] auto-memory-dir "
                             "at a vault folder to check it")
        return
    text = files.text(path)
    if text is None:
        if files.refusal(path):
            ctx.pieces.append(files.refused_piece(path, "auto memory"))
        else:
            ctx.notes.append(f"auto memory: {files.rel(path)} does not exist")
        return
    loaded, _, first_lost, reason = cut_auto_memory(spec, text)
    body = _claude_text(text)
    piece = Piece(files.rel(path), "auto memory", u16len(body), loaded, u16len(loaded),
                  u16len(loaded))
    if first_lost is not None:
        piece.cut = "tail"
        piece.first_lost_line = first_lost
        piece.last_lost_line = len(text.split("\n")) - (1 if text.endswith("\n") else 0)
        piece.reason = reason
    ctx.pieces.append(piece)


# -- Codex: project-docs -----------------------------------------------------------------

def load_codex(vault, spec, files: _Files) -> RuntimeContext:
    total = spec.total_max if spec.total_max is not None else 0
    ctx = RuntimeContext("codex", spec.label or "Codex", "bytes", None, total_max=total,
                         limits_source="project_doc_max_bytes (the profile's runtimes.codex."
                                       "total_max)", joiner=spec.joiner,
                         window_tokens=spec.context_window_tokens)
    remaining = total
    for folder in _chain(files):
        # (a regular file or a symlink, as Codex accepts; a folder of that name is skipped)
        path = next((folder / n for n in spec.files
                     if os.path.isfile(folder / n) or os.path.islink(folder / n)), None)
        if path is None:
            continue
        rel = files.rel(path)
        raw = files.raw(path)
        if raw is None and files.refusal(path):
            ctx.pieces.append(files.refused_piece(path, "project doc"))
            continue
        note = files.note_of(path)
        if note is not None and not note.error:  # the note's bytes as on disk
            raw = (b"\xef\xbb\xbf" if note.bom else b"") + note.text.encode("utf-8")
        if raw is None:
            continue
        if remaining <= 0:
            ctx.pieces.append(Piece(rel, "project doc", len(raw), "", 0, 0,
                                    "dropped" if raw.strip() else "", 1, None,
                                    "the byte budget is used up"))
            continue
        data = raw[:remaining]
        text = data.decode("utf-8", "replace")
        if not text.strip():
            continue
        remaining -= len(data)
        piece = Piece(rel, "project doc", len(raw), text, len(data), len(data))
        if len(data) < len(raw):
            piece.cut = "tail"
            whole = raw.decode("utf-8", "replace")
            piece.first_lost_line = data.count(b"\n") + 1
            piece.last_lost_line = whole.count("\n") + (0 if whole.endswith("\n") else 1)
            piece.reason = f"past the {total:,}-byte budget (project_doc_max_bytes)"
        ctx.pieces.append(piece)
    ctx.notes.append("~/.codex/AGENTS.md lies outside the vault: not simulated")
    return ctx


# -- entry point -------------------------------------------------------------------------

LOADERS = {"workspace-set": "openclaw", "claude-memory": "claude-code", "project-docs": "codex"}


def load_context(vault, name: str, session: str | None = None, *, openclaw_config=None,
                 agent: str | None = None) -> RuntimeContext:
    """What runtime ``name`` (a key of the profile's ``runtimes``) loads from ``vault``."""
    spec = vault.profile.runtimes[name]
    files = _Files(vault)
    if spec.loader == "workspace-set":
        ctx = load_openclaw(vault, spec, session, files, openclaw_config=openclaw_config,
                            agent=agent)
    elif spec.loader == "claude-memory":
        ctx = load_claude(vault, spec, files)
    else:
        ctx = load_codex(vault, spec, files)
    ctx.runtime = name
    for piece in ctx.loaded:
        piece.linked = files.linked.get(piece.path, "")
    return ctx


def contexts(vault, names: list[str] | None = None, session: str | None = None, *,
             openclaw_config=None, agent: str | None = None) -> list[RuntimeContext]:
    """The context of each runtime in ``names`` (default: :func:`detected`)."""
    wanted = detected(vault) if names is None else names
    out = []
    for name in wanted:
        spec = vault.profile.runtimes[name]
        out.append(load_context(vault, name, session if spec.sessions else None,
                                openclaw_config=openclaw_config, agent=agent))
    return out


def applies(vault, loader: str) -> bool:
    """True when a runtime with this ``loader`` applies to ``vault`` (memoised per vault)."""
    memo = vault.__dict__.get("_runtimes_detected")
    if memo is None:
        memo = vault.__dict__["_runtimes_detected"] = {
            vault.profile.runtimes[n].loader for n in detected(vault)}
    return loader in memo


def for_vault(vault, session: str | None = None) -> list[RuntimeContext]:
    """:func:`contexts` of the detected runtimes, computed once per loaded vault (the rules
    that read it share one simulation)."""
    memo = vault.__dict__.setdefault("_runtime_contexts", {})
    if session not in memo:
        memo[session] = contexts(vault, None, session)
    return memo[session]


def outside_state(vault) -> str:
    """Size and mtime of every file the runtimes may read outside the vault's listing (the
    instruction files in the folders above the vault up to the git root, a workspace above
    a memory-only vault, the detection markers there): what a cached result of the rules
    that read them depends on besides the vault's own files (``.claude/`` is inside)."""
    root, ws = Path(vault.root), Path(vault.workspace)
    paths: list[Path] = [ws.parent / "openclaw.json"]
    if root != ws:
        paths += [ws / ".codex", ws / ".claude", ws / ".claude" / "settings.json",
                  ws / ".claude" / "settings.local.json"]
    names = {n for spec in vault.profile.runtimes.values() for n in spec.files}
    top = git_root(ws)
    here = ws
    while top is not None and here != top and here.parent != here:
        here = here.parent
        paths.extend(here / n for n in sorted(names))
        if here == top:
            break
    if root != ws:
        paths.extend(ws / n for n in sorted(names))
    for spec in vault.profile.runtimes.values():
        found = auto_memory_path(vault, spec) if spec.loader == "claude-memory" else None
        if found is not None:
            paths.append(found)
    out = []
    for path in paths:
        try:
            st = os.stat(path)
            # (the ctime and inode too: a copy can put the size and mtime back)
            out.append(f"{path}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_ino}")
        except OSError:
            out.append(f"{path}:-")
    return "\n".join(out)
