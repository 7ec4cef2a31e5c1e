from vaultkit.lint.rule import Rule

_WHAT = {
    "missing": "names no file: {runtime} imports nothing here",
    "circular": "closes a circle of imports",
    "too-deep": "is past the import depth {runtime} follows: the file is not loaded",
    "in-code": "sits inside a code span or block, where {runtime} does not expand imports",
    "outside": "leaves the project root: {runtime} refuses it and writes \"Import failed\" "
               "in its place",
}


class ImportProblem(Rule):
    """
    ## What it does
    Reports an `@path` import in a file Claude Code loads at session start (`CLAUDE.md`,
    `.claude/CLAUDE.md`, `CLAUDE.local.md`, `.claude/rules/*.md` and the files they
    import) that does not load what it names: the target does not exist, it closes a
    circle (`A` imports `B` imports `A`), it is more than four hops from the file Claude
    Code started from, or it is written inside a code span or fenced block (where imports
    are not expanded) while the file it names exists, which usually means the author
    expected it to load.

    Relative paths resolve against the importing file; a word after `@` that names no
    file and has no `/` or extension (`@team`, `@anthropic-ai`) is not taken for an
    import. Facts from code.claude.com/docs/en/memory ("Import additional files":
    relative to the file containing the import, "a maximum depth of four hops", "Import
    parsing skips Markdown code spans and fenced code blocks"), verified on 2026-12-02;
    earlier versions of that page said five hops, and the profile's
    `runtimes.claude-code.import_max_depth` changes it.

    Gemini CLI's imports in `GEMINI.md` are checked too, by its own rules: any `@word`
    after a space or line break is an import (a missing one is written into the text as
    `<!-- Import failed: ... -->`), five levels deep, none whose real path leaves the
    project root (google-gemini/gemini-cli `memoryImportProcessor.ts`, checked on
    2026-12-07).

    ## Why is this bad?
    The agent is told, in effect, "the rules are in this file", and the file never reaches
    it: a renamed or moved file, a loop, or a chain too deep silently drops instructions.

    ## Example
    ```
    CLAUDE.md:3:1: VK306 import-problem warning: @docs/agent-rules.md names no file: Claude Code imports nothing here
    ```
    """

    name = "import-problem"
    code = "VK306"
    severity = "warning"
    scope = "vault"

    def check_vault(self, ctx):
        from vaultkit.vault.runtimes import for_vault

        seen = set()
        for rc in for_vault(ctx.vault):
            for problem in rc.imports:
                key = (problem.path, problem.line, problem.target, problem.kind)
                if key in seen or ctx.vault.note(problem.path) is None:
                    continue
                seen.add(key)
                detail = f" ({problem.detail})" if problem.kind in ("circular", "too-deep") \
                    else ""
                what = _WHAT[problem.kind].replace("{runtime}", rc.label)
                yield self.diag(problem.path, problem.line, 1, f"@{problem.target} {what}{detail}")


RULE = ImportProblem
