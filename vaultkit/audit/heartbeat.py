"""The audit check ``heartbeat-distillation``: the heartbeat distils journals into MEMORY.md."""

from __future__ import annotations

import json
import re

from vaultkit.audit.context import FAIL, PASS, RANK, WARN, AuditContext, Check

# Words that show each part of the weekly distillation (lower-cased text, English and Chinese).
_DISTIL_PARTS = (
    ("weekly schedule", ("weekly", "every week", "each week", "once a week", "per week",
                         "every sunday", "every monday", "每周", "每週", "每星期")),
    ("review the daily logs", ("review", "re-read", "reread", "go through", "回顾", "复盘",
                               "检查日志", "浏览")),
    ("promote to MEMORY.md", ("promote", "distil", "distill", "提炼", "蒸馏", "沉淀")),
    ("prune stale entries", ("prune", "stale", "remove outdated", "clean up", "cleanup",
                             "清理", "删除过时", "过时")),
)


def _effectively_empty(note) -> bool:
    for i, line in enumerate(note.lines, 1):
        s = line.strip()
        if not s or s.startswith("#") and re.match(r"#{1,6}(\s|$)", s):
            continue
        if note.fm_span and note.fm_span[0] <= i <= note.fm_span[1]:
            continue
        return False
    return True


def check_heartbeat(ctx: AuditContext) -> Check:
    from vaultkit.vault.openclaw import parse_duration

    cid = "heartbeat-distillation"
    note = ctx.bootstrap().get("HEARTBEAT.md")
    if note is None:
        return Check(cid, FAIL, f"no HEARTBEAT.md in {ctx.where_bootstrap()}",
                     "create HEARTBEAT.md with a weekly task: review the daily logs, promote "
                     "what lasts to MEMORY.md, prune stale entries (`vaultkit init` writes one)")
    if note.error:
        return Check(cid, FAIL, f"{note.path} cannot be read: {note.error}",
                     f"rewrite {note.path} as UTF-8 text")
    if _effectively_empty(note):
        return Check(cid, FAIL,
                     f"{note.path} holds only headings and blank lines, so the runtime skips "
                     "every heartbeat run",
                     f"add the hourly memory writes and the weekly distillation to {note.path}")
    problems: list[tuple[str, str, str]] = []  # (status, found, hint)
    if ctx.config_error is None:
        every, where = ctx.setting("heartbeat.every")
        minutes = parse_duration(every)
        key = where or "agents.defaults.heartbeat.every"
        if minutes == 0:
            problems.append((FAIL, f"the heartbeat is disabled ({key}: {json.dumps(every)})",
                             f"set {key} to \"1h\" in {ctx.config_target()}"))
        elif minutes is None:
            problems.append((WARN, f"{key} is {json.dumps(every)}, not a duration the audit "
                                   "understands", f"set {key} to a duration such as \"1h\""))
    text = note.text.lower()
    missing = [name for name, words in _DISTIL_PARTS if not any(w in text for w in words)]
    if missing:
        hard = {"weekly schedule", "promote to MEMORY.md"} & set(missing) or \
            "memory.md" not in text
        parts = ", ".join(missing)
        problems.append((FAIL if hard else WARN,
                         f"{note.path} does not schedule the weekly distillation in full "
                         f"(missing: {parts})",
                         f"add to {note.path}: \"## Weekly (distillation)\" with \"- Review the "
                         "last 7 daily logs\", \"- Promote what lasts to MEMORY.md\", \"- Prune "
                         "stale entries\""))
    elif "memory.md" not in text:
        problems.append((FAIL, f"{note.path} never names MEMORY.md, where distilled memory goes",
                         f"say in {note.path} to promote mature patterns to MEMORY.md"))
    if problems:
        status = max((p[0] for p in problems), key=RANK.get)
        return Check(cid, status, "; ".join(p[1] for p in problems),
                     "; ".join(dict.fromkeys(p[2] for p in problems)))
    every, where = ctx.setting("heartbeat.every") if ctx.config_error is None else ("?", None)
    cadence = f"every {every}" + ("" if where else " (runtime default)")
    return Check(cid, PASS, f"{note.path} schedules the weekly distillation; heartbeat {cadence}")
