"""The server's keystrokes and INDEX.md: an overlay check reuses the index rendered from the
files while no changed note shows the index other facts, and answers, whatever the edits,
what `vaultkit check --no-cache` says of the same texts saved."""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cli_invoke import invoke
from test_git import commit_all, init_repo
from vault_files import age_files, write_files

from vaultkit.lint.report import render
from vaultkit.session.workspace import Workspace

TOKEN = "ghp_R8x2Lq9ZtVb4Nw7Kc1Md5Yp0Hs3Jf6Ga8Ue2"
FILES = {
    "memory/semantic/alpha.md": "---\ndescription: Alpha facts\n---\n# Alpha\n\n"
                                "See [[beta#Work]].\n",
    "memory/semantic/beta.md": "# Beta\n\n## Work\n\nBuilds things, see [[gamma]].\n",
    "memory/semantic/gamma.md": "# Gamma\n\nThe third note.\n",
    "memory/2026-02-13.md": "# 2026-02-13\n\n- Deployed v1.2, see [[alpha]].\n",
    "MEMORY.md": "# MEMORY\n\n- durable fact, see [[beta]]\n",
    "AGENTS.md": "# Agents\n\nRead MEMORY.md.\n",
}
NOTES = [p for p in FILES if p.startswith("memory/semantic/")] + ["MEMORY.md"]
CONFIGS = ['ignore = ["orphan-note"]\n', '[index]\nmost-linked = 1\n',
           '[severity]\nindex-stale = "warning"\n']


def _vault(tmp: Path) -> Path:
    root = tmp / "vault"
    (root / ".obsidian").mkdir(parents=True)
    write_files(root, FILES)
    code, _, err = invoke(["index"], root)  # INDEX.md as generated: quiet until a fact moves
    assert code == 0, err
    init_repo(root)
    commit_all(root, "first")
    age_files(root)
    invoke(["check", "-q"], root)  # a parse cache and an index memo, as an editor finds them
    return root


def _on_disk(root: Path, overlay: dict, tmp: Path, paths=()) -> str:
    """`vaultkit check --no-cache --format json` of a copy with the overlay saved."""
    copy = Path(tempfile.mkdtemp(dir=tmp))
    shutil.rmtree(copy)
    shutil.copytree(root, copy, symlinks=True)
    for rel, text in overlay.items():
        (copy / rel).write_bytes(text.encode("utf-8"))
    code, out, err = invoke(["check", "--no-cache", "--format", "json", "-q", *paths], copy)
    assert code in (0, 1), err
    return out


def _edit(text: str, kind: str, n: int) -> str:
    """One editor change of a note's text (``n`` varies it)."""
    if kind == "title":
        return re.sub(r"^# .*$", f"# Retitled {n}", text, count=1, flags=re.M)
    if kind == "description":
        desc = [f"Facts, take {n}", f"deploy key {TOKEN}"][n % 2]
        if text.startswith("---\n"):
            return re.sub(r"^description: .*$", f"description: {desc}", text, count=1,
                          flags=re.M)
        return f"---\ndescription: {desc}\n---\n{text}"
    if kind == "link-add":
        return text + f"\nAlso [[{['gamma', 'beta', 'nowhere', 'alpha'][n % 4]}]].\n"
    if kind == "link-remove":
        lines = text.splitlines(keepends=True)
        linked = [i for i, line in enumerate(lines) if "[[" in line]
        return "".join(lines[:linked[-1]] + lines[linked[-1] + 1:]) if linked else text
    if kind == "heading":
        return text.replace("## Work", "## Jobs") if "## Work" in text \
            else text.replace("## Jobs", "## Work")
    if kind == "credential":
        return text + f"token: {TOKEN}\n"
    if kind == "body":  # a keystroke the index does not read
        return text + f"- an unsaved line {n}\n"
    raise AssertionError(kind)


EDITS = st.one_of(
    st.tuples(st.sampled_from(["title", "description", "link-add", "link-remove", "heading",
                               "credential", "body"]),
              st.sampled_from(NOTES), st.integers(0, 7)),
    st.tuples(st.just("save"), st.sampled_from(NOTES), st.integers(0, 7)),
    st.tuples(st.just("config"), st.sampled_from(CONFIGS), st.integers(0, 7)),
)


@settings(max_examples=25, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(st.lists(EDITS, min_size=1, max_size=5))
def test_overlay_checks_answer_what_check_says_of_the_saved_texts(edits):
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        root = _vault(tmp)
        ws = Workspace(root.resolve())
        try:
            overlay: dict[str, str] = {}
            for kind, what, n in edits:
                if kind == "config":
                    (root / "vaultkit.toml").write_text(what, encoding="utf-8")
                elif kind == "save":
                    text = overlay.pop(what, None)
                    if text is not None:
                        (root / what).write_text(text, encoding="utf-8")
                else:
                    text = overlay.get(what)
                    if text is None:
                        text = (root / what).read_text(encoding="utf-8")
                    overlay[what] = _edit(text, kind, n)
                got = render(ws.check(None, overlay=overlay), "json")
                assert got == _on_disk(root, overlay, tmp), (edits, overlay)
                if overlay:  # as the server asks: the changed notes and their dependents
                    path = sorted(overlay)[0]
                    diags, _, paths = ws.check_around(path, overlay, also=overlay)
                    assert render(diags, "json") == _on_disk(root, overlay, tmp,
                                                             sorted(paths))
        finally:
            ws.close()


def test_a_keystroke_in_a_body_does_not_render_the_index_again(tmp_path, monkeypatch):
    import vaultkit.links.indexgen as indexgen

    root = _vault(tmp_path)
    ws = Workspace(root.resolve())
    path = "memory/semantic/beta.md"
    text = (root / path).read_text(encoding="utf-8")
    ws.check_around(path, {path: text + "- a\n"})  # the files' index rendered, kept
    rendered = []
    real = indexgen._sections
    monkeypatch.setattr(indexgen, "_sections", lambda *a: rendered.append(1) or real(*a))
    for i in range(3):
        overlay = {path: text + "- a line being typed" + "!" * i + "\n"}
        got = render(ws.check(None, overlay=overlay), "json")
        assert rendered == []
        assert got == _on_disk(root, overlay, tmp_path)
        rendered.clear()  # (the command renders its own)
    # a retitled note shows the index another description: rendered, and stale
    overlay = {path: text.replace("# Beta", "# Beta, the builder")}
    got = render(ws.check(None, overlay=overlay), "json")
    assert rendered and "index-stale" in got
    assert got == _on_disk(root, overlay, tmp_path)
    ws.close()
