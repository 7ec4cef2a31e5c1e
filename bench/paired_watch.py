#!/usr/bin/env python3
"""Two vaultkit trees answering through ``vaultkit watch``, timed in pairs in one run.

    python bench/paired_watch.py BEFORE AFTER --size 10000 --rounds 10

``BEFORE`` and ``AFTER`` are source trees (a ``git archive`` of each commit, with its
``rules/`` and ``vault-template/``). The bench's vault of ``--size`` notes (bench/run.py
builds it under ``--out``) is copied once per tree; each copy gets a ``vaultkit watch`` of
its tree; then, round after round, alternating which tree goes first: an entry appended to
today's journal and staged, ``vaultkit check --hook`` of it, 2.5 s (past the racy margin,
as a commit a while after the write), and ``vaultkit check .``. The first two rounds are
dropped; the medians (min-max) of the rest are printed, with the load average.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run as bench  # noqa: E402  (bench/run.py: the vaults it builds)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("before", type=Path, help="the source tree timed first in even rounds")
    p.add_argument("after", type=Path, help="the other source tree")
    p.add_argument("--size", type=int, default=10000, help="notes in the vault")
    p.add_argument("--rounds", type=int, default=10, help="timed rounds (two more warm up)")
    p.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "out")
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    vault, _ = bench.prepare_vault(args.out, args.size, 1, log=lambda m: print(m, flush=True))
    trees = {"before": args.before.resolve(), "after": args.after.resolve()}
    copies, procs = {}, {}
    for name in trees:
        copy = args.out / f"{vault.name}-{name}"
        if copy.exists():
            shutil.rmtree(copy)
        shutil.copytree(vault, copy, symlinks=True)
        copies[name] = copy

    def env_of(name):
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPATH"] = str(trees[name])
        env.pop("VAULTKIT_RESIDENT", None)
        return env

    for name, copy in copies.items():
        procs[name] = subprocess.Popen([sys.executable, "-m", "vaultkit", "watch"], cwd=copy,
                                       env=env_of(name), stdin=subprocess.DEVNULL,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for name, copy in copies.items():  # listening, and its first snapshot taken
            while not (copy / ".vaultkit" / "check.sock").exists() or bench.git(
                    copy, "rev-parse", "-q", "--verify", "refs/vaultkit/snapshots",
                    check=False).returncode != 0:
                if procs[name].poll() is not None:
                    print(f"the {name} watcher stopped", file=sys.stderr)
                    return 1
                time.sleep(0.2)
        journal = "memory/" + time.strftime("%Y-%m-%d") + ".md"
        times = {(name, kind): [] for name in copies for kind in ("hook", "check")}
        for i in range(args.rounds + 2):
            for kind in ("hook", "check"):
                for name in (("before", "after") if i % 2 == 0 else ("after", "before")):
                    copy = copies[name]
                    if kind == "hook":
                        with open(copy / journal, "a", encoding="utf-8") as fh:
                            fh.write(f"\n### 23:{i % 60:02d} — Round {i}\n- one\n- two\n- three\n")
                        bench.git(copy, "add", journal)
                    argv = ["check", "--hook", journal] if kind == "hook" else ["check", "."]
                    started = time.perf_counter()
                    subprocess.run([sys.executable, "-m", "vaultkit", *argv], cwd=copy,
                                   env=env_of(name), capture_output=True)
                    times[(name, kind)].append(time.perf_counter() - started)
                if kind == "hook":
                    time.sleep(2.5)
        for kind in ("hook", "check"):
            for name in copies:
                ts = times[(name, kind)][2:]
                print(f"{args.size} notes, {kind:5} {name:6}: median "
                      f"{statistics.median(ts):.3f} s ({min(ts):.3f}-{max(ts):.3f}), n={len(ts)}")
        print("load average", " ".join(f"{x:.2f}" for x in os.getloadavg()))
        return 0
    finally:
        for proc in procs.values():
            proc.send_signal(signal.SIGINT)
        for proc in procs.values():
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


if __name__ == "__main__":
    sys.exit(main())
