"""Nothing outside the vault: get, search, links and every path in config stay inside it;
loading a profile, a config or the parse cache never runs code."""

from __future__ import annotations

import json
import marshal
import os
import pickle
from pathlib import Path

import pytest
from cli_invoke import invoke


SECRET = "outside-secret-9c2e"



@pytest.fixture
def vault(make_vault, tmp_path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text(f"# Secret\n\n{SECRET}\n")
    (tmp_path / "secret.md").write_text(f"# Secret\n\n{SECRET}\n")
    root = make_vault({
        "MEMORY.md": "# Memory\n\n- [[../secret]] [a](../secret.md) [b](%2e%2e/secret.md) "
                     f"[c]({tmp_path}/secret.md) [[{tmp_path}/secret]] ![[../outside/secret]]\n",
        "memory/semantic/fact.md": "# Fact\n\ninside text\n",
    })
    os.symlink(tmp_path / "secret.md", root / "memory" / "semantic" / "link-out.md")
    os.symlink(outside, root / "memory" / "dir-out")
    os.symlink(root / "memory" / "semantic" / "fact.md", root / "memory" / "alias.md")
    os.symlink(root / "AGENTS.md", root / "memory" / "to-root.md")  # in the vault, not memory
    (root / "AGENTS.md").write_text("# Agents\n")
    return root


# -- get -----------------------------------------------------------------------------------

REFUSED = [
    ("parent", "../secret.md", "'..'"),
    ("parent inside", "memory/../../secret.md", "'..'"),
    ("parent deep", "memory/semantic/../../../secret.md", "'..'"),
    ("absolute", "/etc/passwd", "absolute"),
    ("absolute md", "{tmp}/secret.md", "absolute"),
    ("home", "~/secret.md", "absolute"),
    ("drive", "C:/secret.md", "absolute"),
    ("backslash", "memory\\..\\..\\secret.md", "backslash"),
    ("url-encoded dots", "%2e%2e/secret.md", "URL-encoded"),
    ("url-encoded slash", "memory%2f..%2f..%2fsecret.md", "URL-encoded"),
    ("double-encoded", "memory/%252e%252e/secret.md", "URL-encoded"),
    ("mixed-case encoding", "memory/%2E%2E/%2e%2E/secret.md", "URL-encoded"),
    ("NUL", "memory/semantic/fact.md\x00.png", "NUL"),
    ("symlink out", "memory/semantic/link-out.md", "outside the vault"),
    ("through a folder symlink", "memory/dir-out/secret.md", "outside the vault"),
    ("symlink to a non-memory file", "memory/to-root.md", "not in the memory set"),
    ("not memory", "AGENTS.md", "not in the memory set"),
    ("not markdown", "vaultkit.toml", "not in the memory set"),
    ("dot-git", "memory/.git/config.md", "not in the memory set"),
]


@pytest.mark.parametrize("path,reason", [r[1:] for r in REFUSED], ids=[r[0] for r in REFUSED])
@pytest.mark.parametrize("json_out", [False, True], ids=["text", "json"])
def test_get_refuses(vault, tmp_path, path, reason, json_out):
    path = path.replace("{tmp}", str(tmp_path))
    argv = ["get", "--root", ".", path] + (["--json"] if json_out else [])
    rc, out, err = invoke(argv, vault)
    assert rc == 2
    assert reason in err and err.count("\n") == 1 and err.startswith("vaultkit: error: ")
    assert SECRET not in out + err


def test_get_follows_a_symlink_inside_the_memory_set(vault):
    rc, out, err = invoke(["get", "--root", ".", "memory/alias.md"], vault)
    assert rc == 0 and "inside text" in out


# -- search, check, graph, index -----------------------------------------------------------------

@pytest.mark.parametrize("argv", [
    ["search", "--root", ".", "--json", "--min-score", "0", SECRET],
    ["search", "--root", ".", "--json", "--min-score", "0", "secret"],
    ["check", "--select", "ALL", "--format", "json", "."],
    ["graph", "--format", "json", "."],
    ["index", "."],
    ["distill", "--root", ".", "--days", "400"],
], ids=lambda a: " ".join(a[:2]))
def test_nothing_outside_is_read(vault, argv):
    rc, out, err = invoke(argv, vault)
    assert rc in (0, 1), err
    assert SECRET not in out + err
    if argv[0] == "search":
        assert all(not h["path"].startswith(("/", "..")) and "secret" not in h["path"]
                   for h in json.loads(out)["results"])
    if argv[0] == "index":
        assert SECRET not in (vault / "memory" / "INDEX.md").read_text()


def test_links_out_of_the_vault_never_resolve(vault):
    rc, out, err = invoke(["check", "--select", "broken-link", "--format", "json", "."], vault)
    broken = [f for f in json.loads(out) if f["path"] == "MEMORY.md"]
    assert len(broken) == 6, broken
    rc, out, err = invoke(["graph", "--format", "json", "."], vault)
    graph = json.loads(out)
    assert all(not n["id"].startswith(("/", "..")) for n in graph["nodes"])
    assert all(not e["target"].startswith(("/", "..")) for e in graph["edges"])


# -- paths in config ---------------------------------------------------------------------------------

CONFIG_PATHS = [
    ("index path with ..", '[index]\npath = "../escaped.md"\n', "index.path"),
    ("index path absolute", '[index]\npath = "{tmp}/escaped.md"\n', "index.path"),
    ("memory-dir with ..", 'memory-dir = "../.."\n', "memory-dir"),
    ("memory-dir absolute", 'memory-dir = "{tmp}"\n', "memory-dir"),
    ("memory-dir home", 'memory-dir = "~"\n', "memory-dir"),
    ("layer path with ..", '[[layers]]\nname = "x"\npaths = ["../*.md"]\n', "layers.0.paths"),
    ("layer path absolute", '[[layers]]\nname = "x"\npaths = ["/etc/*"]\n', "layers.0.paths"),
    ("type folder with ..", '[types.t]\nfolder = "memory/../../x"\n', "types.t.folder"),
    ("backslash", 'memory-dir = "..\\\\x"\n', "memory-dir"),
]


@pytest.mark.parametrize("config,field", [c[1:] for c in CONFIG_PATHS],
                         ids=[c[0] for c in CONFIG_PATHS])
def test_config_paths_stay_inside_the_vault(make_vault, tmp_path, config, field):
    """Regression: `[index] path = "../x.md"` or `memory-dir = "../.."` made index write outside."""
    root = make_vault({"vaultkit.toml": config.replace("{tmp}", str(tmp_path)),
                       "MEMORY.md": "# M\n"})
    before = sorted(p for p in tmp_path.rglob("*"))
    for argv in (["index", "."], ["check", "."], ["log", "--root", ".", "x"],
                 ["archive", "--root", "."], ["get", "--root", ".", "MEMORY.md"]):
        rc, out, err = invoke(argv, root)
        assert rc == 2, (argv, err)
        assert field in err and "leaves the vault" in err and err.count("\n") == 1
    assert sorted(p for p in tmp_path.rglob("*")) == before  # nothing written anywhere


def test_memory_dir_dot_is_still_allowed(make_vault):
    root = make_vault({"vaultkit.toml": 'memory-dir = "."\n', "2026-01-05.md": "# 2026-01-05\n"})
    rc, _, err = invoke(["index", "."], root)
    assert rc == 0, err
    assert (root / "INDEX.md").exists()


# -- loading never runs code ------------------------------------------------------------------------------

EVIL_YAML = [
    "name: !!python/object/apply:os.system ['touch {mark}']\nlayers: []\n",
    "name: x\nlayers: !!python/object/new:subprocess.Popen [['touch', '{mark}']]\n",
    "!!python/object/apply:builtins.exec ['open(\"{mark}\", \"w\")']\n",
    "name: !!python/name:os.system\nlayers: []\n",
]


@pytest.mark.parametrize("yaml_text", EVIL_YAML)
@pytest.mark.parametrize("how", ["--profile", "vaultkit.toml"])
def test_profile_with_python_tags_is_refused_not_run(make_vault, tmp_path, yaml_text, how):
    mark = tmp_path / "pwned"
    files = {"evil.yaml": yaml_text.replace("{mark}", str(mark)), "MEMORY.md": "# M\n"}
    if how == "vaultkit.toml":
        files["vaultkit.toml"] = 'profile = "evil.yaml"\n'
    root = make_vault(files)
    argv = ["check", "."] + (["--profile", "evil.yaml"] if how == "--profile" else [])
    rc, out, err = invoke(argv, root)
    assert rc == 2 and err.count("\n") == 1 and "evil.yaml" in err
    assert not mark.exists()


def test_toml_values_are_data(make_vault, tmp_path):
    mark = tmp_path / "pwned"
    root = make_vault({"vaultkit.toml": f'timezone = "__import__(\'os\').system(\'touch {mark}\')"\n',
                       "MEMORY.md": "# M\n"})
    rc, _, err = invoke(["log", "--root", ".", "x"], root)
    assert rc == 2 and "unknown time zone" in err
    assert not mark.exists()


class _Boom:
    def __init__(self, mark):
        self.mark = str(mark)

    def __reduce__(self):
        return (os.system, (f"touch {self.mark}",))


def _cache_file(root: Path) -> Path:
    from vaultkit.vault.store import NAME

    return root / ".vaultkit" / "cache" / NAME


def _deflate(zdict: bytes, payload: bytes) -> bytes:
    import zlib

    z = zlib.compressobj(1, zlib.DEFLATED, -14, 5, zlib.Z_DEFAULT_STRATEGY, zdict)
    return z.compress(payload) + z.flush()


def _files(root: Path, mark: Path) -> dict[str, bytes]:
    """Whole files in the store's place."""
    code = compile(f"open({str(mark)!r}, 'w')", "<evil>", "exec")
    return {
        "pickle": pickle.dumps(_Boom(mark)),
        "garbage": os.urandom(256),
        "empty": b"",
        "truncated": _cache_file(root).read_bytes()[:1500],
        "code object": marshal.dumps(code),
    }


def _records(mark: Path, zdict: bytes) -> dict[str, tuple[str | None, bytes]]:
    """Records in a well-formed store: (the key it claims, when not the real one; record)."""
    code = compile(f"open({str(mark)!r}, 'w')", "<evil>", "exec")
    return {
        "code in record": (None, _deflate(zdict, marshal.dumps(code))),
        "code in parse": (None, _deflate(zdict, marshal.dumps((marshal.dumps(code), b"")))),
        "pickle in record": (None, _deflate(zdict, pickle.dumps(_Boom(mark)))),
        "wrong shape": (None, _deflate(zdict, marshal.dumps((1, 2)))),
        "not deflate": (None, marshal.dumps((b"", b""))),
        "other key": ("other", _deflate(zdict, marshal.dumps((marshal.dumps(code), b"")))),
    }


@pytest.mark.parametrize("kind", ["pickle", "garbage", "empty", "truncated", "code object",
                                  "code in record", "code in parse", "pickle in record",
                                  "wrong shape", "not deflate", "other key"])
def test_malicious_cache_is_ignored(make_vault, tmp_path, kind):
    import sqlite3
    import zlib

    mark = tmp_path / "pwned"
    root = make_vault({"MEMORY.md": "# Memory\n\n- [[missing]]\n"})
    rc, clean, _ = invoke(["check", "--format", "json", "."], root)  # creates the cache
    cache = _cache_file(root)
    files = _files(root, mark)
    if kind in files:
        cache.write_bytes(files[kind])
    else:
        db = sqlite3.connect(cache, isolation_level=None)
        zdict = db.execute("SELECT value FROM notes_meta WHERE key = 'zdict'").fetchone()[0]
        key, record = _records(mark, zdict)[kind]
        st = (root / "MEMORY.md").stat()
        db.execute("UPDATE notes SET size = ?, mtime_ns = ?, seen_ns = ?, record = ? "
                   "WHERE path = 'MEMORY.md'", (st.st_size, st.st_mtime_ns, 2**62, record))
        if key:
            db.execute("UPDATE notes_meta SET value = ? WHERE key = 'key'", (key,))
        db.close()
    rc, out, err = invoke(["check", "--format", "json", "."], root)
    assert rc in (0, 1) and "error" not in err and "Traceback" not in err, err
    assert json.loads(out) == json.loads(clean)
    assert not mark.exists()
    # and the cache is rewritten as plain marshal data that loads back to notes
    db = sqlite3.connect(cache)
    zdict = db.execute("SELECT value FROM notes_meta WHERE key = 'zdict'").fetchone()[0]
    record = db.execute("SELECT record FROM notes WHERE path = 'MEMORY.md'").fetchone()[0]
    db.close()
    parse, facts = marshal.loads(zlib.decompressobj(-14, zdict=zdict).decompress(record))
    assert marshal.loads(parse)[0] == "MEMORY.md"


@pytest.mark.parametrize("profile", ["../outside.yaml", "{tmp}/outside.yaml", "sub/../../outside.yaml",
                                     "link.yaml"])
def test_config_profile_path_stays_inside_the_vault(make_vault, tmp_path, profile):
    """Regression: `profile = "../x.yaml"` in vaultkit.toml read a rule pack outside the vault."""
    (tmp_path / "outside.yaml").write_text("name: leaked-key-1\nlayers: []\n")
    root = make_vault({"vaultkit.toml": f'profile = "{profile.replace("{tmp}", str(tmp_path))}"\n',
                       "MEMORY.md": "# M\n"})
    os.symlink(tmp_path / "outside.yaml", root / "link.yaml")
    rc, out, err = invoke(["check", "."], root)
    assert rc == 2 and "leaves the vault" in err and err.count("\n") == 1
    # --profile on the command line is the user's own choice and may point anywhere
    rc, out, err = invoke(["check", "--profile", str(tmp_path / "outside.yaml"), "."], root)
    assert "leaves the vault" not in err


def test_config_profile_inside_the_vault_is_read(make_vault):
    from vaultkit.core.resources import rules_dir

    pack = (rules_dir() / "openclaw.yaml").read_text()
    root = make_vault({"vaultkit.toml": 'profile = "packs/mine.yaml"\n', "MEMORY.md": "# M\n",
                       "packs/mine.yaml": pack.replace("name: openclaw", "name: mine", 1)})
    rc, out, err = invoke(["check", "."], root)
    assert rc in (0, 1) and "error" not in err.lower().replace("errors", ""), err


def test_graph_json_symlinked_out_of_the_vault_is_left_alone(make_vault, tmp_path):
    """Regression: --write-colors read a graph.json symlinked outside the vault and copied
    its content into the vault, replacing the symlink."""
    secret = tmp_path / "secret.json"
    secret.write_text(f'{{"key": "{SECRET}"}}')
    root = make_vault({"MEMORY.md": "# M\n"})
    os.symlink(secret, root / ".obsidian" / "graph.json")
    rc, out, err = invoke(["graph", "--write-colors", "."], root)
    assert rc == 2 and "symlink out of the vault" in err and err.count("\n") == 1
    assert (root / ".obsidian" / "graph.json").is_symlink()
    assert secret.read_text() == f'{{"key": "{SECRET}"}}'
    rc, out, err = invoke(["init", "-q", "."], root)  # init writes graph.json only when missing
    assert rc == 0 and (root / ".obsidian" / "graph.json").is_symlink()


def test_index_symlinked_out_of_the_vault_is_left_alone(make_vault, tmp_path):
    outside = tmp_path / "idx.md"
    outside.write_text(f"# {SECRET}\n")
    root = make_vault({"MEMORY.md": "# M\n"})
    (root / "memory").mkdir()
    os.symlink(outside, root / "memory" / "INDEX.md")
    rc, out, err = invoke(["index", "."], root)
    assert rc == 2 and err.count("\n") == 1 and SECRET not in out + err
    assert (root / "memory" / "INDEX.md").is_symlink() and outside.read_text() == f"# {SECRET}\n"


RESULTS_KINDS = ["pickle", "garbage", "code object", "key and code", "right key, code as findings",
                 "right key, findings of the wrong shape"]


@pytest.mark.parametrize("kind", RESULTS_KINDS)
def test_malicious_results_cache_is_ignored(make_vault, tmp_path, kind):
    """The findings cache (the store's ``results``) is marshal too: nothing in it ever runs."""
    from parse_store import StoreEntry
    from vaultkit.lint.engine import ResultsCache
    from vaultkit.vault.loader import load_vault

    mark = tmp_path / "pwned"
    root = make_vault({"MEMORY.md": "# Memory\n\n- [[missing]]\n"})
    for p in root.rglob("*"):  # old enough for the findings cache to be used
        os.utime(p, (1_600_000_000, 1_600_000_000))
    rc, clean, _ = invoke(["check", "--format", "json", "."], root)
    vault = load_vault(root, root=root)
    cache = ResultsCache(vault)
    entry = StoreEntry(root, cache.NAME)
    assert entry.is_file() and cache.results  # the clean run stored its findings there
    code = compile(f"open({str(mark)!r}, 'w')", "<evil>", "exec")
    payload = {
        "pickle": pickle.dumps(_Boom(mark)),
        "garbage": os.urandom(256),
        "code object": marshal.dumps(code),
        "key and code": marshal.dumps((cache.key, code)),
        "right key, code as findings": marshal.dumps((cache.key, {"broken-link": code})),
        "right key, findings of the wrong shape": marshal.dumps(
            (cache.key, {"broken-link": [(code, 1)], "orphan-note": 5})),
    }[kind]
    entry.write_bytes(payload)
    rc, out, err = invoke(["check", "--format", "json", "."], root)
    assert "internal error" not in err and "Traceback" not in err, err
    assert rc in (0, 1)
    assert json.loads(out) == json.loads(clean)
    assert not mark.exists()


@pytest.mark.parametrize("dangling", [False, True], ids=["existing", "dangling"])
def test_log_never_appends_through_a_symlink_out_of_the_vault(make_vault, tmp_path, dangling):
    """Regression: log appended to (or created) the file a journal symlink pointed at."""
    target = tmp_path / "outside.md"
    if not dangling:
        target.write_text("# outside\n")
    root = make_vault({"MEMORY.md": "# M\n"})
    (root / "memory").mkdir()
    os.symlink(target, root / "memory" / "2026-03-01.md")
    rc, out, err = invoke(["log", "--root", ".", "--date", "2026-03-01", "--title", "T",
                           "a\nb\nc"], root)
    assert rc == 2 and "out of the vault" in err and err.count("\n") == 1
    assert target.exists() is not dangling
    if not dangling:
        assert target.read_text() == "# outside\n"


def test_log_never_appends_through_a_journal_symlinked_inside_the_vault(make_vault):
    """Regression: a journal linked to NOW.md (or any other file) got the entry appended
    to that file: an entry goes to the day's own journal or nowhere (issue 12)."""
    root = make_vault({"MEMORY.md": "# M\n", "memory/real.md": "# 2026-03-01\n"})
    os.symlink(root / "memory" / "real.md", root / "memory" / "2026-03-01.md")
    rc, out, err = invoke(["log", "--root", ".", "--date", "2026-03-01", "--title", "T",
                           "a\nb\nc"], root)
    assert rc == 2 and "is a symlink to memory/real.md" in err and err.count("\n") == 1
    assert (root / "memory" / "real.md").read_text() == "# 2026-03-01\n"


@pytest.mark.parametrize("link", [".vaultkit", ".vaultkit/cache", ".vaultkit/search.sqlite"])
def test_caches_are_never_written_through_a_symlink(make_vault, tmp_path, link):
    """Regression: a `.vaultkit` symlink (a cloned repo may carry one) made the parse cache,
    the findings cache and the search index write into the folder it pointed at."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    root = make_vault({"MEMORY.md": "# Memory\n\nsearchable words\n"})
    if link != ".vaultkit":
        (root / ".vaultkit").mkdir()
    target = elsewhere / "search.sqlite" if link.endswith("sqlite") else elsewhere
    os.symlink(target, root / link)
    for argv in (["check", "."], ["check", "."], ["search", "--root", ".", "searchable"],
                 ["index", "."]):
        rc, out, err = invoke(argv, root)
        assert rc in (0, 1) and "error" not in err.replace("0 errors", ""), (argv, err)
    assert list(elsewhere.iterdir()) == []
    rc, out, err = invoke(["search", "--root", ".", "--json", "searchable"], root)
    assert json.loads(out)["results"][0]["path"] == "MEMORY.md"
