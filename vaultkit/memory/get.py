"""Read a bounded excerpt of one memory file, the runtime's ``memory_get``.

``read_excerpt`` returns lines ``from`` .. ``from + lines - 1`` (default 120 lines),
at most 12,000 characters of whole lines, with ``truncated`` and ``nextFrom`` when
more follows. ``confine`` is the gate every path passes first: only a file of the
vault's memory set (``MEMORY.md``, ``memory/**/*.md``) is readable, named by a plain
vault-relative path. Refused, each with its own message: absolute paths (``/x``,
``~/x``, ``C:\\x``), ``..`` segments, backslashes, NUL and control characters,
percent-encoding (``%2e%2e``, ``%2f``; the runtime takes paths literally, so a ``%``
sequence is only ever a trick), files outside the memory set, and any path whose real
location (symlinks followed) is not itself inside the memory set.
"""

from __future__ import annotations

import errno
import os
import re
from dataclasses import dataclass
from pathlib import Path

from vaultkit.core.errors import VaultkitError

DEFAULT_LINES = 120
MAX_CHARS = 12_000

_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
_DRIVE = re.compile(r"^[A-Za-z]:")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class PathRefused(VaultkitError):
    """A path ``get`` will not read; the message says why."""


@dataclass
class Excerpt:
    path: str
    text: str
    start: int  # 1-based first line returned
    count: int  # lines returned
    truncated: bool
    next_from: int | None
    missing: bool = False

    @property
    def credentials(self) -> list[dict]:
        """Credentials in the text (served as stored; marked so a runtime can redact them)."""
        from vaultkit.vault.secretscan import credentials_in

        return credentials_in(self.text, self.start) if self.text else []

    def to_dict(self) -> dict:
        if self.missing:
            return {"path": self.path, "text": ""}
        out = {"path": self.path, "text": self.text, "from": self.start, "lines": self.count,
               "truncated": self.truncated}
        if self.next_from is not None:
            out["nextFrom"] = self.next_from
        found = self.credentials
        if found:
            out["holdsCredential"] = True
            out["credentials"] = found
        return out


def _vault_path_guess(root: Path, settings, rel: str) -> str | None:
    """The vault path the user probably meant by a path written from the current folder
    (or from the memory folder), when it is a memory-set path."""
    from vaultkit.memory.memset import in_memory_set

    guesses = []
    try:
        here = os.path.relpath(os.getcwd(), root)
    except (OSError, ValueError):
        here = ".."
    if here != "." and not here.startswith(".."):
        guesses.append(f"{here.replace(os.sep, '/')}/{rel}")
    if settings.profile.memory_prefix:
        guesses.append(settings.profile.memory_prefix + rel)
    # only a file that is there: a guess naming nothing (memory/AGENTS.md) misleads
    existing = [g for g in guesses if in_memory_set(settings, g) and (root / g).is_file()]
    return (existing or [None])[0]


def confine(root: Path, settings, requested: str) -> tuple[str, Path]:
    """``(vault-relative path, file)`` for a path the memory tools may read, else PathRefused."""
    from vaultkit.memory.memset import file_of, in_memory_set

    p = requested
    if p is None or not p.strip():
        raise PathRefused("empty path; name a memory file such as memory/2026-02-15.md")
    if "\x00" in p:
        raise PathRefused(f"{p!r}: contains a NUL byte; refused")
    if _CONTROL.search(p):
        raise PathRefused(f"{p!r}: contains control characters; refused")
    if "\\" in p:
        raise PathRefused(f"{p!r}: contains a backslash; use '/' in vault paths")
    if "%" in p and _PERCENT.search(p):
        raise PathRefused(f"{p!r}: URL-encoded characters are not decoded; write the path "
                          "literally")
    if p.startswith(("/", "~")) or _DRIVE.match(p):
        raise PathRefused(f"{p!r}: absolute paths are refused; give a path relative to the vault")
    parts = p.split("/")
    if any(part == ".." for part in parts):
        raise PathRefused(f"{p!r}: '..' is refused; only files inside the memory set are "
                          "readable")
    if "" in parts:
        raise PathRefused(f"{p!r}: empty path segment ('//' or a trailing '/'); refused")
    if any(part.strip() != part or part.endswith(".") and part != "." for part in parts if part):
        raise PathRefused(f"{p!r}: a path segment with surrounding spaces or a trailing dot "
                          "is refused")
    rel = "/".join(part for part in parts if part not in ("", "."))
    if not in_memory_set(settings, rel):
        where = settings.profile.memory_prefix or "the vault"
        hint = ""
        guess = _vault_path_guess(root, settings, rel)
        if guess:
            hint = (f"; paths are relative to the vault root, not to the current folder: "
                    f"did you mean {guess}?")
        elif rel and "/" not in rel and (root / rel).is_file():  # AGENTS.md, SOUL.md, ...
            hint = (f"; {rel} is a file of the vault (a bootstrap file the runtime injects), "
                    "not memory the memory tools read")
        raise PathRefused(f"{p!r}: not in the memory set (MEMORY.md and {where}**/*.md); "
                          f"refused{hint}")
    path = file_of(root, settings, rel)
    # Follow symlinks: the real file must be a memory-set file of this vault too.
    real = Path(os.path.realpath(path))
    if os.path.lexists(path) or real != path:
        base = path.parent if rel == "MEMORY.md" and path.parent != root else root
        base_real = Path(os.path.realpath(base))
        try:
            real_rel = real.relative_to(base_real).as_posix()
        except ValueError:
            raise PathRefused(f"{p!r}: resolves outside the vault (a symlink leads to {real}); "
                              "refused") from None
        if real_rel != rel and not in_memory_set(settings, real_rel):
            raise PathRefused(f"{p!r}: a symlink leads to {real_rel}, which is not in the "
                              "memory set; refused")
    return rel, path


def read_excerpt(root: Path, settings, requested: str, start: int = 1,
                 lines: int = DEFAULT_LINES, max_chars: int = MAX_CHARS) -> Excerpt:
    """The runtime's ``memory_get`` over a confined path (``missing`` when the file is absent)."""
    if start < 1:
        raise VaultkitError(f"--from {start}: lines are numbered from 1")
    if lines < 1:
        raise VaultkitError(f"--lines {lines}: give at least 1")
    rel, path = confine(root, settings, requested)
    from vaultkit.core.bounded import ReadRefused, read_regular

    limit = settings.profile.budgets.max_file_bytes
    try:  # never more than the size limit into memory, never a FIFO or a device
        data = read_regular(path, limit, sole_link=True)  # no hard link to elsewhere
    except FileNotFoundError:
        return Excerpt(rel, "", start, 0, False, None, missing=True)
    except IsADirectoryError:
        raise PathRefused(f"{requested!r}: is a folder, not a file") from None
    except ReadRefused as exc:
        if exc.errno == errno.EFBIG:
            raise VaultkitError(f"{rel}: over the {limit:,}-byte limit "
                                "(budgets.max_file_bytes); not read") from None
        if "a folder" in str(exc.strerror):
            raise PathRefused(f"{requested!r}: is a folder, not a file") from None
        raise VaultkitError(f"{rel}: {exc.strerror}") from None
    except OSError as exc:
        raise VaultkitError(f"{rel}: cannot be read: {exc.strerror or exc}") from None
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    text = data.decode("utf-8", errors="replace")
    all_lines = text.splitlines(keepends=True)
    total = len(all_lines)
    chosen = all_lines[start - 1:start - 1 + lines]
    out: list[str] = []
    used = 0
    for line in chosen:
        if used + len(line) > max_chars:
            break
        out.append(line)
        used += len(line)
    if not out and chosen:  # one line longer than the cap: its head, then the next line
        out = [chosen[0][:max_chars]]
        cut_line = True
    else:
        cut_line = False
    count = len(out)
    end = start - 1 + count
    truncated = cut_line or end < total
    next_from = end + 1 if truncated else None
    return Excerpt(rel, "".join(out), start, count, truncated, next_from)
