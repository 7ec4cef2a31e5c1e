from vaultkit.lint.rule import Rule
from vaultkit.lint.shared import is_bootstrap_file


def crossing_line(note, budget: int, unit: str = "bytes") -> int:
    """The line on which the file's size first exceeds ``budget``: in UTF-8 bytes, or in
    UTF-16 units (``unit="utf16"``, how OpenClaw counts). Moving that line and the ones
    after it out of the file is the smallest cut from its end that brings it under."""
    if unit == "utf16":
        from vaultkit.vault.runtimes import u16len as measure
        total = 1 if note.bom else 0
    else:
        def measure(line: str) -> int:
            return len(line.encode("utf-8", "surrogatepass"))
        total = 3 if note.bom else 0
    ending = 2 if note.crlf else 1
    for number, line in enumerate(note.lines, 1):
        total += measure(line) + ending
        if total > budget:
            return number
    return max(note.line_count, 1)


class MemorySize(Rule):
    """
    ## What it does
    Reports `MEMORY.md` over its size budget (10 KB, 10,240 bytes, by default; the seeds'
    "MEMORY.md < 10KB"). Points at the line where the file crosses the budget; the
    message gives the size and how much has to go.

    The budget is `budgets.memory_md_bytes` in the profile; change it in `vaultkit.toml`
    (`[budgets] memory-md-bytes = 12288`).

    ## Why is this bad?
    MEMORY.md is injected into every session. Each kilobyte there is paid on every turn,
    crowds out the conversation, and pushes the whole bootstrap set toward the runtime's
    truncation limit, where the middle of the file is silently cut. It is meant to hold
    distilled, durable facts; details belong in `memory/` notes that are searched.

    ## Example
    ```
    MEMORY.md:212:1: VK301 memory-size error: MEMORY.md is 12,480 bytes, over the 10,240-byte budget by 2,240 (budgets.memory_md_bytes); distill it and move details into memory/ notes
    ```
    """

    name = "memory-size"
    code = "VK301"
    severity = "error"

    def check(self, note, ctx):
        if not is_bootstrap_file(ctx, note, "MEMORY.md"):
            return
        budget = ctx.profile.budgets.memory_md_bytes
        if note.size <= budget:
            return
        yield self.diag(note.path, crossing_line(note, budget), 1,
                        f"MEMORY.md is {note.size:,} bytes, over the {budget:,}-byte budget by "
                        f"{note.size - budget:,} (budgets.memory_md_bytes); distill it and move "
                        "details into memory/ notes")


RULE = MemorySize
