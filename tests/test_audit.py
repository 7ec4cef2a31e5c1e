"""`vaultkit audit`: every check passes on a good vault and is shown failing on its own."""

from __future__ import annotations

import datetime as dt
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from test_init import git, isolated_env, run_cli  # noqa: F401  (isolated_env is autouse)
from vaultkit.audit import CHECK_IDS, estimate_tokens, run_audit, unclosed_items
from vaultkit.cli.starter import init_vault, openclaw_snippet
from vaultkit.vault.loader import load_vault

TODAY = dt.date.today()

BAD_FLOOR = """{
  // OpenClaw settings; JSON5 with comments
  agents: {
    defaults: {
      compaction: {
        reserveTokensFloor: 20000, // the runtime default
        memoryFlush: { enabled: true },
      },
    },
  },
}
"""


@pytest.fixture(scope="module")
def good_template(tmp_path_factory):
    """A starter vault that passes every check: init --git, the snippet, hooks, a remote."""
    base = tmp_path_factory.mktemp("good")
    home = base / "home"
    home.mkdir()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(home))
        mp.setenv("GIT_CONFIG_NOSYSTEM", "1")
        mp.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
        for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "OPENCLAW_CONFIG_PATH"):
            mp.delenv(name, raising=False)
        root = base / "ws" / "demo"
        init_vault(root, git=True)
        subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=root, check=True,
                       capture_output=True)
        git(root, "remote", "add", "origin", str(base / "backup.git"))
        (base / "ws" / "openclaw.json").write_text(openclaw_snippet(root))
    return base / "ws"


def run_snapshot(ws: Path) -> None:
    from vaultkit.cli import main

    assert main(["snapshot", "--quiet", str(ws / "demo")]) == 0


@pytest.fixture
def ws(good_template, tmp_path):
    """A fresh copy of the good workspace folder (vault in ws/demo, config in ws/)."""
    target = tmp_path / "ws"
    shutil.copytree(good_template, target, symlinks=True)
    # snapshots between commits, kept by the starter heartbeat's `vaultkit snapshot` step
    from vaultkit.cli import main

    assert main(["snapshot", "--quiet", str(target / "demo")]) == 0
    return target


def audit(root: Path, **kw) -> dict:
    vault = load_vault(root, use_cache=False)
    return {c.id: c for c in run_audit(vault, **kw)}


def statuses(checks: dict) -> dict:
    return {cid: c.status for cid, c in checks.items()}


def commit_all(root: Path, message: str = "change", date: str | None = None) -> None:
    git(root, "add", "-A")
    env = {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date} if date else {}
    # --no-verify: the installed hook would fetch vaultkit from its hook repository
    git(root, "-c", "user.name=t", "-c", "user.email=t@x", "commit", "--no-verify", "--allow-empty", "-qm", message,
        **env)


# -- the good vault --------------------------------------------------------------------------

def test_good_vault_passes_everything(ws):
    checks = audit(ws / "demo")
    assert list(checks) == list(CHECK_IDS)
    assert statuses(checks) == dict.fromkeys(CHECK_IDS, "pass"), \
        {k: c.found for k, c in checks.items() if c.status != "pass"}
    for c in checks.values():
        assert c.found


# -- every check failing on its own -------------------------------------------------------------

def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _heartbeat(ws: Path, text: str) -> None:
    _write(ws / "demo" / "HEARTBEAT.md", text)


def _config(ws: Path, text: str) -> None:
    _write(ws / "openclaw.json", text)


HEARTBEAT_NO_WEEKLY = "# HEARTBEAT\n\n## Hourly\n- Append to today's journal with printf >>.\n"
HEARTBEAT_NO_PRUNE = ("# HEARTBEAT\n\n## Weekly\n- Review the daily logs.\n"
                      "- Promote patterns to MEMORY.md.\n")

# (name, change to the good workspace, check id, status, fragments of found, fragment of hint)
CASES = [
    ("memory-md missing", lambda ws: (ws / "demo/MEMORY.md").unlink(),
     "memory-md", "fail", ["no MEMORY.md"], "create MEMORY.md"),
    ("memory-md too big", lambda ws: _write(ws / "demo/MEMORY.md", "# MEMORY\n" + "x" * 11000),
     "memory-md", "fail", ["11,009 bytes", "10,240"], "move entries"),
    ("memory-dir missing", lambda ws: shutil.rmtree(ws / "demo/memory"),
     "memory-dir", "fail", ["no memory/ folder"], "mkdir"),
    ("memory-flush disabled", lambda ws: _config(
        ws, "{agents: {defaults: {compaction: {reserveTokensFloor: 40000, "
            "memoryFlush: {enabled: false}}}}}"),
     "memory-flush", "fail", ["memoryFlush.enabled is false"], "to true"),
    ("memory-flush only default", lambda ws: _config(
        ws, "{agents: {defaults: {compaction: {reserveTokensFloor: 40000}}}}"),
     "memory-flush", "warn", ["only the runtime default (true), not set"], "enabled: true"),
    ("memory-flush no config", lambda ws: (ws / "openclaw.json").unlink(),
     "memory-flush", "unknown", ["unknown: no openclaw.json found", "the runtime's default is true"],
     "vaultkit init"),
    ("reserve-floor 20000 in JSON5", lambda ws: _config(ws, BAD_FLOOR),
     "reserve-floor", "fail", ["reserveTokensFloor is 20,000", "below 40,000"],
     "set agents.defaults.compaction.reserveTokensFloor to 40000 in"),
    ("reserve-floor unset", lambda ws: _config(ws, "{agents: {defaults: {}}}"),
     "reserve-floor", "fail", ["only the runtime default 20,000"], "to 40000"),
    ("reserve-floor no config", lambda ws: (ws / "openclaw.json").unlink(),
     "reserve-floor", "unknown", ["no openclaw.json found", "default is 20,000", "looked for",
                                  "openclaw.json (the vault's parent folder)"],
     "--openclaw-config PATH, or OPENCLAW_CONFIG_PATH=PATH"),
    ("agents-protocol missing", lambda ws: _write(
        ws / "demo/AGENTS.md", "# AGENTS\n\n## Memory Protocol\n- Read the files.\n"),
     "agents-protocol", "warn", ["'Memory Protocol' heading (line 3)",
                                 "never tells the agent to run memory_search"], "memory_search"),
    ("agents-protocol no AGENTS.md", lambda ws: (ws / "demo/AGENTS.md").unlink(),
     "agents-protocol", "fail", ["no AGENTS.md"], "Memory Protocol"),
    ("heartbeat empty", lambda ws: _heartbeat(ws, "# HEARTBEAT\n\n## Tasks\n\n"),
     "heartbeat-distillation", "fail", ["only headings and blank lines"], "weekly distillation"),
    ("heartbeat missing", lambda ws: (ws / "demo/HEARTBEAT.md").unlink(),
     "heartbeat-distillation", "fail", ["no HEARTBEAT.md"], "weekly task"),
    ("heartbeat no weekly", lambda ws: _heartbeat(ws, HEARTBEAT_NO_WEEKLY),
     "heartbeat-distillation", "fail", ["missing: weekly schedule"], "Weekly"),
    ("heartbeat no pruning", lambda ws: _heartbeat(ws, HEARTBEAT_NO_PRUNE),
     "heartbeat-distillation", "warn", ["missing: prune stale entries"], "Prune"),
    ("heartbeat disabled", lambda ws: _config(
        ws, openclaw_snippet(ws / "demo").replace('every: "1h"', 'every: "0m"')),
     "heartbeat-distillation", "fail", ['the heartbeat is disabled', '"0m"'], '"1h"'),
    ("footprint over 15 KB", lambda ws: _write(ws / "demo/SOUL.md", "# SOUL\n" + "s" * 12000),
     "bootstrap-footprint", "warn", ["over the ~15 KB a typical session should load"],
     "SOUL.md"),
    ("footprint bootstrap over 20 KB", lambda ws: _write(ws / "demo/SOUL.md",
                                                         "# SOUL\n" + "s" * 19000),
     "bootstrap-footprint", "warn", ["over the 20,480 guideline"], "SOUL.md"),
    ("truncation per file", lambda ws: _config(
        ws, openclaw_snippet(ws / "demo").replace("workspace:", "bootstrapMaxChars: 1000,\n"
                                                                "      workspace:")),
     "bootstrap-truncation", "fail", ["of AGENTS.md (over the per-file limit of 1,000",
                                      "silently loses"], "cut AGENTS.md below 1,000 chars"),
    ("truncation total", lambda ws: _config(
        ws, openclaw_snippet(ws / "demo").replace("workspace:", "bootstrapTotalMaxChars: 3000,\n"
                                                                "      workspace:")),
     "bootstrap-truncation", "fail", ["of the total limit of 3,000"], "below 3,000"),
    ("leftover BOOTSTRAP.md", lambda ws: _write(ws / "demo/BOOTSTRAP.md", "# First run\n"),
     "bootstrap-leftover", "warn", ["BOOTSTRAP.md is still there"], "git rm BOOTSTRAP.md"),
    ("index missing", lambda ws: (ws / "demo/memory/INDEX.md").unlink(),
     "index", "tip", ["no memory/INDEX.md"], "vaultkit index"),
    ("index stale", lambda ws: _write(
        ws / "demo/memory/semantic/payments.md", "# Payments\n\nCards are validated twice.\n"),
     "index", "fail", ["stale"], "vaultkit index"),
    ("git-backup not a repo", lambda ws: shutil.rmtree(ws / "demo/.git"),
     "git-backup", "fail", ["not in a git repository"], "git init"),
    ("git-backup stale", lambda ws: commit_all(ws / "demo", "old", "2020-01-01T00:00:00Z"),
     "git-backup", "fail", ["older than 36 h"], "backup: $(date +%F)"),
    ("git-backup no remote", lambda ws: git(ws / "demo", "remote", "remove", "origin"),
     "git-backup", "warn", ["no remote"], "git remote add origin"),
    ("pre-commit no config", lambda ws: (ws / "demo/.pre-commit-config.yaml").unlink(),
     "pre-commit", "tip", ["no .pre-commit-config.yaml"], "pre-commit install"),
    ("pre-commit no vaultkit hooks", lambda ws: _write(
        ws / "demo/.pre-commit-config.yaml",
        "repos:\n- repo: https://github.com/pre-commit/pre-commit-hooks\n  rev: v4.6.0\n"
        "  hooks:\n  - id: trailing-whitespace\n"),
     "pre-commit", "tip", ["uses no vaultkit hook"], "vaultkit-check"),
    ("pre-commit hook not installed", lambda ws: (ws / "demo/.git/hooks/pre-commit").unlink(),
     "pre-commit", "tip", ["the git hook is not installed"], "pre-commit install"),
    ("pre-commit config broken", lambda ws: _write(ws / "demo/.pre-commit-config.yaml",
                                                   "repos: [\n"),
     "pre-commit", "fail", ["not valid YAML", "line 2"], "fix the YAML"),
    ("obsidian groups missing", lambda ws: _write(ws / "demo/.obsidian/graph.json",
                                                  '{"colorGroups": []}'),
     "obsidian", "warn", ["lacks", 'path:"memory/decisions/"'], "--write-colors"),
    ("obsidian graph.json broken", lambda ws: _write(ws / "demo/.obsidian/graph.json", "{"),
     "obsidian", "warn", ["not valid JSON (line 1, column 2)"], "--write-colors"),
    ("unclosed-work old items", lambda ws: _write(
        ws / "demo/unclosed_work.yaml",
        f"- task: Fix the cron timezone\n  since: {TODAY - dt.timedelta(days=10)}\n"
        f"- task: Fresh item\n  since: {TODAY}\n"),
     "unclosed-work", "warn", ["1 of 2 open items", "Fix the cron timezone", "10 days"],
     "close them"),
    ("unclosed-work broken YAML", lambda ws: _write(ws / "demo/unclosed_work.yaml",
                                                    "- task: [unclosed\n- x\n"),
     "unclosed-work", "fail", ["not valid YAML", "line"], "fix the YAML"),
    ("unclosed-work wrong shape", lambda ws: _write(ws / "demo/unclosed_work.yaml", "42\n"),
     "unclosed-work", "fail", ["not a list of items or a mapping"], "since: YYYY-MM-DD"),
    ("baseline unreadable", lambda ws: _write(ws / "demo/vaultkit-baseline.json", "{"),
     "baseline", "fail", ["cannot be read", "not valid JSON"], "--write-baseline"),
    ("baseline holds a fixed finding", lambda ws: _write(
        ws / "demo/vaultkit-baseline.json",
        '{"vaultkit-baseline": 1, "findings": [{"path": "NOW.md", "rule": "lesson-in-now", '
        '"code": "VK401", "fingerprint": "0123456789abcdef0123", "count": 1}]}'),
     "baseline", "warn", ["accepts 1 finding in 1 file", "1 of them is fixed"],
     "vaultkit check --shrink-baseline"),
    ("history note deleted", lambda ws: (
        _write(ws / "demo/memory/semantic/payments.md", "# Payments\n\nCards are checked.\n"),
        commit_all(ws / "demo", "add"), (ws / "demo/memory/semantic/payments.md").unlink(),
        commit_all(ws / "demo", "delete")),
     "history", "warn", ["1 memory-loss event", "note-deleted memory/semantic/payments.md"],
     "vaultkit recover"),
    ("snapshots none", lambda ws: (shutil.rmtree(ws / "demo/.git/vaultkit"), git(
        ws / "demo", "update-ref", "-d", "refs/vaultkit/snapshots")),
     "snapshots", "tip", ["no snapshots", "would seal the loss"], "vaultkit watch --service"),
    ("snapshots nothing keeps them", lambda ws: _heartbeat(ws, (
        ws / "demo/HEARTBEAT.md").read_text().replace("vaultkit snapshot", "vaultkit index")),
     "snapshots", "warn", ["nothing keeps them running"], "--service cron --install"),
    ("snapshots loss not recovered", lambda ws: (
        _write(ws / "demo/memory/semantic/payments.md", "# Payments\n\n- a\n- b\n- c\n- d\n"),
        run_snapshot(ws), _write(ws / "demo/memory/semantic/payments.md", "# Payments\n"),
        run_snapshot(ws)),
     "snapshots", "warn", ["1 loss between commits not recovered", "mass-deletion"],
     "vaultkit recover --all"),
    ("secrets committed", lambda ws: (
        _write(ws / "demo/memory/semantic/bots.md",
               "# Bots\n\n- alerts: 5145683452:AAbeuEchsVEoR7TJYHSDATOCN1D61_k7U4O\n"),
        commit_all(ws / "demo", "backup: bots")),
     "secrets", "fail", ["memory/semantic/bots.md:3 Telegram bot token (…7U4O)",
                         "added in 1 commit", '"backup: bots"'], "git-filter-repo"),
]


@pytest.mark.parametrize("name, change, cid, status, found, hint", CASES,
                         ids=[c[0] for c in CASES])
def test_each_check_fails_on_its_own(ws, name, change, cid, status, found, hint):
    change(ws)
    checks = audit(ws / "demo")
    check = checks[cid]
    assert check.status == status, check
    for fragment in found:
        assert fragment in check.found, (fragment, check.found)
    assert hint in check.hint, (hint, check.hint)
    assert "\n" not in check.hint


def test_every_check_has_a_failing_or_warning_case():
    assert {c[2] for c in CASES} == set(CHECK_IDS)


def test_reserve_floor_done_when_cli(ws, capsys):
    """Done when: JSON5 with comments and reserveTokensFloor 20000 fails with value and hint."""
    _config(ws, BAD_FLOOR)
    code, out, _ = run_cli("audit", ws / "demo", "--symbols", "never", capsys=capsys)
    assert code == 1
    line = next(ln for ln in out.splitlines() if ln.startswith("FAIL reserve-floor"))
    assert "agents.defaults.compaction.reserveTokensFloor is 20,000" in line
    hint = out.splitlines()[out.splitlines().index(line) + 1]
    assert "→ set agents.defaults.compaction.reserveTokensFloor to 40000 in " in hint
    assert str(ws / "openclaw.json") in hint


def test_config_parse_error_is_a_failed_check_with_line_and_column(ws, capsys):
    _config(ws, "{\n  agents: {\n    defaults: { compaction: { reserveTokensFloor: 40000 }\n  \n")
    code, out, err = run_cli("audit", ws / "demo", "--format", "json", capsys=capsys)
    assert code == 1 and "Traceback" not in err
    checks = {c["id"]: c for c in json.loads(out)}
    for cid in ("memory-flush", "reserve-floor"):
        assert checks[cid]["status"] == "fail"
        assert "does not parse (line 5, column 1)" in checks[cid]["found"]
        assert f"{ws / 'openclaw.json'}:5:1" in checks[cid]["hint"]
    assert checks["bootstrap-truncation"]["status"] == "pass"
    assert "does not parse" in checks["bootstrap-truncation"]["found"]


def test_explicit_config_that_does_not_exist(ws):
    checks = audit(ws / "demo", openclaw_config=ws / "nope.json")
    assert checks["memory-flush"].status == "fail"
    assert "does not exist" in checks["memory-flush"].found


def test_env_config_path_wins_over_the_parent_folder(ws, monkeypatch):
    other = ws / "elsewhere.json"
    other.write_text(BAD_FLOOR)
    monkeypatch.setenv("OPENCLAW_CONFIG_PATH", str(other))
    assert audit(ws / "demo")["reserve-floor"].status == "fail"
    assert audit(ws / "demo", openclaw_config=ws / "openclaw.json")["reserve-floor"].status == "pass"


def test_home_config_is_the_last_resort(ws, isolated_env):
    (ws / "openclaw.json").unlink()
    home_cfg = isolated_env / ".openclaw" / "openclaw.json"
    home_cfg.parent.mkdir()
    home_cfg.write_text(openclaw_snippet(ws / "demo"))
    checks = audit(ws / "demo")
    assert checks["reserve-floor"].status == "pass"
    assert str(home_cfg) in checks["memory-flush"].found


AGENTS_CONFIG = """{
  agents: {
    defaults: { compaction: { reserveTokensFloor: 40000, memoryFlush: { enabled: true } } },
    list: [
      { id: "main" },
      { id: "cron", compaction: { reserveTokensFloor: 8000 }, heartbeat: { every: "0m" } },
    ],
  },
}"""


def test_agent_overrides(ws, capsys):
    _config(ws, AGENTS_CONFIG)
    assert audit(ws / "demo", agent="main")["reserve-floor"].status == "pass"
    checks = audit(ws / "demo", agent="cron")
    assert checks["reserve-floor"].status == "fail"
    assert "agents.list[cron].compaction.reserveTokensFloor is 8,000" in checks["reserve-floor"].found
    assert "set agents.list[cron].compaction.reserveTokensFloor to 40000" in checks["reserve-floor"].hint
    assert checks["heartbeat-distillation"].status == "fail"
    code, _, err = run_cli("audit", ws / "demo", "--agent", "ghost", capsys=capsys)
    assert code == 2 and "not in agents.list[]" in err and "main, cron" in err


def test_backup_age_is_configurable(ws):
    commit_all(ws / "demo", "two days ago",
               (dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=50)).isoformat())
    assert audit(ws / "demo")["git-backup"].status == "fail"
    assert audit(ws / "demo", backup_max_age_hours=72)["git-backup"].status == "pass"
    (ws / "demo" / "vaultkit.toml").write_text('profile = "openclaw"\n[git]\nbackup-max-age-hours = 60\n')
    commit_all(ws / "demo", "config", (dt.datetime.now(dt.timezone.utc)
                                       - dt.timedelta(hours=50)).isoformat())
    assert audit(ws / "demo")["git-backup"].status == "pass"


def test_git_backup_first_commit_missing(ws):
    shutil.rmtree(ws / "demo" / ".git")
    git(ws / "demo", "init", "-q")
    check = audit(ws / "demo")["git-backup"]
    assert check.status == "fail" and "no commits yet" in check.found


def test_footprint_table_counts_today_and_yesterday(ws):
    yesterday = TODAY - dt.timedelta(days=1)
    _write(ws / "demo" / f"memory/{yesterday}.md", f"# {yesterday}\n\n### 10:00 — Work\n- a\n- b\n- c\n")
    _write(ws / "demo" / "memory/2020-01-01.md", "# old\n")
    check = audit(ws / "demo")["bootstrap-footprint"]
    files = {row["file"]: row for row in check.details}
    assert files[f"memory/{TODAY}.md"]["kind"] == "today"
    assert files[f"memory/{yesterday}.md"]["kind"] == "yesterday"
    assert "memory/2020-01-01.md" not in files
    assert files["MEMORY.md"]["bytes"] == (ws / "demo/MEMORY.md").stat().st_size
    assert all(row["tokens"] > 0 for row in check.details)


@pytest.mark.parametrize("text, tokens", [
    ("", 0), ("abcd", 1), ("abcde", 2), ("会话可丢", 4), ("状态 state", 2 + 2),
    ("é", 1), ("한국어", 3), ("カタカナ", 4),
])
def test_estimate_tokens(text, tokens):
    assert estimate_tokens(text) == tokens


# -- unclosed_work.yaml shapes -------------------------------------------------------------------

@pytest.mark.parametrize("doc, expected", [
    ("", []),
    ("[]", []),
    ("- task: A\n  since: 2026-01-02\n", [("A", dt.date(2026, 1, 2))]),
    ("- title: A\n  date: '2026-01-02'\n", [("A", dt.date(2026, 1, 2))]),
    ("- 2026-01-02 fix the cron\n- no date here\n",
     [("fix the cron", dt.date(2026, 1, 2)), ("no date here", None)]),
    ("items:\n  - task: A\n    opened: 2026-01-02T10:00:00\n", [("A", dt.date(2026, 1, 2))]),
    ("cron fix: 2026-01-02\npricing page:\n  since: 2026-01-05\n  owner: me\n",
     [("cron fix", dt.date(2026, 1, 2)), ("pricing page", dt.date(2026, 1, 5))]),
    ("- task: done one\n  since: 2026-01-02\n  status: done\n- task: open\n", [("open", None)]),
    ("unclosed:\n", []),
    ("42", None),
    ("- [1, 2]\n", None),
])
def test_unclosed_item_shapes(doc, expected):
    import yaml

    assert unclosed_items(yaml.safe_load(doc)) == expected


# -- the memory-only layout ------------------------------------------------------------------------

def test_memory_only_repo(tmp_path):
    """The git repo is only memory/; bootstrap files and openclaw.json live above it."""
    top = tmp_path / "openclaw"
    workspace = top / "workspace"
    init_vault(workspace)
    memory = workspace / "memory"
    shutil.copytree(workspace / ".obsidian", memory / ".obsidian")
    (memory / "vaultkit.toml").write_text('memory-dir = "."\n')
    (memory / ".pre-commit-config.yaml").write_text(
        (workspace / ".pre-commit-config.yaml").read_text())
    git(memory, "init", "-q")
    subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=memory, check=True,
                   capture_output=True)
    git(memory, "remote", "add", "origin", str(tmp_path / "backup.git"))
    (top / "openclaw.json").write_text(openclaw_snippet(workspace))
    from vaultkit.links.indexgen import write_index
    from vaultkit.links.obsidian import write_colors

    vault = load_vault(memory, use_cache=False)
    write_index(vault)
    write_colors(vault)
    commit_all(memory, "backup")
    from vaultkit.cli import main

    assert main(["snapshot", "--quiet", str(memory)]) == 0  # the workspace's heartbeat keeps it
    checks = audit(memory)
    assert statuses(checks) == dict.fromkeys(CHECK_IDS, "pass"), \
        {k: c.found for k, c in checks.items() if c.status != "pass"}
    assert "../MEMORY.md" in checks["memory-md"].found
    rows = {r["file"] for r in checks["bootstrap-footprint"].details}
    assert "../AGENTS.md" in rows and f"{TODAY}.md" in rows
    assert str(top / "openclaw.json") in checks["reserve-floor"].found or \
        checks["reserve-floor"].status == "pass"


def test_memory_only_repo_without_config_gets_a_hint(tmp_path):
    workspace = tmp_path / "workspace"
    init_vault(workspace)
    memory = workspace / "memory"
    (memory / ".obsidian").mkdir()
    check = audit(memory)["memory-dir"]
    assert check.status == "fail"
    assert 'memory-dir = "."' in check.hint


# -- output ----------------------------------------------------------------------------------------

def test_text_output_words_off_a_terminal(ws, capsys):
    code, out, _ = run_cli("audit", ws / "demo", capsys=capsys)
    assert code == 0
    lines = out.splitlines()
    assert any(ln.startswith("PASS memory-md ") for ln in lines)
    assert "✅" not in out
    n = len(CHECK_IDS)
    assert f"{n} checks: {n} passed, 0 warnings, 0 failed." in out
    table = [ln.strip() for ln in lines if ln.strip().startswith(("file ", "total "))]
    # each runtime present adds a column: what it loads of each file, in its own unit
    assert table[0].split() == ["file", "bytes", "~tokens", "openclaw", "chars"]
    assert table[1].startswith("total")


def test_text_output_symbols(ws, capsys):
    (ws / "demo/MEMORY.md").unlink()
    _write(ws / "demo/BOOTSTRAP.md", "# First run\n")
    code, out, _ = run_cli("audit", ws / "demo", "--symbols", "always", capsys=capsys)
    assert code == 1
    assert "❌ memory-md" in out and "⚠️" in out and "✅ memory-dir" in out
    assert "→ create MEMORY.md" in out


def test_json_output(ws, capsys):
    _write(ws / "demo/BOOTSTRAP.md", "# First run\n")
    code, out, _ = run_cli("audit", ws / "demo", "--format", "json", capsys=capsys)
    assert code == 0  # a warning is not a failure
    data = json.loads(out)
    assert [c["id"] for c in data] == list(CHECK_IDS)
    assert all(set(c) >= {"id", "status", "found", "hint"} for c in data)
    assert {c["id"]: c["status"] for c in data}["bootstrap-leftover"] == "warn"
    footprint = next(c for c in data if c["id"] == "bootstrap-footprint")
    assert {"file", "bytes", "tokens", "kind"} <= set(footprint["details"][0])


def test_skip(ws, capsys):
    shutil.rmtree(ws / "demo/.git")
    code, out, _ = run_cli("audit", ws / "demo", "--skip", "git-backup,pre-commit,snapshots",
                           "--format", "json", capsys=capsys)
    assert code == 0
    assert "git-backup" not in {c["id"] for c in json.loads(out)}
    code, _, err = run_cli("audit", ws / "demo", "--skip", "nope", capsys=capsys)
    assert code == 2 and "unknown check nope" in err


def test_missing_vault_is_a_usage_error(tmp_path, capsys):
    code, _, err = run_cli("audit", tmp_path / "nowhere", capsys=capsys)
    assert code == 2 and "no such file or folder" in err


def test_empty_folder_fails_without_crashing(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    code, out, err = run_cli("audit", tmp_path / "empty", "--format", "json", capsys=capsys)
    assert code == 2 and out == "" and "not a vault" in err  # no marker at all
    (tmp_path / "empty" / ".obsidian").mkdir()  # an Obsidian vault with nothing in it
    code, out, err = run_cli("audit", tmp_path / "empty", "--format", "json", capsys=capsys)
    assert code == 0 and "Traceback" not in err and "internal error" not in err
    data = {c["id"]: c["status"] for c in json.loads(out)}
    # a plain Obsidian vault: no agent check applies, git is a recommendation there
    assert "memory-md" not in data and "memory-dir" not in data
    assert data["git-backup"] == data["pre-commit"] == "tip"
    (tmp_path / "empty" / "MEMORY.md").write_text("# Memory\n")  # an agent moved in
    code, out, err = run_cli("audit", tmp_path / "empty", "--format", "json", capsys=capsys)
    data = {c["id"]: c["status"] for c in json.loads(out)}
    assert code == 1 and data["memory-dir"] == data["git-backup"] == "fail"


def test_unreadable_bootstrap_files_do_not_crash(ws):
    (ws / "demo/AGENTS.md").write_bytes(b"# AGENTS\n\xff\xfe memory_search\n")
    (ws / "demo/HEARTBEAT.md").write_bytes(b"\x00\x01binary")
    checks = audit(ws / "demo")
    assert checks["agents-protocol"].status == "fail"
    assert checks["heartbeat-distillation"].status == "fail"
    assert all(not c.found.startswith("the check itself failed") for c in checks.values())


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf"])
def test_backup_max_age_must_be_a_positive_number(value, tmp_path, capsys):
    from vaultkit.cli import main

    init_vault(tmp_path / "demo")
    assert main(["audit", str(tmp_path / "demo"), "--backup-max-age", value]) == 2
    assert "--backup-max-age must be a positive number of hours" in capsys.readouterr().err


def test_hook_command_that_is_not_on_the_path_fails(ws, monkeypatch):
    """A cron job (PATH=/usr/bin:/bin) cannot run `vaultkit` from a virtual environment."""
    import os
    import shutil as _shutil

    git_dir = os.path.dirname(_shutil.which("git"))
    monkeypatch.setenv("PATH", git_dir)  # git, but no vaultkit
    check = audit(ws / "demo")["pre-commit"]
    assert check.status == "fail"
    assert "vaultkit-index (`vaultkit`)" in check.found and "not found on this PATH" in check.found
    assert "PATH=" in check.hint
    monkeypatch.setenv("PATH", os.pathsep.join([os.path.dirname(sys.executable), git_dir]))
    check = audit(ws / "demo")["pre-commit"]
    assert check.status == "pass", check.found


def test_obsidian_checks_only_where_obsidian_is_used(ws):
    """10 of 13 real workspaces never open Obsidian: no .obsidian/ is not a warning."""
    shutil.rmtree(ws / "demo/.obsidian")
    check = audit(ws / "demo")["obsidian"]
    assert check.status == "pass"
    assert "not used as an Obsidian vault" in check.found
    _write(ws / "demo/.obsidian/app.json", "{}")  # opened once: now the colours are checked
    assert audit(ws / "demo")["obsidian"].status == "warn"


# -- first week: verdicts that are right -----------------------------------------------------

# OpenClaw's stock AGENTS.md memory headings, as its template writes them (our own words below
# them): docs/reference/templates/AGENTS.md, an older and the current version
STOCK_OLD = ("# AGENTS.md - Your Workspace\n\n## Every Session\n\n1. Read SOUL.md.\n"
             "2. Read the journal of today and yesterday.\n\n## Memory\n\n"
             "- Daily notes: memory/YYYY-MM-DD.md\n- Long-term: MEMORY.md\n\n"
             "### 📝 Write It Down!\n\n- Files survive restarts.\n\n## Safety\n\n- Ask first.\n")
STOCK_NEW = ("# AGENTS.md - Your Workspace\n\n## Session Startup\n\nUse the startup context.\n\n"
             "## Memory\n\nYou wake up fresh each session.\n\n"
             "### MEMORY.md - Your Long-Term Memory\n\n- Main session only.\n\n"
             "### Write It Down\n\nMental notes do not survive a restart.\n")


@pytest.mark.parametrize("text, headings", [
    (STOCK_OLD, ["'Every Session' (line 3)", "'Memory' (line 8)", "'📝 Write It Down!' (line 13)"]),
    (STOCK_NEW, ["'Session Startup' (line 3)", "'Memory' (line 7)", "'Write It Down' (line 15)"]),
])
def test_the_stock_memory_section_is_recognised_and_the_search_rule_named(ws, text, headings):
    _write(ws / "demo/AGENTS.md", text)
    check = audit(ws / "demo")["agents-protocol"]
    assert check.status == "warn", check
    assert "OpenClaw's stock memory section" in check.found
    for heading in headings:
        assert heading in check.found, (heading, check.found)
    assert "not the search-before-acting rule" in check.found
    assert "no memory protocol" not in check.found
    assert check.hint.startswith("add to the 'Memory' section: \"- ALWAYS run memory_search")


def test_no_memory_section_at_all_still_fails(ws):
    _write(ws / "demo/AGENTS.md", "# AGENTS\n\n## Tools\n- Use the skills.\n")
    check = audit(ws / "demo")["agents-protocol"]
    assert check.status == "fail" and "holds no memory protocol" in check.found


def test_no_visible_config_is_unknown_not_failed(ws, capsys):
    (ws / "openclaw.json").unlink()
    code, out, _ = run_cli("audit", ws / "demo", "--symbols", "never", capsys=capsys)
    assert "FAIL reserve-floor" not in out and "FAIL memory-flush" not in out
    for cid in ("reserve-floor", "memory-flush"):
        line = next(ln for ln in out.splitlines() if ln.startswith(f"???? {cid}"))
        assert str(ws / "openclaw.json") in line and "~/.openclaw" not in line.split("(")[0]
    assert out.rstrip().endswith("failed, 2 unknown.")
    assert code == 0, out  # nothing else fails in the good workspace: unknown fails no audit
    code, out, _ = run_cli("audit", ws / "demo", "--format", "json", capsys=capsys)
    assert {c["id"]: c["status"] for c in json.loads(out)}["reserve-floor"] == "unknown"


def test_a_plain_obsidian_vault_gets_the_checks_that_apply_and_passes(tmp_path, capsys):
    vault = tmp_path / "notes"
    (vault / ".obsidian").mkdir(parents=True)
    (vault / "Ideas.md").write_text("# Ideas\n\nSee [[Reading]].\n")
    (vault / "Reading.md").write_text("# Reading\n")
    code, out, err = run_cli("audit", vault, capsys=capsys)
    assert code == 0, out + err
    assert "not an agent's workspace: the 12 agent-memory checks do not apply" in out
    assert "openclaw.json" not in out and "MEMORY.md" not in out and "FAIL" not in out
    # no graph.json and no colour groups to add: said as it is, not "has the groups"
    assert "no .obsidian/graph.json, and the profile has no colour groups" in out
    assert out.rstrip().endswith("6 checks: 4 passed, 0 warnings, 0 failed, 2 tips.")


def test_footprint_headline_and_table_total_agree_on_a_starter_vault(tmp_path):
    # a fresh starter has no BOOTSTRAP.md: OpenClaw injects a marker in its place, which the
    # headline counts; the table has its row, so its total is the headline's number
    root = tmp_path / "ws" / "v"
    init_vault(root)
    check = audit(root)["bootstrap-footprint"]
    vault = load_vault(root, use_cache=False)
    from vaultkit.vault.runtimes import for_vault
    (rc,) = [c for c in for_vault(vault) if c.runtime == "openclaw"]
    assert check.found.startswith(f"at session start: OpenClaw {rc.total:,} chars in "
                                  f"{len(rc.loaded)} files")
    loaded = [r for r in check.details if "openclaw" in r.get("loaded", {})]
    assert sum(r["loaded"]["openclaw"]["units"] for r in loaded) == rc.total
    assert len(loaded) == len(rc.loaded)
    missing = next(r for r in check.details if r["file"] == "BOOTSTRAP.md")
    assert (missing["kind"], missing["bytes"]) == ("missing", 0)


# -- memory-flush: will the flush run? ---------------------------------------------------------
# The flush starts at window - reserveTokensFloor - softThresholdTokens
# (src/auto-reply/reply/memory-flush.ts); the window defaults to the profile's 200,000.

def _flush(ws, compaction: str, extra: str = "", agent: str | None = None):
    _config(ws, "{agents: {defaults: {compaction: {" + compaction + "}" + extra + "}}}")
    return audit(ws / "demo", agent=agent)["memory-flush"]


ON = "reserveTokensFloor: 40000, memoryFlush: {enabled: true, softThresholdTokens: 4000}"


def test_memory_flush_pass_says_where_it_starts(ws):
    check = _flush(ws, ON)
    assert (check.status, check.found) == ("pass", (
        f"agents.defaults.compaction.memoryFlush.enabled is true ({ws / 'openclaw.json'}); the "
        "flush starts at 200,000 − 40,000 reserveTokensFloor − 4,000 softThresholdTokens = "
        "156,000 (window: the profile's runtimes.openclaw.context_window_tokens (OpenClaw's "
        "fallback window when the model declares none))"))


@pytest.mark.parametrize("model, key, change", [
    ('"claude-cli/claude-opus-4-6"', "agents.defaults.model",
     'set agents.defaults.model to "anthropic/claude-opus-4-6" (the API provider, which runs '
     'the flush)'),
    ('{primary: "codex/gpt-5.4"}', "agents.defaults.model.primary",
     'set agents.defaults.model.primary to "openai-codex/gpt-5.4" (Codex OAuth through the '
     'embedded runtime, which runs the flush)'),
])
def test_memory_flush_backends_that_skip_it(ws, model, key, change):
    check = _flush(ws, ON, f", model: {model}")
    assert check.status == "fail"
    assert check.found.startswith("the flush never runs for this agent: the model is ")
    assert "OpenClaw skips the pre-compaction memory flush there" in check.found
    assert "issue #137613" in check.found
    assert check.hint == (f"{change} in {ws / 'openclaw.json'}; or have the agent write its "
                          "journal itself (AGENTS.md, HEARTBEAT.md)")


def test_memory_flush_codex_harness_skips_it(ws):
    check = _flush(ws, ON, ', embeddedHarness: {runtime: "codex"}, model: "openai/gpt-5.5"')
    assert check.status == "fail"
    assert check.found.startswith('the flush never runs for this agent: '
                                  'agents.defaults.embeddedHarness.runtime is "codex", and')
    assert "the Codex harness owns its compaction (PR #85958)" in check.found
    assert check.hint.startswith("remove agents.defaults.embeddedHarness.runtime (and use a "
                                 "model the embedded runtime runs, such as openai-codex/gpt-5.5)")


def test_memory_flush_a_codex_backend_with_a_1m_window(ws):
    # contextTokens 1,000,000 puts the flush at 956,000; openai-codex is 200,000 in OpenClaw
    check = _flush(ws, ON, ', contextTokens: 1000000, model: "openai-codex/gpt-5.4"')
    cfg = ws / "openclaw.json"
    assert (check.status, check.found, check.hint) == ("fail", (
        "the flush never runs: it starts at 1,000,000 − 40,000 reserveTokensFloor − 4,000 "
        "softThresholdTokens = 956,000 (window: agents.defaults.contextTokens), but the "
        "openai-codex backend has a 200,000-token window (issue #66830: `openclaw status` "
        "shows gpt-5.4 on openai-codex as 200k ctx): it overflows first, and the overflow "
        f"path runs no flush (issue #137613) ({cfg})"),
        f"set agents.defaults.contextTokens to 200000 in {cfg}, so the flush starts at 156,000")


def test_memory_flush_threshold_past_the_window(ws):
    check = _flush(ws, "reserveTokensFloor: 40000, memoryFlush: {enabled: true, "
                       "softThresholdTokens: 900000}")
    cfg = ws / "openclaw.json"
    assert (check.status, check.found, check.hint) == ("fail", (
        "the flush never runs: it starts at 200,000 − 40,000 reserveTokensFloor − 900,000 "
        "softThresholdTokens = -740,000 (window: the profile's runtimes.openclaw."
        "context_window_tokens (OpenClaw's fallback window when the model declares none)), "
        f"which no session reaches ({cfg})"),
        f"set agents.defaults.compaction.memoryFlush.softThresholdTokens to 156000 in {cfg}")


def test_memory_flush_after_compaction_starts(ws):
    # reserveTokens 80,000: compaction at 120,000, before the flush at 156,000
    check = _flush(ws, ON + ", reserveTokens: 80000")
    assert check.status == "fail"
    assert "but compaction starts earlier, at 200,000 − 80,000 reserveTokens = 120,000" \
        in check.found
    assert check.hint.startswith("set agents.defaults.compaction.memoryFlush."
                                 "softThresholdTokens to 44000 in ")


def test_memory_flush_per_agent_verdict(ws):
    _config(ws, "{agents: {defaults: {compaction: {" + ON + "}}, list: [{id: \"main\"}, "
                "{id: \"coder\", model: \"claude-cli/claude-sonnet-4-6\"}]}}")
    assert audit(ws / "demo", agent="main")["memory-flush"].status == "pass"
    check = audit(ws / "demo", agent="coder")["memory-flush"]
    assert check.status == "fail"
    assert check.hint.startswith('set agents.list[coder].model to '
                                 '"anthropic/claude-sonnet-4-6"')
