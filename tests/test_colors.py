"""vaultkit graph --write-colors: merge colour groups into .obsidian/graph.json."""

from __future__ import annotations

import json

import pytest

from vaultkit.cli import main
from vaultkit.core.errors import VaultkitError
from vaultkit.links.obsidian import DEFAULTS, colour_groups, missing_colour_groups, write_colors
from vaultkit.vault.loader import load_vault

GRAPH = ".obsidian/graph.json"

# What the seeds ask for, as Obsidian stores it (rgb = 0xRRGGBB as an integer).
SEED_COLOURS = [
    ('path:"memory/decisions/"', 0xE03131),  # red
    ('path:"memory/lessons/"', 0x2F9E44),  # green
    ('path:"memory/projects/"', 0x1971C2),  # blue
    ('path:"memory/people/"', 0xF2C94C),  # yellow
]

USER_GRAPH = {
    "collapse-filter": False,
    "search": "tag:#keep",
    "showTags": True,
    "colorGroups": [
        {"query": "tag:#urgent", "color": {"a": 1, "rgb": 255}},
        {"query": 'path:"memory/decisions/"', "color": {"a": 1, "rgb": 1}},
        {"query": "file:README", "color": {"a": 0.5, "rgb": 65280}},
    ],
    "repelStrength": 17.3,
    "pluginSetting": {"nested": [1, 2, 3]},
    "close": False,
}


# an agent workspace (a folder with no agent file gets the obsidian profile, no colour groups)
AGENT = {"MEMORY.md": "# MEMORY\n"}


def _vault(root):
    return load_vault(root, root=root, use_cache=False)


def test_groups_from_profile(make_vault):
    groups = colour_groups(_vault(make_vault(AGENT)).profile)
    got = {g["query"]: g["color"]["rgb"] for g in groups}
    for query, rgb in SEED_COLOURS:
        assert got[query] == rgb
    assert all(g["color"]["a"] == 1 and isinstance(g["color"]["rgb"], int) for g in groups)
    # distinct colours for preferences, journal and bootstrap too
    queries = [g["query"] for g in groups]
    assert 'path:"memory/preferences/"' in queries
    # the journal layer's paths, the plain one first, in one OR query (Obsidian's search)
    assert any(q.startswith(r"path:/^memory\/\d{4}-\d{2}-\d{2}\.md$/ OR ") for q in queries)
    assert any(q.startswith(r"path:/^(AGENTS\.md|SOUL\.md|") for q in queries)
    assert 'path:"memory/semantic/" OR path:"memory/procedural/"' in queries
    assert len({g["color"]["rgb"] for g in groups}) == len(groups)


def test_creates_graph_json_with_defaults(make_vault):
    root = make_vault(AGENT)
    assert write_colors(_vault(root)) is True
    data = json.loads((root / GRAPH).read_text())
    for key in ("collapse-filter", "search", "showTags", "showAttachments", "hideUnresolved",
                "showOrphans", "collapse-color-groups", "colorGroups", "collapse-display",
                "showArrow", "textFadeMultiplier", "nodeSizeMultiplier", "lineSizeMultiplier",
                "collapse-forces", "centerStrength", "repelStrength", "linkStrength",
                "linkDistance", "scale", "close"):
        assert key in data
    assert {k: v for k, v in data.items() if k != "colorGroups"} == \
        {k: v for k, v in DEFAULTS.items() if k != "colorGroups"}
    assert [(g["query"], g["color"]["rgb"]) for g in data["colorGroups"][:4]] == SEED_COLOURS


def test_creates_obsidian_folder_when_missing(tmp_path):
    root = tmp_path / "v"
    (root / "memory").mkdir(parents=True)
    (root / "vaultkit.toml").write_text("")
    assert write_colors(_vault(root)) is True
    assert (root / GRAPH).is_file()


def test_merge_keeps_user_keys_and_groups(make_vault):
    root = make_vault({**AGENT, GRAPH: json.dumps(USER_GRAPH, indent=2)})
    assert write_colors(_vault(root)) is True
    data = json.loads((root / GRAPH).read_text())
    for key, value in USER_GRAPH.items():
        if key != "colorGroups":
            assert data[key] == value
    assert set(data) == set(USER_GRAPH)  # no keys added to an existing file
    groups = data["colorGroups"]
    # user groups stay where they were; vaultkit's decisions group keeps the user's colour
    assert groups[0] == USER_GRAPH["colorGroups"][0]
    assert groups[1] == USER_GRAPH["colorGroups"][1]
    assert groups[1]["query"] == 'path:"memory/decisions/"'
    assert groups[1]["color"]["rgb"] != 0xE03131
    assert groups[2] == USER_GRAPH["colorGroups"][2]
    assert [(g["query"], g["color"]["rgb"]) for g in groups[3:6]] == SEED_COLOURS[1:]
    assert len(groups) == 3 + len(colour_groups(_vault(root).profile)) - 1


def test_twice_is_byte_identical(make_vault):
    root = make_vault({**AGENT, GRAPH: json.dumps(USER_GRAPH)})  # compact, as a user might have it
    assert write_colors(_vault(root)) is True
    first = (root / GRAPH).read_bytes()
    assert write_colors(_vault(root)) is False
    assert (root / GRAPH).read_bytes() == first
    assert main(["graph", str(root), "--write-colors", "--no-cache"]) == 0
    assert (root / GRAPH).read_bytes() == first


def test_already_merged_file_is_not_rewritten(make_vault):
    root = make_vault(AGENT)
    groups = colour_groups(_vault(root).profile)
    raw = json.dumps({"colorGroups": groups, "scale": 2}, separators=(",", ":")).encode()
    (root / GRAPH).write_bytes(raw)
    assert write_colors(_vault(root)) is False
    assert (root / GRAPH).read_bytes() == raw
    assert missing_colour_groups(_vault(root)) == []


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"colorGroups": 5}', "\xff\xfe"])
def test_invalid_graph_json_is_an_error_and_untouched(make_vault, content, capsys):
    root = make_vault(AGENT)
    (root / GRAPH).write_bytes(content.encode("latin-1"))
    with pytest.raises(VaultkitError, match="graph.json"):
        write_colors(_vault(root))
    assert main(["graph", str(root), "--write-colors", "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("vaultkit: error: .obsidian/graph.json") and "untouched" in err
    assert (root / GRAPH).read_bytes() == content.encode("latin-1")


def test_missing_groups(make_vault):
    root = make_vault({**AGENT, GRAPH: json.dumps(USER_GRAPH)})
    missing = missing_colour_groups(_vault(root))
    # the user's own colour for decisions is no missing group
    assert 'path:"memory/decisions/"' not in [g["query"] for g in missing]
    assert len(missing) == len(colour_groups(_vault(root).profile)) - 1
    write_colors(_vault(root))
    assert missing_colour_groups(_vault(root)) == []


def test_colours_come_from_config(make_vault):
    root = make_vault({**AGENT, "vaultkit.toml": '[colors]\ndecision = "#000001"\n'})
    write_colors(_vault(root))
    data = json.loads((root / GRAPH).read_text())
    assert data["colorGroups"][0] == {"query": 'path:"memory/decisions/"',
                                      "color": {"a": 1, "rgb": 1}}


def test_memory_only_layout_queries(make_vault):
    root = make_vault({"vaultkit.toml": 'memory-dir = "."\n'})
    queries = [g["query"] for g in colour_groups(_vault(root).profile)]
    assert 'path:"decisions/"' in queries
    assert any(q.startswith(r"path:/^\d{4}-\d{2}-\d{2}\.md$/ OR ") for q in queries)


def test_unknown_colour_key_is_warned_about(make_vault, capsys):
    root = make_vault({**AGENT, "vaultkit.toml": '[colors]\ndecisions = "#000001"\n'})
    assert main(["graph", str(root), "--write-colors", "--no-cache"]) == 0
    err = capsys.readouterr().err
    assert "colors: 'decisions' is neither a note type nor a layer" in err
    data = json.loads((root / GRAPH).read_text())
    assert all(g["color"]["rgb"] != 1 for g in data["colorGroups"])
