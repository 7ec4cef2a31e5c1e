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

    Only a profile with an `index` layer keeps an index (`openclaw` does; the `obsidian`
    profile of a plain vault does not). Severity follows what is at stake. A generated
    region that is out of date is an
    error: the index the agent reads first is wrong. A workspace without INDEX.md, or
    with a hand-written one that has no generated region, follows another convention
    (many keep their own index, or none): that is a suggestion (`info`), shown but never
    failing a run or blocking a commit, not even with `--fail-on warning`. Set
    `[severity] index-stale = "error"` to hold every INDEX.md to the generated form.

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
    memory/INDEX.md:1:1: VK504 index-stale info: memory/INDEX.md does not exist; `vaultkit index` writes one the agent can read first (a suggestion)
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
        if vault.profile.layer("index") is None:
            return  # a profile without an index layer (a plain Obsidian vault) keeps none
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
            if not any(p.startswith(prefix) for p in vault.note_paths()):
                return  # no memory folder at all: nothing to index yet
            yield Diagnostic(self.name, self.code, "info", path, None, None,
                             f"{path} does not exist; `vaultkit index` writes one the agent "
                             "can read first (a suggestion)")
            return
        text = note.text
        if text == expected:
            return
        span = region_span(text)
        if span is None:  # a hand-written index: another convention, a suggestion
            fix = Fix("add the generated region to INDEX.md", [Edit(0, len(text), expected)])
            yield Diagnostic(self.name, self.code, "info", path, 1, 1,
                             "INDEX.md has no generated region (written by hand); "
                             "`vaultkit index` adds one below your text, which it keeps "
                             "(a suggestion)", fixable=True, fix=fix)
            return
        start, end = span
        new_start = len(text[:start])  # same prefix: render_index keeps it
        new_end = len(expected) - (len(text) - end)
        fix = Fix("regenerate the index region", [Edit(start, end, expected[new_start:new_end])])
        line = _first_diff_line(text, expected)
        yield self.diag(path, line, 1, "INDEX.md is out of date; run `vaultkit index`", fix=fix)


def _first_diff_line(a: str, b: str) -> int:
    la, lb = a.split("\n"), b.split("\n")
    for i, (x, y) in enumerate(zip(la, lb)):
        if x != y:
            return i + 1
    return min(len(la), len(lb)) + 1


RULE = IndexStale
