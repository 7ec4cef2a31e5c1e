"""Property: whatever edits a vault sees, a run with the caches prints what a run without
them prints (stdout and exit code), for ``check`` in text and JSON and for the commit
hook with the staged files. The edits are the ones a stat key can miss: the same size with
the mtime put back, a write through a hard link made outside the vault, a rename-save, a
``cp -p`` (shutil.copy2), files added and removed, a ``vaultkit.toml`` change, and a staged
change followed by a change in the working tree, with a credential among the contents."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cli_invoke import invoke
from test_git import commit_all, git, init_repo
from vault_files import age_files, write_files

# contents of one length, so a rewrite keeps the size: a credential, a clean line, links
# that resolve or not
LINES = ["token: ghp_R8x2Lq9ZtVb4Nw7Kc1Md5Yp0Hs3Jf6Ga8Ue2\n",
         "token: kept in the password manager, not here!!\n",
         "see [[b]] and [[c]] for the rest of the story. \n",
         "see [[x]] and [[y]] for the rest of the story. \n"]
assert len({len(line) for line in LINES}) == 1
NOTES = ["memory/semantic/a.md", "memory/semantic/b.md", "memory/semantic/c.md"]
CONFIGS = ['ignore = ["orphan-note"]\n', 'ignore = ["broken-link"]\n']

note = st.sampled_from(NOTES)
line = st.sampled_from(LINES)
EDITS = st.one_of(
    st.tuples(st.just("same-size-mtime-back"), note, line),
    st.tuples(st.just("through-outside-link"), note, line),
    st.tuples(st.just("rename-save"), note, line),
    st.tuples(st.just("copy2"), note, line),
    st.tuples(st.just("add"), st.sampled_from(["memory/semantic/x.md", "memory/semantic/y.md"]),
              line),
    st.tuples(st.just("remove"), st.sampled_from(NOTES[1:]), line),
    st.tuples(st.just("config"), st.sampled_from(CONFIGS), line),
    st.tuples(st.just("stage-then-edit"), note, line),
)


def _text(path: Path, body: str) -> str:
    return f"# {path.stem}\n\n{body}"


def _rewrite(path: Path, body: str) -> None:
    """The same size (every line is as long), the old mtime put back."""
    st_ = os.stat(path)
    path.write_text(_text(path, body))
    os.utime(path, ns=(st_.st_atime_ns, st_.st_mtime_ns))


def _apply(root: Path, outside: Path, edit) -> list[str]:
    """Make ``edit``; the vault paths it staged."""
    kind, what, body = edit
    path = root / what if kind != "config" else root / "vaultkit.toml"
    if kind == "config":
        path.write_text(what)
        return []
    if kind == "remove":
        if path.exists():
            path.unlink()
        return []
    if kind == "add":
        path.write_text(_text(path, body))
        return []
    if not path.exists():
        path.write_text(_text(path, body))
        return []
    if kind == "same-size-mtime-back":
        _rewrite(path, body)
    elif kind == "through-outside-link":
        link = outside / path.name
        if not link.exists() or not os.path.samefile(link, path):
            link.unlink(missing_ok=True)
            os.link(path, link)
        old = os.stat(link)
        with open(link, "r+", encoding="utf-8") as fh:  # (in place: the vault's inode)
            fh.write(_text(path, body))
        os.utime(link, ns=(old.st_atime_ns, old.st_mtime_ns))
    elif kind == "rename-save":
        old = os.stat(path)
        temp = path.with_name(f".{path.name}.swp")
        temp.write_text(_text(path, body))
        os.utime(temp, ns=(old.st_atime_ns, old.st_mtime_ns))
        os.replace(temp, path)
    elif kind == "copy2":
        old = os.stat(path)
        source = outside / f"copy-{path.name}"
        source.write_text(_text(path, body))
        os.utime(source, ns=(old.st_atime_ns, old.st_mtime_ns))
        shutil.copy2(source, path)
    elif kind == "stage-then-edit":
        _rewrite(path, body)
        git(root, "add", what)
        _rewrite(path, LINES[(LINES.index(body) + 1) % len(LINES)])
        return [what]
    return []


def _same(root: Path, args: list[str]) -> None:
    cached = invoke(args, root)
    fresh = invoke([*args, "--no-cache"], root)
    assert cached[:2] == fresh[:2], (args, cached, fresh)


@settings(max_examples=30, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(st.lists(EDITS, min_size=1, max_size=4), st.lists(line, min_size=3, max_size=3))
def test_cached_runs_print_what_fresh_runs_print(edits, bodies):
    with tempfile.TemporaryDirectory() as tmp:
        root, outside = Path(tmp) / "vault", Path(tmp) / "outside"
        outside.mkdir()
        (root / ".obsidian").mkdir(parents=True)
        write_files(root, {p: _text(Path(p), body) for p, body in zip(NOTES, bodies)})
        init_repo(root)
        commit_all(root, "first")
        age_files(root)
        for p in NOTES:  # the links outside the vault, made before the first run
            os.link(root / p, outside / Path(p).name)
        staged = list(NOTES)
        for edit in [None, *edits]:
            if edit is not None:
                staged = _apply(root, outside, edit) or staged
                git(root, "add", "-A")  # (what the commit would hold; the hook's files)
                if edit[0] == "stage-then-edit":  # (the working tree differs again)
                    _rewrite(root / edit[1], LINES[(LINES.index(edit[2]) + 2) % len(LINES)])
            present = [p for p in staged if (root / p).exists()]
            _same(root, ["check"])
            _same(root, ["check", "--format", "json"])
            _same(root, ["check", "--hook", "--format", "json", *present])


@settings(max_examples=20, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(st.lists(EDITS, min_size=1, max_size=4), st.lists(line, min_size=3, max_size=3))
def test_the_mcp_session_answers_what_a_fresh_one_answers(edits, bodies):
    """The MCP server's session keeps its listing (file events), vault and search index
    between calls: its check and search answers are a fresh session's after each edit."""
    from vaultkit.cli.mcp_server import VaultSession

    with tempfile.TemporaryDirectory() as tmp:
        root, outside = Path(tmp) / "vault", Path(tmp) / "outside"
        outside.mkdir()
        (root / ".obsidian").mkdir(parents=True)
        write_files(root, {p: _text(Path(p), body) for p, body in zip(NOTES, bodies)})
        init_repo(root)
        commit_all(root, "first")
        age_files(root)
        for p in NOTES:
            os.link(root / p, outside / Path(p).name)
        kept = VaultSession(root)
        try:
            for edit in [None, *edits]:
                if edit is not None:
                    _apply(root, outside, edit)
                fresh = VaultSession(root, use_cache=False)
                try:
                    for query in ("token", "story"):
                        assert kept.memory_search({"query": query}) == \
                            fresh.memory_search({"query": query})
                    assert kept.vault_check({}) == fresh.vault_check({})
                finally:
                    fresh.close()
        finally:
            kept.close()
