from vaultkit.lint.rule import Rule

# markup that says nothing by itself: list, quote, heading and table marks, rules, checkboxes
_MARKUP = " \t#>-*+|:=_`[]xX."
_MIN_LINE_BYTES = 12  # a line under this (marks stripped; UTF-8, so 4 CJK characters) is trivial
_SECTION_LINES = 3  # an entry written again: at least this many non-trivial body lines
# any other run written again: non-blank and non-trivial lines (a heartbeat's status block
# repeated under each entry runs to 10 lines; the flush copies seen ran to 28)
_RUN_LINES, _RUN_SUBSTANTIAL = 12, 8
_SEED = 3  # lines hashed to find a candidate copy
_TRIES = 8  # earlier places a candidate is compared with
_WORK = 64  # line comparisons per line of the file, at most: a hostile file stays linear


def _substantial(line: str) -> bool:
    return len(line.strip(_MARKUP).encode("utf-8")) >= _MIN_LINE_BYTES


class DuplicateBlock(Rule):
    """
    ## What it does
    Reports a block of a journal or a bootstrap file (`MEMORY.md`, `AGENTS.md`, `TOOLS.md`
    …) written again, byte for byte: each later copy at its first line, naming the line
    of the first copy. A block is either a whole entry, from an entry heading (the level
    that carries the file's entries, `##` in most journals and in MEMORY.md) to the next
    heading of its level or above, with at least 3 lines in its body that say something;
    or any run of 12 or more non-blank lines, 8 of them saying something. A copy next to
    its original, or several entries copied together, is one finding per copy. Blank
    lines and trailing spaces do not count.

    Not reported: lines that are repeated on purpose and say little by themselves (`- none`,
    `---`, a table's separator row, `### Tasks` or `### 系统状态` over different bodies); a
    line "says something" when, without its list, quote, heading and table marks, it has 12
    bytes or more (4 CJK characters). A sub-section repeated under different entries (the
    same 5-line status block under each timed heartbeat) is no copy of an entry: only a run
    of 12 lines or more is reported there.

    Not fixable: a journal is append-only, `--fix` never rewrites its committed lines, and
    removing a committed copy is a rewrite `journal-append-only` reports. A copy not yet
    committed, or one in MEMORY.md, the owner deletes by hand.

    ## Why is this bad?
    Pre-compaction memory flushes write the same section again: one real journal holds the
    same 28-line block four times. OpenClaw's dreaming re-promotes a block into MEMORY.md
    byte for byte. Every copy is loaded into every session that reads the file, costs its
    tokens again, and pushes real entries out of search results and the bootstrap budget.

    ## Example
    ```markdown
    ## 14:10 — Pre-compaction flush
    - Deploy of the shop moved to Friday; the payment provider needs a new key
    - Sofia asked for the invoice export as CSV, not PDF
    - The backup cron failed twice on a full disk; cleaned /var/tmp

    ## 14:10 — Pre-compaction flush
    - Deploy of the shop moved to Friday; the payment provider needs a new key
    - Sofia asked for the invoice export as CSV, not PDF
    - The backup cron failed twice on a full disk; cleaned /var/tmp
    ```

    ```
    memory/2026-03-02.md:6:1: VK405 duplicate-block warning: lines 6-9 repeat lines 1-4 byte for byte (a block written again); keep one copy
    ```
    """

    name = "duplicate-block"
    code = "VK405"
    severity = "warning"

    def check(self, note, ctx):
        if note.error:
            return
        layer = ctx.layer_of(note)
        if layer not in ("journal", "bootstrap"):
            return
        lines = note.lines
        first = note.fm_span[1] if note.fm_span else 0  # (frontmatter is no block)
        # the non-blank lines: (line number, text without trailing spaces)
        kept = [(i + 1, text.rstrip()) for i, text in enumerate(lines[first:], first)
                if text.strip()]
        if len(kept) < 2 * (_SECTION_LINES + 1):
            return
        texts = [t for _, t in kept]
        where = {n: i for i, (n, _) in enumerate(kept)}
        section_end = self._entries(note, where, len(kept))
        heavy = [_substantial(t) for t in texts]
        seen: dict[tuple, list[int]] = {}
        copies: set[int] = set()  # where the copies reported start
        i = 0
        n = len(texts)
        budget = _WORK * n
        while i + _SEED <= n and budget > 0:
            key = tuple(texts[i:i + _SEED])
            if key[0] == key[1] == key[2]:
                i += 1  # one line repeated is no block (and would be compared everywhere)
                continue
            earlier = seen.get(key)
            best = None
            for j in (earlier or ())[:_TRIES]:
                k = 0
                # a copy ends where its original begins, and its original where a copy
                # reported begins: four copies are three findings, each naming the first
                while (i + k < n and j + k < i and texts[i + k] == texts[j + k]
                       and (k == 0 or j + k not in copies)):
                    k += 1
                budget -= k + 1
                if best is None or k > best[1]:
                    best = (j, k)
            if best is not None and self._block(i, best[1], section_end, heavy, texts):
                j, k = best
                yield self.diag(note.path, kept[i][0], 1,
                                f"lines {kept[i][0]}-{kept[i + k - 1][0]} repeat lines "
                                f"{kept[j][0]}-{kept[j + k - 1][0]} byte for byte (a block "
                                "written again); keep one copy")
                copies.add(i)
                for m in range(i, i + k):  # the copy's own lines are no original either
                    if m + _SEED <= n:
                        seen.setdefault(tuple(texts[m:m + _SEED]), []).append(m)
                i += k
                continue
            seen.setdefault(key, []).append(i)
            i += 1

    @staticmethod
    def _entries(note, where: dict, count: int) -> dict[int, int]:
        """Each entry heading's index among the non-blank lines -> the index just past its
        entry (the next heading of its level or above). The entry level is the smallest
        heading level under the title (H1) that the file uses."""
        headings = [h for h in note.headings if h.line in where]
        levels = {h.level for h in headings if h.level > 1} or {h.level for h in headings}
        if not levels:
            return {}
        level = min(levels)
        out = {}
        for a, h in enumerate(headings):
            if h.level != level:
                continue
            end = count
            for later in headings[a + 1:]:
                if later.level <= level:
                    end = where[later.line]
                    break
            out[where[h.line]] = end
        return out

    @staticmethod
    def _block(i: int, k: int, section_end: dict, heavy: list, texts: list) -> bool:
        """Is the copy of ``k`` lines at ``i`` a block: whole entries, or a long run?"""
        if k < _SEED or len(set(texts[i:i + k])) < _SEED:
            return False
        if k >= _RUN_LINES and sum(heavy[i:i + k]) >= _RUN_SUBSTANTIAL:
            return True
        end = section_end.get(i)
        if end is None or i + k < end:
            return False  # not from an entry's heading to its end
        return sum(heavy[i + 1:end]) >= _SECTION_LINES


RULE = DuplicateBlock
