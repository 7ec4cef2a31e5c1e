"""The audit check ``memory-flush``: OpenClaw flushes memory before compaction, and will.

One verdict per agent (``--agent``), the first that holds:

1. the flush is off (``compaction.memoryFlush.enabled`` false);
2. the agent runs on a backend where OpenClaw skips the flush: a CLI backend
   (``claude-cli/…``) or a runtime that owns its compaction (the Codex harness: ``codex/…``
   or ``embeddedHarness.runtime: "codex"``). ``runMemoryFlushIfNeeded`` returns "skipped"
   for both (src/auto-reply/reply/agent-runner-memory.ts, issue #137613; Codex owns its
   compaction, PR #85958);
3. the flush point, ``window − reserveTokensFloor − softThresholdTokens``
   (src/auto-reply/reply/memory-flush.ts, as quoted in issue #17034 and PR #81417), is never
   reached: at or below 0, past where OpenClaw's own compaction starts
   (``compaction.reserveTokens`` larger than floor + soft threshold: issue #66830, PR
   #67297), or past the window the backend really has (an ``openai-codex`` model is
   200,000 tokens in OpenClaw, issue #66830: a larger ``contextTokens`` makes the backend
   overflow first, and the overflow path runs no flush, issue #137613);
4. on only the runtime's default (a warning); else it runs, and the check says at what.

The window is ``contextTokens`` (it caps the model's), else the model's ``contextWindow`` in
``models.providers``, else the profile's ``runtimes.openclaw.context_window_tokens``
(200,000 unless vaultkit.toml says otherwise; OpenClaw's own fallback, issue #66830).
Sources read on 2026-12-07; docs/commands/audit.md cites each.
"""

from __future__ import annotations

import json

from vaultkit.audit.context import FAIL, PASS, WARN, AuditContext, Check

# what a flush needs between its trigger and compaction: the runtime's default soft threshold
FLUSH_ROOM = 4000
# backends whose window OpenClaw takes as smaller than a model's advertised one
BACKEND_WINDOWS = {"openai-codex": (200000, "issue #66830: `openclaw status` shows "
                                            "gpt-5.4 on openai-codex as 200k ctx")}


def _key(ctx: AuditContext, dotted: str) -> str:
    """The key a hint names: the agent's entry when the audit is for one, else the default."""
    _, where = ctx.setting(dotted)
    if where:
        return where
    return f"agents.list[{ctx.agent}].{dotted}" if ctx.agent else f"agents.defaults.{dotted}"


def _number(value) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value)


def _model(ctx: AuditContext) -> tuple[str, str]:
    """The agent's model (``"provider/id"``) and the key that sets it."""
    value, where = ctx.setting("model")
    key = where or _key(ctx, "model")
    if isinstance(value, dict):
        value, key = value.get("primary"), f"{key}.primary"
    return (value.strip() if isinstance(value, str) else ""), key


def _declared_window(ctx: AuditContext, model: str) -> int | None:
    """The model's ``contextWindow`` in ``models.providers.<provider>.models[]``."""
    provider, _, model_id = model.partition("/")
    providers = ((ctx.config_data or {}).get("models") or {}).get("providers")
    entry = providers.get(provider) if isinstance(providers, dict) else None
    models = entry.get("models") if isinstance(entry, dict) else None
    for item in models if isinstance(models, list) else ():
        if isinstance(item, dict) and item.get("id") == model_id:
            return _number(item.get("contextWindow"))
    return None


def _window(ctx: AuditContext, model: str) -> tuple[int, str]:
    cap, where = ctx.setting("contextTokens")
    declared = _declared_window(ctx, model) if model else None
    if _number(cap) and cap > 0 and where:
        if declared and declared < cap:
            return declared, f"{model}'s contextWindow in models.providers"
        return int(cap), where
    if declared and declared > 0:
        return declared, f"{model}'s contextWindow in models.providers"
    spec = next((r for r in ctx.profile.runtimes.values() if r.loader == "workspace-set"), None)
    tokens = spec.context_window_tokens if spec is not None else 200000
    return tokens, "the profile's runtimes.openclaw.context_window_tokens (OpenClaw's fallback " \
                   "window when the model declares none)"


def _backend(ctx: AuditContext, model: str, key: str) -> tuple[str, str, str] | None:
    """``(what the backend is, why the flush is skipped there, the change)`` or None."""
    harness, where = ctx.setting("embeddedHarness.runtime")
    provider, _, model_id = model.partition("/")
    if where and harness == "codex":
        return (f"{where} is \"codex\"", "the Codex harness owns its compaction (PR #85958)",
                f"remove {where} (and use a model the embedded runtime runs, such as "
                f"openai-codex/{model_id or 'gpt-5.4'})")
    if provider == "codex":
        return (f"the model is {model}", "the Codex harness owns its compaction (PR #85958)",
                f"set {key} to \"openai-codex/{model_id}\" (Codex OAuth "
                "through the embedded runtime, which runs the flush)")
    if provider.endswith("-cli"):
        api = provider.removesuffix("-cli")
        api = {"claude": "anthropic"}.get(api, api)
        return (f"the model is {model}", f"{provider} is a CLI backend",
                f"set {key} to \"{api}/{model_id}\" (the API "
                "provider, which runs the flush)")
    return None


def check_memory_flush(ctx: AuditContext) -> Check:
    problem = ctx.config_problem()
    if problem:
        problem.id = "memory-flush"
        return problem
    unknown = ctx.config_unknown("memory-flush", "memoryFlush.enabled", "true (flush on)")
    if unknown:
        return unknown
    value, where = ctx.setting("compaction.memoryFlush.enabled")
    target = ctx.config_target()
    if where is not None and value is not True:
        return Check("memory-flush", FAIL,
                     f"{where} is {json.dumps(value)} ({ctx.config_path}): nothing is written to "
                     "memory before compaction wipes the context",
                     f"set {where} to true in {target}")
    model, model_key = _model(ctx)
    backend = _backend(ctx, model, model_key)
    if backend:
        what, why, change = backend
        return Check("memory-flush", FAIL,
                     f"the flush never runs for this agent: {what}, and OpenClaw skips the "
                     f"pre-compaction memory flush there ({why}; src/auto-reply/reply/"
                     f"agent-runner-memory.ts, issue #137613) ({ctx.config_path})",
                     f"{change} in {target}; or have the agent write its journal itself "
                     "(AGENTS.md, HEARTBEAT.md)")
    window, window_from = _window(ctx, model)
    floor = _number(ctx.setting("compaction.reserveTokensFloor")[0]) or 0
    soft_value, _ = ctx.setting("compaction.memoryFlush.softThresholdTokens")
    soft = _number(soft_value) if _number(soft_value) is not None else FLUSH_ROOM
    point = window - floor - soft
    sums = (f"{window:,} − {floor:,} reserveTokensFloor − {soft:,} softThresholdTokens = "
            f"{point:,} (window: {window_from})")
    soft_key = _key(ctx, "compaction.memoryFlush.softThresholdTokens")
    if point <= 0:
        value = max(0, window - floor - FLUSH_ROOM)
        return Check("memory-flush", FAIL,
                     f"the flush never runs: it starts at {sums}, which no session reaches "
                     f"({ctx.config_path})",
                     f"set {soft_key} to {value} in {target}" if value > 0 else
                     f"set {_key(ctx, 'compaction.reserveTokensFloor')} below {window:,} in "
                     f"{target}")
    reserve = _number(ctx.setting("compaction.reserveTokens")[0])
    if reserve is not None and reserve > floor + soft:
        value = reserve - floor + FLUSH_ROOM
        return Check("memory-flush", FAIL,
                     f"the flush never runs: it starts at {sums}, but compaction starts "
                     f"earlier, at {window:,} − {reserve:,} reserveTokens = {window - reserve:,} "
                     f"(issue #66830) ({ctx.config_path})",
                     f"set {soft_key} to {value} in {target}, so the flush starts "
                     f"{FLUSH_ROOM:,} tokens before compaction")
    provider = model.partition("/")[0]
    if provider in BACKEND_WINDOWS and window > BACKEND_WINDOWS[provider][0]:
        real, source = BACKEND_WINDOWS[provider]
        return Check("memory-flush", FAIL,
                     f"the flush never runs: it starts at {sums}, but the {provider} backend "
                     f"has a {real:,}-token window ({source}): it overflows first, and the "
                     f"overflow path runs no flush (issue #137613) ({ctx.config_path})",
                     f"set {_key(ctx, 'contextTokens')} to {real} in {target}, so the flush "
                     f"starts at {real - floor - soft:,}")
    if where is None:
        return Check("memory-flush", WARN,
                     f"memoryFlush.enabled is only the runtime default (true), not set in "
                     f"{ctx.config_path}; the flush starts at {sums}",
                     f"set agents.defaults.compaction.memoryFlush.enabled: true in {target}, so "
                     "a runtime upgrade or a copied config cannot turn it off unseen")
    return Check("memory-flush", PASS, f"{where} is true ({ctx.config_path}); the flush "
                                       f"starts at {sums}")
