"""The link graph: counts, orphans, components, most linked; `vaultkit graph` output."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from vaultkit.cli import main
from vaultkit.links.graph import link_graph
from vaultkit.vault.loader import load_vault

FILES = {
    "memory/INDEX.md": "[[alpha]] [[ada]] [[lonely]]\n",
    "memory/projects/alpha.md": "---\ntype: project\nstatus: active\n---\n# Alpha\n\n"
                                "[[ada]] [[ada#Role]] ![[chart.png]] [[missing]] [[#Alpha]]\n"
                                "[web](https://example.com)\n",
    "memory/people/ada.md": "---\ntype: person\n---\n# Ada\n\n## Role\n\n[[alpha]]\n",
    "memory/semantic/lonely.md": "# Lonely\n",
    "memory/semantic/island-a.md": "[[island-b]]\n",
    "memory/semantic/island-b.md": "# B\n",
    "attachments/chart.png": b"PNG",
    "attachments/unused.png": b"PNG",
}


@pytest.fixture
def root(make_vault):
    return make_vault(FILES)


def test_counts_and_edges(root):
    g = link_graph(load_vault(root, root=root, use_cache=False))
    assert g.links == 10 and g.resolved == 9 and len(g.unresolved) == 1 and g.external == 1
    assert g.out["memory/projects/alpha.md"] == {"memory/people/ada.md": 2,
                                                 "attachments/chart.png": 1}
    assert g.unresolved[0][1].target == "missing"
    assert ("memory/projects/alpha.md", "attachments/chart.png") in g.embeds
    assert "attachments/unused.png" not in g.nodes and "attachments/chart.png" in g.nodes


def test_the_graph_holds_each_notes_edges_once_and_its_sources_compactly(root):
    # a big vault holds its graph through the whole check: the edges out of a note are
    # its "links" fact's own list (not copied into a dict per note), and the notes linking
    # to a file are one tuple (not a set each)
    vault = load_vault(root, root=root, use_cache=False)
    g = link_graph(vault)
    facts = vault._facts["memory/projects/alpha.md"]
    assert g._edges["memory/projects/alpha.md"] is facts["links"][1][3]
    assert g._out is None  # the dicts are built only when asked for
    assert all(type(s) is tuple for s in g.into.values())
    assert sorted(g.into["memory/people/ada.md"]) == ["memory/INDEX.md",
                                                       "memory/projects/alpha.md"]
    assert g.in_degree("memory/people/ada.md", {"memory/INDEX.md"}) == 1
    assert g.edge_count == sum(len(t) for t in g.out.values()) == 7
    assert g.out["memory/semantic/island-a.md"] == {"memory/semantic/island-b.md": 1}
    # an edge two notes hold alike (here: a link to alpha, once, not embedded) is one tuple
    (from_index,) = [e for e in g._edges["memory/INDEX.md"] if e[0].endswith("alpha.md")]
    (from_ada,) = g._edges["memory/people/ada.md"]
    assert from_index == from_ada == ("memory/projects/alpha.md", 1, False)
    assert from_index is from_ada


def test_inbound_orphans_components_most_linked(root):
    vault = load_vault(root, root=root, use_cache=False)
    g = link_graph(vault)
    assert link_graph(vault) is g  # built once
    assert g.inbound("memory/people/ada.md") == {"memory/projects/alpha.md", "memory/INDEX.md"}
    assert g.inbound("memory/people/ada.md", {"memory/INDEX.md"}) == {"memory/projects/alpha.md"}
    assert g.orphans() == []  # lonely is linked from INDEX.md
    comps = g.components()
    assert comps[0] == ["attachments/chart.png", "memory/INDEX.md", "memory/people/ada.md",
                        "memory/projects/alpha.md", "memory/semantic/lonely.md"]
    assert ["memory/semantic/island-a.md", "memory/semantic/island-b.md"] in comps
    assert g.most_linked(2, exclude_sources={"memory/INDEX.md"}) == [
        ("memory/people/ada.md", 1), ("memory/projects/alpha.md", 1)]
    assert g.most_linked(1) == [("memory/people/ada.md", 2)]


def test_orphans_have_no_links_either_way(make_vault):
    root = make_vault({"memory/semantic/a.md": "# A\n", "memory/semantic/b.md": "[[c]]\n",
                       "memory/semantic/c.md": "# C\n"})
    g = link_graph(load_vault(root, root=root, use_cache=False))
    assert g.orphans() == ["memory/semantic/a.md"]


def test_networkx_graph_carries_layer_and_type(root):
    g = link_graph(load_vault(root, root=root, use_cache=False)).to_networkx()
    assert g.nodes["memory/people/ada.md"] == {"name": "ada", "kind": "note",
                                                "layer": "structured", "type": "person"}
    assert g.nodes["attachments/chart.png"]["kind"] == "attachment"
    assert g.edges["memory/projects/alpha.md", "memory/people/ada.md"] == {"count": 2,
                                                                          "embed": False}


def test_text_stats(root, capsys):
    assert main(["graph", str(root), "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert "notes        6\n" in out
    assert "links        10 (9 resolved, 1 unresolved; 1 external not counted)" in out
    assert "orphans      0" in out
    assert "components   2 (largest: 5)" in out
    assert "most linked (INDEX.md not counted):\n  1  memory/people/ada.md\n" in out


def test_json_export(root, capsys):
    assert main(["graph", str(root), "--no-cache", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    nodes = {n["id"]: n for n in data["nodes"]}
    assert nodes["memory/projects/alpha.md"]["type"] == "project"
    assert nodes["memory/INDEX.md"]["layer"] == "index"
    assert {"source": "memory/projects/alpha.md", "target": "attachments/chart.png", "count": 1,
            "embed": True} in data["edges"]
    assert data["unresolved"] == [{"source": "memory/projects/alpha.md", "target": "missing",
                                   "line": 7, "column": 37, "missing": "note"}]


def test_graphml_export(root, tmp_path):
    out = tmp_path / "g.graphml"
    assert main(["graph", str(root), "--no-cache", "--format", "graphml", "-o", str(out)]) == 0
    tree = ET.parse(out)
    ns = {"g": "http://graphml.graphdrawing.org/xmlns"}
    ids = [n.get("id") for n in tree.getroot().iterfind(".//g:node", ns)]
    assert "memory/people/ada.md" in ids
    keys = {k.get("attr.name") for k in tree.getroot().iterfind("g:key", ns)}
    assert {"layer", "type", "count", "embed"} <= keys


def test_mermaid_export(root, capsys):
    assert main(["graph", str(root), "--no-cache", "--format", "mermaid"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == "```mermaid" and lines[1] == "graph LR" and lines[-1] == "```"
    ids = {ln.split('["')[1][:-2]: ln.split("[")[0].strip() for ln in lines if '["' in ln}
    assert f"  {ids['alpha']} --> {ids['ada']}" in lines
    assert f"  {ids['alpha']} -.-> {ids['chart.png']}" in lines  # embeds dotted
    assert "  classDef person fill:#f2c94c,stroke:#f2c94c,color:#fff" in lines
    assert f"  class {ids['ada']} person" in lines


def test_check_does_not_import_networkx(root):
    code = ("import sys; from vaultkit.cli import main; "
            f"main(['check', {str(root)!r}, '--no-cache', '-q']); "
            "print('networkx' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip().splitlines()[-1] == "False"
