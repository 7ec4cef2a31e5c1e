"""The audit's output: the text checklist and the JSON list."""

from __future__ import annotations

import json

from vaultkit.audit.context import FAIL, PASS, TIP, UNKNOWN, WARN, Check, counts_text

_SYMBOLS = {PASS: "✅", WARN: "⚠️ ", FAIL: "❌", UNKNOWN: "❔", TIP: "💡"}


_WORDS = {PASS: "PASS", WARN: "WARN", FAIL: "FAIL", UNKNOWN: "????", TIP: "TIP "}


def render_json(checks: list[Check]) -> str:
    return json.dumps([c.to_dict() for c in checks], indent=2, ensure_ascii=False) + "\n"


def render_text(checks: list[Check], *, symbols: bool = False, header: str = "") -> str:
    marks = _SYMBOLS if symbols else _WORDS
    width = max((len(c.id) for c in checks), default=0)
    lines = [header] if header else []
    for c in checks:
        lines.append(f"{marks[c.status]} {c.id.ljust(width)}  {c.found}")
        pad = " " * (3 if symbols else 5) + " " * width
        if c.status != PASS and c.hint:
            lines.append(f"{pad}  → {c.hint}")
        if c.id == "bootstrap-footprint" and c.details:
            lines.extend(pad + "  " + row for row in _table(c.details))
        if c.id == "secrets" and c.details:
            lines.extend(pad + "  " + (f"commit {d['commit'][:12]} ({d['date']}) added " if
                                       d.get("commit") else "now in ")
                         + f"{d['path']}:{d['line']} {d['found']}" for d in c.details)
    lines.append("")
    lines.append(counts_text(checks))
    return "\n".join(lines) + "\n"


def _table(rows: list[dict]) -> list[str]:
    """The footprint table: each file's bytes and tokens, then what each runtime loads of it
    in the runtime's unit (chars: UTF-16 units; "-": that runtime does not load it)."""
    labels = [r["file"] + ("" if r["kind"] in ("bootstrap", "runtime") else f" ({r['kind']})")
              for r in rows]
    runtimes = list(dict.fromkeys(name for r in rows for name in r.get("loaded", {})))
    units = {name: next(r["loaded"][name]["unit"] for r in rows if name in r.get("loaded", {}))
             for name in runtimes}
    heads = [f"{name} {'bytes' if units[name] == 'bytes' else 'chars'}" for name in runtimes]
    width = max(len("file"), len("total"), *(len(x) for x in labels))
    out = [f"{'file'.ljust(width)}  {'bytes':>7}  {'~tokens':>7}"
           + "".join(f"  {h:>{max(9, len(h))}}" for h in heads)]
    for label, r in zip(labels, rows):
        tok = "?" if r["tokens"] is None else f"{r['tokens']:,}"
        cells = "".join(
            f"  {(format(r['loaded'][n]['units'], ',') if n in r.get('loaded', {}) else '-'):>{max(9, len(h))}}"
            for n, h in zip(runtimes, heads))
        out.append(f"{label.ljust(width)}  {r['bytes']:>7,}  {tok:>7}{cells}")
    total_b = sum(r["bytes"] for r in rows)
    total_t = sum(r["tokens"] or 0 for r in rows)
    totals = "".join(f"  {sum(r['loaded'][n]['units'] for r in rows if n in r.get('loaded', {})):>{max(9, len(h))},}"
                     for n, h in zip(runtimes, heads))
    out.append(f"{'total'.ljust(width)}  {total_b:>7,}  {total_t:>7,}{totals}")
    return out
