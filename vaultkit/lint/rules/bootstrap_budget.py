from vaultkit.lint.rule import Rule


class BootstrapBudget(Rule):
    """
    ## What it does
    Reports when what OpenClaw injects into a main session from the bootstrap files is
    over the design notes' guideline, "bootstrap layer < 20KB"
    (`budgets.bootstrap_guideline_chars`, 20,480). It counts what the runtime injects, as
    the runtime counts it: the files OpenClaw loads (AGENTS.md, SOUL.md, IDENTITY.md,
    USER.md, BOOTSTRAP.md, MEMORY.md; up to 2026.7.1 also TOOLS.md and HEARTBEAT.md;
    not NOW.md), after its own cuts, in UTF-16 units of the right-trimmed text, so a
    Chinese or Russian file counts its characters, not its UTF-8 bytes. The finding sits
    on the file that contributes most and lists every file's share.

    This is a guideline, not the runtime's limit: what the runtime cuts
    (`bootstrapMaxChars`, `bootstrapTotalMaxChars`) is `bootstrap-truncation`. Change the
    guideline in `vaultkit.toml` (`[budgets] bootstrap-guideline-chars = 24000`; the old
    name `bootstrap-total-bytes` is read as this one). The injected set is verified from
    openclaw/openclaw `src/agents/workspace.ts` (`loadWorkspaceBootstrapFiles`) on
    2026-12-02.

    ## Why is this bad?
    Everything here is paid on every turn of every session, before the agent has read a
    word of the user's request; the design notes keep it under 20KB so that the context
    window is left for the work.

    ## Example
    ```
    AGENTS.md:1:1: VK302 bootstrap-budget warning: OpenClaw injects 23,901 chars from the bootstrap files into a main session, over the 20,480 guideline (budgets.bootstrap_guideline_chars) by 3,421: AGENTS.md 14,200, MEMORY.md 6,101, SOUL.md 2,400, USER.md 1,200
    ```
    """

    name = "bootstrap-budget"
    code = "VK302"
    severity = "warning"
    scope = "vault"

    def check_vault(self, ctx):
        from vaultkit.vault.runtimes import for_vault

        budget = ctx.profile.budgets.bootstrap_guideline_chars
        for rc in for_vault(ctx.vault):
            if rc.session != "main" or rc.unit != "utf16":
                continue
            files = [p for p in rc.loaded if p.role != "missing"]
            total = sum(p.injected_length for p in files)
            if total <= budget or not files:
                continue
            ranked = sorted(files, key=lambda p: (-p.injected_length, p.path))
            sizes = ", ".join(f"{p.path} {p.injected_length:,}" for p in ranked)
            yield self.diag(ranked[0].path, 1, 1,
                            f"{rc.label} injects {total:,} chars from the bootstrap files "
                            f"into a main session, over the {budget:,} guideline "
                            f"(budgets.bootstrap_guideline_chars) by {total - budget:,}: "
                            f"{sizes}")


RULE = BootstrapBudget
