from vaultkit.lint.rule import Rule

# Layers whose notes may carry another type's `type:` on purpose.
_EXEMPT_LAYERS = {"templates", "archive"}


class TypeMismatch(Rule):
    """
    ## What it does
    Reports a `type:` property that disagrees with the note's folder. For example
    `type: lesson` on a note under `decisions/`, `type: Decision` (case matters to queries), or a note
    outside every typed folder that claims a type (`type: decision` in
    `memory/semantic/`). Points at the `type:` line. A key the profile aliases to `type`
    (`property_aliases: {type: [category]}`) is read when `type:` is absent, if its value
    names a type. Templates and the archive are
    exempt. A missing `type:` is `frontmatter-schema`'s finding.

    ## Why is this bad?
    The folder decides where the agent looks (INDEX.md sections, the graph colours,
    `decisions/` greps); the property decides what queries and tools think the note is.
    When they disagree the note is misfiled in one of the two views: usually it was
    written in the wrong folder or copied from another type's template.

    ## Example
    ```
    memory/decisions/cron-trap.md:3:1: VK203 type-mismatch error: 'type: lesson' but the note is in memory/decisions/ (type decision); move it to memory/lessons/ or set 'type: decision'
    ```
    """

    name = "type-mismatch"
    code = "VK203"
    severity = "error"

    def check(self, note, ctx):
        fm = note.frontmatter
        key = ctx.profile.property_key(fm, "type") if fm else None
        if key is None:
            return
        value = fm[key]
        if not isinstance(value, str) or not value.strip():
            return  # wrong kind or empty: frontmatter-schema reports it
        value = value.strip()
        profile = ctx.profile
        if key != "type" and value not in profile.types and value.lower() not in profile.types:
            return  # an alias (category: 技术) naming no type is a free category, no claim
        line = note.fm_keys.get(key, 1)
        expected = ctx.type_of(note)
        if expected is None and ctx.folder_page(note) and profile.type_of(note.path):
            return  # a typed folder's own page (README.md): no note of the folder's type
        folder = note.folder + "/" if note.folder else "the vault root"
        if expected is not None:
            if value == expected:
                return
            if value.lower() == expected:
                yield self.diag(note.path, line, 1,
                                f"'{key}: {value}' differs from '{expected}' in case; queries "
                                f"compare exactly: set 'type: {expected}'")
                return
            other = profile.types.get(value) or profile.types.get(value.lower())
            where = (f"; move it to {profile.expand(other.folder)}/" if other else "")
            yield self.diag(note.path, line, 1,
                            f"'{key}: {value}' but the note is in {folder} (type {expected})"
                            f"{where} or set 'type: {expected}'")
            return
        layer = ctx.layer_of(note)
        if layer in _EXEMPT_LAYERS or not ctx.claimed(note):
            return  # unclaimed and fallback notes: unknown-location says where they belong
        spec = profile.types.get(value) or profile.types.get(value.lower())
        if spec is None:
            return
        yield self.diag(note.path, line, 1,
                        f"'{key}: {value}' but the note is in {folder}, not in "
                        f"{profile.expand(spec.folder)}/; move it there or drop the property")


RULE = TypeMismatch
