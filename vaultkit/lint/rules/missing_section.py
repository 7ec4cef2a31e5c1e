import re
from functools import lru_cache

from vaultkit.core.lazyre import lazy_re
from vaultkit.vault.entries import is_content
from vaultkit.lint.rule import Rule
from vaultkit.lint.shared import bold_label

_LEAD = lazy_re(r"^[\W_]*(?:\d{1,3}[.)、]\s*)?[\W_]*", re.UNICODE)


def _norm(text: str) -> str:
    """A section name as compared: no leading emoji, punctuation or numbering, no trailing
    colon, spaces collapsed, case folded."""
    text = _LEAD.sub("", text.strip())
    return " ".join(text.rstrip(" :：").split()).casefold()


_TITLE_LABEL = lazy_re(r"^(?P<label>[^:：]{1,40})[:：]\s*(?P<rest>\S.*)$")


def _titled(title: str, names: tuple[str, ...]) -> bool:
    """True for a title that states the section: ``Decision: Use SQLite``, ``决策：迁移``."""
    m = _TITLE_LABEL.match(title.strip())
    return m is not None and _norm(m.group("label")) in names


@lru_cache(maxsize=256)
def _names(name: str, aliases: tuple[str, ...]) -> tuple[str, ...]:
    """A required section's name and aliases as compared (computed once per run)."""
    return tuple(_norm(n) for n in (name, *aliases))


class MissingSection(Rule):
    """
    ## What it does
    Reports a typed note without a section its type requires: by default a decision
    without its Context or its Decision. A section is a `##` heading or a bold label with
    the colon inside or outside (`**Context:**`, `**Context**:`, `- **Решение:** …`,
    `**背景**：…`), under the section's name or one of its aliases in the profile
    (English, Chinese and Russian by default: `## 背景`, `**决策内容：**`, `**Контекст:**`).
    Also reports a required section that is there but empty (or holds only comments),
    and a heading at the wrong level (`### Context` with no `## Context`). Names match
    case-insensitively, with leading emoji or numbering and a trailing colon ignored;
    anything inside a fenced code block does not count. A missing section is reported on
    the note's title (its first heading), or on the first line after the frontmatter
    when there is no heading. A title that states the section holds it: `# Decision:
    Use SQLite for search` (or `# 决策：…`, `# Решение: …`) is the decision.

    The required sections are the type's `sections` in the profile, their other names
    `section_aliases`; set them for any type in `vaultkit.toml`
    (`[types.decision] sections = [...]`, `section-aliases = {Context = ["Why"]}`).

    ## Why is this bad?
    A decision record is only useful later if it says why (Context) and what (Decision).
    The seeds' template has both; an agent that skips them leaves a title and a status,
    which is exactly what cannot be reconstructed months later.

    ## Example
    ```markdown
    ---
    date: 2026-02-08
    type: decision
    status: active
    tags: [community]
    ---
    # Build community before monetizing

    ## Context
    Trust was not established yet.
    ```

    ```
    memory/decisions/community.md:7:1: VK204 missing-section warning: decision has no 'Decision' section (a '## Decision' heading or a '**Decision:**' label)
    ```
    """

    name = "missing-section"
    code = "VK204"
    severity = "warning"

    def check(self, note, ctx):
        type_name = ctx.type_of(note)
        spec = ctx.profile.types.get(type_name) if type_name else None
        if spec is None or not spec.sections:
            return
        anchor = note.headings[0].line if note.headings else note.body_start
        anchor = min(anchor, max(note.line_count, 1))
        by_text: dict[str, list] = {}
        for section in note.sections():
            by_text.setdefault(_norm(section.heading.text), []).append(section)
        labels = None  # read only when a section is not a level-2 heading
        lines = note.lines
        title = next((h.text for h in note.headings if h.level == 1), None)
        for name in spec.sections:
            names = _names(name, tuple(spec.section_aliases.get(name, ())))
            if title is not None and _titled(title, names):
                continue  # `# Decision: Use SQLite`: the title holds the section
            found = [s for n in names for s in by_text.get(n, [])]
            found.sort(key=lambda s: s.start)
            at_two = [s for s in found if s.heading.level == 2]
            if at_two:
                section = at_two[0]
                body = lines[section.start:section.end]
                if not any(is_content(s) for s in body):
                    yield self.diag(note.path, section.start, 1,
                                    f"{type_name} section '## {section.heading.text}' is empty")
                continue
            if labels is None:
                labels = self._labels(note)
            label = next((lb for lb in labels if lb[1] in names), None)
            if label is not None:
                if not label[2]:
                    yield self.diag(note.path, label[0], 1,
                                    f"{type_name} section '**{label[3]}**' is empty")
                continue
            if found:
                h = found[0].heading
                yield self.diag(note.path, h.line, 1,
                                f"{type_name} section '{name}' is a level-{h.level} heading; "
                                f"write it as '## {h.text}'")
                continue
            yield self.diag(note.path, anchor, 1,
                            f"{type_name} has no '{name}' section (a '## {name}' heading or a "
                            f"'**{name}:**' label)")

    @staticmethod
    def _labels(note) -> list[tuple[int, str, bool, str]]:
        """``(line, normalised label, has content, label)`` for every bold label line; its
        content is the rest of its line or the lines under it up to the next label or
        heading."""
        lines = note.lines
        heading_lines = {h.line for h in note.headings}
        found = []
        for number in range(note.body_start, note.line_count + 1):
            if number in heading_lines or note.in_code(number):
                continue
            line = lines[number - 1]
            if "**" not in line and "__" not in line:
                continue
            hit = bold_label(line)
            if hit:
                found.append([number, _norm(hit[0]), bool(hit[1].strip()), hit[0]])
        for i, item in enumerate(found):
            if item[2]:
                continue
            stop = found[i + 1][0] if i + 1 < len(found) else note.line_count + 1
            for number in range(item[0] + 1, stop):
                if number in heading_lines:
                    break
                if is_content(lines[number - 1]):
                    item[2] = True
                    break
        return [tuple(x) for x in found]


RULE = MissingSection
