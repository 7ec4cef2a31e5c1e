"""The weekly distillation as a report: what to promote, what to prune. Changes nothing.

For the journals of the last ``days`` days (today included, in the vault's time
zone) it lists

- **candidates**: journal entries that read like a decision, a lesson or a
  preference — by a tag (``#decision``), the entry's heading or a phrase in its body,
  using the profile's phrase lists (``phrases.decision``, ``lesson``, ``preference``);
  each quotes the line that made it one (the line holding the tag or the phrase, else
  the heading) with the ``vaultkit promote FILE:LINE`` command that copies that line
  into MEMORY.md;
- **MEMORY.md entries** (list items and paragraph lines), each with the ``vaultkit
  archive MEMORY.md:LINE`` command that moves it into the archive note, that look
  stale — time-bound wording (``phrases.stale``: "currently", "for now", 目前 ...), a
  date older than
  ``stale_days``, a link to a note that is gone or to a superseded/rejected
  decision — or that are duplicated in a topic note (most of their words recur in one
  line of a structured or knowledge note);
- **filler days**: journal days whose entries are nothing but filler
  (``phrases.filler``);
- a **checklist** for the heartbeat run.
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import asdict, dataclass, field

from vaultkit.memory.text import CJK_CHARS, MARKER_LINE, key, stem

KINDS = ("decision", "lesson", "preference")
DESTINATION = {
    "decision": "{memory}/decisions/ (a decision note: Context, Decision, Alternatives Considered)",
    "lesson": "{memory}/lessons/<topic>.md (append `## Title (YYYY-MM-DD)`)",
    "preference": "{memory}/preferences/ (or USER.md when it is about the human)",
}
STALE_DAYS = 90
_DATE = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)")
_LIST = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+(?:\[[ xX]\]\s+)?")
_WORDS = re.compile(f"[{CJK_CHARS}]+|[^\\W_{CJK_CHARS}]+")
_DUP_MIN_TOKENS = 4
_DUP_SHARE = 0.8


@dataclass
class Candidate:
    kind: str
    path: str
    line: int
    heading: str
    reason: str
    excerpt: str  # the line that made the entry a candidate, its marks dropped
    destination: str
    excerpt_line: int = 0  # that line's number
    command: str = ""  # the command that promotes it: vaultkit promote FILE:LINE
    # where the line is already (``MEMORY.md:21``): promoted before, so no command
    promoted: str = ""


@dataclass
class MemoryFinding:
    path: str
    line: int
    text: str
    problem: str  # "stale" | "duplicate"
    detail: str
    # the command that moves the line out of MEMORY.md into the archive note, kept there
    command: str = ""


@dataclass
class FillerDay:
    path: str
    date: str
    entries: int


@dataclass
class Report:
    start: _dt.date
    end: _dt.date
    journals: list[str] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)
    memory: list[MemoryFinding] = field(default_factory=list)
    filler_days: list[FillerDay] = field(default_factory=list)
    memory_bytes: int | None = None
    memory_budget: int = 0
    checklist: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "window": {"from": self.start.isoformat(), "to": self.end.isoformat(),
                       "journals": self.journals},
            "candidates": [_candidate_dict(c) for c in self.candidates],
            "memory": [asdict(m) for m in self.memory],
            "fillerDays": [asdict(f) for f in self.filler_days],
            "memoryBytes": self.memory_bytes, "memoryBudget": self.memory_budget,
            "checklist": [{"done": False, "text": t} for t in self.checklist],
        }

    def to_markdown(self) -> str:
        out = [f"# Distillation {self.start.isoformat()} – {self.end.isoformat()}", ""]
        out.append(f"Journals read: {len(self.journals)}.")
        out.append("")
        for kind in KINDS:
            items = [c for c in self.candidates if c.kind == kind]
            out.append(f"## {kind.capitalize()} candidates ({len(items)})")
            out.append("")
            if not items:
                out.append("None.")
            for c in items:
                quote = f"; line {c.excerpt_line}: “{c.excerpt}”" if c.excerpt and \
                    c.excerpt_line != c.line else ""
                then = (f"already in {c.promoted}" if c.promoted
                        else f"promote: `{c.command}`")
                out.append(f"- [[{_stem_path(c.path)}]] line {c.line}: **{c.heading}** — "
                           f"{c.reason}{quote}; {then}")
            out.append("")
        out.append(f"## MEMORY.md review ({len(self.memory)})")
        out.append("")
        if self.memory_bytes is not None:
            out.append(f"MEMORY.md: {self.memory_bytes:,} of {self.memory_budget:,} bytes.")
            out.append("")
        if not self.memory:
            out.append("Nothing looks stale or duplicated.")
        for m in self.memory:
            out.append(f"- line {m.line} ({m.problem}): {m.text} — {m.detail}; archive: "
                       f"`{m.command}`")
        out.append("")
        out.append(f"## Filler-only days ({len(self.filler_days)})")
        out.append("")
        if not self.filler_days:
            out.append("None.")
        for f in self.filler_days:
            noun = "entry" if f.entries == 1 else "entries"
            out.append(f"- [[{_stem_path(f.path)}]]: {f.entries} {noun}, "
                       "nothing but filler")
        out.append("")
        out.append("## Checklist")
        out.append("")
        out += [f"- [ ] {t}" for t in self.checklist]
        return "\n".join(out) + "\n"


def _candidate_dict(c: Candidate) -> dict:
    out = asdict(c)
    out["excerptLine"] = out.pop("excerpt_line")
    out["promoted"] = out["promoted"] or None
    return out


def _stem_path(path: str) -> str:
    return path[:-3] if path.lower().endswith(".md") else path


def distill(vault, days: int, today: _dt.date, stale_days: int = STALE_DAYS) -> Report:
    from vaultkit.vault.entries import entries, journal_entries
    from vaultkit.vault.phrases import matcher

    profile = vault.profile
    phrases = profile.phrases
    match = {kind: matcher(getattr(phrases, kind)) for kind in KINDS}
    filler = matcher(phrases.filler)
    start = today - _dt.timedelta(days=max(days, 1) - 1)
    report = Report(start, today, memory_budget=profile.budgets.memory_md_bytes)
    level = (profile.layer("journal").entry_level if profile.layer("journal") else None) or 3

    memory = vault.note("MEMORY.md") or vault.note("../MEMORY.md")
    already = _promoted_lines(memory)

    journals = []
    for note in vault.notes_in("journal"):
        try:
            day = _dt.date.fromisoformat(note.name)
        except ValueError:
            continue
        if start <= day <= today and not note.error:
            journals.append((day, note))
    journals.sort(key=lambda t: t[0])
    report.journals = [n.path for _, n in journals]

    for day, note in journals:
        if level == "auto":  # found per file; a bullet log outside every heading has no title
            found = [e for e in journal_entries(note) if e.heading is not None]
        else:
            found = entries(note, level)
        filler_count = 0
        for e in found:
            title = _entry_title(e.heading.text)
            # a link names another note (its target and alias are that note's words): an
            # entry that links to [[pricing|the decision]] has decided nothing itself
            body = without_links(e.text)
            heading = without_links(e.heading.text)
            if filler and is_filler(filler, e):
                filler_count += 1
                continue
            tags = [t for t in note.tags if e.start <= t.line <= e.end]
            for kind in KINDS:
                m = match[kind]
                if not m:
                    continue
                reason = None
                at = e.start  # the line that makes it a candidate
                tag = next((t for t in tags if m.find(t.name.lower())
                            or m.find("#" + t.name.lower())), None)
                if tag is not None:
                    reason, at = f"tag #{tag.name.lower()}", tag.line
                else:
                    hit = m.find(heading)
                    if hit is not None:
                        reason = f"heading says '{hit.group(0)}'"
                    else:
                        hit = m.find(body)
                        if hit is not None:
                            reason = f"'{hit.group(0)}' in the entry"
                            # the line holding it (a phrase across two lines: the first
                            # line that says something)
                            at = next((n for n, line in e.lines()
                                       if m.find(without_links(line))), None) \
                                or next((n for n, line in e.lines() if _excerpt([line])),
                                        e.start)
                if reason:
                    line = note.lines[at - 1] if at <= len(note.lines) else ""
                    excerpt = _excerpt([_entry_title(_HEADING.sub("", line))]) \
                        if at == e.start else _excerpt([line])
                    where = already.get(f"{note.path}:{at}") or already.get(key(line))
                    report.candidates.append(Candidate(
                        kind, note.path, e.start, title, reason, excerpt,
                        profile.expand(DESTINATION[kind]), at,
                        "" if where else f"vaultkit promote {note.path}:{at}",
                        f"{memory.path}:{where}" if where else ""))
        if found and filler_count == len(found):
            report.filler_days.append(FillerDay(note.path, day.isoformat(), filler_count))

    if memory is not None and not memory.error:
        report.memory_bytes = memory.size
        report.memory = review_memory(vault, memory, today, stale_days)
    report.checklist = _checklist(report, vault)
    return report


def _promoted_lines(memory) -> dict[str, int]:
    """MEMORY.md's lines as ``vaultkit promote`` knows a line it holds already: by the
    ``FILE:LINE`` of a promotion marker and by each line's promoted form (its marks and
    time stamp dropped, case folded); the value is the line number."""
    if memory is None or memory.error:
        return {}
    out: dict[str, int] = {}
    for n, line in enumerate(memory.lines, 1):
        found = MARKER_LINE.match(line)
        if found:
            out.setdefault(found.group("source"), n + 1)
        elif key(line):
            out.setdefault(key(line), n)
    return out


_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+")
_LINK = re.compile(r"!?\[\[[^\]\n]*\]\]|!?\[[^\]\n]*\]\([^)\n]*\)")


def without_links(text: str) -> str:
    """``text`` with every wikilink and Markdown link (target and alias) blanked out."""
    return _LINK.sub(" ", text)


def is_filler(filler, entry) -> bool:
    """The filler-entry rule's judgement: the body, or the heading when the body is empty."""
    from vaultkit.vault.entries import is_content
    from vaultkit.lint.shared import words

    body = [words(s) for s in entry.body if is_content(s)]
    text = "\n".join(body) if body else words(entry.heading.text)
    return filler.only(text)


def _entry_title(heading: str) -> str:
    m = re.match(r"^\d{1,2}:\d{2}\s*[—–-]+\s*(.*)$", heading)
    return m.group(1) if m else heading


def _excerpt(body: list[str], limit: int = 140) -> str:
    for line in body:
        text = _LIST.sub("", line).strip()
        if text:
            return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"
    return ""


def _tokens(text: str) -> set[str]:
    out = set()
    for m in _WORDS.finditer(text.lower()):
        w = m.group(0)
        if w[0] >= "\u3040":  # CJK run: bigrams
            out.update(w[i:i + 2] for i in range(len(w) - 1)) if len(w) > 1 else out.add(w)
        elif len(w) >= 3 and not w.isdigit():
            out.add(stem(w))
    return out


def review_memory(vault, memory, today: _dt.date, stale_days: int) -> list[MemoryFinding]:
    """MEMORY.md lines that look stale or are duplicated in a topic note."""
    from vaultkit.vault.phrases import matcher

    stale = matcher(vault.profile.phrases.stale)
    lines = memory.lines
    resolver = vault.resolver
    links_by_line: dict[int, list] = {}
    for link in memory.links:
        links_by_line.setdefault(link.line, []).append(link)
    heading_lines = {h.line for h in memory.headings}

    # an inverted index of topic-note lines for the duplicate check
    postings: dict[str, list[tuple[str, int]]] = {}
    sizes: dict[tuple[str, int], int] = {}
    for path, note in vault.notes.items():
        if note.error or vault.layers.get(path) not in ("structured", "knowledge"):
            continue
        for number, text in enumerate(note.lines, 1):
            if not text.strip() or note.in_code(number):
                continue
            toks = _tokens(text)
            if len(toks) < 2:
                continue
            sizes[(path, number)] = len(toks)
            for t in toks:
                postings.setdefault(t, []).append((path, number))

    out: list[MemoryFinding] = []
    for number, raw in enumerate(lines, 1):
        if number < memory.body_start or number in heading_lines or memory.in_code(number):
            continue
        text = raw.strip()
        if not text or text.startswith(("<!--", "%%")) or text in ("---", "***"):
            continue
        shown = _LIST.sub("", raw).strip()
        # (MEMORY.md one folder up is named MEMORY.md too: the memory tools find it there)
        command = f"vaultkit archive MEMORY.md:{number}"
        reasons = []
        hit = stale.find(text) if stale else None
        if hit is not None:
            reasons.append(f"time-bound wording '{hit.group(0)}'")
        for m in _DATE.finditer(text):
            try:
                when = _dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
            except ValueError:
                continue
            age = (today - when).days
            if age > stale_days:
                reasons.append(f"dated {when.isoformat()}, {age} days ago")
                break
        for link in links_by_line.get(number, []):
            if link.external or not link.target:
                continue
            res = resolver.resolve(memory, link)
            if res.path is None:
                reasons.append(f"links to {link.target}, which does not exist")
                continue
            target = vault.notes.get(res.path)
            fm = target.frontmatter if target is not None and isinstance(
                target.frontmatter, dict) else {}
            status = str(fm.get("status", "")).lower()
            if status in ("superseded", "rejected", "done", "abandoned"):
                reasons.append(f"links to {res.path}, whose status is {status}")
        if reasons:
            out.append(MemoryFinding(memory.path.lstrip("./"), number, shown, "stale",
                                     "; ".join(reasons), command))
        toks = _tokens(text)
        if len(toks) >= _DUP_MIN_TOKENS:
            counts: dict[tuple[str, int], int] = {}
            for t in toks:
                for key in postings.get(t, ()):
                    counts[key] = counts.get(key, 0) + 1
            best = max(counts.items(), key=lambda kv: (kv[1], -kv[0][1]), default=None)
            if best and best[1] / len(toks) >= _DUP_SHARE:
                (path, line), shared = best
                out.append(MemoryFinding(memory.path.lstrip("./"), number, shown, "duplicate",
                                         f"{shared} of its {len(toks)} words recur in "
                                         f"{path}:{line}; keep one and link the other",
                                         command))
    return out


def _checklist(r: Report, vault) -> list[str]:
    prefix = vault.profile.memory_prefix
    n = {k: sum(1 for c in r.candidates if c.kind == k) for k in KINDS}
    stale = sum(1 for m in r.memory if m.problem == "stale")
    dup = sum(1 for m in r.memory if m.problem == "duplicate")
    out = []
    if n["decision"]:
        out.append(f"Record the {n['decision']} decision candidate(s) that still hold as notes "
                   f"in {prefix}decisions/ (frontmatter date, type, status, tags; sections "
                   "Context, Decision, Alternatives Considered)")
    if n["lesson"]:
        out.append(f"Append the {n['lesson']} lesson candidate(s) to topic files in "
                   f"{prefix}lessons/ as `## Title (YYYY-MM-DD)` entries (by topic, not by date)")
    if n["preference"]:
        out.append(f"Record the {n['preference']} preference candidate(s) in "
                   f"{prefix}preferences/ or USER.md")
    budget = f" (now {r.memory_bytes:,} of {r.memory_budget:,} bytes)" if r.memory_bytes is not \
        None else ""
    out.append(f"Promote only patterns that held all week to MEMORY.md{budget}, each with "
               "the `vaultkit promote FILE:LINE` its candidate names (once, refused when "
               "MEMORY.md would be cut); at most one MEMORY.md change a day")
    if stale:
        out.append(f"Check the {stale} MEMORY.md entr{'y' if stale == 1 else 'ies'} flagged "
                   "stale: re-date or move each, or archive it with the `vaultkit archive "
                   "MEMORY.md:LINE` it names (moved into the archive note, not lost)")
    if dup:
        out.append(f"Resolve the {dup} MEMORY.md entr{'y' if dup == 1 else 'ies'} duplicated in "
                   "topic notes: keep the fact in one place and link it (`vaultkit archive "
                   "MEMORY.md:LINE` moves the MEMORY.md copy into the archive note)")
    if r.filler_days:
        out.append(f"{len(r.filler_days)} journal day(s) held only filler: skip writing when "
                   "there is nothing worth recording (journals stay append-only; leave them)")
    out.append("Run `vaultkit index` if notes were created, then `vaultkit check`")
    return out
