"""``claude-memory`` (Claude Code): ``CLAUDE.md``, ``.claude/CLAUDE.md`` and
``CLAUDE.local.md`` from the repository root down to the workspace, the rule files without
``paths``, ``@path`` imports up to a depth, all loaded in full; the auto-memory index
``MEMORY.md`` cut to its first lines or units, at a line end. Sources: docs/context.md."""

from __future__ import annotations

import os
import re
from pathlib import Path

from vaultkit.core.lazyre import lazy_re
from vaultkit.vault.runtimes.base import (
    Files, ImportProblem, Piece, Request, RuntimeContext, _chain, _within, u16len)

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


def _claude_text(text: str) -> str:
    lines = text.split("\n")
    return "\n".join(lines[i] for i in _strip_comments_and_code(lines))


def load_claude(vault, spec, files: Files) -> RuntimeContext:
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


def _rule_files(files: Files, folder: Path) -> list[Path]:
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


def _has_paths(files: Files, path: Path) -> bool:
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


def _auto_memory(vault, spec, files: Files, ctx: RuntimeContext) -> None:
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


def load(request: Request) -> RuntimeContext:
    return load_claude(request.vault, request.spec, request.files)


def outside_paths(vault, spec) -> list[Path]:
    """The auto-memory index, when it lives in the vault but outside its listing."""
    found = auto_memory_path(vault, spec)
    return [found] if found is not None else []
