"""What `vaultkit context` costs on a large vault, against a warm `vaultkit check`.

`context` loads the vault (from the parse cache a warm check leaves) and simulates what
each runtime loads at session start; the target is that it costs no more than a warm
`check`, which loads the same vault and runs every rule. Runs alternate between the two
commands so that load on a shared machine hits both alike; figures are median CPU seconds
(CPU, not wall: the figure must hold on a busy machine).

Usage: ``python bench/context.py [--size 10000] [--runs 5]``. Standard library only.
Exit 1 when `context` costs more than the warm check.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import run as bench  # noqa: E402


def cpu(vk, args, vault) -> float:
    r = bench.measure([*vk, *args], vault)
    if r["rc"] not in (0, 1):
        raise SystemExit(f"bench: {' '.join(args)} failed: {bench.last_line(r['stderr'])}")
    return r["cpu"]


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
    try:
        bench.clear_cache(vault)
        cpu(vk, ["check"], vault)  # fills the parse cache: both commands run warm
        checks, contexts, shown = [], [], []
        for _ in range(args.runs):
            checks.append(cpu(vk, ["check"], vault))
            contexts.append(cpu(vk, ["context"], vault))
            shown.append(cpu(vk, ["context", "--show", "--format", "json"], vault))
    finally:
        bench.restore_vault(vault)
    check, context, show = (statistics.median(x) for x in (checks, contexts, shown))
    print(f"{args.size:,} notes, median CPU seconds of {args.runs} alternating runs:")
    print(f"  warm check                      {check:7.3f}")
    print(f"  context                         {context:7.3f}  ({context / check:.2f}x the warm check)")
    print(f"  context --show --format json    {show:7.3f}  ({show / check:.2f}x)")
    return 0 if max(context, show) <= check else 1


if __name__ == "__main__":
    sys.exit(main())
