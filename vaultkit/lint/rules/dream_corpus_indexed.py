import os
import posixpath

from vaultkit.lint.rule import Rule

_KEY = "memorySearch.extraPaths"


def dream_paths(entry, workspace: str) -> bool:
    """Does an ``extraPaths`` entry name dreaming's machine state: ``memory/.dreams`` or a
    path in it (the session corpus), relative to the workspace or absolute?"""
    if not isinstance(entry, str) or not entry.strip():
        return False
    text = entry.strip().replace("\\", "/")
    if text.startswith("~/"):
        text = os.path.expanduser("~") + text[1:]
    full = text if posixpath.isabs(text) else posixpath.join(workspace, text)
    parts = posixpath.normpath(full).split("/")
    return ".dreams" in parts or "session-corpus" in parts


class DreamCorpusIndexed(Rule):
    """
    ## What it does
    Reports an `openclaw.json` whose memory search indexes OpenClaw dreaming's machine
    state as memory: an entry of `memorySearch.extraPaths` (under `agents.defaults`, or an
    agent's `agents.list[]` entry), of the QMD backend's `memory.qmd.paths` or of an
    agent's `memorySearch.qmd.extraCollections` (their `path`) that is `memory/.dreams` or a
    path inside it, such as the session corpus `memory/.dreams/session-corpus`. Relative
    entries are read against the workspace, as OpenClaw reads them; `~/` is the home
    folder. The finding is on the config file, at the line of the entry.

    Sources, checked 2026-12-07: openclaw/openclaw `docs/concepts/memory.md` ("Additional
    memory paths": `agents.defaults.memorySearch.extraPaths`, absolute or workspace-relative
    paths, folders scanned recursively for `.md` files); `docs/concepts/memory-qmd.md`
    ("Indexing extra paths": `memory.qmd.paths` entries `{ name, path, pattern }`; QMD's
    own scan of the workspace skips hidden folders, a path given inside one is indexed);
    `extensions/memory-core/src/
    short-term-promotion.ts` (the session corpus `memory/.dreams/session-corpus/
    YYYY-MM-DD.md` or `.txt`: redacted transcripts dreaming ranks, not memory);
    `docs/concepts/dreaming.md` (`memory/.dreams/` is machine state).

    ## Why is this bad?
    The session corpus holds raw conversation turns. Indexed as memory, `memory_search`
    returns them as remembered facts, and dreaming, which ranks what search recalls, then
    promotes them into `MEMORY.md`: the loop the corpus exists to keep out. A warning: the
    agent still works, but its memory fills with transcripts.

    ## Example
    ```json5
    { agents: { defaults: { memorySearch: { extraPaths: ["memory/.dreams/session-corpus"] } } } }
    ```

    ```
    ../openclaw.json:1:1: VK408 dream-corpus-indexed warning: agents.defaults.memorySearch.extraPaths indexes 'memory/.dreams/session-corpus', dreaming's machine state (the session corpus, recall stores), as memory; remove it from extraPaths
    ```
    """

    name = "dream-corpus-indexed"
    code = "VK408"
    severity = "warning"
    scope = "vault"

    def check_vault(self, ctx):
        from vaultkit.vault.openclaw import find_config, load_cached

        vault = ctx.vault
        config = find_config(vault)
        if config is None:
            return
        data, error = load_cached(config)
        if error is not None or not isinstance(data, dict):
            return  # the audit says what is wrong with the config
        workspace = str(vault.workspace).replace("\\", "/")
        agents = data.get("agents") if isinstance(data.get("agents"), dict) else {}
        places = [("agents.defaults", agents.get("defaults"))]
        items = agents.get("list")
        for item in items if isinstance(items, list) else ():
            if isinstance(item, dict):
                places.append((f"agents.list[{item.get('id', '?')}]", item))
        # (setting, its entries): the builtin engine's extraPaths (paths), QMD's collections
        # ({path, name, pattern?}): memory.qmd.paths and an agent's qmd.extraCollections
        lists = []
        for where, block in places:
            search = _get(block, "memorySearch")
            lists.append((f"{where}.{_KEY}", _get(search, "extraPaths")))
            lists.append((f"{where}.memorySearch.qmd.extraCollections",
                          _get(_get(search, "qmd"), "extraCollections")))
        lists.append(("memory.qmd.paths", _get(_get(data.get("memory"), "qmd"), "paths")))
        text = None
        rel = os.path.relpath(config, vault.root).replace(os.sep, "/")
        for setting, entries in lists:
            for entry in entries if isinstance(entries, list) else ():
                path = entry.get("path") if isinstance(entry, dict) else entry
                if not dream_paths(path, workspace):
                    continue
                if text is None:
                    text = _text(config)
                yield self.diag(rel, _line_of(text, path), 1,
                                f"{setting} indexes {path!r}, dreaming's machine state (the "
                                "session corpus, recall stores), as memory; remove it from "
                                f"{setting.rsplit('.', 1)[-1]}")


def _get(obj, key):
    return obj.get(key) if isinstance(obj, dict) else None


def _text(path) -> str:
    from vaultkit.core.bounded import read_text

    try:
        return read_text(path)
    except (OSError, UnicodeDecodeError, ValueError):
        return ""


def _line_of(text: str, entry: str) -> int:
    """The line of the config holding ``entry`` (quoted), 1 when it cannot be found."""
    for quote in ('"', "'"):
        at = text.find(quote + entry + quote)
        if at >= 0:
            return text.count("\n", 0, at) + 1
    return 1


RULE = DreamCorpusIndexed
