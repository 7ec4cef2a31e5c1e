"""The model of loss (docs/snapshots.md), case by case, with real git: the commit hook's
verdict (`vaultkit check --hook`, the command the starter's pre-commit hook runs, given the
staged Markdown files as pre-commit gives them; one case through real pre-commit), and
after `vaultkit recover --all` nothing lost and no line written twice."""

from __future__ import annotations

import json
import re
import sys

import pytest

from test_precommit import (TODAY, _run, hook_repo, make_repo,  # noqa: F401
                            pre_commit_home)

pytestmark = pytest.mark.integration

JOURNAL = f"memory/{TODAY.isoformat()}.md"
TOPIC = "memory/semantic/deploys.md"
NOTE = "memory/semantic/tools.md"
E1 = ("\n### 10:00 — Release\n- Deployed v1.2 to production after the smoke tests\n"
      "- Rollback plan written down in the runbook\n- Next: watch the error rate\n")
E2 = ("\n### 12:00 — Review\n- Reviewed the payment validation change with Ana\n"
      "- Two comments, both fixed before the merge\n- Next: release it on Thursday\n")
E3 = ("\n### 14:00 — Support\n- Answered the billing question from the support queue\n"
      "- Wrote the answer into the FAQ\n- Next: close the ticket\n")
MEMORY_FACTS = [f"- Fact {i:02d}: the deploy window for service {i} is Tuesday"
                for i in range(1, 17)]


def _vaultkit(vault, *args, check=True):
    return _run([sys.executable, "-m", "vaultkit", *args], vault.path, vault.env, check=check)


def _hook(vault):
    """`vaultkit check --hook` with the staged Markdown files, as pre-commit runs it."""
    staged = vault.git("diff", "--cached", "--name-only", "--diff-filter=d").stdout.split()
    proc = _vaultkit(vault, "check", "--hook", *[p for p in staged if p.endswith(".md")],
                     check=False)
    return proc.returncode, proc.stdout + proc.stderr


def _verdict(vault):
    """The hook's verdict, INDEX.md brought up to date and staged first (as the nightly
    backup does)."""
    vault.index()
    vault.git("add", "memory/INDEX.md")
    return _hook(vault)


def _commit(vault, message="backup"):
    """The hook's verdict; when it passes, the commit is made (the hook having run)."""
    rc, out = _verdict(vault)
    if rc == 0:
        vault.git("commit", "-q", "--no-verify", "--allow-empty", "-m", message)
    return rc, out


def _append(vault, rel, text):
    with open(vault.path / rel, "a", encoding="utf-8") as fh:
        fh.write(text)


def _snapshot(vault):
    _vaultkit(vault, "snapshot", "--quiet")


def _base(make_repo):
    """Today's journal committed with its morning entry, MEMORY.md with ten facts; then
    two entries appended (never committed), and a snapshot of them."""
    vault = make_repo()
    vault.morning = vault.read(JOURNAL)  # the starter's entry of today
    _append(vault, "MEMORY.md", "\n" + "\n".join(MEMORY_FACTS) + "\n")
    vault.index()
    vault.git("add", "-A")
    vault.git("commit", "-q", "--no-verify", "-m", "backup: morning")
    vault.setup = set(vault.git("rev-list", "HEAD").stdout.split())
    _append(vault, JOURNAL, E1 + E2)
    _snapshot(vault)
    return vault


def _stage_other_note(vault):
    vault.write(NOTE, "# Tools\n\n- ripgrep for searching the vault\n")
    vault.git("add", NOTE)


# each case: what happens after the base, and the verdict: "pass", "warn" (passes with a
# warning naming the journal and the command) or "refuse"

def partial_staging(vault):
    vault.write(JOURNAL, vault.morning + E1)  # an older version staged ...
    vault.git("add", JOURNAL)
    vault.write(JOURNAL, vault.morning + E1 + E2)  # ... while the work tree has the full text


def stash_unrelated(vault):
    vault.git("stash", "-q")
    _stage_other_note(vault)


def stash_pop(vault):
    vault.git("stash", "-q")
    _snapshot(vault)
    vault.git("stash", "pop", "-q")
    vault.git("add", JOURNAL)


def reset_hard(vault):
    vault.git("reset", "-q", "--hard")
    _snapshot(vault)
    _append(vault, JOURNAL, E3)
    vault.git("add", JOURNAL)


def checkout_unrelated(vault):
    vault.git("checkout", "--", JOURNAL)
    _stage_other_note(vault)


def checkout_staged(vault):
    vault.git("checkout", "--", JOURNAL)
    _append(vault, JOURNAL, E3)
    vault.git("add", JOURNAL)


def typo_fix(vault):
    text = vault.read(JOURNAL).replace("validation change with Ana",
                                       "validation change with Anna")
    vault.write(JOURNAL, text.replace("v1.2 to", "v1.3 to"))
    vault.git("add", JOURNAL)


def line_replaced(vault):
    text = vault.read(JOURNAL).replace("- Rollback plan written down in the runbook",
                                       "- Lunch at the Thai place")
    vault.write(JOURNAL, text)
    vault.git("add", JOURNAL)


def distillation(vault):
    """More than half of MEMORY.md's lines go into a topic note: moved, not cut."""
    _snapshot(vault)
    moved = MEMORY_FACTS
    memory = vault.read("MEMORY.md")
    for fact in moved:
        memory = memory.replace(fact + "\n", "")
    vault.write("MEMORY.md", memory + "- Deploy windows: see [[deploys]]\n")
    vault.write(TOPIC, "# Deploys\n\n" + "\n".join(moved) + "\n")
    vault.git("add", "MEMORY.md", TOPIC, JOURNAL)


def two_agents(vault):
    _append(vault, JOURNAL, "\n### 13:00 — Agent A\n- Triaged the alerts\n")
    _snapshot(vault)
    _append(vault, JOURNAL, "\n### 13:01 — Agent B\n- Renewed the certificate\n")
    vault.git("add", JOURNAL)


CASES = [
    (partial_staging, "pass"),
    (stash_unrelated, "pass"),
    (stash_pop, "pass"),
    (reset_hard, "refuse"),
    (checkout_unrelated, "warn"),
    (checkout_staged, "refuse"),
    (typo_fix, "pass"),
    (line_replaced, "refuse"),
    (distillation, "pass"),
    (two_agents, "pass"),
]


def _lost(vault) -> list[dict]:
    """The losses not recovered, but those of the set-up commits (the starter's files
    replaced)."""
    events = json.loads(_vaultkit(vault, "history", "--format", "json").stdout)
    events = events.get("events", events) if isinstance(events, dict) else events
    return [e for e in events if not e.get("recovered") and e["commit"] not in vault.setup
            and e["kind"] != "journal-edit"]  # (listed, not a loss)


def _memory_texts(vault) -> str:
    return "".join(p.read_text(encoding="utf-8") for p in sorted(
        (vault.path / "memory").rglob("*.md")) if p.name != "INDEX.md") \
        + vault.read("MEMORY.md")


@pytest.mark.parametrize("case,verdict", CASES, ids=[c.__name__ for c, _ in CASES])
def test_the_hook_history_and_recover_agree_on_the_loss(make_repo, case, verdict):
    vault = _base(make_repo)
    case(vault)
    before = vault.head()
    rc, out = _commit(vault)
    if verdict == "refuse":
        assert rc != 0 and vault.head() == before, out
        assert f"{JOURNAL}:1:1: VK601 journal-append-only error:" in out, out
        said = re.search(r"(\d+) lines? lost since .*? (is|are) only in that snapshot", out)
        assert said and (said[1] == "1") == (said[2] == "is"), out  # "1 line … is"
        assert "`vaultkit recover --all`" in out, out
        assert f"VAULTKIT_ACCEPT_DELETION={JOURNAL} git commit" in out, out
    else:
        assert rc == 0 and vault.head() != before, out
        if verdict == "warn":
            assert f"{JOURNAL}:1:1: VK601 journal-append-only warning:" in out, out
            assert "`vaultkit recover --all`" in out, out
        else:
            assert "VK601" not in out, out
    if case is stash_unrelated:  # the lines wait in the stash: nothing to recover
        assert _lost(vault) == []
        assert "nothing to recover" in _vaultkit(vault, "recover", "--all").stdout
        vault.git("stash", "pop", "-q")
        assert (vault.morning + E1 + E2) == vault.read(JOURNAL)
    lost = _lost(vault)
    assert bool(lost) == (verdict in ("refuse", "warn")), lost
    audit = _vaultkit(vault, "audit", "--format", "json", check=False).stdout
    assert ("between commits not recovered" in audit) == bool(lost), audit  # it agrees
    _vaultkit(vault, "recover", "--all")
    once = _memory_texts(vault)
    _vaultkit(vault, "recover", "--all")
    assert _memory_texts(vault) == once  # a second run writes nothing
    assert _lost(vault) == []  # nothing lost
    journal = vault.read(JOURNAL)
    for line in (vault.morning + E1 + E2).splitlines():
        if line.strip() and not (case is typo_fix and ("v1.2" in line or "Ana" in line)):
            assert journal.count(line + "\n") == 1, (line, journal)
    nonblank = [line for line in journal.splitlines()
                if line.strip() and not line.startswith(("<!--", "#"))]
    assert len(nonblank) == len(set(nonblank)), journal  # no line written twice
    vault.git("add", "-A")
    rc, out = _commit(vault, "backup: after recover")
    assert rc == 0, out  # and the commit with every line passes


def test_reset_hard_then_an_unrelated_commit_passes_with_a_warning(make_repo):
    vault = _base(make_repo)
    vault.git("reset", "-q", "--hard")
    _stage_other_note(vault)
    rc, out = _commit(vault)
    assert rc == 0, out
    assert (f"{JOURNAL}:1:1: VK601 journal-append-only warning: 8 lines lost since the "
            "snapshot at ") in out, out
    assert "this commit does not stage it, so it passes" in out
    assert len(_lost(vault)) == 1  # listed until recovered


def test_partial_staging_passes_through_real_pre_commit(make_repo):
    """pre-commit takes the unstaged lines out of the work tree while the hooks run: the
    hook finds them in the patch pre-commit keeps for the run."""
    vault = _base(make_repo)
    partial_staging(vault)
    before = vault.head()
    ok, out = vault.commit("backup: part of the day")
    assert ok and vault.head() != before, out
    assert "VK601" not in out, out
    assert vault.read(JOURNAL) == vault.morning + E1 + E2  # pre-commit put the rest back
    assert "nothing to recover" in _vaultkit(vault, "recover", "--all").stdout



def test_a_cut_topic_note_not_in_the_commit_is_a_warning_and_refused_once_staged(make_repo):
    """mass-deletion judges like journal-append-only: a commit that does not stage the cut
    note seals nothing."""
    vault = _base(make_repo)
    vault.write(TOPIC, "# Deploys\n\n- Tag the release\n- Run the smoke tests\n")
    vault.git("add", TOPIC)
    vault.git("commit", "-q", "--no-verify", "-m", "backup: deploys")
    _append(vault, TOPIC, "".join(f"- Step {i}: check service {i} after the deploy\n"
                                  for i in range(8)))
    _snapshot(vault)
    vault.git("checkout", "--", TOPIC)  # the eight uncommitted lines: only in the snapshot
    _stage_other_note(vault)
    rc, out = _verdict(vault)
    assert rc == 0, out
    assert f"{TOPIC}:1:1: VK602 mass-deletion warning: lost 8 of its 11 non-blank" in out, out
    assert "this commit does not stage it, so it passes" in out, out
    vault.git("reset", "-q", "--", NOTE)  # the same state, the cut note staged instead
    _append(vault, TOPIC, "- Watch the error rate\n")
    vault.git("add", TOPIC)
    rc, out = _verdict(vault)
    assert rc != 0, out
    assert f"{TOPIC}:1:1: VK602 mass-deletion error: lost 7 of its 11 " in out, out


def test_the_stash_is_read_only_for_unexplained_lines_and_only_its_newest_entries(
        make_repo, tmp_path, monkeypatch):
    from types import SimpleNamespace

    import vaultkit.vault.gitstate as gitstate
    from vaultkit.vault.profile import load_settings

    vault = _base(make_repo)
    vault.git("add", JOURNAL)  # nothing lost: the hook asks git nothing about the stash
    trace = tmp_path / "trace"
    proc = _run([sys.executable, "-m", "vaultkit", "check", "--hook", JOURNAL], vault.path,
                {**vault.env, "GIT_TRACE": str(trace), "VAULTKIT_RESIDENT": "0"}, check=False)
    assert "VK601" not in proc.stdout, proc.stdout
    assert " -g " not in trace.read_text(), trace.read_text()
    vault.git("reset", "-q")
    vault.git("stash", "-q")  # the day's entries, in stash@{1} once the next is made
    _stage_other_note(vault)
    vault.git("stash", "-q")  # another change, stash@{0}
    settings = load_settings(vault.path)
    stub = SimpleNamespace(root=vault.path, profile=settings.profile, settings=settings)
    assert any("- Next: release it on Thursday" in text
               for text in gitstate.GitState(stub).stash_texts(JOURNAL))
    monkeypatch.setattr(gitstate, "STASH_ENTRIES", 1)
    assert not any("- Next: release it on Thursday" in text
                   for text in gitstate.GitState(stub).stash_texts(JOURNAL))


@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_only_a_conflict_as_git_writes_it_is_left_out(eol):
    from vaultkit.vault.loss import judge

    conflict = ("<<<<<<< HEAD\n- ours\n||||||| base\n=======\n- theirs\n>>>>>>> 1a2b3c4 (side)\n"
                ">>>>>>> quoted seven deep\n=======\n")
    old = ("# J\n" + conflict).replace("\n", eol)
    new = "# J\n- ours\n- theirs\n".replace("\n", eol)
    # the diff3 conflict's four markers are git's; the two lines after it are the owner's
    assert judge(old, new).lost == [">>>>>>> quoted seven deep", "======="]


# a line's Markdown form rewritten by a formatter or an editor: the same line, not a loss
# (docs/snapshots.md, "The model of loss"); old -> new, nothing lost
SAME_TEXT = [
    ("- a\n* Bob raised the __rate limit__ again\n", "- a\n- Bob raised the **rate limit** again\n"),
    ("- a\n+ the cron job moves to 02:00\n", "- a\n- the cron job moves to 02:00\n"),
    ("1. dashboards\n2. Filed TICKET-41\n3. Asked *Carol*\n",
     "1. dashboards\n1. Filed TICKET-41\n1. Asked _Carol_\n"),
    ("- a PDF \\*before\\* the call\n", "- a PDF *before* the call\n"),
    ("- restored at 08:30.  \n  It took 14 minutes.\n",
     "- restored at 08:30.\\\n  It took 14 minutes.\n"),
    ("-\tTab after the marker,\ta tab inside.   \n", "- Tab after the marker, a tab inside.\n"),
    ("### 09:10 — Standup\n", "## 09:10 — Standup\n"),
    ("Interesting point\n-----------------\nThe paper.\n", "## Interesting point\n\nThe paper.\n"),
    ("Afternoon\n=========\n", "# Afternoon\n"),
    ("| a | b |\n|---|:-:|\n| api | 1.4.2 |\n",
     "| a   | b     |\n| --- | :---: |\n| api | 1.4.2 |\n"),
    ("\ufeff# 2026-12-07\n- x\n", "# 2026-12-07\n- x\n"),
    ("***\n", "---\n"),
    # a paragraph re-wrapped: joined, split, re-flowed; records of one paragraph joined
    ("We agreed that the worker deploys go\nafter the api deploys, never together.\n",
     "We agreed that the worker deploys go after the api deploys, never together.\n"),
    ("We agreed that the worker deploys go after the api deploys, never together.\n",
     "We agreed that the worker\ndeploys go after the api\ndeploys, never together.\n"),
    ("**Owner:** Alice\n**Status:** in progress\n**Next:** Thursday\n",
     "**Owner:** Alice **Status:** in progress **Next:** Thursday\n"),
    ("- settled.\n**Outcome:** no customer impact\n",
     "- settled. **Outcome:** no\n  customer impact\n"),
    ("text\n| a | b |\n|---|---|\n| api | 1.4.2 |\n",
     "text | a | b | |---|---| | api |\n1.4.2 |\n"),
]


@pytest.mark.parametrize("old, new", SAME_TEXT)
def test_a_line_a_formatter_only_rewrote_is_kept(old, new):
    from vaultkit.vault.loss import judge

    assert judge("# J\n" + old, "# J\n\n" + new).lost == []


# the same rewrites with a real loss: the line named is lost, and only it
FORMAT_AND_LOSS = [
    ("- a\n* Bob raised the __rate limit__ again\n* Disk on db-2 at 81%\n",
     "- a\n- Bob raised the **rate limit** again\n", ["* Disk on db-2 at 81%"]),
    ("**Owner:** Alice\n**Status:** in progress\n**Next:** Thursday\n",
     "**Owner:** Alice **Status:** cancelled by finance **Next:** Thursday\n",
     ["**Status:** in progress"]),
    ("We agreed that the worker deploys go\nafter the api deploys, never together.\n"
     "The rollback plan is in the runbook.\n",
     "We agreed that the worker deploys go after the api deploys, never together.\n",
     ["The rollback plan is in the runbook."]),
    ("Interesting point\n-----------------\nThe paper.\n", "The paper.\n",
     ["Interesting point", "-----------------"]),
    ("### 10:00 — Checkpoint 1\n- Ran 10 tests\n", "## 11:00 — Checkpoint 2\n- Ran 12 tests\n",
     ["### 10:00 — Checkpoint 1", "- Ran 10 tests"]),
    ("A\n\n---\n\nB\n", "A\n\nB\n", ["---"]),
    ("> quoted\n=======\n", "> quoted\n", ["======="]),
]


@pytest.mark.parametrize("old, new, lost", FORMAT_AND_LOSS)
def test_a_formatter_rewrite_with_a_loss_still_loses_the_line(old, new, lost):
    from vaultkit.vault.loss import judge

    assert [line for line in judge("# J\n" + old, "# J\n\n" + new).lost if line.strip()] == lost


def test_the_rewrap_comparison_stays_linear_on_a_large_rewrite():
    """A paragraph re-wrapped whole is one block with the same words: kept without a word
    by word comparison. A block of the line diff larger than the word bound is not
    compared word by word: its lines are judged as before (a rewrite), so a large file
    costs no quadratic time."""
    from vaultkit.vault import loss

    old = "".join(f"word{i} and some more words for line {i}\n" for i in range(3000))
    new = " ".join(line for line in old.splitlines()) + "\n"  # one line: past the bound
    assert len(loss._words(loss.same_text(new))) > loss._WORDS
    assert loss.judge(old, new).lost == []
    changed = new.replace("word1500 ", "other1500 ")
    assert len(loss.judge(old, changed).lost) == 3000
