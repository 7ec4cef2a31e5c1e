import re

from vaultkit.core.lazyre import lazy_re
from vaultkit.lint.diagnostics import Edit, Fix
from vaultkit.lint.rule import Rule
from vaultkit.lint.shared import key_lines, line_span, line_starts

# Dropped by Obsidian 1.9, and the property that replaces each.
RENAMES = {"tag": "tags", "alias": "aliases", "cssclass": "cssclasses"}
# How a text value of the old single-value form splits into list items.
_SPLIT = {"tags": lazy_re(r"[,\s]+"), "aliases": lazy_re(r","),
          "cssclasses": lazy_re(r"[,\s]+")}
_PLAIN = lazy_re(r"^[^\s\-?:,\[\]{}#&*!|>'\"%@`](?:[^:#,\[\]{}\n]*[^\s:#,\[\]{}])?$")
_YAML_WORDS = {"true", "false", "yes", "no", "on", "off", "null", "~", "y", "n"}
_NUMBER = lazy_re(r"^[-+.]?\d[\d_.eE+-]*$")


# -- frontmatter text helpers (shared with property-link-unquoted) --------------


def comment_at(line: str) -> int:
    """Where a YAML line's trailing ``# comment`` starts (with the blanks before it), or
    ``len(line)`` when it has none. A ``#`` inside quotes or inside a word is no comment."""
    quote = None
    i, n = 0, len(line)
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
        elif ch in "\"'" and (i == 0 or line[i - 1] in " \t[{,:-"):
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1] in " \t"):
            return len(line[:i].rstrip())
        i += 1
    return n


def render_item(value) -> str:
    """A YAML flow-sequence item for ``value``, quoted only when it must be."""
    text = str(value)
    if (_PLAIN.match(text) and text.lower() not in _YAML_WORDS and not _NUMBER.match(text)
            and ": " not in text and " #" not in text):
        return text
    import json  # (only to quote a value for a fix: a hook's check imports no JSON)

    return json.dumps(text, ensure_ascii=False)


def _items(value, new_key: str) -> list:
    if value is None:
        return []
    if isinstance(value, list):
        return [v for v in value if v is not None and v != ""]
    if isinstance(value, str):
        return [p for p in (s.strip() for s in _SPLIT[new_key].split(value)) if p]
    return [value]


class DeprecatedProperty(Rule):
    """
    ## What it does
    Reports the properties `tag`, `alias` and `cssclass`, which Obsidian 1.9 dropped in
    favour of `tags`, `aliases` and `cssclasses`. Points at the property's line.

    The fix renames the property. A single text value becomes a list (`tag: a, b` →
    `tags: [a, b]`). When the note also has the new property, the old one's values are
    merged into it (duplicates skipped; a block list gets new `- item` lines, a flow
    list new items before its `]`) and the old property's lines are removed. Nothing
    outside those properties' lines changes.

    ## Why is this bad?
    Obsidian no longer reads the old names: the note's tags vanish from the tag pane and
    tag search, its aliases stop resolving in link suggestions, and its CSS classes stop
    applying, without any warning in the app.

    ## Example
    ```markdown
    ---
    type: person
    tag: [team]
    ---
    ```

    ```
    memory/people/alice.md:3:1: VK205 deprecated-property warning: 'tag' was dropped by Obsidian 1.9; use 'tags'
    ```

    After `vaultkit check --fix`: `tags: [team]`.
    """

    name = "deprecated-property"
    code = "VK205"
    severity = "warning"
    fixable = True

    def check(self, note, ctx):
        fm = note.frontmatter
        if not fm:
            return
        starts = None
        for old, new in RENAMES.items():
            if old not in fm or old not in note.fm_keys:
                continue
            if starts is None:
                starts = line_starts(note.text)
            fix = self._fix(note, starts, old, new)
            both = " (merging its values into the existing one)" if new in fm else ""
            yield self.diag(note.path, note.fm_keys[old], 1,
                            f"'{old}' was dropped by Obsidian 1.9; use '{new}'{both}", fix)

    def _fix(self, note, starts, old, new):
        fm = note.frontmatter
        old_lines = key_lines(note, old)
        if old_lines is None:
            return None
        if new not in fm:
            return self._rename(note, starts, old, new, old_lines)
        return self._merge(note, starts, old, new, old_lines)

    def _rename(self, note, starts, old, new, span):
        first, last = span
        start, end = line_span(note, starts, first)
        line = note.text[start:end]
        m = re.match(r"(\s*)([\"']?)" + re.escape(old) + r"\2(\s*):", line)
        if not m:
            return None
        key_at = start + len(m.group(1)) + len(m.group(2))
        edits = [Edit(key_at, key_at + len(old), new)]
        value = note.frontmatter[old]
        rest = line[m.end():]
        value_text = rest[:comment_at(rest)]  # a trailing comment stays as it is
        if isinstance(value, str) and first == last and value_text.strip():
            items = _items(value, new)
            value_at = start + m.end() + (len(value_text) - len(value_text.lstrip()))
            value_end = start + m.end() + len(value_text.rstrip())
            edits.append(Edit(value_at, value_end,
                              "[" + ", ".join(render_item(i) for i in items) + "]"))
        return Fix(f"rename '{old}' to '{new}'", edits)

    def _merge(self, note, starts, old, new, old_span):
        new_span = key_lines(note, new)
        if new_span is None:
            return None
        current = _items(note.frontmatter[new], new)
        seen = {str(v) for v in current}
        extra = []
        for v in _items(note.frontmatter[old], new):
            if str(v) not in seen:
                seen.add(str(v))
                extra.append(v)
        # remove the old property's lines, line endings included
        o_first, o_last = old_span
        remove_end = starts[o_last] if o_last < len(starts) else len(note.text)
        edits = [Edit(starts[o_first - 1], remove_end, self._comments_of(note, starts, old_span))]
        if extra:
            edit = self._append(note, starts, new, new_span, current, extra)
            if edit is None:
                return None
            edits.append(edit)
        edits.sort(key=lambda e: e.start)
        return Fix(f"merge '{old}' into '{new}'", edits)

    def _comments_of(self, note, starts, span) -> str:
        """The comments on a removed property's lines, kept as comment lines in its place."""
        kept = []
        for line_no in range(span[0], span[1] + 1):
            start, end = line_span(note, starts, line_no)
            line = note.text[start:end]
            cut = comment_at(line)
            if cut < len(line):
                indent = line[:len(line) - len(line.lstrip())]
                kept.append(indent + line[cut:].strip() + self._newline(note, starts, line_no))
        return "".join(kept)

    @staticmethod
    def _newline(note, starts, line_no) -> str:
        _, end = line_span(note, starts, line_no)
        return "\r\n" if note.text.startswith("\r\n", end) else "\n"

    def _append(self, note, starts, key, span, current, extra):
        first, last = span
        lines = note.lines
        start, end = line_span(note, starts, first)
        line = note.text[start:end]
        m = re.match(r"(\s*)([\"']?)" + re.escape(key) + r"\2(\s*):", line)
        if not m:
            return None
        rest = line[m.end():]
        rest = rest[:comment_at(rest)]  # edits stop before a trailing comment: it is kept
        value = note.frontmatter[key]
        _, last_end = line_span(note, starts, last)
        newline = "\r\n" if note.text.startswith("\r\n", last_end) else "\n"
        if isinstance(value, list) and last > first and lines[last - 1].lstrip().startswith("-") \
                and not rest.strip():
            item_line = lines[last - 1]
            indent = item_line[:len(item_line) - len(item_line.lstrip())]
            _, item_end = line_span(note, starts, last)
            text = "".join(f"{newline}{indent}- {render_item(v)}" for v in extra)
            return Edit(item_end, item_end, text)
        stripped = rest.rstrip()
        if isinstance(value, list) and first == last and stripped.endswith("]"):
            close = start + m.end() + len(stripped) - 1
            inner = stripped.strip()[1:-1].strip()
            sep = ", " if inner else ""
            return Edit(close, close, sep + ", ".join(render_item(v) for v in extra))
        # a scalar, an empty value or anything unusual: write the merged list in flow style
        value_at = start + m.end()
        _, span_end = line_span(note, starts, last)
        if first == last:
            span_end = value_at + len(rest.rstrip())
        merged = list(current) + list(extra)
        return Edit(value_at, span_end, " [" + ", ".join(render_item(v) for v in merged) + "]")


RULE = DeprecatedProperty
