"""The real pre-commit running vaultkit's hooks on real git repositories.

The hook repository is a temporary git repository holding this checkout's tracked
files, committed, so pre-commit installs vaultkit the way users get it (``pip
install`` of the repository at a pinned ``rev``). One pre-commit home is shared by the
whole session, so the hook environment is built once.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

PROJECT = Path(__file__).resolve().parent.parent
HOOKS_PAGE = PROJECT / "docs" / "pre-commit.md"
HOOK_IDS = ("vaultkit-check", "vaultkit-index", "vaultkit-colors", "vaultkit-append-only",
            "vaultkit-audit")
TODAY = dt.date.today()
YESTERDAY = (TODAY - dt.timedelta(days=1)).isoformat()
YESTERDAY_JOURNAL = (
    f"# {YESTERDAY}\n\n"
    "### 09:00 — Release\n- Deployed v1.2 to production\n- Smoke tests green\n"
    "- Rollback plan written down\n\n"
    "### 16:00 — Review\n- Reviewed the payment validation change\n- Two comments, both fixed\n"
    "- Merged after the second round\n"
)


def _env(home: Path) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GIT_", "PRE_COMMIT")) and k != "SKIP"}
    env.update(GIT_AUTHOR_NAME="Agent", GIT_AUTHOR_EMAIL="agent@example.com",
               GIT_COMMITTER_NAME="Agent", GIT_COMMITTER_EMAIL="agent@example.com",
               GIT_CONFIG_NOSYSTEM="1", PRE_COMMIT_HOME=str(home), NO_COLOR="1",
               PRE_COMMIT_COLOR="never")
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


def _run(cmd, cwd, env, check=True) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if check:
        assert proc.returncode == 0, f"{cmd} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc


def _source_files() -> list[str]:
    """The checkout's tracked files (what a user's `rev` would hold)."""
    proc = subprocess.run(["git", "ls-files", "-z"], cwd=PROJECT, capture_output=True)
    if proc.returncode == 0 and proc.stdout:
        return [p for p in proc.stdout.decode().split("\0") if p and (PROJECT / p).is_file()]
    out = []  # not a git checkout (an unpacked sdist): the files pip needs
    for folder in ("vaultkit", "rules", "vault-template"):
        out += [p.relative_to(PROJECT).as_posix() for p in (PROJECT / folder).rglob("*")
                if p.is_file() and "__pycache__" not in p.parts]
    out += ["pyproject.toml", "README.md", ".pre-commit-hooks.yaml"]
    return out


@pytest.fixture(scope="session")
def hook_repo(tmp_path_factory) -> tuple[Path, str]:
    """A temporary git repository with this checkout committed: (path, commit)."""
    repo = tmp_path_factory.mktemp("hook-repo")
    for rel in _source_files():
        if rel.startswith((".ci/", "tests/", "bench/")):
            continue
        dest = repo / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(PROJECT / rel, dest)
    env = _env(tmp_path_factory.mktemp("unused-home"))
    _run(["git", "init", "-q"], repo, env)
    _run(["git", "add", "-A"], repo, env)
    _run(["git", "commit", "-q", "--no-verify", "-m", "vaultkit under test"], repo, env)
    sha = _run(["git", "rev-parse", "HEAD"], repo, env).stdout.strip()
    return repo, sha


@pytest.fixture(scope="session")
def pre_commit_home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


class Vault:
    """A git repository holding a vault, with pre-commit's git hook installed."""

    def __init__(self, path: Path, env: dict):
        self.path = path
        self.env = env

    def git(self, *args, check=True):
        return _run(["git", *args], self.path, self.env, check=check)

    def commit(self, message="change"):
        """Run `git commit` through the hooks; return (ok, combined output)."""
        proc = self.git("commit", "-m", message, check=False)
        return proc.returncode == 0, proc.stdout + proc.stderr

    def head(self):
        return self.git("rev-parse", "HEAD").stdout.strip()

    def write(self, rel, text):
        p = self.path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")

    def read(self, rel):
        return (self.path / rel).read_text(encoding="utf-8")

    def index(self):
        """Bring INDEX.md up to date (it lists the recent journal days)."""
        _run([sys.executable, "-m", "vaultkit", "index"], self.path, self.env)

    def shell(self, script):
        return _run(["sh", "-c", script], self.path, self.env)


def _config(repo: Path, sha: str, hooks) -> str:
    lines = ["repos:", f"  - repo: {repo}", f"    rev: {sha}", "    hooks:"]
    lines += [f"      - id: {h}" for h in hooks]
    return "\n".join(lines) + "\n"


@pytest.fixture
def make_repo(tmp_path, hook_repo, pre_commit_home):
    def make(hooks=("vaultkit-check",), *, config: str | None = None, memory_only=False,
             first_commit=True) -> Vault:
        env = _env(pre_commit_home)
        workspace = tmp_path / "workspace"
        _run([sys.executable, "-m", "vaultkit", "init", str(workspace)], tmp_path, env)
        root = workspace
        if memory_only:
            root = workspace / "memory"
            (root / "vaultkit.toml").write_text('memory-dir = "."\n', encoding="utf-8")
        vault = Vault(root, env)
        vault.git("init", "-q")
        vault.git("config", "commit.gpgsign", "false")
        text = config if config is not None else _config(*hook_repo, hooks)
        text = text.replace("REPO", str(hook_repo[0])).replace("REV", hook_repo[1])
        vault.write(".pre-commit-config.yaml", text)
        _run([sys.executable, "-m", "pre_commit", "install"], root, env)
        if first_commit:
            vault.write(("" if memory_only else "memory/") + f"{YESTERDAY}.md",
                        YESTERDAY_JOURNAL)
            vault.index()
            vault.git("add", "-A")
            # the set-up commit skips the hooks (test_clean_starter_vault_commits runs them)
            vault.git("commit", "-q", "--no-verify", "-m", "backup: first")
        return vault

    return make


# -- a healthy vault commits ----------------------------------------------------------

def test_clean_starter_vault_commits(make_repo):
    vault = make_repo(("vaultkit-check", "vaultkit-append-only"), first_commit=False)
    vault.git("add", "-A")
    ok, out = vault.commit("backup: first")
    assert ok, out
    assert re.search(r"vaultkit check\.+Passed", out), out
    assert re.search(r"vaultkit append-only\.+Passed", out), out
    assert vault.git("log", "--oneline").stdout.count("\n") == 1


def test_journal_entry_appended_with_printf_commits(make_repo):
    vault = make_repo(("vaultkit-check", "vaultkit-append-only"))
    before = vault.head()
    vault.shell(f"printf '\\n### 17:30 — Retro\\n- Wrote the retro\\n- Filed two follow-ups\\n"
                f"- Closed the sprint\\n' >> memory/{YESTERDAY}.md && git add -A")
    ok, out = vault.commit("backup: append")
    assert ok, out
    assert vault.head() != before


# -- what is refused --------------------------------------------------------------------

@pytest.mark.parametrize("hook", ["vaultkit-check", "vaultkit-append-only"])
def test_staged_rewrite_of_yesterdays_journal_is_refused(make_repo, hook):
    vault = make_repo((hook,))
    before = vault.head()
    rel = f"memory/{YESTERDAY}.md"
    vault.write(rel, YESTERDAY_JOURNAL.replace("Smoke tests green", "Summary: a quiet day"))
    vault.git("add", rel)
    ok, out = vault.commit("backup: rewrite")
    assert not ok
    assert f"{rel}:5:1: VK601 journal-append-only error: line 5 differs" in out, out
    assert vault.head() == before


@pytest.mark.parametrize("how", [["-a"], ["--", "JOURNAL"]])
def test_commit_all_and_commit_path_are_checked_too(make_repo, how):
    """`git commit -a` and `git commit PATH` commit through a temporary index."""
    vault = make_repo(("vaultkit-append-only",))
    rel = f"memory/{YESTERDAY}.md"
    vault.write(rel, YESTERDAY_JOURNAL.replace("- Two comments, both fixed", "- Summary: done"))
    args = [rel if a == "JOURNAL" else a for a in how]
    proc = vault.git("commit", "-m", "backup", *args, check=False)
    assert proc.returncode != 0
    assert f"{rel}:10:1: VK601 journal-append-only" in proc.stdout + proc.stderr


def _hooks_section(text: str) -> str:
    """The hooks page (docs/pre-commit.md), from its title to the end."""
    return text[text.index("# Pre-commit hooks"):]


def _readme_recovery() -> str:
    text = HOOKS_PAGE.read_text(encoding="utf-8")
    section = _hooks_section(text)
    recipe = next(b for b in re.findall(r"```sh\n(.*?)```", section, re.S)
                  if "git show HEAD:" in b)
    return recipe


def test_readme_recovery_recipe_recovers_a_refused_commit(make_repo):
    vault = make_repo(("vaultkit-check",))
    rel = f"memory/{YESTERDAY}.md"
    rewritten = YESTERDAY_JOURNAL.replace("- Smoke tests green\n", "") + "\n### 18:00 — New\n"
    vault.write(rel, rewritten)  # an agent's Write: a line lost, a line added
    vault.git("add", "-A")
    ok, out = vault.commit("backup")
    assert not ok and f"{rel}:5:1: VK601" in out
    recipe = _readme_recovery().replace("2026-02-13", YESTERDAY)
    script = "\n".join(line for line in recipe.splitlines() if not line.startswith("diff "))
    vault.shell(script.replace("/tmp/rewritten.md", str(vault.path.parent / "rewritten.md")))
    assert vault.git("log", "-1", "--format=%s").stdout.strip() == f"backup: {YESTERDAY}"
    assert vault.read(rel).startswith(YESTERDAY_JOURNAL)  # every committed line is back


def test_deleted_journal_is_refused_though_no_file_is_passed(make_repo):
    vault = make_repo(("vaultkit-append-only",))
    vault.git("rm", "-q", f"memory/{YESTERDAY}.md")
    ok, out = vault.commit("backup: delete")
    assert not ok
    assert f"memory/{YESTERDAY}.md:1:1: VK601 journal-append-only error: journal deleted" in out, out


def test_journal_archived_with_git_mv_commits(make_repo):
    vault = make_repo(("vaultkit-check", "vaultkit-append-only"))
    vault.git("mv", f"memory/{YESTERDAY}.md", f"memory/archive/{YESTERDAY}.md")
    vault.index()  # what `vaultkit archive` does after moving
    vault.git("add", "memory/INDEX.md")
    ok, out = vault.commit("archive")
    assert ok, out


def test_rewrite_halving_memory_md_is_refused(make_repo):
    vault = make_repo(("vaultkit-check",))
    before = vault.head()
    text = vault.read("MEMORY.md")
    kept = text.splitlines(keepends=True)[: len(text.splitlines()) // 2]
    vault.write("MEMORY.md", "".join(kept))  # what a Write-overwrite of half the file leaves
    vault.git("add", "MEMORY.md")
    ok, out = vault.commit("backup: rewrite")
    assert not ok
    assert "MEMORY.md:1:1: VK602 mass-deletion error: dropped" in out, out
    assert vault.head() == before


BACKUP = 'vaultkit index; git add -A && git commit -q -m "backup: $(date +%Y-%m-%d)"'


def test_nightly_backup_through_the_readme_config(make_repo):
    """The hooks page's backup line: a day of appends and a new journal commit; warnings do
    not block it; a rewritten journal does."""
    assert BACKUP.replace("%", "\\%") in HOOKS_PAGE.read_text(encoding="utf-8")
    vault = make_repo(config=_pin(_readme_configs()["whole workspace"]))
    today = f"memory/{TODAY.isoformat()}.md"
    vault.shell(f"printf '\\n### 21:00 — Wrap-up\\n- Closed the day\\n- Wrote tomorrow\\n"
                f"- Pushed the branch\\n' >> {today}")
    vault.shell(f"printf '\\n### 22:00 — Late note\\n- One more\\n- And another\\n"
                f"- Done\\n' >> memory/{YESTERDAY}.md")
    vault.write("memory/decision/idea.md", "# Idea\n\nA decision in a misspelt folder.\n")  # a warning
    before = vault.head()
    vault.shell(BACKUP)
    assert vault.head() != before
    assert vault.git("status", "--porcelain").stdout.strip() == ""
    vault.write(f"memory/{YESTERDAY}.md", YESTERDAY_JOURNAL)  # the late note rewritten away
    before = vault.head()
    proc = _run(["sh", "-c", BACKUP], vault.path, vault.env, check=False)
    assert proc.returncode != 0
    assert vault.head() == before
    assert (f"memory/{YESTERDAY}.md:12:1: VK601 journal-append-only error: 4 committed lines removed "
            "from line 12 on (HEAD: '### 22:00 — Late note')") in proc.stdout + proc.stderr


# -- warnings are printed, not fatal -----------------------------------------------------

def test_vault_with_only_warnings_commits_and_prints_them(make_repo):
    vault = make_repo(("vaultkit-check",))
    vault.shell("printf -- '- first durable fact\\n' >> MEMORY.md && git add -A && "
                "git commit -q -m 'memory: one'")
    vault.write("memory/decision/idea.md", "# Idea\n\nA decision in a misspelt folder.\n")
    vault.shell("printf -- '- second durable fact\\n' >> MEMORY.md && git add -A")
    ok, out = vault.commit("memory: two")
    assert ok, out
    assert "VK603 memory-churn" in out, out
    assert "memory/decision/idea.md:1:1: VK101 unknown-location" in out, out
    assert re.search(r"vaultkit check\.+Passed", out), out


# -- INDEX.md ----------------------------------------------------------------------------

DECISION = ("---\ndate: 2026-02-08\ntype: decision\nstatus: active\ntags: [community]\n---\n"
            "# Build community first\n\n## Context\nNo trust yet.\n\n## Decision\n"
            "Grow the community before the course.\n")


def test_a_new_note_commits_in_one_run_with_the_regenerated_index(make_repo):
    """The index hook rewrites INDEX.md and stages it: one `git commit`, the fresh index in it."""
    vault = make_repo(("vaultkit-index", "vaultkit-check"))
    vault.write("memory/decisions/community-first.md", DECISION)
    vault.write(f"memory/{YESTERDAY}.md", YESTERDAY_JOURNAL + "\nnot staged: kept aside\n")
    vault.git("add", "memory/decisions/community-first.md")
    before = vault.read("memory/INDEX.md")
    ok, out = vault.commit("decision")
    assert ok, out
    assert re.search(r"vaultkit index\.+Passed", out), out
    committed = vault.git("show", "HEAD:memory/INDEX.md").stdout
    assert committed != before and "community-first" in committed
    assert vault.read("memory/INDEX.md") == committed
    # the unstaged edit elsewhere is still unstaged, the rest is clean
    assert vault.git("status", "--porcelain").stdout == f" M memory/{YESTERDAY}.md\n"


@pytest.mark.parametrize("how", [["-a"], ["--", "memory/decisions/community-first.md"]])
def test_the_index_is_staged_into_a_commit_through_a_temporary_index(make_repo, how):
    vault = make_repo(("vaultkit-index", "vaultkit-check"))
    vault.write("memory/decisions/community-first.md", DECISION)
    vault.git("add", "-N", "memory/decisions/community-first.md")  # known to git, not staged
    proc = vault.git("commit", "-m", "decision", *how, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "community-first" in vault.git("show", "HEAD:memory/INDEX.md").stdout


def test_an_unstaged_index_of_ones_own_stops_the_commit_with_what_to_do(make_repo):
    """pre-commit sets the unstaged INDEX.md aside and restores it after the hooks: the hook
    must not stage over it (the restore would fail); it says to stage it instead."""
    vault = make_repo(("vaultkit-index", "vaultkit-check"))
    vault.write("memory/decisions/community-first.md", DECISION)
    vault.index()  # INDEX.md regenerated on disk, only the note staged
    mine = vault.read("memory/INDEX.md")
    vault.git("add", "memory/decisions/community-first.md")
    ok, out = vault.commit("decision")
    assert not ok
    assert "An unexpected error" not in out, out
    assert "memory/INDEX.md has changes that are not staged; stage them" in out, out
    assert vault.read("memory/INDEX.md") == mine  # the user's file, as it was
    vault.git("add", "memory/INDEX.md")
    ok, out = vault.commit("decision")
    assert ok, out


# -- the hooks page's configurations work as written -------------------------------------------

def _readme_configs() -> dict[str, str]:
    text = HOOKS_PAGE.read_text(encoding="utf-8")
    section = _hooks_section(text)
    blocks = re.findall(r"```yaml\n(.*?)```", section, re.S)
    configs = {}
    for block in blocks:
        if block.startswith("# .pre-commit-config.yaml"):
            name = block.split("\n", 1)[0].split("—", 1)[-1].strip()
            configs[name] = block
    return configs


def _pin(block: str) -> str:
    return re.sub(r"rev: \S+", "rev: REV", re.sub(r"repo: \S+", "repo: REPO", block))


def test_readme_has_both_configs():
    assert set(_readme_configs()) == {"whole workspace", "memory-only repo",
                                      "vault in a subfolder"}
    for block in _readme_configs().values():
        ids = set(re.findall(r"- id: (\S+)", block))
        assert ids <= set(HOOK_IDS) and "vaultkit-check" in ids


@pytest.mark.parametrize("name,memory_only", [("whole workspace", False),
                                              ("memory-only repo", True)])
def test_readme_config_commits_a_clean_vault_and_refuses_a_rewrite(make_repo, name,
                                                                  memory_only):
    vault = make_repo(config=_pin(_readme_configs()[name]), memory_only=memory_only,
                      first_commit=False)
    journal = ("" if memory_only else "memory/") + f"{YESTERDAY}.md"
    vault.write(journal, YESTERDAY_JOURNAL)
    vault.git("add", "-A")
    ok, out = vault.commit("backup: first")
    assert ok, out  # in one run: the index hook stages the INDEX.md it rewrites
    vault.write(journal, YESTERDAY_JOURNAL.replace("v1.2", "v1.3"))  # a typo fixed: an edit
    vault.git("add", "-A")
    ok, out = vault.commit("backup: a correction")
    assert ok, out
    # a committed line written over by a summary: its content is gone
    vault.write(journal, vault.read(journal).replace("- Deployed v1.3 to production",
                                                     "- Summary: release and review done"))
    vault.git("add", "-A")
    ok, out = vault.commit("backup: rewrite")
    assert not ok
    assert f"{journal}:4:1: VK601 journal-append-only" in out, out


def test_readme_config_for_a_vault_in_a_subfolder(tmp_path, hook_repo, pre_commit_home):
    """The hooks pre-commit installs from vaultkit's repository, configured as the page
    shows at the top of a bigger repository: an entry commits in one run (the index hook
    given the folder), a deleted journal is refused, a commit of code elsewhere passes."""
    env = _env(pre_commit_home)
    repo = Vault(tmp_path / "monorepo", env)
    repo.write("src/app.py", "print('hi')\n")
    repo.git("init", "-q")
    repo.git("config", "commit.gpgsign", "false")
    _run([sys.executable, "-m", "vaultkit", "init", "memory-vault"], repo.path, env)
    config = _readme_configs()["vault in a subfolder"]
    repo.write(".pre-commit-config.yaml", _pin(config).replace("REPO", str(hook_repo[0]))
               .replace("REV", hook_repo[1]))
    _run([sys.executable, "-m", "pre_commit", "install"], repo.path, env)
    repo.git("add", "-A")
    ok, out = repo.commit("start")
    assert ok, out
    journal = f"memory-vault/memory/{YESTERDAY}.md"
    repo.write(journal, YESTERDAY_JOURNAL)  # a new day: INDEX.md stale until the hook runs
    repo.git("add", "-A")
    ok, out = repo.commit("backup")
    assert ok, out
    assert f"{YESTERDAY}" in repo.git("show", "HEAD:memory-vault/memory/INDEX.md").stdout
    repo.git("rm", "-q", journal)
    ok, out = repo.commit("drop the journal")
    assert not ok and f"{journal}:1:1: VK601 journal-append-only" in out, out
    repo.git("reset", "-q", "--hard")
    repo.write("src/app.py", "print('hello')\n")
    repo.git("add", "src/app.py")
    ok, out = repo.commit("code")
    assert ok and "vaultkit:" not in out and "VK" not in out, out


def test_audit_hook_runs_on_manual_stage_only(make_repo, hook_repo, pre_commit_home):
    vault = make_repo(("vaultkit-audit",))
    vault.shell("printf -- '- x\\n' >> NOW.md && git add -A")
    ok, out = vault.commit("now")
    assert ok, out
    assert "vaultkit audit" not in out  # not a pre-commit stage hook
    proc = _run([sys.executable, "-m", "pre_commit", "run", "--hook-stage", "manual",
                 "vaultkit-audit"], vault.path, vault.env, check=False)
    assert "vaultkit audit" in proc.stdout, proc.stdout + proc.stderr


# -- adopting vaultkit on a vault with findings: the baseline --------------------------------

LEGACY = ("---\ntype: decision\ndate: 2026-10-{day:02d}\nstatus: done\ntags: [old]\n---\n"
          "# Legacy {n}\n\nDecided long ago; see [[gone-{n}]].\n")


def test_baseline_lets_a_legacy_vault_commit_and_blocks_new_faults(make_repo):
    vault = make_repo(("vaultkit-check",))
    for n in range(40):  # 4 findings each: a status outside the schema's set (an error),
        # two sections missing, a broken link
        vault.write(f"memory/decisions/legacy-{n}.md", LEGACY.format(day=n % 28 + 1, n=n))
    vault.index()
    proc = _run([sys.executable, "-m", "vaultkit", "check", "--no-cache"], vault.path, vault.env,
                check=False)
    assert proc.returncode == 1 and "Found 160 findings" in proc.stdout, proc.stdout
    vault.git("add", "-A")
    ok, out = vault.commit("legacy notes")
    assert not ok, out  # without a baseline the legacy errors block the commit
    _run([sys.executable, "-m", "vaultkit", "check", "--write-baseline"], vault.path, vault.env)
    vault.git("add", "-A")
    ok, out = vault.commit("legacy notes, baselined")
    assert ok, out
    # a new fault in a new commit is refused
    vault.write("memory/decisions/new.md", LEGACY.format(day=1, n="new"))
    vault.git("add", "-A")
    ok, out = vault.commit("new decision")
    assert not ok and "memory/decisions/new.md" in out and "legacy-" not in out, out
    vault.git("rm", "-q", "--cached", "memory/decisions/new.md")
    (vault.path / "memory/decisions/new.md").unlink()
    # fixing a baselined finding: a plain check leaves the committed file alone, the
    # explicit --shrink-baseline shrinks it
    vault.write("memory/decisions/legacy-7.md", LEGACY.format(day=8, n=7)
                + "\n## Context\nWhy.\n\n## Decision\nWhat.\n")
    proc = _run([sys.executable, "-m", "vaultkit", "check"], vault.path, vault.env, check=False)
    assert "2 baselined findings are fixed" in proc.stderr, proc.stderr
    assert sum(f["count"] for f in json.loads(vault.read("vaultkit-baseline.json"))["findings"]) \
        == 160
    proc = _run([sys.executable, "-m", "vaultkit", "check", "--shrink-baseline"], vault.path,
                vault.env, check=False)
    assert "2 fixed findings removed from the baseline" in proc.stderr, proc.stderr
    data = json.loads(vault.read("vaultkit-baseline.json"))
    assert sum(f["count"] for f in data["findings"]) == 158
    vault.git("add", "-A")
    ok, out = vault.commit("fix a legacy decision")
    assert ok, out


# -- vaultkit recover's writes --------------------------------------------------------------

def test_recovered_history_commits_through_the_hooks(tmp_path, hook_repo, pre_commit_home):
    """`recover --all` on the generated history: the result passes check and append-only."""
    import history_repo

    env = _env(pre_commit_home)
    repo = history_repo.build(tmp_path / "vault", env)
    vault = Vault(repo.path, env)
    vault.write(".pre-commit-config.yaml",
                _config(*hook_repo, ("vaultkit-check", "vaultkit-append-only")))
    _run([sys.executable, "-m", "pre_commit", "install"], repo.path, env)
    journal_before = vault.read(history_repo.JOURNAL)
    _run([sys.executable, "-m", "vaultkit", "recover", "--all"], repo.path, env)
    vault.index()
    vault.git("add", "-A")
    ok, out = vault.commit("backup: recovered")
    assert ok, out
    assert re.search(r"vaultkit append-only\.+Passed", out), out
    assert vault.read(history_repo.JOURNAL).startswith(journal_before)
    again = _run([sys.executable, "-m", "vaultkit", "recover", "--all"], repo.path, env)
    assert "nothing to recover" in again.stdout
    assert vault.git("status", "--porcelain").stdout == ""


# -- credentials ------------------------------------------------------------------------

def test_key_appended_to_a_journal_is_refused_then_commits_once_removed(make_repo):
    vault = make_repo(("vaultkit-check", "vaultkit-append-only"))
    before = vault.head()
    rel = f"memory/{YESTERDAY}.md"
    token = "5145683452:AAbeuEchsVEoR7TJYHSDATOCN1D61_k7U4O"
    entry = ("\n### 18:00 — Alerts bot\n- Created the alerts bot for the ops chat\n"
             "- Digest goes out at 08:00\n- Next: add the weekly summary\n")
    vault.write(rel, YESTERDAY_JOURNAL + entry + f"- token {token}\n")
    vault.git("add", rel)
    ok, out = vault.commit("backup: alerts bot")
    assert not ok
    assert f"{rel}:17:9: VK701 secret-in-memory error: Telegram bot token (…7U4O) in memory" in out, out
    assert token not in out and "AAbeuEchs" not in out
    assert vault.head() == before
    vault.write(rel, YESTERDAY_JOURNAL + entry)
    vault.git("add", rel)
    ok, out = vault.commit("backup: alerts bot")
    assert ok, out
    assert vault.head() != before
