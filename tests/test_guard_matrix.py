"""The guard left on, case by case (docs/snapshots.md, "The guard, case by case"): real git,
the starter's real pre-commit hooks and `vaultkit watch` running as a real process, on
file events and polling (`--poll 0.5`). For each case: the verdict the model of loss gives
(the commit passes, passes with a warning, or is refused), what watch does, nothing lost
(every line the case's writers wrote is, at the end, in the work tree, HEAD or a stash),
no line written twice, and `vaultkit history` agreeing.

One vault and one watcher per mode, shared by the cases in file order (each case ends with
its work committed), so the file runs in a few minutes; waits are bounded and on
conditions (the snapshot ref holding the journal's bytes, the journal's content)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from test_precommit import (BACKUP, TODAY, YESTERDAY, YESTERDAY_JOURNAL,  # noqa: F401
                            Vault, _env, _pin, _readme_configs, _run, hook_repo,
                            pre_commit_home)

pytestmark = pytest.mark.integration

JOURNAL = f"memory/{TODAY.isoformat()}.md"
REF = "refs/vaultkit/snapshots"
MODES = {"file-events": [], "polling": ["--poll", "0.5"]}


def _wait(predicate, seconds=30.0):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


class Guard:
    """A whole-workspace vault with the README's hooks and `vaultkit watch` running, and
    every line its writers wrote (``written``)."""

    def __init__(self, vault: Vault, args: list[str], log: Path):
        self.vault = vault
        self.path = vault.path
        self.args = args
        self.log = log
        self.written: Counter = Counter()
        self.own: set = set()  # the lines the case's writers wrote
        self.n = 0
        self.setup = set()
        self.proc = None

    # -- the watcher -------------------------------------------------------------------

    def start(self):
        self.fh = open(self.log, "ab")
        self.proc = subprocess.Popen([sys.executable, "-m", "vaultkit", "watch", *self.args],
                                     cwd=self.path, env=self.vault.env, stdout=self.fh,
                                     stderr=subprocess.STDOUT)
        assert _wait(lambda: self.blob(JOURNAL) is not None), self.out()
        self.recorded()

    def stop(self) -> int:
        os.kill(self.proc.pid, signal.SIGTERM)
        code = self.proc.wait(timeout=30)
        self.fh.close()
        return code

    def out(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def said(self, since: int, what: str) -> int:
        """How many of the watcher's lines after offset ``since`` hold ``what``."""
        return self.out()[since:].count(what)

    def blob(self, rel):
        proc = self.vault.git("rev-parse", "-q", "--verify", f"{REF}:{rel}", check=False)
        return proc.stdout.strip() or None

    def recorded(self, rel=JOURNAL, seconds=30.0):
        """Wait until the newest snapshot holds the file's bytes: watch has seen them."""
        def same():
            here = self.vault.git("hash-object", rel, check=False).stdout.strip()
            return here and self.blob(rel) == here
        assert _wait(same, seconds), (rel, self.read(), self.out())

    def idle(self):
        """Let a round pass after a git operation (one that leaves no file to wait on: a
        commit, a branch moved), so that the watcher has taken it as its new baseline."""
        time.sleep(1.5)

    # -- the writers ---------------------------------------------------------------------

    def entry(self, title="Checkpoint", lines=3) -> str:
        self.n += 1
        n = self.n
        body = "".join(f"- {title} {n}: item {n}.{k} reviewed and closed\n"
                       for k in range(1, lines + 1))
        return f"\n### {8 + n // 60:02d}:{n % 60:02d} — {title} {n}\n{body}"

    def note(self, text: str) -> str:
        lines = [line for line in text.splitlines() if line.strip()]
        self.written.update(lines)
        self.own.update(lines)
        return text

    def append(self, text: str, rel=JOURNAL):
        self.note(text)
        with open(self.path / rel, "a", encoding="utf-8") as fh:
            fh.write(text)

    def read(self, rel=JOURNAL) -> str:
        return self.vault.read(rel)

    def head(self, rel=JOURNAL) -> str:
        return self.vault.git("show", f"HEAD:{rel}", check=False).stdout

    def backup(self):
        """The nightly backup through the real pre-commit hooks: (passed, output)."""
        before = self.vault.head()
        proc = _run(["sh", "-c", BACKUP], self.path, self.vault.env, check=False)
        passed = proc.returncode == 0 and self.vault.head() != before
        return passed, proc.stdout + proc.stderr

    def commit(self, *args, env=None):
        """`git commit` with the hooks: (passed, output)."""
        before = self.vault.head()
        proc = _run(["git", "commit", "-m", "change", *args], self.path,
                    env or self.vault.env, check=False)
        return (proc.returncode == 0 and self.vault.head() != before,
                proc.stdout + proc.stderr + "\n-- watch said:\n" + self.out())

    def recover(self) -> str:
        """`vaultkit recover --all`: it puts the writers' lines back in place and writes no
        line of its own (no heading, no marker: vaultkit's text is never memory)."""
        before = Counter(self.read().splitlines())
        out = self.vk("recover", "--all").stdout
        added = Counter(self.read().splitlines()) - before
        own = [line for line in added if line.strip() and line not in self.own]
        assert not own, (own, self.read())
        return out

    def vk(self, *args, check=True):
        return _run([sys.executable, "-m", "vaultkit", *args], self.path, self.vault.env,
                    check=check)

    # -- the checks ----------------------------------------------------------------------

    def lost(self) -> list[dict]:
        """`vaultkit history`'s losses not recovered, but those of the set-up commits."""
        data = json.loads(self.vk("history", "--format", "json").stdout)
        events = data.get("events", data) if isinstance(data, dict) else data
        return [e for e in events if not e.get("recovered") and e["commit"] not in self.setup
                and e["kind"] != "journal-edit"]  # (an edit is listed, not a loss)

    def whole(self):
        """Nothing lost, nothing written twice, history agreeing."""
        held = self.read()
        for p in sorted((self.path / "memory").rglob("*.md")):
            if p.name != "INDEX.md" and p.as_posix() != (self.path / JOURNAL).as_posix():
                held += p.read_text(encoding="utf-8")
        held += self.read("MEMORY.md") + self.head()
        stashes = self.vault.git("stash", "list", "--format=%H").stdout.split()
        for sha in stashes:
            held += self.vault.git("show", f"{sha}:{JOURNAL}", check=False).stdout
        gone = [line for line in +self.written if line not in held.splitlines()]
        assert not gone, (gone, self.read(), self.out())
        counts = Counter(line for line in self.read().splitlines() if line.strip())
        twice = {line: c for line, c in counts.items()
                 if c > 1 and c > self.written.get(line, 1)}
        assert not twice, (twice, self.read())
        assert "Restored by vaultkit watch" not in self.read()
        assert self.lost() == [], json.dumps(self.lost())

    def settled(self):
        """Everything committed (through the hooks), and the watcher past it."""
        passed, out = self.backup()
        assert passed or "nothing to commit" in out or "no changes added" in out, out
        assert self.vault.git("status", "--porcelain").stdout == ""
        self.idle()


def _make_guard(tmp: Path, hook_repo, pre_commit_home, args, log) -> Guard:
    """A starter vault (today's journal committed with init's entry, as an earlier
    auto-commit leaves it) with the README's whole-workspace hooks, and watch started."""
    env = _env(pre_commit_home)
    workspace = tmp / "workspace"
    _run([sys.executable, "-m", "vaultkit", "init", str(workspace)], tmp, env)
    vault = Vault(workspace, env)
    vault.git("init", "-q")
    vault.git("config", "commit.gpgsign", "false")
    text = _pin(_readme_configs()["whole workspace"])
    vault.write(".pre-commit-config.yaml",
                text.replace("REPO", str(hook_repo[0])).replace("REV", hook_repo[1]))
    _run([sys.executable, "-m", "pre_commit", "install"], workspace, env)
    vault.write(f"memory/{YESTERDAY}.md", YESTERDAY_JOURNAL)
    vault.index()
    vault.git("add", "-A")
    vault.git("commit", "-q", "--no-verify", "-m", "backup: yesterday and this morning")
    guard = Guard(vault, args, log)
    guard.setup = set(vault.git("rev-list", "HEAD").stdout.split())
    guard.note(vault.read(JOURNAL))
    guard.start()
    return guard


@pytest.fixture(scope="module", params=list(MODES))
def guard(request, tmp_path_factory, hook_repo, pre_commit_home):
    tmp = tmp_path_factory.mktemp(f"guard-{request.param}")
    g = _make_guard(tmp, hook_repo, pre_commit_home, MODES[request.param], tmp / "watch.log")
    yield g
    code = g.stop()
    assert code == 0, g.out()


# -- the cases ---------------------------------------------------------------------

def test_1_committed_journal_overwritten_is_restored_in_place_and_commits(guard):
    g = guard
    g.append(g.entry())
    g.append(g.entry())
    g.recorded()
    passed, out = g.backup()  # an auto-commit, as Obsidian Git makes them
    assert passed, out
    g.idle()
    before, mark = g.read(), len(g.out())
    summary = f"# {TODAY.isoformat()}\n\n## Summary\n- A quiet day; the deploy went out (1).\n"
    g.note(summary)
    g.vault.write(JOURNAL, summary)  # the summary run's Write
    assert _wait(lambda: g.read().startswith(before.rstrip("\n"))), (g.read(), g.out())
    g.recorded()
    journal = g.read()
    # in place: the old lines where they stood, then what was written since
    assert journal == before + "\n" + summary.split("\n\n", 1)[1], journal
    assert _wait(lambda: g.said(mark, "lost lines put back where they stood") == 1), g.out()
    passed, out = g.backup()
    assert passed and "VK601" not in out, out
    history = g.vk("history").stdout
    assert "journal-rewrite" in history, history
    g.whole()
    g.idle()


def test_2_partial_staging_commits_and_watch_writes_nothing(guard):
    g = guard
    first, second = g.entry(), g.entry()
    older = g.read() + first
    g.append(first)
    g.append(second)
    g.recorded()
    # `git add -p`: an older version staged, the work tree untouched
    blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=g.path,
                          env=g.vault.env, input=older, capture_output=True,
                          text=True).stdout.strip()
    g.vault.git("update-index", "--cacheinfo", f"100644,{blob},{JOURNAL}")
    g.vault.index()
    g.vault.git("add", "memory/INDEX.md")
    now, mark = g.read(), len(g.out())
    passed, out = g.commit()
    assert passed and "VK601" not in out, out
    g.idle()
    assert g.read() == now, g.read()  # pre-commit put the unstaged lines back; watch wrote nothing
    assert g.said(mark, "put back") == 0 and g.said(mark, "lost") == 0, g.out()
    assert g.head() == older
    g.whole()
    g.settled()


def test_3_stash_then_unrelated_commit_then_pop(guard):
    g = guard
    g.append(g.entry())
    g.recorded()
    whole, mark = g.read(), len(g.out())
    g.vault.git("stash", "-q")
    assert g.read() == g.head()
    g.recorded()
    g.vault.write("memory/semantic/tools.md", g.note("# Tools\n\n- ripgrep searches the vault\n"))
    g.vault.git("add", "memory/semantic/tools.md")
    passed, out = g.commit()
    assert passed and "VK601" not in out, out
    g.idle()
    assert g.read() == g.head()  # watch did not put the stashed lines back
    g.whole()  # the stash holds them: nothing lost
    g.vault.git("stash", "pop", "-q")
    assert g.read() == whole
    g.recorded()
    g.idle()
    assert g.read() == whole, g.read()  # whole, nothing duplicated
    assert g.said(mark, "put back") == 0, g.out()
    g.whole()
    g.settled()


def _branch(g) -> str:
    return g.vault.git("symbolic-ref", "--short", "HEAD").stdout.strip()


def test_4_checkout_of_another_branch_and_back(guard):
    g = guard
    main = _branch(g)
    g.append(g.entry())
    passed, out = g.backup()
    assert passed, out
    g.idle()
    mark = len(g.out())
    g.vault.git("checkout", "-q", "-b", f"other-{g.n}", "HEAD~1")  # an older journal there
    g.recorded()
    g.idle()
    assert g.read() == g.head(), g.read()  # no pollution from the branch left
    g.vault.git("checkout", "-q", main)
    g.recorded()
    g.idle()
    assert g.read() == g.head(), g.read()
    assert g.vault.git("status", "--porcelain").stdout == ""
    assert g.said(mark, "put back") == 0 and g.said(mark, "lost") == 0, g.out()
    g.append(g.entry())
    passed, out = g.backup()  # no refusal on return
    assert passed and "VK601" not in out, out
    g.whole()
    g.idle()


def test_5_a_typo_fixed_while_watch_runs_is_left_as_edited(guard):
    g = guard
    text = g.entry().replace("reviewed and closed\n", "deployed v1.2 to production\n", 1)
    g.append(text)
    g.recorded()
    mark = len(g.out())
    line = next(x for x in text.splitlines() if "v1.2" in x)
    # the line corrected before its first commit, then again once it is committed: each
    # time an edit, left as edited, never refused
    was = "v1.2"
    for version in ("v1.3", "v1.4"):
        fixed = line.replace(was, version)
        g.written[line] -= 1
        g.note(fixed)
        g.vault.write(JOURNAL, g.read().replace(line, fixed))
        edited = g.read()
        g.recorded()
        g.idle()
        assert g.read() == edited, g.read()  # left as edited
        assert g.said(mark, "put back") == 0, g.out()
        passed, out = g.backup()
        assert passed and "VK601" not in out, out
        g.whole()
        line, was = fixed, version
    assert "journal-edit" in g.vk("history").stdout
    g.whole()
    g.idle()


def test_6_two_writers_fighting_one_restore_one_undone_no_growth(guard):
    g = guard
    g.append(g.entry())
    g.recorded()
    mark = len(g.out())
    summary = f"# {TODAY.isoformat()}\n\n## Summary\n- The day in one line ({g.n}).\n"
    g.note(summary)
    sizes = []
    for _ in range(6):  # the summariser, rewriting the day's journal every second
        g.vault.write(JOURNAL, summary)
        time.sleep(1.0)
        sizes.append(len(g.read()))
    g.vault.write(JOURNAL, summary)
    g.recorded()
    g.idle()
    out = g.out()[mark:]
    assert out.count("put back where they stood") <= 1, out
    assert out.count("removed the") == 1 and "again; not restored again" in out, out
    assert max(sizes) < 2 * len(g.head()) + 2000, sizes  # no growth
    assert g.read() == summary  # the summariser's text, backed off from
    passed, out = g.backup()
    assert not passed and f"{JOURNAL}:" in out and "VK601" in out, out
    g.recover()
    journal = g.read()
    assert "vaultkit-recovered" not in journal and "Restored lines" not in journal, journal
    # the old lines back, the summary's line after them (its "## Summary" heading is the
    # same line as test 1's summary in HEAD, so the undo keeps that one where it stands)
    assert journal.endswith(summary.rsplit("\n", 2)[-2] + "\n"), journal
    assert "nothing to recover" in g.vk("recover", "--all").stdout
    passed, out = g.backup()
    assert passed, out
    g.whole()
    g.idle()


def test_7_a_commit_dated_ahead_does_not_hide_a_loss_only_a_snapshot_holds(guard):
    g = guard
    g.append(g.entry())
    g.recorded()
    mark = len(g.out())
    summary = f"# {TODAY.isoformat()}\n\n## Summary\n- The day, again ({g.n}).\n"
    g.note(summary)
    # two writers: watch puts the lines back once, then backs off; only a snapshot holds them
    start = g.head()
    g.vault.write(JOURNAL, start + summary.split("\n\n", 1)[1])
    assert _wait(lambda: "put back where they stood" in g.out()[mark:]), g.out()
    g.vault.write(JOURNAL, start + summary.split("\n\n", 1)[1])
    assert _wait(lambda: "again; not restored again" in g.out()[mark:]), g.out()
    g.vault.write("memory/semantic/ahead.md", g.note("# Ahead\n\n- A clock set a day fast\n"))
    g.vault.git("add", "memory/semantic/ahead.md")
    ahead = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(time.time() + 86400))
    env = dict(g.vault.env, GIT_COMMITTER_DATE=ahead, GIT_AUTHOR_DATE=ahead)
    passed, out = g.commit(env=env)
    assert passed, out
    assert f"{JOURNAL}:1:1: VK601 journal-append-only warning:" in out, out
    g.idle()
    g.append(g.entry())
    g.vault.git("add", JOURNAL)
    passed, out = g.commit()
    assert not passed and f"{JOURNAL}:1:1: VK601 journal-append-only error:" in out, out
    assert g.lost(), "history lists the loss"
    g.recover()
    passed, out = g.backup()
    assert passed, out
    g.whole()
    g.idle()


# -- and the rest of git and the writers -----------------------------------------------------

def test_rebase_of_a_branch_that_touched_another_file(guard):
    g = guard
    main = _branch(g)
    mark = len(g.out())
    side = f"side-{g.n}"
    g.vault.git("checkout", "-q", "-b", side, "HEAD~1")
    g.vault.write("memory/semantic/side.md", g.note("# Side\n\n- Written on the side branch\n"))
    g.vault.git("add", "memory/semantic/side.md")
    g.vault.git("commit", "-q", "--no-verify", "-m", "side")
    g.vault.git("checkout", "-q", main)
    g.recorded()
    g.vault.git("rebase", "-q", side)  # main's journal commits, replayed on the side branch
    g.recorded()
    g.idle()
    assert g.read() == g.head() and g.vault.git("status", "--porcelain").stdout == ""
    assert g.said(mark, "put back") == 0 and g.said(mark, "lost") == 0, g.out()
    g.append(g.entry())
    passed, out = g.backup()
    assert passed and "VK601" not in out, out
    g.whole()
    g.idle()


@pytest.mark.parametrize("how", ["reset --hard", "checkout --"])
def test_git_over_uncommitted_lines_is_put_back(guard, how):
    g = guard
    g.append(g.entry())
    g.recorded()
    whole, mark = g.read(), len(g.out())
    if how == "reset --hard":
        g.vault.git("reset", "-q", "--hard")
    else:
        g.vault.git("checkout", "--", JOURNAL)
    assert _wait(lambda: g.read() == whole), (g.read(), g.out())
    assert _wait(lambda: g.said(mark, "put back where they stood") == 1), g.out()
    passed, out = g.backup()
    assert passed and "VK601" not in out, out
    g.whole()
    g.idle()


def test_obsidian_git_committing_every_few_seconds_while_an_agent_appends(guard):
    g = guard
    stop, committing = threading.Event(), threading.Event()
    during = []  # entries appended while a commit's hooks could be running

    def agent():
        while not stop.is_set():
            text = g.entry("Agent")
            if committing.is_set():
                during.append(text)
                with open(g.path / JOURNAL, "a", encoding="utf-8") as fh:
                    fh.write(text)
            else:
                g.append(text)
            stop.wait(0.4)

    writer = threading.Thread(target=agent)
    writer.start()
    results = []
    try:
        for _ in range(3):
            time.sleep(1.0)
            committing.set()
            results.append(g.backup())
            committing.clear()
    finally:
        stop.set()
        writer.join()
    for passed, out in results:
        # vaultkit refuses none of them; an append landing while the hooks run fails that
        # commit in pre-commit itself ("files were modified by this hook": it compares the
        # work tree before and after each hook) and the next commit takes it
        assert "VK6" not in out, out
        assert passed or "files were modified by this hook" in out, out
    g.recorded()
    g.settled()
    # pre-commit, having stashed lines appended between `git add -A` and its start, takes
    # a write during its hooks for a hook's fix and rolls it back ("Rolling back fixes")
    # before any snapshot may have seen it: such an entry may be gone, no other
    journal = g.read()
    for text in during:
        if text.strip() in journal:
            g.note(text)
        else:
            assert any("Rolling back fixes" in out for _, out in results), (text, results)
    g.whole()


def test_two_agents_appending_with_vaultkit_log(guard):
    g = guard
    g.recorded()
    texts = {a: [f"- Agent {a} {g.n} step {k}: checked queue {k}\n- and wrote its reply {k}{a}"
                 for k in range(3)] for a in "AB"}

    def agent(a):
        for k, text in enumerate(texts[a]):
            g.vk("log", "--title", f"Agent {a} {g.n} entry {k}", text)

    threads = [threading.Thread(target=agent, args=(a,)) for a in "AB"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    journal = g.read()
    blocks, block = [], []
    for line in journal.splitlines():
        if line.startswith("#"):
            blocks.append(block)
            block = []
        block.append(line)
    blocks.append(block)
    for a in "AB":
        for k in range(3):
            mine = [b for b in blocks if b and f"Agent {a} {g.n} entry {k}" in b[0]]
            assert len(mine) == 1, journal  # written once
            text = "\n".join(mine[0])
            # whole and not interleaved: its own lines in its block, no other entry's
            assert f"checked queue {k}" in text and f"reply {k}{a}" in text, journal
            assert text.count("reply ") == 1, journal
            g.note(text)
    g.recorded()
    passed, out = g.backup()
    assert passed and "VK601" not in out, out
    g.whole()
    g.idle()


def test_an_agents_write_of_the_whole_file_is_restored_in_place(guard):
    g = guard
    g.append(g.entry())
    g.append(g.entry())
    g.recorded()
    before, mark = g.read(), len(g.out())
    summary = f"# {TODAY.isoformat()}\n\n## Summary\n- Two checkpoints, both closed ({g.n}).\n"
    g.note(summary)
    g.vault.write(JOURNAL, summary)
    # every line back once, the summary kept (where the lost lines go depends on the lines
    # the two versions share: the title, and "## Summary" when an earlier case left one)
    assert _wait(lambda: set(g.read().splitlines()) == set(before.splitlines())
                 | set(summary.splitlines())), (g.read(), g.out())
    assert _wait(lambda: g.said(mark, "put back where they stood") == 1), g.out()
    passed, out = g.backup()
    assert passed and "VK601" not in out, out
    g.whole()
    g.idle()


def test_memory_md_distilled_into_a_topic_note_in_the_same_commit(guard):
    g = guard
    facts = [f"- Fact {g.n}.{i}: the deploy window for service {i} is Tuesday\n"
             for i in range(12)]
    memory = g.read("MEMORY.md")
    g.vault.write("MEMORY.md", memory + g.note("".join(facts)))
    passed, out = g.backup()
    assert passed, out
    g.idle()
    mark = len(g.out())
    topic = f"memory/semantic/deploys-{g.n}.md"
    # the note and the cut written together (one change, as the distilling agent makes it)
    g.vault.write(topic, g.note("# Deploys\n\n" + "".join(facts)))
    g.vault.write("MEMORY.md", g.note(memory + f"- Deploy windows: see [[deploys-{g.n}]]\n"))
    g.recorded("MEMORY.md")
    g.recorded(topic)
    passed, out = g.backup()  # ... both in one commit
    assert passed and "VK602" not in out, out
    assert g.said(mark, "cut") == 0, g.out()
    g.whole()
    g.idle()


# -- watch --no-restore: the hook refuses, recover brings the lines back once ----------------

@pytest.mark.parametrize("mode", list(MODES))
def test_without_restore_git_over_uncommitted_lines_is_refused_and_recovered(
        tmp_path, hook_repo, pre_commit_home, mode):
    g = _make_guard(tmp_path, hook_repo, pre_commit_home, MODES[mode] + ["--no-restore"],
                    tmp_path / "watch.log")
    try:
        for how in (["reset", "-q", "--hard"], ["checkout", "--", JOURNAL]):
            g.append(g.entry())
            g.recorded()
            mark = len(g.out())
            g.vault.git(*how)
            assert _wait(lambda: "line" in g.out()[mark:] and "lost" in g.out()[mark:]), \
                g.out()
            g.recorded()
            g.append(g.entry())
            g.vault.git("add", JOURNAL)
            passed, out = g.commit()
            assert not passed and f"{JOURNAL}:1:1: VK601 journal-append-only error:" in out, out
            assert g.lost(), "history lists the loss"
            out = g.recover()
            assert "nothing to recover" not in out, out
            assert "nothing to recover" in g.vk("recover", "--all").stdout  # once
            g.recorded()
            passed, out = g.backup()
            assert passed, out
            g.whole()
            g.idle()
    finally:
        code = g.stop()
    assert code == 0, g.out()
