"""Obsidian's syntax, case by case: what the scanner must find in each snippet.

Written from Obsidian's documented behaviour (obsidianmd/obsidian-help: Internal links,
Embed files, Tags, Properties, Basic and Advanced formatting syntax, Callouts, Footnotes,
Comments, Math, HTML content) and the CommonMark rules it builds on. Each case lists every
link (``w:`` wikilink or ``m:`` Markdown link, then target and ``#subpath``, ``!`` first for
an embed), tag, heading (level and text), block id and code line; anything not listed must
not be found.
"""

from __future__ import annotations

import pytest

from vaultkit.vault.model import MARKDOWN, WIKI
from vaultkit.vault.parse import parse_note


def case(md, links=(), tags=(), headings=(), ids=(), code=()):
    return (md, list(links), list(tags), list(headings), list(ids), list(code))


CASES = [
    # -- Internal links (Linking notes and files/Internal links.md) --------------------
    case("[[Three laws of motion]]", ["w:Three laws of motion"]),
    case("[[Three laws of motion.md]]", ["w:Three laws of motion.md"]),
    case("[[folder/Note]]", ["w:folder/Note"]),
    case("[[/root/Note]]", ["w:/root/Note"]),
    case("[[./sibling]] [[../up]]", ["w:./sibling", "w:../up"]),
    case("[[Note|Custom display text]]", ["w:Note"]),
    case("[[Note#Heading]]", ["w:Note#Heading"]),
    case("[[Note#Heading#Subheading]]", ["w:Note#Heading#Subheading"]),
    case("[[#Heading in this note]]", ["w:#Heading in this note"]),
    case("[[##Any heading]]", ["w:##Any heading"]),
    case("[[Note#^37066d]]", ["w:Note#^37066d"]),
    case("[[#^quote-of-the-day]]", ["w:#^quote-of-the-day"]),
    case("[[^^block search]]", ["w:^^block search"]),
    case("[[Note#Heading|shown]]", ["w:Note#Heading"]),
    case("[[ spaced ]]", ["w:spaced"]),
    case("[[日本語のノート]]", ["w:日本語のノート"]),
    case("[[2026-01-05]]", ["w:2026-01-05"]),
    case("[[a]] [[b]] [[c]]", ["w:a", "w:b", "w:c"]),
    case("[[unclosed", []),
    case("[[]]", []),
    case("[[a\nb]]", []),
    case("\\[\\[escaped]]", []),
    case("`[[in code]]`", []),
    case("``[[double `tick` code]]``", []),
    case("| [[Note\\|alias]] | x |", ["w:Note"]),
    case("| [[Note#H\\|x]] | y |", ["w:Note#H"]),
    case("[[Note]]s plural", ["w:Note"]),
    case("text[[Glued]]text", ["w:Glued"]),
    # -- Markdown links -------------------------------------------------------------------
    case("[Three laws](Three%20laws%20of%20motion.md)", ["m:Three laws of motion.md"]),
    case("[text](<Note with spaces.md>)", ["m:Note with spaces.md"]),
    case("[text](Note.md#Heading%20two)", ["m:Note.md#Heading two"]),
    case("[text](#Local%20heading)", ["m:#Local heading"]),
    case("[text](Note.md#^block)", ["m:Note.md#^block"]),
    case('[t](Note.md "Title")', ["m:Note.md"]),
    case("[t](Note.md 'Title')", ["m:Note.md"]),
    case("[t](Note.md (Title))", ["m:Note.md"]),
    case("![alt](pics/photo.jpg)", ["!m:pics/photo.jpg"]),
    case("![alt|100](pics/photo.jpg)", ["!m:pics/photo.jpg"]),
    case("[![badge](b.svg)](https://ci.example/x)", ["m:https://ci.example/x", "!m:b.svg"]),
    case("[a](foo(and(bar)).md)", ["m:foo(and(bar)).md"]),
    case("[link [foo [bar]]](Note.md)", ["m:Note.md"]),
    case("[a [b](inner.md) c](outer.md)", ["m:inner.md"]),
    case("\\[not a link](x.md)", []),
    case("[not a link\\](x.md)", []),
    case("[a](b.md\\))", ["m:b.md)"]),
    case("[a]( spaced.md )", ["m:spaced.md"]),
    case("[a](has space.md)", []),
    case("[a](<>)", []),
    case("[a]()", []),
    case("[a] (Note.md)", []),
    case("[a](https://example.com/p?q=1#frag)", ["m:https://example.com/p?q=1#frag"]),
    case("[mail](mailto:me@example.com)", ["m:mailto:me@example.com"]),
    case("[o](obsidian://open?vault=v)", ["m:obsidian://open?vault=v"]),
    case("<https://example.com/auto>", []),
    case("https://example.com/bare", []),
    case("[a](f&ouml;.md)", ["m:fö.md"]),
    case("[ref]: Note.md", ["m:Note.md"]),
    case("[ref]: <Spaced Note.md> 'title'", ["m:Spaced Note.md"]),
    case("[ref]:\nNote.md", ["m:Note.md"]),
    case("[ref]: Note.md trailing words", []),
    case("- [Screen/Component]: [What's wrong] → fix", []),
    case("para\n[ref]: Note.md", []),
    # -- Embeds (Linking notes and files/Embed files.md) ---------------------------------
    case("![[Internal links]]", ["!w:Internal links"]),
    case("![[Note#Heading]]", ["!w:Note#Heading"]),
    case("![[Note#^block]]", ["!w:Note#^block"]),
    case("![[Engelbart.jpg]]", ["!w:Engelbart.jpg"]),
    case("![[Engelbart.jpg|100x145]]", ["!w:Engelbart.jpg"]),
    case("![[Document.pdf#page=3]]", ["!w:Document.pdf#page=3"]),
    case("![[Document.pdf#height=400]]", ["!w:Document.pdf#height=400"]),
    case("![[Excerpt.mp3]]", ["!w:Excerpt.mp3"]),
    case("!![[double]]", ["!w:double"]),
    # -- Tags (Tags.md) --------------------------------------------------------------------
    case("#meeting", tags=["meeting"]),
    case("#inbox/to-read", tags=["inbox/to-read"]),
    case("#camelCase #snake_case #kebab-case", tags=["camelCase", "snake_case", "kebab-case"]),
    case("#y1984", tags=["y1984"]),
    case("#1984", tags=[]),
    case("#2026/01", tags=[]),
    case("#🚀launch", tags=["🚀launch"]),
    case("#タグ", tags=["タグ"]),
    case("#标签，后面", tags=["标签"]),
    case("#tag.", tags=["tag"]),
    case("#tag, #other", tags=["tag", "other"]),
    case("(#paren)", tags=["paren"]),
    case("a#notatag", tags=[]),
    case("# heading not tag", headings=[(1, "heading not tag")]),
    case("#", headings=[(1, "")]),  # an empty heading
    case("`#code`", tags=[]),
    case("[#in-link-text](Note.md)", ["m:Note.md"]),
    case("https://example.com/#fragment", tags=[]),
    case("[[Note#Heading]]", ["w:Note#Heading"], tags=[]),
    case("## Heading #withtag", headings=[(2, "Heading #withtag")], tags=["withtag"]),
    case("---\ntags: [alpha, beta/gamma]\n---\nbody", tags=["alpha", "beta/gamma"]),
    case("---\ntags:\n  - one\n  - '#two'\n---\n", tags=["one", "two"]),
    # -- Properties (Properties.md) ----------------------------------------------------------
    case('---\nrelated: "[[Other]]"\n---\n', ["w:Other"]),
    case('---\nlist:\n  - "[[A]]"\n  - "[[B|b]]"\n---\n', ["w:A", "w:B"]),
    case("---\nurl: https://x.y\n---\n[[Body]]", ["w:Body"]),
    case("\n---\nnot: frontmatter\n---\n", headings=[(2, "not: frontmatter")]),
    case("---\n# Title\n\n[[After rule]]", ["w:After rule"], headings=[(1, "Title")]),
    # -- Headings (Basic formatting syntax.md) -------------------------------------------------
    case("# One\n## Two\n###### Six", headings=[(1, "One"), (2, "Two"), (6, "Six")]),
    case("####### Seven", []),
    case("#NoSpace", tags=["NoSpace"]),
    case("## Closed ##", headings=[(2, "Closed")]),
    case("## Hash#inside", headings=[(2, "Hash#inside")]),
    case("   ### Indented three", headings=[(3, "Indented three")]),
    case("    # Indented four", code=[1]),
    case("Setext one\n===", headings=[(1, "Setext one")]),
    case("Setext two\n---", headings=[(2, "Setext two")]),
    case("- item\n---", []),
    case("## `hasTag()`", headings=[(2, "`hasTag()`")]),
    case("# [[Linked]] heading", ["w:Linked"], headings=[(1, "[[Linked]] heading")]),
    case("> # Quoted heading", headings=[(1, "Quoted heading")]),
    case("- # Listed heading", headings=[(1, "Listed heading")]),
    # -- Block ids (Internal links.md: Link to a block in a note) --------------------------------
    case("A paragraph. ^37066d", ids=["37066d"]),
    case("line one\nline two ^end-id", ids=["end-id"]),
    case("line one ^mid-id\nline two", ids=[]),
    case("> A quote\n\n^quote-of-the-day", ids=["quote-of-the-day"]),
    case("> A quote\n^lazy-quote", ids=["lazy-quote"]),
    case("> [!tip] Callout\n> body\n\n^callout-id", ids=["callout-id"]),
    case("- a\n- b\n\n^list-id", ids=["list-id"]),
    case("- a\n- b\n^lazy-list", ids=["lazy-list"]),
    case("- item one ^item-1\n- item two ^item-2", ids=["item-1", "item-2"]),
    case("| a | b |\n|---|---|\n| 1 | 2 |\n\n^table-id", ids=["table-id"]),
    case("![[image.png]]\n^embed-id", ["!w:image.png"], ids=["embed-id"]),
    case("text ^Mixed-Case-1", ids=["mixed-case-1"]),
    case("text ^under_score", ids=[]),
    case("text^glued", ids=[]),
    case("# Heading ^not-id", headings=[(1, "Heading ^not-id")], ids=[]),
    case("```\ncode ^not-id\n```", code=[1, 2, 3], ids=[]),
    case("x ^[inline footnote]", ids=[]),
    # -- Code (Basic formatting syntax.md: Code blocks) ------------------------------------------
    case("```\n[[In fence]]\n```\n[[After]]", ["w:After"], code=[1, 2, 3]),
    case("~~~python\n#not-tag\n~~~", code=[1, 2, 3]),
    case("````\n```\n[[x]]\n```\n````", code=[1, 2, 3, 4, 5]),
    case("```\nunclosed [[x]]\n\nstill code", code=[1, 2, 4]),
    case("    indented [[code]]\n\npara [[P]]", ["w:P"], code=[1]),
    case("para\n    continuation [[C]]", ["w:C"]),
    case("para\n    ```\n[[After fake fence]]", ["w:After fake fence"]),
    case("- item\n\n      code [[x]]", code=[3]),
    case("1.     code [[x]]", code=[1]),
    case("- item\n  ```\n  [[in]]\n- [[next]]", ["w:next"], code=[2, 3]),
    case("> ```\n> [[in]]\n\n[[out]]", ["w:out"], code=[1, 2]),
    case("> [!note]\n> ```\n> [[in]]\n\n[[after callout]]", ["w:after callout"], code=[2, 3]),
    case("```\n> [[quoted in fence]]\n```", code=[1, 2, 3]),
    case("inline `[[code]]` and [[real]]", ["w:real"]),
    case("`` ` `` [[after]]", ["w:after"]),
    # -- Math (Advanced formatting syntax.md: Math) --------------------------------------------------
    case("$$\n[[not]] #nottag\n$$\n[[after]]", ["w:after"], code=[1, 2, 3]),
    case("$$x = [[y]]$$", code=[1]),
    case("$$a$$ then [[link]]", ["w:link"]),
    case("inline $[(TS)R](u)$ math", []),
    case("inline $[[not]]$ and [[yes]]", ["w:yes"]),
    case("costs $5 and $6 [[Kept]]", ["w:Kept"]),
    case("a $$ opened mid-line\n\n# Heading\n[[Kept]]", ["w:Kept"], headings=[(1, "Heading")]),
    case("\\$[[escaped dollar]]$", ["w:escaped dollar"]),
    # -- Comments (Basic formatting syntax.md: Comments) -------------------------------------------
    case("%%[[hidden]]%% [[shown]]", ["w:shown"]),
    case("%%\n[[hidden]]\n%%\n[[shown]]", ["w:shown"], code=[1, 2, 3]),
    case("<!-- [[hidden]] --> [[html block]]", code=[1]),  # the line is an HTML block
    case("text <!-- [[hidden]] --> [[shown]]", ["w:shown"]),
    case("<!--\n[[hidden]]\n-->\n[[shown]]", ["w:shown"], code=[1, 2, 3]),
    case("x <!-- unclosed [[shown]]", ["w:shown"]),
    # -- HTML (HTML content.md) ------------------------------------------------------------------------
    case("<div>\n[[in html]]\n</div>\n\n[[out]]", ["w:out"], code=[1, 2, 3]),
    case("<details>\n<summary>S</summary>\n\n[[markdown again]]\n\n</details>",
         ["w:markdown again"], code=[1, 2, 6]),
    case("<span>inline</span> [[kept]]", ["w:kept"]),
    case("para\n<span>\n[[kept]]", ["w:kept"]),
    case("<pre>\n[[in pre]]\n\n[[still pre]]\n</pre>", code=[1, 2, 4, 5]),
    # -- Callouts, quotes, lists (Callouts.md) -------------------------------------------------------
    case("> [!info] Title [[In title]]\n> Body [[In body]]", ["w:In title", "w:In body"]),
    case("> [!faq]- Folded\n> #tagged", tags=["tagged"]),
    case("> > nested [[deep]]", ["w:deep"]),
    case("- [ ] task [[T]]\n- [x] done #done", ["w:T"], tags=["done"]),
    case("1. one [[A]]\n2. two [[B]]", ["w:A", "w:B"]),
    case("- > # Heading in a quote in an item", headings=[(1, "Heading in a quote in an item")]),
    case("- > [!note] In a list\n  > [[inside]] #t", ["w:inside"], tags=["t"]),
    case("1. > ```\n   > [[code]]\n   > ```\n2. [[after]]", ["w:after"], code=[1, 2, 3]),
    case("- > quote\n  still lazy ^lazy-in-item", ids=["lazy-in-item"]),
    case("> - item\n>\n>       code [[x]]\n\n[[out]]", ["w:out"], code=[3]),
    # -- Footnotes (Advanced formatting syntax.md: Footnotes) ------------------------------------------
    case("Text[^1]\n\n[^1]: Note [[Exists]] and [[Other]].", ["w:Exists", "w:Other"]),
    case("[^note]: [md](link.md)", ["m:link.md"]),
    case("Inline^[with [[link]] inside]", ["w:link"]),
    case("x ^[a](b.md)", []),
    case("[^1]: first\n    continued [[in footnote]]", ["w:in footnote"]),
    # -- Tables ------------------------------------------------------------------------------------------
    case("| [[A]] | [b](B.md) |\n|---|---|\n| #t | `[[c]]` |", ["w:A", "m:B.md"], tags=["t"]),
]


def _view(text):
    note = parse_note("n.md", text.encode())
    links = []
    for link in note.links:
        kind = "w" if link.kind == WIKI or link.kind == "property" else "m"
        assert link.kind in (WIKI, MARKDOWN, "property")
        dest = link.target + ("#" + link.subpath if link.subpath else "")
        links.append(("!" if link.embed else "") + f"{kind}:{dest}")
    code = [ln for ln in range(1, note.line_count + 1) if note.in_code(ln)
            and note.lines[ln - 1].strip()]
    return (links, [t.name for t in note.tags], [(h.level, h.text) for h in note.headings],
            list(note.block_ids), code)


def test_the_table_has_at_least_120_cases():
    assert len(CASES) >= 120
    assert len({c[0] for c in CASES}) == len(CASES) - 1  # one case is repeated on purpose


@pytest.mark.parametrize("md,links,tags,headings,ids,code", CASES,
                         ids=[f"{i}:{c[0][:40]!r}" for i, c in enumerate(CASES)])
def test_obsidian_syntax(md, links, tags, headings, ids, code):
    got_links, got_tags, got_headings, got_ids, got_code = _view(md)
    assert sorted(got_links) == sorted(links)
    assert got_tags == tags
    assert got_headings == headings
    assert got_ids == ids
    assert got_code == code


@pytest.mark.parametrize("text,frontmatter,headings,links", [
    ("---\n# Title\nSome text [[A]]\n---\nMore [[B]]", None, ["Title", "Some text [[A]]"],
     ["A", "B"]),
    ("---\n\n# Title\n\n---\n[[B]]", None, ["Title"], ["B"]),
    ("---\n# a YAML comment\nk: v\n---\n[[C]]", {"k": "v"}, [], ["C"]),
    ("---\n\nk: v\n---\n", {"k": "v"}, [], []),
    ("---\n---\n# H", {}, ["H"], []),
])
def test_a_thematic_break_at_the_top_is_not_frontmatter(text, frontmatter, headings, links):
    note = parse_note("n.md", text.encode())
    assert note.frontmatter == frontmatter
    assert note.fm_error is None
    assert [h.text for h in note.headings] == headings
    assert [lk.target for lk in note.links] == links
