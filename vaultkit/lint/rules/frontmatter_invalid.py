from vaultkit.lint.rule import Rule


class FrontmatterInvalid(Rule):
    """
    ## What it does
    Reports a frontmatter block that Obsidian and the agent cannot read as properties:
    YAML that does not parse, a block that is a list or a string instead of a mapping,
    a block opened with `---` on line 1 that never closes, tags that would construct
    objects (`!!python/object`), or an alias bomb that expands past 20,000 nodes. Points
    at the line where the YAML parser stopped.

    ## Why is this bad?
    Obsidian shows a broken block as plain text and drops every property in it, so
    the note loses its type, status, date and tags: it disappears from Dataview queries,
    from INDEX.md sections and from type-based checks, silently.

    ## Example
    ```markdown
    ---
    date: 2026-02-08
    tags: [community, monetization
    ---
    ```

    ```
    memory/decisions/community.md:4:1: VK002 frontmatter-invalid error: frontmatter is not valid YAML: expected ',' or ']', but got '<stream end>'
    ```
    """

    name = "frontmatter-invalid"
    code = "VK002"
    severity = "error"

    def check(self, note, ctx):
        if note.fm_error:
            message, line = note.fm_error
            yield self.diag(note.path, line, 1, message + _link_hint(note, line))


def _link_hint(note, line: int) -> str:
    """For ``related: [[Ada]], [[Carol]]`` (YAML reads ``[[`` as nested lists): the line
    with its links quoted, which is what Obsidian needs anyway."""
    from vaultkit.lint.shared import unquoted_links

    lines = note.lines
    if not 0 < line <= len(lines):
        return ""
    text = lines[line - 1].rstrip("\r")
    found = unquoted_links(text)
    if not found or ":" not in text[:found[0][0]]:
        return ""
    key = text[:text.index(":")].strip()
    quoted = ", ".join(f'"{text[a:b]}"' for a, b in found)
    value = quoted if len(found) == 1 else f"[{quoted}]"
    return f"; links in properties must be quoted: {key}: {value}"


RULE = FrontmatterInvalid
