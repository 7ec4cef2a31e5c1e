from vaultkit.lint.rule import Rule


def _kb(n: int) -> str:
    return f"{n / 1024:.1f} KB"


class BootstrapBudget(Rule):
    """
    ## What it does
    Reports bootstrap files that together exceed the budget (20 KB, 20,480 bytes, by
    default). The bootstrap files are the ones the runtime injects into every session:
    AGENTS.md, SOUL.md, TOOLS.md, IDENTITY.md, USER.md, HEARTBEAT.md, BOOTSTRAP.md,
    MEMORY.md, NOW.md (the profile's `bootstrap_files`).
    The finding sits on the largest file, the likeliest to trim, and the message
    lists every file's size, largest first.

    Works for both layouts: the files at the vault root, or one level up when the vault
    is only `memory/`. The budget is `budgets.bootstrap_total_bytes`; change it in
    `vaultkit.toml` (`[budgets] bootstrap-total-bytes = 24576`).

    ## Why is this bad?
    The seeds' first rule for Layer 1 is "keep < 20KB total": everything here is paid
    on every turn of every session, before the agent has read a word of the user's
    request. Past the runtime's character limits it is cut silently.

    ## Example
    ```
    AGENTS.md:1:1: VK302 bootstrap-budget error: bootstrap files total 23,901 bytes (23.3 KB), over the 20,480-byte budget by 3,421 (budgets.bootstrap_total_bytes): AGENTS.md 14,200, MEMORY.md 6,101, SOUL.md 2,400, USER.md 1,200
    ```
    """

    name = "bootstrap-budget"
    code = "VK302"
    severity = "error"
    scope = "vault"

    def check_vault(self, ctx):
        files = ctx.vault.bootstrap()  # unreadable files still have a size
        budget = ctx.profile.budgets.bootstrap_total_bytes
        total = sum(n.size for n in files)
        if total <= budget or not files:
            return
        ranked = sorted(files, key=lambda n: (-n.size, n.path))
        sizes = ", ".join(f"{n.path} {n.size:,}" for n in ranked)
        yield self.diag(ranked[0].path, 1, 1,
                        f"bootstrap files total {total:,} bytes ({_kb(total)}), over the "
                        f"{budget:,}-byte budget by {total - budget:,} "
                        f"(budgets.bootstrap_total_bytes): {sizes}")


RULE = BootstrapBudget
