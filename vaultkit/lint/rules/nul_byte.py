from vaultkit.lint.rule import Rule


class NulByte(Rule):
    """
    ## What it does
    Reports a Markdown file that holds a few stray NUL bytes in otherwise readable text,
    usually left by a torn or interrupted write. The rest of the file is checked as usual,
    with each NUL read as U+FFFD (as CommonMark does). Points at the line of the first
    one. A file where NULs are more than a tenth of the bytes is a binary blob or UTF-16
    and is `file-unreadable`'s finding instead.

    ## Why is this bad?
    `grep` treats a file with a NUL byte as binary ("Binary file matches") and prints
    none of its lines, so the retrieval step "folder + grep" silently skips the note;
    other tools cut the text at the NUL.

    ## Example
    ```
    memory/2026-03-15.md:42:1: VK003 nul-byte warning: 2 NUL bytes in the text (the first on this line); grep reads the file as binary: remove them (tr -d '\\000')
    ```
    """

    name = "nul-byte"
    code = "VK003"
    severity = "warning"

    def check(self, note, ctx):
        if note.error or not note.nul:
            return
        count, line = note.nul
        what = "1 NUL byte" if count == 1 else f"{count} NUL bytes (the first on this line)"
        yield self.diag(note.path, line, 1,
                        f"{what} in the text; grep reads the file as binary: remove "
                        "them (tr -d '\\000')")


RULE = NulByte
