"""Hostile and broken inputs: one fixture each with its expected finding, and every
command that reads the vault run against the whole set (see tests/hostile.py).

The unreadable file is simulated by monkeypatching ``open``/``os.open``/``Path.read_*``
to raise ``PermissionError`` for that path (the suite runs as root, where chmod 000
does not stop reads); the file deleted during the scan is removed by a wrapped
``scan.walk`` after it lists the folder and before the notes are read.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

import hostile
from vaultkit.cli import main
from vaultkit.vault.parse import parse_note

SEM = hostile.SEM


def invoke(argv, vault: Path, *, patch: bool = True) -> tuple[int, str, str]:
    """Run ``vaultkit argv`` in-process in ``vault`` with the simulated faults applied."""
    vanishing = vault / SEM / "vanishing.md"
    if patch and not vanishing.exists():
        vanishing.write_text("# Gone soon\n\nvanishing-marker text\n")
    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(vault)
        if patch:
            hostile.deny_reads(mp, vault / SEM / "unreadable.md")
            hostile.vanish_after_walk(mp, vanishing)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = main(list(argv))
    return rc, out.getvalue(), err.getvalue()


def assert_clean(rc, err, allowed=(0, 1)):
    assert rc in allowed, err
    assert "Traceback" not in err
    assert "internal error" not in err
    assert "RecursionError" not in err


@pytest.fixture(scope="module")
def vault(tmp_path_factory) -> Path:
    return hostile.build(tmp_path_factory.mktemp("hostile") / "vault")


@pytest.fixture(scope="module")
def findings(vault) -> list[dict]:
    rc, out, err = invoke(["check", "--select", "ALL", "--format", "json", "--no-cache", "."],
                          vault)
    assert_clean(rc, err)
    return json.loads(out)


# -- one fixture, one expected finding -----------------------------------------------

@pytest.mark.parametrize("fixture,rule,path,line", hostile.EXPECTED,
                         ids=[e[0] for e in hostile.EXPECTED])
def test_expected_finding(findings, fixture, rule, path, line):
    mine = [(f["rule"], f["line"]) for f in findings if f["path"] == path]
    if rule is None:
        assert mine == []
        return
    assert (rule, line) in mine, f"{fixture}: {path} gave {mine}"


@pytest.mark.parametrize("path", [f"{SEM}/empty.md", f"{SEM}/bom.md", f"{SEM}/crlf.md"])
def test_valid_files_have_no_file_or_frontmatter_finding(findings, path):
    rules = {f["rule"] for f in findings if f["path"] == path}
    assert not rules & {"file-unreadable", "frontmatter-invalid", "frontmatter-missing"}


def test_every_finding_points_inside_its_file(vault, findings):
    for f in findings:
        assert not f["path"].startswith(("/", "..")), f
        if f["line"] is None:
            continue
        data = (vault / f["path"]).read_bytes()
        lines = max(1, len(data.decode("utf-8", "replace").splitlines()))
        assert 1 <= f["line"] <= lines, f


def test_messages_for_simulated_faults(findings):
    by_path = {f["path"]: f["message"] for f in findings if f["rule"] == "file-unreadable"}
    assert "Permission denied" in by_path[f"{SEM}/unreadable.md"]
    assert "No such file" in by_path[f"{SEM}/vanishing.md"]
    assert "over the" in by_path[f"{SEM}/huge.md"]
    assert "not followed" in by_path[f"{SEM}/outside.md"]
    assert "symlink loop" in by_path[f"{SEM}/loop"]
    assert "symlink loop" in by_path[f"{SEM}/loop-a.md"]  # was reported as a broken symlink


# -- every reading command over the whole set -------------------------------------------

COMMANDS = [
    ["check", "."],
    ["check", "--select", "ALL", "--format", "sarif", "."],
    ["check", "--format", "github", "."],
    ["check", "--statistics", "."],
    ["check", "--diff", "."],
    ["index", "--check", "."],
    ["index", "."],
    ["graph", "."],
    ["graph", "--format", "json", "."],
    ["graph", "--format", "graphml", "."],
    ["graph", "--format", "mermaid", "."],
    ["audit", "."],
    ["audit", "--format", "json", "."],
    ["search", "--root", ".", "lol"],
    ["search", "--root", ".", "--json", "中文"],
    ["search", "--root", ".", "--json", "deep", "list"],
    ["distill", "--root", "."],
    ["distill", "--root", ".", "--format", "json", "--days", "400"],
    ["archive", "--root", ".", "--dry-run"],
    ["report", ".", "-o", "../hostile-report.html"],
]


@pytest.mark.parametrize("argv", COMMANDS, ids=[" ".join(a) for a in COMMANDS])
def test_command_survives_the_hostile_set(vault, argv):
    rc, out, err = invoke(argv, vault)
    assert_clean(rc, err)
    if argv[0] != "check" or "--diff" not in argv:  # --diff is silent with nothing to fix
        assert out or err


def test_commands_survive_without_the_cache_and_with_it(vault):
    for _ in range(2):  # the second run reads the parse cache written by the first
        rc, _, err = invoke(["check", "."], vault)
        assert_clean(rc, err)


def _memory_paths(vault: Path) -> list[str]:
    out = []
    for dirpath, dirnames, filenames in os.walk(vault / "memory"):
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            out.append(Path(dirpath, name).relative_to(vault).as_posix())
    return sorted(out)


def test_get_every_file(vault):
    paths = _memory_paths(vault) + ["MEMORY.md"]
    assert f"{SEM}/huge.md" in paths and f"{SEM}/loop" in paths
    results = {}
    for rel in paths:
        for extra in ([], ["--json"], ["--from", "3", "--lines", "1"]):
            rc, out, err = invoke(["get", "--root", ".", rel, *extra], vault)
            assert_clean(rc, err, allowed=(0, 1, 2))
            if rc == 2:
                assert err.count("\n") == 1 and err.startswith("vaultkit: error: "), err
            results[rel] = rc
    refused = {p for p, rc in results.items() if rc == 2}
    assert {f"{SEM}/outside.md", f"{SEM}/huge.md", f"{SEM}/unreadable.md", f"{SEM}/loop",
            f"{SEM}/loop-a.md"} <= refused
    assert results[f"{SEM}/crlf.md"] == 0


def test_search_results_point_inside_files(vault):
    for query in ("lol", "中文", "deep", "links", "tags"):
        rc, out, err = invoke(["search", "--root", ".", "--json", "--min-score", "0", query], vault)
        assert_clean(rc, err)
        for hit in json.loads(out)["results"]:
            assert not hit["path"].startswith(("/", ".."))
            text = (vault / hit["path"]).read_text("utf-8")
            assert 1 <= hit["startLine"] <= hit["endLine"] <= max(1, len(text.splitlines()))


def test_nothing_outside_the_vault_is_shown(vault):
    for argv in (["search", "--root", ".", "--json", hostile.OUTSIDE_SECRET],
                 ["graph", "--format", "json", "."], ["check", "--select", "ALL", "."],
                 ["index", "--check", "."], ["distill", "--root", ".", "--days", "400"]):
        rc, out, err = invoke(argv, vault)
        assert_clean(rc, err)
        assert hostile.OUTSIDE_SECRET not in out + err
    rc, out, err = invoke(["get", "--root", ".", f"{SEM}/outside.md"], vault)
    assert rc == 2 and "outside the vault" in err and hostile.OUTSIDE_SECRET not in out


def test_unreadable_and_vanished_files_never_appear_in_search(vault):
    for marker in ("unreadable-marker", "vanishing-marker"):
        rc, out, err = invoke(["search", "--root", ".", "--no-cache", "--json", "--min-score", "0",
                               marker], vault)
        assert_clean(rc, err)
        assert marker not in out


def test_whole_set_in_a_real_process(vault):
    """No monkeypatching: the real executable, its real exit code and stderr."""
    for argv in (["check", "--no-cache", "."], ["graph", "."], ["index", "--check", "."]):
        proc = subprocess.run([sys.executable, "-m", "vaultkit", *argv], cwd=vault,
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode in (0, 1), proc.stderr
        assert "Traceback" not in proc.stderr


# -- individual fixtures, looked at closely ------------------------------------------------

def test_alias_bomb_is_bounded_in_memory():
    tracemalloc.start()
    try:
        note = parse_note("bomb.md", hostile.ALIAS_BOMB.encode())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert note.fm_error and "alias bomb" in note.fm_error[0]
    assert note.frontmatter in (None, {})
    assert peak < 20 * 1024 * 1024  # 9**9 expanded nodes would need many gigabytes


def test_python_tags_are_never_executed(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(os, "system", lambda *a: calls.append(("system", a)) or 0)
    monkeypatch.setattr(os, "putenv", lambda *a: calls.append(("putenv", a)))
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: calls.append(("Popen", a)))
    text = hostile.python_tags(tmp_path)
    note = parse_note("tags.md", text.encode())
    assert note.fm_error and "constructor" in note.fm_error[0]
    assert calls == []
    assert not (tmp_path / hostile.SENTINEL).exists()


def test_python_tags_leave_no_trace_after_every_command(vault):
    for argv in COMMANDS:
        invoke(argv, vault)
    assert not (hostile.sentinel_dir(vault) / hostile.SENTINEL).exists()
    assert "VAULTKIT_PWNED" not in os.environ


def test_bom_frontmatter_is_recognised():
    data = (b"\xef\xbb\xbf---\ntype: knowledge\ntags: [a]\n---\n# T\n")
    note = parse_note("bom.md", data)
    assert note.bom and note.frontmatter == {"type": "knowledge", "tags": ["a"]}
    assert note.fm_keys == {"type": 2, "tags": 3}
    assert [(h.text, h.line) for h in note.headings] == [("T", 5)]


def test_crlf_line_numbers():
    data = b"---\r\ntitle: x\r\n---\r\n\r\n# H\r\n\r\n[[a]]\r\nfoo #tag\r\n"
    note = parse_note("c.md", data)
    assert note.crlf and note.fm_keys == {"title": 2}
    assert [h.line for h in note.headings] == [5]
    assert [(lk.target, lk.line) for lk in note.links] == [("a", 7)]
    assert [(t.name, t.line) for t in note.tags] == [("tag", 8)]


@pytest.mark.parametrize("body", [
    "- " * hostile.DEPTH + "x",
    "> " * hostile.DEPTH + "x",
    "> - " * hostile.DEPTH + "x",
    "".join("  " * i + "- item\n" for i in range(hostile.DEPTH // 10)),
    "".join(">" * i + " q\n" for i in range(1, hostile.DEPTH)),
    "[" * hostile.DEPTH + "]" * hostile.DEPTH + "(" * hostile.DEPTH,
    "`" * hostile.DEPTH,
    "<!--" * hostile.DEPTH,
], ids=["list", "quote", "mixed", "indented list", "quote ladder", "brackets", "backticks",
        "comments"])
def test_deep_nesting_parses_without_recursion(body):
    note = parse_note("deep.md", ("# D\n\n" + body + "\n").encode())
    assert note.error is None and note.line_count >= 3


def test_big_file_is_never_read(vault):
    """The 50 MB note is judged by its size alone: check never opens it."""
    huge = os.path.realpath(vault / SEM / "huge.md")
    opened = []
    real_open = open

    def spy(file, *args, **kwargs):
        if isinstance(file, (str, os.PathLike)) and os.path.realpath(file) == huge:
            opened.append(file)
        return real_open(file, *args, **kwargs)

    with pytest.MonkeyPatch.context() as mp:
        import builtins

        mp.setattr(builtins, "open", spy)
        rc, _, err = invoke(["check", "--no-cache", "."], vault, patch=False)
    assert_clean(rc, err)
    assert opened == []


def test_get_reads_no_more_than_the_size_limit(vault):
    """Regression: get used to read the whole 50 MB file into memory."""
    tracemalloc.start()
    try:
        rc, out, err = invoke(["get", "--root", ".", f"{SEM}/huge.md"], vault, patch=False)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert rc == 2 and "byte limit" in err and err.count("\n") == 1
    assert peak < 2 * 10 * 1024 * 1024 + 8 * 1024 * 1024  # the limit once, not 50 MB


def test_symlink_out_of_the_vault_is_not_followed(vault):
    from vaultkit.vault.loader import load_vault

    v = load_vault(vault, root=vault, use_cache=False)
    assert f"{SEM}/outside.md" not in v.notes
    assert any(p.rel == f"{SEM}/outside.md" for p in v.problems)
    assert not any(n.startswith(f"{SEM}/loop/") for n in v.notes)


# -- vaultkit.toml: unknown keys, a regex that does not compile ---------------------------------

BAD_CONFIGS = [
    ("unknown top-level key", 'profile = "openclaw"\nshiny = true\n', "unknown key 'shiny'"),
    ("unknown budget", "[budgets]\nmemory-bytes-max = 3\n", "unknown budget"),
    ("regex that does not compile", '[phrases]\nfiller = ["re:(unclosed"]\n', "does not compile"),
    ("not TOML", "profile = \n", "not valid TOML"),
    ("profile tag", 'profile = "evil.yaml"\n', "constructor"),
]
READERS = [["check", "."], ["index", "."], ["graph", "."], ["audit", "."],
           ["search", "--root", ".", "x"], ["get", "--root", ".", "MEMORY.md"],
           ["distill", "--root", "."], ["log", "--root", ".", "x"],
           ["archive", "--root", "."], ["graph", "--write-colors", "."]]


@pytest.mark.parametrize("config,expect", [c[1:] for c in BAD_CONFIGS],
                         ids=[c[0] for c in BAD_CONFIGS])
def test_bad_config_exit_2_one_line(make_vault, config, expect):
    root = make_vault({"vaultkit.toml": config, "MEMORY.md": "# M\n",
                       "evil.yaml": "name: !!python/object/apply:os.system ['touch pwned']\n"})
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    for argv in READERS:
        rc, out, err = invoke(argv, root, patch=False)
        assert rc == 2, (argv, err)
        assert err.count("\n") == 1 and err.startswith("vaultkit: error: "), err
        assert expect in err and "vaultkit.toml" in err or "evil.yaml" in err
    after = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    assert after == before  # nothing written, nothing executed
    assert not (root / "pwned").exists()


def test_archive_over_the_hostile_set(tmp_path):
    """archive for real: the readable old journal moves whole, the alias bomb one included;
    every other file is untouched."""
    root = hostile.build(tmp_path / "vault", big=False)
    old = hostile._day(41)
    before = (root / "memory" / f"{old}.md").read_bytes()
    rc, out, err = invoke(["archive", "--root", ".", "--keep-days", "30"], root)
    assert_clean(rc, err)
    moved = list((root / "memory" / "archive").rglob(f"{old}.md"))
    assert len(moved) == 1 and moved[0].read_bytes() == before
    assert (root / SEM / "deep-list.md").read_bytes().endswith(b"[[deep-list-missing]]\n")


def test_unreadable_file_for_real(tmp_path):
    """The same fixture without simulation: a chmod 000 file, checked by a user the mode
    applies to (uid 65534 when the tests run as root, since root reads anything)."""
    import shutil
    import tempfile

    base = Path(tempfile.mkdtemp())
    try:
        base.chmod(0o755)
        root = base / "vault"
        (root / ".obsidian").mkdir(parents=True)
        (root / "memory" / "semantic").mkdir(parents=True)
        secret = root / "memory" / "semantic" / "secret.md"
        secret.write_text("# Secret\n\nnot for you\n")
        (root / "MEMORY.md").write_text("# Memory\n\n- [[secret]]\n")
        for d in (root, root / ".obsidian", root / "memory", root / "memory" / "semantic"):
            d.chmod(0o755)
        (root / "MEMORY.md").chmod(0o644)
        secret.chmod(0)
        argv = [sys.executable, "-m", "vaultkit", "check", "--format", "json", "--no-cache", "."]
        if os.geteuid() == 0:  # root reads a chmod 000 file: become nobody (util-linux setpriv)
            argv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *argv]
        proc = subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=120,
                              env={**os.environ, "HOME": str(base)})
        assert proc.returncode == 1, proc.stderr
        assert "Traceback" not in proc.stderr
        found = [(f["rule"], f["message"]) for f in json.loads(proc.stdout)
                 if f["path"] == "memory/semantic/secret.md"]
        assert found == [("file-unreadable", "cannot be read: Permission denied")], found
        assert "not for you" not in proc.stdout
    finally:
        shutil.rmtree(base, ignore_errors=True)


# -- hostile input to the memory tools -------------------------------------------------------------

@pytest.mark.parametrize("stdin,expect", [
    (b"title\x00\nline\nline\n", "NUL byte"),
    (b"\xff\xfe not utf-8\nline\nline\n", "not valid UTF-8"),
], ids=["NUL", "not UTF-8"])
def test_log_refuses_text_that_would_spoil_the_journal(make_vault, stdin, expect):
    """Regression: a NUL in the entry made the whole day's journal 'binary content' (unreadable
    to check, search and get); bytes that were not UTF-8 gave an internal error."""
    root = make_vault({"memory/2026-03-01.md": "# 2026-03-01\n"})
    proc = subprocess.run([sys.executable, "-m", "vaultkit", "log", "--root", ".", "--date",
                           "2026-03-01", "-"], input=stdin, cwd=root, capture_output=True,
                          timeout=60)
    err = proc.stderr.decode()
    assert proc.returncode == 2 and expect in err and err.count("\n") == 1, err
    assert (root / "memory/2026-03-01.md").read_bytes() == b"# 2026-03-01\n"


@pytest.mark.parametrize("query", ['"', "NEAR(a b", "*", "a OR", "-", "col:x", "^", "')", 'x"y',
                                   "(((", "%", "\\", "AND", "a" * 100_000, "中" * 1000, "\x00"])
def test_search_takes_any_query(vault, query):
    rc, out, err = invoke(["search", "--root", ".", "--json", "--", query], vault, patch=False)
    assert_clean(rc, err)
    assert isinstance(json.loads(out)["results"], list)


@pytest.mark.parametrize("argv", [
    ["distill", "--root", ".", "--days", "999999999"],
    ["distill", "--root", ".", "--stale-days", "999999999"],
    ["distill", "--root", ".", "--stale-days", "-999999999"],
    ["archive", "--root", ".", "--keep-days", "999999999"],
    ["archive", "--root", ".", "--keep-days", "999999999", "--dry-run"],
], ids=lambda a: " ".join(a[3:]))
def test_huge_day_counts_are_a_usage_error(make_vault, argv):
    """Regression: --days / --keep-days past the year 1 gave an internal OverflowError."""
    root = make_vault({"memory/2026-03-01.md": "# 2026-03-01\n"})
    rc, out, err = invoke(argv, root, patch=False)
    assert rc == 2 and "at most 100,000" in err and err.count("\n") == 1, err
