"""`vaultkit check` end to end: the foundation's four faults, every format, exit codes."""

import json
import os
import shutil
from pathlib import Path

import pytest

from vaultkit.cli import main
from vaultkit.cli.starter import init_vault

FAULTS = {
    "memory/2026-02-15-1430.md": "# 2026-02-15\n",
    "memory/2026-02-30.md": "# nope\n",
    "memory/today.md": "# today\n",
    "memory/decision/launch.md": "# Launch\n",
    "memory/decisions/pricing.md": "---\ndate: 2026-02-08\ntags: [a, b\n---\n# Pricing\n",
    "memory/2026-02-14.md": b"# 2026-02-14\n\ncaf\xe9\n",
}

EXPECTED = {
    ("file-unreadable", "memory/2026-02-14.md", 1),
    ("frontmatter-invalid", "memory/decisions/pricing.md", 3),  # the unclosed tags: line
    ("unknown-location", "memory/decision/launch.md", 1),
    ("journal-filename", "memory/2026-02-15-1430.md", 1),
    ("journal-filename", "memory/2026-02-30.md", 1),
    ("journal-filename", "memory/today.md", 1),
}

FOUNDATION = "file-unreadable,frontmatter-invalid,unknown-location,journal-filename"


@pytest.fixture
def faulty(make_vault):
    return make_vault(FAULTS)


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_each_fault_reported_once_with_path_and_line(faulty, capsys):
    code, out, _ = run(capsys, "check", str(faulty), "--format", "json", "--no-cache",
                       "--select", FOUNDATION)
    found = {(d["rule"], d["path"], d["line"]) for d in json.loads(out)}
    assert found == EXPECTED
    assert code == 1


def test_json_fields(faulty, capsys):
    _, out, _ = run(capsys, "check", str(faulty), "--format", "json", "--select", FOUNDATION)
    for d in json.loads(out):
        assert set(d) >= {"rule", "code", "severity", "path", "line", "column", "message",
                          "fixable"}
        assert d["code"].startswith("VK") and "\\" not in d["path"]


def test_text_format(faulty, capsys, monkeypatch):
    monkeypatch.chdir(faulty)
    _, out, _ = run(capsys, "check", "--select", FOUNDATION)
    lines = out.splitlines()
    assert ("memory/decisions/pricing.md:3:1: VK002 frontmatter-invalid error: frontmatter is not "
            "valid YAML") in out
    assert any(ln.startswith("memory/2026-02-30.md:1:1: VK102 journal-filename ") for ln in lines)
    assert lines[-1] == "Found 6 findings (5 errors, 1 warning)."
    assert "\033[" not in out  # no colour when not a terminal


def test_github_format(faulty, capsys, monkeypatch):
    monkeypatch.chdir(faulty)
    _, out, _ = run(capsys, "check", "--format", "github", "--select", FOUNDATION)
    assert ("::error file=memory/decisions/pricing.md,line=3,col=1,title=VK002 "
            "frontmatter-invalid::VK002 frontmatter-invalid: frontmatter is not valid YAML") in out
    assert "::warning file=memory/decision/launch.md,line=1" in out
    assert len(out.splitlines()) == 6


def test_sarif_format(faulty, capsys):
    _, out, _ = run(capsys, "check", str(faulty), "--format", "sarif", "--select", FOUNDATION)
    log = json.loads(out)
    assert log["version"] == "2.1.0"
    run_ = log["runs"][0]
    rules = run_["tool"]["driver"]["rules"]
    assert {r["id"] for r in rules} == {"VK001", "VK002", "VK101", "VK102"}
    results = {(r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
                r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in run_["results"]}
    assert ("VK002", "memory/decisions/pricing.md", 3) in results
    assert len(results) == 6
    for r in run_["results"]:
        assert rules[r["ruleIndex"]]["id"] == r["ruleId"]
        assert r["level"] in ("error", "warning")


def test_clean_starter_vault_exits_zero(tmp_path, capsys):
    init_vault(tmp_path / "demo")
    code, out, _ = run(capsys, "check", str(tmp_path / "demo"))
    assert (code, out.strip()) == (0, "All checks passed!")


def test_warnings_alone_exit_zero_unless_fail_on_warning(make_vault, capsys):
    root = make_vault({"memory/decision/x.md": "# x\n"})
    assert run(capsys, "check", str(root), "--select", "unknown-location")[0] == 0
    assert run(capsys, "check", str(root), "--select", "unknown-location",
               "--fail-on", "warning")[0] == 1
    assert run(capsys, "check", str(root), "--exit-zero", "--select", "ALL",
               "--fail-on", "warning")[0] == 0


def test_paths_limit_what_is_reported(faulty, capsys):
    _, out, _ = run(capsys, "check", str(faulty / "memory" / "decisions"), "--format", "json",
                    "--select", FOUNDATION)
    assert {d["path"] for d in json.loads(out)} == {"memory/decisions/pricing.md"}
    _, out, _ = run(capsys, "check", str(faulty / "memory" / "today.md"), "--format", "json",
                    "--select", FOUNDATION)
    assert {d["path"] for d in json.loads(out)} == {"memory/today.md"}


def test_select_ignore_by_name_code_and_prefix(faulty, capsys):
    def rules_for(*args):
        _, out, _ = run(capsys, "check", str(faulty), "--format", "json", *args)
        return {d["rule"] for d in json.loads(out)}

    assert rules_for("--select", "VK102") == {"journal-filename"}
    assert rules_for("--select", "VK1") == {"journal-filename", "unknown-location"}
    assert rules_for("--select", FOUNDATION, "--ignore", "journal-filename,VK001") == {
        "frontmatter-invalid", "unknown-location"}


def test_statistics(faulty, capsys):
    _, out, _ = run(capsys, "check", str(faulty), "--statistics", "--select", FOUNDATION)
    assert "    3\tVK102\t    journal-filename" in out


def test_statistics_in_json(faulty, capsys):
    # `--statistics --format json` printed the text table: a script got no JSON
    code, out, _ = run(capsys, "check", str(faulty), "--statistics", "--format", "json",
                       "--select", FOUNDATION)
    counts = json.loads(out)
    assert {"code": "VK102", "rule": "journal-filename", "count": 3,
            "fixable": False} in counts
    assert [c["count"] for c in counts] == sorted((c["count"] for c in counts), reverse=True)
    _, text, _ = run(capsys, "check", str(faulty), "--statistics", "--select", FOUNDATION)
    assert sum(c["count"] for c in counts) == sum(int(x.split()[0]) for x in text.splitlines())


def test_output_file(faulty, tmp_path, capsys):
    target = tmp_path / "report.json"
    run(capsys, "check", str(faulty), "--format", "json", "-o", str(target), "--select", FOUNDATION)
    assert len(json.loads(target.read_text())) == 6


@pytest.mark.parametrize("args,needle", [
    (["check", "--select", "no-such-rule"], "unknown rule 'no-such-rule'"),
    (["check", "--format", "xml"], "invalid choice"),
    (["rule", "nope"], "unknown rule 'nope'"),
    (["check", "/no/such/folder"], "no such file or folder"),
])
def test_usage_errors_exit_2_with_one_line(args, needle, make_vault, capsys, monkeypatch):
    monkeypatch.chdir(make_vault({}))
    code, out, err = run(capsys, *args)
    assert code == 2
    assert needle in err
    assert "Traceback" not in err


@pytest.mark.parametrize("toml,needle", [
    ("bogus = 1\n", "vaultkit.toml: unknown key 'bogus'"),
    ("[severity]\nbroken-link = 'fatal'\n", "vaultkit.toml: severity.broken-link:"),
    ("select = 'x'\n", "vaultkit.toml: select:"),
    ("profile = 'nope'\n", "vaultkit.toml: profile: unknown profile 'nope'"),
    ("[phrases]\nfiller = ['re:(unclosed']\n", "does not compile"),
    ("[budgets]\nmemory-md-byte = 1\n", "unknown budget 'memory-md-byte'"),
    ("[budgets]\nmemory-md-bytes = -1\n", "budgets.memory-md-bytes: must be at least 0"),
    ("[git]\nmass-deletion-ratio = 2\n", "git.mass-deletion-ratio: must be greater than 0"),
    ("[index]\nrecent-days = -3\n", "index.recent-days: must be at least 0"),
    ("fail-on = 'bogus'\n", "vaultkit.toml: fail-on:"),
    ("[[layers]]\nname = 'x'\npaths = ['x/*.md']\nentry-level = 'deep'\n",
     "vaultkit.toml: layers.0.entry-level:"),
    ("this is not toml", "not valid TOML"),
    ("ignore = ['not-a-rule']\n", "unknown rule 'not-a-rule'"),
    ("[per-file-ignores]\n'x/*' = ['nope']\n", "unknown rule 'nope'"),
])
def test_bad_config_exit_2_one_line(toml, needle, make_vault, capsys):
    root = make_vault({"vaultkit.toml": toml})
    code, out, err = run(capsys, "check", str(root))
    assert code == 2
    assert needle in err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


def test_bad_profile_names_file_and_field(make_vault, capsys):
    root = make_vault({"pack.yaml": "name: x\nlayers:\n  - name: a\n    pathz: [x]\n",
                       "vaultkit.toml": "profile = 'pack.yaml'\n"})
    code, _, err = run(capsys, "check", str(root))
    assert code == 2
    assert "pack.yaml: layers.0." in err and len(err.strip().splitlines()) == 1


def test_config_severity_and_per_file_ignores(make_vault, capsys):
    root = make_vault({
        "vaultkit.toml": "[severity]\nunknown-location = 'error'\n"
                         "[per-file-ignores]\n'memory/decision/skip*' = ['VK101']\n",
        "memory/decision/x.md": "# x\n",
        "memory/decision/skipme.md": "# y\n",
    })
    code, out, _ = run(capsys, "check", str(root), "--format", "json", "--select", "VK101")
    diags = json.loads(out)
    assert [(d["path"], d["severity"]) for d in diags] == [("memory/decision/x.md", "error")]
    assert code == 1


def test_exclude(make_vault, capsys):
    root = make_vault({"vaultkit.toml": "exclude = ['drafts/**', 'memory/scratch.md']\n",
                       "drafts/a/b.md": "# b\n", "memory/scratch.md": "x\n"})
    code, out, _ = run(capsys, "check", str(root), "--format", "json")
    assert json.loads(out) == []


def test_the_walk_asks_the_full_exclusion_per_folder_and_the_file_path_per_file(make_vault):
    """Each folder's exclusion is decided when the walk enters it, so a file in it is
    excluded only by its own path: the same listing, without asking every file's folders
    again (10,000 files, ~40 folders on the bench vault)."""
    from vaultkit.vault.profile import load_settings
    from vaultkit.vault.scan import walk

    root = make_vault({"vaultkit.toml": "exclude = ['drafts/**', 'memory/scratch.md', "
                                        "'memory/*/tmp', 'notes/x*.md']\n",
                       "drafts/a/b.md": "# b\n", "memory/scratch.md": "x\n",
                       "memory/semantic/tmp/c.md": "# c\n", "memory/semantic/d.md": "# d\n",
                       "notes/x1.md": "# x\n", "notes/y1.md": "# y\n", "venv": "a file\n",
                       "backups/e.md": "# e\n", "memory/backups/f.md": "# f\n",
                       "notes/venv/g.md": "# g\n"})
    settings = load_settings(root)
    asked: list[str] = []

    def full(rel):
        asked.append(rel)
        return settings.is_excluded(rel)

    whole = [f.rel for f in walk(root, full)[0]]
    asked.clear()
    fast = [f.rel for f in walk(root, full, is_excluded_file=settings.is_excluded_file)[0]]
    assert fast == whole
    assert sorted(whole) == ["memory/backups/f.md", "memory/semantic/d.md",
                             "notes/venv/g.md", "notes/y1.md", "vaultkit.toml"]
    assert not [rel for rel in asked if rel.endswith(".md")]  # folders only


@pytest.mark.skipif(os.scandir not in os.supports_fd, reason="no fd-relative listing here")
def test_the_walk_stats_each_file_by_its_name_in_its_open_folder(make_vault, monkeypatch):
    """Each folder is opened once and listed from that descriptor, so a file's stat resolves
    one name, not the whole path again; paths and sizes are what a listing by path gives."""
    from vaultkit.vault.scan import walk

    root = make_vault({"memory/semantic/deep/er/a.md": "# A\n", "memory/b.md": "# B!\n",
                       "c.md": "# C\n"})
    (root / "memory/link.md").symlink_to(root / "c.md")
    opened = []
    real_open = os.open

    def spying(path, flags, *args, **kwargs):
        if flags & os.O_DIRECTORY:
            opened.append(os.fspath(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", spying)
    folders: list[str] = []
    files, problems = walk(root, None, folders)
    assert problems == []
    assert len(opened) == len(folders) == len(set(opened))  # each listed folder, once
    got = {f.rel: (f.abs, f.size) for f in files}
    for rel in ("memory/semantic/deep/er/a.md", "memory/b.md", "c.md", "memory/link.md"):
        assert got[rel] == (str(root / rel), os.stat(root / rel).st_size)


def test_suppression_comments(make_vault, capsys):
    root = make_vault({
        "memory/decision/a.md": "<!-- vaultkit-disable-file unknown-location -->\n# a\n",
        "memory/decision/b.md": "<!-- vaultkit-disable-next-line VK101 -->\n# b\n",
        "memory/decision/c.md": "# c\n<!-- vaultkit-disable-next-line VK101 -->\n",
        "memory/decision/d.md": "<!-- vaultkit-disable -->\n# d\n",
    })
    _, out, _ = run(capsys, "check", str(root), "--format", "json", "--select", "VK101")
    # b.md: the finding is on line 1, the line of the comment itself, not the next one;
    # c.md: the comment is below it
    assert [d["path"] for d in json.loads(out)] == ["memory/decision/b.md", "memory/decision/c.md"]


def test_root_discovery_from_a_subfolder_and_override(make_vault, capsys, monkeypatch):
    # memory/ holds a bootstrap file, so --root may name it (a folder without a vault
    # marker is not a vault); memory/memroy/ is a topical folder from the vault root, but
    # with memory/ as the root 'memroy/' is one slip from the memory folder's name
    root = make_vault({"memory/decision/x.md": "# x\n", "memory/MEMORY.md": "# Memory\n",
                       "memory/memroy/y.md": "# y\n"})
    monkeypatch.chdir(root / "memory")
    _, out, _ = run(capsys, "check", "--format", "json", "--select", "VK101")
    assert [d["path"] for d in json.loads(out)] == ["memory/decision/x.md"]
    _, out, _ = run(capsys, "check", "--format", "json", "--select", "VK101", "--root", str(root / "memory"))
    assert [d["path"] for d in json.loads(out)] == ["memroy/y.md"]


def test_memory_only_layout(tmp_path, capsys):
    workspace = tmp_path / "ws"
    init_vault(workspace)
    memory = workspace / "memory"
    (memory / "vaultkit.toml").write_text("memory-dir = '.'\n")
    (memory / "2026-2-3.md").write_text("# x\n")
    code, out, _ = run(capsys, "check", str(memory), "--format", "json",
                       "--select", FOUNDATION)
    assert [(d["rule"], d["path"]) for d in json.loads(out)] == [("journal-filename", "2026-2-3.md")]


def test_version_fast_path(capsys):
    from vaultkit import __version__

    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"vaultkit {__version__}"


def test_rules_and_rule_commands(capsys):
    code, out, _ = run(capsys, "rules", "--format", "json")
    names = {r["name"] for r in json.loads(out)}
    assert {"file-unreadable", "frontmatter-invalid", "unknown-location", "journal-filename"} <= names
    code, out, _ = run(capsys, "rule", "VK102")
    assert code == 0 and out.startswith("# journal-filename (VK102)") and "## Why is this bad?" in out


def test_symlink_out_of_vault_is_reported_not_followed(make_vault, tmp_path, capsys):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("# secret [[x]]\n")
    root = make_vault({})
    (root / "memory").mkdir()
    (root / "memory" / "link").symlink_to(outside)
    (root / "memory" / "loop").symlink_to(root / "memory")
    _, out, _ = run(capsys, "check", str(root), "--format", "json", "--select", "VK001")
    msgs = {d["path"]: d["message"] for d in json.loads(out)}
    assert "outside the vault" in msgs["memory/link"]
    assert "loop" in msgs["memory/loop"]
    assert not any("secret" in p for p in msgs)


@pytest.mark.parametrize("spec,ok", [
    (">=0.0.1", True), ("==0.1.0", None), (">=99", False), ("<0.0.1", False),
    (">=0.1,<99", True), ("~=0.1", True),
])
def test_required_version(make_vault, capsys, spec, ok):
    from vaultkit import __version__

    if ok is None:
        spec, ok = f"=={__version__}", True
    root = make_vault({"vaultkit.toml": f"required-version = '{spec}'\n"})
    code, _, err = run(capsys, "check", str(root))
    if ok:
        assert code == 0, err
    else:
        assert code == 2 and f"requires vaultkit {spec}, but this is vaultkit {__version__}" in err


def test_required_version_that_is_not_a_specifier(make_vault, capsys):
    root = make_vault({"vaultkit.toml": "required-version = 'soon'\n"})
    code, _, err = run(capsys, "check", str(root))
    assert code == 2 and "is not a version specifier" in err


def test_required_version_is_reported_before_keys_this_version_does_not_know(make_vault, capsys):
    root = make_vault({"vaultkit.toml": "required-version = '>=9.0'\nfuture-key = 1\n"})
    code, _, err = run(capsys, "check", str(root))
    assert code == 2 and "requires vaultkit >=9.0" in err


@pytest.mark.parametrize("spec,version,ok", [
    ("~=0.0", "0.1.0", True), ("~=0.1", "0.9.3", True), ("~=0.1", "1.0.0", False),
    ("~=0.1.2", "0.1.9", True), ("~=0.1.2", "0.2.0", False), (">=0.1,<0.2", "0.1.5", True),
])
def test_compatible_release_specifier(spec, version, ok):
    from vaultkit.vault.profile import check_required_version

    assert (check_required_version(spec, version) is None) == ok


def test_bootstrap_files_must_be_plain_names(make_vault, capsys):
    pack = ("name: x\nlayers: []\nbootstrap_files: ['../../../etc/passwd']\n")
    root = make_vault({"pack.yaml": pack, "vaultkit.toml": "profile = 'pack.yaml'\n"})
    code, _, err = run(capsys, "check", str(root))
    assert code == 2 and "bootstrap_files" in err and "plain file name" in err


def test_findings_of_two_vaults_are_shown_from_the_current_folder(make_vault, capsys,
                                                                  monkeypatch):
    """Each finding is printed relative to the current folder through its own vault's root;
    the renderer gets the findings themselves (no wrapper to look every field up through)."""
    import vaultkit.lint.report as report
    from vaultkit.lint.diagnostics import Diagnostic

    one = make_vault({"memory/semantic/x.md": "# X\n[[gone-one]]\n"}, root_name="one")
    two = make_vault({"memory/semantic/y.md": "# Y\n[[gone-two]]\n"}, root_name="two")
    rendered = []
    real = report.render
    monkeypatch.setattr(report, "render", lambda diags, *a, **k: rendered.extend(diags)
                        or real(diags, *a, **k))
    monkeypatch.chdir(one.parent)
    _, out, _ = run(capsys, "check", "one", "two", "--select", "broken-link")
    assert "one/memory/semantic/x.md:2:1: VK501 broken-link warning: no note 'gone-one'" in out
    assert "two/memory/semantic/y.md:2:1: VK501 broken-link warning: no note 'gone-two'" in out
    assert rendered and all(type(d) is Diagnostic for d in rendered)
    monkeypatch.chdir(two / "memory")  # inside one of them: each file is shown on its own
    _, out, _ = run(capsys, "check", str(one), "..", "--select", "broken-link")
    assert out.splitlines()[:2] == [
        f"{one}/memory/semantic/x.md:2:1: VK501 broken-link warning: no note 'gone-one' in the "
        "vault (link [[gone-one]])",
        "semantic/y.md:2:1: VK501 broken-link warning: no note 'gone-two' in the vault (link "
        "[[gone-two]])"]
