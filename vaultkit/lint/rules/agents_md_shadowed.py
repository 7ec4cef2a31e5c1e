from vaultkit.lint.rule import Rule


class AgentsMdShadowed(Rule):
    """
    ## What it does
    Reports an `AGENTS.md` that Claude Code never reads because a `CLAUDE.md` (or
    `.claude/CLAUDE.md`, `CLAUDE.local.md`) is loaded in the same workspace and none of
    the files Claude Code loads imports it (`@AGENTS.md`) or is a link to it. The
    instructions written for every agent reach OpenClaw and Codex, and not Claude Code.

    Source: code.claude.com/docs/en/memory, section "AGENTS.md": "Claude Code reads
    `CLAUDE.md`, not `AGENTS.md`. If your repository already uses `AGENTS.md` for other
    coding agents, create a `CLAUDE.md` that imports it", verified on 2026-12-02. (Third
    parties report that newer versions read `AGENTS.md` natively only when no `CLAUDE.md`
    counts in that folder; that could not be verified from Anthropic's own pages, and it
    would not change this finding, which needs a `CLAUDE.md`.)

    Not reported where OpenClaw applies: there `AGENTS.md` is the OpenClaw agent's own
    bootstrap file (its persona and memory protocol, "You wake up fresh each session"),
    and a `CLAUDE.md` beside it is kept apart on purpose, for Claude Code running as a
    coding subagent; importing `AGENTS.md` would hand that agent's memory protocol to the
    subagent.

    ## Why is this bad?
    Two instruction files drift apart: a rule added to `AGENTS.md` for every agent is
    silently missing from every Claude Code session.

    ## Example
    ```
    AGENTS.md:1:1: VK307 agents-md-shadowed warning: Claude Code loads CLAUDE.md and never reads AGENTS.md: add the line @AGENTS.md to CLAUDE.md (or make CLAUDE.md a link to it)
    ```
    """

    name = "agents-md-shadowed"
    code = "VK307"
    severity = "warning"
    scope = "vault"

    def check_vault(self, ctx):
        import os
        from pathlib import Path

        from vaultkit.vault.runtimes import applies, for_vault

        if applies(ctx.vault, "workspace-set"):
            return  # AGENTS.md is OpenClaw's; a CLAUDE.md beside it is for coding subagents
        for rc in for_vault(ctx.vault):
            if rc.runtime not in ctx.profile.runtimes or \
                    ctx.profile.runtimes[rc.runtime].loader != "claude-memory":
                continue
            instructions = [p for p in rc.pieces if p.role == "instructions"]
            if not instructions:
                continue
            ws = Path(ctx.vault.workspace)
            agents = ws / "AGENTS.md"
            rel = os.path.relpath(agents, ctx.vault.root).replace(os.sep, "/")
            if ctx.vault.note(rel) is None:
                continue
            loaded = {os.path.realpath(Path(ctx.vault.root) / p.path) for p in rc.loaded}
            if os.path.realpath(agents) in loaded:
                continue
            first = instructions[0].path
            yield self.diag(rel, 1, 1,
                            f"Claude Code loads {first} and never reads AGENTS.md: add the "
                            f"line @AGENTS.md to {first} (or make {first} a link to it)")


RULE = AgentsMdShadowed
