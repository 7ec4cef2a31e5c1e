"""The audit check ``memory-flush``: OpenClaw flushes memory before compaction."""

from __future__ import annotations

import json

from vaultkit.audit.context import FAIL, PASS, WARN, AuditContext, Check

def check_memory_flush(ctx: AuditContext) -> Check:
    problem = ctx.config_problem()
    if problem:
        problem.id = "memory-flush"
        return problem
    unknown = ctx.config_unknown("memory-flush", "memoryFlush.enabled", "true (flush on)")
    if unknown:
        return unknown
    key = "compaction.memoryFlush.enabled"
    value, where = ctx.setting(key)
    target = ctx.config_target()
    if where is None:
        return Check("memory-flush", WARN,
                     f"memoryFlush.enabled is only the runtime default (true), not set in "
                     f"{ctx.config_path}",
                     f"set agents.defaults.compaction.memoryFlush.enabled: true in {target}, so "
                     "a runtime upgrade or a copied config cannot turn it off unseen")
    if value is True:
        return Check("memory-flush", PASS, f"{where} is true ({ctx.config_path})")
    return Check("memory-flush", FAIL,
                 f"{where} is {json.dumps(value)} ({ctx.config_path}): nothing is written to "
                 "memory before compaction wipes the context",
                 f"set {where} to true in {target}")
