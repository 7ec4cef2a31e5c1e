"""The audit check ``reserve-floor``: compaction keeps enough tokens in reserve."""

from __future__ import annotations

import json

from vaultkit.audit.context import FAIL, PASS, AuditContext, Check

MIN_RESERVE_FLOOR = 40000  # the seeds' survival checklist: reserveTokensFloor >= 40000


def check_reserve_floor(ctx: AuditContext) -> Check:
    problem = ctx.config_problem()
    if problem:
        problem.id = "reserve-floor"
        return problem
    unknown = ctx.config_unknown("reserve-floor", "reserveTokensFloor",
                                 f"20,000, and the checklist needs at least {MIN_RESERVE_FLOOR:,}")
    if unknown:
        return unknown
    value, where = ctx.setting("compaction.reserveTokensFloor")
    target = ctx.config_target()
    key = where or "agents.defaults.compaction.reserveTokensFloor"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return Check("reserve-floor", FAIL,
                     f"{where} is {json.dumps(value)}, not a number ({ctx.config_path})",
                     f"set {key} to {MIN_RESERVE_FLOOR} in {target}")
    if where is None:
        source = f"not set in {ctx.config_path}"
        return Check("reserve-floor", FAIL,
                     f"reserveTokensFloor is only the runtime default {value:,} ({source}); "
                     f"the checklist needs at least {MIN_RESERVE_FLOOR:,} so the memory flush "
                     "has room to run before compaction",
                     f"set {key} to {MIN_RESERVE_FLOOR} in {target}")
    if value < MIN_RESERVE_FLOOR:
        return Check("reserve-floor", FAIL,
                     f"{where} is {value:,}, below {MIN_RESERVE_FLOOR:,} ({ctx.config_path}): "
                     "compaction can start before the memory flush has room to write",
                     f"set {key} to {MIN_RESERVE_FLOOR} in {target}")
    return Check("reserve-floor", PASS, f"{where} is {value:,} (≥ {MIN_RESERVE_FLOOR:,})")
