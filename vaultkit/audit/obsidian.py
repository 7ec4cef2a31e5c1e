"""The audit check ``obsidian``: Obsidian's graph colours are in place."""

from __future__ import annotations

import json
import os

from vaultkit.audit.context import PASS, WARN, AuditContext, Check

def check_obsidian(ctx: AuditContext) -> Check:
    obsidian_dir = ctx.vault.root / ".obsidian"
    graph = obsidian_dir / "graph.json"
    hint = f"run `vaultkit graph --write-colors {ctx.vault.root}` (merges, keeps your own groups)"
    if not obsidian_dir.is_dir():
        # most workspaces are never opened in Obsidian, and nothing is wrong with that: the
        # Obsidian checks apply only where Obsidian is used
        return Check("obsidian", PASS, f"no .obsidian/ in {ctx.vault.root}: not used as an "
                                       "Obsidian vault, so the graph colours are not checked")
    from vaultkit.links.obsidian import missing_colour_groups

    if os.path.lexists(graph):
        from vaultkit.core.bounded import LimitError, load_json, read_text

        try:
            load_json(read_text(graph))
        except OSError as exc:
            return Check("obsidian", WARN, f".obsidian/graph.json cannot be read: "
                                           f"{exc.strerror or exc}",
                         f"delete .obsidian/graph.json, then {hint}")
        except UnicodeDecodeError as exc:
            return Check("obsidian", WARN, f".obsidian/graph.json cannot be read: {exc}",
                         f"delete .obsidian/graph.json, then {hint}")
        except LimitError as exc:
            return Check("obsidian", WARN, f".obsidian/graph.json is not read: {exc}",
                         f"fix or delete .obsidian/graph.json, then {hint[0].lower()}{hint[1:]}")
        except ValueError as exc:
            at = (f" (line {exc.lineno}, column {exc.colno})"
                  if isinstance(exc, json.JSONDecodeError) else "")
            return Check("obsidian", WARN, f".obsidian/graph.json is not valid JSON{at}",
                         f"fix or delete .obsidian/graph.json, then {hint[0].lower()}{hint[1:]}")
    try:
        missing = list(missing_colour_groups(ctx.vault))
    except Exception as exc:  # an unreadable graph.json is a finding, not a crash
        return Check("obsidian", WARN, f"{graph} cannot be read: {exc}", hint)
    if missing:
        queries = ", ".join(str(g.get("query", g)) if isinstance(g, dict) else str(g)
                            for g in missing)
        what = "no .obsidian/graph.json" if not graph.exists() else \
            f".obsidian/graph.json lacks {len(missing)} colour group{'s' * (len(missing) != 1)}"
        return Check("obsidian", WARN, f"{what}: {queries}", hint)
    if not os.path.lexists(graph):
        # (nothing missing and no graph.json: the profile has no colour groups to add)
        return Check("obsidian", PASS, "no .obsidian/graph.json, and the profile has no "
                                       "colour groups to add to one")
    return Check("obsidian", PASS, ".obsidian/graph.json has the profile's colour groups")
