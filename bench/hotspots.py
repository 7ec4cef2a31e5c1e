#!/usr/bin/env python3
"""Profile one vaultkit command in-process with cProfile and print the hot spots.

    python bench/hotspots.py bench/out/vault-10000-s1 --cold            # check, no cache
    python bench/hotspots.py bench/out/vault-10000-s1                   # check, warm cache
    python bench/hotspots.py bench/out/vault-10000-s1 --cold --serial   # parse in this process
    python bench/hotspots.py VAULT -- index --check                     # any other command

cProfile sees only this process: with a cold cache vaultkit parses on a pool of worker
processes, so the parse shows up as waiting in ``pool.map``; ``--serial`` makes the parse run
here (it patches ``vaultkit.vault.loader._PARALLEL_MIN``) so its own cost is visible. Imports are
profiled too (the command module is imported inside the profile), as in a real run.
Build the vault first with ``python bench/run.py`` (or ``python bench/synth.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import os
import pstats
import shutil
import sys
import time
from pathlib import Path


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("vault", type=Path)
    p.add_argument("--cold", action="store_true", help="delete .vaultkit/ first")
    p.add_argument("--serial", action="store_true", help="parse in this process, no pool")
    p.add_argument("--top", type=int, default=25, help="rows per listing (default 25)")
    p.add_argument("--save", metavar="FILE", help="also write the raw profile (for snakeviz etc.)")
    p.epilog = "vaultkit arguments go after --; default: check ."
    argv = list(sys.argv[1:] if argv is None else argv)
    command = argv[argv.index("--") + 1:] if "--" in argv else []
    args = p.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    command = command or ["check", "."]
    vault = args.vault.resolve()
    if args.cold:
        shutil.rmtree(vault / ".vaultkit", ignore_errors=True)
    os.chdir(vault)
    from vaultkit import cli

    if args.serial:
        import vaultkit.vault.loader

        vaultkit.vault.loader._PARALLEL_MIN = 1 << 60
    prof = cProfile.Profile()
    sink = io.StringIO()
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(sink):
        prof.enable()
        rc = cli.main(command)
        prof.disable()
    wall = time.perf_counter() - t0
    print(f"vaultkit {' '.join(command)} in {vault}: exit {rc}, {wall:.3f} s under cProfile "
          f"({'cold' if args.cold else 'warm'}{', serial parse' if args.serial else ''}); "
          f"{len(sink.getvalue().splitlines())} output lines")
    if args.save:
        prof.dump_stats(args.save)
    for key in ("cumulative", "tottime"):
        print(f"\n--- top {args.top} by {key} ---")
        out = io.StringIO()
        stats = pstats.Stats(prof, stream=out)
        stats.strip_dirs().sort_stats(key).print_stats(args.top)
        text = out.getvalue()
        print(text[text.find("   ncalls"):].rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
