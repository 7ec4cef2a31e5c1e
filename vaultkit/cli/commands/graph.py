"""``vaultkit graph``: link statistics, export, and Obsidian graph colours."""

from __future__ import annotations

import sys

from vaultkit.cli import add_format_arguments, add_output_argument, add_vault_arguments

HELP = "link graph statistics and export; --write-colors for Obsidian's graph view"
DESCRIPTION = (
    "Print the link graph's statistics (notes, links, resolved and unresolved, orphans, "
    "connected components, most linked notes), or export it with --format json|graphml|"
    "mermaid (nodes carry their layer and type). --write-colors merges the profile's "
    "colour groups into .obsidian/graph.json, keeping every other setting and group."
)


def add_arguments(p) -> None:
    p.add_argument("path", nargs="?", default=".", metavar="PATH",
                   help="the vault or a folder inside it (default: here)")
    add_vault_arguments(p)
    add_format_arguments(p, ("text", "json", "graphml", "mermaid"),
                         help="statistics as text (default), or the graph as json, graphml or "
                              "a mermaid block")
    add_output_argument(p)
    p.set_defaults(writes_output=True)
    p.add_argument("--top", type=int, default=10, metavar="N",
                   help="how many most linked notes to list (default 10)")
    p.add_argument("--write-colors", action="store_true",
                   help="add the missing colour groups to .obsidian/graph.json (creating it if "
                        "needed); colours changed in Obsidian are kept")
    p.add_argument("--recolor", action="store_true",
                   help="with --write-colors: also give vaultkit's existing groups the "
                        "profile's colours again ([colors] in vaultkit.toml)")


def run(args) -> int:
    from vaultkit.cli.commands._common import open_vault
    from vaultkit.core.errors import VaultkitError
    from vaultkit.links.graph import link_graph

    from vaultkit.cli.commands._common import check_output_folder

    check_output_folder(args.output)
    from vaultkit.core import progress

    progress.allow(args.format == "text")
    if args.write_colors and args.format == "text" and not args.output \
            and (args.root or args.path != "."):  # (the vault named in `args`)
        from vaultkit.cli.commands._hookscope import leaves_named_vault_alone

        if leaves_named_vault_alone(args.path, args.root):  # (the hook, a vault in a subfolder)
            return 0
    vault = open_vault(args, args.path)
    if args.recolor and not args.write_colors:
        raise VaultkitError("--recolor goes with --write-colors")
    if args.write_colors:
        from vaultkit.links.obsidian import (GRAPH_JSON, colour_groups, unknown_colour_keys,
                                             write_colors)

        for key in unknown_colour_keys(vault.profile):
            print(f"vaultkit: warning: colors: '{key}' is neither a note type nor a layer; "
                  "no colour group for it", file=sys.stderr)
        from vaultkit.links.obsidian import missing_colour_groups

        added = [g["query"] for g in missing_colour_groups(vault)]
        changed = write_colors(vault, recolour=args.recolor)
        n = len(colour_groups(vault.profile))
        from vaultkit.vault.scan import display_path

        print(f"{'Updated' if changed else 'Unchanged:'} {display_path(vault.root / GRAPH_JSON)} "
              f"({n} colour groups)", file=sys.stderr)
        if changed and added:
            print(f"vaultkit: added {len(added)} colour group{'s' * (len(added) != 1)} "
                  f"({', '.join(added)}); pick other colours in Obsidian's graph view or "
                  "under [colors] in vaultkit.toml (then --write-colors --recolor)",
                  file=sys.stderr)
        if args.format == "text" and not args.output:
            return 0
    if args.top < 0:
        raise VaultkitError("--top must be 0 or more")
    graph = link_graph(vault)
    if args.format == "text":
        text = stats_text(graph, args.top)
    elif args.format == "json":
        text = to_json(graph)
    elif args.format == "graphml":
        text = to_graphml(graph)
    else:
        text = to_mermaid(graph)
    if args.output:
        from pathlib import Path

        from vaultkit.core.atomic import write_output
        from vaultkit.vault.outbound import clean

        write_output(Path(args.output), clean(text).encode("utf-8"))
    else:
        sys.stdout.write(text)
    return 0


def stats(graph, top: int = 10) -> dict:
    from vaultkit.links.indexgen import index_path

    comps = graph.components()
    return {
        "notes": len(graph.vault.notes),
        "attachments": len(graph.attachments),
        "linked_attachments": sum(1 for p in graph.nodes if p not in graph.vault.notes),
        "links": graph.links,
        "resolved": graph.resolved,
        "unresolved": len(graph.unresolved),
        "external": graph.external,
        "edges": graph.edge_count,
        "orphans": len(graph.orphans()),
        "components": len(comps),
        "largest_component": len(comps[0]) if comps else 0,
        "most_linked": [{"path": p, "inbound": c} for p, c in
                        graph.most_linked(top, exclude_sources={index_path(graph.vault)})],
    }


def stats_text(graph, top: int = 10) -> str:
    s = stats(graph, top)
    lines = [
        f"notes        {s['notes']}",
        f"attachments  {s['attachments']} ({s['linked_attachments']} linked from notes)",
        f"links        {s['links']} ({s['resolved']} resolved, {s['unresolved']} unresolved; "
        f"{s['external']} external not counted)",
        f"edges        {s['edges']} (distinct note-to-file links)",
        f"orphans      {s['orphans']} (no link in or out)",
        f"components   {s['components']} (largest: {s['largest_component']})",
    ]
    if s["most_linked"]:
        lines.append("most linked (INDEX.md not counted):")
        width = max(len(str(m["inbound"])) for m in s["most_linked"])
        for m in s["most_linked"]:
            lines.append(f"  {m['inbound']:>{width}}  {m['path']}")
    return "\n".join(lines) + "\n"


def to_json(graph) -> str:
    import json

    nodes = [{"id": p, **graph.node_attributes(p)} for p in graph.nodes]
    edges = [{"source": a, "target": b, "count": c, "embed": (a, b) in graph.embeds}
             for a, targets in sorted(graph.out.items()) for b, c in sorted(targets.items())]
    unresolved = [{"source": n.path, "target": lk.target, "line": lk.line, "column": lk.column,
                   "missing": r.missing} for n, lk, r in graph.unresolved]
    # every attachment (the text's count), linked or not; only linked ones are nodes
    return json.dumps({"nodes": nodes, "edges": edges, "unresolved": unresolved,
                       "attachments": graph.attachments},
                      indent=2, ensure_ascii=False) + "\n"


def to_graphml(graph) -> str:
    import networkx as nx

    g = graph.to_networkx()
    return "\n".join(nx.generate_graphml(g)) + "\n"


def to_mermaid(graph) -> str:
    """A ```mermaid block (renders in Obsidian); nodes classed by type, else layer."""
    colours = graph.vault.profile.colors
    ids = {p: f"n{i}" for i, p in enumerate(graph.nodes)}
    lines = ["```mermaid", "graph LR"]
    classes: dict[str, list[str]] = {}
    for p, nid in ids.items():
        attrs = graph.node_attributes(p)
        label = attrs["name"].replace('"', "#quot;")
        lines.append(f'  {nid}["{label}"]')
        cls = attrs["type"] or attrs["layer"]
        if cls:
            classes.setdefault(_css(cls), []).append(nid)
    for a, targets in sorted(graph.out.items()):
        for b in sorted(targets):
            arrow = "-.->" if (a, b) in graph.embeds else "-->"
            lines.append(f"  {ids[a]} {arrow} {ids[b]}")
    for cls, members in sorted(classes.items()):
        colour = colours.get(cls)
        if colour:
            lines.append(f"  classDef {cls} fill:{colour},stroke:{colour},color:#fff")
        else:
            lines.append(f"  classDef {cls} fill:#dee2e6,stroke:#adb5bd")
        lines.append(f"  class {','.join(members)} {cls}")
    lines.append("```")
    return "\n".join(lines) + "\n"


def _css(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name)
