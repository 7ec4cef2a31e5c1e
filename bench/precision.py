"""Per-rule precision of ``vaultkit check`` on the fixture workspaces and vaults.

Each fixture carries the faults seeded in it on purpose (``TRUE`` below: the findings an
owner would thank you for); every other finding is a false one. The script copies each
fixture to a temporary folder, runs ``vaultkit check --format json`` with the rules on by
default but the git ones (the copies are no repositories): what a vault's owner sees, and prints, per rule, how many findings it
made, how many of them are true, and its precision; suggestions (severity ``info``, which
never fail a run) are counted apart. Seeded faults that were not found are listed: a
precision bought with a lost fault would show there.

    python bench/precision.py                       # this checkout
    python bench/precision.py --pythonpath ../main  # another checkout, e.g. before a change
    python bench/precision.py --vault help=/path/to/obsidian-help/en   # a public vault too

A public vault has no seeded faults: its findings are counted and listed for judging by
hand. ``--markdown`` prints the tables as docs/precision.md shows them.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORKSPACES = ROOT / "tests" / "fixtures" / "workspaces"
GIT_RULES = "journal-append-only,mass-deletion,memory-churn"

FIXTURES = {
    "multilingual": WORKSPACES / "multilingual",
    "realistic": ROOT / "tests" / "fixtures" / "rules" / "realistic",
    "agent-precision": WORKSPACES / "agent-precision",
    "obsidian-plain": WORKSPACES / "obsidian-plain",
}

# (rule, path, line): the faults seeded on purpose, one set per fixture
TRUE = {
    "multilingual": {
        ("journal-filename", "memory/2026-03-17-1303.md", 1),
        ("journal-filename", "memory/2026-3-9.md", 1),
        ("unknown-location", "memory/decision/pick-a-host.md", 1),
        ("unknown-location", "memory/research/ship-weekly.md", 1),
        ("unknown-location", "2026-03-19.md", 1),
        ("filler-entry", "memory/2026-03-20.md", 40),
        ("broken-link", "memory/2026-03-20.md", 50),
        ("nul-byte", "memory/2026-03-25.md", 4),
        ("missing-section", "memory/decisions/webhook-retries.md", 7),
        ("lesson-entry-undated", "memory/lessons/cron-timezones.md", 18),
        ("index-stale", "memory/INDEX.md", None),
    },
    "realistic": {
        ("lesson-by-date", "memory/lessons/2026-02-14.md", 1),
        ("frontmatter-missing", "memory/people/bob.md", 1),
        ("frontmatter-schema", "memory/projects/website.md", 3),
        ("type-mismatch", "memory/decisions/write-vs-edit.md", 3),
        ("missing-section", "memory/decisions/community-first.md", 7),
        ("deprecated-property", "memory/people/alice.md", 3),
        ("property-link-unquoted", "memory/projects/memory-system.md", 4),
        ("memory-size", "MEMORY.md", 44),
        ("bootstrap-budget", "AGENTS.md", 1),
        ("bootstrap-truncation", "AGENTS.md", 28),
        ("entry-too-long", "memory/2026-02-14.md", 8),
        ("lesson-in-now", "NOW.md", 8),
        ("daily-record-in-memory", "MEMORY.md", 18),
        ("filler-entry", "memory/2026-02-15.md", 16),
        ("lesson-entry-undated", "memory/lessons/cron-scheduling.md", 18),
        ("index-stale", "memory/INDEX.md", 1),
    },
    "agent-precision": {
        ("entry-too-long", "memory/2026-04-05.md", 117),  # a pasted log of 34 lines
        ("filler-entry", "memory/2026-04-05.md", 160),  # a no-op heartbeat
        ("missing-section", "memory/decisions/weekly-totals.md", 7),  # no Decision at all
        ("lesson-entry-undated", "memory/lessons/payments.md", 11),  # beside a dated one
        ("broken-link", "memory/research/payment-providers.md", 4),  # [[payments-faq]]
        ("broken-link", "notes/ideas.md", 3),  # [[homelab#Router]]: no such heading
        ("broken-link", "notes/ideas.md", 4),  # [[no-such-note]]
        # in kb/, an Obsidian vault of its own: a missing image (its forward links are fine)
        ("broken-link", "kb/Zettel/Proofing temperature.md", 6),
        ("index-stale", "memory/INDEX.md", None),  # none yet: a suggestion
    },
    "obsidian-plain": {
        ("deprecated-property", "Projects/Garden.md", 2),  # alias:
        ("broken-link", "Projects/Garden.md", 9),  # ![[garden-plan.pdf]]: no attachment
        ("frontmatter-invalid", "Projects/Recipes.md", 2),  # tags: [baking
        ("broken-link", "Zettel/202603191045 Levain timing.md", 11),  # [[#Night feed]]
    },
}


def run_check(folder: Path, *, pythonpath: str | None, home: Path) -> list[dict]:
    """``vaultkit check --format json`` on ``folder`` with every rule but the git ones."""
    env = dict(os.environ, HOME=str(home), NO_COLOR="1")
    env.pop("OPENCLAW_CONFIG_PATH", None)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    cmd = [sys.executable, "-m", "vaultkit", "check", str(folder), "--no-cache", "--format",
           "json", "--ignore", GIT_RULES, "--exit-zero", "--no-baseline"]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=folder)
    if proc.returncode != 0 or not proc.stdout.strip():
        raise RuntimeError(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip()
                           else f"exit {proc.returncode}")
    return json.loads(proc.stdout)


def measure(name: str, source: Path, truth: set | None, *, pythonpath: str | None,
            marker: bool) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / source.name
        shutil.copytree(source, folder)
        home = Path(tmp) / "home"
        home.mkdir()
        refused = None
        try:
            found = run_check(folder, pythonpath=pythonpath, home=home)
        except RuntimeError as exc:
            if not marker:
                raise
            refused = str(exc)  # e.g. "not a vault": try again as an Obsidian vault
            (folder / ".obsidian").mkdir()
            found = run_check(folder, pythonpath=pythonpath, home=home)
    per_rule: dict[str, Counter] = {}
    keys = set()
    for f in found:
        key = (f["rule"], f["path"], f["line"])
        keys.add(key)
        c = per_rule.setdefault(f["rule"], Counter())
        if f["severity"] == "info":
            c["info"] += 1
        c["findings"] += 1
        if truth is not None and key in truth:
            c["true"] += 1
    missed = sorted(truth - keys, key=str) if truth is not None else []
    return {"name": name, "findings": found, "per_rule": per_rule, "missed": missed,
            "refused": refused, "judged": truth is not None}


def table(results: list[dict], markdown: bool) -> str:
    rules = sorted({r for res in results for r in res["per_rule"]})
    lines = []
    head = ["rule"] + [res["name"] for res in results] + ["all: true / findings", "precision"]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|")
    total_true = total = 0
    for rule in rules:
        cells = [f"`{rule}`" if markdown else rule]
        t = n = 0
        for res in results:
            c = res["per_rule"].get(rule, Counter())
            if not c["findings"]:
                cells.append("")
                continue
            info = f" ({c['info']} info)" if c["info"] else ""
            if res["judged"]:
                cells.append(f"{c['true']}/{c['findings']}{info}")
                t += c["true"]
                n += c["findings"]
            else:
                cells.append(f"{c['findings']}{info} (unjudged)")
        cells.append(f"{t}/{n}" if n else "")
        cells.append(f"{t / n:.0%}" if n else "")
        total_true += t
        total += n
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("| **all rules** | " + " | ".join(
        str(sum(c["findings"] for c in res["per_rule"].values())) for res in results)
        + f" | {total_true}/{total} | {total_true / total:.0%} |" if total else "")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pythonpath", metavar="DIR",
                   help="run the vaultkit found in DIR (another checkout) instead of this one")
    p.add_argument("--vault", action="append", default=[], metavar="NAME=PATH",
                   help="a public vault to check as well (findings counted, not judged)")
    p.add_argument("--only", metavar="NAMES", help="comma-separated fixtures to measure")
    p.add_argument("--markdown", action="store_true", help="print markdown tables")
    p.add_argument("--list", action="store_true", help="list every finding that is not true")
    args = p.parse_args(argv)
    chosen = args.only.split(",") if args.only else list(FIXTURES)
    results = []
    for name in chosen:
        results.append(measure(name, FIXTURES[name], TRUE[name], pythonpath=args.pythonpath,
                               marker=True))
    for spec in args.vault:
        name, _, path = spec.partition("=")
        results.append(measure(name, Path(path).resolve(), None, pythonpath=args.pythonpath,
                               marker=True))
    print(table(results, args.markdown))
    for res in results:
        if res["refused"]:
            print(f"{res['name']}: refused ({res['refused']}); measured with an empty .obsidian/ "
                  "added")
        if res["missed"]:
            print(f"{res['name']}: seeded faults NOT found: {res['missed']}")
        if args.list:
            truth = TRUE.get(res["name"], set()) if res["judged"] else set()
            for f in res["findings"]:
                if (f["rule"], f["path"], f["line"]) not in truth:
                    print(f"  {res['name']}: {f['path']}:{f['line']}: {f['rule']} "
                          f"[{f['severity']}] {f['message']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
