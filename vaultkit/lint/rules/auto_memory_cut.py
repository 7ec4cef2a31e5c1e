from vaultkit.lint.rule import Rule


class AutoMemoryCut(Rule):
    """
    ## What it does
    Reports a Claude Code auto-memory index (`MEMORY.md` in the auto-memory folder) whose
    lines past the load limit still hold facts: Claude Code loads only the first 200 lines
    or the first 25KB of it, whichever comes first, and the finding points at the first
    line holding text that is never loaded. Blank lines and a bare heading past the limit
    are not reported.

    The index is checked when it lives in the vault: `autoMemoryDirectory` in
    `.claude/settings.json` or `.claude/settings.local.json` pointing inside the vault, or
    `[runtime.claude-code] auto-memory-dir` in `vaultkit.toml`. YAML frontmatter and
    block-level HTML comments are stripped before the limits apply, as Claude Code does
    since v2.1.211. Sources, verified on 2026-12-02: code.claude.com/docs/en/memory ("The
    first 200 lines of MEMORY.md, or the first 25KB, whichever comes first, are loaded at
    the start of every conversation"; "autoMemoryDirectory"). The unit of "25KB" is not
    documented: anthropics/claude-code issues #65430, #79217 and #82056 measure it as
    25,000 UTF-16 units with each line's newline counted, cut at a line end; that is the
    profile's `runtimes.claude-code.auto_memory_max`.

    ## Why is this bad?
    The entries past the limit are the newest (the index grows at the bottom), and the
    agent never sees them: it repeats the mistakes those lines were written to prevent.

    ## Example
    ```
    memory/claude/MEMORY.md:201:1: VK308 auto-memory-cut error: Claude Code loads only the first 200 of 236 lines of this auto-memory index (past the first 200 lines): line 201 and the 35 after it are never loaded; move detail into topic files and keep one line per entry
    ```
    """

    name = "auto-memory-cut"
    code = "VK308"
    severity = "error"
    scope = "vault"

    def check_vault(self, ctx):
        from vaultkit.vault.runtimes import for_vault

        for rc in for_vault(ctx.vault):
            for piece in rc.pieces:
                if piece.role != "auto memory" or not piece.cut:
                    continue
                note = ctx.vault.note(piece.path)
                if note is None or note.error:
                    continue
                lines = note.lines
                first = next((n for n in range(piece.first_lost_line, len(lines) + 1)
                              if _holds_text(lines[n - 1])), None)
                if first is None:
                    continue
                rest = len(lines) - first
                loaded = piece.injected.count("\n") + 1 if piece.injected else 0
                yield self.diag(
                    piece.path, first, 1,
                    f"Claude Code loads only the first {loaded} of {len(lines)} lines of this "
                    f"auto-memory index ({piece.reason}): line {first}"
                    f"{f' and the {rest} after it are' if rest else ' is'} never loaded; move "
                    "detail into topic files and keep one line per entry")


def _holds_text(line: str) -> bool:
    """A line that says something: not blank, not a bare heading, rule or comment."""
    import re

    return bool(line.strip()) and not re.fullmatch(
        r"\s*(#{1,6}(\s.*)?|[-*_]{3,}|<!--.*-->)\s*", line)


RULE = AutoMemoryCut
