"""The three views the scanner is held to, computed by vaultkit and by markdown-it-py.

- headings: ``(level, text, line)``, text with whitespace runs collapsed;
- code lines: the non-blank lines inside fenced or indented code, HTML blocks and math
  blocks (the lines that are not prose);
- destinations: the set of Markdown link and image destinations, URL-decoded (with every
  reference definition's destination, used or not: vaultkit checks them all).

markdown-it-py runs with CommonMark rules plus the plugins that match Obsidian's syntax:
front matter, footnotes, ``$``/``$$`` math, task lists, and GFM tables.
"""

from __future__ import annotations

from urllib.parse import unquote

from markdown_it import MarkdownIt
from mdit_py_plugins.dollarmath import dollarmath_plugin
from mdit_py_plugins.footnote import footnote_plugin
from mdit_py_plugins.front_matter import front_matter_plugin
from mdit_py_plugins.tasklists import tasklists_plugin

from vaultkit.vault.model import MARKDOWN
from vaultkit.vault.parse import parse_note

_md = (MarkdownIt("commonmark").enable("table").use(front_matter_plugin).use(footnote_plugin)
       .use(dollarmath_plugin, allow_space=False, allow_digits=False, double_inline=True)
       .use(tasklists_plugin))

CODE_TOKENS = {"fence", "code_block", "html_block", "math_block", "math_block_label"}


def _norm(text: str) -> str:
    return " ".join(text.split())


def _dest(href: str) -> str:
    return unquote(href).strip()


def reference(text: str) -> tuple[list, set, set]:
    """(headings, code lines, destinations) per markdown-it-py."""
    env: dict = {}
    tokens = _md.parse(text, env)
    lines = text.split("\n")
    headings, code, dests = [], set(), set()
    for k, tok in enumerate(tokens):
        if tok.type == "heading_open":
            inline = tokens[k + 1]
            headings.append((int(tok.tag[1]), _norm(inline.content), tok.map[0] + 1))
        elif tok.type in CODE_TOKENS and tok.map:
            for ln in range(tok.map[0], tok.map[1]):
                if ln < len(lines) and lines[ln].strip():
                    code.add(ln + 1)
        elif tok.type == "inline":
            stack = list(tok.children or [])
            while stack:
                child = stack.pop()
                if child.type == "link_open" and child.markup not in ("autolink", "linkify"):
                    dests.add(_dest(str(child.attrGet("href") or "")))
                elif child.type == "image":
                    dests.add(_dest(str(child.attrGet("src") or "")))
                    stack.extend(child.children or [])
    for ref in env.get("references", {}).values():
        dests.add(_dest(ref["href"]))
    dests.discard("")
    # (markdown-it moves footnote bodies to the end of its token stream)
    return sorted(headings, key=lambda h: h[2]), code, dests


def vaultkit(text: str) -> tuple[list, set, set]:
    """(headings, code lines, destinations) per vaultkit's scanner."""
    note = parse_note("n.md", text.encode())
    headings = [(h.level, _norm(h.text), h.line) for h in note.headings]
    code = set()
    for start, end in note.code_ranges:
        for ln in range(start, end + 1):
            if ln <= len(note.lines) and note.lines[ln - 1].strip():
                code.add(ln)
    if note.fm_span:  # front matter is not prose either; markdown-it has no code token for it
        code -= set(range(note.fm_span[0], note.fm_span[1] + 1))
    dests = set()
    for link in note.links:
        if link.kind != MARKDOWN:
            continue
        dest = link.target if link.external else (
            link.target + ("#" + link.subpath if link.subpath else ""))
        dests.add(dest.strip())
    dests.discard("")
    return headings, code, dests
