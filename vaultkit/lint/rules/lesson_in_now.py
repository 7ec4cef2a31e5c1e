from vaultkit.core.lazyre import lazy_re
from vaultkit.vault.phrases import matcher
from vaultkit.lint.rule import Rule
from vaultkit.lint.shared import is_bootstrap_file, prose

_HEADING = lazy_re(r"^ {0,3}#{1,6}(?:[ \t]+|$)")


class LessonInNow(Rule):
    """
    ## What it does
    Reports a lesson in `NOW.md`: a heading or line whose own words match the
    profile's lesson phrases. Those are "Lessons", "Lesson learned", "takeaway",
    `#lesson`, "教训", "经验教训", "复盘" and more; any line counts (heading, list
    item, paragraph), and the finding points at it. Links
    are not the line's words, so a status item that links to a lesson
    (`- fixing cron, see [[lessons/cron-scheduling]]`) is fine, and nothing inside code
    blocks, inline code or comments counts.

    Phrases match case-insensitively, Latin ones on word boundaries, CJK ones anywhere;
    an entry starting with `re:` is a regular expression. Add your own in
    `vaultkit.toml`: `[phrases] lesson = ["gotcha", "re:^note to self"]`.

    ## Why is this bad?
    NOW.md is the workbench: who is doing what, what is blocked, refreshed every
    heartbeat. Lessons written there are overwritten at the next refresh, or pile up
    in a file loaded into every session. The seeds' rule: never mix the layers;
    lessons go to `memory/lessons/<topic>.md`.

    ## Example
    ```markdown
    # NOW
    - Deploying v2 (blocked on review)

    ## Lessons learned
    - printf >> never loses appended lines
    ```

    ```
    NOW.md:4:4: VK401 lesson-in-now warning: NOW.md heading holds a lesson ('Lessons learned'); NOW.md is the status board: move lessons to memory/lessons/<topic>.md
    ```
    """

    name = "lesson-in-now"
    code = "VK401"
    severity = "warning"

    def check(self, note, ctx):
        if not is_bootstrap_file(ctx, note, "NOW.md"):
            return
        find = matcher(ctx.profile.phrases.lesson)
        if not find:
            return
        lessons = ctx.profile.expand("{memory}/lessons").strip("/") or "lessons"
        lines = note.lines
        for number in range(note.body_start, note.line_count + 1):
            if note.in_code(number):
                continue
            line = lines[number - 1]
            if not line.strip():
                continue
            text = prose(line)
            m = find.find(text)
            if m is None:
                continue
            kind = "heading" if _HEADING.match(line) else "line"
            column = len(line[:m.start()]) + 1
            yield self.diag(note.path, number, column,
                            f"NOW.md {kind} holds a lesson ({m.group(0).strip()!r}); NOW.md is "
                            f"the status board: move lessons to {lessons}/<topic>.md")


RULE = LessonInNow
