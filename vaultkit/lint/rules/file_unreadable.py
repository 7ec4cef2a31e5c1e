from vaultkit.lint.rule import Rule


class FileUnreadable(Rule):
    """
    ## What it does
    Reports a Markdown file vaultkit could not read: bytes that are not UTF-8,
    binary content (NUL bytes making up more than a tenth of the file; a few stray ones
    are `nul-byte`'s), a file over the size limit (`budgets.max_file_bytes`),
    a file without read permission, or one that vanished during the scan. Also reports
    symlinks that point outside the vault, broken symlinks and symlink loops, which are
    never followed; a `.md` that is not a regular file (a FIFO would block every reader,
    a device such as `/dev/zero` never ends), which is never opened; and a file or folder
    whose name is not valid UTF-8 (shown with `\\xNN` escapes), which is left out.

    ## Why is this bad?
    The agent's `memory_get` and `memory_search` read the same files. A journal saved
    in another encoding, or a note that is really a binary blob, is memory the agent
    cannot see, and nothing else in the vault can be checked for it. A symlink out of
    the vault would let a tool read files that are not memory at all.

    ## Example
    A journal written by a tool in Latin-1:

    ```
    memory/2026-02-15.md:1:1: VK001 file-unreadable error: not valid UTF-8: byte 0xe9 at offset 18 (line 3)
    ```

    Re-save the file as UTF-8 (`iconv -f latin1 -t utf-8`).
    """

    name = "file-unreadable"
    code = "VK001"
    severity = "error"
    scope = "vault"

    def check_vault(self, ctx):
        for problem in ctx.vault.problems:
            yield self.diag(problem.rel, None, None, problem.message)
        notes = ctx.vault.notes
        # (reported for the notes a run reports on: a commit hook reads no other note; as
        # the vault holds them, an error is known without decoding a note from the cache)
        chosen = notes.entries().values() if ctx.targets is None else \
            [notes.entry(p) for p in sorted(ctx.targets) if p in notes]
        for note in chosen:
            if note.error:
                yield self.diag(note.path, 1 if "UTF-8" in note.error else None, None, note.error)


RULE = FileUnreadable
