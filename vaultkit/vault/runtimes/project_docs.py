"""``project-docs`` (Codex): the first of a list of names per folder from the git root down
to the workspace, joined with a blank line, the whole cut to a byte budget without a
marker. Sources: docs/context.md."""

from __future__ import annotations

import os

from vaultkit.vault.runtimes.base import Files, Piece, Request, RuntimeContext, _chain

def load_codex(vault, spec, files: Files) -> RuntimeContext:
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


def load(request: Request) -> RuntimeContext:
    return load_codex(request.vault, request.spec, request.files)
