from vaultkit.core.plain import replace
from vaultkit.lint.rule import Rule


class BootstrapTruncation(Rule):
    """
    ## What it does
    Reports a file that a runtime reading this vault will silently cut at session start:
    a part of it never reaches the agent. Every runtime that applies (detected from the
    files present, or `runtimes = [...]` in `vaultkit.toml`) is simulated as
    `vaultkit context` shows it, and one finding per file names each runtime that cuts it,
    how much is lost, which lines, and points at the first line not loaded:

    - **OpenClaw** cuts a bootstrap file over `bootstrapMaxChars` (default 20,000) or past
      what is left of `bootstrapTotalMaxChars` (default 60,000), counted in UTF-16 units
      of the right-trimmed text (a CJK character is one, an emoji two), and keeps a head
      and a tail around a marker; an over-long `AGENTS.md` keeps 45% head, a digest of its
      policy lines and 15% tail. With under 64 units of the total left the remaining files
      are dropped whole. Since 2026.8.2 `USER.md` is also held to a fixed 4,000 that
      `bootstrapMaxChars` cannot raise (issue #136733; docs/context.md); with no OpenClaw
      install found to show the version, a cut only that cap makes is a warning, not an
      error (an older OpenClaw loads the file whole). Source: openclaw/openclaw `src/agents/embedded-agent-helpers/
      bootstrap.ts` (`buildBootstrapContextFiles`, `trimBootstrapContent`), verified on
      2026-12-02. The limits come from `openclaw.json` (`agents.defaults`, the agent's
      `agents.list[]` entry) when it sets them, else from `vaultkit.toml`
      (`[runtime.openclaw] per-file-max` / `total-max`), else from the defaults of the
      OpenClaw version installed on the machine (they changed between versions; see
      docs/context.md); the message names the source of the number.
    - **Codex** joins `AGENTS.md` (or `AGENTS.override.md`) from the git root down to the
      working folder and keeps the first `project_doc_max_bytes` (32,768) bytes; the rest
      is dropped without a marker. Source: openai/codex `codex-rs/core/src/project_doc.rs`,
      `codex-rs/config/src/config_toml.rs`, verified on 2026-12-02.

    - **Hermes Agent** loads `MEMORY.md` and `USER.md` whole up to `max(limit x 2, 4,000)`
      characters (2,200 and 1,375 are the limits its memory tool enforces) and past that
      keeps a 70% head and a 20% tail around a marker. **Codex memories** keeps the first
      and last 10,000 bytes of a `memory_summary.md` over 20,000 bytes (5,000 tokens).
      Sources: NousResearch/hermes-agent `tools/memory_tool.py`, openai/codex
      `codex-rs/core/src/memories/prompts.rs`, `codex-rs/utils/string/src/truncate.rs`,
      checked on 2026-12-07.

    Claude Code and Gemini CLI load their files in full; Claude Code's auto-memory index is
    checked by `auto-memory-cut`.

    ## Why is this bad?
    The runtime truncates without telling the agent: the rules, facts and protocols in the
    lost part are simply not in its context, and it acts as if they never existed.

    ## Example
    ```
    SOUL.md:150:1: VK303 bootstrap-truncation error: SOUL.md: OpenClaw loads 19,893 of its 25,599 chars (over the per-file limit of 20,000; default of the newest known version (no install found); no openclaw.json found): lines 150-207 are never loaded
    ```
    """

    name = "bootstrap-truncation"
    code = "VK303"
    severity = "error"
    scope = "vault"

    def check_vault(self, ctx):
        from vaultkit.vault.runtimes import for_vault

        cuts: dict[str, list] = {}
        for rc in for_vault(ctx.vault):
            for piece in rc.pieces:
                if piece.cut and piece.role != "auto memory":
                    cuts.setdefault(piece.path, []).append((rc, piece))
        for path, found in cuts.items():
            if ctx.vault.note(path) is None:
                continue  # a file above the vault: reported where it lives, not here
            parts = []
            line = min(p.first_lost_line or 1 for _, p in found)
            for rc, p in found:
                unit = "bytes" if rc.unit == "bytes" else "chars"
                if p.cut == "dropped":
                    parts.append(f"{rc.label} drops all {p.length:,} {unit} of it ({p.reason})")
                    continue
                lines = (f"lines {p.first_lost_line}-{p.last_lost_line}"
                         if p.last_lost_line != p.first_lost_line else f"line {p.first_lost_line}")
                where = f"; {rc.limits_source}" if rc.limits_source and rc.unit != "bytes" else ""
                parts.append(f"{rc.label} loads {p.kept:,} of its {p.length:,} {unit} "
                             f"({p.reason}{where}): {lines} "
                             f"{'are' if lines.startswith('lines') else 'is'} never loaded")
            found_diag = self.diag(path, line, 1, f"{path.rsplit('/', 1)[-1]}: " + "; ".join(parts))
            if all(p.assumed for _, p in found):
                # a cut only a version this machine did not show makes: a warning, never
                # a refused commit (an older OpenClaw loads the file whole)
                found_diag = replace(found_diag, severity="warning")
            yield found_diag


RULE = BootstrapTruncation
