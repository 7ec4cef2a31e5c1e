"""``workspace-set`` (OpenClaw): a fixed list of files in the workspace, filtered by session
type, each cut to a per-file limit and all together to a total limit, in UTF-16 units of
the right-trimmed text; a cut file keeps a head and a tail around a marker (AGENTS.md: a
head, a digest of its policy lines and a tail). Sources: docs/context.md."""

from __future__ import annotations

import math
import re

from vaultkit.vault.runtimes.base import (
    _JS_SPACE, _JS_SPACE_RUN, MIN_TRIMMED_CONTENT, Files, Piece, Request, RuntimeContext,
    _fmt, _line_of, js_trim_end, u16_prefix, u16_suffix, u16len)

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


class _Cut:
    """What a runtime keeps of a file it loads, and whether it cut it."""

    _fields = ("content", "truncated", "length", "head", "tail", "digest")
    content: str
    truncated: bool
    length: int
    head: int  # units of the file kept from its start
    tail: int  # units kept from its end
    digest: int

    def __init__(self, content, truncated, length, head=0, tail=0, digest=0):
        self.content = content
        self.truncated = truncated
        self.length = length
        self.head = head
        self.tail = tail
        self.digest = digest


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


def load_openclaw(vault, spec, session: str | None, files: Files, *,
                  openclaw_config=None, agent: str | None = None) -> RuntimeContext:
    """OpenClaw's bootstrap injection; the limits come from ``openclaw.json`` when it sets
    them (the agent's ``agents.list[]`` entry, then ``agents.defaults``), else the profile."""
    from vaultkit.vault.openclaw import (EIGHT_FILES, SIX_FILE_SET, USER_FILE_CAP,
                                         bootstrap_limits, file_set, installed_for,
                                         user_file_cap)

    per_file, total, source = bootstrap_limits(vault, openclaw_config, agent)
    version = installed_for(vault, openclaw_config)
    cap, cap_what = user_file_cap(version)
    # the six-file set replaces the eight of the rule pack, not a list of one's own
    contract = file_set(version) if list(spec.files) == list(EIGHT_FILES) else None
    all_files, optional, sessions = spec.files, spec.optional, spec.sessions
    if contract is not None:
        all_files, optional, sessions, set_note = contract
    ctx = RuntimeContext("openclaw", spec.label or "OpenClaw", spec.unit, session or "main",
                         per_file_max=per_file, total_max=total, limits_source=source,
                         joiner="\n\n", window_tokens=spec.context_window_tokens)
    allowed = sessions.get(session or "main", ["*"])
    names = [n for n in all_files if "*" in allowed or n in allowed]
    if contract is not None:
        retired = [n for n in spec.files
                   if n not in all_files and files.exists(files.workspace / n)]
        if retired:
            since = ".".join(map(str, SIX_FILE_SET[0]))
            ctx.notes.append(
                f"{' and '.join(retired)} {'is' if len(retired) == 1 else 'are'} not injected: "
                f"OpenClaw {since} and later load only {', '.join(all_files)}"
                + (f" ({set_note})" if set_note else "")
                + ("" if version is not None else " (the newest known contract: no install "
                   "found)"))
        elif set_note:
            ctx.notes.append(set_note)
    routed = memory_tool_routing(vault, spec, openclaw_config, agent)
    if routed and "MEMORY.md" in names:
        names.remove("MEMORY.md")
        if files.exists(files.workspace / "MEMORY.md"):
            ctx.notes.append(f"MEMORY.md is not injected: {routed}")
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
        if content is None and name in optional:
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
        # USER.md (by name, any case) is held to min(per-file limit, its fixed cap)
        fixed = cap if cap is not None and name.lower() == "user.md" else None
        file_limit = min(per_file, fixed) if fixed is not None else per_file
        # where the cap is not verified for this version, say so if it would matter
        if fixed is None and cap_what and name.lower() == "user.md" \
                and u16len(js_trim_end(content)) > USER_FILE_CAP[2]:
            ctx.notes.append(cap_what)
        limit = max(1, min(file_limit, remaining))
        room = min(per_file, remaining)  # what an OpenClaw without the USER.md cap allows
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
            if limit == file_limit and fixed is not None and fixed < per_file:
                piece.reason = f"over {cap_what}"
                if version is None and result.length <= room:
                    # an OpenClaw before the cap would load it whole
                    piece.assumed = "USER.md's cap of the newest OpenClaw (no install found)"
            elif limit == file_limit:
                piece.reason = f"over the per-file limit of {per_file:,}"
            else:
                piece.reason = f"only {limit:,} of the total limit of {total:,} were left"
            if result.digest:
                piece.reason += f" (a digest of {result.digest:,} units of its policy lines " \
                                "is kept between head and tail)"
        ctx.pieces.append(piece)
    if cap is not None:  # for the advice: no setting loads more of USER.md than this
        for piece in ctx.pieces:
            if piece.role == "bootstrap" and piece.path.rsplit("/", 1)[-1].lower() == "user.md":
                piece.cap = cap
    if session and session != "main":
        left_out = [n for n in all_files if n not in names and files.exists(ws / n)]
        if left_out:
            ctx.notes.append(f"a {session} session does not get {', '.join(left_out)}")
    ctx.notes.append("the skills list, the daily files of the startup context and the "
                     "system prompt around the files are not simulated")
    return ctx


def memory_tool_routing(vault, spec, openclaw_config=None, agent: str | None = None) -> str:
    """Why MEMORY.md is left out of the bootstrap files, or "": the harness openclaw.json
    selects (``embeddedHarness.runtime``, the agent's entry first) routes it to the memory
    tools, and they are on (``plugins.slots.memory`` is not "none")
    (extensions/codex/src/app-server/attempt-workspace-context.ts)."""
    if not spec.memory_tool_harnesses:
        return ""
    from vaultkit.vault.openclaw import find_config_with_source, load_openclaw, setting

    config, _ = find_config_with_source(vault, openclaw_config)
    if config is None:
        return ""
    data, error = load_openclaw(config)
    if error is not None or not isinstance(data, dict):
        return ""
    harness, where = setting(data, "embeddedHarness.runtime", agent)
    if not where or harness not in spec.memory_tool_harnesses:
        return ""
    plugins = data.get("plugins")
    slots = plugins.get("slots") if isinstance(plugins, dict) else None
    if isinstance(slots, dict) and slots.get("memory") == "none":
        return ""
    return (f"{where} is {harness!r} and the memory plugin is on: the {harness} harness "
            "names it for memory_search / memory_get instead of pasting it "
            "(the rest of that harness's prompt is not simulated)")


def load(request: Request) -> RuntimeContext:
    return load_openclaw(request.vault, request.spec, request.session, request.files,
                         openclaw_config=request.openclaw_config, agent=request.agent)
