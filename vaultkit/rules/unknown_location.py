from vaultkit.rule import Rule


class UnknownLocation(Rule):
    """
    ## What it does
    Reports a Markdown file that no layer of the profile claims: not a bootstrap file,
    not a journal, not in the archive, not a typed note, not a knowledge note. Files
    directly in the memory folder are left to `journal-filename`, which says more.

    ## Why is this bad?
    The agent finds memory by layer: bootstrap files are injected, journals are read by
    date, typed notes through INDEX.md, knowledge through search. A file outside every
    layer is written once and never read again. It is usually a note saved in the wrong
    folder (`memory/decision/…` instead of `memory/decisions/…`) or a scratch file.

    ## Example
    ```
    memory/decision/launch.md:1:1: VK101 unknown-location no layer of profile 'openclaw' claims this file
    ```

    Move it where its layer lives, add a layer in `vaultkit.toml` (`[[layers]]`), or
    exclude it (`exclude = ["drafts/**"]`).
    """

    name = "unknown-location"
    code = "VK101"
    severity = "warning"

    def check(self, note, ctx):
        if ctx.vault.layer_of(note) is not None or note.error:
            return
        prefix = ctx.profile.memory_prefix
        rest = note.path[len(prefix):] if note.path.startswith(prefix) else None
        if rest is not None and "/" not in rest and prefix:
            return  # journal-filename's ground
        if not prefix and "/" not in note.path:
            return  # memory-only vault: the root holds the journals
        yield self.diag(note.path, 1, 1, f"no layer of profile '{ctx.profile.name}' claims "
                        "this file; move it into a layer's folder, or add a layer or an "
                        "exclude in vaultkit.toml")


RULE = UnknownLocation
