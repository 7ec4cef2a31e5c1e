from vaultkit.lint.rule import Rule


class PromotionOverLimit(Rule):
    """
    ## What it does
    Reports a `MEMORY.md` that a runtime now cuts at session start *because of* what
    OpenClaw's dreaming promoted into it: the file would fit what the runtime loads without
    its `## Promoted From Short-Term Memory (DATE)` sections, and does not with them. The
    finding sits on the first line the runtime no longer loads, names the lines cut, and
    the promotion that pushed them there: the first section, in file order, with which the
    file no longer fits.

    The limits and the cut are the ones `bootstrap-truncation` and `vaultkit context` use
    (each runtime that applies, simulated as it loads the file; OpenClaw's
    `bootstrapMaxChars` and `bootstrapTotalMaxChars` from `openclaw.json` when set, else
    the profile's `runtimes.openclaw`): this rule only says which promotion is to blame. A
    file already over the limit without its promotions is `bootstrap-truncation`'s alone.

    Source, checked 2026-12-07: openclaw/openclaw `extensions/memory-core/src/
    short-term-promotion.ts` (`applyShortTermPromotions` appends each section at the end of
    `MEMORY.md`) and `memory-budget.ts` (the deep phase drops its oldest sections to keep the
    file under 10,000 characters, `DEFAULT_MEMORY_FILE_MAX_CHARS`: a smaller configured
    `bootstrapMaxChars`, an older version or another writer still leaves it over).

    ## Why is this bad?
    The runtime keeps the head and the tail of the file and drops the middle without a
    word: the promotion reached the file, yet the facts it pushed past the limit (your own
    sections, or earlier promotions) no longer reach the agent. A warning beside
    `bootstrap-truncation`'s error: it says what to distill.

    ## Example
    ```
    MEMORY.md:41:1: VK312 promotion-over-limit warning: OpenClaw now cuts lines 41-58 of MEMORY.md (loads 1,897 of its 2,634 chars: over the per-file limit of 2,000); '## Promoted From Short-Term Memory (2026-12-04)' (line 52) pushed it past the limit (without the promotions from there on it fits); distill the promoted lines into MEMORY.md's own sections or move them into memory/ notes
    ```
    """

    name = "promotion-over-limit"
    code = "VK312"
    severity = "warning"
    scope = "vault"

    def check_vault(self, ctx):
        from vaultkit.vault.promoted import promoted_blocks
        from vaultkit.vault.runtimes import for_vault, units

        vault = ctx.vault
        path = "MEMORY.md" if ctx.profile.memory_prefix else "../MEMORY.md"
        note = vault.note(path)  # (above a memory-only vault: reported where it lives)
        if note is None or note.error or "Promoted From Short-Term Memory" not in note.text:
            return
        blocks = promoted_blocks(note.lines)
        if not blocks:
            return
        for rc in for_vault(vault):
            piece = next((p for p in rc.pieces if p.path == path and p.cut in ("middle", "tail")
                          and p.role != "auto memory"), None)
            if piece is None or piece.first_lost_line is None:
                continue
            sizes = [units("\n".join(note.lines[b.line - 1:b.end]) + "\n", rc.unit)
                     for b in blocks]
            # what the runtime gave the file: the part it kept and its cut marker
            allowance = max(piece.kept, piece.injected_length)
            without = piece.length - sum(sizes)
            if without > allowance:
                continue  # over without any promotion: not theirs to answer for
            total, culprit = without, blocks[-1]
            for block, size in zip(blocks, sizes):
                total += size
                if total > allowance:
                    culprit = block
                    break
            unit = "bytes" if rc.unit == "bytes" else "chars"
            first, last = piece.first_lost_line, piece.last_lost_line or piece.first_lost_line
            lines = f"lines {first}-{last}" if last != first else f"line {first}"
            yield self.diag(path, first, 1,
                            f"{rc.label} now cuts {lines} of MEMORY.md (loads {piece.kept:,} "
                            f"of its {piece.length:,} {unit}: {piece.reason}); "
                            f"'{culprit.heading}' (line {culprit.line}) pushed it past the "
                            "limit (without the promotions from there on it fits); distill the "
                            "promoted lines into MEMORY.md's own sections or move them into "
                            "memory/ notes")


RULE = PromotionOverLimit
