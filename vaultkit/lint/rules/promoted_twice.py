from vaultkit.lint.rule import Rule
from vaultkit.lint.shared import is_bootstrap_file

_MIN_FACT_BYTES = 12  # a shorter fact ("- done", "**Changes:**") says too little to match on
_WHOLE_BLOCK_LINES = 3  # a whole block of this many lines written again: duplicate-block's


class PromotedTwice(Rule):
    """
    ## What it does
    Reports a line OpenClaw's dreaming promoted into `MEMORY.md` when the same fact is
    already there: promoted before, in an earlier `## Promoted From Short-Term Memory
    (DATE)` section, or written in `MEMORY.md`'s own sections. One finding per repeated
    line, naming the promotion that wrote it and where the fact already stands.

    Two lines hold the same fact when their text is equal once what dreaming adds is left
    out: the bullet, the `[score=… recalls=… avg=… source=…]` trailer, `Source: path#Lx-Ly`
    and the `<!-- trigger: … -->` / `<!-- importance: N -->` / `<!-- project: … -->`
    comments, blanks collapsed. Lines under 12 bytes are not compared. A whole section of 3
    promoted lines or more written again byte for byte is `duplicate-block`'s finding, not
    this rule's.

    Sources, checked 2026-12-07: openclaw/openclaw
    `extensions/memory-core/src/short-term-promotion.ts` (a candidate is skipped when its
    marker key, its path and line range, is already in `MEMORY.md` or its recall entry is
    marked promoted: the same text under another key, a line copied into another day's
    note, is promoted again) and
    `dreaming-consolidation.ts` (`normalizeComparableMemoryFact`, the same comparison).

    ## Why is this bad?
    Every copy is injected into every session and paid for again, and a fact repeated is
    not a fact reinforced: it pushes other entries toward the runtime's cut. A warning: the
    owner deletes the later copy.

    ## Example
    ```markdown
    ## Tools
    - The card terminal drops its connection after an update; restart the router.

    ## Promoted From Short-Term Memory (2026-12-04)

    <!-- openclaw-memory-promotion:memory:memory/2026-12-02.md:8:8 -->
    - The card terminal drops its connection after an update; restart the router. [score=0.811 recalls=3 avg=0.655 source=memory/2026-12-02.md:8-8]
    ```

    ```
    MEMORY.md:7:1: VK407 promoted-twice warning: promoted by '## Promoted From Short-Term Memory (2026-12-04)' (line 4), but MEMORY.md already holds it at line 2; delete this copy
    ```
    """

    name = "promoted-twice"
    code = "VK407"
    severity = "warning"

    def check(self, note, ctx):
        if note.error or not is_bootstrap_file(ctx, note, "MEMORY.md"):
            return
        if "Promoted From Short-Term Memory" not in note.text:
            return
        from vaultkit.vault.promoted import promoted_blocks, promoted_fact

        blocks = promoted_blocks(note.lines)
        promoted_lines = {line for b in blocks for line, _ in b.lines}
        headings = {b.line for b in blocks}
        own: dict[str, int] = {}  # a fact of MEMORY.md's own sections -> its first line
        in_fence = False
        for number, text in enumerate(note.lines, 1):
            if text.lstrip().startswith(("```", "~~~")):
                in_fence = not in_fence
                continue
            if in_fence or number in promoted_lines or number in headings \
                    or text.lstrip().startswith(("#", "<!--")):
                continue
            fact = promoted_fact(text)
            if len(fact.encode("utf-8")) >= _MIN_FACT_BYTES:
                own.setdefault(fact, number)
        seen: dict[str, tuple[int, str]] = {}  # a promoted fact -> (line, heading)
        bodies: set[tuple[str, ...]] = set()
        for block in blocks:
            body = tuple(t.rstrip() for _, t in block.lines)
            whole_copy = len(body) >= _WHOLE_BLOCK_LINES and body in bodies
            bodies.add(body)
            for line, text in block.lines:
                fact = promoted_fact(text)
                if len(fact.encode("utf-8")) < _MIN_FACT_BYTES:
                    continue
                where = None
                if fact in own:
                    where = f"MEMORY.md already holds it at line {own[fact]}"
                elif fact in seen:
                    first, heading = seen[fact]
                    where = f"it was promoted before, at line {first} by '{heading}'"
                else:
                    seen[fact] = (line, block.heading)
                if where and not whole_copy:
                    yield self.diag(note.path, line, 1,
                                    f"promoted by '{block.heading}' (line {block.line}), but "
                                    f"{where}; delete this copy")


RULE = PromotedTwice
