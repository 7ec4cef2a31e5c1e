"""Property-based tests over generated vaults (hypothesis).

Generated vaults hold Markdown with and without frontmatter (valid, broken and tagged
YAML, deprecated and unquoted-link properties), headings, lists, quotes, code fences,
comments, wikilinks, Markdown links, tags and block ids, any Unicode, CRLF, a BOM, no
final newline, and files of random bytes. Properties:

- no command raises (check, index, graph, audit, search, get, distill, archive --dry-run):
  exit 0 or 1 (get: 2 with one line for a refused path), never an internal error;
- every finding's line is None or within 1..line count of its file;
- ``index`` is idempotent, and keeps every byte outside its markers;
- ``check --fix`` is idempotent, and changes no character outside the spans its
  findings name;
- ``init`` changes no existing file.

CI runs a few hundred examples in all. The long profile: ``VAULTKIT_FUZZ_EXAMPLES=10000
python -m pytest -p no:cacheprovider tests/test_fuzz.py`` runs that many examples for
every property.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
from pathlib import Path

from cli_invoke import invoke
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

LONG = int(os.environ.get("VAULTKIT_FUZZ_EXAMPLES", "0") or 0)


def fuzz(examples: int):
    """CI runs ``examples``; the long profile runs VAULTKIT_FUZZ_EXAMPLES of each."""
    return settings(max_examples=LONG or examples, deadline=None, database=None,
                    suppress_health_check=list(HealthCheck))


NAMES = ["alpha", "Beta note", "中文", "emoji 🧠", "x#y", "deep/inner", "MEMORY", "INDEX",
         "missing", "a^b", "2026-01-05"]
PATHS = ["MEMORY.md", "NOW.md", "AGENTS.md", "memory/INDEX.md", "memory/2026-01-05.md",
         "memory/2026-11-29.md", "memory/semantic/alpha.md", "memory/semantic/Beta note.md",
         "memory/semantic/deep/inner.md", "memory/semantic/中文.md", "memory/people/p.md",
         "memory/decisions/d.md", "memory/lessons/l.md", "memory/archive/2025-01-01.md",
         "notes/stray.md", "memory/semantic/emoji 🧠.md", "memory/img.png"]

text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30)
name = st.sampled_from(NAMES)

FM_LINES = st.one_of(
    st.sampled_from([
        "type: person", "type: decision", "type: lesson", "status: active", "date: 2026-01-05",
        "tags: [a, b]", "tag: [team]", "tag: x, y", "alias: Al", "cssclass: wide",
        "tags:\n  - one\n  - two", "related: [[alpha]]", "up: [[Beta note|B]]",
        "a: &x [1, 2]\nb: *x", "bad: [unclosed", "x: !!python/object/apply:os.system ['true']",
        "date: 2026-13-45", "? [a, b]\n: c", "- just a list", "description: |\n  block\n  text",
        "key: 'unterminated", "tags: 5", "aliases: [A, B]", "\ttab: indent",
    ]),
    st.builds(lambda k, v: f"{k}: {json.dumps(v, ensure_ascii=False)}",
              st.sampled_from(["title", "description", "tags", "x"]), text),
)

BLOCKS = st.one_of(
    st.builds(lambda n, t: f"{'#' * n} {t}", st.integers(1, 7), text),
    st.builds(lambda t: f"- {t}", text),
    st.builds(lambda d, t: "  " * d + f"- {t}", st.integers(0, 6), text),
    st.builds(lambda d, t: "> " * d + t, st.integers(1, 8), text),
    st.builds(lambda t: f"```\n{t}\n```", text),
    st.builds(lambda t: f"~~~python\n[[{t}]]", text),  # unclosed fence
    st.builds(lambda n, a: f"see [[{n}|{a}]] and ![[{n}#H]]", name, text),
    st.builds(lambda n: f"[[{n}#^blk]] [[{n}#Heading]] [[#local]]", name),
    st.builds(lambda n: f"[md]({n.replace(' ', '%20')}.md) <https://example.com> [x](../../{n})",
              name),
    st.builds(lambda t: f"text #tag/{t} and `code [[{t}]]` ^block-{len(t)}", text),
    st.builds(lambda t: f"<!-- {t} -->", text),
    st.sampled_from(["<!-- vaultkit-disable-next-line broken-link -->",
                     "<!-- vaultkit-disable-file orphan-note -->", "%% hidden [[x]] %%",
                     "%%", "$$", "---", "===", "***", "    indented [[code]]", "",
                     "<!-- vaultkit:index:start -->", "<!-- vaultkit:index:end -->",
                     "### 10:00 \u2014 Entry", "## Context", "## Decision", "\x0c", "\u2028"]),
    text,
)


@st.composite
def markdown(draw) -> bytes:
    lines = []
    if draw(st.booleans()):
        lines.append("---")
        lines += draw(st.lists(FM_LINES, max_size=5))
        if draw(st.integers(0, 9)):  # now and then the frontmatter never closes
            lines.append("---")
    lines += draw(st.lists(BLOCKS, max_size=12))
    nl = draw(st.sampled_from(["\n", "\n", "\r\n"]))
    body = nl.join(lines)
    if draw(st.booleans()):
        body += nl
    data = body.encode("utf-8", "surrogatepass")
    if draw(st.integers(0, 9)) == 0:
        data = b"\xef\xbb\xbf" + data
    return data


content = st.one_of(markdown(), markdown(), markdown(), st.binary(max_size=200))
vaults = st.dictionaries(st.sampled_from(PATHS), content, min_size=1, max_size=6)


@contextlib.contextmanager
def built(files: dict[str, bytes]):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        (root / ".obsidian").mkdir(parents=True)
        for rel, data in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        yield root


run = invoke  # (the name the properties below use)


def ok(rc, err, allowed=(0, 1)):
    assert rc in allowed, err
    assert "internal error" not in err and "Traceback" not in err, err


def snapshot(root: Path) -> dict[str, bytes]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".vaultkit"]
        for n in filenames:
            p = Path(dirpath, n)
            out[p.relative_to(root).as_posix()] = p.read_bytes()
    return out


def line_count(data: bytes) -> int:
    from vaultkit.vault.parse import parse_note

    return parse_note("x.md", data).line_count


# -- no command raises; findings point inside their files --------------------------------

@fuzz(150)
@given(vaults)
def test_check_findings_point_inside_files(files):
    with built(files) as root:
        rc, out, err = run(["check", "--select", "ALL", "--format", "json", "--no-cache", "."],
                           root)
        ok(rc, err)
        for f in json.loads(out):
            assert not f["path"].startswith(("/", "..")), f
            if f["line"] is None:
                continue
            data = (root / f["path"]).read_bytes()
            assert 1 <= f["line"] <= max(1, line_count(data)), (f, data)
            assert f["column"] is None or f["column"] >= 1, f


@fuzz(30)
@given(vaults, st.sampled_from(["lol", "alpha", "中文", "tag", "x y"]))
def test_no_command_raises(files, query):
    with built(files) as root:
        for argv in (["graph", "--format", "json", "."], ["graph", "."],
                     ["audit", "--skip", "git-backup,pre-commit", "."],
                     ["search", "--root", ".", "--json", "--min-score", "0", query],
                     ["distill", "--root", ".", "--days", "400", "--format", "json"],
                     ["archive", "--root", ".", "--dry-run"], ["index", "--check", "."],
                     ["check", "--diff", "."]):
            rc, out, err = run(argv, root)
            if argv[0] == "index" and rc == 2:  # markers that do not pair up: one clear line
                assert err.count("\n") == 1 and "INDEX.md" in err, err
                continue
            ok(rc, err)
        for rel in files:
            rc, out, err = run(["get", "--root", ".", "--json", rel], root)
            ok(rc, err, allowed=(0, 2))
            if rc == 2:
                assert err.count("\n") == 1, err


# -- index: idempotent, bytes outside the markers kept ----------------------------------------

START, END = "<!-- vaultkit:index:start -->", "<!-- vaultkit:index:end -->"
outside = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40).filter(
    lambda t: "vaultkit:index" not in t)


@fuzz(60)
@given(vaults, outside, outside, st.sampled_from(["\n", "\r\n"]))
def test_index_idempotent_and_keeps_bytes_outside_markers(files, before, after, nl):
    index = f"{before}{nl}{START}{nl}old{nl}{END}{nl}{after}".encode()
    files = dict(files)
    files["memory/INDEX.md"] = index
    with built(files) as root:
        rc, _, err = run(["index", "."], root)
        ok(rc, err, allowed=(0, 2))
        if rc == 2:  # e.g. INDEX.md itself unreadable: it must be left as it was
            assert (root / "memory/INDEX.md").read_bytes() == index
            return
        first = snapshot(root)
        data = first["memory/INDEX.md"]
        head = f"{before}{nl}".encode()
        tail = f"{nl}{after}".encode()
        assert data.startswith(head) and data.endswith(tail)
        rc, _, err = run(["index", "."], root)
        ok(rc, err)
        assert "Unchanged" in err
        assert snapshot(root) == first
        rc, _, err = run(["index", "--check", "."], root)
        assert rc == 0, err


# -- check --fix: idempotent, nothing outside the named spans --------------------------------

def _spans_only(old: str, new: str, spans: list[tuple[int, int]]) -> bool:
    """True when ``new`` is ``old`` with only the text inside ``spans`` replaced."""
    merged: list[list[int]] = []
    for s, e in sorted(spans):
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    pattern, pos = [], 0
    for s, e in merged:
        pattern.append(re.escape(old[pos:s]))
        pattern.append("(.*?)")
        pos = e
    pattern.append(re.escape(old[pos:]))
    return re.fullmatch("".join(pattern), new, re.S) is not None


@fuzz(60)
@given(vaults)
def test_fix_idempotent_and_confined_to_its_spans(files):
    from vaultkit.lint.engine import Selection, apply_fixes, run_rules, select_rules
    from vaultkit.lint.rule import Context
    from vaultkit.vault.loader import load_vault

    with built(files) as root:
        vault = load_vault(root, root=root, use_cache=False)
        rules = select_rules(vault.settings, Selection(["ALL"], [], []))
        diags = run_rules(Context(vault, staged=False, hook=False, targets=None), rules)
        by_path: dict[str, list] = {}
        for d in diags:
            if d.fix is not None:
                by_path.setdefault(d.path, []).append(d)
        # one pass of fixes changes nothing outside the spans its findings name
        for rel, items in by_path.items():
            note = vault.note(rel)
            new, count = apply_fixes(note, items)
            spans = [(e.start, e.end) for d in items for e in d.fix.edits]
            assert count >= 1 and _spans_only(note.text, new, spans), (rel, note.text, new)
        before = snapshot(root)
        rc, _, err = run(["check", "--fix", "--select", "ALL", "--no-cache", "."], root)
        ok(rc, err)
        first = snapshot(root)
        for rel, data in before.items():  # files without a fixable finding are untouched
            if rel not in by_path:
                assert first.get(rel) == data, rel
        # --fix is idempotent: a second run changes nothing
        rc, _, err = run(["check", "--fix", "--select", "ALL", "--no-cache", "."], root)
        ok(rc, err)
        second = snapshot(root)
        changed = {r for r in second if second[r] != first.get(r)}
        assert not changed, changed


def test_fix_with_duplicate_keys_is_idempotent():
    """Found by the long fuzz run: a repeated deprecated key is fixed in two passes."""
    files = {"NOW.md": b"\xef\xbb\xbf---\ntag: [team]\ntag: [team]\n---"}
    with built(files) as root:
        rc, _, err = run(["check", "--fix", "--select", "ALL", "--no-cache", "."], root)
        ok(rc, err)
        first = snapshot(root)
        assert first["NOW.md"].count(b"tag") == 1
        rc, _, err = run(["check", "--fix", "--select", "ALL", "--no-cache", "."], root)
        assert snapshot(root) == first


# -- init: no existing file changes --------------------------------------------------------------

TEMPLATE_PATHS = ["AGENTS.md", "MEMORY.md", "NOW.md", "SOUL.md", "USER.md", "HEARTBEAT.md",
                  ".gitignore", ".pre-commit-config.yaml", "vaultkit.toml", "memory/INDEX.md",
                  ".obsidian/graph.json", ".obsidian/app.json", "memory/semantic/.gitkeep",
                  "templates/decision.md", "memory/people/x.md", "other.txt"]


@fuzz(30)
@given(st.dictionaries(st.sampled_from(TEMPLATE_PATHS), st.binary(max_size=60), max_size=6))
def test_init_changes_no_existing_file(files):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "v"
        for rel, data in files.items():
            p = root / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(data)
        root.mkdir(exist_ok=True)
        before = snapshot(root)
        # (into a folder of notes init writes only its minimal set; --full, all it has)
        rc, _, err = run(["init", "-q", str(root)], Path(tmp))
        ok(rc, err, allowed=(0,))
        after = snapshot(root)
        for rel, data in before.items():
            assert after[rel] == data, rel
        assert "vaultkit.toml" in after
        rc, _, err = run(["init", "-q", "--full", str(root)], Path(tmp))
        ok(rc, err, allowed=(0,))
        after = snapshot(root)
        for rel, data in before.items():
            assert after[rel] == data, rel
        assert "AGENTS.md" in after and "memory/INDEX.md" in after


def test_index_that_notes_link_to_is_stable():
    """Regression (found by the fuzzer): INDEX.md listed itself under "Most linked" with a
    description taken from its own text, so every run rewrote it."""
    files = {"MEMORY.md": b"see [[INDEX]] and ![[INDEX#H]] and [[INDEX]]\n",
             "memory/INDEX.md": f"\n{START}\nold\n{END}\n".encode()}
    with built(files) as root:
        run(["index", "."], root)
        first = (root / "memory/INDEX.md").read_bytes()
        rc, _, err = run(["index", "."], root)
        assert rc == 0 and "Unchanged" in err
        assert (root / "memory/INDEX.md").read_bytes() == first
        assert b"[[INDEX]]" not in first


def test_fix_with_overlapping_fixes_is_idempotent():
    """Regression (found by the fuzzer): an INDEX.md with both a deprecated property and a
    stale region got one fix per run; --fix now repeats until nothing is left to fix."""
    files = {"memory/INDEX.md": b"\xef\xbb\xbf---\ntag: [team]\n---"}
    with built(files) as root:
        rc, _, err = run(["check", "--fix", "--select", "ALL", "--no-cache", "."], root)
        ok(rc, err)
        first = snapshot(root)
        rc, _, err = run(["check", "--fix", "--select", "ALL", "--no-cache", "."], root)
        ok(rc, err)
        assert snapshot(root) == first and "Fixed" not in err
