import re

from vaultkit.core.lazyre import lazy_re
from vaultkit.lint.rule import Rule
from vaultkit.lint.shared import is_bootstrap_file

# a dreaming candidate row: its lead, then the ranking fields dreaming stages it with
# (short-term-promotion.ts, isContaminatedDreamingSnippet)
_CANDIDATE_LEAD = lazy_re(r"\b(?:Candidate|Reflections?|Possible Lasting Truths?):", re.I)
_CANDIDATE_FIELD = lazy_re(r"\b(?:confidence:\s*\d|status:\s*staged\b|evidence:\s*memory/)", re.I)
_DREAMING_FENCE = lazy_re(r"<!--\s*openclaw:dreaming:[a-z][a-z0-9-]*:(?:start|end)", re.I)
# the envelope OpenClaw puts around an inbound message, and its ids
# (quoted, as in the envelope's JSON: a fact that names a chat_id in prose is no envelope)
_TRANSPORT = lazy_re(r"\b(?:Conversation info|Sender) \(untrusted metadata\)"
                     r"|\"(?:message_id|sender_id|chat_id)\"\s*:", re.I)
_FENCE_INLINE = lazy_re(r"```|~~~")
_JSON_KEY = lazy_re(r"\"[^\"\n]{1,64}\"\s*:")


def junk_kind(text: str) -> str | None:
    """What a promoted line is when it is no fact: a staged candidate, transport
    metadata, raw code or configuration; else None."""
    if _DREAMING_FENCE.search(text) or (_CANDIDATE_LEAD.search(text)
                                        and _CANDIDATE_FIELD.search(text)):
        return "a staged dreaming candidate row (`Candidate: … confidence: …`), not a fact"
    if _TRANSPORT.search(text):
        return ("transport metadata of a message (\"Conversation info (untrusted metadata)\", "
                "message or sender ids), not a fact")
    if _FENCE_INLINE.search(text) or ("{" in text and len(_JSON_KEY.findall(text)) >= 2):
        return "raw code or configuration, not a fact"
    return None


class PromotedJunk(Rule):
    """
    ## What it does
    Reports a line OpenClaw's dreaming promoted into `MEMORY.md` (in a
    `## Promoted From Short-Term Memory (DATE)` section) that is no fact: one finding per
    such line, naming the promotion that wrote it.

    - **a staged candidate row**: dreaming's own scratch promoted as memory, a
      `Candidate:` / `Reflections:` line with its ranking fields (`confidence: 0.62`,
      `status: staged`, `evidence: memory/…`), or a managed
      `<!-- openclaw:dreaming:light:start -->` block caught in the snippet;
    - **transport metadata**: the envelope of an inbound message,
      `Conversation info (untrusted metadata)` or `Sender (untrusted metadata)` with its
      `"message_id"`, `"sender_id"`, `"chat_id"`;
    - **raw code or configuration**: a fenced code block in the section, a fence
      collapsed into one promoted line, or a JSON object (two quoted keys or more).

    Dreaming's markers themselves (`<!-- openclaw-memory-promotion:… -->`, the
    `[score=… source=…]` trailer, `Source: path#Lx-Ly`, `<!-- trigger: … -->`,
    `<!-- importance: N -->`) are its own and never reported; nor is anything outside
    a promoted section. A credential promoted there is `secret-in-memory`'s (an error).

    Sources, checked 2026-12-07: openclaw/openclaw
    `extensions/memory-core/src/short-term-promotion.ts` (`buildPromotionSection`, and
    `isContaminatedDreamingSnippet`: the candidate shape OpenClaw itself refuses in newer
    versions: older ones promoted it); public workspaces' MEMORY.md files hold each kind
    under a promotion heading (seen 2026-12-07); docs/dreaming.md.

    ## Why is this bad?
    `MEMORY.md` is injected into every session. A candidate row, a message envelope or a
    pasted config block there costs its tokens in every turn, teaches the agent nothing
    durable, and pushes real facts toward the runtime's cut. It is a warning: the file
    still works, and the owner decides what to keep.

    ## Example
    ```markdown
    ## Promoted From Short-Term Memory (2026-04-19)

    <!-- openclaw-memory-promotion:memory:memory/2026-04-12.md:438:441 -->
    - - Candidate: Theme: `assistant` kept surfacing; confidence: 1.00; evidence: memory/.dreams/session-corpus/2026-04-07.txt:2-2 [score=0.845 recalls=0 avg=0.620 source=memory/2026-04-12.md:3-6]
    ```

    ```
    MEMORY.md:4:1: VK406 promoted-junk warning: promoted by '## Promoted From Short-Term Memory (2026-04-19)' (line 1): a staged dreaming candidate row (`Candidate: … confidence: …`), not a fact; delete the line, or write the fact it holds in your own words
    ```
    """

    name = "promoted-junk"
    code = "VK406"
    severity = "warning"

    def check(self, note, ctx):
        if note.error or not is_bootstrap_file(ctx, note, "MEMORY.md"):
            return
        if "Promoted From Short-Term Memory" not in note.text:
            return
        from vaultkit.vault.promoted import promoted_blocks

        for block in promoted_blocks(note.lines):
            fenced = set()
            for start, end in block.fences:
                fenced.update(range(start, end + 1))
                yield self._report(note, start, block, "raw code or configuration (a fenced "
                                   f"block, lines {start}-{end}), not a fact", "block")
            for line, text in block.lines:
                if line in fenced:
                    continue
                kind = junk_kind(text)
                if kind:
                    yield self._report(note, line, block, kind)

    def _report(self, note, line, block, kind, what="line"):
        return self.diag(note.path, line, 1, f"promoted by '{block.heading}' (line "
                         f"{block.line}): {kind}; delete the {what}, or write the fact it "
                         "holds in your own words")


RULE = PromotedJunk
