#!/usr/bin/env python3
"""vaultkit's scanner against markdown-it-py, per KB of the same notes.

    python bench/parser.py                 # the notes of a 1,000-note synthetic vault
    python bench/parser.py --size 3000 --rounds 5

Both parse every note of a deterministic synthetic vault (``bench/synth.py``) in this
process, ``--rounds`` times; the best round counts. vaultkit runs ``parse_note`` (the whole
of what ``check`` does per file: frontmatter YAML, block scan, inline scan); markdown-it-py
runs ``MarkdownIt("commonmark")`` with the table rule and the plugins that read Obsidian's
syntax (front_matter, footnote, dollarmath, tasklists) and only tokenises (``parse``, no
rendering), the least a reference parser must do to give the same answers. The issue's
target: vaultkit at least 2.5 times faster per KB.

Needs markdown-it-py and mdit-py-plugins (``pip install -e '.[test]'``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

TARGET = 2.5


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--size", type=int, default=1000, help="notes in the synthetic vault")
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args(argv)

    import synth
    from markdown_it import MarkdownIt
    from mdit_py_plugins.dollarmath import dollarmath_plugin
    from mdit_py_plugins.footnote import footnote_plugin
    from mdit_py_plugins.front_matter import front_matter_plugin
    from mdit_py_plugins.tasklists import tasklists_plugin

    from vaultkit.vault.parse import parse_note

    notes = [(rel, data) for rel, data in synth.generate(args.size)
             if rel.endswith(".md") and not rel.startswith(".obsidian/")]
    texts = [data.decode("utf-8") for _, data in notes]
    kb = sum(len(data) for _, data in notes) / 1024
    md = (MarkdownIt("commonmark").enable("table").use(front_matter_plugin).use(footnote_plugin)
          .use(dollarmath_plugin).use(tasklists_plugin))

    def vaultkit_round():
        for rel, data in notes:
            parse_note(rel, data)

    def markdown_it_round():
        for text in texts:
            md.parse(text)

    best = {}
    for name, fn in (("vaultkit", vaultkit_round), ("markdown-it-py", markdown_it_round)):
        fn()  # warm-up: imports, compiled patterns
        times = []
        for _ in range(args.rounds):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        best[name] = min(times)
    print(f"{len(notes):,} notes, {kb:,.0f} KB of Markdown, best of {args.rounds} rounds")
    for name, seconds in best.items():
        print(f"  {name:15s} {seconds:7.3f} s   {seconds / kb * 1e6:8.1f} µs/KB")
    ratio = best["markdown-it-py"] / best["vaultkit"]
    verdict = "meets" if ratio >= TARGET else "MISSES"
    print(f"  vaultkit is {ratio:.2f}x faster per KB ({verdict} the {TARGET}x target)")
    return 0 if ratio >= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
