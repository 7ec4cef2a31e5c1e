"""A commit hook's work grows with the staged files, not with the vault times the files.

pre-commit passes every staged file: a commit that touches hundreds of notes (a rename whose
links Obsidian rewrote everywhere) names them all. The files are grouped by vault with one
search per folder, and the reported paths are found in the vault's listing read once.
"""

import json
import os

import pytest

from vaultkit.cli import main


@pytest.fixture
def vault(make_vault):
    files = {f"memory/semantic/n{i:02}.md": f"# N{i}\n[[missing-{i}]]\n" for i in range(12)}
    files.update({"memory/2026-11-29.md": "# 2026-11-29\n\n### 10:00 — A\n- [[gone]]\n",
                  "memory/lessons/l.md": "# L\n"})
    return make_vault(files)


def _hook(capsys, root, paths):
    cwd = os.getcwd()
    os.chdir(root)
    try:
        main(["check", "--hook", "--no-cache", "--format", "json", *paths])
    finally:
        os.chdir(cwd)
    return sorted((d["rule"], d["path"], d["line"]) for d in json.loads(capsys.readouterr().out))


def test_a_hook_searches_for_the_vault_once_per_folder(vault, capsys, monkeypatch):
    from vaultkit.vault import loader, scan  # noqa: F401 (its own find_root is not counted)

    real = scan.find_root
    searched = []
    monkeypatch.setattr(scan, "find_root", lambda start, *a, **k: searched.append(str(start))
                        or real(start, *a, **k))
    staged = [f"memory/semantic/n{i:02}.md" for i in range(12)] + ["memory/2026-11-29.md"]
    found = _hook(capsys, vault, staged)
    # one search for memory/semantic/, one for memory/ (before: one per staged file)
    assert searched == ["memory/semantic/n00.md", "memory/2026-11-29.md"]
    assert {p for _, p, _ in found} >= set(staged)


def test_a_symlinked_file_gets_a_search_of_its_own(vault, capsys, monkeypatch, tmp_path):
    """A staged symlink lies in the vault its target lies in, not its folder's."""
    from vaultkit.vault import loader, scan  # noqa: F401 (its own find_root is not counted)

    (vault / "memory/semantic/link.md").symlink_to(vault / "memory/semantic/n00.md")
    real = scan.find_root
    searched = []
    monkeypatch.setattr(scan, "find_root", lambda start, *a, **k: searched.append(str(start))
                        or real(start, *a, **k))
    _hook(capsys, vault, ["memory/semantic/n01.md", "memory/semantic/link.md",
                          "memory/semantic/n02.md"])
    assert searched == ["memory/semantic/n01.md", "memory/semantic/link.md"]


def test_the_reported_paths_come_from_one_read_of_the_listing(vault, monkeypatch):
    """Each named file used to be matched against every path of the vault, and the listing
    built again for each: 300 staged notes of a 10,000-note vault took seconds."""
    from vaultkit.cli.commands import _common
    from vaultkit.cli.commands.check import _targets
    from vaultkit.vault.loader import load_vault

    loaded = load_vault(vault, use_cache=False)
    reads = []

    class Counting(type(loaded)):
        @property
        def paths(self):
            reads.append(1)
            return super().paths

    loaded.__class__ = Counting
    cwd = os.getcwd()
    os.chdir(vault)
    try:
        named = [f"memory/semantic/n{i:02}.md" for i in range(12)]
        assert _targets(loaded, named, _common.vault_relative, hook=True) == set(named)
        assert len(reads) == 1
        # a folder still names every file below it, and only those
        assert _targets(loaded, ["memory/lessons", "memory/semantic/n03.md"],
                        _common.vault_relative) == {"memory/lessons/l.md",
                                                    "memory/semantic/n03.md"}
        assert _targets(loaded, ["memory/semantic/"], _common.vault_relative) == {
            f"memory/semantic/n{i:02}.md" for i in range(12)}
        # a path the listing lacks (a staged deletion) is reported on as named
        assert _targets(loaded, ["memory/old.md"], _common.vault_relative,
                        hook=True) == {"memory/old.md"}
    finally:
        os.chdir(cwd)


def test_a_hook_on_a_journal_without_phrases_compiles_no_phrase_list(make_vault, capsys,
                                                                    monkeypatch):
    """The entry rules ask the profile's phrase lists (runtime and topic sections, filler)
    of every entry; compiling those lists was ~15-20 ms of a one-note hook. A journal
    whose entries hold none of the phrases compiles none of them."""
    import re

    from vaultkit.vault import phrases

    root = make_vault({"memory/2026-11-29.md": "# 2026-11-29\n\n### 10:00 — Deploy\n"
                       "- Moved the nightly job to 02:00.\n- Checked the logs twice.\n"
                       "- The API answers again.\n"})
    phrases._cached.cache_clear()  # (matchers are shared by every run of this process)
    compiled = []
    real = re.compile
    monkeypatch.setattr(re, "compile", lambda p, *a, **k: compiled.append(p) or real(p, *a, **k))
    found = _hook(capsys, root, ["memory/2026-11-29.md"])
    assert found is not None
    # (each plain phrase list is one alternation with its words joined by \s+)
    assert [p for p in compiled if isinstance(p, str) and
            any(w in p for w in (r"light\s+sleep", r"next\s+step", r"nothing\s+to"))] == []
    assert phrases._cached.cache_info().currsize >= 2  # (the entry rules did ask)


def test_a_hook_looks_up_the_type_of_the_notes_it_reports_on_only(make_vault, capsys,
                                                                  monkeypatch):
    """The per-note rules ask each reported note's type; that used to build the type of
    every note of the vault (10,000 lookups for one staged journal)."""
    from vaultkit.vault.profile import Profile

    files = {f"memory/decisions/d{i:02}.md": f"# D{i}\n" for i in range(30)}
    files["memory/2026-11-29.md"] = "# 2026-11-29\n\n### 10:00 — Deploy\n- Moved the job.\n"
    root = make_vault(files)
    asked = []
    real = Profile.type_of
    monkeypatch.setattr(Profile, "type_of", lambda self, path: asked.append(path)
                        or real(self, path))
    cwd = os.getcwd()
    os.chdir(root)
    try:
        main(["check", "--hook", "--no-cache", "--ignore", "index-stale", "--format", "json",
              "memory/2026-11-29.md"])
    finally:
        os.chdir(cwd)
    assert json.loads(capsys.readouterr().out) is not None
    assert asked and set(asked) <= {"memory/2026-11-29.md"}


# -- a hook reads the notes it reports on, not the vault -------------------------------

def _aged(root, seconds=1_600_000_000):
    """Every file old enough for the parse cache to trust (not in the cache's clock tick)."""
    for p in root.rglob("*"):
        if ".vaultkit" not in p.parts:
            os.utime(p, (seconds, seconds))


def _run(capsys, root, args):
    cwd = os.getcwd()
    os.chdir(root)
    try:
        main(["check", "--format", "json", *args])
    finally:
        os.chdir(cwd)
    return json.loads(capsys.readouterr().out)


@pytest.fixture
def wide(make_vault):
    files = {f"memory/decisions/d{i:02}.md": f"---\ndate: 2026-01-{i + 1:02}\n---\n# D{i}\n\n"
             f"See [[d{(i + 1) % 30:02}]] and [[2026-11-29]].\n" for i in range(30)}
    files["memory/2026-11-29.md"] = ("# 2026-11-29\n\n### 10:00 — Deploy\n- Moved the job "
                                     "to [[d03]].\n- Checked the logs.\n- Answered again.\n")
    files["MEMORY.md"] = "# Memory\n\n- [[d01]]\n"
    root = make_vault(files)
    _aged(root)
    return root


def _append(root, path, text):
    with open(root / path, "a", encoding="utf-8") as f:
        f.write(text)


def made_notes(monkeypatch) -> list[str]:
    """The paths of the notes this test makes from here on: taken from the parse cache
    (their entry, or their record decoded) or read and parsed."""
    from vaultkit.vault import loader

    made = []
    real_entry, real_get, real_read = loader._Cache.entry, loader._Cache.note, loader._read_one
    monkeypatch.setattr(loader._Cache, "entry", lambda self, f, *a: made.append(f.rel)
                        or real_entry(self, f, *a))
    monkeypatch.setattr(loader._Cache, "note", lambda self, e: made.append(e.path)
                        or real_get(self, e))
    monkeypatch.setattr(loader, "_read_one", lambda a, rel, *r: made.append(rel)
                        or real_read(a, rel, *r))
    return made


def test_a_hook_run_loads_no_record_of_a_note_it_does_not_report_on(wide, capsys,
                                                                     monkeypatch):
    """A warm hook used to make all 10,000 notes from the parse cache (~30-60 ms) because
    the results cache's key, file-unreadable, the per-note rules' listing, the index memo
    and the resolver each went through ``vault.notes``; they now ask for the notes they
    need by path, and answer the rest (paths, sizes, mtimes) from the listing."""
    from vaultkit.links import indexgen

    _run(capsys, wide, ["."])
    _run(capsys, wide, ["."])  # (the index memo and the resolver's tables are kept)
    _append(wide, "memory/2026-11-29.md", "\n### 11:00 — Review\n- Read the plan again.\n"
            "- Agreed on it.\n- Wrote it down.\n")  # (no new link: the index reads none)
    made = made_notes(monkeypatch)
    rendered = []
    real_sections = indexgen._sections
    monkeypatch.setattr(indexgen, "_sections", lambda *a: rendered.append(1)
                        or real_sections(*a))
    found = _run(capsys, wide, ["--hook", "memory/2026-11-29.md"])
    assert not any(p.startswith("memory/decisions/") for p in made), made
    assert "memory/2026-11-29.md" in made
    assert rendered == []  # the index's facts did not change: its rendering is reused
    # the same findings as a run that reads everything
    monkeypatch.undo()
    assert found == _run(capsys, wide, ["--hook", "--no-cache", "memory/2026-11-29.md"])


def test_a_hook_reads_the_parse_caches_rows_of_its_notes_not_the_whole_table(wide, capsys,
                                                                              monkeypatch):
    """The stat table of every record (10,000 rows, 15-30 ms) is read whole only by a run
    that goes through every note; a hook asks for the rows of the notes it makes, and the
    index memo learns what changed from the listing."""
    from vaultkit.vault import loader

    _run(capsys, wide, ["."])
    _run(capsys, wide, ["."])
    _append(wide, "memory/2026-11-29.md", "\n### 11:00 — Review\n- Read the plan again.\n"
            "- Agreed on it.\n- Wrote it down.\n")
    whole = []
    real = loader._Cache.stats

    def stats(self):
        if self._stats is None:
            whole.append(1)
        return real.fget(self)

    monkeypatch.setattr(loader._Cache, "stats", property(stats, real.fset))
    found = _run(capsys, wide, ["--hook", "memory/2026-11-29.md"])
    assert whole == []
    after = _run(capsys, wide, ["."])  # a run over every note reads the table
    assert whole == [1]
    monkeypatch.undo()
    assert found == _run(capsys, wide, ["--hook", "--no-cache", "memory/2026-11-29.md"])
    assert after == _run(capsys, wide, ["--no-cache", "."])


@pytest.mark.parametrize("change", ["new note", "removed note", "retitled", "unstaged edit",
                                    "unreadable"])
def test_a_hook_finds_what_a_full_run_finds_after_each_change(wide, capsys, change):
    """Whatever changed, the hook's findings are those of a run without any cache."""
    _run(capsys, wide, ["."])
    _run(capsys, wide, ["."])
    staged = ["memory/2026-11-29.md"]
    _append(wide, "memory/2026-11-29.md", "\n### 11:00 — Review\n- See [[brand-new]].\n")
    if change == "new note":
        (wide / "memory/decisions/brand-new.md").write_text("---\ndate: 2026-02-01\n---\n"
                                                            "# Brand new\n\n[[d02]]\n")
        staged.append("memory/decisions/brand-new.md")
    elif change == "removed note":
        (wide / "memory/decisions/d03.md").unlink()
    elif change == "retitled":
        (wide / "memory/decisions/d04.md").write_text("---\ndate: 2026-01-05\n---\n"
                                                      "# A changed title\n\nSee [[d05]].\n")
        staged.append("memory/decisions/d04.md")
    elif change == "unstaged edit":
        _append(wide, "memory/decisions/d06.md", "\n[[also-missing]]\n")
    else:
        (wide / "memory/decisions/d07.md").write_bytes(b"# \xff\xfe not UTF-8\n")
        staged.append("memory/decisions/d07.md")
    warm = _run(capsys, wide, ["--hook", *staged])
    assert warm == _run(capsys, wide, ["--hook", "--no-cache", *staged])
    assert warm == _run(capsys, wide, ["--hook", *staged])  # (and again, warmer)
    if change == "new note":
        assert not any("brand-new" in d["message"] for d in warm)
    else:
        assert any("brand-new" in d["message"] for d in warm)


def test_a_note_made_alone_is_the_one_the_load_keeps(wide, capsys):
    """A deferred vault makes a note asked for by path alone; when something then goes
    through every note, the load takes that very note over, and what the listing told
    (how many notes, their paths, sizes and mtimes) is what the loaded notes carry."""
    from vaultkit.vault.deferred import DeferredVault
    from vaultkit.vault.loader import scan_vault

    _run(capsys, wide, ["."])
    _append(wide, "memory/decisions/d08.md", "\nMore.\n")  # (read, not from the cache)
    vault = DeferredVault(scan_vault(wide))
    one = vault.notes["memory/decisions/d09.md"]
    changed = vault.notes.get("memory/decisions/d08.md")
    assert vault.notes.get("memory/decisions/nope.md") is None
    assert "memory/decisions/d10.md" in vault.notes and "nope.md" not in vault.notes
    count, paths, states = len(vault.notes), vault.note_paths(), vault.note_states()
    assert not vault.loaded
    assert list(vault.notes) == paths  # (iterating loads)
    assert vault.loaded
    assert vault.notes["memory/decisions/d09.md"] is one
    assert vault.notes["memory/decisions/d08.md"] is changed
    assert count == len(vault.notes) and states == vault.note_states()


def test_a_hook_records_the_note_it_read_and_no_other(wide, capsys):
    """A hook that made its notes alone writes their records to the parse cache (the next
    run takes the changed journal from there) and leaves every other record as it was."""
    from vaultkit.vault.loader import _Cache, scan_vault
    from vaultkit.vault.store import Store

    _run(capsys, wide, ["."])
    _append(wide, "memory/2026-11-29.md", "\n### 11:00 — Review\n- Read the plan again.\n")
    before = dict(_Cache(Store(wide), scan_vault(wide).settings.fingerprint).stats)
    _run(capsys, wide, ["--hook", "memory/2026-11-29.md"])
    after = _Cache(Store(wide), scan_vault(wide).settings.fingerprint).stats
    size = (wide / "memory/2026-11-29.md").stat().st_size
    assert after["memory/2026-11-29.md"][0] == size != before["memory/2026-11-29.md"][0]
    assert {p: s for p, s in after.items() if p != "memory/2026-11-29.md"} == \
        {p: s for p, s in before.items() if p != "memory/2026-11-29.md"}


def test_a_deferred_vault_begins_once_when_two_threads_ask(make_vault, monkeypatch):
    """The thread that asks git beside the rules may reach for the bootstrap files beside
    the vault while the rules' thread is making them: it waits, and finds them made."""
    import threading
    import time

    from vaultkit.vault import deferred
    from vaultkit.vault.loader import scan_vault

    root = make_vault({"memory/semantic/a.md": "# A\n"})
    real = deferred.external_notes

    def slow(*args, **kwargs):
        time.sleep(0.3)
        return real(*args, **kwargs)

    monkeypatch.setattr(deferred, "external_notes", slow)
    vault = deferred.DeferredVault(scan_vault(root, root=root))
    errors = []

    def ask():
        try:
            vault.external
        except BaseException as exc:  # (a RecursionError, before)
            errors.append(exc)

    threads = [threading.Thread(target=ask) for _ in range(2)]
    threads[0].start()
    time.sleep(0.1)
    threads[1].start()
    for thread in threads:
        thread.join()
    assert errors == [] and vault.external == {}
