#!/usr/bin/env python3
"""What the credential checks cost: ``secret-in-memory`` in ``check`` and the hook, the
detector's throughput, and the ``secrets`` history scan of ``vaultkit audit``.

    python bench/secret_scan.py                          # 10,000 notes, 3,000 commits, 3 runs
    python bench/secret_scan.py --size 1000 --commits 500 --runs 5
    python bench/secret_scan.py --markdownlint PATH      # add the peer's time (0.25x target)

For the synthetic vault of ``bench/run.py`` (built once under ``bench/out/``):

- ``check`` cold (``.vaultkit/`` deleted before each run) with every rule, and with
  ``--ignore secret-in-memory``: the difference is what the rule costs;
- the hook (one entry appended to today's journal and staged, then
  ``check --hook memory/<today>.md``, cache warm), with and without the rule;
- the detector in this process over every note (MB/s), over the notes that hold a
  candidate (a keyword or format prefix), and over lines that all hold a credential;
- detect-secrets' default plugins line by line over part of the vault, when it is installed
  (the library first tried for this; the figure says why it is not used at run time);
- ``vaultkit audit`` with only the ``secrets`` check on a repository of ``--commits``
  commits (built with ``git fast-import``: one journal entry per commit, a key in one early
  commit), which the check must name.

Wall time per process, median and min–max over ``--runs``, CPU time beside it (see
``bench/run.py`` for how processes are measured).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import run  # noqa: E402
import synth  # noqa: E402

KEY_LINE = "- alerts bot token 5145683452:AAbeuEchsVEoR7TJYHSDATOCN1D61_k7U4O"


def timed(vk, argv, cwd, runs, before=None, ok=(0, 1)):
    walls, cpus = [], []
    for _ in range(runs):
        if before:
            before()
        r = run.measure([*vk, *argv], cwd)
        if r["rc"] not in ok:
            raise SystemExit(f"bench: {' '.join(argv)} exited {r['rc']}: "
                             f"{run.last_line(r['stderr'])}")
        walls.append(r["wall"])
        cpus.append(r["cpu"])
    return {"median": statistics.median(walls), "min": min(walls), "max": max(walls),
            "cpu": statistics.median(cpus), "last": r}


def fmt(t):
    return f"{t['median']:.3f} s ({t['min']:.2f}–{t['max']:.2f}), CPU {t['cpu']:.2f} s"


def detector_figures(vault: Path) -> list[str]:
    from vaultkit.vault.parse import parse_note
    from vaultkit.vault.secretscan import has_candidates, scan_text

    notes = [parse_note(p.name, p.read_bytes()) for p in sorted(vault.rglob("*.md"))
             if ".vaultkit" not in p.parts]
    size = sum(len(n.text.encode()) for n in notes)
    t0 = time.perf_counter()
    found = sum(len(scan_text(n.text, n.code_ranges)) for n in notes)
    whole = time.perf_counter() - t0
    candidates = [n for n in notes if has_candidates(n.text)]
    csize = sum(len(n.text.encode()) for n in candidates)
    t0 = time.perf_counter()
    for n in candidates:
        scan_text(n.text, n.code_ranges)
    cand = time.perf_counter() - t0
    fixtures = HERE.parent / "tests" / "fixtures" / "secrets" / "leaks"
    dense = "\n".join(p.read_text(encoding="utf-8") for p in sorted(fixtures.glob("*.md")))
    dense = "\n".join([dense] * max(1, 2_000_000 // max(1, len(dense))))
    t0 = time.perf_counter()
    dense_found = len(scan_text(dense))
    dense_t = time.perf_counter() - t0
    lines = [
        f"detector, every note: {len(notes):,} notes, {size / 1e6:.1f} MB in {whole:.3f} s = "
        f"{size / 1e6 / whole:.0f} MB/s ({found} findings)",
        f"detector, notes with a candidate: {len(candidates):,} notes, {csize / 1e6:.1f} MB in "
        f"{cand:.3f} s = {csize / 1e6 / max(cand, 1e-9):.0f} MB/s",
        f"detector, leak-dense text (the fixtures repeated): {len(dense.encode()) / 1e6:.1f} MB "
        f"in {dense_t:.3f} s = {len(dense.encode()) / 1e6 / dense_t:.1f} MB/s "
        f"({dense_found} findings)",
    ]
    try:
        from detect_secrets.core.scan import scan_line
        from detect_secrets.settings import default_settings
    except ImportError:
        lines.append("detect-secrets: not installed (pip install detect-secrets to compare)")
        return lines
    sample, used = [], 0
    for n in notes:
        sample.extend(n.lines)
        used += len(n.text.encode())
        if used > 1_000_000:
            break
    with default_settings():
        t0 = time.perf_counter()
        hits = sum(1 for line in sample for _ in scan_line(line))
        ds = time.perf_counter() - t0
    lines.append(f"detect-secrets 1.x default plugins, line by line: {used / 1e6:.1f} MB in "
                 f"{ds:.2f} s = {used / 1e6 / ds:.2f} MB/s ({hits} findings; the vault holds "
                 "no credential)")
    return lines


def history_repo(out: Path, commits: int) -> tuple[Path, str]:
    """A repository of ``commits`` commits, each adding a journal entry; commit 10 adds a key
    that commit 11 removes. Returns (path, sha of the commit that added the key)."""
    repo = out / f"history-{commits}"
    if repo.exists():
        shutil.rmtree(repo)
    repo.mkdir(parents=True)
    run.git(repo, "init", "-q", "-b", "main")
    stream = []
    journal: dict[str, str] = {}
    for i in range(1, commits + 1):
        day = synth.END_DATE.toordinal() - commits // 3 + i // 3
        name = f"memory/{dt.date.fromordinal(day).isoformat()}.md"
        text = journal.get(name, f"# {name[7:17]}\n")
        text += (f"\n### {8 + i % 12:02d}:{i % 60:02d} — Entry {i}\n- did thing {i}\n"
                 f"- checked result {i * 7 % 101}\n- next: follow-up {i + 1}\n")
        if i == 10:
            text += KEY_LINE + "\n"
        if i == 11:
            text = text.replace(KEY_LINE + "\n", "")
        journal[name] = text
        data = text.encode()
        stamp = 1_764_547_200 + i * 600
        stream.append(f"commit refs/heads/main\nmark :{i}\n"
                      f"committer bench <bench@example.invalid> {stamp} +0000\n"
                      f"data {len(f'backup {i}')}\nbackup {i}\n")
        if i > 1:
            stream.append(f"from :{i - 1}\n")
        stream.append(f"M 100644 inline {name}\ndata {len(data)}\n")
        stream.append(text)
        stream.append("\n")
    payload = "".join(stream).encode()
    proc = subprocess.run(["git", "-C", str(repo), "fast-import", "--quiet"], input=payload,
                          capture_output=True)
    if proc.returncode != 0:
        raise SystemExit(f"bench: git fast-import failed: {proc.stderr.decode()[-300:]}")
    run.git(repo, "checkout", "-q", "-f", "main")
    rev = run.git(repo, "rev-list", "--reverse", "main").stdout.split()
    return repo, rev[9]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", type=int, default=10000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--commits", type=int, default=3000)
    p.add_argument("--out", type=Path, default=HERE / "out")
    p.add_argument("--vaultkit", help="command to run vaultkit (default: beside this python)")
    p.add_argument("--markdownlint", help="markdownlint-cli2 to time on the same vault")
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    vk = run.find_vaultkit(args.vaultkit)
    vault, info = run.prepare_vault(args.out, args.size, args.seed, log=print)
    print(f"vault: {args.size:,} notes, {info['markdown_bytes'] / 1e6:.1f} MB of Markdown; "
          f"{os.cpu_count()} CPUs; load {os.getloadavg()[0]:.1f}")

    clear = (lambda: run.clear_cache(vault))
    on = timed(vk, ["check", "."], vault, args.runs, before=clear)
    off = timed(vk, ["check", ".", "--ignore", "secret-in-memory"], vault, args.runs,
                before=clear)
    print(f"check cold, every rule:                {fmt(on)}")
    print(f"check cold, without secret-in-memory:  {fmt(off)}")
    print(f"  the rule's share: {on['median'] - off['median']:+.3f} s")

    today = f"memory/{synth.END_DATE.isoformat()}.md"
    journal = vault / today
    original = journal.read_bytes()

    def change_one():
        journal.write_bytes(original + run.HOOK_ENTRY.encode())
        run.git(vault, "add", "--", today)

    run.measure([*vk, "check", "."], vault)  # warm
    hook_on = timed(vk, ["check", "--hook", today], vault, args.runs, before=change_one)
    hook_off = timed(vk, ["check", "--hook", today, "--ignore", "secret-in-memory"], vault,
                     args.runs, before=change_one)
    journal.write_bytes(original)
    os.utime(journal, (synth.MTIME, synth.MTIME))
    run.git(vault, "add", "--", today)
    print(f"hook, one changed file, every rule:    {fmt(hook_on)}")
    print(f"hook, without secret-in-memory:        {fmt(hook_off)}")

    mdl = run.find_markdownlint(args.markdownlint)
    if mdl:
        peer = timed([mdl], ["**/*.md", "#node_modules", "#.vaultkit"], vault, 1)
        print(f"markdownlint-cli2:                     {fmt(peer)}")
        print(f"  check cold / markdownlint-cli2 = {on['median'] / peer['median']:.3f}x "
              "(target <= 0.25x)")
    else:
        print("markdownlint-cli2: not found (--markdownlint PATH, or npm install --prefix bench "
              "markdownlint-cli2)")

    for line in detector_figures(vault):
        print(line)

    t0 = time.perf_counter()
    repo, leaked = history_repo(args.out, args.commits)
    print(f"history repository: {args.commits:,} commits built in "
          f"{time.perf_counter() - t0:.1f} s")
    from vaultkit.audit import CHECK_IDS

    skip = ",".join(c for c in CHECK_IDS if c != "secrets")
    audit = timed(vk, ["audit", ".", "--skip", skip, "--symbols", "never"], repo, args.runs)
    named = f"commit {leaked[:7]}" in audit["last"]["stdout"]
    print(f"audit secrets over {args.commits:,} commits: {fmt(audit)}; names the commit that "
          f"added the key: {'yes' if named else 'NO'}")
    return 0 if named else 1


if __name__ == "__main__":
    sys.exit(main())
