"""``memory-summary`` (Codex memories): one summary file of the memories folder injected
into the developer instructions, cut in the middle to a token budget.

Codex (``codex-rs/core/src/memories``) keeps ``$CODEX_HOME/memories`` (``~/.codex/memories``):
``memory_summary.md``, ``MEMORY.md`` (the registry the agent searches), ``raw_memories.md``
and ``rollout_summaries/`` (written by its two-phase pipeline) and ``skills/``. At session
start only ``memory_summary.md`` is read: as UTF-8 (a file that is not valid UTF-8 is not
injected at all), trimmed, and cut to 5,000 tokens of 4 bytes each: past 20,000 bytes it
keeps the first and the last 10,000 bytes (at character boundaries) around
``…N tokens truncated…``. Sources: docs/context.md.
"""

from __future__ import annotations

import math
import os

from vaultkit.vault.runtimes.base import Piece, Request, RuntimeContext, _fmt, _line_of

# Rust's str::trim: the Unicode White_Space characters
_RUST_SPACE = ("\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
               "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")


def cut(spec, data: bytes) -> tuple[bytes, int, int, str]:
    """(what is injected, head bytes kept, tail bytes kept, marker) for the trimmed text
    ``data`` under ``spec.per_file_max`` bytes (codex-rs/utils/string/src/truncate.rs)."""
    budget = spec.per_file_max if spec.per_file_max is not None else len(data)
    if len(data) <= budget:
        return data, len(data), 0, ""
    text = data.decode("utf-8")
    left = budget // 2
    tail_start = len(data) - (budget - left)
    prefix_end, suffix_start, pos = 0, len(data), 0
    for ch in text:
        width = len(ch.encode("utf-8"))
        if pos + width <= left:
            prefix_end = pos + width
        elif pos >= tail_start:
            suffix_start = pos
            break
        pos += width
    suffix_start = max(suffix_start, prefix_end)
    removed = math.ceil((len(data) - budget) / 4)  # approx_tokens_from_byte_count
    marker = _fmt(spec.marker, removed=removed)
    return (data[:prefix_end] + marker.encode("utf-8") + data[suffix_start:], prefix_end,
            len(data) - suffix_start, marker)


def load(request: Request) -> RuntimeContext:
    spec, files = request.spec, request.files
    ctx = RuntimeContext("codex-memories", spec.label or "Codex memories", "bytes", None,
                         per_file_max=spec.per_file_max,
                         limits_source="5,000 tokens of 4 bytes (MEMORY_TOOL_DEVELOPER_"
                                       "INSTRUCTIONS_SUMMARY_TOKEN_LIMIT)",
                         joiner=spec.joiner or "\n\n",
                         window_tokens=spec.context_window_tokens)
    for name in spec.files:
        path = files.workspace / name
        raw = files.raw(path)
        if raw is None:
            if files.refusal(path):
                ctx.pieces.append(files.refused_piece(path, "memory summary"))
            continue
        note = files.note_of(path)
        if note is not None and not note.error:  # the note's bytes as on disk
            raw = (b"\xef\xbb\xbf" if note.bom else b"") + note.text.encode("utf-8")
        rel = files.rel(path)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            ctx.pieces.append(Piece(rel, "memory summary", len(raw), "", 0, 0, "dropped",
                                    1, None, "not valid UTF-8: Codex reads nothing of it"))
            continue
        data = text.strip(_RUST_SPACE).encode("utf-8")
        if not data:
            continue
        injected, head, tail, _ = cut(spec, data)
        body = injected.decode("utf-8")
        piece = Piece(rel, "memory summary", len(data), body, len(injected), head + tail)
        if head + tail < len(data):
            whole = data.decode("utf-8")
            skip = text[:len(text) - len(text.lstrip(_RUST_SPACE))].count("\n")
            start = len(data[:head].decode("utf-8"))
            end = len(whole) - len(data[len(data) - tail:].decode("utf-8")) if tail else len(whole)
            piece.cut = "middle"
            piece.first_lost_line = _line_of(whole, start) + skip
            piece.last_lost_line = _line_of(whole, max(start, end - 1)) + skip
            piece.reason = (f"over {spec.per_file_max:,} bytes (5,000 tokens): the middle "
                            "is replaced by a marker")
        ctx.pieces.append(piece)
    root = files.workspace / os.path.dirname(spec.files[0]) if spec.files else files.workspace
    ctx.notes.append("Codex wraps the summary in its memory instructions (templates/memories/"
                     "read_path.md, between ========= MEMORY_SUMMARY BEGINS ========= and "
                     "========= MEMORY_SUMMARY ENDS =========): the text around it is not "
                     "simulated")
    ctx.notes.append("MEMORY.md, raw_memories.md, rollout_summaries/ and skills/ are read "
                     "by the agent when it searches, not at session start; the summary is "
                     "injected only in a root session with the memories feature on")
    if os.path.isdir(root / ".git"):
        ctx.notes.append(f"{files.rel(root / '.git')}: Codex keeps a git baseline of its "
                         "own in the memories folder and replaces any .git there with a "
                         "fresh one-commit repository (codex-rs/git-utils, "
                         "reset_git_repository): keep the vault's history above it")
    return ctx
