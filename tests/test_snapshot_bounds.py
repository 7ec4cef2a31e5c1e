"""Every read of the snapshot chain is bounded: a snapshot ref pointed (with plain git
plumbing) at a commit whose tree holds a blob over ``budgets.max-file-bytes``, or more
entries than a tree may list, or a chain longer than is read, makes ``history``,
``recover`` and ``watch`` warn, naming the object, read none of it, exit cleanly and still
judge the good snapshots."""

from __future__ import annotations

import os
import subprocess
import tracemalloc

import pytest
from cli_invoke import invoke
from test_snapshots import JOURNAL, ENV, checkpoint, git, make, store_of

import vaultkit.vault.snapshots as snapshots
from vaultkit.memory.watch import Watcher
from vaultkit.vault.profile import load_settings

LIMIT = 100_000
BIG = 20 * 1024 * 1024  # the hostile blob: 200 times the limit


def plumb(root, *args, stdin: bytes | None = None, index=None) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(ENV)
    if index is not None:
        env["GIT_INDEX_FILE"] = str(index)
    proc = subprocess.run(["git", *args], cwd=root, input=stdin, capture_output=True, env=env)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.decode().strip()


def good_chain(tmp_path):
    """A vault with two good snapshots: the second lost two lines of the journal (an
    event every command must still find)."""
    root = make(tmp_path)
    (root / "vaultkit.toml").write_text(f"[budgets]\nmax-file-bytes = {LIMIT}\n")
    store = store_of(root)
    for n in (1, 2, 3):
        checkpoint(root, n)
    store.snapshot()
    text = (root / JOURNAL).read_text()
    (root / JOURNAL).write_text(text.replace("- step 2 done\n", "").replace(
        "- next: step 3\n", ""))
    store.snapshot()
    return root, store


def hostile_commit(root, store, entries: list[str]) -> str:
    """A commit on top of the chain's head whose tree is the head's plus ``entries``
    (``--index-info`` lines), written with plumbing, and the ref moved to it."""
    head = store.head()
    index = root / ".git" / "hostile-index"
    plumb(root, "read-tree", head, index=index)
    plumb(root, "update-index", "--index-info", stdin="".join(entries).encode(), index=index)
    tree = plumb(root, "write-tree", index=index)
    index.unlink()
    commit = plumb(root, "commit-tree", tree, "-p", head, "-m", "not made by vaultkit")
    plumb(root, "update-ref", store.ref, commit)
    return commit


def big_blob(root) -> str:
    line = b"- a line of the hostile version of the note, repeated\n"
    return plumb(root, "hash-object", "-w", "--stdin", stdin=line * (BIG // len(line)))


def warm_up(tmp_path_factory):
    """Import what the commands import, so that the memory measured is what they read."""
    other = tmp_path_factory.mktemp("warm")
    root, _ = good_chain(other)
    invoke(["history", str(root)], root)
    invoke(["recover", str(root), "--all", "--dry-run"], root)


def peak(run):
    tracemalloc.start()
    try:
        result = run()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.fixture
def with_big_blob(tmp_path, tmp_path_factory):
    warm_up(tmp_path_factory)
    root, store = good_chain(tmp_path)
    oid = big_blob(root)
    hostile_commit(root, store, [f"100644 {oid}\tmemory/semantic/deploys.md\n"])
    return root, oid


def test_history_warns_about_an_oversized_blob_and_reads_none_of_it(with_big_blob):
    root, oid = with_big_blob
    (code, out, err), most = peak(lambda: invoke(["history", str(root)], root))
    assert code == 0 and "Traceback" not in err
    assert most < BIG // 3, most  # the blob (20 MB) was never held in memory
    assert oid[:10] in err and f"over the {LIMIT:,}-byte limit" in err
    assert "memory/semantic/deploys.md" in err
    assert "journal-rewrite" in out and JOURNAL in out  # the good snapshots still judged


def test_recover_dry_run_warns_and_still_brings_back_the_good_loss(with_big_blob):
    root, oid = with_big_blob
    (code, out, err), most = peak(lambda: invoke(["recover", str(root), "--all",
                                                  "--dry-run"], root))
    assert code == 0 and "Traceback" not in err
    assert most < BIG // 3, most
    assert oid[:10] in err and f"over the {LIMIT:,}-byte limit" in err
    assert f"would put back 2 lines where they stood in {JOURNAL}" in out


def test_a_watch_round_warns_and_judges_the_rest(tmp_path):
    root, store = good_chain(tmp_path)
    oid = big_blob(root)
    hostile_commit(root, store, [f"100644 {oid}\tmemory/semantic/deploys.md\n"])
    lines = []
    w = Watcher(root, load_settings(root), out=lines.append)
    text = (root / JOURNAL).read_text()
    (root / JOURNAL).write_text(text.replace("- step 1 done\n", ""))  # a good loss
    events, most = peak(w.step)
    assert most < BIG // 3, most
    assert [(e.kind, e.path) for e in events] == [("journal-restored", JOURNAL)]
    warnings = [line for line in lines if line.startswith("vaultkit: warning:")]
    assert len(warnings) == 1 and oid[:10] in warnings[0]
    assert "memory/semantic/deploys.md" in warnings[0] and f"{LIMIT:,}-byte" in warnings[0]
    assert "- step 1 done" in (root / JOURNAL).read_text()
    w.step()  # said once, not every round
    assert sum(line.startswith("vaultkit: warning:") for line in lines) == 1


def test_the_store_refuses_to_read_a_blob_over_the_limit(tmp_path):
    root, store = good_chain(tmp_path)
    oid = big_blob(root)
    small = store.recorded()[JOURNAL]
    got, most = peak(lambda: store.blobs([oid, small], {oid: "memory/x.md in snapshot y"}))
    assert set(got) == {small} and most < BIG // 3
    (warning,) = store.warnings
    assert oid[:10] in warning and "memory/x.md" in warning and "not read" in warning


def test_a_tree_with_more_entries_than_are_read(tmp_path, monkeypatch):
    monkeypatch.setattr(snapshots, "MAX_TREE_ENTRIES", 500, raising=False)
    monkeypatch.setattr(snapshots, "MAX_CHANGES", 500, raising=False)
    root, store = good_chain(tmp_path)
    blob = plumb(root, "hash-object", "-w", "--stdin", stdin=b"# n\n")
    commit = hostile_commit(root, store, [f"100644 {blob}\tmemory/many/n{i:05d}.md\n"
                                          for i in range(800)])
    fields = []
    real = snapshots.Store.listing

    def listing(self, args, **kw):
        got, whole = real(self, args, **kw)
        fields.append((args[0], len(got), whole))
        return got, whole

    monkeypatch.setattr(snapshots.Store, "listing", listing)
    code, out, err = invoke(["history", str(root)], root)
    assert code == 0 and "Traceback" not in err
    assert f"the tree of snapshot {commit[:10]} holds more than 500 entries" in err
    assert "the chain's log holds more than 500 changed files" in err
    assert "journal-rewrite" in out and JOURNAL in out  # the snapshots before it: judged
    assert ("ls-tree", 500, False) in fields  # git stopped, not read whole
    assert all(n <= 2 * 800 for _, n, _ in fields)
    lines = []
    w = Watcher(root, load_settings(root), out=lines.append)
    w.step()
    code, out, err = invoke(["recover", str(root), "--all", "--dry-run"], root)
    assert code == 0 and "holds more than 500" in err and "would put back 2 lines" in out


def test_a_chain_longer_than_is_read(tmp_path, monkeypatch):
    monkeypatch.setattr(snapshots, "MAX_CHAIN", 2, raising=False)
    root, store = good_chain(tmp_path)
    checkpoint(root, 4)
    store.snapshot()
    checkpoint(root, 5)
    store.snapshot()
    code, out, err = invoke(["history", str(root), "--format", "json"], root)
    assert code == 0
    assert "the chain holds more than 2 snapshots; the older ones are not read" in out
    assert len(store.log()) == 2
    versions = store.versions()
    assert versions.head is None  # read short: never kept as the whole chain
    assert any("more than 2 snapshots" in w for w in store.warnings)


def test_retention_does_not_read_a_commit_object_over_its_bound(tmp_path):
    # a snapshot commit is a few hundred bytes; one of 2 MB (a short subject, a long body)
    # was not made by vaultkit: the retention, which copies each kept commit, stops
    import datetime as dt

    root, store = good_chain(tmp_path)
    tree = plumb(root, "rev-parse", f"{store.head()}^{{tree}}")
    body = b"short subject\n\n" + b"x" * 100 + (b"\n" + b"y" * 99) * 20_000
    commit = plumb(root, "commit-tree", tree, "-p", store.head(), stdin=body)
    plumb(root, "update-ref", store.ref, commit)
    later = dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=45)
    checkpoint(root, 7)
    result, most = peak(lambda: store.snapshot(now=later))
    assert result.pruned == 0 and most < 1_500_000, most
    assert any(commit[:10] in w and "retention is not applied" in w for w in store.warnings)


def test_the_snapshot_command_says_what_it_left_out(tmp_path, monkeypatch):
    monkeypatch.setattr(snapshots, "MAX_TREE_ENTRIES", 500, raising=False)
    root, store = good_chain(tmp_path)
    blob = plumb(root, "hash-object", "-w", "--stdin", stdin=b"# n\n")
    commit = hostile_commit(root, store, [f"100644 {blob}\tmemory/many/n{i:05d}.md\n"
                                          for i in range(800)])
    (root / ".git" / "vaultkit" / (store.ref.rsplit("/", 1)[-1] + ".stat")).unlink()
    code, out, err = invoke(["snapshot", str(root), "--quiet", "--no-prune"], root)
    assert code == 0 and out == ""
    assert f"the tree of snapshot {commit[:10]} holds more than 500 entries" in err
    code, out, err = invoke(["snapshot", str(root), "--report"], root)
    assert code == 0 and "snapshots on" in out
