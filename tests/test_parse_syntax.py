"""The parser's syntax table: every Obsidian link and tag form, and what must not count.

Each case is a Markdown body and the links (kind, target, subpath, alias, embed) and
tags it must yield, nothing more.
"""

import pytest

from vaultkit.vault.parse import parse_note


def links_of(text):
    note = parse_note("n.md", text.encode())
    return [(lk.kind, lk.target, lk.subpath, lk.alias, lk.embed, lk.external) for lk in note.links]


def tags_of(text):
    return [t.name for t in parse_note("n.md", text.encode()).tags]


W, M = "wiki", "md"

LINK_CASES = [
    # wikilinks
    ("[[Note]]", [(W, "Note", "", None, False, False)]),
    ("[[Note.md]]", [(W, "Note.md", "", None, False, False)]),
    ("[[folder/Note]]", [(W, "folder/Note", "", None, False, False)]),
    ("[[Note|alias]]", [(W, "Note", "", "alias", False, False)]),
    ("[[Note#Heading]]", [(W, "Note", "Heading", None, False, False)]),
    ("[[Note#H1#H2]]", [(W, "Note", "H1#H2", None, False, False)]),
    ("[[#Heading]]", [(W, "", "Heading", None, False, False)]),
    ("[[Note#^block-id]]", [(W, "Note", "^block-id", None, False, False)]),
    ("[[#^abc]]", [(W, "", "^abc", None, False, False)]),
    ("[[Note#Heading|shown text]]", [(W, "Note", "Heading", "shown text", False, False)]),
    ("[[ Note ]]", [(W, "Note", "", None, False, False)]),
    ("[[Note name with spaces]]", [(W, "Note name with spaces", "", None, False, False)]),
    ("[[笔记]]", [(W, "笔记", "", None, False, False)]),
    ("[[2026-02-15]]", [(W, "2026-02-15", "", None, False, False)]),
    ("a [[One]] and [[Two]]", [(W, "One", "", None, False, False), (W, "Two", "", None, False, False)]),
    # embeds
    ("![[image.png]]", [(W, "image.png", "", None, True, False)]),
    ("![[a.png|100x145]]", [(W, "a.png", "", "100x145", True, False)]),
    ("![[Note#Section]]", [(W, "Note", "Section", None, True, False)]),
    ("![[doc.pdf#page=3]]", [(W, "doc.pdf", "page=3", None, True, False)]),
    # tables: escaped pipe
    ("| a | [[Note\\|alias]] |", [(W, "Note", "", "alias", False, False)]),
    ("| [[Note#H\\|x]] | b |", [(W, "Note", "H", "x", False, False)]),
    # markdown links
    ("[text](Note.md)", [(M, "Note.md", "", "text", False, False)]),
    ("[text](My%20Note.md)", [(M, "My Note.md", "", "text", False, False)]),
    ("[text](<My Note.md>)", [(M, "My Note.md", "", "text", False, False)]),
    ("[t](folder/Note.md#Some%20Heading)", [(M, "folder/Note.md", "Some Heading", "t", False, False)]),
    ("[t](#Heading)", [(M, "", "Heading", "t", False, False)]),
    ("[t](../other/Note.md)", [(M, "../other/Note.md", "", "t", False, False)]),
    ('[t](Note.md "title")', [(M, "Note.md", "", "t", False, False)]),
    ("![alt](img/pic.png)", [(M, "img/pic.png", "", "alt", True, False)]),
    ("[a [nested] text](Note.md)", [(M, "Note.md", "", "a [nested] text", False, False)]),
    ("[paren](Note_(1).md)", [(M, "Note_(1).md", "", "paren", False, False)]),
    # external URLs are told apart
    ("[site](https://example.com/a#b)", [(M, "https://example.com/a#b", "", "site", False, True)]),
    ("[mail](mailto:a@b.c)", [(M, "mailto:a@b.c", "", "mail", False, True)]),
    ("[open](obsidian://open?vault=x)", [(M, "obsidian://open?vault=x", "", "open", False, True)]),
    ("<https://example.com/[[x]]>", []),
    # reference definitions
    ("[ref]: Note.md", [(M, "Note.md", "", None, False, False)]),
    # nothing in code, comments or math
    ("`[[Note]]`", []),
    ("``code with ` and [[Note]]``", []),
    ("```\n[[Note]]\n```", []),
    ("~~~md\n[[Note]]\n~~~", []),
    ("````\n```\n[[Note]]\n```\n````", []),
    ("    [[indented code]]", []),
    ("<!-- [[Note]] -->", []),
    ("text <!-- [[Hidden]] --> [[Shown]]", [(W, "Shown", "", None, False, False)]),
    ("<!--\n[[Note]]\n-->\n[[After]]", [(W, "After", "", None, False, False)]),
    ("%%[[Note]]%%", []),
    ("a %% hidden [[X]] %% b [[Y]]", [(W, "Y", "", None, False, False)]),
    ("%%\n[[X]]\n\n[[Z]]\n%%\n[[Y]]", [(W, "Y", "", None, False, False)]),
    ("$$\n[[X]]\n$$", []),
    ("- item\n\n  ```\n  [[X]]\n  ```\n- [[Y]]", [(W, "Y", "", None, False, False)]),
    ("> quoted [[Q]]\n> ```\n> [[NotQ]]\n> ```", [(W, "Q", "", None, False, False)]),
    # unclosed code fence runs to the end
    ("```\n[[X]]\nno close", []),
    # unmatched backtick is literal
    ("a ` b [[X]]", [(W, "X", "", None, False, False)]),
    # links in headings, lists, quotes
    ("## Heading with [[Link]]", [(W, "Link", "", None, False, False)]),
    ("- [ ] task [[T]]", [(W, "T", "", None, False, False)]),
    ("1. first [[F]]", [(W, "F", "", None, False, False)]),
    ("> [!note] callout [[C]]", [(W, "C", "", None, False, False)]),
    # not a link
    ("[[]]", []),
    ("[not a link] (x.md)", []),
    ("[[unclosed", []),
]


@pytest.mark.parametrize("text,expected", LINK_CASES, ids=[c[0][:40] for c in LINK_CASES])
def test_links(text, expected):
    assert links_of(text) == expected


TAG_CASES = [
    ("#tag", ["tag"]),
    ("text #tag more", ["tag"]),
    ("#nested/tag", ["nested/tag"]),
    ("#with-dash_and_underscore", ["with-dash_and_underscore"]),
    ("#标签", ["标签"]),
    ("#y2026", ["y2026"]),
    ("#2026", []),  # needs a non-digit
    ("# Heading", []),
    ("## Heading #inheading", ["inheading"]),
    ("word#notatag", []),
    ("https://x.com/#anchor", []),
    ("`#code`", []),
    ("```\n#fenced\n```", []),
    ("<!-- #hidden -->", []),
    ("%% #hidden %%", []),
    ("[[Note#Heading]]", []),
    ("[a](#heading)", []),
    ("(#inparen)", ["inparen"]),
    ("#a #b", ["a", "b"]),
    ("#tag.", ["tag"]),
]


@pytest.mark.parametrize("text,expected", TAG_CASES, ids=[c[0][:30] for c in TAG_CASES])
def test_tags(text, expected):
    assert tags_of(text) == expected


def test_frontmatter_tags_and_property_links():
    text = "---\ntags: [alpha, '#beta']\nrelated: \"[[Other Note]]\"\nalias: x\n---\nbody #gamma\n"
    note = parse_note("n.md", text.encode())
    assert [(t.name, t.line) for t in note.tags] == [("alpha", 2), ("beta", 2), ("gamma", 6)]
    assert [(lk.kind, lk.target, lk.line) for lk in note.links] == [("property", "Other Note", 3)]


def test_frontmatter_tags_as_string():
    note = parse_note("n.md", b"---\ntags: one, two three\n---\n")
    assert [t.name for t in note.tags] == ["one", "two", "three"]


def test_unquoted_property_link_is_not_a_link():
    note = parse_note("n.md", b"---\nrelated: [[X]]\n---\n")
    assert note.links == []
    assert note.frontmatter == {"related": [["X"]]}


BLOCK_ID_CASES = [
    ("A paragraph. ^abc-1", {"abc-1": 1}),
    ("- item\n- other ^item2", {"item2": 2}),
    ("| a |\n|---|\n\n^table-id", {"table-id": 4}),
    ("`code ^nope`", {}),
    ("no caret here", {}),
    ("a^notblock", {}),
]


@pytest.mark.parametrize("text,expected", BLOCK_ID_CASES)
def test_block_ids(text, expected):
    assert parse_note("n.md", text.encode()).block_ids == expected


HEADING_CASES = [
    ("# One", [(1, "One", 1)]),
    ("###### Six", [(6, "Six", 1)]),
    ("####### Seven", []),
    ("#NoSpace", []),
    ("## Closed ##", [(2, "Closed", 1)]),
    ("Title\n=====", [(1, "Title", 1)]),
    ("Sub\n---", [(2, "Sub", 1)]),
    ("para\n\n---", []),  # thematic break
    ("```\n# not\n```", []),
    ("   # three spaces", [(1, "three spaces", 1)]),
    ("    # four spaces is code", []),
    ("> # quoted", [(1, "quoted", 1)]),
    ("### 14:30 — Entry", [(3, "14:30 — Entry", 1)]),
    # CommonMark §4.3: a setext underline is never a lazy continuation line
    ("- item\n===", []),
    ("> quote\n===", []),
    ("> q\n# H\npara\n---", [(1, "H", 2), (2, "para", 3)]),
]


@pytest.mark.parametrize("text,expected", HEADING_CASES)
def test_headings(text, expected):
    note = parse_note("n.md", text.encode())
    assert [(h.level, h.text, h.line) for h in note.headings] == expected


def test_suppression_comments():
    text = ("<!-- vaultkit-disable-file orphan-note -->\n"
            "<!-- vaultkit-disable-next-line broken-link, VK502 -->\n[[x]]\n"
            "text <!-- vaultkit-disable entry-too-long --> more\n"
            "<!-- vaultkit-enable -->\n"
            "```\n<!-- vaultkit-disable-file -->\n```\n")
    note = parse_note("n.md", text.encode())
    assert [(s.action, s.rules, s.line) for s in note.suppressions] == [
        ("disable-file", ("orphan-note",), 1),
        ("disable-next-line", ("broken-link", "VK502"), 2),
        ("disable", ("entry-too-long",), 4),
        ("enable", (), 5),
    ]
