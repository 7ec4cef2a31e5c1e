"""Link resolution, pinned case by case (see vaultkit/vault/resolve.py for the rules)."""

from __future__ import annotations

import pytest

from vaultkit.vault.parse import parse_note
from vaultkit.vault.resolve import (EXACT, EXTERNAL, M_ATTACHMENT, M_BLOCK, M_HEADING, M_NOTE,
                              RELATIVE, ROOT, SAME_FOLDER, SELF, SHORTEST, normalize_heading)
from vaultkit.vault.loader import load_vault
from vault_files import write_files

LAUNCH = """---
type: decision
aliases: [Go Live]
---
# Launch

## Context

Why we launch. ^ctx-1

### Risks: and *mitigations*

Text.

## Decision

### Risks

More.
"""

FILES = {
    "Root Note.md": "# Root Note\n",
    "memory/INDEX.md": "# Index\n",
    "memory/2026-01-01.md": "# 2026-01-01\n",
    "memory/decisions/launch.md": LAUNCH,
    "memory/decisions/x.md": "# X\n",
    "memory/projects/launch.md": "# Launch project\n\n## Plan\n",
    "memory/projects/alpha.md": "# Alpha\n\n## Status\n\nOn track. ^status-2026\n",
    "memory/people/Ada Lovelace.md": "# Ada\n",
    "memory/semantic/deep/launch.md": "# Deep launch\n",
    "memory/semantic/topic.md": "# Topic\n\n## Überblick\n\n## Café\n",
    "memory/semantic/sub/topic.md": "# Sub topic\n",
    "memory/semantic/sub/x.md": "# Sub x\n",
    "memory/procedural/how-to.md": "# How to\n\n## Step 1: install\n\n## 步骤：安装\n",
    "memory/a/same.md": "# A\n",
    "memory/semantic/Caf\u00e9 notes.md": "# Cafe\n",  # precomposed é
    "memory/semantic/Re\u0301sume\u0301.md": "# CV\n",  # decomposed, as macOS may store it
    "memory/semantic/drawing.excalidraw.md": "# Drawing\n",
    "memory/b/same.md": "# B\n",
    "attachments/chart.png": b"\x89PNG",
    "memory/img/diagram.svg": b"<svg/>",
    "memory/docs/report v2.pdf": b"%PDF",
}

J = "memory/2026-01-01.md"  # a journal day: no same-folder matches for most names
D = "memory/decisions/x.md"
L = "memory/decisions/launch.md"

# (source note, link as written, expected path, what is missing, why it resolved)
CASES = [
    # names, case, .md, exact paths
    ("bare-shortest", J, "[[launch]]", "memory/projects/launch.md", None, SHORTEST),
    ("bare-same-folder", D, "[[launch]]", "memory/decisions/launch.md", None, SAME_FOLDER),
    ("case-insensitive", D, "[[LAUNCH]]", "memory/decisions/launch.md", None, SAME_FOLDER),
    ("dot-md", D, "[[launch.md]]", "memory/decisions/launch.md", None, SAME_FOLDER),
    ("dot-md-upper", J, "[[Alpha.MD]]", "memory/projects/alpha.md", None, SHORTEST),
    ("exact-path", J, "[[memory/decisions/launch]]", L, None, EXACT),
    ("exact-path-case", J, "[[MEMORY/Decisions/Launch.md]]", L, None, EXACT),
    ("exact-beats-folder", "memory/semantic/sub/x.md", "[[memory/semantic/topic]]",
     "memory/semantic/topic.md", None, EXACT),
    ("partial-path", "Root Note.md", "[[decisions/launch]]", L, None, SHORTEST),
    ("partial-path-from-folder", J, "[[decisions/launch]]", L, None, SAME_FOLDER),
    ("partial-path-deep", J, "[[deep/launch]]", "memory/semantic/deep/launch.md", None,
     SHORTEST),
    ("partial-path-projects", "Root Note.md", "[[projects/launch]]", "memory/projects/launch.md",
     None,
     SHORTEST),
    ("partial-path-no-sub", "Root Note.md", "[[semantic/topic]]", "memory/semantic/topic.md",
     None, SHORTEST),
    ("root-note", J, "[[Root Note]]", "Root Note.md", None, EXACT),
    ("spaces-in-name", J, "[[Ada Lovelace]]", "memory/people/Ada Lovelace.md", None, SHORTEST),
    ("spaces-lower", J, "[[ada lovelace]]", "memory/people/Ada Lovelace.md", None, SHORTEST),
    ("index-by-name", "Root Note.md", "[[INDEX]]", "memory/INDEX.md", None, SHORTEST),
    ("journal-by-name", "Root Note.md", "[[2026-01-01]]", J, None, SHORTEST),
    ("same-folder-beats-shorter", "memory/semantic/sub/x.md", "[[topic]]",
     "memory/semantic/sub/topic.md", None, SAME_FOLDER),
    ("shortest-over-deeper", J, "[[topic]]", "memory/semantic/topic.md", None, SHORTEST),
    ("tie-alphabetical", J, "[[same]]", "memory/a/same.md", None, SHORTEST),
    ("alias-does-not-resolve", J, "[[Go Live]]", None, M_NOTE, None),
    ("missing-note", J, "[[launch plan]]", None, M_NOTE, None),
    ("display-alias", J, "[[memory/decisions/launch|the launch]]", L, None, EXACT),
    ("table-escaped-pipe", J, "| [[memory/decisions/launch\\|the launch]] |", L, None, EXACT),
    ("absolute", D, "[[/memory/projects/alpha]]", "memory/projects/alpha.md", None, EXACT),
    ("absolute-no-name-lookup", J, "[[/alpha]]", None, M_NOTE, None),
    ("relative-dot", D, "[[./launch]]", L, None, RELATIVE),
    ("relative-up", D, "[[../projects/alpha]]", "memory/projects/alpha.md", None, RELATIVE),
    ("relative-out-of-vault", D, "[[../../../alpha]]", None, M_NOTE, None),
    ("unicode-nfd-link-nfc-file", J, "[[Cafe\u0301 Notes]]", "memory/semantic/Caf\u00e9 notes.md",
     None, SHORTEST),
    ("unicode-nfc-link-nfd-file", J, "[[R\u00e9sum\u00e9]]",
     "memory/semantic/Re\u0301sume\u0301.md",
     None, SHORTEST),
    ("excalidraw-note", J, "[[drawing.excalidraw]]", "memory/semantic/drawing.excalidraw.md", None,
     SHORTEST),
    # attachments
    ("attachment", J, "[[chart.png]]", "attachments/chart.png", None, SHORTEST),
    ("attachment-case", J, "[[CHART.PNG]]", "attachments/chart.png", None, SHORTEST),
    ("attachment-embed-size", J, "![[chart.png|100x145]]", "attachments/chart.png", None,
     SHORTEST),
    ("attachment-needs-extension", J, "[[chart]]", None, M_NOTE, None),
    ("attachment-missing", J, "[[missing.png]]", None, M_ATTACHMENT, None),
    ("attachment-space", J, "[[report v2.pdf]]", "memory/docs/report v2.pdf", None, SHORTEST),
    ("attachment-subpath-unchecked", J, "[[report v2.pdf#page=3]]", "memory/docs/report v2.pdf",
     None, SHORTEST),
    ("attachment-svg", J, "![[diagram.svg]]", "memory/img/diagram.svg", None, SHORTEST),
    # headings
    ("heading", D, "[[launch#Context]]", L, None, SAME_FOLDER),
    ("heading-case", J, "[[memory/decisions/launch#context]]", L, None, EXACT),
    ("heading-missing", J, "[[memory/decisions/launch#Nope]]", L, M_HEADING, EXACT),
    ("heading-chain", J, "[[memory/decisions/launch#Context#Risks: and mitigations]]", L, None,
     EXACT),
    ("heading-chain-second", J, "[[memory/decisions/launch#Decision#Risks]]", L, None, EXACT),
    ("heading-chain-not-nested", J, "[[memory/decisions/launch#Context#Decision]]", L, M_HEADING,
     EXACT),
    ("heading-chain-wrong-order", J, "[[memory/decisions/launch#Risks#Context]]", L, M_HEADING,
     EXACT),
    ("heading-chain-three", J, "[[memory/decisions/launch#Launch#Context#Risks and mitigations]]",
     L, None, EXACT),
    ("heading-punctuation-dropped", J, "[[memory/decisions/launch#Risks and mitigations]]", L,
     None, EXACT),
    ("heading-punctuation-as-written", J,
     "[[memory/decisions/launch#Risks: and *mitigations*]]", L, None, EXACT),
    ("heading-whitespace", J, "[[memory/decisions/launch#RISKS  AND   MITIGATIONS]]", L, None,
     EXACT),
    ("heading-unicode-case", J, "[[topic#ÜBERBLICK]]", "memory/semantic/topic.md", None,
     SHORTEST),
    ("heading-unicode-nfd", J, "[[topic#Cafe\u0301]]", "memory/semantic/topic.md", None, SHORTEST),
    ("heading-colon-number", J, "[[how-to#Step 1 install]]", "memory/procedural/how-to.md", None,
     SHORTEST),
    ("heading-cjk-punctuation", J, "[[how-to#步骤 安装]]", "memory/procedural/how-to.md", None,
     SHORTEST),
    ("heading-on-missing-note", J, "[[nowhere#Context]]", None, M_NOTE, None),
    ("heading-on-person", J, "[[Ada Lovelace#nothing]]", "memory/people/Ada Lovelace.md",
     M_HEADING, SHORTEST),
    # blocks
    ("block", J, "[[memory/decisions/launch#^ctx-1]]", L, None, EXACT),
    ("block-case", J, "[[memory/decisions/launch#^CTX-1]]", L, None, EXACT),
    ("block-missing", J, "[[memory/decisions/launch#^nope]]", L, M_BLOCK, EXACT),
    ("block-by-name", J, "[[alpha#^status-2026]]", "memory/projects/alpha.md", None, SHORTEST),
    ("block-heading-text-is-not-block", J, "[[alpha#^Status]]", "memory/projects/alpha.md",
     M_BLOCK, SHORTEST),
    # the same note
    ("self-heading", L, "[[#Context]]", L, None, SELF),
    ("self-heading-missing", L, "[[#Consequences]]", L, M_HEADING, SELF),
    ("self-block", L, "[[#^ctx-1]]", L, None, SELF),
    ("self-chain", L, "[[#Decision#Risks]]", L, None, SELF),
    # Markdown links
    ("md-relative", D, "[t](launch.md)", L, None, RELATIVE),
    ("md-relative-up", D, "[t](../projects/alpha.md)", "memory/projects/alpha.md", None,
     RELATIVE),
    ("md-root", D, "[t](memory/projects/alpha.md)", "memory/projects/alpha.md", None, ROOT),
    ("md-without-extension", D, "[t](../projects/alpha)", "memory/projects/alpha.md", None,
     RELATIVE),
    ("md-url-encoded", J, "[t](people/Ada%20Lovelace.md)", "memory/people/Ada Lovelace.md", None,
     RELATIVE),
    ("md-angle-brackets", J, "[t](<memory/people/Ada Lovelace.md>)",
     "memory/people/Ada Lovelace.md", None, ROOT),
    ("md-name-fallback", J, "[t](Ada%20Lovelace.md)", "memory/people/Ada Lovelace.md", None,
     SHORTEST),
    ("md-relative-missing", D, "[t](../people/missing.md)", None, M_NOTE, None),
    ("md-relative-no-fallback", D, "[t](./alpha.md)", None, M_NOTE, None),
    ("md-heading", D, "[t](../projects/alpha.md#Status)", "memory/projects/alpha.md", None,
     RELATIVE),
    ("md-heading-encoded", J, "[t](decisions/launch.md#Risks%20and%20mitigations)", L, None,
     RELATIVE),
    ("md-heading-github-slug", J, "[t](decisions/launch.md#risks-and-mitigations)", L, None,
     RELATIVE),
    ("md-heading-missing", J, "[t](decisions/launch.md#nope)", L, M_HEADING, RELATIVE),
    ("md-self-heading", L, "[t](#context)", L, None, SELF),
    ("md-attachment-up", D, "![img](../../attachments/chart.png)", "attachments/chart.png", None,
     RELATIVE),
    ("md-external-https", J, "[t](https://example.com/launch.md)", None, None, EXTERNAL),
    ("md-external-mailto", J, "[t](mailto:ada@example.com)", None, None, EXTERNAL),
    ("md-external-obsidian", J, "[t](obsidian://open?vault=x&file=launch)", None, None, EXTERNAL),
    ("md-absolute", D, "[t](/memory/projects/alpha.md)", "memory/projects/alpha.md", None, ROOT),
    # property links
    ("property-link", J, '---\nrelated: "[[alpha]]"\n---\n', "memory/projects/alpha.md", None,
     SHORTEST),
    ("property-link-missing", J, '---\nrelated: ["[[nobody]]"]\n---\n', None, M_NOTE, None),
]


@pytest.fixture(scope="module")
def vault(tmp_path_factory):
    root = tmp_path_factory.mktemp("resolve")
    (root / ".obsidian").mkdir()
    write_files(root, FILES)
    return load_vault(root, use_cache=False)


def _resolve(vault, source, text):
    note = parse_note(source, text.encode("utf-8"))
    assert len(note.links) == 1, note.links
    return note.links[0], vault.resolver.resolve(note, note.links[0])


def test_table_is_large_enough():
    assert len(CASES) >= 50
    assert len({c[0] for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case_id,source,text,path,missing,reason", CASES,
                         ids=[c[0] for c in CASES])
def test_resolution(vault, case_id, source, text, path, missing, reason):
    _, res = _resolve(vault, source, text)
    assert res.path == path
    assert res.missing == missing
    if reason is not None:
        assert res.reason == reason
    assert res.ok == (missing is None)


def test_ambiguous_candidates_shortest_first(vault):
    _, res = _resolve(vault, J, "[[launch]]")
    assert res.ambiguous
    assert res.candidates == ("memory/projects/launch.md", "memory/decisions/launch.md",
                              "memory/semantic/deep/launch.md")


def test_same_folder_winner_is_not_ambiguous(vault):
    _, res = _resolve(vault, D, "[[launch]]")
    assert not res.ambiguous and res.candidates == ()


def test_unique_name_is_not_ambiguous(vault):
    _, res = _resolve(vault, J, "[[alpha]]")
    assert not res.ambiguous and res.candidates == ("memory/projects/alpha.md",)


def test_missing_detail_names_the_part(vault):
    _, res = _resolve(vault, J, "[[memory/decisions/launch#Context#Decision]]")
    assert res.detail == "Decision"
    _, res = _resolve(vault, J, "[[memory/decisions/launch#^nope]]")
    assert res.detail == "^nope"


def test_resolve_all_is_cached_and_ordered(vault):
    note = vault.notes[L]
    first = vault.resolver.resolve_all(note)
    assert first is vault.resolver.resolve_all(note)
    assert len(first) == len(note.links)


def test_link_text_shortest_unambiguous(vault):
    r = vault.resolver
    assert r.link_text("memory/projects/alpha.md", "memory/INDEX.md") == "alpha"
    assert r.link_text("memory/decisions/launch.md", "memory/INDEX.md") == \
        "memory/decisions/launch"
    assert r.link_text("attachments/chart.png") == "chart.png"
    assert r.resolve_target(r.link_text("memory/semantic/sub/topic.md", "memory/INDEX.md"),
                            "memory/INDEX.md") == "memory/semantic/sub/topic.md"


@pytest.mark.parametrize("heading,link", [
    ("Heading: with punctuation", "Heading with punctuation"),
    ("Heading: with punctuation", "heading: WITH punctuation"),
    ("Heading **with** `punctuation`!", "Heading with punctuation"),
    ("Über  Café", "über café"),
    ("Ｆｕｌｌ width", "Full width"),
    ("🚀 Launch", "Launch"),
    ("snake_case name", "snake case name"),
    ("[[Other note|Shown]] link", "Other note Shown link"),
])
def test_lenient_heading_forms_match(heading, link):
    assert normalize_heading(heading) == normalize_heading(link)


def test_ascii_fast_path_equals_the_general_rule():
    import re
    import unicodedata

    def general(text):
        text = unicodedata.normalize("NFKC", text).casefold()
        return " ".join(re.sub(r"[^\w\s]|_", " ", text).split())

    sample = "".join(chr(i) for i in range(128)) + " Mixed_Case: **bold** [[x|y]] #1 "
    assert normalize_heading(sample) == general(sample)


@pytest.mark.parametrize("heading,link", [
    ("Heading one", "Heading two"),
    ("Step 1.2", "Step 12"),
    ("Launch", "Launches"),
])
def test_lenient_heading_still_distinguishes(heading, link):
    assert normalize_heading(heading) != normalize_heading(link)


# -- the name tables kept in the cache ----------------------------------------------------

@pytest.fixture(scope="module")
def cached_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("resolve-cached")
    (root / ".obsidian").mkdir()
    for rel, content in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    load_vault(root).resolver  # builds the tables and stores them
    return root


def _tables_file(root):
    from parse_store import StoreEntry
    from vaultkit.vault.resolve import _Tables

    return StoreEntry(root, _Tables.NAME)


def _no_build(monkeypatch):
    from vaultkit.vault import resolve

    def refuse(*args, **kwargs):
        raise AssertionError("the name tables were built again")
    monkeypatch.setattr(resolve._Tables, "build", classmethod(refuse))


@pytest.mark.parametrize("case_id,source,text,path,missing,reason", CASES,
                         ids=[c[0] for c in CASES])
def test_stored_tables_resolve_every_case_alike(cached_root, monkeypatch, case_id, source,
                                                text, path, missing, reason):
    assert _tables_file(cached_root).is_file()
    _no_build(monkeypatch)  # the next run's resolver reads the stored tables
    _, res = _resolve(load_vault(cached_root), source, text)
    assert (res.path, res.missing) == (path, missing)
    if reason is not None:
        assert res.reason == reason


def test_tables_are_built_again_when_a_name_changes(tmp_path, monkeypatch):
    root = tmp_path
    (root / ".obsidian").mkdir()
    (root / "a.md").write_text("# A\n\n[[b]]\n", encoding="utf-8")
    vault = load_vault(root)
    note = vault.notes["a.md"]
    assert vault.resolver.resolve_all(note)[0].path is None  # b does not exist yet
    stored = _tables_file(root).read_bytes()
    (root / "sub").mkdir()
    (root / "sub" / "b.md").write_text("# B\n", encoding="utf-8")
    vault = load_vault(root)
    assert vault.resolver.resolve_all(vault.notes["a.md"])[0].path == "sub/b.md"
    assert _tables_file(root).read_bytes() != stored
    _no_build(monkeypatch)  # same names again: read, not built
    vault = load_vault(root)
    assert vault.resolver.resolve_all(vault.notes["a.md"])[0].path == "sub/b.md"


def test_damaged_tables_are_built_again_and_no_cache_stores_none(tmp_path):
    root = tmp_path
    (root / ".obsidian").mkdir()
    (root / "a.md").write_text("# A\n\n[[b]]\n", encoding="utf-8")
    (root / "b.md").write_text("# B\n", encoding="utf-8")
    vault = load_vault(root, use_cache=False)
    assert vault.resolver.resolve_all(vault.notes["a.md"])[0].path == "b.md"
    assert not _tables_file(root).exists()  # --no-cache: nothing read or written
    load_vault(root).resolver
    _tables_file(root).write_bytes(b"\x00not marshal")
    vault = load_vault(root)
    assert vault.resolver.resolve_all(vault.notes["a.md"])[0].path == "b.md"
    from vaultkit.vault.cachefile import unmarshal

    _, count, exact, by_name = unmarshal(_tables_file(root).read_bytes())  # rewritten
    assert (count, exact["b"], by_name["b"]) == (2, "b.md", ("b.md",))  # no key per path
