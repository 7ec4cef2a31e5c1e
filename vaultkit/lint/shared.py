"""What several rules share: frontmatter line offsets, unquoted links in properties, bootstrap
file names, journal names, bold labels and prose.

A rule module never imports another rule module (an import-linter contract); what two rules
both need lives here.
"""

from __future__ import annotations

import datetime as dt
import re

from vaultkit.core.lazyre import lazy_re


# -- frontmatter lines and properties ----------------------------------------------------------

def line_starts(text: str) -> list[int]:
    """Offset in ``text`` of each line's first character (index 0 is line 1)."""
    starts = [0]
    pos = text.find("\n")
    while pos >= 0:
        starts.append(pos + 1)
        pos = text.find("\n", pos + 1)
    return starts


def line_span(note, starts, line: int) -> tuple[int, int]:
    """Offsets of line ``line``'s content (without its line ending)."""
    start = starts[line - 1]
    end = starts[line] - 1 if line < len(starts) else len(note.text)
    if end > start and note.text[end - 1] == "\r":
        end -= 1
    return start, end


def key_lines(note, key: str) -> tuple[int, int] | None:
    """First and last line of a top-level property (its key line and continuation lines)."""
    first = note.fm_keys.get(key)
    if first is None or note.fm_span is None:
        return None
    later = [ln for ln in note.fm_keys.values() if ln > first]
    last = (min(later) if later else note.fm_span[1]) - 1
    lines = note.lines
    while last > first and (not lines[last - 1].strip() or lines[last - 1].startswith("#")):
        last -= 1
    return first, last


def unquoted_link(value) -> bool:
    """True when YAML read an unquoted ``[[link]]`` in ``value`` as a nested list."""
    if isinstance(value, list):
        return any(isinstance(v, list) or unquoted_link(v) for v in value)
    if isinstance(value, dict):
        return any(unquoted_link(v) for v in value.values())
    return False


def unquoted_links(line: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each ``[[...]]`` in a YAML line that is not inside quotes or a comment."""
    out = []
    quote = None
    i = 0
    n = len(line)
    while i < n:
        ch = line[i]
        if quote:
            if ch == "\\" and quote == '"':
                i += 2
                continue
            if ch == quote:
                if quote == "'" and line.startswith("''", i):
                    i += 2
                    continue
                quote = None
            i += 1
            continue
        if ch in "\"'" and (i == 0 or line[i - 1] in " \t[{,:-"):
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1] in " \t"):
            break
        elif line.startswith("[[", i):
            close = line.find("]]", i + 2)
            inner = line[i + 2:close] if close >= 0 else ""
            if close >= 0 and inner.strip() and "[" not in inner and "]" not in inner:
                out.append((i, close + 2))
                i = close + 2
                continue
        i += 1
    return out


# -- bootstrap files ---------------------------------------------------------------------------

def is_bootstrap_file(ctx, note, name: str) -> bool:
    """True for the bootstrap file ``name`` (``MEMORY.md``), in the vault or one level up."""
    base = note.path.rsplit("/", 1)[-1]
    if base != name or ctx.layer_of(note) != "bootstrap":
        return False
    return "/" not in note.path or note.path == "../" + name


# -- journal names -----------------------------------------------------------------------------

DAY_WORDS = {"today", "yesterday", "tomorrow"}


LOOSE_DATE = lazy_re(r"^(\d{4})-(\d{1,2})-(\d{1,2})(.*)$")


def journal_name_problem(stem: str, prefix: str) -> str | None:
    """Why a memory-folder file named ``stem`` is a mis-named journal, or None when the
    name does not try to be a day's journal (then it is a topic note, not this rule's)."""
    path = f"{prefix}{stem}.md"
    if stem.lower() in DAY_WORDS:
        return (f"'{path}' is not a journal name: a day's journal is {prefix}YYYY-MM-DD.md "
                "(the runtime loads today's and yesterday's by that name)")
    m = LOOSE_DATE.match(stem)
    if not m:
        return None
    year, month, day, rest = m.groups()
    try:
        date = dt.date(int(year), int(month), int(day))
    except ValueError:
        return f"'{path}' names no real day ({year}-{month}-{day} does not exist)"
    canonical = f"{prefix}{date.isoformat()}.md"
    if rest:
        return (f"'{path}' is a timestamped or suffixed variant; append to {canonical} "
                "instead")
    return f"'{path}' is not zero-padded; rename it to {canonical}"


# -- bold labels -------------------------------------------------------------------------------

# **Label:** text, **Label**: text, **标签**：text, - **Решение:** text
BOLD_LABEL = lazy_re(
    r"^\s{0,3}(?:[-*+]\s+)?(?:\*\*|__)(?P<label>[^*_\n]+?)\s*(?P<inner>[:：])?\s*(?:\*\*|__)"
    r"\s*(?P<outer>[:：])?\s*(?P<rest>.*)$")


def bold_label(line: str) -> tuple[str, str] | None:
    """``(label, rest of the line)`` for a bold label line with a colon inside or outside
    the bold, else None."""
    m = BOLD_LABEL.match(line)
    if m is None or not (m.group("inner") or m.group("outer")):
        return None
    return m.group("label"), m.group("rest")


# -- prose -------------------------------------------------------------------------------------

# Bare URLs (bounded: the scheme is at most 32 characters, the rest stops at space or ">").
URL = lazy_re(r"<?[A-Za-z][A-Za-z0-9+.-]{1,31}://[^\s>]*>?")


def prose(line: str) -> str:
    """A line with its links, inline code, comments and URLs blanked out (offsets kept)."""
    if "[" not in line and "`" not in line and "<" not in line and "%" not in line \
            and "://" not in line:
        return line
    from vaultkit.vault.parse import mask_references  # the parser's own linear masks

    line = mask_references(line)
    if "://" in line:
        line = URL.sub(lambda m: " " * len(m.group(0)), line)
    return line



# -- skills (skill-not-loaded, skill-frontmatter) -------------------------------------------

SKILL_ROOTS = ("skills/",)  # workspace skill roots inside the vault (OpenClaw: <workspace>/skills)
CLAUDE_SKILL_ROOTS = (".claude/skills/",)  # Claude Code's project skills
SKILL_MAX_DEPTH = 6  # OpenClaw finds SKILL.md up to 6 levels below a root


def skill_folder(path: str, roots: tuple[str, ...] = SKILL_ROOTS, vault=None) -> str | None:
    """The folder name of a skill's ``SKILL.md`` under one of ``roots``, or None. With
    ``vault`` (the vault, or a rule's context: its ``has_note``), a ``SKILL.md`` inside
    another skill's folder is no skill (OpenClaw stops looking below a folder holding one)."""
    if not path.endswith("/SKILL.md"):
        return None
    for root in roots:
        if path.startswith(root):
            parts = path[len(root):].split("/")
            if not 2 <= len(parts) <= SKILL_MAX_DEPTH + 1:
                return None
            if vault is not None:
                for depth in range(1, len(parts) - 1):
                    if vault.has_note(root + "/".join(parts[:depth]) + "/SKILL.md"):
                        return None
            return parts[-2]
    return None


def skill_frontmatter(note) -> tuple[dict, str, int]:
    """``(fields, problem, line)`` of a skill's frontmatter as OpenClaw reads it: YAML, else
    single-line ``key: value`` lines with a nested ``metadata`` block read as JSON5. The
    problem is "" when the fields could be read."""
    if isinstance(note.frontmatter, dict) and not note.fm_error:
        return note.frontmatter, "", 1
    lines = note.lines
    if not lines or lines[0].strip() != "---":
        return {}, "no frontmatter", 1
    end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
    if end is None:
        return {}, "the frontmatter block never closes", 1
    data = _single_line_fields(lines[1:end])
    if data is not None:
        return data, "", 1
    if note.fm_error:
        message, line = note.fm_error
        return {}, f"frontmatter is not valid YAML ({message})", line
    return {}, "the frontmatter is not a mapping of keys", 1


def _single_line_fields(block: list[str]) -> dict | None:
    from vaultkit.core.bounded import load_json5

    out: dict = {}
    i = 0
    while i < len(block):
        line = block[i]
        m = re.match(r"^([A-Za-z0-9_-]+):\s*(.*)$", line)
        if not m:
            if line.strip() and not line.startswith((" ", "\t", "#")):
                return None
            i += 1
            continue
        key, value = m.group(1), m.group(2).strip()
        if key == "metadata" and not value:
            nested = []
            i += 1
            while i < len(block) and (block[i].startswith((" ", "\t")) or not block[i].strip()):
                nested.append(block[i])
                i += 1
            try:
                out[key] = load_json5("\n".join(nested))
            except Exception:
                return None
            continue
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        out[key] = value
        i += 1
    return out


# -- an intended deletion, accepted for one commit ------------------------------------------

ACCEPT_VARIABLE = "VAULTKIT_ACCEPT_DELETION"


def accepted_deletions() -> set[str]:
    """The paths ``VAULTKIT_ACCEPT_DELETION`` names (comma-separated): cuts and deletions
    accepted for the commit being made (``mass-deletion``, and ``journal-append-only`` for
    a journal deleted since a snapshot)."""
    import os

    value = os.environ.get(ACCEPT_VARIABLE, "")
    return {p.strip().removeprefix("./") for p in value.split(",") if p.strip()}


def accepting(ctx, path: str, lines) -> None:
    """Note that this run passed ``lines`` of ``path`` over because
    ``VAULTKIT_ACCEPT_DELETION`` names it: a hook run that passes records them
    (:class:`vaultkit.vault.loss.AcceptedRemovals`), so the next commit does not judge
    them lost again."""
    pending = ctx.vault.__dict__.setdefault("_accepting", {})
    pending.setdefault(path, []).extend(line for line in lines if line.strip())


def accepted_removals(vault):
    """The workspace's record of removals accepted on purpose, read once per run."""
    record = vault.__dict__.get("_accepted_removals")
    if record is None:
        from vaultkit.vault.loss import AcceptedRemovals

        record = vault.__dict__["_accepted_removals"] = AcceptedRemovals(vault.root)
    return record


def untracked_kept(vault, git, change) -> bool:
    """Whether a deletion the commit stages left the file in the work tree (``git rm
    --cached``, or the file taken out of git to be ignored): its lines are all still there,
    and `git checkout HEAD -- path` would overwrite those written since; ``git add`` tracks
    it again as it is."""
    import os
    import stat

    if not git.staged or change.old is None:
        return False
    try:
        return stat.S_ISREG(os.lstat(os.path.join(vault.root, change.old)).st_mode)
    except (OSError, ValueError):
        return False


def accept_deletion(path: str) -> str:
    """``VAULTKIT_ACCEPT_DELETION=<path>``, quoted for a shell."""
    import shlex

    return f"{ACCEPT_VARIABLE}={shlex.quote(path)}"


# -- filler (filler-entry's judgement; entry-too-short leaves such entries to it) ----------

# What is not the entry's words: list and quote markers, checkboxes, time and date
# stamps, emphasis marks.
_MARKER = lazy_re(r"^\s*(?:>\s*)*(?:(?:[-*+]|\d+[.)])\s+)?(?:\[[ xX]\]\s+)?")
_STAMP = lazy_re(
    r"\[?(?:\d{4}-\d{2}-\d{2}|\d{4}年\d{1,2}月\d{1,2}日)\]?"
    r"|\[?\b(?:[01]?\d|2[0-3])[:：][0-5]\d(?:[:：][0-5]\d)?\b\]?")
_EMPHASIS = lazy_re(r"[*~`=]+")


def words(line: str) -> str:
    """A line's words without list marker, time or date stamp and emphasis."""
    return _EMPHASIS.sub(" ", _STAMP.sub(" ", _MARKER.sub("", line, count=1)))



def filler_text(find, entry):
    """The entry's cleaned text when every line of it is filler (``find``: the profile's
    ``filler`` phrases), else None; an entry without a body is judged by its heading."""
    from vaultkit.vault.entries import is_content

    lines = []
    for line in entry.body:
        if not is_content(line):
            continue
        text = words(line)
        if not find.only(text):
            return None  # most entries stop at their first line
        lines.append(text)
    if not lines:
        if entry.heading is None:
            return None
        text = words(entry.heading.text)
        return text if find.only(text) else None
    return "\n".join(lines)
