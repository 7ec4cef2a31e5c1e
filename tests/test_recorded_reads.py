"""The context records what each rule read; the results cache reuses a finding only while
none of those inputs changed (vaultkit.lint.reads). Rules declare nothing about caching:
these tests hold warm answers to cold ones after edits to the notes a finding depends on
but is not on, and hold the rules to reading the vault through the context only."""

from __future__ import annotations

import ast
import json
import marshal
import os
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parse_store import StoreEntry
from vault_files import age_files
from vaultkit.cli import main
from vaultkit.lint.engine import Selection, run_rules, select_rules
from vaultkit.lint.reads import EVERYTHING, UNKEYED
from vaultkit.lint.rule import Context, Rule
from vaultkit.lint.rules import all_rules
from vaultkit.vault.loader import load_vault

RULES_DIR = Path(__file__).resolve().parents[1] / "vaultkit" / "lint" / "rules"
WORKSPACES = Path(__file__).resolve().parent / "fixtures" / "workspaces"


def check(capsys, root, *extra):
    code = main(["check", str(root), "--format", "json", *extra])
    out = capsys.readouterr().out
    return code, [(d["rule"], d["path"], d["line"], d["message"]) for d in json.loads(out)]


def write_aged(path: Path, text: str) -> None:
    """Write ``text``, dated older than the racy margin (the next run may trust its stat)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    old = time.time() - 30
    os.utime(path, (old, old))


def warm_is_cold(capsys, root, *extra):
    warm = check(capsys, root, *extra)
    assert warm == check(capsys, root, "--no-cache", *extra)
    return warm


# -- findings on one note that depend on another ------------------------------------------

def test_a_heading_renamed_in_b_moves_the_link_finding_on_a(make_vault, capsys):
    root = make_vault({"memory/semantic/a.md": "# A\n\nsee [[b#Plan]]\n",
                       "memory/semantic/b.md": "# B\n\n## Plan\n"})
    age_files(root)
    assert not [f for f in check(capsys, root)[1] if f[1] == "memory/semantic/a.md"]
    write_aged(root / "memory/semantic/b.md", "# B\n\n## Later\n")
    found = warm_is_cold(capsys, root)[1]
    assert [f[:3] for f in found if f[1] == "memory/semantic/a.md"] == [
        ("broken-link", "memory/semantic/a.md", 3)]
    write_aged(root / "memory/semantic/b.md", "# B\n\n## Plan\n")
    assert not [f for f in warm_is_cold(capsys, root)[1] if f[1] == "memory/semantic/a.md"]


def test_an_alias_added_in_b_moves_the_link_finding_on_a(make_vault, capsys):
    """[[Sofi]] names no note; once b.md holds the alias, the finding on a.md says so."""
    root = make_vault({"memory/semantic/a.md": "# A\n\nsee [[Sofi]]\n",
                       "memory/semantic/b.md": "# B\n",
                       "vaultkit.toml": '[links]\nforward-links = "report"\n'})
    age_files(root)
    (before,) = [f for f in check(capsys, root)[1] if f[1] == "memory/semantic/a.md"]
    write_aged(root / "memory/semantic/b.md", "---\naliases: [Sofi]\n---\n# B\n")
    (after,) = [f for f in warm_is_cold(capsys, root)[1] if f[1] == "memory/semantic/a.md"]
    assert "alias of 'memory/semantic/b.md'" in after[3] and after != before
    write_aged(root / "memory/semantic/b.md", "# B\n")
    assert [f for f in warm_is_cold(capsys, root)[1] if f[1] == "memory/semantic/a.md"] == \
        [before]


def test_a_link_taken_away_in_p_makes_d_an_orphan(make_vault, capsys):
    root = make_vault({"memory/decisions/d.md": "# D\n",
                       "memory/projects/p.md": "# P\n\nsee [[d]]\n",
                       "memory/2026-01-01.md": "# Day\n\nsee [[p]]\n",
                       "vaultkit.toml": 'extend-select = ["orphan-note"]\n'})
    age_files(root)
    assert ("orphan-note", "memory/decisions/d.md") not in \
        {f[:2] for f in check(capsys, root)[1]}
    write_aged(root / "memory/projects/p.md", "# P\n\nno link\n")
    assert ("orphan-note", "memory/decisions/d.md") in \
        {f[:2] for f in warm_is_cold(capsys, root)[1]}
    write_aged(root / "memory/projects/p.md", "# P\n\nnames memory/decisions/d.md\n")
    assert ("orphan-note", "memory/decisions/d.md") not in \
        {f[:2] for f in warm_is_cold(capsys, root)[1]}


def test_a_rule_reading_another_note_any_way_is_never_stale(make_vault):
    """A rule whose findings on a.md read b.md, through the whole vault or by path: after
    b.md alone changes, its finding on a.md is the fresh one. (``note_alone`` is what a
    rule once declared to have its findings kept by note; nothing reads it now.)"""

    class Peek(Rule):
        name, code, severity = "peek", "VK999", "warning"
        note_alone = True
        how = "vault"

        def check(self, note, ctx):
            if note.path != "memory/semantic/a.md":
                return
            other = (ctx.vault.note if self.how == "vault" else ctx.note)("memory/semantic/b.md")
            if other is not None and "bad" in other.text:
                yield self.diag(note.path, 1, 1, "b.md is bad")

    for how in ("vault", "note"):
        root = make_vault({"memory/semantic/a.md": "# A\n", "memory/semantic/b.md": "# B\n",
                           "memory/semantic/c.md": "# C\n"}, root_name=how)
        age_files(root)
        rule = Peek()
        rule.how = how

        def run(reuse=True):
            ctx = Context(load_vault(root, root=root, use_cache=reuse), reuse_results=reuse)
            return [d.message for d in run_rules(ctx, [rule])]

        assert run() == []
        write_aged(root / "memory/semantic/b.md", "# B is bad\n")
        assert run() == run(reuse=False) == ["b.md is bad"]


def test_rules_that_read_git_or_the_clock_keep_no_findings(make_vault, capsys):
    """Git and the clock cannot be keyed: the context records it, and the results cache
    keeps none of those rules' findings."""
    root = make_vault({"memory/semantic/a.md": "# A\n\n[[gone]]\n"})
    age_files(root)
    check(capsys, root)
    key, stamp, results, *_ = marshal.loads(
        StoreEntry(root, "results").read_bytes())
    assert "broken-link" in results
    assert not {"journal-append-only", "mass-deletion", "memory-churn"} & set(results)
    # (recorded for the results cache: a run that has one; the git rules, whose findings
    # it does not keep, run again and record again)
    vault = load_vault(root, root=root)
    ctx = Context(vault, reuse_results=True)
    run_rules(ctx, select_rules(vault.settings, Selection(["ALL"])))
    assert {r for r in ctx.read if ctx.unkeyed(r)} == {
        "journal-append-only", "mass-deletion", "memory-churn"}


def test_a_run_without_a_results_cache_records_nothing(make_vault):
    """What a rule reads is recorded for the results cache alone: a run without one (as
    under --no-cache) records nothing, and its findings are the same as one that records."""
    files = {"memory/semantic/a.md": "# A\n\nsee [[b#Plan]] and [[gone]]\n",
             "memory/semantic/b.md": "# B\n\n## Later\n"}
    root = make_vault(files)
    age_files(root)
    found = {}
    for reuse in (False, True):
        vault = load_vault(root, root=root, use_cache=reuse)
        ctx = Context(vault, reuse_results=reuse)
        found[reuse] = [(d.rule, d.path, d.line, d.message)
                        for d in run_rules(ctx, select_rules(vault.settings, Selection(["ALL"])))]
        assert bool(ctx.read) is reuse
    assert found[False] == found[True]
    assert any(f[0] == "broken-link" for f in found[False])


# -- a property: any edits to notes that read each other ---------------------------------

NOTES = ["memory/decisions/a.md", "memory/decisions/b.md", "memory/projects/c.md"]
BODIES = ["# T\n\n## Plan\n\nsee [[b#Plan]] and [[c]]\n",
          "# T\n\n## Later\n\nsee [[a#Later]]\n",
          "---\naliases: [Sofi]\n---\n# T\n\nsee [[Sofi]] and [[Bob]]\n",
          "---\naliases: [Bob]\n---\n# T\n\nnames memory/decisions/a.md\n",
          "# T\n\nnothing links from here\n"]


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(NOTES), st.sampled_from(BODIES)),
                min_size=1, max_size=4))
def test_warm_answers_equal_cold_ones_after_edits_to_notes_read_by_others(tmp_path_factory,
                                                                          capsys, edits):
    root = tmp_path_factory.mktemp("reads")
    for i, path in enumerate(NOTES):
        write_aged(root / path, BODIES[i])
    write_aged(root / "vaultkit.toml",
               'extend-select = ["orphan-note"]\n[links]\nforward-links = "report"\n')
    check(capsys, root)
    for path, body in edits:
        write_aged(root / path, body)
        warm_is_cold(capsys, root)


# -- rules reach the vault through the context only ---------------------------------------

# what a rule module may not import: files, processes, the clock and the stores no key
# lists are read through the context (Context.git, Context.snapshots, Context.today), which
# records that the findings cannot be keyed
NEVER_IMPORTED = {"subprocess", "vaultkit.vault.gitstate", "time", "pathlib", "io", "shutil", "glob",
                  "vaultkit.core.bounded", "vaultkit.core.gitenv", "vaultkit.vault.loader",
                  "vaultkit.vault.scan", "vaultkit.vault.cachefile", "vaultkit.vault.snapshots",
                  "vaultkit.vault.openclaw", "vaultkit.vault.runtimes",
                  "vaultkit.vault.aliases", "vaultkit.links.graph", "vaultkit.links.obsidian",
                  "vaultkit.links.indexgen"}
# the pure helpers of those modules (text and paths in, an answer out: nothing read)
PURE = {"vaultkit.vault.gitstate": {"content_lines", "first_change", "split_lines"},
        "vaultkit.links.obsidian": {"in_folders"}, "vaultkit.vault.runtimes": {"u16len"}}
# what a vault rule (run once, its findings reused only for the very same listing, whose
# key holds the files beside the vault) may import besides
VAULT_RULE_MAY = {"os", "pathlib", "vaultkit.core.bounded", "vaultkit.vault.openclaw",
                  "vaultkit.vault.runtimes", "vaultkit.links.graph", "vaultkit.links.obsidian",
                  "vaultkit.links.indexgen", "vaultkit.vault.scan"}
# the context's whole-vault doors: a note rule's findings are kept by note, so it reads
# through the accessors that record what it read
NOTE_RULE_NEVER = {"vault", "resolver", "__dict__"}


def _problems(path: Path, scope: str) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    may = VAULT_RULE_MAY if scope == "vault" else set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""]
            if node.module in PURE:
                out += [f"imports {node.module}.{a.name}" for a in node.names
                        if a.name not in PURE[node.module] and node.module not in may]
                names = []
            if node.module == "os" and any(a.name in ("environ", "getenv") for a in node.names):
                out.append("reads the environment")
        else:
            names = []
        out += [f"imports {n}" for n in names if n in NEVER_IMPORTED and n not in may]
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id in ("open", "__import__"):
                out.append(f"calls {func.id}()")
            if isinstance(func, ast.Attribute) and func.attr in ("today", "now", "utcnow",
                                                                 "getenv", "read_text",
                                                                 "read_bytes") \
                    and not (isinstance(func.value, ast.Name) and func.value.id == "ctx"):
                out.append(f"calls .{func.attr}()")
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.value.id == "ctx" and (node.attr.startswith("_") or
                                           scope == "note" and node.attr in NOTE_RULE_NEVER):
                out.append(f"reaches ctx.{node.attr}")
            if node.value.id == "os" and node.attr in ("environ", "getenv"):
                out.append("reads the environment")
    return out


def test_rules_reach_the_vault_only_through_the_context():
    """A rule that read something the context does not see would have its findings kept
    while that changed: every rule module reads files, git, the clock and other notes
    through the context, and a note rule never through its whole-vault doors."""
    problems = {}
    for rule in all_rules():
        module = type(rule).__module__.rsplit(".", 1)[1]
        found = _problems(RULES_DIR / f"{module}.py", rule.scope)
        if found:
            problems[module] = sorted(set(found))
    assert problems == {}


def test_the_structural_check_sees_a_rule_reading_around_the_context(tmp_path):
    sneaky = tmp_path / "sneaky.py"
    sneaky.write_text("import datetime as dt\nfrom vaultkit.vault.aliases import alias_index\n"
                      "def check(self, note, ctx):\n"
                      "    x = ctx.vault.note('b.md')\n    y = dt.date.today()\n"
                      "    z = alias_index(ctx._vault)\n")
    assert sorted(_problems(sneaky, "note")) == [
        "calls .today()", "imports vaultkit.vault.aliases", "reaches ctx._vault",
        "reaches ctx.vault"]


@pytest.mark.parametrize("workspace", sorted(p.name for p in WORKSPACES.iterdir()))
def test_no_note_rule_reads_the_whole_vault(workspace):
    """Through the helpers too (lint.shared): every note rule's record names what it read,
    so a change to one note runs the rules again on the notes that read it, not on all."""
    root = WORKSPACES / workspace
    vault = load_vault(root, root=root, use_cache=False)
    ctx = Context(vault)
    rules = select_rules(vault.settings, Selection(["ALL"]))
    run_rules(ctx, rules)
    note_rules = {r.name for r in rules if r.scope == "note"}
    wide = {rule for rule, by_note in ctx.read.items() if rule in note_rules
            and any(EVERYTHING in inputs or UNKEYED in inputs for inputs in by_note.values())}
    assert wide == set()

