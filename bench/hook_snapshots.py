#!/usr/bin/env python3
"""The commit hook with snapshots since HEAD: its cost with 0, 10 and 100 of them.

    python bench/hook_snapshots.py                     # 1,000 notes, 5 runs, 0,10,100
    python bench/hook_snapshots.py --size 10000 --runs 5 --snapshots 0,10,100 --out bench/out

On a synthetic vault (bench/synth.py, committed to git) with a snapshot of every file taken
before HEAD (as a watcher or the cron line leaves it), for each N: N entries appended to the
newest journal, a snapshot after each (through the store, as ``vaultkit snapshot`` takes
them), then, per run, one line more appended, the journal staged and
``vaultkit check --hook memory/<journal>`` run from the vault root as pre-commit runs it,
``VAULTKIT_RESIDENT=0`` so that no watcher answers. Each run is the first hook after the N
snapshots: what an earlier hook kept of the chain (the versions files beside the ref) is put
back as it was before them, so each run reads the N snapshots from git, as the commit after
a day of snapshots does. ``git status`` is timed in the same run, before each hook. The
largest N is timed once more with the same entries appended and no snapshot of them: the
same staged change, so the difference between the two rows is what the snapshots cost.

Each is a fresh process (bench/run.py's ``measure``: wall clock, CPU of the process and its
children); median of ``--runs``, after one warm-up. The staged change is the N entries the
snapshots recorded and the one line (none of it committed), so it grows with N too.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import synth  # noqa: E402
from run import measure  # noqa: E402  (the small fork/exec wrapper: wall, CPU, exit code)
from snapshot import ENV, append, build, git  # noqa: E402

print = functools.partial(print, flush=True)  # noqa: A001 (a long run shows its progress)
VAULTKIT = [sys.executable, "-m", "vaultkit"]
REF = "refs/vaultkit/snapshots"
JOURNAL = f"memory/{synth.END_DATE.isoformat()}.md"  # the newest journal, committed


def open_store(root: Path):
    from vaultkit.vault.profile import load_settings
    from vaultkit.vault.snapshots import open_store as opened

    return opened(root, load_settings(root), create=True)


def hook(root: Path) -> dict:
    return measure([*VAULTKIT, "check", "--hook", JOURNAL], root)


def prepare(root: Path) -> tuple[str, Path]:
    """The snapshot of every file before HEAD, a warm cache, and one hook run (the last
    commit's) that kept what it read of the chain; returns the snapshot and a copy of
    the store's files as they are then."""
    import datetime as dt

    head_time = int(git(root, "log", "-1", "--format=%ct").stdout)
    before = dt.datetime.fromtimestamp(head_time - 60, dt.timezone.utc)
    base = open_store(root).snapshot(now=before, prune=False).commit
    for argv in (["check", "."], ["check", "--hook", JOURNAL]):
        r = measure([*VAULTKIT, *argv], root)
        if r["rc"] not in (0, 1):
            raise SystemExit(f"bench: vaultkit {' '.join(argv)} failed: {r['stderr'][-300:]}")
    state = root.parent / f"{root.name}.store"
    shutil.rmtree(state, ignore_errors=True)
    shutil.copytree(root / ".git" / "vaultkit", state)
    return base, state


def put_back(root: Path, state: Path, base: str) -> None:
    """The journal as HEAD has it, the chain back to the one snapshot before HEAD."""
    git(root, "reset", "-q", "--hard")
    git(root, "update-ref", REF, base)
    shutil.rmtree(root / ".git" / "vaultkit", ignore_errors=True)
    shutil.copytree(state, root / ".git" / "vaultkit")


def bench_n(root: Path, n: int, runs: int, state: Path, base: str,
            snapshots: bool = True) -> dict:
    """The hook after ``n`` entries appended since HEAD, a snapshot after each (with
    ``snapshots`` false: the same entries, no snapshot of them: the same change alone)."""
    put_back(root, state, base)
    journal = root / JOURNAL
    store = open_store(root)
    for k in range(n):
        append(journal, k)
        if snapshots and store.snapshot(prune=False).commit is None:
            raise SystemExit(f"bench: snapshot {k + 1} recorded nothing")
    chain = git(root, "rev-list", "--count", f"{base}..{REF}").stdout.strip()
    if int(chain) != (n if snapshots else 0):
        raise SystemExit(f"bench: {chain} snapshots since HEAD, not {n}")
    grown = journal.read_bytes()
    versions = {p.name: p.read_bytes() for p in state.glob("*.versions")}
    status, hooks = [], []
    for i in range(runs + 1):  # (the first is a warm-up)
        journal.write_bytes(grown + f"- Line {i} of the benchmark, staged.\n".encode())
        git(root, "add", "--", JOURNAL)
        for name, data in versions.items():  # what the last commit's hook kept
            (root / ".git" / "vaultkit" / name).write_bytes(data)
        s = measure(["git", "status"], root)
        h = hook(root)
        if h["rc"] not in (0, 1) or "VK601" in h["stdout"] or "VK602" in h["stdout"]:
            # a loss reported where none is: a false alarm the commit would be refused for
            raise SystemExit(f"bench: the hook with {n} snapshots since HEAD said (exit "
                             f"{h['rc']}): {(h['stdout'] + h['stderr'])[-600:]}")
        if i:
            status.append(s)
            hooks.append(h)

    def med(rows, key):
        return statistics.median(r[key] for r in rows)
    return {"entries": n, "snapshots": n if snapshots else 0, "runs": runs,
            "git_status": {"wall": med(status, "wall"), "cpu": med(status, "cpu")},
            "hook": {"wall": med(hooks, "wall"), "cpu": med(hooks, "cpu"),
                     "walls": [round(h["wall"], 4) for h in hooks]}}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=int, default=1000)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--snapshots", default="0,10,100",
                   help="the numbers of snapshots since HEAD, comma-separated")
    p.add_argument("--out", type=Path, default=HERE / "out")
    p.add_argument("--json", type=Path, help="also write the figures here")
    args = p.parse_args(argv)
    try:
        counts = [int(x) for x in args.snapshots.split(",")]
    except ValueError:
        p.error(f"--snapshots: not a list of numbers: {args.snapshots!r}")
    if any(c < 0 for c in counts) or args.runs < 1 or args.size < 10:
        p.error("--snapshots must be >= 0, --runs >= 1 and --size >= 10")
    os.environ["VAULTKIT_RESIDENT"] = "0"  # the measured processes: no watcher answers
    os.environ.update({k: v for k, v in ENV.items() if k.startswith("GIT_")})
    args.out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    root = build(args.out, args.size, "hook-snapshots-vault")
    base, state = prepare(root)
    print(f"vault: {args.size:,} notes in {root}, journal {JOURNAL} "
          f"(ready in {time.perf_counter() - t0:.0f} s)")
    rows = []
    try:
        for n in counts:
            rows.append(bench_n(root, n, args.runs, state, base))
        if max(counts) > 0:  # the largest change again, without its snapshots
            rows.append(bench_n(root, max(counts), args.runs, state, base, snapshots=False))
    finally:
        put_back(root, state, base)
        git(root, "update-ref", "-d", REF)  # the vault left as committed, no store, no cache
        shutil.rmtree(root / ".git" / "vaultkit", ignore_errors=True)
        shutil.rmtree(root / ".vaultkit", ignore_errors=True)
        shutil.rmtree(state, ignore_errors=True)
    first = rows[0]["hook"]
    print(f"{'entries / snapshots':>20} {'git status':>18} {'hook':>18} {'hook / git status':>18}"
          f" {'hook / first row':>17}")
    print(f"{'':>20} {'wall':>8} {'cpu':>9} {'wall':>8} {'cpu':>9} {'wall':>8} {'cpu':>9}"
          f" {'wall':>8} {'cpu':>8}")
    for r in rows:
        s, h = r["git_status"], r["hook"]
        label = f"{r['entries']} / {r['snapshots']}"
        print(f"{label:>20} {s['wall']:8.3f} {s['cpu']:9.3f} {h['wall']:8.3f} {h['cpu']:9.3f}"
              f" {h['wall'] / s['wall']:7.1f}x "
              f"{h['cpu'] / max(s['cpu'], 1e-3):8.1f}x {h['wall'] / first['wall']:7.2f}x "
              f"{h['cpu'] / max(first['cpu'], 1e-3):7.2f}x")
    print(f"median of {args.runs} runs each (one warm-up); load average "
          f"{os.getloadavg()[0]:.1f}, {time.perf_counter() - t0:.0f} s in all")
    if args.json:
        args.json.write_text(json.dumps({"size": args.size, "journal": JOURNAL, "rows": rows},
                                        indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
