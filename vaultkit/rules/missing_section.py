from vaultkit.entries import is_content
from vaultkit.rule import Rule


def _norm(text: str) -> str:
    return " ".join(text.strip().rstrip(":").split()).casefold()


class MissingSection(Rule):
    """
    ## What it does
    Reports a typed note without a section its type requires: by default a decision
    without `## Context` or `## Decision`. Also reports a required section that is
    there but empty (or holds only comments), and one written at the wrong heading level (`### Context`).
    Headings match case-insensitively; a heading inside a fenced code block does not
    count. A missing section is reported on the note's title (its first heading), or
    on the first line after the frontmatter when there is no heading.

    The required sections are the type's `sections` in the profile; set them for any
    type in `vaultkit.toml` (`[types.decision] sections = [...]`).

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
    memory/decisions/community.md:7:1: VK204 missing-section decision has no '## Decision' section
    ```
    """

    name = "missing-section"
    code = "VK204"
    severity = "error"

    def check(self, note, ctx):
        type_name = ctx.vault.type_of(note)
        spec = ctx.profile.types.get(type_name) if type_name else None
        if spec is None or not spec.sections:
            return
        anchor = note.headings[0].line if note.headings else note.body_start
        anchor = min(anchor, max(note.line_count, 1))
        by_text: dict[str, list] = {}
        for section in note.sections():
            by_text.setdefault(_norm(section.heading.text), []).append(section)
        lines = note.lines
        for name in spec.sections:
            found = by_text.get(_norm(name), [])
            at_two = [s for s in found if s.heading.level == 2]
            if not at_two:
                if found:
                    h = found[0].heading
                    yield self.diag(note.path, h.line, 1,
                                    f"{type_name} section '{name}' is a level-{h.level} heading; "
                                    f"write it as '## {name}'")
                else:
                    yield self.diag(note.path, anchor, 1,
                                    f"{type_name} has no '## {name}' section")
                continue
            section = at_two[0]
            body = lines[section.start:section.end]
            if not any(is_content(s) for s in body):
                yield self.diag(note.path, section.start, 1,
                                f"{type_name} section '## {name}' is empty")


RULE = MissingSection
