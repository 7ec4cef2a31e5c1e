"""``vaultkit context``: what each agent runtime loads from the vault at session start."""

from __future__ import annotations

import sys

HELP = ("show what each runtime (OpenClaw, Claude Code, Codex, Hermes Agent, Gemini CLI) loads "
        "at session start, and what it cuts")
DESCRIPTION = (
    "Simulate, from the runtimes described in the profile, the files each agent runtime "
    "loads from this vault at session start: in its order, each file's length and what is "
    "loaded of it in the runtime's own unit (UTF-16 units or bytes), what is cut and where, "
    "the total and an estimate of its share of the model's context window. --show prints "
    "the loaded text itself with the cut markers the runtime writes. Which runtimes apply "
    "is detected from the files present (openclaw.json, SOUL.md or memory/; CLAUDE.md or .claude/; "
    "AGENTS.override.md or .codex/, or an AGENTS.md alone) unless vaultkit.toml says "
    "`runtimes = [...]`. A file that is a symlink out of the repository (or into .git/), or "
    "that is not a regular file, is not read: its row says so. --show leaves out the "
    "text of a file with other hard links. Exit 0; 1 when a runtime cuts a file or a file "
    "it would load is not read.")


def add_arguments(p) -> None:
    from vaultkit.cli import add_format_arguments, add_output_argument, add_vault_arguments

    p.add_argument("vault", nargs="?", default=None, metavar="PATH",
                   help="the vault (default: here)")
    p.add_argument("--runtime", action="append", metavar="NAME",
                   help="only this runtime (openclaw, claude-code, codex, hermes, codex-memories, "
                        "gemini-cli, or one the profile adds); repeatable. Default: the runtimes detected")
    p.add_argument("--session", choices=("main", "cron", "subagent", "group"),
                   help="OpenClaw's session type: which bootstrap files it gets "
                        "(default: main)")
    p.add_argument("--show", action="store_true",
                   help="print the loaded text of each file, with the runtime's cut markers")
    add_format_arguments(p, ("text", "json"))
    add_output_argument(p)
    p.add_argument("--openclaw-config", metavar="PATH",
                   help="openclaw.json to read the bootstrap limits from (default: "
                        "$OPENCLAW_CONFIG_PATH, else openclaw.json in the vault's parent "
                        "folder, else ~/.openclaw/openclaw.json)")
    p.add_argument("--agent", metavar="ID",
                   help="apply this agent's bootstrapMaxChars from agents.list[]")
    add_vault_arguments(p)


def run(args) -> int:
    import json

    from vaultkit.cli.commands._common import open_vault
    from vaultkit.core.errors import VaultkitError
    from vaultkit.vault.runtimes import contexts, detected

    # a folder named on the command line, "." too, is a vault when it holds notes (as for
    # `check`): a repository with only CLAUDE.md or GEMINI.md has no other vault marker
    vault = open_vault(args, args.vault or ".", named=args.vault is not None)
    known = list(vault.profile.runtimes)
    if args.runtime:
        unknown = [r for r in args.runtime if r not in known]
        if unknown:
            raise VaultkitError(f"--runtime: unknown runtime {unknown[0]!r} (known: "
                                f"{', '.join(known) or 'none in this profile'})")
        names = list(dict.fromkeys(args.runtime))
    else:
        names = detected(vault)
    if args.session and not any(vault.profile.runtimes[n].sessions for n in names):
        raise VaultkitError("--session applies to a runtime with session types (openclaw); "
                            f"none of {', '.join(names) or 'the runtimes'} has them")
    found = contexts(vault, names, args.session, openclaw_config=args.openclaw_config,
                     agent=args.agent)
    advice = {(c.runtime, p.path): a for c in found
              for p, a in cut_advice(vault, c, args.openclaw_config, args.agent)}
    if args.format == "json":
        data = {"vault": str(vault.root), "runtimes": [c.to_dict() for c in found]}
        for item, ctx in zip(data["runtimes"], found):
            for f in item["files"]:
                f["advice"] = advice.get((ctx.runtime, f["path"]))
        if args.show:
            for item, ctx in zip(data["runtimes"], found):
                item["text"] = ctx.shown_text  # (a hard-linked file's text left out)
        out = json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    else:
        out = render_text(found, args.show, detected=args.runtime is None, advice=advice)
    sys.stdout.write(out)  # -o FILE: written whole by the command line's one output path
    return 1 if any(c.cut or c.refused for c in found) else 0


def _unit(unit: str) -> str:
    return "bytes" if unit == "bytes" else "chars"


def _lines(note, first: int) -> str:
    last = max(note.line_count, first)
    return f"line {first}" if last == first else f"lines {first}–{last}"


def cut_advice(vault, ctx, openclaw_config=None, agent=None) -> list[tuple[object, str]]:
    """For each file ``ctx``'s runtime cuts or drops, the smallest change that stops it:
    the lines to move out (from the one where the file passes what it may use, as
    ``memory-size`` points at its crossing line), or the setting to raise, by name, to the
    value that loads everything."""
    from vaultkit.lint.rules.memory_size import crossing_line

    cut = [p for p in ctx.pieces if p.cut]
    if not cut:
        return []
    out = []
    if ctx.runtime == "openclaw" or (ctx.unit == "utf16" and ctx.total_max is not None
                                     and ctx.per_file_max is not None):
        from vaultkit.vault.openclaw import bootstrap_limits_detail

        *_, key_per, key_total, config = bootstrap_limits_detail(vault, openclaw_config, agent)
        where = f"in {config}" if config is not None else "in openclaw.json"
        per_file = ctx.per_file_max

        def need_for(limit: int) -> int:
            # the total that cuts nothing with this per-file limit: each file up to it,
            # each missing file's marker
            return sum(p.injected_length if p.role == "missing"
                       else min(p.length, limit, p.cap or limit)
                       for p in ctx.pieces if not p.refused)

        need = need_for(per_file)
        for p in cut:
            note = vault.note(p.path)
            if p.cut == "dropped":
                out.append((p, f"to load it: raise {key_total} to {need:,} {where}, or "
                               f"shorten the files before it by {p.length:,} chars"))
                continue
            if p.cap is not None and p.length > p.cap:
                # a fixed cap (USER.md's): no setting loads more, only a shorter file does
                kept = min(per_file, p.cap)
                move = (f"move {_lines(note, crossing_line(note, kept, 'utf16'))} to a topic "
                        "note in memory/ (or split the file), or " if note else "")
                also = [f"{key_per} to {p.cap:,}"] if per_file < p.cap else []
                if need > ctx.total_max:
                    also.append(f"{key_total} to {need:,}")
                out.append((p, f"to load it whole: {move}shorten it to {p.cap:,} chars: "
                               f"{p.path.rsplit('/', 1)[-1]}'s fixed cap, which {key_per} "
                               "cannot raise" + (f" (and raise {' and '.join(also)} {where})"
                                                 if also else "")))
                continue
            if p.reason.startswith("over the per-file limit"):
                move = (f"move {_lines(note, crossing_line(note, per_file, 'utf16'))} to a "
                        "topic note in memory/ (or split the file), or " if note else "")
                raised = need_for(p.length)
                out.append((p, f"to load it whole: {move}raise {key_per} to {p.length:,} "
                               f"{where}" + (f" (and {key_total} to {raised:,})"
                                             if raised > ctx.total_max else "")))
                continue
            left = p.injected_length
            move = (f"move {_lines(note, crossing_line(note, left, 'utf16'))} to a topic note "
                    "in memory/, or " if note else "")
            out.append((p, f"to load it whole: {move}raise {key_total} to {need:,} {where}"))
        return out
    if ctx.unit == "bytes" and ctx.total_max is not None:  # Codex: one byte budget, in order
        need = sum(p.length for p in ctx.pieces if not p.refused)
        for p in cut:
            note = vault.note(p.path)
            move = (f"move {_lines(note, p.first_lost_line or 1)} to a topic note, or "
                    if note and p.cut == "tail" else "")
            out.append((p, f"to load it whole: {move}raise project_doc_max_bytes to {need:,} "
                           f"in ~/.codex/config.toml (and [runtime.{ctx.runtime}] total-max in "
                           "vaultkit.toml)"))
        return out
    for p in cut:  # an auto-memory index read in part: the rest belongs in its topic files
        note = vault.note(p.path)
        if note and p.first_lost_line:
            out.append((p, f"to load it whole: move {_lines(note, p.first_lost_line)} into "
                           "topic files beside it, which load on demand"))
    return out


def render_text(found, show: bool, *, detected: bool = True, advice=None) -> str:
    from vaultkit.vault.runtimes import shown

    if not found:
        return ("No runtime detected: no openclaw.json, SOUL.md, CLAUDE.md, .claude/, "
                "AGENTS.md, .codex/, memories/, GEMINI.md or .gemini/ in the workspace (say which in vaultkit.toml: "
                "runtimes = [\"openclaw\"], or pass --runtime).\n")
    lines: list[str] = []
    for ctx in found:
        unit = _unit(ctx.unit)
        head = f"{ctx.label} ({ctx.runtime})"
        if ctx.session:
            head += f", {ctx.session} session"
        lines.append(head)
        limits = []
        if ctx.per_file_max is not None:
            limits.append(f"{ctx.per_file_max:,} {unit} per file")
        if ctx.total_max is not None:
            limits.append(f"{ctx.total_max:,} {unit} in all")
        if limits:
            lines.append(f"  limits: {', '.join(limits)} ({ctx.limits_source})")
        width = max([len(p.path) for p in ctx.pieces] + [4])
        if ctx.pieces:
            lines.append(f"      {'file':<{width}}  {'length':>8}  {'loaded':>8}  "
                         f"({unit}; loaded: what goes into context, markers included)")
        for n, p in enumerate(ctx.pieces, 1):
            what = p.role if not p.via else f"import from {p.via}"
            if p.refused:
                state = f"NOT READ: {p.refused.removesuffix('; not read')}"
            elif p.cut == "dropped":
                state = f"DROPPED: {p.length:,} {unit} not loaded ({p.reason})"
            elif p.cut:
                lost = (f"lines {p.first_lost_line}-{p.last_lost_line}"
                        if p.last_lost_line and p.last_lost_line != p.first_lost_line
                        else f"line {p.first_lost_line}")
                state = (f"CUT: {p.lost:,} of {p.length:,} {unit} not loaded, {lost} "
                         f"({p.reason})")
            elif p.role == "missing":
                state = "a marker is injected in its place"
            else:
                state = "loaded whole"
            lines.append(f"  {n:>2}. {p.path:<{width}}  {p.length:>8,}  "
                         f"{p.injected_length:>8,}  {what}; {state}")
            if (advice or {}).get((ctx.runtime, p.path)):
                lines.append(f"      {' ' * width}  {advice[(ctx.runtime, p.path)]}")
        lines.append(f"  total {ctx.total:,} {unit} loaded, ~{ctx.tokens:,} tokens, "
                     f"{ctx.share:.1%} of a {ctx.window_tokens:,}-token context window")
        for problem in ctx.imports:
            lines.append(f"  import {problem.path}:{problem.line} @{problem.target}: "
                         f"{problem.kind} ({problem.detail})")
        for note in ctx.notes:
            lines.append(f"  note: {note}")
        if show:
            for p in ctx.loaded:
                lines.append(f"----- {ctx.runtime}: {p.path} -----")
                lines.append(shown(p))
                if p.cut == "tail" and ctx.runtime != "openclaw":
                    lines.append(f"----- {ctx.runtime} stops here: lines "
                                 f"{p.first_lost_line}-{p.last_lost_line} are not loaded "
                                 "(the runtime writes no marker into the text) -----")
            lines.append(f"----- end of {ctx.runtime} -----")
        lines.append("")
    return "\n".join(lines)
