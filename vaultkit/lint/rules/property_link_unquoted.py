from vaultkit.lint.diagnostics import Edit, Fix
from vaultkit.lint.rule import Rule
from vaultkit.lint.shared import key_lines, line_span, line_starts, unquoted_link, unquoted_links


def _quote(link: str) -> str:
    if '"' not in link and "\\" not in link:
        return f'"{link}"'
    return "'" + link.replace("'", "''") + "'"


class PropertyLinkUnquoted(Rule):
    """
    ## What it does
    Reports a frontmatter `[[link]]` that is not quoted, so YAML reads it as a nested
    list instead of a link: `related: [[Alice]]` is the list `[["Alice"]]`. Points at
    the property's line; works for plain values, block lists and flow lists.

    The fix wraps each unquoted `[[...]]` of that property in double quotes (single
    quotes when the link itself holds a `"`); nothing else on the line changes.

    ## Why is this bad?
    Obsidian only treats a property value as a link when it is a quoted string. Unquoted,
    the link is invisible to the graph, to backlinks and to renames, and the property
    shows as a broken list in the properties view.

    ## Example
    ```markdown
    ---
    type: project
    status: active
    owner: [[Alice]]
    ---
    ```

    ```
    memory/projects/site.md:4:1: VK206 property-link-unquoted error: property 'owner' holds [[Alice]] unquoted; YAML reads it as a nested list, not a link: write "[[Alice]]"
    ```
    """

    name = "property-link-unquoted"
    code = "VK206"
    severity = "error"
    fixable = True

    def check(self, note, ctx):
        fm = note.frontmatter
        if not fm:
            return
        starts = None
        for key, value in fm.items():
            if not unquoted_link(value) or key not in note.fm_keys:
                continue
            span = key_lines(note, key)
            if span is None:
                continue
            if starts is None:
                starts = line_starts(note.text)
            edits = []
            for line_no in range(span[0], span[1] + 1):
                start, end = line_span(note, starts, line_no)
                text = note.text[start:end]
                for a, b in unquoted_links(text):
                    edits.append(Edit(start + a, start + b, _quote(text[a:b])))
            if not edits:
                continue  # a nested list that is no link: not this rule's business
            first = note.text[edits[0].start:edits[0].end]
            more = f" (and {len(edits) - 1} more)" if len(edits) > 1 else ""
            yield self.diag(note.path, note.fm_keys[key], 1,
                            f"property '{key}' holds {first} unquoted{more}; YAML reads it as a "
                            f"nested list, not a link: write {_quote(first)}",
                            Fix(f"quote the links of '{key}'", edits))


RULE = PropertyLinkUnquoted
