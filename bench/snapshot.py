#!/usr/bin/env python3
"""Snapshots between commits: ``vaultkit snapshot`` and ``vaultkit watch`` on a synthetic vault.

    python bench/snapshot.py                      # 10,000 notes, 5 runs, 60 s idle, 30 days
    python bench/snapshot.py --size 10000 --runs 5 --idle 60 --days 30 --out bench/out

Measured side by side in one run on the same vault (bench/synth.py, committed to git):

- ``git status --porcelain`` (the yardstick; the target is a snapshot with nothing changed
  at most 2x this, or at most 0.25 s),
- ``vaultkit snapshot --quiet`` with nothing changed, with one journal appended to, and with
  every memory note changed (each a fresh process, median of ``--runs``; wall clock and CPU),
- ``vaultkit watch``: its CPU time over ``--idle`` seconds of a vault nobody writes to
  (target: near zero), and the delay from a journal overwritten (once the watcher's newest
  snapshot holds the three entries appended before) to every entry being back whole, as
  watch restores lines where they stood (target: at most 2 s; the median and the worst of
  ``--runs``),
- the store's size after ``--days`` days of hourly appends to a 1,000-note vault (a
  journal a day, MEMORY.md edited once a day), beside the vault's own Markdown, before and
  after git packs it.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import statistics
import subprocess
import sys
import functools
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import synth  # noqa: E402

ENV = dict(os.environ, GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@example.com",
           GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@example.com",
           GIT_CONFIG_NOSYSTEM="1")
VAULTKIT = [sys.executable, "-m", "vaultkit"]
print = functools.partial(print, flush=True)  # noqa: A001 (a long run shows its progress)


def git(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=root, env=ENV, capture_output=True, text=True,
                          check=True)


def build(out: Path, size: int, name: str = "snapshot-vault") -> Path:
    """A synthetic vault of ``size`` notes at ``out/<name>-<size>``, committed to git."""
    root = out / f"{name}-{size}"
    shutil.rmtree(root, ignore_errors=True)
    synth.build(root, size, 1)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "synthetic vault")
    return root


def timed(cmd, cwd: Path) -> tuple[float, float]:
    """Wall clock and CPU (user + system, children included) of one process."""
    before = os.times()
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=ENV, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = os.times()
    cpu = (after.children_user - before.children_user) + \
        (after.children_system - before.children_system)
    return wall, cpu


def median(runs, setup, cmd, cwd) -> tuple[float, float]:
    walls, cpus = [], []
    for _ in range(runs):
        setup()
        wall, cpu = timed(cmd, cwd)
        walls.append(wall)
        cpus.append(cpu)
    return statistics.median(walls), statistics.median(cpus)


def journal_of(root: Path) -> Path:
    return root / "memory" / f"{dt.date.today().isoformat()}.md"


def append(path: Path, n: int) -> str:
    text = (f"\n### {n % 24:02d}:00 — Checkpoint {n}\n- Reviewed item {n} and closed it\n"
            f"- Wrote the follow-up for item {n}\n- Next: item {n + 1}\n")
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(text)
    return text


def proc_cpu(pid: int) -> float:
    """CPU seconds of a process (Linux /proc), user + system."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def recorded(root: Path, rel: str) -> str:
    """The journal as the newest snapshot holds it ("" when none does yet)."""
    res = subprocess.run(["git", "show", f"refs/vaultkit/snapshots:{rel}"], cwd=root, env=ENV,
                         capture_output=True)
    return res.stdout.decode("utf-8", "replace") if res.returncode == 0 else ""


def bench_watch(root: Path, idle: float, runs: int) -> tuple[float, list[float]]:
    journal = journal_of(root)
    subprocess.run([*VAULTKIT, "snapshot", "--quiet", str(root)], env=ENV, check=True)
    checked = root / ".git" / "vaultkit" / "snapshots.checked"
    begun = time.time()
    watch = subprocess.Popen([*VAULTKIT, "watch", str(root)], cwd=root, env=ENV,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while checked.stat().st_mtime < begun:  # its first round over the vault
            time.sleep(0.1)
        time.sleep(3)  # and the file events set up
        start = proc_cpu(watch.pid)
        time.sleep(idle)
        idle_cpu = proc_cpu(watch.pid) - start
        delays = []
        rel = journal.relative_to(root).as_posix()
        for n in range(runs):
            # (numbers no earlier step appended: each entry is in the journal once)
            texts = [append(journal, 10 ** 5 + 100 * n + k) for k in range(3)]
            waited = time.perf_counter()
            # a line no snapshot holds yet cannot come back: the overwrite waits for the
            # watcher's snapshot of the entries (a fixed wait is too short under load)
            while True:
                held = recorded(root, rel)
                if all(t.strip() in held for t in texts):
                    break
                if time.perf_counter() - waited > 30:
                    raise SystemExit("bench: watch did not snapshot the entries in 30 s")
                time.sleep(0.05)
            journal.write_text("# Summary\n- a quiet day\n", encoding="utf-8")
            t0 = time.perf_counter()
            # watch puts the lost lines back where they stood, each run of them whole:
            # every entry is in the journal again as it was appended
            while not all(t.strip() in journal.read_text(encoding="utf-8") for t in texts):
                if time.perf_counter() - t0 > 30:
                    raise SystemExit("bench: watch did not restore the journal in 30 s")
                time.sleep(0.01)
            delays.append(time.perf_counter() - t0)
            time.sleep(2)
        return idle_cpu, delays
    finally:  # (only the process this benchmark started)
        watch.terminate()
        watch.wait(30)


def bench_store(out: Path, days: int) -> dict:
    """Hourly appends for ``days`` days to a 1,000-note vault, a snapshot after each."""
    from vaultkit.vault.profile import load_settings
    from vaultkit.vault.snapshots import open_store

    root = build(out, 1000)
    (root / "vaultkit.toml").write_text(f"[snapshots]\nkeep-days = {days + 1}\n")
    store = open_store(root, load_settings(root), create=True)
    start = dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=days)
    store.snapshot(now=start)
    count = 0
    for day in range(days):
        when = start + dt.timedelta(days=day)
        journal = root / "memory" / f"{when.date().isoformat()}.md"
        for hour in range(24):
            append(journal, day * 24 + hour)
            if hour == 23:
                with open(root / "MEMORY.md", "a", encoding="utf-8") as fh:
                    fh.write(f"- Lesson of day {day}: keep the checkpoint job appending\n")
            store.snapshot(now=when + dt.timedelta(hours=hour), prune=False)
            count += 1
    report = store.size_report()
    markdown = sum(p.stat().st_size for p in root.rglob("*.md") if ".git" not in p.parts)
    git(root, "gc", "-q", "--prune=now")
    packed = store.size_report()["bytes"]
    return {"snapshots": report["snapshots"], "loose": report["bytes"], "packed": packed,
            "markdown": markdown, "appends": count}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=int, default=10000)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--idle", type=float, default=60.0, help="seconds of idle watch to measure")
    p.add_argument("--days", type=int, default=30)
    p.add_argument("--out", type=Path, default=HERE / "out")
    p.add_argument("--skip-watch", action="store_true")
    p.add_argument("--skip-store", action="store_true")
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    root = build(args.out, args.size)
    print(f"vault: {args.size:,} notes in {root}")
    subprocess.run([*VAULTKIT, "snapshot", "--quiet", str(root)], env=ENV, check=True)
    status = median(args.runs, lambda: None, ["git", "status", "--porcelain"], root)
    same = median(args.runs, lambda: None, [*VAULTKIT, "snapshot", "--quiet", str(root)], root)
    journal = journal_of(root)
    counter = iter(range(10 ** 6))
    one = median(args.runs, lambda: append(journal, next(counter)),
                 [*VAULTKIT, "snapshot", "--quiet", str(root)], root)
    notes = [p for p in root.rglob("*.md") if ".git" not in p.parts and ".vaultkit" not in p.parts]

    def change_all():
        n = next(counter)
        for note in notes:
            with open(note, "a", encoding="utf-8") as fh:
                fh.write(f"\nchanged {n}\n")

    every = median(max(1, args.runs // 2), change_all,
                   [*VAULTKIT, "snapshot", "--quiet", str(root)], root)
    print(f"{'':36} {'wall':>8} {'cpu':>8}")
    for name, (wall, cpu) in (("git status --porcelain", status),
                              ("snapshot, nothing changed", same),
                              ("snapshot, one journal appended", one),
                              (f"snapshot, all {len(notes):,} notes changed", every)):
        print(f"{name:36} {wall:8.3f} {cpu:8.3f}")
    print(f"nothing changed / git status: {same[0] / status[0]:.2f}x wall "
          f"(target <= 2x, or <= 0.25 s: {same[0]:.3f} s)")
    if not args.skip_watch:
        subprocess.run(["git", "reset", "-q", "--hard"], cwd=root, env=ENV, check=True)
        idle_cpu, delays = bench_watch(root, args.idle, args.runs)
        print(f"watch idle CPU over {args.idle:g} s: {idle_cpu:.2f} s "
              f"({100 * idle_cpu / args.idle:.2f}% of a core)")
        print(f"overwrite to restore: median {statistics.median(delays):.2f} s, worst "
              f"{max(delays):.2f} s over {len(delays)} (target <= 2 s)")
    if not args.skip_store:
        s = bench_store(args.out, args.days)
        print(f"store after {args.days} days of hourly appends ({s['appends']} snapshots, "
              f"{s['snapshots']} kept): {s['loose']:,} bytes loose, {s['packed']:,} bytes "
              f"packed; the vault's Markdown is {s['markdown']:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
