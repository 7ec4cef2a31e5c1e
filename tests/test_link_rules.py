"""broken-link, ambiguous-link, orphan-note on hand-written vaults: exactly these findings."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from vaultkit.cli import main
from vaultkit.lint.engine import Selection, run_rules, select_rules
from vaultkit.lint.rule import Context
from vaultkit.vault.loader import load_vault

FIXTURE = Path(__file__).parent / "fixtures" / "links" / "vault"

# Every finding the three link rules must report on the fixture vault, and nothing else.
EXPECTED = [
    ("broken-link", "memory/decisions/pricing.md", 6, 1, "no note 'Launch Plan'"),
    ("broken-link", "memory/decisions/pricing.md", 12, 58,
     "'memory/projects/alpha.md' has no heading 'Roadmap'"),
    ("broken-link", "memory/decisions/pricing.md", 13, 16, "no note 'launch plan'"),
    ("broken-link", "memory/decisions/pricing.md", 13, 54, "no note 'Launch Plan'"),
    ("broken-link", "memory/decisions/pricing.md", 17, 82, "no note 'chart'"),
    ("broken-link", "memory/decisions/pricing.md", 18, 26,
     "this note has no heading 'Consequences'"),
    ("broken-link", "memory/decisions/pricing.md", 18, 56, "this note has no block '^nope'"),
    ("broken-link", "memory/decisions/pricing.md", 35, 11, "no note 'memory/projects/gamma'"),
    ("orphan-note", "memory/lessons/tools.md", 1, 1, "no other note links to this lesson"),
    ("ambiguous-link", "memory/people/ada.md", 6, 33,
     "'notes' matches 2 files: memory/semantic/notes.md, memory/procedural/notes.md; "
     "Obsidian opens memory/semantic/notes.md"),
    ("orphan-note", "memory/projects/beta.md", 1, 1, "no other note links to this project"),
]


@pytest.fixture
def fixture_vault(tmp_path):
    root = tmp_path / "vault"
    shutil.copytree(FIXTURE, root)
    return root


def _run(root, select="broken-link,ambiguous-link,orphan-note"):
    vault = load_vault(root, root=root, use_cache=False)
    rules = select_rules(vault.settings, Selection(select.split(",")))
    return run_rules(Context(vault), rules)


def test_fixture_vault_exact_findings(fixture_vault):
    diags = _run(fixture_vault)
    got = [(d.rule, d.path, d.line, d.column) for d in diags]
    assert got == [e[:4] for e in EXPECTED]
    for d, e in zip(diags, EXPECTED):
        assert e[4] in d.message
        assert d.severity == "warning"


def test_fixture_vault_via_cli_json(fixture_vault, capsys):
    rc = main(["check", str(fixture_vault), "--no-cache", "--select", "VK501,VK502,VK503",
               "--format", "json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0  # warnings only
    assert [(d["rule"], d["path"], d["line"], d["column"]) for d in out] == \
        [e[:4] for e in EXPECTED]
    assert {d["code"] for d in out} == {"VK501", "VK502", "VK503"}


def test_links_in_code_comments_and_math_are_never_reported(make_vault):
    root = make_vault({"memory/semantic/a.md": (
        "# A\n\n`[[inline]]` and ``[[double `tick`]]``\n\n```md\n[[fenced]]\n```\n\n"
        "~~~\n[[tilde]]\n~~~\n\n    [[indented]]\n\n<!-- [[comment]] -->\n\n"
        "%% [[obsidian comment]] %%\n\n$$\n[[math]]\n$$\n\n> ```\n> [[quoted fence]]\n> ```\n"
        "\n[[real missing]]\n"
    )})
    diags = _run(root, "broken-link")
    assert [(d.line, d.column) for d in diags] == [(27, 1)]  # only the real link


def test_links_differing_only_in_case_resolve(make_vault):
    root = make_vault({
        "memory/semantic/Launch Plan.md": "# Launch Plan\n\n## Risks\n\nx ^Block-1\n",
        "memory/semantic/b.md": "[[launch plan]] [[LAUNCH PLAN#risks]] [[Launch plan#^block-1]] "
                                "[x](Launch%20PLAN.md) [[MEMORY/SEMANTIC/LAUNCH PLAN]]\n",
    })
    assert _run(root, "broken-link") == []


def test_broken_link_names_what_is_missing(make_vault):
    root = make_vault({
        "memory/semantic/a.md": "# A\n\n## Here\n",
        "memory/semantic/b.md": "x [[nope]] ![[pic.png]] [[a#There]] [[a#^blk]] [[a#Here]]\n",
    })
    diags = _run(root, "broken-link")
    assert [(d.line, d.column) for d in diags] == [(1, 3), (1, 12), (1, 25), (1, 37)]
    msgs = [d.message for d in diags]
    assert msgs[0].startswith("no note 'nope'")
    assert msgs[1].startswith("no attachment 'pic.png'") and "embed" in msgs[1]
    assert msgs[2].startswith("'memory/semantic/a.md' has no heading 'There'")
    assert msgs[3].startswith("'memory/semantic/a.md' has no block '^blk'")


def test_template_placeholders_are_skipped(make_vault):
    # a template's links are placeholders, written as {{title}} or in words ([[文件名]],
    # [[相关笔记1]] in a real workspace); a `{{...}}` link elsewhere is skipped too
    root = make_vault({"templates/decision.md": "Made on [[{{date}}]], see [[{{title}}#Context]]\n"
                                               "and [[文件名]], [[相关笔记1]]\n",
                       "memory/semantic/a.md": "[[{{title}}]] but [[really missing]]\n"})
    diags = _run(root, "broken-link")
    assert [(d.path, d.line, d.message.split(" (")[0]) for d in diags] == \
        [("memory/semantic/a.md", 1, "no note 'really missing' in the vault")]


def test_suppression_comment_hides_a_broken_link(make_vault):
    root = make_vault({"memory/semantic/a.md": "<!-- vaultkit-disable-next-line broken-link -->\n"
                                               "[[planned]]\n[[other]]\n"})
    diags = _run(root, "broken-link")
    assert [d.line for d in diags] == [3]


def test_ambiguous_same_folder_or_path_is_not_reported(make_vault):
    root = make_vault({
        "memory/semantic/x/topic.md": "# T1\n",
        "memory/semantic/y/topic.md": "# T2\n",
        "memory/semantic/x/a.md": "[[topic]]\n",  # same-folder winner
        "memory/semantic/b.md": "[[x/topic]] [[memory/semantic/y/topic]]\n",  # paths
        "memory/semantic/c.md": "[[topic]]\n",  # ambiguous
    })
    diags = _run(root, "ambiguous-link")
    assert [(d.path, d.line) for d in diags] == [("memory/semantic/c.md", 1)]
    assert "Obsidian opens memory/semantic/x/topic.md" in diags[0].message
    assert "memory/semantic/y/topic.md" in diags[0].message


def test_orphan_counts_any_other_note_but_not_index_or_self(make_vault):
    root = make_vault({
        "memory/INDEX.md": "[[a]] [[b]] [[c]] [[d]]\n",
        "memory/decisions/a.md": "[[a]] self only\n",
        "memory/decisions/b.md": "# B\n",
        "memory/decisions/c.md": "# C\n",
        "memory/decisions/d.md": "# D\n",
        "memory/2026-02-01.md": "### 09:00 — note\n- [[b]]\n",
        "memory/archive/2025-01-01.md": "[[c]]\n",
        "memory/semantic/loner.md": "# not structured: never an orphan\n",
        "memory/people/e.md": "# E\n",
        "memory/projects/f.md": "[[e]]\n",
    })
    diags = _run(root, "orphan-note")
    assert [d.path for d in diags] == ["memory/decisions/a.md", "memory/decisions/d.md",
                                       "memory/projects/f.md"]


def test_broken_property_link_points_at_its_key_line(make_vault):
    root = make_vault({"memory/projects/p.md": "---\ntype: project\nstatus: active\n"
                                               "owner: \"[[Nobody]]\"\n---\n# P\n"})
    diags = _run(root, "broken-link")
    assert [(d.line, d.column) for d in diags] == [(4, 1)]


# -- a link written with an alias ---------------------------------------------------------

SOFIA = "---\naliases: [Sofi, Sofiya]\n---\n# Sofia\n\nMy sister.\n"


def _alias_vault(make_vault, profile="obsidian"):
    from vault_files import age_files

    root = make_vault({"vaultkit.toml": f'profile = "{profile}"\n',
                       "People/Sofia.md": SOFIA,
                       "People/Marco.md": "# Marco\n",
                       "Daily/2026-03-02.md": "# 2026-03-02\n\nCalled [[Sofi]] and "
                                              "[[sofiya|her]], then ![[Sofi#Plans]].\n"
                                              "[[Not written yet]] [[Marco]]\n"})
    age_files(root)
    return root


def _broken(capsys, root, *extra):
    main(["check", str(root), "--select", "broken-link", "--format", "json", *extra])
    return sorted((d["path"], d["line"], d["column"], d["message"])
                  for d in json.loads(capsys.readouterr().out))


@pytest.mark.parametrize("profile", ["obsidian", "openclaw"])
def test_a_link_written_with_an_alias_is_reported_even_where_forward_links_are_allowed(
        make_vault, capsys, profile):
    got = _broken(capsys, _alias_vault(make_vault, profile), "--no-cache")
    messages = [m for *_, m in got]
    assert [(p, ln, col) for p, ln, col, _ in got][:3] == [
        ("Daily/2026-03-02.md", 3, 8), ("Daily/2026-03-02.md", 3, 21),
        ("Daily/2026-03-02.md", 3, 42)]
    assert messages[0].startswith("no note 'Sofi': it is an alias of 'People/Sofia.md'")
    assert "write [[Sofia|Sofi]] (link [[Sofi]])" in messages[0]
    assert "write [[Sofia|her]]" in messages[1]  # (matched ignoring case; its own text kept)
    assert "write ![[Sofia#Plans|Sofi]] (embed" in messages[2]
    # the forward link is reported by the agent profile only
    assert len(got) == (3 if profile == "obsidian" else 4)


def test_an_alias_added_or_removed_elsewhere_moves_the_cached_finding(make_vault, capsys):
    from test_results_cache import _write_aged

    root = _alias_vault(make_vault)
    sofia = root / "People/Sofia.md"
    marco = root / "People/Marco.md"
    assert len(_broken(capsys, root)) == 3  # (a cold run, written to the results cache)
    steps = [
        (sofia, "# Sofia\n\nMy sister.\n"),  # both aliases gone: no finding any more
        (marco, "---\naliases: [Sofi]\n---\n# Marco\n"),  # now Marco's: a finding again
        (sofia, SOFIA),  # Sofia's too: the message names both
        (marco, "# Marco\n"),
    ]
    for path, text in steps:
        _write_aged(path, text)
        cached = _broken(capsys, root)
        assert cached == _broken(capsys, root, "--no-cache"), path.name
    assert len(cached) == 3
    _write_aged(sofia, "# Sofia\n")
    assert _broken(capsys, root) == [] == _broken(capsys, root, "--no-cache")


def test_after_a_change_only_the_changed_notes_aliases_are_read(make_vault, capsys,
                                                                monkeypatch):
    """The alias index is kept by each note's size and mtime: the hook's run after a change
    asks the changed note for its aliases, not every note of the vault."""
    from test_results_cache import _write_aged

    import vaultkit.vault.aliases as aliases

    root = _alias_vault(make_vault)
    (root / "notes").mkdir()
    for i in range(20):
        _write_aged(root / f"notes/n{i}.md", f"---\naliases: [Nick{i}]\n---\n# N{i}\n")
    # (an mtime can be aged, a ctime cannot: out of the racy window the index trusts them)
    time.sleep(2.1)
    _broken(capsys, root)
    from vaultkit.vault.loader import Vault

    asked = []  # the notes whose cached facts were looked up for their aliases
    real = Vault.fact

    def fact(self, path, key, compute, **kw):
        if key == aliases.FACT:
            asked.append(path)
        return real(self, path, key, compute, **kw)

    monkeypatch.setattr(Vault, "fact", fact)
    _write_aged(root / "Daily/2026-03-02.md", "# 2026-03-02\n\n[[Nick3]] and [[nowhere]]\n")
    got = _broken(capsys, root)
    assert [m.split(":")[0] for *_, m in got] == ["no note 'Nick3'"]
    assert set(asked) == {"Daily/2026-03-02.md"}
    assert got == _broken(capsys, root, "--no-cache")


def test_a_run_on_named_files_keeps_no_alias_index_the_next_run_would_trust(make_vault,
                                                                            capsys):
    """A check of one named file (the hook's form) keeps no results; if it kept the alias
    index, the next full run would take an alias added since for one it already knew."""
    from test_results_cache import _write_aged

    root = _alias_vault(make_vault)
    marco, day = root / "People/Marco.md", root / "Daily/2026-03-02.md"
    _write_aged(day, "# 2026-03-02\n\n[[Mo]] [[nowhere]]\n")
    _write_aged(root / "Daily/2026-03-03.md", "# 2026-03-03\n")
    assert _broken(capsys, root) == []
    _write_aged(marco, "---\naliases: [Mo]\n---\n# Marco\n")
    _write_aged(root / "Daily/2026-03-03.md", "# 2026-03-03\n\n[[also-nowhere]]\n")
    main(["check", str(root / "Daily/2026-03-03.md"), "--select", "broken-link"])
    capsys.readouterr()
    cached = _broken(capsys, root)
    assert cached == _broken(capsys, root, "--no-cache")
    assert [(p, ln) for p, ln, *_ in cached] == [("Daily/2026-03-02.md", 3)]


def test_editing_a_note_that_holds_aliases_builds_no_link_graph(make_vault, capsys,
                                                               monkeypatch):
    from test_results_cache import _write_aged

    import vaultkit.links.graph as graph

    root = _alias_vault(make_vault)
    _broken(capsys, root)
    built = []
    real = graph.link_graph
    monkeypatch.setattr(graph, "link_graph", lambda vault: built.append(1) or real(vault))
    _write_aged(root / "People/Sofia.md", SOFIA + "\nShe moved to Lisbon.\n")
    cached = _broken(capsys, root)
    assert built == [] and len(cached) == 3
    assert cached == _broken(capsys, root, "--no-cache")
