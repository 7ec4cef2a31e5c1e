"""vaultkit's block scanner against reference parsers.

mistune 3 (a CommonMark parser) decides which lines are code and which are headings;
python-frontmatter decides what the properties are. vaultkit's own parser must agree on
hand-picked documents and on generated ones.
"""

import frontmatter
import mistune
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultkit.vault.parse import parse_note

_md = mistune.create_markdown(renderer=None, plugins=["table"])


def _mistune_view(text):
    """(words inside code/html blocks, heading texts) per mistune."""
    code_words, headings = set(), []

    def walk(tokens):
        for tok in tokens:
            kind = tok["type"]
            if kind in ("block_code", "block_html"):
                code_words.update(w for w in tok.get("raw", "").split() if w.startswith("w"))
            elif kind == "heading":
                headings.append(_plain(tok.get("children", [])))
            if "children" in tok and kind != "heading":
                walk(tok["children"])

    walk(_md(text))
    return code_words, headings


def _plain(children):
    out = []
    for c in children:
        if c["type"] == "softbreak":
            out.append(" ")
        elif "raw" in c:
            out.append(c["raw"])
        elif "children" in c:
            out.append(_plain(c["children"]))
    return "".join(out)


def _vaultkit_view(text):
    note = parse_note("n.md", text.encode())
    code_words = set()
    for i, line in enumerate(note.lines, start=1):
        if note.in_code(i):
            code_words.update(w for w in line.split() if w.startswith("w"))
    return code_words, [h.text for h in note.headings]


DOCS = [
    "w1 para\n\n    w2 code\n    w3 code\n\nw4 para",
    "- w1 item\n\n      w2 code in item\n\n- w3 item",
    "- w1 item\n\n  w2 continuation\n\nw3 para",
    "```\nw1\n```\nw2",
    "~~~~\nw1\n~~~\nw2\n~~~~\nw3",
    "> w1 quote\n>\n>     w2 code\n\nw3",
    "w1 para\n    w2 lazy continuation",
    "# w1 heading\nw2\n\nw3 setext\n===\n",
    "1. w1\n   ```\n   w2\n   ```\n2. w3",
    "<!--\nw1\n\nw2\n-->\nw3",
    "w1\n<!-- w2 -->\n",
    "* w1\n\n    * w2 nested\n\n          w3 code",
    "w1 para\n```\nw2 code interrupts paragraph\n```",
    "  ```\n  w1\n  ```\nw2",
    "```\nw1 unclosed\n\nw2",
    "- w1\n```\nw2\n```",
    "> ```\n> w1\n> ```\nw2",
    "w1\n---\nw2",
    "- w1\n---\nw2",
    "> w1\n===",
    "- w1\n  ---\nw2",
]


@pytest.mark.parametrize("doc", DOCS)
def test_code_and_headings_agree_with_mistune(doc):
    assert _vaultkit_view(doc) == _mistune_view(doc)


_LINE = st.sampled_from([
    "", "para text", "- item", "  - nested item", "1. ordered", "> quote", "    indented",
    "      deeper", "```", "~~~", "# Heading", "## Sub heading", "<!-- c -->",
    "* star item", "> - quoted item", "text after",
])


@settings(max_examples=300, deadline=None)
@given(st.lists(_LINE, min_size=1, max_size=14))
def test_generated_documents_agree_with_mistune(lines):
    # give every line a unique word so code membership can be compared line by line
    # (a leading "---" would open frontmatter, which CommonMark does not know)
    doc = "intro\n\n" + "\n".join(f"{ln} w{i}" if ln.strip() and set(ln.strip()) - set("`~=-") else ln
                    for i, ln in enumerate(lines))
    # (Setext underlines are left out: after a block quote or inside a list, mistune reads
    # "===" and "---" differently from CommonMark §4.3 (markdown-it agrees with vaultkit
    # there); the hand-written cases above pin vaultkit's reading.)
    ours, theirs = _vaultkit_view(doc), _mistune_view(doc)
    assert ours[0] == theirs[0], doc
    # (mistune sometimes emits a container's tokens out of document order)
    assert sorted(ours[1]) == sorted(theirs[1]), doc


FM_DOCS = [
    "---\ntitle: A\ndate: 2026-02-08\ntags: [a, b]\n---\nbody\n",
    "---\nnested:\n  key: [1, 2]\nflag: true\nnum: 3.5\n---\n",
    "---\nempty:\nquoted: \"[[X]]\"\nmulti: |\n  line one\n  line two\n---\ntext",
    "---\n---\nbody",
]


@pytest.mark.parametrize("doc", FM_DOCS)
def test_frontmatter_agrees_with_python_frontmatter(doc):
    note = parse_note("n.md", doc.encode())
    assert (note.frontmatter or {}) == frontmatter.loads(doc).metadata
