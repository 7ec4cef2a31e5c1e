from vaultkit.lint.rule import Rule

HEAD_RATIO = 0.75  # the runtime keeps about this much of the limit from the head, the rest from the tail
MIN_FILE_BUDGET = 64  # with less than this left of the total, the runtime skips the remaining files


def runtime_length(text: str) -> int:
    """Length as the runtime (JavaScript) counts it: UTF-16 code units of the right-trimmed text."""
    text = text.rstrip()
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le")) // 2


def _index(text: str, units: int) -> int:
    """Python index of the character at UTF-16 offset ``units``."""
    if text.isascii():
        return units
    count = 0
    for i, ch in enumerate(text):
        if count >= units:
            return i
        count += 2 if ord(ch) > 0xFFFF else 1
    return len(text)


def _line_at(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def simulate(files, max_chars: int, total_max: int):
    """What the runtime injects: ``[(note, length, kept)]`` in injection order."""
    remaining = max(1, total_max)
    out = []
    for note in files:
        length = runtime_length(note.text)
        if remaining < MIN_FILE_BUDGET:
            out.append((note, length, 0))
            continue
        limit = max(1, min(max_chars, remaining))
        kept = min(length, limit)
        remaining = max(0, remaining - kept)
        out.append((note, length, kept))
    return out


class BootstrapTruncation(Rule):
    """
    ## What it does
    Reports a bootstrap file the runtime will silently cut, over the per-file limit or
    past the set's total limit. That is a file longer than the per-file limit
    (`agents.defaults.bootstrapMaxChars`, default 20,000 characters), or one that no
    longer fits once the files before it in injection order have used up the total
    limit (`bootstrapTotalMaxChars`, default 60,000). The message says how many
    characters the agent silently loses and which lines, and points at the first lost
    line.

    The limits come from `openclaw.json` (JSON5; `$OPENCLAW_CONFIG_PATH`, the vault's
    parent folder, `~/.openclaw/`) when it sets them, else from the profile's
    `budgets.bootstrap_max_chars` and `budgets.bootstrap_total_max_chars`. Characters
    are counted as the runtime counts them (UTF-16 units of the right-trimmed text: a
    CJK character is one, an emoji two), not bytes. A cut file keeps about 75% of the
    limit from its head and 25% from its tail; the middle is dropped. With under 64
    characters of the total left, later files are dropped whole.

    ## Why is this bad?
    The runtime truncates without telling the agent: the rules, facts and protocols in
    the middle of the file are simply not in its context, and it acts as if they never
    existed. Nothing in the session shows that anything was lost.

    ## Example
    ```
    AGENTS.md:288:1: VK303 bootstrap-truncation error: AGENTS.md is 24,310 characters, over the runtime's per-file limit of 20,000 (the profile's budgets; no openclaw.json found): the agent silently loses 4,310 characters from the middle, lines 288-341 (keeps the first 15,000 and the last 5,000)
    ```
    """

    name = "bootstrap-truncation"
    code = "VK303"
    severity = "error"
    scope = "vault"

    def check_vault(self, ctx):
        from vaultkit.vault.openclaw import bootstrap_limits

        files = [n for n in ctx.vault.bootstrap() if not n.error]
        if not files:
            return
        max_chars, total_max, source = bootstrap_limits(ctx.vault)
        plan = simulate(files, max_chars, total_max)
        grand = sum(length for _, length, _ in plan)
        for note, length, kept in plan:
            if kept >= length:
                continue
            lost = length - kept
            if kept == 0:
                yield self.diag(
                    note.path, 1, 1,
                    f"{note.name}.md is dropped whole: the bootstrap files before it use up "
                    f"the runtime's total limit of {total_max:,} characters ({source}); all "
                    f"{length:,} characters are silently lost (the set is {grand:,})")
                continue
            head = int(kept * HEAD_RATIO)
            tail = kept - head
            text = note.text.rstrip()
            first = _line_at(text, _index(text, head))
            last = _line_at(text, max(_index(text, length - tail) - 1, 0))
            lines = f"line {first}" if first == last else f"lines {first}-{last}"
            if kept == max_chars:
                why = (f"over the runtime's per-file limit of {max_chars:,} ({source})")
            else:
                why = (f"and only {kept:,} of the total limit of {total_max:,} are left after "
                       f"the files injected before it ({source}; the set is {grand:,})")
            yield self.diag(
                note.path, first, 1,
                f"{note.name}.md is {length:,} characters, {why}: the agent silently loses "
                f"{lost:,} characters from the middle, {lines} (keeps the first {head:,} and "
                f"the last {tail:,})")


RULE = BootstrapTruncation
