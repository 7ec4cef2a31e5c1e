import re

from vaultkit.core.lazyre import lazy_re
from vaultkit.lint.rule import Rule
from vaultkit.vault.model import MARKDOWN, WIKI
from vaultkit.vault.resolve import M_ATTACHMENT, M_BLOCK, M_HEADING, M_NOTE


# a static site's route: /guide/intro, /zh/guide/ (no file extension on the last part)
_ROUTE = lazy_re(r"^/(?:[^/.\s]+/)*[^/.\s]*/?$")


class BrokenLink(Rule):
    """
    ## What it does
    Reports a link or embed whose target does not exist: no note or attachment the link
    resolves to (Obsidian's rules: exact path, then the note's own folder, then the
    shortest path; case-insensitive), or a `#Heading` (chained `#H1#H2` too) or `#^block`
    the target note does not have. The finding points at the link's line and column and
    names what is missing. Links inside code, comments and math are never links;
    external URLs are not checked; links that hold `{{placeholders}}` are skipped.

    Left alone as well: placeholder links written as examples (`[text](url)`,
    `[name](link)`, `[x](...)`: the profile's `placeholder_link` phrases, matched
    against the whole target), a static site's routes (`[Guide](/guide/intro)`, a
    vault-absolute Markdown link with no file extension that names no note), and every
    link in notes under the `[links] exclude` globs: vendored packages and generated
    sites copied into the vault (`tmp/**`, `**/vendor/**`, `**/site-packages/**`,
    `**/dist/**` by default; `node_modules/` and `.venv/` are never read at all).

    `[links] forward-links = "allow"` in `vaultkit.toml` accepts a link to a note that
    does not exist yet (a forward link: Obsidian shows it grey, a Zettelkasten writes
    them on purpose) while a missing heading, block or attachment is still reported.
    The agent profile (`openclaw`) reports forward links; the `obsidian` profile allows
    them, and so does a subfolder one or two levels down with its own `.obsidian/` folder
    (an Obsidian knowledge base kept inside an agent workspace is a vault of its own, and
    Obsidian's policy holds for its notes).
    Templates (their links are placeholders, `[[文件名]]`) and session transcripts
    (runtime output) are not link sources, and `[[...]]`
    text the profile's `not_link` phrases match is no link: OpenClaw's
    `[[reply_to_current]]` directive, scraped `[[email&#160;protected]]`, JSON arrays
    `[["a","b"]]` written outside code.

    A wikilink written with another note's alias (`[[Sofi]]` where `Sofi` is only in
    `People/Sofia.md`'s `aliases`) is reported with the link to write instead
    (`[[Sofia|Sofi]]`), even where forward links are allowed: Obsidian resolves links by
    file name and path only, never by `aliases`: its link suggestions insert
    `[[Artificial Intelligence|AI]]` for an alias, "rather than just using the alias as the
    link destination (`[[AI]]`)" (Obsidian Help, Linking notes and files › Aliases, checked
    2026-12-07), so the click opens a new empty note `Sofi.md` instead of Sofia's. Alias
    matching ignores case, as Obsidian's link matching does; only a target without a
    folder is matched (an alias is a name, not a path).

    ## Why is this bad?
    The agent follows links from INDEX.md and from note to note; a broken link is a dead
    end it cannot see, and in Obsidian it silently creates an empty note when clicked. A
    link to a note that is planned but not yet written is still reported (as a warning)
    so that it is not forgotten.

    ## Example
    ```
    memory/decisions/pricing.md:12:5: VK501 broken-link warning: no note 'launch-plan' in the vault
    memory/decisions/pricing.md:14:1: VK501 broken-link warning: 'memory/projects/launch.md' has no heading 'Risks'
    Daily/2026-03-02.md:3:8: VK501 broken-link warning: no note 'Sofi': it is an alias of 'People/Sofia.md', and Obsidian resolves no alias (a click opens a new empty note): write [[Sofia|Sofi]] (link [[Sofi]])
    ```

    Fix the target, create the note, or rename the heading. Links that differ only in
    case resolve (`[[Launch Plan]]` opens `launch plan.md`).
    """

    name = "broken-link"
    code = "VK501"
    severity = "warning"

    def check(self, note, ctx):
        if not note.links or note.path.startswith("../") or not ctx.link_source(note):
            return
        settings = ctx.profile.links
        forward = settings.forward_links == "allow"
        placeholder = None
        excluded = None  # asked at the first broken link: most notes have none
        resolved = ctx.resolve_all(note)
        for link, res in zip(note.links, resolved):
            if res.missing is None:
                continue
            if excluded is None:
                excluded = settings.excluded(note.path)
            if excluded:
                return  # a vendored package or generated site: its links are not the vault's
            if not ctx.is_link(link):
                continue
            if "{{" in link.target or "{{" in link.subpath:
                continue  # a template placeholder, filled in when the template is used
            holders = _holders(ctx, link) if res.missing == M_NOTE else ()
            if holders:
                yield self.diag(note.path, link.line, link.column or 1,
                                _alias_message(ctx, note, link, holders))
                continue
            if res.missing == M_NOTE and (forward or _in_nested_vault(ctx, note.path)):
                continue  # a forward link to a note not written yet, by the vault's choice
            if link.kind == MARKDOWN and res.missing in (M_NOTE, M_ATTACHMENT):
                if _ROUTE.match(link.target) and not link.subpath.startswith("^"):
                    continue  # a static site's route (/guide/intro): the site resolves it
                if placeholder is None:
                    placeholder = _placeholders(tuple(ctx.profile.phrases.placeholder_link))
                if placeholder(link.target.strip()):
                    continue  # [text](url), [name](link): an example, not a link
            what = "embed" if link.embed else "link"
            if res.missing == M_HEADING:
                where = "this note" if res.path == note.path else f"'{res.path}'"
                msg = (f"{where} has no heading '{res.detail}' ({what} {link.raw})"
                       f"{_heading_hint(ctx.note(res.path), res.detail)}")
            elif res.missing == M_BLOCK:
                where = "this note" if res.path == note.path else f"'{res.path}'"
                msg = f"{where} has no block '{res.detail}' ({what} {link.raw})"
            elif res.missing == M_ATTACHMENT:
                msg = f"no attachment '{link.target}' in the vault ({what} {link.raw})"
            else:
                msg = f"no note '{link.target}' in the vault ({what} {link.raw})"
            yield self.diag(note.path, link.line, link.column or 1, msg)


def _holders(ctx, link) -> list[str]:
    """The notes whose ``aliases`` hold a missing wikilink's target (by case-folded name)."""
    if link.kind != WIKI or not link.target or "/" in link.target:
        return []
    return ctx.alias_holders(link.target)


def _alias_message(ctx, note, link, holders: list[str]) -> str:
    holder = holders[0]
    text = ctx.link_text(holder, note.path)
    subpath = f"#{link.subpath}" if link.subpath else ""
    shown = link.alias if link.alias else link.target
    what = "embed" if link.embed else "link"
    bang = "!" if link.embed else ""
    also = f" (also of {', '.join(repr(h) for h in holders[1:3])})" if len(holders) > 1 else ""
    return (f"no note '{link.target}': it is an alias of '{holder}'{also}, and Obsidian "
            f"resolves no alias (a click opens a new empty note): write "
            f"{bang}[[{text}{subpath}|{shown}]] ({what} {link.raw})")


def _placeholders(phrases: tuple[str, ...]):
    """A test for a whole link target being one of the placeholder phrases (plain ones
    case-insensitively, ``re:`` ones as a full match)."""
    plain = {p.casefold() for p in phrases if not p.startswith("re:")}
    regexes = [re.compile(p[3:], re.IGNORECASE) for p in phrases if p.startswith("re:")]

    def test(target: str) -> bool:
        return target.casefold() in plain or any(r.fullmatch(target) for r in regexes)

    return test


def _heading_hint(target, wanted: str) -> str:
    """A "did you mean" naming the target's headings that hold the wanted words (a
    journal's ``### 09:10 — Kickoff`` for ``#Kickoff``), else the closest ones."""
    if target is None or not target.headings:
        return ""
    texts = list(dict.fromkeys(h.text for h in target.headings))
    low = wanted.lower().strip()
    holding = [t for t in texts if low and low in t.lower()]
    if holding:
        named = " or ".join(f"'{t}'" for t in holding[:3])
        return f"; did you mean {named}?"
    from vaultkit.vault.phrases import did_you_mean

    return did_you_mean(wanted, texts)


def _in_nested_vault(ctx, path: str) -> bool:
    """True for a note inside a subfolder that is an Obsidian vault of its own (its own
    ``.obsidian/``): Obsidian's policy holds there, forward links allowed."""
    from vaultkit.links.obsidian import in_folders

    nested = ctx.nested_vaults()
    return bool(nested) and in_folders(path, nested)


RULE = BrokenLink
