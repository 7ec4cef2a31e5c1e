"""Inputs that used to hang a command or grow its memory without end, and inputs past
vaultkit's size, depth and count bounds (docs/reliability-limits.md).

Every command runs as a real process with ``subprocess.run(timeout=...)``: a hang fails
the test with ``TimeoutExpired`` instead of stalling the suite, and an address-space
limit turns runaway memory (``/dev/zero`` read whole) into a failure too. FIFOs are made
with ``os.mkfifo``; character devices with ``os.mknod``, and the tests that need one skip,
saying why, where creating device nodes is not permitted (an unprivileged user or a
container without CAP_MKNOD). ``/dev/null`` and ``/dev/full`` are only ever read or
written through, never replaced, and a test that needs one skips if it is not a device.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import resource
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

import hostile

SEM = "memory/semantic"
TIMEOUT = 60  # seconds; each of these commands takes well under 5 on a laptop
MEMORY_CAP = 1536 * 1024 * 1024  # address space: /dev/zero read whole would pass it in ~1 s
TODAY = dt.date.today().isoformat()


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def run(argv, cwd: Path, *, stdin: bytes | None = None, env: dict | None = None,
        timeout: float = TIMEOUT) -> subprocess.CompletedProcess:
    """``vaultkit argv`` in a real process; TimeoutExpired (a hang) fails the test."""
    return subprocess.run([sys.executable, "-m", "vaultkit", *argv], cwd=cwd, input=stdin,
                          capture_output=True, timeout=timeout, preexec_fn=_limit_memory,
                          env={**os.environ, "HOME": str(cwd.parent), **(env or {})})


def assert_clean(proc: subprocess.CompletedProcess, allowed=(0, 1, 2)) -> str:
    err = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode in allowed, (proc.returncode, err)
    assert "Traceback" not in err and "internal error" not in err, err
    assert "MemoryError" not in err, err
    if proc.returncode == 2:  # a refusal is one clear line
        errors = [line for line in err.splitlines() if line.startswith("vaultkit: error: ")]
        assert len(errors) == 1, err
    return err


def can_mknod(folder: Path) -> str | None:
    """None when a character device can be made in ``folder``, else why not."""
    probe = folder / ".mknod-probe"
    try:
        os.mknod(probe, 0o666 | stat.S_IFCHR, os.makedev(1, 5))
    except (PermissionError, OSError) as exc:
        return f"creating device nodes is not permitted here ({exc.strerror})"
    probe.unlink()
    return None


def is_char_device(path: str) -> bool:
    try:
        return stat.S_ISCHR(os.stat(path).st_mode)
    except OSError:
        return False


# -- a vault full of files that are not files ---------------------------------------------------

BAD_NAME = os.fsdecode(b"bad-\xff-name.md")  # undecodable bytes, as os.listdir returns them


def build(root: Path, *, devices: bool) -> Path:
    """A small valid vault plus FIFOs (and, if ``devices``, /dev/zero-like nodes) named
    like notes, journals, INDEX.md, graph.json and unclosed_work.yaml, an undecodable
    file name, deep frontmatter and a one-line note of a megabyte."""
    (root / ".obsidian").mkdir(parents=True)
    (root / SEM).mkdir(parents=True)
    (root / "MEMORY.md").write_text("# Memory\n\n## Facts\n\n- see [[ok]]\n")
    (root / SEM / "ok.md").write_text("# OK\n\nplain note about limits\n")
    (root / "memory" / f"{TODAY}.md").write_text(f"# {TODAY}\n\n### 09:00 — Start\n\na\nb\nc\n")
    os.mkfifo(root / SEM / "fifo.md")
    os.mkfifo(root / "memory" / "2020-01-01.md")  # a journal old enough to archive
    os.mkfifo(root / ".obsidian" / "graph.json")
    os.mkfifo(root / "memory" / "unclosed_work.yaml")
    if devices:
        zero = 0o666 | stat.S_IFCHR
        os.mknod(root / SEM / "zero.md", zero, os.makedev(1, 5))
        os.mknod(root / "memory" / "2020-01-02.md", zero, os.makedev(1, 5))
    (root / SEM / BAD_NAME).write_bytes(b"# Bad name\n\ntext\n")
    depth = 900  # libyaml itself stops at 1,000
    (root / SEM / "deep-fm.md").write_text(
        "---\nx: " + "[" * depth + '"[[ok]]"' + "]" * depth + "\n---\n# Deep\n")
    (root / SEM / "one-line.md").write_text(
        "# One line\n\n" + "word [[ok]] #tag `code` " * 40_000 + "\n")
    return root


@pytest.fixture(scope="module")
def fifo_vault(tmp_path_factory) -> Path:
    return build(tmp_path_factory.mktemp("fifos") / "vault", devices=False)


@pytest.fixture
def fresh_vault(tmp_path) -> Path:
    """The FIFO vault, unchanged by the commands run over the shared one."""
    return build(tmp_path / "vault", devices=False)


@pytest.fixture(scope="module")
def device_vault(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("devices")
    why = can_mknod(base)
    if why:
        pytest.skip(why)
    return build(base / "vault", devices=True)


def every_command(root: Path) -> list[tuple[list[str], bytes | None]]:
    fifo_config = str(root / ".obsidian" / "graph.json")  # a FIFO given as the openclaw config
    return [
        (["check", "--no-cache", "."], None),
        (["check", "."], None),
        (["check", "--select", "ALL", "--format", "json", "."], None),
        (["check", "--hook", f"{SEM}/fifo.md", f"{SEM}/zero.md", f"{SEM}/one-line.md",
          "MEMORY.md"], None),
        (["index", "--check", "."], None),
        (["index", "."], None),
        (["graph", "."], None),
        (["graph", "--write-colors", "."], None),
        (["audit", "."], None),
        (["audit", "--openclaw-config", fifo_config, "."], None),
        (["audit", "--openclaw-config", "/dev/zero", "."], None),
        (["log", "--root", ".", "-"],
         b"Limits\nchecked the limits\nwhy: hostile input\nnext: more"),
        (["log", "--root", ".", "--date", "2020-01-01", "an entry for a FIFO"], None),
        (["log", "--root", ".", "--date", "2020-01-02", "an entry for a device"], None),
        (["search", "--root", ".", "--json", "limits"], None),
        (["search", "--root", ".", "--json", *[f"w{i}" for i in range(5_000)]], None),
        (["get", "--root", ".", f"{SEM}/fifo.md"], None),
        (["get", "--root", ".", f"{SEM}/zero.md"], None),
        (["get", "--root", ".", "memory/2020-01-01.md"], None),
        (["get", "--root", ".", f"{SEM}/one-line.md"], None),
        (["distill", "--root", ".", "--days", "100000"], None),
        (["archive", "--root", ".", "--dry-run", "--keep-days", "1"], None),
        (["archive", "--root", ".", "--keep-days", "1"], None),
        (["init", "."], None),
        (["history", "."], None),
        (["recover", ".", "--all"], None),
        (["report", ".", "-o", "../report.html"], None),
    ]


def _ids(root_name: str):
    return [" ".join(a) if len(a) < 12 else " ".join(a[:4]) + " <5,000 words>"
            for a, _ in every_command(Path(root_name))]


def _assert_special_files_intact(root: Path, *, devices: bool) -> None:
    for rel in (f"{SEM}/fifo.md", "memory/2020-01-01.md", ".obsidian/graph.json",
                "memory/unclosed_work.yaml"):
        assert stat.S_ISFIFO(os.lstat(root / rel).st_mode), f"{rel} was replaced"
    if devices:
        for rel in (f"{SEM}/zero.md", "memory/2020-01-02.md"):
            assert stat.S_ISCHR(os.lstat(root / rel).st_mode), f"{rel} was replaced"


@pytest.mark.parametrize("index", range(len(every_command(Path("v")))), ids=_ids("v"))
def test_fifos_hang_no_command(fifo_vault, index):
    argv, stdin = every_command(fifo_vault)[index]
    started = time.monotonic()
    proc = run(argv, fifo_vault, stdin=stdin)
    assert_clean(proc)
    assert time.monotonic() - started < TIMEOUT
    _assert_special_files_intact(fifo_vault, devices=False)


@pytest.mark.parametrize("index", range(len(every_command(Path("v")))), ids=_ids("v"))
def test_devices_are_never_read(device_vault, index):
    argv, stdin = every_command(device_vault)[index]
    proc = run(argv, device_vault, stdin=stdin)
    assert_clean(proc)
    _assert_special_files_intact(device_vault, devices=True)


def test_fifo_and_device_notes_are_reported(device_vault):
    proc = run(["check", "--no-cache", "--format", "json", "."], device_vault)
    assert_clean(proc, allowed=(1,))
    found = {(f["path"], f["rule"]): f["message"] for f in json.loads(proc.stdout)}
    assert found[(f"{SEM}/fifo.md", "file-unreadable")] == "not a regular file (a FIFO); not read"
    assert found[(f"{SEM}/zero.md", "file-unreadable")] == \
        "not a regular file (a character device); not read"
    assert "not a regular file (a FIFO)" in found[("memory/2020-01-01.md", "file-unreadable")]
    # the valid notes beside them are still checked
    assert (f"{SEM}/ok.md", "file-unreadable") not in found


def test_undecodable_file_name_is_reported_and_the_rest_checked(fresh_vault):
    """Regression: one file name with bytes that are not UTF-8 failed check, index and
    search for the whole vault."""
    proc = run(["check", "--no-cache", "--format", "json", "."], fresh_vault)
    assert_clean(proc, allowed=(1,))
    found = json.loads(proc.stdout)
    bad = [f for f in found if f["path"] == f"{SEM}/bad-\\xff-name.md"]
    assert [(f["rule"], f["message"]) for f in bad] == [
        ("file-unreadable", "file name is not valid UTF-8; not read (rename it)")]
    assert any(f["path"] == f"{SEM}/deep-fm.md" for f in found)  # the others were checked
    proc = run(["search", "--root", ".", "--json", "--min-score", "0", "limits"], fresh_vault)
    assert_clean(proc, allowed=(0,))
    assert [h["path"] for h in json.loads(proc.stdout)["results"]] == [f"{SEM}/ok.md"]
    assert_clean(run(["index", "--check", "."], fresh_vault), allowed=(0, 1))


def test_staged_undecodable_file_name_fails_the_hook(fresh_vault):
    """The hook gets the staged file's name as bytes: it is reported, not passed over."""
    name = os.fsencode(f"{SEM}/") + os.fsencode(BAD_NAME)
    for argv in (["check", "--hook"], ["check"]):
        proc = subprocess.run([sys.executable, "-m", "vaultkit", *argv, name, b"MEMORY.md"],
                              cwd=fresh_vault, capture_output=True, timeout=TIMEOUT)
        assert_clean(proc, allowed=(1,))
        assert (f"\n{SEM}/bad-\\xff-name.md:1:1: VK001 file-unreadable error: file name is not "
                "valid UTF-8").encode() in b"\n" + proc.stdout, proc.stdout


def test_undecodable_folder_name_is_reported_not_entered(tmp_path):
    root = tmp_path / "vault"
    (root / ".obsidian").mkdir(parents=True)
    (root / "MEMORY.md").write_text("# M\n")
    folder = root / "memory" / os.fsdecode(b"dir-\xfe")
    folder.mkdir(parents=True)
    (folder / "inside.md").write_text("# Inside\n")
    proc = run(["check", "--no-cache", "--format", "json", "."], root)
    assert_clean(proc, allowed=(1,))
    found = [(f["path"], f["message"]) for f in json.loads(proc.stdout)
             if f["rule"] == "file-unreadable"]
    assert found == [("memory/dir-\\xfe", "folder name is not valid UTF-8; not read (rename it)")]


def test_fifo_as_openclaw_config_is_a_finding(fifo_vault):
    fifo = str(fifo_vault / ".obsidian" / "graph.json")
    for env, argv in (({}, ["audit", "--openclaw-config", fifo, "."]),
                      ({"OPENCLAW_CONFIG_PATH": fifo}, ["audit", "."])):
        proc = run(argv, fifo_vault, env=env)
        assert_clean(proc, allowed=(1,))
        assert "not a regular file (a FIFO)" in proc.stdout.decode()


def test_dev_zero_as_openclaw_config_is_a_finding(fifo_vault):
    if not is_char_device("/dev/zero"):
        pytest.skip("/dev/zero is not a character device here")
    proc = run(["audit", "--openclaw-config", "/dev/zero", "."], fifo_vault)
    assert_clean(proc, allowed=(1,))
    assert "not a regular file (a character device)" in proc.stdout.decode()


def test_fifo_graph_json_is_a_clear_error(fresh_vault):
    proc = run(["graph", "--write-colors", "."], fresh_vault)
    err = assert_clean(proc, allowed=(2,))
    assert ".obsidian/graph.json: cannot read: not a regular file (a FIFO)" in err
    proc = run(["audit", "."], fresh_vault)
    assert "graph.json cannot be read: not a regular file (a FIFO)" in proc.stdout.decode()


def test_log_refuses_fifo_and_device_journals(device_vault):
    for day, kind in (("2020-01-01", "a FIFO"), ("2020-01-02", "a character device")):
        proc = run(["log", "--root", ".", "--date", day, "text"], device_vault)
        err = assert_clean(proc, allowed=(2,))
        assert f"memory/{day}.md: not a regular file ({kind}); nothing written" in err


def test_deep_frontmatter_survives_the_cache(fresh_vault):
    """Regression: frontmatter nested 500+ levels made every cached run an internal error
    (the cache could not be saved), and a link deep inside broke --no-cache runs too."""
    for argv in (["check", "--format", "json", "."], ["check", "--format", "json", "."],
                 ["check", "--no-cache", "--format", "json", "."]):
        proc = run(argv, fresh_vault)
        assert_clean(proc, allowed=(1,))
        found = [(f["rule"], f["message"]) for f in json.loads(proc.stdout)
                 if f["path"] == f"{SEM}/deep-fm.md" and f["rule"] == "frontmatter-invalid"]
        assert found == [("frontmatter-invalid",
                          "frontmatter nested more than 100 levels deep; not read")]


# -- YAML, JSON and JSON5 that expand, nest or run long ------------------------------------------

ALIAS_BOMB_YAML = hostile.ALIAS_BOMB.split("---\n")[1]  # the 394-byte document alone


def test_alias_bomb_in_unclosed_work_is_refused_fast(make_vault):
    """Regression: a 394-byte alias bomb in unclosed_work.yaml hung audit past 1 GB."""
    assert len(ALIAS_BOMB_YAML.encode()) < 400
    root = make_vault({"MEMORY.md": "# M\n", "memory/unclosed_work.yaml": ALIAS_BOMB_YAML})
    proc = run(["audit", "."], root, timeout=20)
    assert_clean(proc, allowed=(1,))
    out = proc.stdout.decode()
    assert "unclosed_work.yaml is not read: expands to more than 20,000 YAML nodes" in out


def test_valid_unclosed_work_is_still_read(make_vault):
    root = make_vault({"MEMORY.md": "# M\n",
                       "memory/unclosed_work.yaml": "- {task: ship, since: 2020-01-01}\n"})
    proc = run(["audit", "."], root)
    assert "1 of 1 open item" in proc.stdout.decode()


def test_alias_bomb_in_pre_commit_config_is_refused(make_vault):
    root = make_vault({"MEMORY.md": "# M\n", ".pre-commit-config.yaml": ALIAS_BOMB_YAML})
    proc = run(["audit", "."], root, timeout=20)
    assert_clean(proc, allowed=(1,))
    assert "alias bomb" in proc.stdout.decode()


def test_big_openclaw_json_is_refused_fast(make_vault, tmp_path):
    """Regression: a 10 MB openclaw.json took over two minutes (JSON5 parser)."""
    root = make_vault({"MEMORY.md": "# M\n"})
    config = tmp_path / "openclaw.json"
    item = '{ id: "agent", workspace: "/home/u/ws", tools: ["a", "b"], },\n'
    with open(config, "w") as fh:
        fh.write("{ // JSON5\n agents: { list: [\n")
        fh.write(item * (10 * 1024 * 1024 // len(item)))
        fh.write("] } }\n")
    proc = run(["audit", "--openclaw-config", str(config), "."], root, timeout=20)
    assert_clean(proc, allowed=(1,))
    assert "over the 1,048,576-byte limit" in proc.stdout.decode()
    config.write_text("{ // JSON5\n agents: { list: [\n" + item * 2_000 + "] } }\n")  # 120 KB
    proc = run(["audit", "--openclaw-config", str(config), "."], root, timeout=20)
    assert "over the 65,536 that are parsed" in proc.stdout.decode()


def test_plain_json_openclaw_config_is_read_beyond_the_json5_bound(make_vault, tmp_path):
    root = make_vault({"MEMORY.md": "# M\n"})
    config = tmp_path / "openclaw.json"
    config.write_text(json.dumps({
        "agents": {"defaults": {"compaction": {"memoryFlush": {"enabled": True},
                                               "reserveTokensFloor": 50_000}},
                   "list": [{"id": f"a{i}", "workspace": "/x"} for i in range(5_000)]}}))
    assert config.stat().st_size > 64 * 1024
    proc = run(["audit", "--openclaw-config", str(config), "."], root)
    out = proc.stdout.decode()
    assert "PASS memory-flush" in out and "cannot be used" not in out


@pytest.mark.parametrize("content,expect", [
    ("[" * 100_000 + "]" * 100_000, "nested more than 100 levels deep"),
    ('{"a": ' + "9" * 5_000 + "}", "an integer of 5,000 digits"),
    ('{"a": "\\ud800"}', "lone surrogate"),
    ("[]" + " " * (2 * 1024 * 1024), "over the 1,048,576-byte limit"),
], ids=["100,000 deep", "5,000-digit integer", "lone surrogate", "2 MB"])
def test_hostile_graph_json_is_a_clear_error(make_vault, content, expect):
    root = make_vault({"MEMORY.md": "# M\n", ".obsidian/graph.json": content})
    before = (root / ".obsidian" / "graph.json").read_bytes()
    proc = run(["graph", "--write-colors", "."], root)
    err = assert_clean(proc, allowed=(2,))
    assert expect in err and "left untouched" in err, err
    assert (root / ".obsidian" / "graph.json").read_bytes() == before
    proc = run(["audit", "."], root)
    assert_clean(proc, allowed=(1,))
    assert expect in proc.stdout.decode()


def test_graph_json_with_ordinary_content_is_still_merged(make_vault):
    root = make_vault({"MEMORY.md": "# M\n", ".obsidian/graph.json":
                       '{"colorGroups": [{"query": "tag:#mine", "color": {"a": 1, "rgb": 5}}],'
                       ' "scale": 1.5, "big": 123456789012345678901234567890}'})
    proc = run(["graph", "--write-colors", "."], root)
    assert_clean(proc, allowed=(0,))
    data = json.loads((root / ".obsidian" / "graph.json").read_text())
    assert data["colorGroups"][0]["query"] == "tag:#mine" and len(data["colorGroups"]) > 1
    assert data["big"] == 123456789012345678901234567890


# -- vaultkit.toml past its bounds: each one clear line, exit 2 ------------------------------------

BAD_CONFIGS = [
    ("churn-days", "[git]\nchurn-days = 99999999\n", "git.churn-days: must be at most 100,000"),
    ("recent-days", "[index]\nrecent-days = 99999999\n",
     "index.recent-days: must be at most 100,000"),
    ("5,000-digit required-version", 'required-version = ">=' + "9" * 5_000 + '"\n',
     "required-version: 5,002 characters"),
    ("5,000-deep array", "x = " + "[" * 5_000 + "]" * 5_000 + "\n",
     "nested more than 100 levels deep"),
    ("5,000-digit integer", "x = " + "9" * 5_000 + "\n", "cannot be read"),
    ("200-digit integer", "x = " + "9" * 200 + "\n", "an integer of more than 100 digits"),
    ("nested quantifier", '[phrases]\nfiller = ["re:(a+)+$"]\n', "can take exponential time"),
    ("overlapping alternation", '[phrases]\nlesson = ["re:(a|ab)*c"]\n',
     "can take exponential time"),
    ("2 MB", "# " + "x" * (2 * 1024 * 1024) + "\n", "over the 1,048,576-byte limit"),
]
READERS = [["check", "."], ["check", "--hook", "MEMORY.md"], ["index", "."], ["graph", "."],
           ["audit", "."], ["search", "--root", ".", "x"], ["get", "--root", ".", "MEMORY.md"],
           ["distill", "--root", "."], ["log", "--root", ".", "x"], ["archive", "--root", "."]]


@pytest.mark.parametrize("config,expect", [c[1:] for c in BAD_CONFIGS],
                         ids=[c[0] for c in BAD_CONFIGS])
def test_config_past_its_bounds_exit_2_one_line(make_vault, config, expect):
    """Regression: each of these was an internal error or a hang (the regex one, on a
    note of a's)."""
    root = make_vault({"vaultkit.toml": config, "MEMORY.md": "# M\n\n" + "a" * 40 + "!\n",
                       f"memory/{TODAY}.md":
                           f"# {TODAY}\n\n### 09:00 — x\n\n" + "a" * 40 + "!\n"})
    for argv in READERS:
        proc = run(argv, root, timeout=30)
        err = assert_clean(proc, allowed=(2,))
        assert expect in err, (argv, err)
    assert not (root / "memory" / "INDEX.md").exists()


def test_fifo_as_vaultkit_toml_is_a_clear_error(tmp_path):
    root = tmp_path / "vault"
    (root / ".obsidian").mkdir(parents=True)
    (root / "MEMORY.md").write_text("# M\n")
    os.mkfifo(root / "vaultkit.toml")
    proc = run(["check", "."], root)
    err = assert_clean(proc, allowed=(2,))
    assert "vaultkit.toml: cannot read: not a regular file (a FIFO)" in err


def test_fifo_or_device_as_rule_pack_is_a_clear_error(tmp_path):
    root = tmp_path / "vault"
    (root / ".obsidian").mkdir(parents=True)
    (root / "MEMORY.md").write_text("# M\n")
    os.mkfifo(tmp_path / "pack.yaml")
    packs = [(str(tmp_path / "pack.yaml"), "a FIFO")]
    if is_char_device("/dev/zero"):
        packs.append(("/dev/zero", "a character device"))
    for pack, kind in packs:
        proc = run(["check", "--profile", pack, "."], root)
        err = assert_clean(proc, allowed=(2,))
        assert f"{pack}: cannot read rule pack: not a regular file ({kind})" in err


@pytest.mark.parametrize("pattern", [r"\bdecided\b", r"(?:learned|lesson)s?", r"lesson(s)?:",
                                     r"(?:ab)+c", r"(?:a++)+", r"(?>a+)+", r"(?:foo|bar)+",
                                     r"\d{4}-\d{2}-\d{2}", r".*todo.*later"])
def test_ordinary_config_regexes_are_accepted(make_vault, pattern):
    root = make_vault({"vaultkit.toml": f"[phrases]\nlesson = ['re:{pattern}']\n",
                       "MEMORY.md": "# M\n"})
    proc = run(["check", "."], root)
    assert_clean(proc, allowed=(0, 1))


def test_check_output_to_dev_full_is_a_clear_error(make_vault):
    if not is_char_device("/dev/full"):
        pytest.skip("/dev/full is not a character device here")
    root = make_vault({"MEMORY.md": "# M\n"})
    proc = run(["check", "-o", "/dev/full", "."], root)
    err = assert_clean(proc, allowed=(2,))
    assert "No space left on device" in err
    assert is_char_device("/dev/full")


# -- search: a query is bounded -----------------------------------------------------------------

def test_huge_query_is_bounded_with_a_note(make_vault):
    """Regression: a 1 MB query of 60,000 distinct words took 46 s and 220 MB."""
    root = make_vault({"MEMORY.md": "# M\n\nthe limits of memory\n"})
    words = [f"limits{i:05d}x" for i in range(60_000)]  # ~780 KB over 60,000 arguments
    started = time.monotonic()
    proc = run(["search", "--root", ".", "--json", "--min-score", "0", "limits", *words], root,
               timeout=30)
    assert_clean(proc, allowed=(0,))
    assert time.monotonic() - started < 30
    err = proc.stderr.decode()
    assert "vaultkit: note: the query is long: searching its first 2,000 of" in err
    assert "its first 32 of" in err
    results = json.loads(proc.stdout)["results"]
    assert [h["path"] for h in results] == ["MEMORY.md"]  # the first term still counts


def test_ordinary_query_has_no_note(make_vault):
    root = make_vault({"MEMORY.md": "# M\n\nthe limits of memory\n"})
    proc = run(["search", "--root", ".", "limits", "of", "memory"], root)
    assert_clean(proc, allowed=(0,))
    assert "note" not in proc.stderr.decode()


# -- the caches under .vaultkit/ ----------------------------------------------------------------

@pytest.mark.parametrize("target", ["/dev/zero", "fifo"], ids=["device", "FIFO"])
def test_cache_files_that_are_not_files_are_ignored(make_vault, target):
    """A cloned repository can ship .vaultkit/cache/* as symlinks to anything: they are
    never followed, so a run neither hangs nor reads a device."""
    root = make_vault({"MEMORY.md": "# M\n\n- [[missing]]\n"})
    proc = run(["check", "."], root)  # creates the caches
    assert_clean(proc, allowed=(0,))
    cache = root / ".vaultkit" / "cache"
    names = sorted(p.name for p in cache.iterdir())
    assert names == ["store-1.sqlite"]  # (every cache is in the store)
    if target == "fifo":
        os.mkfifo(root.parent / "fifo")
        target = str(root.parent / "fifo")
    for name in names:
        (cache / name).unlink()
        (cache / name).symlink_to(target)
    proc = run(["check", "."], root, timeout=20)
    assert_clean(proc, allowed=(0,))
    assert "broken-link" in proc.stdout.decode()


# -- big and pathological, but regular, input for every command -----------------------------------

def build_big(root: Path) -> Path:
    """A vault that is large in every direction a command walks: 60,000 headings each
    linked to (the resolver once compared every link with every heading), a journal of
    10,000 entries, a 2 MB note of links, 2,000 notes (the parallel parse), and a 50 MB
    note (sparse on disk; it is judged by its size and never read)."""
    (root / ".obsidian").mkdir(parents=True)
    (root / SEM).mkdir(parents=True)
    (root / "MEMORY.md").write_text("# Memory\n\n## Facts\n\n- [[headings]] and [[n0]]\n")
    (root / SEM / "headings.md").write_text(
        "# Headings\n\n" + "".join(f"## H{i}\n\nsee [[headings#H{i}]]\n\n" for i in range(60_000)))
    (root / "memory" / f"{TODAY}.md").write_text(f"# {TODAY}\n\n" + "".join(
        f"### 09:{i % 60:02d} — entry {i}\n\ndecided to keep {i}\nlesson: it held\nnext: more\n\n"
        for i in range(10_000)))
    (root / "memory" / "2020-01-01.md").write_text("# 2020-01-01\n\n" + "".join(
        f"### 09:00 — old {i}\n\nsee [[n{i}]]\na\nb\n\n" for i in range(2_000)))
    line = "- a line with [[n1]], [[missing]], [[headings#H7]], #tag and `code`\n"
    (root / SEM / "links.md").write_text("# Links\n\n" + line * (2 * 1024 * 1024 // len(line)))
    for i in range(2_000):
        (root / SEM / f"n{i}.md").write_text(f"# N{i}\n\n[[n{(i + 1) % 2_000}]] #t{i % 50}\n")
    with open(root / SEM / "huge.md", "wb") as fh:
        fh.write(b"# Huge\n")
        fh.truncate(50 * 1024 * 1024)
    return root


@pytest.fixture(scope="module")
def big_vault(tmp_path_factory) -> Path:
    return build_big(tmp_path_factory.mktemp("big") / "vault")


BIG_COMMANDS = [
    (["check", "--no-cache", "."], None),
    (["check", "."], None),
    (["check", "--hook", f"{SEM}/headings.md", f"{SEM}/links.md", f"memory/{TODAY}.md"], None),
    (["index", "--check", "."], None),
    (["graph", "--format", "json", "."], None),
    (["graph", "--write-colors", "."], None),
    (["audit", "."], None),
    (["log", "--root", ".", "-"], b"Big\n" + b"a long line of the entry " * 4_000 + b"\nwhy\nnext"),
    (["search", "--root", ".", "--json", "decided", "lesson", "headings"], None),
    (["get", "--root", ".", f"memory/{TODAY}.md", "--from", "40000"], None),
    (["get", "--root", ".", f"{SEM}/huge.md"], None),
    (["distill", "--root", ".", "--days", "100000"], None),
    (["archive", "--root", ".", "--dry-run", "--keep-days", "1"], None),
    (["index", "."], None),
    (["archive", "--root", ".", "--keep-days", "1"], None),
    (["init", "."], None),
]


@pytest.mark.parametrize("index", range(len(BIG_COMMANDS)),
                         ids=[" ".join(a[:4]) for a, _ in BIG_COMMANDS])
def test_big_vault_every_command_finishes(big_vault, index):
    argv, stdin = BIG_COMMANDS[index]
    proc = run(argv, big_vault, stdin=stdin, timeout=90)
    assert_clean(proc)
    if argv[0] == "check" and "--hook" not in argv:
        assert b"huge.md" in proc.stdout  # over the size limit: reported, not read
    if argv[:2] == ["get", "--root"] and argv[2].endswith("huge.md"):
        assert proc.returncode == 2 and b"byte limit" in proc.stderr


def test_every_heading_link_resolves_in_a_big_note(big_vault):
    proc = run(["check", "--select", "broken-link", "--format", "json", "."], big_vault,
               timeout=90)
    assert_clean(proc, allowed=(0, 1))
    broken = {(f["path"], f["message"]) for f in json.loads(proc.stdout)}
    assert not any(p == f"{SEM}/headings.md" for p, _ in broken)
    assert any("missing" in m for p, m in broken if p == f"{SEM}/links.md")


# -- vaultkit.core.bounded, directly: what is refused and what is not ---------------------------------

def test_read_regular_reads_up_to_the_limit_exactly(tmp_path):
    import errno

    from vaultkit.core.bounded import ReadRefused, read_regular

    path = tmp_path / "f.md"
    path.write_bytes(b"x" * 100)
    assert read_regular(path, 100) == b"x" * 100
    with pytest.raises(ReadRefused) as info:
        read_regular(path, 99)
    assert info.value.errno == errno.EFBIG
    assert "100 bytes, over the 99-byte limit" in str(info.value)


def test_read_regular_refuses_what_is_not_a_file_without_blocking(tmp_path):
    from vaultkit.core.bounded import ReadRefused, read_regular

    os.mkfifo(tmp_path / "fifo.md")  # opening it for reading would block: it is not opened
    (tmp_path / "dir.md").mkdir()
    (tmp_path / "link.md").symlink_to(tmp_path / "target.md")
    (tmp_path / "target.md").write_text("t")
    for name, expect in (("fifo.md", "(a FIFO)"), ("dir.md", "(a folder)")):
        with pytest.raises(ReadRefused, match=expect.replace("(", r"\(").replace(")", r"\)")):
            read_regular(tmp_path / name, 1000)
    assert read_regular(tmp_path / "link.md", 10) == b"t"  # symlinks followed by default
    with pytest.raises(ReadRefused, match="symlink"):
        read_regular(tmp_path / "link.md", 10, follow_symlinks=False)
    if is_char_device("/dev/zero"):
        with pytest.raises(ReadRefused, match="character device"):
            read_regular("/dev/zero", 10)


def test_yaml_bounds():
    import yaml

    from vaultkit.core.bounded import LimitError, load_yaml

    assert load_yaml("a: [1, {b: c}]\nd: 2020-01-01\n")["a"] == [1, {"b": "c"}]
    assert load_yaml("x: " + "[" * 99 + "]" * 99) is not None  # 100 levels with the mapping
    with pytest.raises(LimitError, match="nested more than 100 levels"):
        load_yaml("x: " + "[" * 100 + "]" * 100)
    with pytest.raises(LimitError, match="alias bomb"):
        load_yaml(ALIAS_BOMB_YAML)
    with pytest.raises(yaml.YAMLError):
        load_yaml("a: [unclosed\n")
    with pytest.raises(yaml.YAMLError):  # no tag constructs a Python object
        load_yaml("a: !!python/object/apply:os.system ['true']\n")


def test_json_and_json5_bounds():
    import json

    from vaultkit.core.bounded import LimitError, load_json, load_json5

    assert load_json('{"n": ' + "9" * 100 + "}")["n"] == int("9" * 100)
    with pytest.raises(LimitError, match="101 digits"):
        load_json('{"n": ' + "9" * 101 + "}")
    assert load_json("[" * 99 + "]" * 99) is not None
    with pytest.raises(LimitError, match="nested more than 100"):
        load_json("[" * 101 + "]" * 101)
    with pytest.raises(json.JSONDecodeError):
        load_json("{a: 1}")
    assert load_json5("{a: 1, // c\n b: [1,],}") == {"a": 1, "b": [1]}
    with pytest.raises(LimitError, match="lone surrogate"):
        load_json5('{a: "\\ud800"}')
    with pytest.raises(LimitError, match="nested more than 100"):
        load_json5("{a: " + "[" * 500 + "]" * 500 + "}")


def test_toml_bounds():
    from vaultkit.core.bounded import LimitError, load_toml

    assert load_toml("a = 1\n[b]\nc = [1, [2, [3]]]\n") == {"a": 1, "b": {"c": [1, [2, [3]]]}}
    with pytest.raises(LimitError, match="nested more than 100"):
        load_toml("a = " + "[" * 150 + "]" * 150)


@pytest.mark.parametrize("pattern,refused", [
    (r"(a+)+$", True), (r"(\w+\s?)+$", True), (r"(a{1,3}){2,}", True), (r"(\d\d?)+x", True),
    (r"(a|ab)+c", True), (r"(?:x|x)*y", True), (r"(?:ab?)+", True),
    (r"\bdecided\b", False), (r"lesson(s)?:", False), (r"(?:foo|bar)+", False),
    (r"(?:ab)+c", False), (r"(?:a{2})+", False), (r"(?:a++)+", False), (r"(?>a+)+", False),
    (r".*todo.*later", False), (r"#lessons?\b", False), (r"\d{4}-\d{2}-\d{2}", False),
])
def test_regex_problem(pattern, refused):
    import re

    from vaultkit.core.bounded import regex_problem

    assert (regex_problem(pattern, re.IGNORECASE) is not None) == refused


def test_every_bundled_phrase_regex_is_accepted():
    import re

    from vaultkit.core.bounded import regex_problem
    from vaultkit.vault.profile import load_profile
    from vaultkit.core.resources import rules_dir

    packs = sorted(rules_dir().glob("*.yaml"))
    assert packs
    for pack in packs:
        phrases = load_profile(pack).phrases
        for name in ("lesson", "filler", "decision", "preference", "stale"):
            for p in getattr(phrases, name):
                if p.startswith("re:"):
                    assert regex_problem(p[3:], re.IGNORECASE) is None, (pack.name, p)


# -- graph.json and openclaw.json as FIFOs and devices, where vaultkit looks for them -------------

def _special(path: Path, kind: str) -> None:
    if kind == "FIFO":
        os.mkfifo(path)
    else:
        why = can_mknod(path.parent)
        if why:
            pytest.skip(why)
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 5))  # /dev/zero's numbers


@pytest.mark.parametrize("kind", ["FIFO", "device"])
def test_special_graph_json(tmp_path, kind):
    root = tmp_path / "vault"
    (root / ".obsidian").mkdir(parents=True)
    (root / "MEMORY.md").write_text("# M\n")
    _special(root / ".obsidian" / "graph.json", kind)
    word = "a FIFO" if kind == "FIFO" else "a character device"
    for argv, code in ((["graph", "--write-colors", "."], 2), (["audit", "."], 1),
                       (["graph", "."], 0), (["check", "."], 0), (["init", "."], 0)):
        proc = run(argv, root)
        err = assert_clean(proc, allowed=(code,))
        if argv[:2] == ["graph", "--write-colors"]:
            assert f"graph.json: cannot read: not a regular file ({word})" in err
        if argv[0] == "audit":
            assert f"graph.json cannot be read: not a regular file ({word})" in proc.stdout.decode()
    assert not stat.S_ISREG(os.lstat(root / ".obsidian" / "graph.json").st_mode)


@pytest.mark.parametrize("kind", ["FIFO", "device"])
def test_special_openclaw_json_beside_the_vault(tmp_path, kind):
    """The openclaw.json vaultkit finds by itself (beside the workspace): reported as not
    usable, never read."""
    root = tmp_path / "ws"
    (root / ".obsidian").mkdir(parents=True)
    (root / "MEMORY.md").write_text("# M\n" + "x" * 100 + "\n")
    _special(tmp_path / "openclaw.json", kind)
    word = "a FIFO" if kind == "FIFO" else "a character device"
    proc = run(["audit", "."], root)
    assert_clean(proc, allowed=(1,))
    out = proc.stdout.decode()
    assert f"openclaw.json: {tmp_path / 'openclaw.json'}" in out
    assert f"not a regular file ({word})" in out
    for argv in (["check", "--select", "ALL", "."], ["check", "."], ["graph", "."]):
        assert_clean(run(argv, root), allowed=(0, 1))
