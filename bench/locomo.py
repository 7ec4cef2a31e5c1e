"""Measure ``vaultkit search`` on LoCoMo: does a result hold the evidence the question needs?

LoCoMo (Maharana et al., ACL 2024, "Evaluating Very Long-Term Conversational Memory of
LLM Agents") is a set of very long conversations whose questions carry labelled evidence
turns. ``to_vault.py`` (shipped beside the data) turns each conversation into a memory
vault the way an agent keeps a journal: ``memory/YYYY-MM-DD.md`` per session date, one
``## HH:MM`` section per session, one line per turn, and a ``turnmap.json`` mapping every
turn to its (path, line).

For every question of categories 1-4 (multi-hop, temporal, open-domain, single-hop) this
runs the search in-process with the given settings and reports

- recall@5 / recall@10 by category: a question counts when one of the first k results'
  line range holds one of its evidence turns (the *range* measure), and, separately, when
  one of the lines the printed snippet shows does (the *snippet* measure: what an agent
  reads without a second call; a snippet of two windows shows their lines, not the ones
  between them); multi-hop questions also get "every evidence turn found";
- characters of snippet text returned per query at top 5 and top 10, results per query,
  and how many questions get nothing back;
- the questions whose evidence lies in a top-5 result's range but outside its snippet,
  counted by where it sat (above or below the snippet, or between its two windows);
  ``--misses N`` prints N of them with the question, the evidence line and the snippet;
- with ``--why``, every question no top-5 snippet answers, counted by cause: the evidence in
  a top-5 range on the line next to the snippet, farther, or on the line two windows skip;
  else the rank of the first snippet that holds it (6-10, 11-30, none in the top 30; each
  such question is searched again, untimed), and whether the top 5 holds several results
  of one note;
- latency: the whole ``vaultkit search`` process (warm index) and a warm MCP
  ``memory_search`` call (the server's session object in this process), median of
  ``--runs`` queries on the largest conversation's vault.

Usage: ``python bench/locomo.py [--locomo ../shared/locomo] [--min-score S] [--runs 10]
[--misses N] [--why]``.
The data is the development half; figures measured on it are development figures.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


def default_locomo() -> Path:
    """``../shared/locomo`` beside the repository (or beside a folder holding it)."""
    for base in (REPO.parent, *REPO.parent.parents):
        if (base / "shared" / "locomo" / "to_vault.py").is_file():
            return base / "shared" / "locomo"
    return REPO.parent / "shared" / "locomo"


def convert(locomo: Path, out: Path) -> Path:
    """Run LoCoMo's ``to_vault.py`` on its ``dev`` folder into ``out``; returns ``out``."""
    script = locomo / "to_vault.py"
    data = locomo / "dev" if (locomo / "dev").is_dir() else locomo
    if not script.is_file():
        raise SystemExit(f"bench: {script} not found (pass --locomo)")
    out.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([sys.executable, str(script), str(data), str(out)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"bench: to_vault.py failed: {done.stderr.strip()[-400:]}")
    for vault in out.iterdir():
        if vault.is_dir():
            # vaultkit finds a vault by its markers; a bare folder with MEMORY.md is one,
            # but the sidecar must stay out of the memory set (it is not under memory/).
            (vault / ".vaultkit").mkdir(exist_ok=True)
    return out


def evidence_ids(item: dict) -> list[str]:
    out = []
    for ev in item.get("evidence") or []:
        for part in str(ev).replace(";", " ").replace(",", " ").split():
            if ":" in part:
                out.append(part.strip())
    return out


def snippet_lines(hit, text_lines: list[str]) -> list[tuple[int, int]]:
    """The 1-based line ranges the printed snippet shows (two when it shows two windows)."""
    windows = getattr(hit, "snippet_windows", None)
    if windows:
        return [tuple(w) for w in windows]
    start = getattr(hit, "snippet_start", None)
    end = getattr(hit, "snippet_end", None)
    if start is not None and end is not None:
        return [(start, end)]
    # older result shape: find the snippet inside the chunk's lines
    chunk = "\n".join(text_lines[hit.start_line - 1:hit.end_line])
    at = chunk.find(hit.snippet)
    if at < 0:
        return []
    first = hit.start_line + chunk.count("\n", 0, at)
    return [(first, first + hit.snippet.count("\n"))]


def measure(out: Path, qa: list[dict], min_score: float | None, k_max: int = 10,
            why: bool = False) -> dict:
    """The figures for these questions; ``why``: also the cause of each snippet@5 miss
    (see :func:`miss_cause`), each miss searched again, untimed, for its top WHY_DEPTH."""
    from vaultkit.memory import search as S
    from vaultkit.vault.loader import scan_vault

    kw = {} if min_score is None else {"min_score": min_score}
    by_conv: dict[str, list[dict]] = {}
    for item in qa:
        if item.get("category") in CATEGORIES:
            by_conv.setdefault(item["conv"], []).append(item)
    rows = []
    for conv, items in sorted(by_conv.items()):
        root = out / conv
        turnmap = json.loads((root / "turnmap.json").read_text())["turns"]
        files: dict[str, list[str]] = {}
        scan = scan_vault(root, root=root)
        index = S.SearchIndex(root)
        try:
            for item in items:
                evs = [turnmap[e] for e in evidence_ids(item) if e in turnmap]
                t0 = time.perf_counter()
                hits = S.search_scan(scan, str(item["question"]), max_results=k_max,
                                     index=index, **kw)
                took = time.perf_counter() - t0
                found_range, found_snip = [], []
                outside = None  # (where, evidence line, snippet) of a top-5 range's miss
                for rank, h in enumerate(hits):
                    lines = files.get(h.path)
                    if lines is None:
                        lines = files[h.path] = (root / h.path).read_text().split("\n")
                    shown = snippet_lines(h, lines)
                    found_range.append({i for i, (p, ln) in enumerate(evs)
                                        if p == h.path and h.start_line <= ln <= h.end_line})
                    found_snip.append({i for i, (p, ln) in enumerate(evs)
                                       if p == h.path and any(a <= ln <= b for a, b in shown)})
                    for p, ln in evs:
                        if outside is None and rank < 5 and p == h.path \
                                and h.start_line <= ln <= h.end_line \
                                and not any(a <= ln <= b for a, b in shown):
                            where = "above" if not shown or ln < shown[0][0] else \
                                "below" if ln > shown[-1][1] else "between"  # (2 windows)
                            outside = (where, lines[ln - 1],
                                       h.snippet, _lines_away(shown, ln))
                row = {"conv": conv, "cat": item["category"], "n_ev": len(evs),
                       "question": str(item["question"]), "outside": outside,
                       "range": found_range, "snip": found_snip,
                       "chars": [len(h.snippet) for h in hits], "took": took}
                if why and not set().union(*found_snip[:5]):
                    deep = hits if len(hits) < k_max else S.search_scan(
                        scan, str(item["question"]), max_results=WHY_DEPTH, index=index, **kw)
                    row["why"] = miss_cause(outside, deep, evs, files, root)
                rows.append(row)
        finally:
            index.close()
    return summarise(rows)


WHY_DEPTH = 30  # how deep --why looks for the first result whose snippet holds the evidence


def _lines_away(shown: list[tuple[int, int]], line: int) -> int:
    """How many lines ``line`` lies from the nearest line a snippet shows (1: next to it)."""
    return min(abs(line - a) if line < a else abs(line - b) for a, b in shown) if shown else 0


def miss_cause(outside, hits, evs, files: dict, root: Path) -> str:
    """Why no top-5 snippet holds the evidence: ``outside`` (where, line, snippet, lines
    away) when a top-5 result's range holds it; else the rank of the first of ``hits``
    whose snippet does, and whether the top 5 holds several results of one note."""
    if outside is not None:
        where, away = outside[0], outside[3]
        if where == "between":
            return "in a top-5 range: the line the two windows skip"
        return f"in a top-5 range: {where} the snippet, " + \
            ("the next line" if away == 1 else "2 or more lines away")
    first = None
    for rank, h in enumerate(hits[:WHY_DEPTH]):
        lines = files.get(h.path)
        if lines is None:
            lines = files[h.path] = (root / h.path).read_text().split("\n")
        shown = snippet_lines(h, lines)
        if any(p == h.path and any(a <= ln <= b for a, b in shown) for p, ln in evs):
            first = rank
            break
    top = [h.path for h in hits[:5]]
    crowd = ", the top 5 holding several results of one note" if len(set(top)) < len(top) \
        else ""
    if first is None:
        return f"ranking: no snippet of the top {WHY_DEPTH}" + crowd
    return ("ranking: first in a snippet at rank 6-10" if first < 10 else
            f"ranking: first in a snippet at rank 11-{WHY_DEPTH}") + crowd


def summarise(rows: list[dict]) -> dict:
    def hit_at(row, key, k):
        return bool(set().union(*row[key][:k])) if row[key][:k] else False

    def all_at(row, key, k):
        got = set().union(*row[key][:k]) if row[key][:k] else set()
        return row["n_ev"] > 0 and len(got) == row["n_ev"]

    table = {}
    groups = {name: [r for r in rows if r["cat"] == c] for c, name in CATEGORIES.items()}
    groups["all 1-4"] = rows
    for name, rs in groups.items():
        n = len(rs) or 1
        table[name] = {
            "n": len(rs),
            **{f"{key}@{k}": 100 * sum(hit_at(r, key, k) for r in rs) / n
               for key in ("range", "snip") for k in (5, 10)},
            "all@10": 100 * sum(all_at(r, "range", 10) for r in rs) / n,
        }
    missed = [r for r in rows if hit_at(r, "range", 5) and not hit_at(r, "snip", 5)]
    causes: dict[str, int] = {}
    for r in rows:
        if "why" in r:
            causes[r["why"]] = causes.get(r["why"], 0) + 1
    return {
        "table": table,
        "why": dict(sorted(causes.items(), key=lambda c: (-c[1], c[0]))),
        "outside": {"n": len(missed),
                    "above": sum(1 for r in missed if r["outside"] and r["outside"][0] == "above"),
                    "below": sum(1 for r in missed if r["outside"] and r["outside"][0] == "below"),
                    "between": sum(1 for r in missed
                                   if r["outside"] and r["outside"][0] == "between"),
                    "examples": [{"question": r["question"], "where": r["outside"][0],
                                  "evidence": r["outside"][1], "snippet": r["outside"][2]}
                                 for r in missed if r["outside"]]},
        "chars@5": statistics.mean(sum(r["chars"][:5]) for r in rows),
        "chars@10": statistics.mean(sum(r["chars"][:10]) for r in rows),
        "results": statistics.mean(len(r["chars"]) for r in rows),
        "empty": sum(1 for r in rows if not r["chars"]),
        "search_ms": 1000 * statistics.median(r["took"] for r in rows),
    }


def latency(vault: Path, questions: list[str], runs: int) -> dict:
    """Median wall time of the whole ``vaultkit search`` process and of a warm MCP call."""
    from vaultkit.cli.mcp_server import VaultSession

    env = dict(os.environ)
    cmd = [sys.executable, "-m", "vaultkit", "search", "--json"]
    subprocess.run([*cmd, questions[0]], cwd=vault, capture_output=True, env=env)  # warm
    walls = []
    for q in questions[:runs]:
        t0 = time.perf_counter()
        done = subprocess.run([*cmd, q], cwd=vault, capture_output=True, env=env)
        walls.append(time.perf_counter() - t0)
        if done.returncode != 0:
            raise SystemExit(f"bench: vaultkit search failed: {done.stderr.decode()[-300:]}")
    session = VaultSession(vault.resolve())
    session.memory_search({"query": questions[0]})
    calls = []
    for q in questions[:runs]:
        t0 = time.perf_counter()
        session.memory_search({"query": q})
        calls.append(time.perf_counter() - t0)
    session.close()
    return {"cli_ms": 1000 * statistics.median(walls), "mcp_ms": 1000 * statistics.median(calls)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--locomo", default=str(default_locomo()),
                   help="the LoCoMo folder with to_vault.py and dev/ (default ../shared/locomo)")
    p.add_argument("--out", help="where the vaults are written (default: a temporary folder)")
    p.add_argument("--min-score", type=float, default=None,
                   help="pass this min-score (default: the search's own default)")
    p.add_argument("--runs", type=int, default=10, help="timed queries for latency (0: skip)")
    p.add_argument("--json", help="also write the figures to this file")
    p.add_argument("--misses", type=int, default=0, metavar="N",
                   help="print N questions whose evidence is in a top-5 range but not its snippet")
    p.add_argument("--why", action="store_true",
                   help="count the questions no top-5 snippet answers by cause: where the "
                        "evidence lay in a top-5 range, or the rank of the first snippet "
                        f"holding it (searched again to the top {WHY_DEPTH})")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="vaultkit-locomo-") as tmp:
        out = convert(Path(args.locomo), Path(args.out) if args.out else Path(tmp))
        qa = json.loads((out / "qa.json").read_text())
        res = measure(out, qa, args.min_score, why=args.why)
        if args.runs:
            biggest = max((d for d in out.iterdir() if d.is_dir()),
                          key=lambda d: sum(f.stat().st_size for f in d.rglob("*.md")))
            qs = [str(q["question"]) for q in qa if q["conv"] == biggest.name][:args.runs]
            res["latency"] = latency(biggest, qs, args.runs)
    setting = "default" if args.min_score is None else f"--min-score {args.min_score:g}"
    print(f"LoCoMo dev, categories 1-4, vaultkit search ({setting})")
    print(f"  {'category':<12} {'n':>5} {'r@5':>6} {'r@10':>6} {'snip@5':>7} {'snip@10':>8} "
          f"{'all@10':>7}")
    for name, t in res["table"].items():
        print(f"  {name:<12} {t['n']:>5} {t['range@5']:6.1f} {t['range@10']:6.1f} "
              f"{t['snip@5']:7.1f} {t['snip@10']:8.1f} {t['all@10']:7.1f}")
    print(f"  snippet characters per query: {res['chars@5']:.0f} at top 5, "
          f"{res['chars@10']:.0f} at top 10; {res['results']:.1f} results of 10 asked, "
          f"{res['empty']} questions with none")
    miss = res["outside"]
    print(f"  evidence in a top-5 result's range but outside its snippet: {miss['n']} questions "
          f"({miss['above']} above the snippet, {miss['below']} below, {miss['between']} "
          f"between its two windows)")
    for ex in miss["examples"][:args.misses]:
        print(f"    Q: {ex['question']}\n      evidence ({ex['where']}): {ex['evidence'][:160]}\n"
              f"      snippet: {ex['snippet'][:160].replace(chr(10), ' / ')}")
    if args.why:
        print(f"  no top-5 snippet holds the evidence: {sum(res['why'].values())} questions")
        for cause, n in res["why"].items():
            print(f"    {n:4}  {cause}")
    print(f"  in-process search, median: {res['search_ms']:.1f} ms")
    if "latency" in res:
        lat = res["latency"]
        print(f"  CLI `vaultkit search --json`, whole process, warm (median): "
              f"{lat['cli_ms']:.0f} ms; MCP memory_search, warm (median): {lat['mcp_ms']:.1f} ms")
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
