import datetime as dt

from vaultkit.lint.rule import Rule
from vaultkit.lint.shared import unquoted_link

_KIND_NAMES = {
    "string": "text", "date": "a date (YYYY-MM-DD)", "list": "a list", "number": "a number",
    "boolean": "true or false",
}


def describe(value) -> str:
    """How YAML read a value, in a user's words."""
    if value is None:
        return "empty"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, (int, float)):
        return f"the number {value}"
    if isinstance(value, dt.datetime):
        return "a date and time"
    if isinstance(value, dt.date):
        return "a date"
    if isinstance(value, str):
        return f"the text {value!r}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def is_date(value) -> bool:
    if isinstance(value, dt.date):  # datetime is a date too
        return True
    if isinstance(value, str):
        try:
            dt.date.fromisoformat(value.strip()[:10])
        except ValueError:
            return False
        rest = value.strip()[10:]
        return rest == "" or rest[:1] in ("T", " ")
    return False


def has_kind(value, kind: str) -> bool:
    if kind == "any":
        return True
    if kind == "string":
        return isinstance(value, str)
    if kind == "date":
        return is_date(value)
    if kind == "list":
        return isinstance(value, list)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    return True


class FrontmatterSchema(Rule):
    """
    ## What it does
    Reports a property of a typed note that breaks its type's schema: a required
    property missing or empty (a warning: the note is typed, the owner fills it in), a
    value of the wrong type, or a value outside the allowed set (errors: Obsidian and
    the index misread the value). A key the profile aliases (`property_aliases: {type: [category]}`) stands in
    for the key it aliases when that one is absent. Types are text, date, list, number and boolean (list items are
    checked too); `status: done` on a decision is outside its set. Points at the property's own line (a missing one
    at the frontmatter's first line). Properties the schema does not name are allowed.

    The schema is the profile's `common_properties` (all types: `tags` a list of
    text, `aliases`, `description`, `date`, `updated`) overlaid with the type's own
    `properties`. A wrong `type:` value is left to `type-mismatch`, and an unquoted
    `[[link]]` to `property-link-unquoted`. Extend or change schemas in `vaultkit.toml`
    under `[types.NAME]`.

    ## Why is this bad?
    Obsidian, Dataview and INDEX.md read these properties by type: a decision without
    `status`, a `date` that is text, or `tags: urgent` (text, not a list) silently
    falls out of every view and query that filters on them.

    ## Example
    ```markdown
    ---
    date: 2026-02-08
    type: decision
    status: done
    tags: [community]
    ---
    ```

    ```
    memory/decisions/community.md:4:1: VK202 frontmatter-schema error: 'status' is 'done'; allowed: proposed, active, superseded, rejected
    ```
    """

    name = "frontmatter-schema"
    code = "VK202"
    severity = "error"

    def __init__(self):
        self._profile = None
        self._schemas: dict = {}

    def schema(self, profile, type_name):
        if self._profile is not profile:
            self._profile, self._schemas = profile, {}
        if type_name not in self._schemas:
            merged = dict(profile.common_properties)
            merged.update(profile.types[type_name].properties)
            self._schemas[type_name] = merged
        return self._schemas[type_name]

    def check(self, note, ctx):
        fm = note.frontmatter
        if fm is None:
            return
        type_name = ctx.type_of(note)
        if not type_name or type_name not in ctx.profile.types:
            return
        first = note.fm_span[0] if note.fm_span else 1
        for key, spec in self.schema(ctx.profile, type_name).items():
            written = ctx.profile.property_key(fm, key)  # the key, or an alias of it
            if written is None:
                if spec.required:
                    yield self._missing(note.path, first,
                                        f"required property '{key}' is missing ({type_name})")
                continue
            line = note.fm_keys.get(written, first)
            value = fm[written]
            key = written
            if value is None or value == "" or value == []:
                if spec.required:
                    yield self._missing(note.path, line,
                                        f"required property '{key}' is empty ({type_name})")
                continue
            if unquoted_link(value):
                continue  # property-link-unquoted says why
            if not has_kind(value, spec.type):
                yield self.diag(note.path, line, 1,
                                f"'{key}' is {describe(value)}; expected {_KIND_NAMES[spec.type]}")
                continue
            if spec.type == "list" and spec.items != "any":
                bad = [v for v in value if v is not None and not has_kind(v, spec.items)]
                if bad:
                    yield self.diag(note.path, line, 1,
                                    f"'{key}' holds {describe(bad[0])}; every item must be "
                                    f"{_KIND_NAMES[spec.items]}")
                    continue
            # a wrong type (or alias of it) is type-mismatch's finding
            if spec.enum and key not in ("type", *ctx.profile.property_aliases.get("type", ())):
                values = value if isinstance(value, list) else [value]
                for v in values:
                    if str(v) not in spec.enum:
                        yield self.diag(note.path, line, 1,
                                        f"'{key}' is {str(v)!r}; allowed: {', '.join(spec.enum)}")
                        break


    def _missing(self, path: str, line: int, message: str):
        """A required property not written yet: a warning. It is the profile's convention
        (INDEX.md shows less without it), never a value Obsidian misreads, and it is what
        `frontmatter-missing --fix` leaves for the owner to fill in: a fix must not turn
        one warning into errors that refuse the next commit. A configured severity
        (`[severity] frontmatter-schema`) still applies to it."""
        from vaultkit.core.plain import replace

        found = self.diag(path, line, 1, message)
        return found if found.severity != "error" else replace(found, severity="warning")


RULE = FrontmatterSchema
