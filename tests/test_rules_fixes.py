"""deprecated-property and property-link-unquoted: findings, fixes, --fix and --diff."""

from __future__ import annotations

import json

import pytest
from test_rules_support import diagnostics, findings, isolated_openclaw  # noqa: F401

from vaultkit.cli import main
from vaultkit.lint.engine import apply_fixes
from vaultkit.vault.loader import load_vault

BODY = "# Alice\n\nWorks on [[site]].  \nTrailing spaces and\ttabs stay.\n"


def _fixed(root, path, rule):
    vault = load_vault(root, root=root, use_cache=False)
    note = vault.note(path)
    diags = [d for d in diagnostics(root, rule) if d.path == path]
    text, count = apply_fixes(note, diags)
    return note.text, text, count, diags


# (id, frontmatter lines before, after)
DEPRECATED = [
    ("rename flow list", "type: person\ntag: [team, infra]\n", "type: person\ntags: [team, infra]\n"),
    ("rename block list", "tag:\n  - team\n  - infra\ntype: person\n",
     "tags:\n  - team\n  - infra\ntype: person\n"),
    ("rename text value to a list", "type: person\ntag: team, infra\n",
     "type: person\ntags: [team, infra]\n"),
    ("rename alias keeps commas out", "type: person\nalias: Al\n",
     "type: person\naliases: [Al]\n"),
    ("rename cssclass", "type: person\ncssclass: wide\n", "type: person\ncssclasses: [wide]\n"),
    ("rename empty value", "type: person\ntag:\n", "type: person\ntags:\n"),
    ("merge into a flow list", "type: person\ntags: [team]\ntag: [infra, team]\n",
     "type: person\ntags: [team, infra]\n"),
    ("merge into a block list", "tags:\n  - team\ntype: person\ntag: infra\n",
     "tags:\n  - team\n  - infra\ntype: person\n"),
    ("merge into a text value", "tags: team\ntag: [infra]\ntype: person\n",
     "tags: [team, infra]\ntype: person\n"),
    ("merge adding nothing removes the old one", "tag: team\ntags: [team]\ntype: person\n",
     "tags: [team]\ntype: person\n"),
    ("merge quotes what YAML would misread", "tags: [a]\ntag: ['yes', '1.0']\ntype: person\n",
     'tags: [a, "yes", "1.0"]\ntype: person\n'),
    ("two deprecated properties at once", "type: person\ntag: [a]\nalias: [Al]\n",
     "type: person\ntags: [a]\naliases: [Al]\n"),
]


@pytest.mark.parametrize("before,after", [c[1:] for c in DEPRECATED], ids=[c[0] for c in DEPRECATED])
def test_deprecated_property_fix(make_vault, before, after):
    path = "memory/people/alice.md"
    root = make_vault({path: f"---\n{before}---\n{BODY}"})
    old, new, count, diags = _fixed(root, path, "deprecated-property")
    assert diags and all(d.fixable for d in diags)
    assert new == f"---\n{after}---\n{BODY}"
    # idempotent: the fixed file has nothing left to fix
    (root / path).write_text(new, encoding="utf-8")
    assert findings(root, "deprecated-property") == []
    assert findings(root, "frontmatter-schema") == []


def test_deprecated_property_points_at_its_line(make_vault):
    root = make_vault({"memory/people/alice.md": "---\ntype: person\n\ncssclass: wide\n---\n# A\n"})
    (d,) = diagnostics(root, "deprecated-property")
    assert (d.line, d.severity) == (4, "warning")
    assert "'cssclass' was dropped by Obsidian 1.9; use 'cssclasses'" in d.message


def test_deprecated_property_near_misses(make_vault):
    root = make_vault({
        "memory/people/alice.md": "---\ntype: person\ntags: [a]\naliases: [b]\n---\n"
                                  "tag: in the body is not a property\n",
        "memory/people/bob.md": "---\ntype: person\nextra:\n  tag: nested, not top-level\n---\n",
    })
    assert findings(root, "deprecated-property") == []


UNQUOTED = [
    ("plain value", "owner: [[Alice]]\n", 'owner: "[[Alice]]"\n'),
    ("alias and heading", "owner: [[people/Alice#Role|Al]]\n", 'owner: "[[people/Alice#Role|Al]]"\n'),
    ("block list", "related:\n  - [[A]]\n  - \"[[B]]\"\n  - [[C]]\n",
     'related:\n  - "[[A]]"\n  - "[[B]]"\n  - "[[C]]"\n'),
    ("flow list", "related: [[[A]], [[B]]]\n", 'related: ["[[A]]", "[[B]]"]\n'),
    ("comment kept", "owner: [[Alice]]  # lead\n", 'owner: "[[Alice]]"  # lead\n'),
    ("link with a double quote", 'owner: [[Say "hi"]]\n', "owner: '[[Say \"hi\"]]'\n"),
]


@pytest.mark.parametrize("before,after", [c[1:] for c in UNQUOTED], ids=[c[0] for c in UNQUOTED])
def test_property_link_unquoted_fix(make_vault, before, after):
    path = "memory/projects/site.md"
    root = make_vault({path: f"---\ntype: project\nstatus: active\n{before}---\n{BODY}"})
    old, new, count, diags = _fixed(root, path, "property-link-unquoted")
    assert len(diags) == 1 and diags[0].line == 4 and diags[0].severity == "error"
    assert new == f"---\ntype: project\nstatus: active\n{after}---\n{BODY}"
    (root / path).write_text(new, encoding="utf-8")
    assert findings(root, "property-link-unquoted") == []


def test_property_link_unquoted_near_misses(make_vault):
    root = make_vault({
        "memory/projects/a.md": '---\ntype: project\nstatus: active\nowner: "[[Alice]]"\n'
                                "related: ['[[B]]']\n---\n# A\n",
        "memory/projects/b.md": "---\ntype: project\nstatus: active\nmatrix: [[1, 2], [3, 4]]\n"
                                "---\nbody [[link]] is fine\n",
    })
    assert findings(root, "property-link-unquoted") == []


# -- the command line -----------------------------------------------------------------

CRLF_NOTE = ("\ufeff---\r\ntype: project\r\nstatus: active\r\ntag: [web]\r\nowner: [[Alice]]\r\n"
             "---\r\n# Site\r\n\r\nBody with [[Alice]] and trailing space \r\n")


def _bytes_outside(old: bytes, new: bytes) -> tuple[bytes, bytes]:
    """The common prefix and suffix around the changed span."""
    i = 0
    while i < min(len(old), len(new)) and old[i] == new[i]:
        i += 1
    j = 0
    while j < min(len(old), len(new)) - i and old[-1 - j] == new[-1 - j]:
        j += 1
    return old[:i], old[len(old) - j:]


def test_check_fix_changes_only_the_fixed_spans(make_vault, capsys):
    path = "memory/projects/site.md"
    root = make_vault({path: CRLF_NOTE.encode("utf-8")})
    before = (root / path).read_bytes()
    rc = main(["check", str(root), "--select", "deprecated-property,property-link-unquoted",
               "--fix", "--no-cache"])
    after = (root / path).read_bytes()
    assert rc == 0  # nothing left at error severity
    expected = before.replace(b"tag: [web]", b"tags: [web]").replace(
        b"owner: [[Alice]]", b'owner: "[[Alice]]"')
    assert after == expected
    # everything outside the frontmatter lines is byte for byte what it was: BOM, CRLF, body
    head, tail = _bytes_outside(before, after)
    assert head.startswith(b"\xef\xbb\xbf---\r\ntype: project\r\nstatus: active\r\n")
    assert tail.endswith(b"\r\n---\r\n# Site\r\n\r\nBody with [[Alice]] and trailing space \r\n")
    assert "Fixed 2 findings" in capsys.readouterr().err
    assert findings(root, "deprecated-property", "property-link-unquoted") == []


def test_check_diff_writes_nothing(make_vault, capsys):
    path = "memory/projects/site.md"
    root = make_vault({path: CRLF_NOTE.encode("utf-8")})
    before = (root / path).read_bytes()
    mtime = (root / path).stat().st_mtime_ns
    rc = main(["check", str(root), "--select", "VK205,VK206", "--diff", "--no-cache"])
    out = capsys.readouterr().out
    assert rc == 1
    assert (root / path).read_bytes() == before
    assert (root / path).stat().st_mtime_ns == mtime
    assert "-tag: [web]" in out and "+tags: [web]" in out
    assert '+owner: "[[Alice]]"' in out


def test_check_diff_checks_its_passes_on_the_workspace_overlay(make_vault, capsys,
                                                              monkeypatch):
    """--diff (and --fix) check each pass's fixed texts as the workspace checks an editor's
    unsaved buffers (``Workspace.overlaid`` on the vault the command opened): one
    implementation of a vault with texts not on disk, ending in the text an editor's
    fix-all (``Workspace.fixed_text``) gives."""
    from vaultkit.lint.engine import Selection
    from vaultkit.session.workspace import Workspace

    path = "memory/projects/site.md"
    root = make_vault({path: CRLF_NOTE.encode("utf-8")})
    seen = []
    real = Workspace.overlaid

    def overlaid(self, overlay, base=None):
        seen.append((dict(overlay or {}), base))
        return real(self, overlay, base)

    monkeypatch.setattr(Workspace, "overlaid", overlaid)
    rc = main(["check", str(root), "--select", "VK205,VK206", "--diff", "--no-cache"])
    assert rc == 1 and "+tags: [web]" in capsys.readouterr().out
    assert seen and all(base is not None for _, base in seen)
    planned = seen[-1][0][path]
    seen.clear()
    editor = Workspace(root, use_cache=False)
    assert editor.fixed_text(path, selection=Selection(["VK205", "VK206"], [], [])) == planned
    editor.close()


def test_json_report_marks_findings_fixable(make_vault, capsys):
    root = make_vault({"memory/people/a.md": "---\ntype: person\nalias: [A]\n---\n# A\n"})
    main(["check", str(root), "--select", "deprecated-property", "--format", "json", "--no-cache"])
    (item,) = json.loads(capsys.readouterr().out)
    assert item["rule"] == "deprecated-property" and item["code"] == "VK205"
    assert item["fixable"] is True and item["line"] == 3


def test_merge_into_block_list_keeps_crlf(make_vault):
    path = "memory/people/alice.md"
    text = "---\r\ntags:\r\n  - team\r\ntype: person\r\ntag: [infra]\r\n---\r\n# Alice\r\n"
    root = make_vault({path: text.encode()})
    _, new, count, _ = _fixed(root, path, "deprecated-property")
    assert count == 1
    assert new == "---\r\ntags:\r\n  - team\r\n  - infra\r\ntype: person\r\n---\r\n# Alice\r\n"


def test_fixes_leave_unparseable_frontmatter_alone(make_vault):
    root = make_vault({"memory/people/a.md": "---\ntag: [a\n---\n# A\n"})
    assert findings(root, "deprecated-property", "property-link-unquoted") == []
