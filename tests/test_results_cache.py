"""The results cache: an unchanged vault reuses findings; any change is seen at once."""

import json
import os

import pytest

from cli_invoke import modules_after_check
from parse_store import StoreEntry
from vault_files import age_files
from vaultkit.cli import main
from vaultkit.lint.rules import all_rules


def check(capsys, root, *extra):
    code = main(["check", str(root), "--format", "json", *extra])
    out = capsys.readouterr().out
    return code, sorted((d["rule"], d["path"], d["line"]) for d in json.loads(out))


@pytest.fixture
def vault(make_vault):
    root = make_vault({"memory/semantic/a.md": "# A\n[[missing]]\n",
                       "memory/semantic/b.md": "# B\n[[a]]\n"})
    age_files(root)
    return root


def test_second_run_reuses_results_without_running_rules(vault, capsys, monkeypatch):
    first = check(capsys, vault)
    assert ("broken-link", "memory/semantic/a.md", 2) in first[1]
    assert (StoreEntry(vault, "results")).is_file()
    ran = []
    for rule in all_rules():
        monkeypatch.setattr(type(rule), "check", lambda self, n, c, r=rule: ran.append(r.name) or ())
    assert check(capsys, vault) == first
    assert ran == []


def test_an_edit_is_seen_at_once(vault, capsys):
    check(capsys, vault)
    (vault / "memory/semantic/b.md").write_text("# B\n[[gone]]\n")
    age_files(vault, 10)
    _, found = check(capsys, vault)
    assert ("broken-link", "memory/semantic/b.md", 2) in found


def test_a_new_file_is_seen_at_once(vault, capsys):
    check(capsys, vault)
    (vault / "memory/semantic/missing.md").write_text("# now here\n")
    age_files(vault, 10)
    _, found = check(capsys, vault)
    assert ("broken-link", "memory/semantic/a.md", 2) not in found


def test_a_file_written_in_the_same_tick_is_not_trusted(vault, capsys):
    check(capsys, vault)
    target = vault / "memory/semantic/b.md"
    st = target.stat()
    target.write_text("# B\n[[gonX]]\n")  # same size
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))  # and same mtime
    # the cache was written just now, so a file this new is read again
    _, found = check(capsys, vault)
    assert found == check(capsys, vault, "--no-cache")[1]


def test_openclaw_config_change_is_seen(make_vault, capsys, tmp_path):
    root = make_vault({"AGENTS.md": "# Agents\n\n" + "x" * 300 + "\n"})
    age_files(root)
    _, before = check(capsys, root, "--select", "bootstrap-truncation")
    assert before == []
    (root.parent / "openclaw.json").write_text(
        "{agents: {defaults: {bootstrapMaxChars: 100}}}  // JSON5\n")
    _, after = check(capsys, root, "--select", "bootstrap-truncation")
    assert [r for r, _, _ in after] == ["bootstrap-truncation"]


def test_an_openclaw_upgrade_is_seen(make_vault, capsys, tmp_path, monkeypatch):
    # 13,000 chars: whole under 2026.8.2's 20,000 per file, cut under 2026.4.27's 12,000
    from vaultkit.vault import openclaw

    root = make_vault({"SOUL.md": "# Soul\n" + "x" * 13000 + "\n"})
    age_files(root)
    package = tmp_path / "npm" / "lib" / "node_modules" / "openclaw" / "package.json"
    package.parent.mkdir(parents=True)
    package.write_text('{"name": "openclaw", "version": "2026.8.2"}')
    monkeypatch.setattr(openclaw, "_npm_prefixes", lambda: [tmp_path / "npm"])
    assert check(capsys, root) == (0, [])
    package.write_text('{"name": "openclaw", "version": "2026.4.27"}')
    _, after = check(capsys, root)
    assert after == [("bootstrap-truncation", "SOUL.md", 2)]
    assert after == check(capsys, root, "--no-cache")[1]


def test_config_change_is_seen(vault, capsys):
    check(capsys, vault)
    (vault / "vaultkit.toml").write_text("[severity]\nbroken-link = 'error'\n")
    code, _ = check(capsys, vault, "--select", "broken-link")
    assert code == 1


def test_selection_and_targets_apply_to_reused_results(vault, capsys):
    check(capsys, vault)
    _, found = check(capsys, vault / "memory/semantic/b.md")
    assert all(p == "memory/semantic/b.md" for _, p, _ in found)
    _, found = check(capsys, vault, "--select", "orphan-note")
    assert all(r == "orphan-note" for r, _, _ in found)


def test_git_rules_are_never_cached(vault, capsys):
    """The rules that read git keep no findings: the context records that they read it
    (tests/test_recorded_reads.py), no rule says so."""
    import marshal

    check(capsys, vault)
    _, _, results, *_ = marshal.loads(
        StoreEntry(vault, "results").read_bytes())
    assert "broken-link" in results
    assert not {"journal-append-only", "mass-deletion", "memory-churn"} & set(results)


SIGNED_TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# a cache directory tag\n"


def test_tool_caches_are_not_vault_content(make_vault):
    """.*_cache/ folders and folders marked by a signed CACHEDIR.TAG are never listed;
    an unsigned CACHEDIR.TAG marks nothing."""
    from vaultkit.vault.scan import walk

    root = make_vault({"memory/semantic/a.md": "# A\n",
                       ".rumdl_cache/v1/a.md": "# copy\n",
                       "memory/.ruff_cache/x.md": "# copy\n",
                       "build/CACHEDIR.TAG": SIGNED_TAG, "build/deep/n.md": "# n\n",
                       "notes/CACHEDIR.TAG": "not a signature\n", "notes/kept.md": "# kept\n"})
    rels = [f.rel for f in walk(root)[0]]
    assert "memory/semantic/a.md" in rels and "notes/kept.md" in rels
    assert not [r for r in rels if r.startswith((".rumdl_cache/", "memory/.ruff_cache/",
                                                  "build/"))]


def test_a_tool_cache_changing_keeps_the_results(vault, capsys, monkeypatch):
    (vault / ".rumdl_cache").mkdir()
    (vault / "tmp-build").mkdir()
    (vault / "tmp-build" / "CACHEDIR.TAG").write_text(SIGNED_TAG)
    first = check(capsys, vault)
    (vault / ".rumdl_cache" / "state.md").write_text("# [[nowhere]]\n")
    (vault / "tmp-build" / "out.md").write_text("# [[nowhere]]\n")
    ran = []
    for rule in all_rules():
        monkeypatch.setattr(type(rule), "check", lambda self, n, c, r=rule: ran.append(r.name) or ())
    assert check(capsys, vault) == first
    assert ran == []


@pytest.fixture
def no_note_loaded(monkeypatch):
    """Fails the test if the parse cache is opened or a note is decoded: what a warm check
    of an unchanged vault never needs."""
    import vaultkit.vault.loader as loader

    opened = []
    real_cache, real_note = loader._Cache, loader._Cache.note

    class Counting(real_cache):
        def __init__(self, *a, **k):
            opened.append("parse cache")
            super().__init__(*a, **k)

    def decoding(self, entry):
        opened.append(f"note {entry.path}")
        return real_note(self, entry)

    def arm():
        monkeypatch.setattr(loader, "_Cache", Counting)
        monkeypatch.setattr(real_cache, "note", decoding)
        return opened

    return arm


def test_a_warm_check_of_an_unchanged_vault_loads_no_note(make_vault, capsys, no_note_loaded):
    root = make_vault({"memory/semantic/a.md": "# A\n[[missing]]\n",
                       "memory/semantic/b.md": "# B\n[[a]]\n\n"
                       "<!-- vaultkit-disable-next-line broken-link -->\n[[hidden]]\n",
                       "memory/semantic/c.md": "# C\n<!-- vaultkit-disable-file -->\n[[gone]]\n",
                       "memory/semantic/d.md": "# D\n<!-- vaultkit-disable-next-line no-rule -->"
                                               "\n[[lost]]\n"})
    age_files(root)
    first = check(capsys, root)
    assert ("broken-link", "memory/semantic/a.md", 2) in first[1]
    assert ("broken-link", "memory/semantic/d.md", 3) in first[1]  # (it names no rule)
    assert not [f for f in first[1] if f[1] in ("memory/semantic/b.md", "memory/semantic/c.md")
                and f[0] == "broken-link"]  # (the suppressions hold)
    opened = no_note_loaded()
    assert check(capsys, root) == first  # suppressions too come from the results cache
    assert check(capsys, root, "--ignore", "index-stale") == (first[0], [
        f for f in first[1] if f[0] != "index-stale"])
    assert opened == []
    (root / "memory/semantic/a.md").write_text("# A\n[[b]]\n")  # a change: the notes are read
    age_files(root, 10)
    assert ("broken-link", "memory/semantic/a.md", 2) not in check(capsys, root)[1]
    assert "parse cache" in opened


def test_a_note_too_big_to_read_keeps_a_warm_check_from_loading_notes(make_vault, capsys,
                                                                      no_note_loaded):
    root = make_vault({"memory/semantic/a.md": "# A\n[[missing]]\n",
                       "memory/semantic/big.md": "# Big\n" + "x" * 5000 + "\n",
                       "vaultkit.toml": "[budgets]\nmax-file-bytes = 4000\n"})
    age_files(root)
    first = check(capsys, root)
    assert ("file-unreadable", "memory/semantic/big.md", None) in first[1]
    opened = no_note_loaded()
    assert check(capsys, root) == first
    assert opened == []


def test_importing_every_rule_compiles_none_of_their_patterns():
    """Selecting rules imports them all; a hook runs a few on one note, a warm check none:
    the rules' and the vault modules' patterns are compiled when first used, not on import."""
    import subprocess
    import sys

    probe = """
import re._compiler as rc, sys
compiled = []
real = rc.compile
def spy(p, flags=0):
    f = sys._getframe(1)
    while f is not None and "/re/" in f.f_code.co_filename:
        f = f.f_back  # (re.compile, re._compile)
    if f is not None and "/vaultkit/" in f.f_code.co_filename:
        compiled.append(f.f_code.co_filename.split("/vaultkit/")[-1])
    return real(p, flags)
rc.compile = spy
from vaultkit.lint.rules import all_rules
all_rules()
import vaultkit.vault.entries, vaultkit.vault.secretscan, vaultkit.vault.timeforms
import vaultkit.vault.outbound, vaultkit.vault.runtimes, vaultkit.links.indexgen
print("\\n".join(sorted(set(compiled))))
"""
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True).stdout.split()
    assert not [f for f in out if f.startswith("lint/rules/")], out
    for module in ("vault/entries.py", "vault/secretscan.py", "vault/timeforms.py",
                   "vault/outbound.py", "links/indexgen.py"):
        assert module not in out, out
    assert not [f for f in out if f.startswith("vault/runtimes/")], out


def test_the_rule_index_matches_the_rules():
    """The index selection reads (vaultkit/lint/rules/_index.py, generated by
    ``python -m vaultkit.lint.docsgen``) says of each rule what its class says."""
    from vaultkit.lint.docsgen import INDEX_FILE, rule_index
    from vaultkit.lint.rules import RuleRef, rule_refs
    from vaultkit.lint.rules._index import RULES

    assert INDEX_FILE.read_text(encoding="utf-8") == rule_index(), \
        "vaultkit/lint/rules/_index.py is stale: run `python -m vaultkit.lint.docsgen`"
    real = [(r.code, r.name, type(r).__module__.rsplit(".", 1)[1], r.severity, r.fixable,
             r.scope) for r in all_rules()]
    assert list(RULES) == real
    refs = rule_refs()
    assert all(isinstance(r, RuleRef) for r in refs)
    assert [(r.code, r.name, r.severity, r.fixable, r.scope) for r in refs] == \
        [(c, n, s, f, sc) for c, n, _, s, f, sc in real]
    assert refs[0].summary() == all_rules()[0].summary()  # (anything else: the rule itself)
    from vaultkit.lint.rules._index import OFF_BY_DEFAULT

    assert OFF_BY_DEFAULT == {r.name for r in all_rules() if not r.default}
    assert [r.default for r in refs] == [r.default for r in all_rules()]


def test_a_warm_check_imports_no_rule_it_does_not_run(vault, capsys):
    """An unchanged vault's findings come from the results cache: only the rules that read
    git history (never cached) are imported to run."""
    check(capsys, vault)
    imported = {m.rsplit(".", 1)[1] for m in modules_after_check(vault)
                if m.startswith("vaultkit.lint.rules.") and not m.endswith("._index")}
    assert imported <= {"journal_append_only", "mass_deletion", "memory_churn"}, imported


def test_a_warm_check_without_a_baseline_imports_neither_it_nor_json(vault, capsys):
    """A vault with no baseline is told by one lstat, not by loading the baseline module;
    text output needs no JSON (nor do Obsidian's settings files the vault does not have)."""
    check(capsys, vault)
    imported = modules_after_check(vault)
    assert "vaultkit.lint.report" in imported  # (the probe did print a report)
    assert not imported & {"vaultkit.lint.baseline", "json"}, imported & {
        "vaultkit.lint.baseline", "json"}


def test_a_baseline_beside_a_warm_check_is_still_read(vault, capsys):
    _, first = check(capsys, vault)
    main(["check", str(vault), "--write-baseline"])
    capsys.readouterr()
    assert check(capsys, vault) == (0, [])  # every finding is in the baseline
    (vault / "vaultkit-baseline.json").unlink()
    assert check(capsys, vault)[1] == first


def test_a_deferred_vault_answers_from_its_listing_as_the_loaded_one_would(vault):
    from vaultkit.vault.deferred import DeferredVault
    from vaultkit.vault.loader import load_vault, scan_vault

    (vault / "memory/semantic/pic.png").write_bytes(b"png")
    (vault / "memory/semantic/notes.MD").write_text("# upper-case suffix\n")
    deferred = DeferredVault(scan_vault(vault))
    loaded = load_vault(vault)
    probes = ["memory/semantic/a.md", "memory/semantic/b.md", "memory/semantic/notes.MD",
              "memory/semantic/pic.png", "memory/semantic/A.md", "memory/semantic/c.md",
              "memory/semantic", "", "zzz.md"]
    assert [deferred.has_note(p) for p in probes] == [loaded.has_note(p) for p in probes]
    assert deferred.attachments == loaded.attachments
    assert not deferred.loaded  # (neither question loaded a note)
    assert deferred.has_note("../MEMORY.md") == loaded.has_note("../MEMORY.md")
    assert deferred.attachments == loaded.attachments  # (the same once loaded)


def test_suppressions_kept_later_leave_the_findings_as_old_as_they_were(vault, capsys):
    """A warm run that only adds a note's suppression comments (a git rule's finding in a
    note no cached finding is in) rewrites the results cache without making its findings
    look newer than the listing they were computed from."""
    import marshal

    from vaultkit.lint.engine import ResultsCache
    from vaultkit.vault.loader import load_vault

    check(capsys, vault)
    path = StoreEntry(vault, "results")
    computed_from = marshal.loads(path.read_bytes())[1]
    cache = ResultsCache(load_vault(vault))
    assert cache.matched
    cache.keep_suppressions("memory/semantic/b.md", [])
    cache.save()
    key, stamp, _, suppressions, *_ = marshal.loads(path.read_bytes())
    assert stamp == computed_from and key == cache.key
    assert suppressions["memory/semantic/b.md"] == []


def _spy(monkeypatch, names):
    """Record the notes the rules ``names`` check (and check them as before)."""
    seen = {name: [] for name in names}
    for rule in all_rules():
        if rule.name in seen:
            real = type(rule).check

            def spying(self, note, ctx, real=real, into=seen[rule.name]):
                into.append(note.path)
                return real(self, note, ctx)
            monkeypatch.setattr(type(rule), "check", spying)
    return seen


def _write_aged(path, text: str) -> None:
    import time

    path.write_text(text, encoding="utf-8")
    old = time.time() - 30  # (older than the racy margin: the next run may trust it)
    os.utime(path, (old, old))


def test_after_a_change_a_rule_runs_on_the_changed_note_and_the_notes_that_read_it(
        make_vault, capsys, monkeypatch):
    """A check after one note changed keeps each rule's findings on the notes none of whose
    recorded inputs changed (Context.read), and runs the rule on the changed note and on the
    notes whose findings read it (a heading link's target). The findings are those of a run
    without any cache."""
    files = {f"memory/semantic/n{i}.md": f"# N{i}\n\nSee [[n{i + 1}]].\n" for i in range(6)}
    files["memory/semantic/bad.md"] = "---\ntitle: [unclosed\n---\n# Bad\n\n[[nowhere]]\n"
    # a heading link reads its target's headings: it is checked again when they change
    files["memory/semantic/toc.md"] = "# Toc\n\n[[n2#N2]] and [[n3#N3]]\n"
    root = make_vault(files)
    (root / "vaultkit.toml").write_text('extend-select = ["orphan-note"]\n')  # (off by default)
    age_files(root)
    first = check(capsys, root)
    assert ("frontmatter-invalid", "memory/semantic/bad.md", 2) in first[1]
    assert not [f for f in first[1] if f[1] == "memory/semantic/toc.md"]
    seen = _spy(monkeypatch, ["frontmatter-invalid", "broken-link", "orphan-note"])
    _write_aged(root / "memory/semantic/n2.md", "---\ntype: [x\n---\n# Renamed\n\n[[n9]]\n")
    code, found = check(capsys, root)
    assert seen["frontmatter-invalid"] == ["memory/semantic/n2.md"]
    assert sorted(seen["broken-link"]) == ["memory/semantic/n2.md", "memory/semantic/toc.md"]
    # (and orphan-note on n2 and the notes it links to now: none, [[n9]] is missing)
    assert seen["orphan-note"] == ["memory/semantic/n2.md"]
    assert (code, found) == check(capsys, root, "--no-cache")
    assert {("frontmatter-invalid", "memory/semantic/bad.md", 2),
            ("frontmatter-invalid", "memory/semantic/n2.md", 2),
            ("broken-link", "memory/semantic/n2.md", 6),
            ("broken-link", "memory/semantic/toc.md", 3),
            ("broken-link", "memory/semantic/bad.md", 6)} <= set(found)
    # the heading put back: the link mends, its note is checked again
    for spied in seen.values():
        spied.clear()
    _write_aged(root / "memory/semantic/n2.md", "# N2\n\nSee [[n3]].\n")
    code, found = check(capsys, root)
    assert sorted(seen["broken-link"]) == ["memory/semantic/n2.md", "memory/semantic/toc.md"]
    assert (code, found) == check(capsys, root, "--no-cache") == first
    # a note added (or removed, or renamed): the names changed, every note is checked again
    seen["frontmatter-invalid"].clear()
    _write_aged(root / "memory/semantic/n9.md", "# N9\n")
    code, found = check(capsys, root)
    assert len(seen["frontmatter-invalid"]) == len(files) + 1
    assert (code, found) == check(capsys, root, "--no-cache")
    assert ("broken-link", "memory/semantic/n2.md", 6) not in found


def test_a_note_changed_within_the_racy_margin_of_the_last_run_is_checked_again(
        make_vault, capsys, monkeypatch):
    """A note written in the same clock tick as the last run's listing may have changed
    after it with the same size and mtime: its findings are not kept."""
    import time

    root = make_vault({"memory/semantic/a.md": "# A\n", "memory/semantic/b.md": "# B\n"})
    age_files(root)
    recent = root / "memory/semantic/b.md"
    now = time.time()
    os.utime(recent, (now, now))  # (as new as the run about to list it)
    check(capsys, root)
    seen = _spy(monkeypatch, ["frontmatter-invalid"])
    _write_aged(root / "memory/semantic/a.md", "# A, again\n")
    check(capsys, root)
    assert sorted(seen["frontmatter-invalid"]) == ["memory/semantic/a.md",
                                                   "memory/semantic/b.md"]


def test_a_note_decoded_from_the_cache_for_its_links_reads_no_text(make_vault, capsys,
                                                                    monkeypatch):
    """After a change, the rules that read every note's links (broken-link) decode the notes
    from the parse cache without reading their files; a note's text is read when a rule
    asks for it."""
    import vaultkit.vault.loader as loader

    files = {f"memory/semantic/n{i}.md": f"# N{i}\n\nSee [[n{i + 1}]].\n" for i in range(8)}
    root = make_vault(files)
    age_files(root)
    check(capsys, root)
    _write_aged(root / "memory/semantic/n3.md", "# N3\n\nSee [[n4]] and [[gone]].\n")
    read = []
    real = loader._read_text
    monkeypatch.setattr(loader, "_read_text", lambda note: read.append(note.path) or real(note))
    _, found = check(capsys, root)
    assert ("broken-link", "memory/semantic/n3.md", 3) in found
    assert set(read) <= {"memory/semantic/n3.md"}  # (the changed note only)
    read.clear()
    vault = loader.load_vault(root)
    note = vault.notes["memory/semantic/n5.md"]
    assert [link.target for link in note.links] == ["n6"] and read == []
    assert note.text == files["memory/semantic/n5.md"] and read == ["memory/semantic/n5.md"]


def test_a_cache_of_another_format_after_a_change_means_a_full_run(make_vault, capsys,
                                                                  monkeypatch):
    """A results file of an earlier shape (format 2 named, per note, the other notes a rule
    said it read) is never taken for one holding the inputs the context recorded: after an
    edit that takes a note's only link away, it must not hide the new orphan."""
    import vaultkit.lint.engine as engine

    root = make_vault({"memory/decisions/a.md": "# A\n",
                       "memory/projects/p.md": "# P\n\nsee [[a]]\n",
                       "memory/2026-01-01.md": "# Day\n\nsee [[p]]\n",
                       "vaultkit.toml": 'extend-select = ["orphan-note"]\n'})
    age_files(root)
    monkeypatch.setattr(engine, "RESULTS_FORMAT", 2)
    monkeypatch.setattr(engine.ResultsCache, "put",
                        lambda self, rule, found, reads=None, real=engine.ResultsCache.put:
                        real(self, rule, found, None))  # (as a build that kept no inputs)
    check(capsys, root)
    monkeypatch.undo()
    _write_aged(root / "memory/projects/p.md", "# P\n\nno link\n")
    found = check(capsys, root)
    assert ("orphan-note", "memory/decisions/a.md", 1) in found[1]
    assert found == check(capsys, root, "--no-cache")


def test_a_damaged_results_cache_after_a_change_means_a_full_run(make_vault, capsys):
    import marshal

    files = {f"memory/semantic/n{i}.md": "---\ntitle: [x\n---\n# N\n" for i in range(4)}
    root = make_vault(files)
    age_files(root)
    check(capsys, root)
    path = StoreEntry(root, "results")
    key, stamp, results, suppressions, *last = marshal.loads(path.read_bytes())
    results["frontmatter-invalid"] = [{"not": "a finding"}] + results["frontmatter-invalid"]
    path.write_bytes(marshal.dumps((key, stamp, results, suppressions, last[0],
                                    [10 ** 30], *last[2:])))
    _write_aged(root / "memory/semantic/n1.md", "# N1, fixed\n")
    assert check(capsys, root) == check(capsys, root, "--no-cache")
    path.write_bytes(marshal.dumps((key, stamp, results, suppressions, *last)))
    _write_aged(root / "memory/semantic/n2.md", "# N2, fixed\n")
    assert check(capsys, root) == check(capsys, root, "--no-cache")
    key, stamp, results, suppressions, *last = marshal.loads(path.read_bytes())
    last[3] = {"broken-link": b"\xff" * 9}  # (not pairs of positions)
    path.write_bytes(marshal.dumps((key, stamp, results, suppressions, *last)))
    _write_aged(root / "memory/semantic/n3.md", "# N3, fixed\n")
    assert check(capsys, root) == check(capsys, root, "--no-cache")


def test_a_cached_note_its_reader_cannot_open_is_read_at_once(make_vault, monkeypatch):
    """A note made unreadable keeps its size and mtime: decoding it from the parse cache
    reads its file at once (the error is seen) instead of when its text is asked for."""
    import vaultkit.vault.loader as loader
    from vaultkit.vault.loader import load_vault

    root = make_vault({"memory/semantic/a.md": "# A\n\n[[b]]\n",
                       "memory/semantic/b.md": "# B\n\n[[a]]\n"})
    age_files(root)
    load_vault(root)  # (the parse cache)
    read = []
    real = loader._read_text
    monkeypatch.setattr(loader, "_read_text", lambda note: read.append(note.path)
                        or real(note))
    blocked = str(root / "memory/semantic/a.md")
    real_access = loader.os.access
    monkeypatch.setattr(loader.os, "access",
                        lambda path, mode: path != blocked and real_access(path, mode))
    vault = load_vault(root)
    assert vault.notes["memory/semantic/b.md"].links and read == []
    assert vault.notes["memory/semantic/a.md"].links and read == ["memory/semantic/a.md"]


def test_the_reads_of_findings_reused_as_they_were_are_kept_for_the_next_change(
        make_vault, capsys):
    """A run that reuses broken-link's findings and runs another rule writes the results
    cache again: the notes broken-link's findings read are kept with them, so that a
    later change to such a note still checks the note that links into it."""
    root = make_vault({"memory/semantic/n2.md": "# N2\n",
                       "memory/semantic/toc.md": "# Toc\n\n[[n2#N2]]\n"})
    age_files(root)
    check(capsys, root, "--select", "VK501")  # (broken-link's findings and reads)
    check(capsys, root)  # (reused; the other rules run and the file is written again)
    _write_aged(root / "memory/semantic/n2.md", "# Renamed\n")
    found = check(capsys, root)
    assert ("broken-link", "memory/semantic/toc.md", 3) in found[1]
    assert found == check(capsys, root, "--no-cache")


def test_obsidians_daily_notes_settings_are_part_of_what_the_findings_depend_on(make_vault,
                                                                                capsys):
    """A dated note outside the memory folder is an Obsidian daily note where the vault's
    daily-notes settings put it, else a journal the runtime never loads: a change to those
    settings (outside the listed files) is seen by the next check."""
    root = make_vault({"memory/semantic/a.md": "# A\n", "2026-01-05.md": "# Monday\n"})
    settings = root / ".obsidian" / "daily-notes.json"
    settings.parent.mkdir(exist_ok=True)
    settings.write_text('{"folder": ""}', encoding="utf-8")
    age_files(root)
    finding = ("unknown-location", "2026-01-05.md", 1)
    assert finding not in check(capsys, root)[1]
    settings.unlink()
    assert finding in check(capsys, root)[1]
    settings.write_text('{"folder": ""}', encoding="utf-8")
    _write_aged(root / "memory/semantic/a.md", "# A, again\n")  # (and a note changed)
    assert finding not in check(capsys, root)[1]


def test_after_a_change_orphan_note_judges_only_the_notes_the_change_reaches(
        make_vault, capsys, monkeypatch):
    """orphan-note's findings on a note read the notes reaching it (Context.inbound, whose
    answer the context records): after a change it runs on the changed notes, on the notes
    one of whose sources changed and on the notes the changed ones link to or name now,
    nothing else. The findings are those of a run without any cache at every step."""
    decisions = {f"memory/decisions/d{i}.md": f"# D{i}\n\nDecided {i}.\n" for i in range(6)}
    files = {**decisions,
             "memory/2026-03-01.md": "# 2026-03-01\n\n### 10:00 — Work\n- [[d0]] and [[d1]]\n",
             "memory/projects/p.md": "# P\n\nSee [[d1]].\n",
             **{f"memory/projects/s{i}.md": f"# S{i}\n\nSee [[d4]].\n" for i in range(4)},
             "vaultkit.toml": 'extend-select = ["orphan-note"]\n'}
    root = make_vault(files)
    age_files(root)
    journal = root / "memory/2026-03-01.md"
    judged = []  # (by the run after the change, not the run without cache)

    def orphans():
        code, found = check(capsys, root)
        judged[:] = sorted(seen["orphan-note"])
        assert (code, found) == check(capsys, root, "--no-cache")
        return sorted(p for rule, p, _ in found
                      if rule == "orphan-note" and p.startswith("memory/decisions/"))

    seen = {"orphan-note": []}
    assert orphans() == [f"memory/decisions/d{i}.md" for i in (2, 3, 5)]
    seen = _spy(monkeypatch, ["orphan-note"])

    def step(path, text):
        seen["orphan-note"].clear()
        _write_aged(path, text)
        return orphans()

    # a link added: the journal and the decision it now links are judged, nothing else
    now = step(journal, journal.read_text() + "- and [[d3]]\n")
    assert now == ["memory/decisions/d2.md", "memory/decisions/d5.md"]
    assert judged == ["memory/2026-03-01.md", "memory/decisions/d0.md",
                      "memory/decisions/d1.md", "memory/decisions/d3.md"]
    # a link removed: the decision whose only source it was is an orphan again
    now = step(journal, "# 2026-03-01\n\n### 10:00 — Work\n- [[d1]] and [[d3]]\n")
    assert now == [f"memory/decisions/d{i}.md" for i in (0, 2, 5)]
    assert judged == ["memory/2026-03-01.md", "memory/decisions/d0.md",
                      "memory/decisions/d1.md", "memory/decisions/d3.md"]
    # a path written out counts as a link
    now = step(journal, journal.read_text() + "- see `memory/decisions/d5.md`\n")
    assert now == ["memory/decisions/d0.md", "memory/decisions/d2.md"]
    assert judged == ["memory/2026-03-01.md", "memory/decisions/d1.md",
                      "memory/decisions/d3.md", "memory/decisions/d5.md"]
    # a decision edited: judged again, alone
    now = step(root / "memory/decisions/d1.md", "# D1\n\nDecided 1, again.\n")
    assert now == ["memory/decisions/d0.md", "memory/decisions/d2.md"]
    assert judged == ["memory/decisions/d1.md"]
    # d4's sources go one by one: judged each time, an orphan once the last is gone
    for i in range(3):
        now = step(root / f"memory/projects/s{i}.md", f"# S{i}\n\nNothing.\n")
        assert now == ["memory/decisions/d0.md", "memory/decisions/d2.md"]
        assert judged == ["memory/decisions/d4.md", f"memory/projects/s{i}.md"]
    now = step(root / "memory/projects/s3.md", "# S3\n\nNothing.\n")
    assert now == [f"memory/decisions/d{i}.md" for i in (0, 2, 4)]


def test_the_runtimes_that_apply_are_part_of_what_the_findings_depend_on(make_vault, capsys):
    """Which runtimes apply is decided by marker folders too (`.codex/`, `.claude/`), which
    are no listed file: one made with no file changed is seen by the next check. Here Codex
    comes to apply, and it cuts AGENTS.md at 32 KiB (before, a warm check reused the
    findings of the vault without it and missed the cut)."""
    import shutil

    rules = "".join(f"- rule {i}: always do the thing number {i} carefully.\n" for i in range(700))
    root = make_vault({"CLAUDE.md": "# Claude\n", "AGENTS.md": "# Agents\n" + rules},
                      root_name="ws")
    age_files(root)
    cut = ("bootstrap-truncation", "AGENTS.md")
    assert cut not in {f[:2] for f in check(capsys, root)[1]}
    (root / ".codex").mkdir()
    found = check(capsys, root)
    assert cut in {f[:2] for f in found[1]} and found == check(capsys, root, "--no-cache")
    shutil.rmtree(root / ".codex")
    assert cut not in {f[:2] for f in check(capsys, root)[1]}


def test_skill_not_loaded_sees_openclaw_come_to_apply(make_vault, capsys, monkeypatch):
    """skill-not-loaded judges skills only where OpenClaw applies: a memory folder made
    (OpenClaw's layout, no file in it yet) makes it judge every skill. It judges the skills
    together (a batch of stubs is one finding), so a change runs it again."""
    root = make_vault({"CLAUDE.md": "# Plugin\n", "skills/deploy/SKILL.md": "Deploy it.\n",
                       "docs/a.md": "# A\n"}, root_name="plugin")
    age_files(root)
    skill = ("skill-not-loaded", "skills/deploy/SKILL.md", 1)
    assert skill not in check(capsys, root)[1]
    (root / "memory").mkdir()
    assert skill in check(capsys, root)[1]
    _write_aged(root / "docs/a.md", "# A, again\n")
    found = check(capsys, root)
    assert skill in found[1] and found == check(capsys, root, "--no-cache")


def test_a_warm_check_tells_the_listing_unchanged_without_listing_each_notes_state(
        make_vault, capsys, monkeypatch):
    # the commit hook's and a warm check's cost: the newest ctime and the largest size of
    # the listing decide (nothing racy, nothing over the limit), not 10,000 tuples
    from vaultkit.vault.deferred import DeferredVault
    from vaultkit.vault.loader import Scan

    root = make_vault({"memory/semantic/a.md": "# A\n[[missing]]\n",
                       "attachments/big.bin": "x" * 5000,
                       "vaultkit.toml": "[budgets]\nmax-file-bytes = 4000\n"})
    age_files(root)
    first = check(capsys, root)
    assert first == check(capsys, root, "--no-cache")
    listed = []
    for cls, name in ((Scan, "note_numbers"), (DeferredVault, "listed_states")):
        monkeypatch.setattr(cls, name, lambda self, f=getattr(cls, name), n=name:
                            listed.append(n) or f(self))
    # (files made a moment ago have ctimes in the racy margin, which are listed one by one:
    # a margin of a microsecond makes them as old as a real vault's)
    from vaultkit.vault import store

    monkeypatch.setattr(store, "RACY_NS", 1000)
    assert check(capsys, root) == first
    assert listed == []


def test_an_attachment_over_the_size_limit_is_no_note_over_it(make_vault, capsys):
    root = make_vault({"memory/semantic/a.md": "# A\n[[missing]]\n",
                       "memory/semantic/big.md": "# Big\n" + "x" * 5000 + "\n",
                       "attachments/big.bin": "x" * 9000,
                       "vaultkit.toml": "[budgets]\nmax-file-bytes = 4000\n"})
    age_files(root)
    fresh = check(capsys, root, "--no-cache")
    assert ("file-unreadable", "memory/semantic/big.md", None) in fresh[1]
    assert not [f for f in fresh[1] if f[1] == "attachments/big.bin"]
    assert check(capsys, root) == fresh
    assert check(capsys, root) == fresh  # (warm: from the listing's sizes)
