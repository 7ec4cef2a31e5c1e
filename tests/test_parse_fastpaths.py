"""The parser's short paths read exactly what its general paths read.

The common line shapes (plain text, ``- text`` items, headings, blank lines in a list),
paragraphs without any inline construct, wikilinks and tags found by jumping to ``[[`` and
``#``, and simple ``key: value`` frontmatter read without the YAML loader all take short
paths (docs/performance.md). ``fixtures/parse/golden.json`` holds tricky bodies with the
notes the parser made of them before those paths existed (``Note.to_plain``, without the
text): every one must parse the same today. The helpers are also checked against the
general form they stand in for, on generated input.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vaultkit.vault import parse as P
from vaultkit.vault.parse import load_yaml_mapping, parse_note

GOLDEN = json.loads((Path(__file__).parent / "fixtures" / "parse" / "golden.json").read_text())


@pytest.mark.parametrize("case", GOLDEN, ids=[f"body{k}" for k in range(len(GOLDEN))])
def test_body_parses_as_before_the_short_paths(case):
    data = case["body"].encode("utf-8")
    note = parse_note("n.md", data, size=len(data))
    assert repr(note.to_plain(with_text=False)) == case["plain"]


def test_golden_corpus_covers_the_short_paths():
    bodies = "".join(case["body"] for case in GOLDEN)
    for shape in ("\n- ", "\n# ", "\n\n", "[[", "#", "---\ntype: lesson\n", "](", "`", "%%",
                  "\r\n", "\ufeff", "\x00", "\u3000"):
        assert shape in bodies, shape


# -- frontmatter: the short path against the YAML loader ------------------------------

_KEYS = ["type", "tags", "a", "_k", "k-1", "on", "yes", "null", "True", "dup", "k" * 1030]
_SCALARS = ["lesson", "a b", "a  b  ", "a - b", "a/b.c", "...", ".", "_x", "2024-01-02",
            "2024-13-40", "2024-01-02 10:00:00", "12", "017", "0b101", "1_000", "1.5", ".5",
            "5.", "1e5", ".inf", "-.inf", "yes", "No", "off", "null", "~", "1:30", "-x",
            "- x", "a: b", "a #c", "'q'", "[[x]]", "", "中文", "x\t", '"[[x]]"', '"a: b # c"',
            "'it''s'", '"x\\"y"', '""', "''", '"\'"', "'\"'", '"x" y', '" s "', '"\\t"', '"a']
_item = st.sampled_from(_SCALARS[:30])
_value = st.one_of(
    st.sampled_from(_SCALARS),
    st.lists(_item, max_size=4).map(lambda xs: "[" + ", ".join(xs) + "]"),
    st.lists(_item, max_size=3).map(lambda xs: "[" + ",".join(xs) + ",]"),
    st.lists(_item, max_size=3).map(lambda xs: "[ " + " ,".join(xs) + " ]  "),
)
_line = st.one_of(
    st.tuples(st.sampled_from(_KEYS), st.sampled_from([": ", ":  ", ":", " : "]), _value).map(
        "".join),
    st.sampled_from(["", "# comment", "  - item", "- x", "---", "k:\n  nested: 1"]),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_line, min_size=1, max_size=5))
def test_simple_frontmatter_reads_as_the_yaml_loader_reads_it(lines):
    source = "\n".join(lines) + "\n"
    fast = load_yaml_mapping(source, first_line=2)
    assert repr(fast) == repr(P._loader_mapping(source, 2))


def test_common_frontmatter_takes_the_short_path():
    source = ("type: lesson\ntags: [dns, project/graph]\ndate: 2024-01-02\nn: 3\n"
              "company: \"[[acme]]\"\nnote: 'a: b # c'\n")
    assert P._simple_mapping(source, 2) is not None
    assert repr(load_yaml_mapping(source, 2)) == repr(P._loader_mapping(source, 2))
    # what the loader must read: a key over 1,024 characters is an error there, a
    # timestamp out of range is another, a quote's escape and a comment are YAML syntax
    for source in ("k" * 1030 + ": v\n", "d: 2024-13-40\n", "k: 'it''s'\n", "k: v #c\n",
                   "on: x\n", "k: v\nk: w\n"):
        assert P._simple_mapping(source, 2) is None, source


# -- the inline helpers against the patterns they stand in for ------------------------

_text = st.lists(st.sampled_from(["[[", "]]", "!", "[", "]", "a", " ", "#", "#x", "\n", "\\",
                                  "(", ",", "中", "1", "/", "`", "<", "%", "$", "^", "-"]),
                 max_size=30).map("".join)


@settings(max_examples=500, deadline=None)
@given(_text)
def test_wikilink_and_tag_scans_find_what_finditer_finds(text):
    def spans(matches):
        return [(m.span(), m.groups()) for m in matches]

    assert spans(P._wiki_matches(text)) == spans(P._WIKI.finditer(text))
    assert spans(P._tag_matches(text)) == spans(P._TAG.finditer(text))
    assert P._inline_start(text) == bool(re.search(r"[`<%$\[#^]", text))
