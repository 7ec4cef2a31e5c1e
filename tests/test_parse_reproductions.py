"""A vault of the scanner's past misreadings (issue 13): ``check --select broken-link``
reports exactly the links that are really broken, and nothing else.

Every link named ``Missing...`` (or pointing at a missing heading or block) is broken and
must be reported; every other link resolves or is not a link at all.
"""

from __future__ import annotations

import json

import pytest

FILES = {
    "Exists.md": "# Exists\n\nA paragraph. ^para-id\n",
    "Functions.md": "# Functions\n\n### `hasTag()`\n\ntext\n\n## Real heading\n",
    "image.png": b"\x89PNG\r\n\x1a\n",
    "b.svg": "<svg/>",
    # footnotes: the definition's text is prose, inline footnotes too
    "footnotes.md": ("Claim[^1] and ^[inline [[Exists]] and [[Missing inline footnote]]].\n\n"
                     "[^1]: There is also [[Exists]] and [[Missing in footnote]].\n"
                     "x ^[a](b)\n"),
    # reference definitions: trailing text makes plain text; multi-line definitions count
    "refdefs.md": ("- [Screen/Component]: [What's wrong] → what to do\n\n"
                   "[foo]:\nExists.md\n\n[bar]: Missing%20ref.md\n"),
    # block ids on their own line after a paragraph, quote, callout, embed, list, table
    "blocks.md": ("> a quote\n^quote-id\n\n> [!note] callout\n> body\n\n^callout-id\n\n"
                  "![[image.png]]\n^embed-id\n\n- a\n- b\n^list-id\n\n"
                  "| a | b |\n|---|---|\n| 1 | 2 |\n\n^table-id\n\n"
                  "first line ^mid-id\nsecond line\n"),
    "to-blocks.md": ("[[blocks#^quote-id]] [[blocks#^callout-id]] [[blocks#^embed-id]] "
                     "[[blocks#^list-id]] [[blocks#^table-id]] [[Exists#^para-id]]\n\n"
                     "[[blocks#^mid-id]]\n"),
    # math: nothing inside is a link; a mid-line or one-line $$ never swallows the rest
    "math.md": ("Inline $[(TS)R](u)$ and $[[Not a link]]$ and $$[x](y)$$.\n\n"
                "Opened mid-line $$ x\n\n$$a$$ then text [[Missing after math]]\n\n"
                "# Heading after math\n\n[[Exists]]\n"),
    # fences end with their container
    "fences.md": ("> [!note]\n> ```\n> [[In fence]]\n\n[[Missing after callout fence]]\n\n"
                  "- item\n  ```\n  [[In list fence]]\n- [[Missing after list fence]]\n\n"
                  "para\n    ```\n[[Missing after indented fence line]]\n\n"
                  "1.     [[In indented code]]\n"),
    # HTML blocks are not Markdown
    "html.md": "<div>\n[[In html block]]\n</div>\n\n[[Missing after html]]\n",
    # link forms
    "links.md": ("[![badge](b.svg)](Exists.md) [t](<Exists.md>) [a](Missing(and(bar)).md) "
                 "[link [foo [bar]]](Exists.md) \\[not a link](Nowhere.md)\n\n#🚀launch\n"),
    # heading subpaths match as Obsidian matches them (punctuation ignored)
    "subpaths.md": ("[[Functions#hasTag]] [[Functions#Real heading]] "
                    "[[Functions#Missing heading]]\n"),
    # a thematic break at the top is not frontmatter
    "thematic.md": "---\n# Title\n\n[[Missing after rule]]\n",
    # templates are not notes
    "Templates/Daily.md": "---\ncreated: {{date}}\n---\n[[{{title}}]] [[Missing in template]]\n",
    "Templater/Meeting.md": "<% tp.file.title %> [[Missing in templater template]]\n",
    ".obsidian/templates.json": '{"folder": "Templates"}',
    ".obsidian/plugins/templater-obsidian/data.json": '{"templates_folder": "Templater/"}',
}

BROKEN = {
    ("footnotes.md", 1, "Missing inline footnote"),
    ("footnotes.md", 3, "Missing in footnote"),
    ("refdefs.md", 6, "Missing ref.md"),
    ("to-blocks.md", 3, "blocks#^mid-id"),
    ("math.md", 5, "Missing after math"),
    ("fences.md", 5, "Missing after callout fence"),
    ("fences.md", 10, "Missing after list fence"),
    ("fences.md", 14, "Missing after indented fence line"),
    ("html.md", 5, "Missing after html"),
    ("links.md", 1, "Missing(and(bar)).md"),
    ("subpaths.md", 1, "Functions#Missing heading"),
    ("thematic.md", 4, "Missing after rule"),
}


def test_exactly_the_broken_links_are_reported(make_vault):
    import subprocess
    import sys

    root = make_vault(FILES)
    # (a folder with no agent file gets the obsidian profile, which allows forward links)
    proc = subprocess.run([sys.executable, "-m", "vaultkit", "check", "--select", "broken-link",
                           "--profile", "openclaw",
                           "--no-cache", "--format", "json", "."], cwd=root, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode in (0, 1), proc.stderr
    found = json.loads(proc.stdout)
    got = set()
    for d in found:
        assert d["rule"] == "broken-link"
        target = next((t for p, ln, t in BROKEN if p == d["path"] and ln == d["line"]
                       and t.split("#")[-1].lstrip("^") in d["message"]), None)
        got.add((d["path"], d["line"], target or d["message"]))
    assert got == BROKEN


def test_template_folders_come_from_obsidian_settings(tmp_path):
    from vaultkit.links.obsidian import in_folders, template_folders

    (tmp_path / ".obsidian" / "plugins" / "templater-obsidian").mkdir(parents=True)
    assert template_folders(tmp_path) == ()
    (tmp_path / ".obsidian" / "templates.json").write_text('{"folder": "/Meta/Templates/"}')
    (tmp_path / ".obsidian" / "plugins" / "templater-obsidian" / "data.json").write_text(
        '{"templates_folder": "Meta/Templates"}')
    assert template_folders(tmp_path) == ("Meta/Templates",)
    assert in_folders("meta/templates/Daily.md", ("Meta/Templates",))
    assert not in_folders("Meta/Templates.md", ("Meta/Templates",))
    assert not in_folders("Meta/TemplatesOld/x.md", ("Meta/Templates",))


@pytest.mark.parametrize("content", ['{"folder": 3}', "not json", "[1, 2]", '{"folder": ""}',
                                     '{"folder": "../outside"}', '{"folder": "/"}'])
def test_odd_template_settings_name_no_folder(tmp_path, content):
    from vaultkit.links.obsidian import template_folders

    (tmp_path / ".obsidian").mkdir()
    (tmp_path / ".obsidian" / "templates.json").write_text(content)
    assert template_folders(tmp_path) == ()
