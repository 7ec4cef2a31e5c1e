"""conflict-markers: a conflict git left in a note is reported on its opening line; lines
shaped like markers outside such a conflict, and a conflict shown in a code block, are not."""

from __future__ import annotations

from test_rules_support import diagnostics, findings, isolated_openclaw  # noqa: F401

RULE = "conflict-markers"

CONFLICT = ("# 2026-03-15\n\n### 09:00 — Sync\n<<<<<<< HEAD\n- Deploy moved to Friday\n"
            "=======\n- Deploy moved to Thursday\n>>>>>>> laptop\n- Tests green\n")
DIFF3 = ("# Decisions\n\n<<<<<<< ours\n- Postgres\n||||||| base\n- MySQL\n=======\n"
         "- SQLite\n>>>>>>> theirs\n")
NOT_CONFLICTS = {
    # a setext heading's underline, an email quoted seven deep, a lone marker
    "memory/semantic/setext.md": "Decisions\n=======\n\n- one\n",
    "memory/semantic/quoted.md": ">>>>>>> Vendor: the API key rotates on the 1st\n",
    "memory/semantic/lone.md": "- a\n<<<<<<< HEAD\n- b\n",
    # opened and closed but never split: not as git writes a conflict
    "memory/semantic/unsplit.md": "<<<<<<< HEAD\n- a\n>>>>>>> other\n",
    # a conflict shown as an example in a fenced block
    "memory/procedural/git.md": ("# Resolving\n\n```\n<<<<<<< HEAD\nours\n=======\ntheirs\n"
                                 ">>>>>>> branch\n```\n"),
}


def test_a_conflict_left_by_git_is_reported_on_its_opening_line(make_vault):
    root = make_vault({"memory/2026-03-15.md": CONFLICT, "MEMORY.md": DIFF3,
                       "memory/2026-03-16.md": "# 2026-03-16\n\n" + CONFLICT.split("\n\n", 1)[1]
                       + "\n" + CONFLICT.split("\n\n", 1)[1]})
    assert findings(root, RULE) == [(RULE, "MEMORY.md", 3), (RULE, "memory/2026-03-15.md", 4),
                                    (RULE, "memory/2026-03-16.md", 4),
                                    (RULE, "memory/2026-03-16.md", 12)]
    diag = next(d for d in diagnostics(root, RULE) if d.path == "memory/2026-03-15.md")
    assert diag.severity == "error" and diag.code == "VK004"
    assert "an unresolved merge conflict (lines 4-8)" in diag.message


def test_marker_shaped_lines_outside_a_conflict_are_not_reported(make_vault):
    root = make_vault(NOT_CONFLICTS)
    assert findings(root, RULE) == []


def test_crlf_and_bom_are_read_as_the_same_conflict(make_vault, tmp_path):
    root = make_vault({"memory/2026-03-15.md": "x\n"})
    (root / "memory/2026-03-15.md").write_bytes(
        b"\xef\xbb\xbf" + CONFLICT.replace("\n", "\r\n").encode())
    assert findings(root, RULE) == [(RULE, "memory/2026-03-15.md", 4)]
