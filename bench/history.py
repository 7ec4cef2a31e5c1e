#!/usr/bin/env python3
"""``vaultkit history`` on a generated repository of thousands of commits, beside a bare
``git log``.

    python bench/history.py                        # 5,000 commits over 20,000 notes, 5 runs
    python bench/history.py --commits 5000 --notes 20000 --runs 5 --out bench/out/history

The repository is written once with ``git fast-import`` (deterministic; reused while its
parameters are unchanged) under ``--out``. Its first commit holds ``--notes`` notes (a
third knowledge notes, a third structured notes, a third old journals) plus the bootstrap
set; then every commit, two hours apart, does what an agent's day does: it appends to the
day's journal (a new one every 12 commits), and some commits also edit MEMORY.md (1 in 10),
edit a knowledge note (1 in 5), move an old journal into the archive (1 in 25) or rename a
note (1 in 50). Losses are sown on purpose: a journal rewritten (1 in 400), MEMORY.md
cut to a third (1 in 900), a structured note deleted (1 in 300), AGENTS.md over the truncation
limit for a while (twice; trimmed back by deleting the lines, so a mass deletion
each time).

Timed, each in a fresh process, ``--runs`` times (median and best wall clock, and the
median CPU time, which other work on the machine disturbs less):

- ``git log --oneline`` (the bare walk over every commit),
- ``git log --raw -M --numstat`` over the vault (what ``history`` asks git for),
- ``vaultkit history --format json`` (the whole command: the log, the blob reads, the
  analysis, the output),
- ``vaultkit audit`` with only the history check (its 30-day window).

It also counts the git processes one ``history`` run starts (in-process, by wrapping
``subprocess.run``) and prints the number of loss events found.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
START = dt.datetime(2025, 1, 6, 8, 0, tzinfo=dt.timezone.utc)


def _data(text: str) -> bytes:
    raw = text.encode("utf-8")
    return b"data %d\n" % len(raw) + raw + b"\n"


def generate(out: Path, commits: int, notes: int) -> Path:
    """Write the repository with fast-import; returns its path."""
    stamp = out / "params.json"
    params = {"commits": commits, "notes": notes, "version": 3}
    if stamp.exists() and json.loads(stamp.read_text()) == params:
        return out / "repo"
    shutil.rmtree(out, ignore_errors=True)
    repo = out / "repo"
    repo.mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    (repo / ".obsidian").mkdir()
    stream = bytearray()
    files: dict[str, str] = {}
    third = notes // 3
    memory_lines = [f"- Durable fact {i}: service {i} deploys on Tuesdays" for i in range(60)]
    files["MEMORY.md"] = "# MEMORY\n\n## approved_durable_entries\n" + "\n".join(
        memory_lines) + "\n"
    agents = "# AGENTS\n\n## Memory protocol\n- Run memory_search before acting.\n"
    files["AGENTS.md"] = agents
    files["SOUL.md"] = "# SOUL\n\nCalm, precise, kind.\n"
    files["USER.md"] = "# USER\n\nAda, engineer.\n"
    for i in range(third):
        files[f"memory/semantic/topic-{i:05d}.md"] = (
            f"# Topic {i}\n\n- Fact about topic {i}\n- See [[topic-{(i + 1) % third:05d}]]\n")
        files[f"memory/decisions/decision-{i:05d}.md"] = (
            f"---\ndate: 2024-12-01\ntype: decision\nstatus: active\ntags: [d]\n---\n"
            f"# Decision {i}\n\n## Context\nWhy {i}.\n\n## Decision\nDo {i}.\n")
        day = (START.date() - dt.timedelta(days=i + 1)).isoformat()
        files[f"memory/{day}.md"] = (f"# {day}\n\n### 09:00 — Work\n- Did {i}\n- Because\n"
                                     "- Next\n")
    old_journals = sorted(p for p in files if p.startswith("memory/20"))
    mark = 0

    def commit(when: dt.datetime, message: str, changes: list[tuple[str, str | None]],
               renames: list[tuple[str, str]] = (), author: str = "Agent") -> None:
        nonlocal mark
        mark += 1
        seconds = int(when.timestamp())
        email = f"{author.lower()}@example.com"
        stream.extend(b"commit refs/heads/main\nmark :%d\n" % mark)
        stream.extend(f"author {author} <{email}> {seconds} +0000\n".encode())
        stream.extend(f"committer {author} <{email}> {seconds} +0000\n".encode())
        stream.extend(_data(message))
        if mark > 1:
            stream.extend(b"from :%d\n" % (mark - 1))
        for old, new in renames:
            stream.extend(f'R "{old}" "{new}"\n'.encode())
        for path, text in changes:
            if text is None:
                stream.extend(f'D "{path}"\n'.encode())
            else:
                stream.extend(f'M 100644 inline "{path}"\n'.encode() + _data(text))

    commit(START, "backup: first", list(files.items()))
    journal = ""
    today = ""
    next_old = 0
    decisions = sorted(p for p in files if "/decisions/" in p)
    for n in range(1, commits):
        when = START + dt.timedelta(hours=2 * n)
        changes: list[tuple[str, str | None]] = []
        renames: list[tuple[str, str]] = []
        author, message = "Agent", f"backup: {when:%Y-%m-%d %H:%M}"
        day = when.date().isoformat()
        if day != today:
            today, journal = day, f"# {day}\n"
        journal += f"\n### {when:%H:%M} — Step {n}\n- Did step {n}\n- Because of {n}\n- Next\n"
        path = f"memory/{today}.md"
        if n % 400 == 0:  # a cron run rewrites the day's journal
            journal = f"# {day}\n\n### 03:00 — Summary\n- Summary of the day\n- More\n- End\n"
            author, message = "cron", "cron: nightly summary"
        changes.append((path, journal))
        if n % 10 == 0:
            memory_lines.append(f"- Durable fact {len(memory_lines)}: learned at step {n}")
            if n % 900 == 0:
                memory_lines = memory_lines[:len(memory_lines) // 3]
            changes.append(("MEMORY.md", "# MEMORY\n\n## approved_durable_entries\n"
                            + "\n".join(memory_lines) + "\n"))
        if n % 5 == 0:
            i = (n * 7) % third
            changes.append((f"memory/semantic/topic-{i:05d}.md",
                            f"# Topic {i}\n\n- Fact about topic {i}\n- Updated at step {n}\n"))
        if n % 25 == 0 and next_old < len(old_journals):
            old = old_journals[next_old]
            next_old += 1
            renames.append((old, old.replace("memory/", "memory/archive/")))
        if n % 50 == 0:
            i = (n * 13) % third
            renames.append((f"memory/semantic/topic-{i:05d}.md",
                            f"memory/semantic/renamed-{n}-{i:05d}.md"))
        if n % 300 == 0 and decisions:
            changes.append((decisions.pop(), None))
        if n in (commits // 3, 2 * commits // 3):
            changes.append(("AGENTS.md", agents + "".join(
                f"- Rule {i:04d}: keep the runbook for service {i} beside its notes\n"
                for i in range(320))))
        if n in (commits // 3 + 30, 2 * commits // 3 + 30):
            changes.append(("AGENTS.md", agents))
        commit(when, message, changes, renames, author)
    subprocess.run(["git", "fast-import", "--quiet"], cwd=repo, input=bytes(stream), check=True)
    subprocess.run(["git", "checkout", "-q", "-f", "main"], cwd=repo, check=True)
    stamp.write_text(json.dumps(params))
    return repo


def timed(cmd: list[str], cwd: Path, runs: int) -> tuple[float, float, float]:
    """Median and best wall time, and median CPU time (user + system, the process and
    its children: git's share included), over ``runs`` runs."""
    import resource

    times, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        times.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        if proc.returncode not in (0, 1):
            raise SystemExit(f"{cmd} failed: {proc.stderr.decode()[-500:]}")
    return statistics.median(times), min(times), statistics.median(cpus)


def count_git_processes(repo: Path) -> tuple[int, dict]:
    """(git processes, events by kind) of one in-process history scan."""
    from vaultkit.memory.history import scan_history
    from vaultkit.vault.profile import load_settings

    calls = []
    real = subprocess.Popen

    class Counting(real):  # subprocess.run starts its process through Popen too
        def __init__(self, args, *rest, **kwargs):
            if args and Path(str(args[0])).name == "git":
                calls.append(args)
            super().__init__(args, *rest, **kwargs)

    subprocess.Popen = Counting
    try:
        history = scan_history(repo, load_settings(repo))
    finally:
        subprocess.Popen = real
    from collections import Counter

    return len(calls), dict(Counter(e.kind for e in history.events))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commits", type=int, default=5000)
    parser.add_argument("--notes", type=int, default=20000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", type=Path, default=HERE / "out" / "history")
    args = parser.parse_args()
    if args.commits < 2 or args.notes < 3 or args.runs < 1:
        parser.error("--commits 2+, --notes 3+, --runs 1+")
    start = time.perf_counter()
    repo = generate(args.out, args.commits, args.notes)
    made = time.perf_counter() - start
    count = subprocess.run(["git", "rev-list", "--count", "HEAD"], cwd=repo, capture_output=True,
                           text=True).stdout.strip()
    tracked = subprocess.run(["git", "ls-files"], cwd=repo, capture_output=True,
                             text=True).stdout.count("\n")
    print(f"repository: {repo} ({count} commits, {tracked:,} files; ready in {made:.1f} s)")
    vaultkit = [sys.executable, "-m", "vaultkit"]
    rows = [
        ("git log --oneline", ["git", "log", "--oneline"]),
        ("git log --raw -M --numstat", ["git", "log", "--no-merges", "-z", "--raw", "--numstat",
                                        "-M", "--no-abbrev", "--format=%H %at %an %s"]),
        ("vaultkit history --format json", vaultkit + ["history", "--format", "json"]),
        ("vaultkit audit (history check only)", vaultkit + [
            "audit", "--format", "json", "--skip", ",".join(_other_checks())]),
    ]
    print(f"{'command':40} {'median':>8} {'best':>8} {'CPU':>8}   ({args.runs} runs; CPU: "
          "user + system, median)")
    for label, cmd in rows:
        median, best, cpu = timed(cmd, repo, args.runs)
        print(f"{label:40} {median:7.2f}s {best:7.2f}s {cpu:7.2f}s")
    processes, events = count_git_processes(repo)
    print(f"git processes per history run: {processes}; loss events found: "
          f"{sum(events.values())} {events}")
    return 0


def _other_checks() -> list[str]:
    from vaultkit.audit import CHECK_IDS

    return [c for c in CHECK_IDS if c != "history"]


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parent))
    os.environ.setdefault("NO_COLOR", "1")
    sys.exit(main())
