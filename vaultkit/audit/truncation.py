"""The audit check ``bootstrap-truncation``: no runtime present cuts a file it loads.

The very simulation ``vaultkit context`` prints and ``check``'s ``bootstrap-truncation`` and
``auto-memory-cut`` rules report (vaultkit.vault.runtimes), with this audit's
openclaw.json and agent, so the three never disagree.
"""

from __future__ import annotations

from vaultkit.audit.context import FAIL, PASS, AuditContext, Check


def check_truncation(ctx: AuditContext) -> Check:
    runtimes = ctx.runtimes()
    found, hints, seen = [], [], []
    for rc in runtimes:
        unit = "bytes" if rc.unit == "bytes" else "chars"
        seen.append(f"{rc.label} ({rc.limits_source})" if rc.limits_source else rc.label)
        for p in rc.cut:
            if p.cut == "dropped":
                found.append(f"{rc.label} drops {p.path} whole ({p.reason}): all {p.length:,} "
                             f"{unit} are lost")
            else:
                found.append(f"{rc.label} loads {p.kept:,} of the {p.length:,} {unit} of "
                             f"{p.path} ({p.reason}): the agent silently loses "
                             f"{p.lost:,} {unit}, from line {p.first_lost_line}")
            limit = rc.per_file_max if p.cut == "middle" and rc.per_file_max else rc.total_max
            if p.cut == "middle" and p.cap is not None and p.length > p.cap:
                limit = min(limit or p.cap, p.cap)  # a fixed cap: no setting raises it
            if p.role == "auto memory":
                hints.append(f"shorten {p.path} to one line per entry and move detail into "
                             "topic files")
            elif limit:
                hints.append(f"cut {p.path} below {limit:,} {unit}")
    if found:
        return Check("bootstrap-truncation", FAIL, "; ".join(found),
                     "; ".join(dict.fromkeys(hints)) + " (move detail into memory/semantic/ or "
                     "memory/procedural/, which memory_search still finds; `vaultkit context` "
                     "shows each cut)")
    if not runtimes:
        return Check("bootstrap-truncation", PASS, "no runtime detected: nothing is loaded")
    return Check("bootstrap-truncation", PASS,
                 "no runtime cuts a file it loads: " + "; ".join(seen))
