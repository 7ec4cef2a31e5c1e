"""State that outlives a call lives in the session floor (``vaultkit.session``), nowhere
below it (docs/architecture.md, "Where state lives").

A module-level dict, list or set that functions change, or that another module reads or
writes, is a process-wide registry no import contract can see: a command run by a
long-running process (``vaultkit watch``'s answering process, the editor and MCP servers)
would answer from what an earlier call left there. Below ``vaultkit.session`` only the
entries of :data:`ALLOWED` may be such a name, each with the reason it cannot change an
answer; anything else is kept by its owner (a run's ``Context``, a ``Workspace``) and
handed down as a parameter.
"""

from __future__ import annotations

import ast
import functools
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "vaultkit"
BELOW_SESSION = ("core", "vault", "links", "lint", "memory", "audit")

_MUTABLE_CALLS = {"dict", "list", "set", "bytearray", "defaultdict", "OrderedDict", "deque",
                  "Counter", "WeakValueDictionary", "WeakKeyDictionary", "WeakSet"}
_MUTATING = {"append", "extend", "insert", "pop", "popitem", "remove", "clear", "update",
             "setdefault", "add", "discard", "difference_update", "intersection_update",
             "symmetric_difference_update", "sort", "reverse", "appendleft", "popleft",
             "extendleft", "move_to_end", "__setitem__", "__delitem__"}

# (module, name) -> why it cannot change an answer, one line each. Only true constants and
# pure memos keyed by everything they are computed from (or values scoped to one command,
# reset when it ends). What lives longer than one call is the session floor's: a
# Workspace's (its store, its snapshot memo, its Later), handed down. Checked both ways: a
# name no longer found must go.
ALLOWED = {
    ("vaultkit.core.gitenv", "_FILTERS"):
        "memo of git's filter names, keyed by the bytes of the repository's config files",
    ("vaultkit.core.lazyre", "_MADE"):
        "patterns registered once at import, so compile_all() compiles them ahead",
    ("vaultkit.core.progress", "_allowed"):
        "command-scoped switch of the terminal progress line; cli.main resets it",
    ("vaultkit.memory.search", "_WORDISH_ANY_CASE"):
        "constant pattern compiled on first use",
    ("vaultkit.vault.parse", "_yaml_tools"):
        "PyYAML's resolver and constructor, made once on first use",
    ("vaultkit.vault.phrases", "_KEYS"):
        "case-folding table, a pure function of each character",
    ("vaultkit.vault.model", "_STRINGS"):
        "interning memo (equal strings, one object), cleared after each load",
    ("vaultkit.vault.openclaw", "_cache"):
        "memo of openclaw.json parsed, keyed by path, size, mtime, ctime and inode",
    ("vaultkit.vault.outbound", "_MASKED"):
        "the last masked text, by identity: masking is idempotent",
    ("vaultkit.vault.outbound", "_VERIFIED"):
        "command-scoped: set and restored by the verified_texts() with-block",
    ("vaultkit.vault.outbound", "_OWN_COMMANDS"):
        "command-scoped: the github format's lines; cli.main clears it",
    ("vaultkit.vault.parse", "_yaml_scalar_tags"):
        "bounded memo of a plain scalar's YAML tag, a pure function of its text",
    ("vaultkit.vault.profile", "_ADAPTERS"):
        "pydantic TypeAdapter per settings class, a pure function of the class",
    ("vaultkit.vault.profile", "_SHAPES"):
        "where a settings class field holds settings objects, a pure function of the class",
    ("vaultkit.vault.profile", "_BUILT"):
        "the last four settings built, keyed by the fingerprint of their files' bytes",
    ("vaultkit.vault.snapshots", "_TABLE"):
        "the last snapshot table read, keyed by its file's identity and stats",
    ("vaultkit.vault.snapshots", "_APPENDS"):
        "the last append index read, keyed by its file's identity and stats",
    ("vaultkit.vault.snapshots", "_CHAIN"):
        "the last chain record read, keyed by its file's identity and stats",
    ("vaultkit.lint.rules.unknown_location", "_NAMES"):
        "names derived from one profile object, held by its id (the object kept alive)",
    ("vaultkit.lint.diagnostics", "SEVERITY_RANK"):
        "constant table (severity -> rank)",
    ("vaultkit.audit.context", "RANK"):
        "constant table (status -> rank)",
    ("vaultkit.vault.runtimes.registry", "REGISTRY"):
        "constant table of the runtime loaders, filled at import",
}


def _module_name(path: Path, package: Path) -> str:
    name = ".".join(path.relative_to(package.parent).with_suffix("").parts)
    return name.removesuffix(".__init__")


def _mutable(value: ast.expr) -> bool:
    if isinstance(value, (ast.Dict, ast.List, ast.Set, ast.ListComp, ast.DictComp,
                          ast.SetComp)):
        return True
    if isinstance(value, ast.Call):
        func = value.func
        name = func.id if isinstance(func, ast.Name) else \
            func.attr if isinstance(func, ast.Attribute) else None
        return name in _MUTABLE_CALLS
    return False


def _module_level(tree: ast.Module) -> tuple[dict[str, int], dict[str, int]]:
    """``({name: line} of the mutable module-level names, of every module-level name)``."""
    mutable: dict[str, int] = {}
    bound: dict[str, int] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        for target in targets:
            if isinstance(target, ast.Name):
                bound[target.id] = node.lineno
                if _mutable(value):
                    mutable[target.id] = node.lineno
    return mutable, bound


def _changed_in_functions(tree: ast.Module, mutable: dict, bound: set) -> set[str]:
    """The module-level names a function of the module changes: a mutating method called
    (or taken) on it, an item set or deleted, or the name rebound under ``global``."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id in mutable and node.attr in _MUTATING:
            found.add(node.value.id)  # (at module level too: `_intern = _S.setdefault`)
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) \
                else [node.target]
            for target in targets:
                if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) \
                        and target.value.id in mutable:
                    found.add(target.value.id)
        if isinstance(node, ast.Global):
            found.update(n for n in node.names if n in bound)
    return found


def _sys_modules_target(value) -> str | None:
    """``"m"`` for ``sys.modules.get("m")`` or ``sys.modules["m"]``."""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
            and value.func.attr == "get":
        holder, args = value.func.value, value.args
    elif isinstance(value, ast.Subscript):
        holder, args = value.value, [value.slice]
    else:
        return None
    if isinstance(holder, ast.Attribute) and holder.attr == "modules" \
            and isinstance(holder.value, ast.Name) and holder.value.id == "sys" \
            and args and isinstance(args[0], ast.Constant) and isinstance(args[0].value, str):
        return args[0].value
    return None


def _used_elsewhere(trees: dict[str, ast.Module], names: dict[str, dict]) -> set[tuple]:
    """``(module, name)`` of the module-level names another vaultkit module imports or
    reaches through the module (``import m`` ... ``m.NAME``, ``sys.modules.get("m").NAME``,
    ``getattr(m, "NAME")``)."""
    found = set()
    for here, tree in trees.items():
        aliases: dict[str, str] = {}  # a local name -> the module it is
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                for alias in node.names:
                    if node.module != here and alias.name in names.get(node.module, ()):
                        found.add((node.module, alias.name))
                    aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    aliases[alias.asname or alias.name] = alias.name
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 \
                    and isinstance(node.targets[0], ast.Name):
                target = _sys_modules_target(node.value)
                if target is not None:
                    aliases[node.targets[0].id] = target
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute):
                base, attr = node.value, node.attr
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and node.func.id in ("getattr", "setattr") and len(node.args) >= 2 \
                    and isinstance(node.args[1], ast.Constant):
                base, attr = node.args[0], node.args[1].value
            else:
                continue
            if isinstance(base, ast.Name) and base.id in aliases:
                module = aliases[base.id]
            elif isinstance(base, ast.Attribute):  # vaultkit.vault.loader.NAME
                parts = []
                while isinstance(base, ast.Attribute):
                    parts.append(base.attr)
                    base = base.value
                if not isinstance(base, ast.Name) or base.id not in aliases:
                    continue
                module = ".".join([aliases[base.id], *reversed(parts)])
            else:
                continue
            if module != here and attr in names.get(module, ()):
                found.add((module, attr))
    return found


@functools.lru_cache(maxsize=None)
def registries(package: Path = PACKAGE) -> dict[tuple[str, str], int]:
    """``{(module, name): line}``: the module-level mutable names below the session floor
    that a function changes or another module reads or writes."""
    trees = {_module_name(p, package): ast.parse(p.read_text(encoding="utf-8"), str(p))
             for p in sorted(package.rglob("*.py"))}
    below = {m for m in trees if m.split(".")[1:2] and m.split(".")[1] in BELOW_SESSION}
    names: dict[str, dict] = {}
    out: dict[tuple[str, str], int] = {}
    for module in below:
        mutable, bound = _module_level(trees[module])
        names[module] = mutable
        for name in _changed_in_functions(trees[module], mutable, bound):
            out[(module, name)] = bound[name]
    for module, name in _used_elsewhere(trees, names):
        out[(module, name)] = names[module][name]
    return out


def test_no_module_below_the_session_floor_keeps_state_another_reads():
    found = registries()
    unexplained = sorted(f"{m}.{n} (line {line})" for (m, n), line in found.items()
                         if (m, n) not in ALLOWED)
    assert not unexplained, (
        "process-wide state below vaultkit.session: keep it in its owner (a run's Context, "
        "a Workspace) and pass it down, or add it to ALLOWED with why it cannot change an "
        "answer: " + ", ".join(unexplained))
    stale = sorted(f"{m}.{n}" for m, n in ALLOWED if (m, n) not in found)
    assert not stale, "no longer found; take them out of ALLOWED: " + ", ".join(stale)


@pytest.mark.parametrize("module, planted, name", [
    # a registry another floor fills (the old loader.WARM)
    ("vault/loader.py", "WARMED: dict = {}\n", "WARMED"),
    # a flag a command sets (the old gitstate.QUIET)
    ("vault/gitstate.py", "HUSH = [False]\n\n\ndef hush():\n    HUSH[0] = True\n", "HUSH"),
    # a memo read through sys.modules (the old snapshots.BLOBS)
    ("vault/snapshots.py", "HELD: dict = {}\n", "HELD"),
    # a module-level name rebound under `global`
    ("core/atomic.py", "_LAST = None\n\n\ndef last(x):\n    global _LAST\n    _LAST = x\n",
     "_LAST"),
])
def test_a_planted_registry_is_found(tmp_path, module, planted, name):
    import shutil

    shutil.copytree(PACKAGE, tmp_path / "vaultkit",
                    ignore=shutil.ignore_patterns("__pycache__", "_data"))
    with open(tmp_path / "vaultkit" / module, "a", encoding="utf-8") as fh:
        fh.write("\n\n" + planted)
    owner = "vaultkit." + module.removesuffix(".py").replace("/", ".")
    if name == "WARMED":  # read by the answering process, as WARM was
        with open(tmp_path / "vaultkit/cli/commands/_check_server.py", "a",
                  encoding="utf-8") as fh:
            fh.write("\n\ndef _warm():\n    from vaultkit.vault.loader import WARMED\n"
                     "    return WARMED\n")
    if name == "HELD":
        with open(tmp_path / "vaultkit/cli/commands/_check_server.py", "a",
                  encoding="utf-8") as fh:
            fh.write("\n\ndef _held():\n    s = sys.modules.get('vaultkit.vault.snapshots')\n"
                     "    return s.HELD\n")
    assert (owner, name) in registries(tmp_path / "vaultkit")
    assert (owner, name) not in registries()


def test_the_session_floor_sits_between_audit_and_the_cli():
    """What outlives a call is the session floor's: the layers contract puts it under the
    CLI (which opens workspaces) and over everything that answers (which gets handed what
    it needs)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    layers = next(c for c in config["tool"]["importlinter"]["contracts"]
                  if c["type"] == "layers" and not c.get("containers"))["layers"]
    assert layers.index("vaultkit.cli") + 1 == layers.index("vaultkit.session")
    assert layers.index("vaultkit.session") + 1 == layers.index("vaultkit.audit")


def test_one_racy_rule_in_the_store():
    """The racy margin and its two helpers are defined once, in the store, and every cache
    (the search index and the snapshot store's memo files too) takes them from there: two
    margins would let one cache trust a file another reads again."""
    rule = {"RACY_NS", "racy", "content_id"}
    defined, imported = [], []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path, PACKAGE)
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in tree.body:
            names = [t.id for t in node.targets if isinstance(t, ast.Name)] \
                if isinstance(node, ast.Assign) else \
                [node.name] if isinstance(node, ast.FunctionDef) else []
            defined += [(module, n) for n in names if n in rule]
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                imported += [(module, node.module) for a in node.names if a.name in rule]
    assert sorted(defined) == [("vaultkit.vault.store", n) for n in sorted(rule)]
    assert imported and {source for _, source in imported} == {"vaultkit.vault.store"}, \
        imported


def test_a_workspace_holding_its_writes_holds_no_other_s(tmp_path):
    """The writes held until an answer is sent are one workspace's (its store's and its
    snapshot memo's), not the process's: two vaults open in one server, one answering,
    the other's caches are written at once."""
    from vaultkit.session.workspace import Workspace

    answering, other = Workspace(tmp_path / "a"), Workspace(tmp_path / "b")
    answering.later.hold()
    done: list[str] = []
    other.store.later(lambda: done.append("other's store"))
    other.blobs.later(lambda: done.append("other's snapshot memo"))
    answering.store.later(lambda: done.append("store"))
    answering.blobs.later(lambda: done.append("snapshot memo"))
    assert done == ["other's store", "other's snapshot memo"]
    answering.later.run()
    assert done[2:] == ["store", "snapshot memo"] and not answering.later.holding


def test_the_paths_notes_write_out_are_the_vault_s_declared_memo(make_vault):
    """What ``ctx.inbound`` reads of the paths notes write out is the vault's own declared
    memo (``Vault.mentioned``, worked out once per vault), not a name another module hides
    in the vault's ``__dict__``."""
    from vaultkit.lint.rule import Context
    from vaultkit.vault.loader import load_vault

    root = make_vault({"a.md": "# A\n\nSee notes/b.md for more.\n", "notes/b.md": "# B\n"})
    vault = load_vault(root, use_cache=False)
    ctx = Context(vault)
    assert ctx.inbound(vault.notes["notes/b.md"]) == ["a.md"]
    assert vars(vault)["mentioned"] == {"notes/b.md": {"a.md"}}
    assert not {n for n in vars(vault) if "mention" in n} - {"mentioned"}


def test_the_snapshot_versions_read_are_their_memo_s(tmp_path):
    """What a snapshot chain recorded, read by a run, is kept in the snapshot memo its owner
    hands down (a run's, a workspace's), and the heads the answering process is told are
    that memo's: another workspace in the same process was told nothing."""
    import marshal

    from vaultkit.cli.commands._check_server import _learned
    from vaultkit.session.workspace import Workspace
    from vaultkit.vault.snapshots import Versions

    reading, other = Workspace(tmp_path / "a"), Workspace(tmp_path / "b")
    reading.blobs.versions[(str(tmp_path), "refs/vaultkit/snapshots", None)] = \
        Versions("a" * 40, [])
    assert reading.blobs.heads_read() == ["a" * 40] and other.blobs.heads_read() == []
    assert marshal.loads(_learned(reading))[4] == ["a" * 40]
    assert marshal.loads(_learned(other))[4] == []
