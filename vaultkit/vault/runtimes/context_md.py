"""``context-md`` (Gemini CLI): the context files (``GEMINI.md``, renamed by the
``context.fileName`` setting) from the workspace up to the git root, their ``@path``
imports inlined, each file in a block naming its absolute path.

At session start Gemini CLI (packages/core/src/utils/memoryDiscovery.ts,
memoryImportProcessor.ts) looks in the workspace and every folder above it up to the
nearest folder holding ``.git`` (the workspace alone outside a repository) for each
context file name, keeps one path per file (by device and inode), sorts the paths as
strings, reads each as UTF-8 and expands its imports: ``@path`` at the start of the text
or after a space, tab or line break, up to the next whitespace, starting with ``.``, ``/``
or a letter, not inside a backtick span. An import is replaced by the file between
``<!-- Imported from: P -->`` and ``<!-- End of import from: P -->`` (its own imports
expanded, five levels deep at most: deeper, the text stays as written); one that cannot
be read by ``<!-- Import failed: P - <the error> -->``; one whose real path leaves the
project root by ``<!-- Import failed: P - Path traversal attempt -->``; a file already on
the chain of imports by ``<!-- File already processed: P -->``. Each file, trimmed, becomes
``--- Context from: <path> ---`` … ``--- End of Context from: <path> ---``; the blocks are
joined with a blank line. Subfolder context files load later, when a tool first touches a
path there. Sources: docs/context.md.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from vaultkit.core.lazyre import lazy_re
from vaultkit.vault.runtimes.base import (
    _JS_SPACE, Files, ImportProblem, Piece, Request, RuntimeContext, _chain, git_root,
    u16len)

_CODE = lazy_re(r"(`+)([\s\S]*?)\1")  # findCodeRegions
_URL = lazy_re(r"^(file|https?)://")
_IMPORT_SPACE = " \t\n\r"


def find_imports(content: str) -> list[tuple[int, int, str]]:
    """(start, end, path) of each import candidate, as findImports scans for them."""
    out, i, n = [], 0, len(content)
    while i < n:
        i = content.find("@", i)
        if i == -1:
            break
        if i > 0 and content[i - 1] not in _IMPORT_SPACE:
            i += 1
            continue
        j = i + 1
        while j < n and content[j] not in _IMPORT_SPACE:
            j += 1
        target = content[i + 1:j]
        if target and (target[0] in "./" or ("a" <= target[0].lower() <= "z")):
            out.append((i, j, target))
        i = j + 1
    return out


def _within(real: str, root: str) -> bool:
    rel = os.path.relpath(real, root)
    return rel != ".." and not rel.startswith(".." + os.sep) and not os.path.isabs(rel)


class _Expander:
    """processImports in its tree format, for one top-level file."""

    def __init__(self, spec, files: Files, ctx: RuntimeContext, top: Path):
        self.spec, self.files, self.ctx = spec, files, ctx
        base = top.parent
        root = git_root(base)  # findProjectRoot: the nearest .git, else the file's folder
        self.project_root = os.path.realpath(root if root is not None else base)

    def expand(self, content: str, file: Path, shown: str, processed: frozenset,
               depth: int, stack: tuple) -> str:
        """``content`` of ``file`` (named ``shown`` as Gemini CLI names it: by the
        physical path of the folder it started from) with its imports expanded."""
        regions = [(m.start(), m.end()) for m in _CODE.finditer(content)]
        rel = self.files.rel(file)
        if depth >= self.spec.import_max_depth:  # the text stays as it is
            self.ctx.imports.extend(
                ImportProblem(rel, content.count("\n", 0, s) + 1, t, "too-deep",
                              f"hop {depth + 1}, over the maximum of "
                              f"{self.spec.import_max_depth}; left as text")
                for s, _, t in find_imports(content)
                if not any(a <= s < b for a, b in regions))
            return content
        base = file.parent
        out, last = [], 0
        for start, end, target in find_imports(content):
            out.append(content[last:start])
            last = end
            line = content.count("\n", 0, start) + 1
            if any(a <= start < b for a, b in regions):
                out.append("@" + target)
                continue
            full = Path(os.path.normpath(os.path.join(base, target)))
            shown_full = os.path.normpath(os.path.join(os.path.dirname(shown), target))
            if _URL.match(target) or not _within(os.path.realpath(full),
                                                    self.project_root):
                out.append(f"<!-- Import failed: {target} - Path traversal attempt -->")
                self.ctx.imports.append(ImportProblem(rel, line, target, "outside",
                                                      "outside the project root"))
                continue
            if shown_full in processed:
                out.append(f"<!-- File already processed: {target} -->")
                self.ctx.imports.append(ImportProblem(
                    rel, line, target, "circular",
                    " -> ".join(self.files.rel(p) for p in (*stack, file, full))))
                continue
            text = self.files.text(full) if os.path.isfile(full) else None
            if text is None:
                why = self.files.refusal(full) if os.path.lexists(full) else None
                if why:
                    self.ctx.pieces.append(self.files.refused_piece(full, "import", rel,
                                                                    depth + 1))
                    self.ctx.notes.append(f"{self.files.rel(full)} is not read ({why}): "
                                          f"the text shown for {rel} lacks it")
                    continue
                error = (f"EISDIR: illegal operation on a directory, read"
                         if os.path.isdir(full) else
                         f"ENOENT: no such file or directory, access '{shown_full}'")
                out.append(f"<!-- Import failed: {target} - {error} -->")
                self.ctx.imports.append(ImportProblem(rel, line, target, "missing",
                                                      "no such file"))
                continue
            piece = Piece(self.files.rel(full), "import", u16len(text), "", 0,
                          u16len(text), via=rel, depth=depth + 1)
            self.ctx.pieces.append(piece)  # (its text is in the block of the file above)
            inner = self.expand(text, full, shown_full, processed | {shown_full}, depth + 1,
                                (*stack, file))
            piece.injected_length = u16len(inner)
            out.append(f"<!-- Imported from: {target} -->\n{inner}\n"
                       f"<!-- End of import from: {target} -->")
        out.append(content[last:])
        return "".join(out)


def _settings(spec, files: Files) -> tuple[dict | None, str]:
    """The workspace's settings file as a dict (None: absent, or not read), and why not."""
    if not spec.settings_file:
        return None, ""
    from vaultkit.core.bounded import MAX_CONFIG_BYTES, load_json, read_regular

    path = files.workspace / spec.settings_file
    if files.confined(path) or not os.path.isfile(path):
        return None, ""
    try:
        data = load_json(read_regular(os.path.realpath(path), MAX_CONFIG_BYTES,
                                      follow_symlinks=False).decode("utf-8-sig"))
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        return None, f"{files.rel(path)} is not read ({exc}); "
    return (data if isinstance(data, dict) else None), ""


# settings of Gemini CLI's "context" that change what is loaded and are not simulated
# (packages/cli/src/config/settingsSchema.ts): their value when it is not the default
_UNSIMULATED = {"importFormat": ("tree", None), "memoryBoundaryMarkers": ([".git"], None),
                "includeDirectories": ([], None)}


def unsimulated(spec, files: Files) -> list[str]:
    """The workspace settings this simulation does not follow, as ``key = value``."""
    import json  # (only here: a warm check that loads no runtime never imports json)

    data, _ = _settings(spec, files)
    context = data.get("context") if isinstance(data, dict) else None
    if not isinstance(context, dict):
        return []
    return [f"context.{k} = {json.dumps(context[k])}" for k, default in _UNSIMULATED.items()
            if k in context and context[k] not in default]


def context_names(spec, files: Files) -> tuple[list[str], str]:
    """The context file names, and where they come from: the settings file's key (a name
    or a list of names) when it sets one, else the profile's ``files``."""
    data, trouble = _settings(spec, files)
    if data is None:
        return list(spec.files), trouble
    path = files.workspace / spec.settings_file
    value = data
    for key in spec.settings_key.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list):
        return list(spec.files), ""
    good = [n.strip() for n in names if isinstance(n, str) and n.strip()
            and not os.path.isabs(n.strip()) and ".." not in re.split(r"[/\\]", n)]
    return (list(dict.fromkeys(good)) or list(spec.files)), \
        f"{spec.settings_key} in {files.rel(path)}; "


def _sort_key(path: str) -> bytes:
    return path.encode("utf-16-be", "surrogatepass")  # JavaScript compares UTF-16 units


def load(request: Request) -> RuntimeContext:
    spec, files = request.spec, request.files
    names, source = context_names(spec, files)
    ctx = RuntimeContext("gemini-cli", spec.label or "Gemini CLI", spec.unit, None,
                         joiner="\n\n", window_tokens=spec.context_window_tokens,
                         limits_source=f"{source}context files load in full")
    found, seen = [], set()
    global_dir = os.path.realpath(os.path.expanduser("~/.gemini"))
    for folder in reversed(_chain(files)):  # upward, each folder's names in order
        if os.path.realpath(folder) == global_dir:
            break
        # (named by the folder's physical path, as the working folder is)
        here = [(folder / n, os.path.join(os.path.realpath(folder), n)) for n in names
                if os.path.exists(folder / n)]
        found[:0] = here
    paths = []
    for path, shown in found:
        try:
            st = os.stat(path)
            key = (st.st_dev, st.st_ino)
        except OSError:
            key = None
        if key is not None and key in seen:
            continue
        if key is not None:
            seen.add(key)
        paths.append((path, shown))
    paths.sort(key=lambda p: _sort_key(p[1]))
    for path, shown in paths:
        if os.path.isdir(path):
            continue  # a folder of that name is skipped
        text = files.text(path)
        if text is None:
            if files.refusal(path):
                ctx.pieces.append(files.refused_piece(path, "context"))
            continue
        expander = _Expander(spec, files, ctx, path)
        at = len(ctx.pieces)
        body = expander.expand(text, path, shown, frozenset(), 0, ())
        trimmed = body.strip(_JS_SPACE)
        if not trimmed:
            continue
        block = (f"--- Context from: {shown} ---\n{trimmed}\n"
                 f"--- End of Context from: {shown} ---")
        ctx.pieces.insert(at, Piece(files.rel(path), "context", u16len(text), block,
                                    u16len(block), u16len(text)))
    ctx.notes.append("~/.gemini/GEMINI.md (global), extension context files and the "
                     "private project memory lie outside the vault: not simulated; the "
                     "project files load only in a trusted folder")
    ctx.notes.append("context files in subfolders load when a tool first touches a path "
                     "there (just-in-time), not at session start")
    skipped = unsimulated(spec, files)
    if skipped:
        ctx.notes.append(f"{spec.settings_file} sets {', '.join(skipped)}: not simulated, "
                         "what Gemini CLI loads differs from the above")
    ctx.notes.append("~/.gemini/settings.json (user settings, which may rename the context "
                     "file too) is not read")
    return ctx


def outside_paths(vault, spec) -> list[Path]:
    """What a cached result depends on beyond the vault's listing: the settings file that
    renames the context file, and the renamed files in the folders up to the git root."""
    files = Files(vault)
    names, _ = context_names(spec, files)
    out = [files.workspace / spec.settings_file] if spec.settings_file else []
    return out + [folder / n for folder in _chain(files) for n in names
                  if n not in spec.files]
