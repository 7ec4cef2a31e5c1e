"""The audit check ``bootstrap-footprint``: what each runtime present loads at session start.

One verdict for the budget: the design notes' guidelines (the bootstrap layer under 20 KB,
``budgets.bootstrap_guideline_chars``, counted in what OpenClaw injects and in its units;
a typical session's always-loaded context about 15 KB, the same plus today's and yesterday's
journal, ``budgets.session_guideline_chars``) give a warning, never a failure. What a runtime cuts
is the ``bootstrap-truncation`` check's.
"""

from __future__ import annotations

import datetime as dt

from vaultkit.audit.context import FAIL, PASS, WARN, AuditContext, Check, estimate_tokens, size_text
from vaultkit.vault.runtimes import u16len


def _journal(ctx: AuditContext, day: dt.date):
    return ctx.vault.notes.get(f"{ctx.profile.memory_prefix}{day.isoformat()}.md")


def _unit(rc) -> str:
    return "bytes" if rc.unit == "bytes" else "chars"


def check_footprint(ctx: AuditContext) -> Check:
    budgets = ctx.profile.budgets
    guideline, session_guideline = budgets.bootstrap_guideline_chars, budgets.session_guideline_chars
    rows = []
    boot_bytes = 0
    for name, note in ctx.bootstrap().items():
        rows.append({"file": note.path, "bytes": note.size,
                     "tokens": estimate_tokens(note.text) if not note.error else None,
                     "kind": "bootstrap"})
        boot_bytes += note.size
    for label, day in (("today", ctx.today), ("yesterday", ctx.today - dt.timedelta(days=1))):
        note = _journal(ctx, day)
        if note is not None:
            rows.append({"file": note.path, "bytes": note.size,
                         "tokens": estimate_tokens(note.text) if not note.error else None,
                         "kind": label})
    runtimes = ctx.runtimes()
    per_runtime = []
    by_path = {r["file"]: r for r in rows}
    for rc in runtimes:
        per_runtime.append(f"{rc.label} {rc.total:,} {_unit(rc)} in {len(rc.loaded)} "
                           f"file{'s' * (len(rc.loaded) != 1)} (~{rc.tokens:,} tokens, "
                           f"{rc.share:.1%} of a {rc.window_tokens:,}-token window)")
        for p in rc.loaded:
            if p.role == "missing":
                # the marker injected in its place counts toward what the runtime loads, so
                # it has its row: the table's total is the headline's
                if rc.session == "main" and rc.unit == "utf16":
                    row = by_path.setdefault(p.path, {
                        "file": p.path, "bytes": 0, "tokens": estimate_tokens(p.injected),
                        "kind": "missing"})
                    if row not in rows:
                        rows.append(row)
                    row.setdefault("loaded", {})[rc.runtime] = {"units": p.injected_length,
                                                               "unit": rc.unit}
                continue
            row = by_path.get(p.path)
            if row is None:  # a file only this runtime loads (CLAUDE.md, an import, ...)
                note = ctx.vault.note(p.path)
                row = by_path[p.path] = {
                    "file": p.path, "bytes": note.size if note is not None else
                    len(p.injected.encode("utf-8", "surrogatepass")),
                    "tokens": estimate_tokens(p.injected), "kind": "runtime"}
                rows.append(row)
            # what each runtime loads of the file, in its own unit ("utf16" or "bytes")
            row.setdefault("loaded", {})[rc.runtime] = {"units": p.injected_length,
                                                       "unit": rc.unit}
    if not rows:
        return Check("bootstrap-footprint", FAIL,
                     f"nothing loads every session: no bootstrap files in "
                     f"{ctx.where_bootstrap()}",
                     "create MEMORY.md, AGENTS.md, SOUL.md and USER.md (`vaultkit init`)")
    file_rows = [r for r in rows if r["kind"] in ("bootstrap", "today", "yesterday")]
    total = sum(r["bytes"] for r in file_rows)
    summary = "at session start: " + ("; ".join(per_runtime) if per_runtime else
                                      f"{len(file_rows)} files, {size_text(total)}")
    openclaw = next((rc for rc in runtimes if rc.session == "main" and rc.unit == "utf16"),
                    None)
    injected = sum(p.injected_length for p in openclaw.loaded if p.role != "missing") \
        if openclaw else 0
    over = []
    hints = []
    if openclaw is not None and injected > guideline:
        largest = max((p for p in openclaw.loaded if p.role != "missing"),
                      key=lambda p: p.injected_length)
        over.append(f"OpenClaw injects {injected:,} chars of bootstrap files, over the "
                    f"{guideline:,} guideline (budgets.bootstrap_guideline_chars, the design "
                    "notes' < 20 KB)")
        hints.append(f"trim {injected - guideline:,} chars, starting with {largest.path} "
                     f"({largest.injected_length:,}): move what is not needed every session "
                     "into memory/semantic/ or memory/procedural/")
    journals = [(r["file"], u16len(ctx.vault.notes[r["file"]].text)) for r in file_rows
                 if r["kind"] in ("today", "yesterday") and not ctx.vault.notes[r["file"]].error]
    session = injected + sum(n for _, n in journals)
    if openclaw is not None and not over and session > session_guideline:
        parts = [(p.path, p.injected_length) for p in openclaw.loaded if p.role != "missing"]
        largest_path, largest_n = max(parts + journals, key=lambda x: x[1])
        over.append(f"with today's and yesterday's journal {session:,} chars, over the "
                    f"~{session_guideline / 1024:.0f} KB a typical session should load "
                    "(budgets.session_guideline_chars)")
        hints.append(f"trim {session - session_guideline:,} chars, starting with "
                     f"{largest_path} ({largest_n:,}); keep journal entries 3–10 lines")
    if over:
        return Check("bootstrap-footprint", WARN, f"{summary}; " + "; ".join(over),
                     "; ".join(hints), rows)
    return Check("bootstrap-footprint", PASS,
                 f"{summary}; within the guidelines ({guideline:,} chars of bootstrap files, "
                 f"{session_guideline:,} a session with the journals)", "", rows)
