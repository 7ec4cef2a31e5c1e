"""``entry-store`` (Hermes Agent): files of entries separated by a delimiter, each file
rendered as one block under a usage header, frozen at session start.

Hermes reads ``MEMORY.md`` and ``USER.md`` of its memories folder (``$HERMES_HOME/memories``,
``~/.hermes/memories`` by default) with Python's text mode (so ``\\r\\n`` reads as
``\\n``), splits each at ``\\n§\\n``, strips every entry, drops empty and repeated ones,
joins them again and renders the block: a rule, a header with the usage in percent and
characters (Python's ``len``: code points) against the file's limit, flagged when over it,
a rule, the entries. The limit is enforced only when the agent's memory tool writes; a
file grown past it from outside is loaded whole up to ``max(limit × 2, 4000)`` characters
and cut beyond that to a head and a tail around a marker. Sources: docs/context.md.
"""

from __future__ import annotations

from vaultkit.vault.runtimes.base import Piece, Request, RuntimeContext, _fmt, _line_of

# tools/memory_tool.py: an entry longer than the threat scanner's window
# (tools/threat_patterns.py MAX_SCAN_CHARS) is replaced by this line in the snapshot
MAX_SCAN_CHARS = 65_536
_TOO_LARGE = ("[BLOCKED: {file} entry too large to scan ({length} chars). Removed from "
              "system prompt; use memory(action=remove) to delete the original.]")


def _entries(text: str, separator: str) -> list[str]:
    text = text.replace("\r\n", "\n").replace("\r", "\n")  # Python's universal newlines
    if not text.strip():
        return []
    out = [e.strip() for e in text.split(separator)]
    return list(dict.fromkeys(e for e in out if e))


def render(spec, name: str, text: str) -> tuple[str, int, int, int, int]:
    """(the block, the entries' length, head kept, tail kept, limit) for one file: what
    Hermes puts in its system prompt for it ("" when it holds no entry)."""
    label = name.rsplit("/", 1)[-1]
    entries = [e if len(e) <= MAX_SCAN_CHARS
               else _fmt(_TOO_LARGE, file=label, length=f"{len(e):,}")
               for e in _entries(text, spec.entry_separator)]
    limit = spec.file_limits.get(label, 0)  # (by file name: the folder may differ)
    if not entries:
        return "", 0, 0, 0, limit
    content = spec.entry_separator.join(entries)
    current = len(content)
    pct = min(100, int((current / limit) * 100)) if limit > 0 else 0
    head = tail = current
    factor, minimum = spec.render_cap or (0, 0)
    cap = max(limit * factor, minimum) if spec.render_cap else None
    if cap is not None and current > cap:
        head = int(cap * spec.render_ratios[0])
        tail = int(cap * spec.render_ratios[1])
        marker = _fmt(spec.marker, omitted=f"{current - head - tail:,}",
                      current=f"{current:,}", limit=f"{limit:,}")
        # (Python's content[-0:] is the whole text: Hermes's slice, kept as it is)
        content = content[:head] + marker + content[-tail:]
        tail = len(content) - head - len(marker)
    else:
        tail = 0
    over = spec.over_flag if current > limit else ""
    header = _fmt(spec.file_headers.get(label, label), pct=pct, current=f"{current:,}",
                  limit=f"{limit:,}", over=over)
    return _fmt(spec.block_template, header=header, content=content), current, head, tail, \
        limit


def load(request: Request) -> RuntimeContext:
    spec, files = request.spec, request.files
    ctx = RuntimeContext("hermes", spec.label or "Hermes Agent", spec.unit, None,
                         joiner=spec.joiner or "\n\n",
                         window_tokens=spec.context_window_tokens,
                         limits_source="per file, enforced only when its memory tool writes "
                                       "(" + ", ".join(f"{n} {v:,}"
                                                       for n, v in spec.file_limits.items())
                                       + ")")
    for name in spec.files:
        path = files.workspace / name
        text = files.text(path) if files.exists(path) else None
        if text is None:
            if files.exists(path) and files.refusal(path):
                ctx.pieces.append(files.refused_piece(path, "memory"))
            continue  # a missing file is an empty store: no block
        block, current, head, tail, limit = render(spec, name, text)
        if not block:
            continue
        piece = Piece(files.rel(path), "memory", current, block, len(block), current)
        if head + tail < current:
            piece.kept = head + tail
            piece.cut = "middle"
            joined = spec.entry_separator.join(_entries(text, spec.entry_separator))
            # lines of the joined entries: the file's own when it is tool-shaped
            # (leading blank lines aside)
            skip = _leading_lines(text)
            piece.first_lost_line = _line_of(joined, head) + skip
            piece.last_lost_line = _line_of(joined, max(head, current - tail - 1)) + skip
            cap = max(limit * spec.render_cap[0], spec.render_cap[1])
            piece.reason = (f"past {cap:,} chars, the most Hermes renders (its limit of "
                            f"{limit:,} × {spec.render_cap[0]}, at least "
                            f"{spec.render_cap[1]:,}): a head and a tail are kept")
        elif current > limit:
            piece.reason = f"over its limit of {limit:,}: loaded whole, flagged OVER BUDGET"
        ctx.pieces.append(piece)
    ctx.notes.append("each entry is scanned for prompt-injection patterns "
                     "(tools/threat_patterns.py) and one that matches is replaced by a "
                     "[BLOCKED: …] line: not simulated")
    ctx.notes.append("memory.memory_char_limit / memory.user_char_limit in Hermes's "
                     "config.yaml are not read: set [runtime.hermes] file-limits to match")
    return ctx


def _leading_lines(text: str) -> int:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    stripped = text.lstrip()
    return text[:len(text) - len(stripped)].count("\n")
