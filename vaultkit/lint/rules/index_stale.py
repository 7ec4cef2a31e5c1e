from vaultkit.lint.diagnostics import Diagnostic, Edit, Fix
from vaultkit.lint.rule import Rule


class IndexStale(Rule):
    """
    ## What it does
    Reports `memory/INDEX.md` when it differs from what `vaultkit index` would write:
    the generated region between `<!-- vaultkit:index:start -->` and
    `<!-- vaultkit:index:end -->` is out of date, the markers are missing, or the file
    does not exist. The fix regenerates the region; text outside the markers is kept byte
    for byte. A hand-written INDEX.md without the markers is kept whole, and the generated
    region is appended after it; a missing file is created.

    A note whose file name no link can reach (a `#` or `|` in it, say: every wikilink and
    Markdown link to it would break) is left out of the index and reported here as a
    warning on that note, so that the index never holds a link `broken-link` rejects.

    ## Why is this bad?
    INDEX.md is the agent's entry point, read at the start of every session. A stale
    index hides new decisions and lessons and points at notes that were renamed, so the
    agent starts from an outdated map of its own memory.

    ## Example
    ```
    memory/INDEX.md:5:1: VK504 index-stale error: INDEX.md is out of date (lines 9-14 differ); run `vaultkit index`
    memory/semantic/a#b.md: VK504 index-stale warning: left out of memory/INDEX.md: no link to this file name resolves (it holds '#', '|', '[[' or a line break, or starts with a space); rename the file
    ```

    Run `vaultkit index` (or `vaultkit check --fix`). Commit it with the notes it lists.
    """

    name = "index-stale"
    code = "VK504"
    severity = "error"
    fixable = True
    scope = "vault"

    def check_vault(self, ctx):
        from vaultkit.core.errors import VaultkitError
        from vaultkit.links.indexgen import index_path, region_span, render_index

        vault = ctx.vault
        path = index_path(vault)
        note = vault.notes.get(path)
        if note is not None and note.error:
            return  # file-unreadable reports it
        try:
            expected = render_index(vault)
        except VaultkitError as exc:
            yield self.diag(path, 1, 1, f"{exc}".replace(f"{path}: ", "", 1))
            return
        for left in getattr(vault, "index_left_out", ()):
            yield Diagnostic(self.name, self.code, "warning", left, None, None,
                             f"left out of {path}: no link to this file name resolves (it "
                             "holds '#', '|', '[[' or a line break, or starts with a space); "
                             "rename the file")
        if note is None:
            prefix = vault.profile.memory_prefix
            if not any(p.startswith(prefix) for p in vault.notes):
                return  # no memory folder at all: nothing to index yet
            yield self.diag(path, None, None, f"{path} does not exist; run `vaultkit index` "
                            "to create it")
            return
        text = note.text
        if text == expected:
            return
        span = region_span(text)
        if span is None:
            fix = Fix("regenerate INDEX.md", [Edit(0, len(text), expected)])
            line = 1
            msg = "has no generated region (markers missing); run `vaultkit index`"
        else:
            start, end = span
            new_start = len(text[:start])  # same prefix: render_index keeps it
            new_end = len(expected) - (len(text) - end)
            fix = Fix("regenerate the index region",
                      [Edit(start, end, expected[new_start:new_end])])
            line = _first_diff_line(text, expected)
            msg = "is out of date; run `vaultkit index`"
        yield self.diag(path, line, 1, f"INDEX.md {msg}", fix=fix)


def _first_diff_line(a: str, b: str) -> int:
    la, lb = a.split("\n"), b.split("\n")
    for i, (x, y) in enumerate(zip(la, lb)):
        if x != y:
            return i + 1
    return min(len(la), len(lb)) + 1


RULE = IndexStale
