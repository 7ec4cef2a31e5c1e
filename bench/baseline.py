"""What a baseline costs: `vaultkit check` on the synthetic vault with and without one.

The baseline is written from the vault's own findings (every one accepted), so the run
with it hashes and matches every finding; the figures say what adopting vaultkit on a
large legacy workspace adds to a cold check, a warm (cached) check and the commit hook.

Usage: ``python bench/baseline.py [--size 10000] [--runs 5]``. Standard library only.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import run as bench  # noqa: E402


def timed(vk, args, vault, runs, *, cold):
    """Median CPU seconds of ``runs`` runs (CPU, not wall: the figure must hold on a busy
    machine), and the last run's result."""
    cpus = []
    for _ in range(runs):
        if cold:
            bench.clear_cache(vault)
        r = bench.measure([*vk, *args], vault)
        if r["rc"] not in (0, 1):
            raise SystemExit(f"bench: {' '.join(args)} failed: {bench.last_line(r['stderr'])}")
        cpus.append(r["cpu"])
    return statistics.median(cpus), r


def paired(vk, without, with_, vault, runs, *, cold):
    """Alternate the two commands run by run, so load changes hit both alike."""
    a, b = [], []
    for _ in range(runs):
        a.append(timed(vk, without, vault, 1, cold=cold)[0])
        b.append(timed(vk, with_, vault, 1, cold=cold)[0])
    return statistics.median(a), statistics.median(b)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=int, default=10000)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", type=Path, default=HERE / "out")
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    vault, _ = bench.prepare_vault(args.out, args.size, args.seed)
    vk = bench.find_vaultkit(None)
    baseline = vault / "vaultkit-baseline.json"
    baseline.unlink(missing_ok=True)
    staged = "memory/semantic"  # what the hook sees: one folder of staged notes
    rows = []
    try:
        r = bench.measure([*vk, "check", "--no-baseline"], vault)
        findings = next((ln for ln in r["stdout"].splitlines() if ln.startswith("Found ")),
                        "no findings")
        wrote, _ = timed(vk, ["check", "--write-baseline"], vault, 1, cold=True)
        entries = sum(f["count"] for f in json.loads(baseline.read_text())["findings"])
        r = bench.measure([*vk, "check"], vault)
        assert "more in the baseline" in r["stdout"], r["stdout"]
        plain_cold, base_cold = paired(vk, ["check", "--no-baseline"], ["check"], vault,
                                       args.runs, cold=True)
        plain_warm, base_warm = paired(vk, ["check", "--no-baseline"], ["check"], vault,
                                       args.runs, cold=False)
        plain_hook, base_hook = paired(vk, ["check", "--hook", "--no-baseline", staged],
                                       ["check", "--hook", staged], vault, args.runs, cold=False)
    finally:
        baseline.unlink(missing_ok=True)
        bench.restore_vault(vault)
    rows = [("cold check", plain_cold, base_cold), ("warm check", plain_warm, base_warm),
            (f"hook ({staged})", plain_hook, base_hook)]
    print(f"{args.size:,} notes; without a baseline: {findings}; baseline of {entries:,} "
          f"findings written in {wrote:.2f} s CPU; median CPU seconds of {args.runs} paired runs")
    print(f"{'run':<28}{'no baseline':>12}{'baseline':>12}{'cost':>10}")
    for name, without, with_ in rows:
        print(f"{name:<28}{without:>11.3f}s{with_:>11.3f}s{with_ - without:>+9.3f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
