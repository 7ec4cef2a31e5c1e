"""A warm listing (vaultkit.vault.loader.WarmListing) is always the listing a new walk
would make: after each change the events name, it lists only those names again, and it
falls back to a new walk where that is the only right answer."""

from __future__ import annotations

import os
import random
import sys

import pytest

from test_mcp_session import _counting_walks as _counting
from vaultkit.vault.loader import list_vault
from vaultkit.vault.profile import load_settings

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="file events: inotify")


def _vault(tmp_path):
    root = tmp_path / "v"
    for folder in ("memory", "memory/decisions", "memory/people", "notes"):
        (root / folder).mkdir(parents=True)
    (root / "vaultkit.toml").write_text('profile = "openclaw"\n', encoding="utf-8")
    (root / "MEMORY.md").write_text("# Memory\n", encoding="utf-8")
    for i in range(6):
        (root / "memory" / f"2026-11-0{i + 1}.md").write_text(f"# Day {i}\n", encoding="utf-8")
        (root / "memory" / "decisions" / f"d{i}.md").write_text(f"# D{i}\n", encoding="utf-8")
    return root.resolve()


def _same(warm, fresh):
    assert [(f.rel, f.abs, f.size, f.mtime_ns, f.ctime_ns, f.ino) for f in warm.files] == \
        [(f.rel, f.abs, f.size, f.mtime_ns, f.ctime_ns, f.ino) for f in fresh.files]
    assert [(p.rel, p.message) for p in warm.problems] == \
        [(p.rel, p.message) for p in fresh.problems]
    assert warm.digest == fresh.digest
    assert warm.newest_mtime_ns == fresh.newest_mtime_ns
    # what the names give is kept while no name changes, and worked out anew after; the
    # notes' sizes and mtimes are taken again only for the entries that changed
    assert warm.names_digest() == fresh.names_digest()
    assert warm.note_paths() == fresh.note_paths() and warm.paths() == fresh.paths()
    assert warm.note_numbers() == fresh.note_numbers()


def _warm(root):
    """The vault's settings and a warm listing of it, every folder watched."""
    from vaultkit.vault.loader import WarmListing

    settings = load_settings(root)
    warm = WarmListing()
    warm.scan(root, settings)
    warm.scan(root, settings)  # (the folders the first listing found are watched after it)
    return settings, warm


def _operations(root, rng):
    """Random changes of the kinds a vault sees, each a function of no arguments."""
    def files():
        return sorted(p for p in root.rglob("*") if p.is_file() and ".vaultkit" not in p.parts
                      and p.name != "vaultkit.toml")

    def folders():
        return sorted(p for p in root.rglob("*") if p.is_dir() and p.name != ".vaultkit")

    def write_new():
        (rng.choice(folders() + [root]) / f"n{rng.randrange(10**6)}.md").write_text("# New\n")

    def append():
        f = rng.choice(files())
        with open(f, "a", encoding="utf-8") as fh:
            fh.write("- more\n")

    def same_size():
        f = rng.choice(files())
        data = f.read_bytes()
        f.write_bytes(data[::-1])  # the size stays, the mtime moves
        os.utime(f, ns=(f.stat().st_atime_ns, f.stat().st_mtime_ns + 1_000_000_007))

    def delete():
        rng.choice(files()).unlink()

    def rename_within():
        f = rng.choice(files())
        f.rename(f.with_name(f"r{rng.randrange(10**6)}.md"))

    def move_across():
        f = rng.choice(files())
        f.rename(rng.choice(folders() + [root]) / f"m{rng.randrange(10**6)}.md")

    def atomic_write():  # a temporary file renamed over the note, as editors write
        f = rng.choice(files())
        tmp = f.with_name(f.name + ".swp")
        tmp.write_text("# Rewritten\n- whole\n")
        os.replace(tmp, f)

    def temp_left():  # an interrupted atomic write of vaultkit's own: not content
        (rng.choice(folders()) / f"x{rng.randrange(100)}.md.vaultkit-tmp").write_text("x")

    def new_folder():
        sub = rng.choice(folders() + [root]) / f"f{rng.randrange(10**6)}"
        sub.mkdir()
        (sub / "inside.md").write_text("# Inside\n")

    def remove_folder():
        subs = [p for p in folders() if p.name.startswith("f")]
        if subs:
            sub = rng.choice(subs)
            for p in sorted(sub.rglob("*"), reverse=True):
                p.rmdir() if p.is_dir() else p.unlink()
            sub.rmdir()

    def symlink():
        f = rng.choice(files())
        link = rng.choice(folders()) / f"l{rng.randrange(10**6)}.md"
        link.symlink_to(f)

    def bad_name():
        name = b"bad-\xff-%d.md" % rng.randrange(10**6)
        with open(os.path.join(os.fsencode(rng.choice(folders())), name), "wb") as fh:
            fh.write(b"# Bad\n")

    def cache_tag():
        sub = rng.choice(folders())
        if sub != root / "memory":
            (sub / "CACHEDIR.TAG").write_bytes(
                b"Signature: 8a477f597d28d172789f06886806bc55\n")

    def attachment():
        (rng.choice(folders()) / f"a{rng.randrange(10**6)}.png").write_bytes(b"\x89PNG")

    common = [write_new, append, append, same_size, delete, rename_within, move_across,
              atomic_write, temp_left, attachment, bad_name]
    rare = [new_folder, remove_folder, symlink, cache_tag]
    return common, rare


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_a_warm_listing_is_the_listing_a_new_walk_makes(tmp_path, seed):
    root = _vault(tmp_path)
    rng = random.Random(seed)
    common, rare = _operations(root, rng)
    settings, warm = _warm(root)
    for _round in range(40):
        for _ in range(rng.randrange(1, 4)):
            op = rng.choice(rare if rng.random() < 0.08 else common)
            op()
        _same(warm.scan(root, settings), list_vault(root, settings))
    warm.close()


def test_a_change_in_a_watched_folder_lists_only_its_names(tmp_path, monkeypatch):
    root = _vault(tmp_path)
    settings, warm = _warm(root)
    walks = _counting(monkeypatch)
    (root / "memory" / "2026-11-01.md").write_text("# Day 0\n- an entry\n", encoding="utf-8")
    (root / "memory" / "people" / "ana.md").write_text("# Ana\n", encoding="utf-8")
    (root / "memory" / "decisions" / "d0.md").unlink()
    scan = warm.scan(root, settings)
    assert walks == []
    rels = [f.rel for f in scan.files]
    assert "memory/people/ana.md" in rels and "memory/decisions/d0.md" not in rels
    again = warm.scan(root, settings)  # nothing since: the same listing
    assert again.files is scan.files and again.digest == scan.digest
    assert walks == []
    _same(scan, list_vault(root, settings))
    warm.close()


def test_a_new_folder_or_a_symlink_makes_a_new_walk(tmp_path, monkeypatch):
    root = _vault(tmp_path)
    settings, warm = _warm(root)
    walks = _counting(monkeypatch)
    (root / "memory" / "lessons").mkdir()
    (root / "memory" / "lessons" / "l.md").write_text("# L\n", encoding="utf-8")
    assert "memory/lessons/l.md" in [f.rel for f in warm.scan(root, settings).files]
    assert len(walks) == 1
    warm.scan(root, settings)  # the new folder is watched from the next listing on
    (root / "notes" / "link.md").symlink_to(root / "MEMORY.md")
    scan = warm.scan(root, settings)
    assert "notes/link.md" in [f.rel for f in scan.files] and scan.links
    assert len(walks) == 3
    # with a symlink followed, any change lists again: the link's entry follows MEMORY.md
    (root / "MEMORY.md").write_text("# Memory\n- longer now\n", encoding="utf-8")
    _same(warm.scan(root, settings), list_vault(root, settings))
    assert len(walks) == 5
    warm.close()


def test_without_file_events_every_scan_walks(tmp_path, monkeypatch):
    import vaultkit.vault.freshness as freshness
    from vaultkit.vault.loader import WarmListing

    monkeypatch.setattr(freshness, "_libc", lambda: None)
    root = _vault(tmp_path)
    settings = load_settings(root)
    warm = WarmListing()
    walks = _counting(monkeypatch)
    for _ in range(3):
        warm.scan(root, settings)
    assert len(walks) == 3


def test_an_unchanged_listing_is_as_new_as_the_question_that_found_it_so(tmp_path):
    """A note written just before a listing is in the racy margin of that listing (its
    mtime may not show a second write in the same tick), so caches derived from it are not
    kept; once the events show nothing changed since, the listing is as new as that
    question, and the doubt ends (a warm check answered by `vaultkit watch` right after a
    hook otherwise recomputed everything on every call)."""
    import time

    from vaultkit.vault.store import RACY_NS

    root = _vault(tmp_path)
    settings, warm = _warm(root)
    (root / "memory" / "2026-11-01.md").write_text("# Day 0\n- new\n", encoding="utf-8")
    fresh = warm.scan(root, settings)
    assert fresh.newest_mtime_ns >= fresh.started_ns - RACY_NS  # in doubt
    time.sleep(RACY_NS / 1e9 + 0.01)
    later = warm.scan(root, settings)
    assert later.digest == fresh.digest and later.files == fresh.files
    assert later.newest_mtime_ns < later.started_ns - RACY_NS  # no longer
    warm.close()


def test_what_the_names_give_is_kept_while_no_name_changes(tmp_path):
    """The answering process works out the digest of the vault's names (what the link
    resolver's tables and the per-note link facts are keyed on) once per set of names, not
    once per commit: a listing brought up to date after files were written keeps it, one
    after a name was added, removed or renamed does not. Either way it is the digest a
    vault loaded from a new walk has."""
    from vaultkit.vault.loader import load_vault

    root = _vault(tmp_path)
    settings, warm = _warm(root)
    first = warm.scan(root, settings)
    digest = first.names_digest()
    (root / "memory" / "2026-11-01.md").write_text("# Day 0\n- more\n", encoding="utf-8")
    written = warm.scan(root, settings)
    assert written is not first and written.memo.get("names") == digest
    _same(written, list_vault(root, settings))  # (its digest from the entries written alone)
    assert load_vault(root, settings=settings, save=False).names_digest == digest
    (root / "memory" / "decisions" / "d0.md").rename(root / "memory" / "decisions" / "d9.md")
    renamed = warm.scan(root, settings)
    assert "names" not in renamed.memo
    assert renamed.names_digest() != digest
    assert renamed.names_digest() == load_vault(root, settings=settings, save=False).names_digest
    warm.close()
