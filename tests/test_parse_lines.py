"""Line and column numbers survive CRLF, a BOM and frontmatter; bad bytes become errors."""

import pytest

from vaultkit.vault.parse import parse_note

BODY = (
    "---\n"            # 1
    "type: decision\n"  # 2
    "status: active\n"  # 3
    "---\n"            # 4
    "# Title\n"        # 5
    "\n"               # 6
    "See [[Alpha]] and #tag ^blk\n"  # 7
    "\n"               # 8
    "```\n"            # 9
    "[[NotALink]]\n"   # 10
    "```\n"            # 11
    "## Section\n"     # 12
    "- item [[Beta#Head]]\n"  # 13
)


def _positions(note):
    return {
        "keys": note.fm_keys,
        "span": note.fm_span,
        "headings": [(h.text, h.line) for h in note.headings],
        "links": [(lk.target, lk.line, lk.column) for lk in note.links],
        "tags": [(t.name, t.line, t.column) for t in note.tags],
        "blocks": note.block_ids,
        "code": note.code_ranges,
    }


EXPECTED = {
    "keys": {"type": 2, "status": 3},
    "span": (1, 4),
    "headings": [("Title", 5), ("Section", 12)],
    "links": [("Alpha", 7, 5), ("Beta", 13, 8)],
    "tags": [("tag", 7, 19)],
    "blocks": {"blk": 7},
    "code": [(9, 11)],
}


@pytest.mark.parametrize("encode", [
    lambda t: t.encode(),
    lambda t: t.replace("\n", "\r\n").encode(),
    lambda t: b"\xef\xbb\xbf" + t.encode(),
    lambda t: b"\xef\xbb\xbf" + t.replace("\n", "\r\n").encode(),
    lambda t: t.rstrip("\n").encode(),  # no final newline
], ids=["lf", "crlf", "bom", "bom+crlf", "no-final-newline"])
def test_positions_are_stable(encode):
    note = parse_note("n.md", encode(BODY))
    assert note.error is None
    assert _positions(note) == EXPECTED
    assert note.frontmatter == {"type": "decision", "status": "active"}
    assert note.line_count == 13


def test_bom_and_crlf_are_recorded():
    note = parse_note("n.md", b"\xef\xbb\xbf# A\r\nb\r\n")
    assert note.bom and note.crlf
    assert note.text == "# A\r\nb\r\n"
    assert note.lines == ["# A", "b"]


@pytest.mark.parametrize("data,needle,line", [
    (b"---\ntitle: [unclosed\n---\n", "not valid YAML", 2),  # where the [ opened
    (b"---\na: 1\n  b: 2\n---\n", "not valid YAML", 3),
    (b"---\n- a\n- b\n---\n", "a list, not a mapping", 2),
    (b"---\njust a string\n---\n", "a string, not a mapping", 2),
    (b"---\ntitle: x\nno close\n", "never closes", 1),
    (b"---\nx: !!python/object/apply:os.system ['echo hi']\n---\n", "not valid YAML", 2),
    (b"---\na: &a [1,1,1,1,1,1,1,1,1]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
     b"d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n---\n", "alias bomb", 2),
    (b"---\r\ntitle: [x\r\n---\r\n", "not valid YAML", 2),
    (b"---\na: 1\nb: \"open\nc: 2\n---\n", "not valid YAML", 3),
])
def test_frontmatter_errors_point_at_a_line(data, needle, line):
    note = parse_note("n.md", data)
    assert note.frontmatter is None
    assert note.fm_error is not None
    message, where = note.fm_error
    assert needle in message
    assert where == line


@pytest.mark.parametrize("data,needle", [
    (b"caf\xe9\n", "not valid UTF-8: byte 0xe9 at offset 3 (line 1)"),
    (b"ok\nline\n\xff\xfe", "line 3"),
    (b"a\x00b", "NUL byte at offset 1"),
])
def test_unreadable_bytes(data, needle):
    note = parse_note("n.md", data)
    assert note.error is not None and needle in note.error
    assert note.links == [] and note.headings == []


def test_empty_file():
    note = parse_note("n.md", b"")
    assert note.error is None and note.line_count == 0 and note.frontmatter is None


def test_deep_nesting_does_not_recurse():
    data = ("> " * 5000 + "deep [[X]]\n").encode() + ("- " * 5000 + "item\n").encode()
    note = parse_note("n.md", data)
    assert [lk.target for lk in note.links] == ["X"]


def test_sections():
    note = parse_note("n.md", b"# T\n## A\na\n### a1\nx\n## B\nb\n")
    assert [(s.heading.text, s.start, s.end) for s in note.sections(2)] == [("A", 2, 5), ("B", 6, 7)]
